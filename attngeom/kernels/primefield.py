"""Exact linear algebra and arithmetic over a prime field F_p.

Matrices go to python-flint's ``nmod_mat`` (FLINT's word-size modular matrices) for rank
and kernels.  Rational numbers are mapped to F_p by modular inverses of their denominators.

:class:`PrimeField` is the one elementwise arithmetic on int64 residues mod p < 2^31: the
exact dual numbers of :mod:`attngeom.kernels.jacobian` and the structured families of
``attngeom.lightning_alg.invariants.structured`` both compute with it.  Its batched determinants
(:func:`det_mod_p`) are the one Gaussian elimination here: thousands of small r x r
matrices at once, where a FLINT call per matrix would cost more than the arithmetic.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import fmpz_mat, nmod_mat

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler


def residue(value, prime: int) -> int:
    """The image of an integer or rational (Fraction, SymPy Rational) in F_p."""
    num, den = _numerator_denominator(value)
    if den % prime == 0:
        raise BadInput(f"the prime {prime} divides the denominator {den}; choose another prime")
    return (num % prime) * pow(den, -1, prime) % prime


def _numerator_denominator(value) -> tuple[int, int]:
    if isinstance(value, (int, np.integer)):
        return int(value), 1
    if isinstance(value, Fraction):
        return value.numerator, value.denominator
    p, q = getattr(value, "p", None), getattr(value, "q", None)  # SymPy Rational / Integer
    if p is not None and q is not None:
        return int(p), int(q)
    frac = Fraction(value)
    return frac.numerator, frac.denominator


def to_nmod_mat(matrix: np.ndarray, prime: int) -> nmod_mat:
    """An int64 matrix of residues as a FLINT nmod_mat."""
    reduced = np.remainder(np.asarray(matrix, dtype=np.int64), prime)
    if reduced.size == 0:
        return nmod_mat(*reduced.shape, prime)
    # through fmpz_mat from nested lists: about twice as fast as nmod_mat from a flat list
    return nmod_mat(fmpz_mat(reduced.tolist()), prime)


def rank_mod_p(matrix: np.ndarray, prime: int) -> int:
    """Rank over F_p of an integer matrix (entries reduced mod p)."""
    if matrix.size == 0:
        return 0
    return to_nmod_mat(matrix, prime).rank()


def nullspace_mod_p(matrix: np.ndarray, prime: int) -> np.ndarray:
    """A basis of the right kernel {x : M x = 0} over F_p, as the rows of an int64 array."""
    rows, cols = matrix.shape
    if cols == 0:
        return np.zeros((0, 0), dtype=np.int64)
    if rows == 0:
        return np.eye(cols, dtype=np.int64)
    basis, nullity = to_nmod_mat(matrix, prime).nullspace()
    entries = np.array([[int(basis[i, j]) for j in range(nullity)] for i in range(cols)],
                       dtype=np.int64).reshape(cols, nullity)
    return entries.T.copy()


def pivot_rows(matrix: np.ndarray, prime: int) -> list[int]:
    """Indices of the first maximal set of linearly independent rows over F_p."""
    reduced, rank = to_nmod_mat(np.ascontiguousarray(matrix.T), prime).rref()
    pivots = []
    for i in range(rank):
        pivots.append(next(j for j in range(reduced.ncols()) if int(reduced[i, j]) != 0))
    return pivots


def matmul_mod_p(left, right, prime: int):
    """``left @ right mod p`` for int64 residues < 2^31 without int64 overflow.

    Each left entry is split into 16-bit limbs, so every partial product is < 2^47 and a
    sum of up to 2^16 of them stays below 2^63.  Works on NumPy and torch int64 arrays,
    batched (stacks of matrices broadcast as in ``@``); longer inner dimensions are
    processed in chunks of 2^16.
    """
    if prime >= 2**31:
        raise BadInput(f"exact int64 evaluation needs a prime below 2^31; got {prime}")
    inner = left.shape[-1]
    chunk = 1 << 16
    total = None
    for start in range(0, max(inner, 1), chunk):
        lo_part = left[..., start:start + chunk]
        r = right[..., start:start + chunk, :] if right.ndim > 1 else right[start:start + chunk]
        low = lo_part % 65536
        high = lo_part // 65536
        part = ((high @ r) % prime * 65536 + (low @ r) % prime) % prime
        total = part if total is None else (total + part) % prime
    return total


def power_mod(base: np.ndarray, exponent: int, prime: int) -> np.ndarray:
    """base^exponent mod p elementwise (square and multiply; int64 residues < 2^31)."""
    result = np.ones_like(base)
    square = base % prime
    while exponent:
        if exponent & 1:
            result = result * square % prime
        square = square * square % prime
        exponent >>= 1
    return result


def det_mod_p(matrices: np.ndarray, prime: int) -> np.ndarray:
    """Determinants mod p of int64 matrices, shape=[..., r, r] -> [...].

    Gaussian elimination on the whole batch at once: row swaps to the first nonzero pivot
    (changing the sign), pivots inverted by Fermat (x^(p-2)); a zero column leaves a zero
    pivot and hence determinant 0.
    """
    m = np.remainder(np.asarray(matrices, dtype=np.int64), prime)
    shape, r = m.shape[:-2], m.shape[-1]
    m = m.reshape(-1, r, r).copy()
    det = np.ones(m.shape[0], dtype=np.int64)
    for c in range(r):
        pivot_row = c + np.argmax(m[:, c:, c] != 0, axis=1)
        swap = np.nonzero(pivot_row != c)[0]
        if swap.size:
            rows = m[swap, c, :].copy()
            m[swap, c, :] = m[swap, pivot_row[swap], :]
            m[swap, pivot_row[swap], :] = rows
            det[swap] = (prime - det[swap]) % prime
        pivot = m[:, c, c]
        det = det * pivot % prime
        if c + 1 < r:
            factor = m[:, c + 1:, c] * power_mod(pivot, prime - 2, prime)[:, None] % prime
            m[:, c + 1:, c:] = (m[:, c + 1:, c:] - factor[:, :, None] * m[:, None, c, c:]) % prime
    return det.reshape(shape)


class PrimeField:
    """Arithmetic on int64 residues mod p < 2^31 (products of two residues fit in int64).

    Elementwise ``add``, ``sub``, ``mul``, ``scale`` (by integer constants) and ``sum``
    reduce mod p after every operation; ``matmul`` goes through :func:`matmul_mod_p` and
    ``det`` through :func:`det_mod_p`; ``constant`` admits only integers.
    """

    def __init__(self, prime: int):
        if not 2 < prime < 2**31:
            raise BadInput(f"exact Jacobians need an odd prime below 2^31; got {prime}")
        self.prime = prime

    def constant(self, value):
        array = np.asarray(value)
        if array.dtype.kind not in "iub":
            raise TypeError("only integer constants enter a Jacobian over F_p")
        return array.astype(np.int64) % self.prime

    def add(self, a, b):
        return (a + b) % self.prime

    def sub(self, a, b):
        return (a - b) % self.prime

    def mul(self, a, b):
        return a * b % self.prime

    def scale(self, a, constants):
        return a * np.remainder(np.asarray(constants, dtype=np.int64), self.prime) % self.prime

    def sum(self, x, axis: int):
        return x.sum(axis=axis) % self.prime

    def matmul(self, a, b):
        return matmul_mod_p(a, b, self.prime)

    def det(self, matrices):
        return det_mod_p(matrices, self.prime)

#: Entries of the sketching matrices of :func:`rank_reaches_mod_p` lie in [0, 2^SKETCH_BITS).
SKETCH_BITS = 8
#: float64 sums of products < 2^31 * 2^SKETCH_BITS stay exact for this many terms (2^53 / 2^39).
_EXACT_TERMS = 1 << (53 - 31 - SKETCH_BITS)


def _small_matmul_mod_p(left: np.ndarray, right: np.ndarray, prime: int) -> np.ndarray:
    """``left @ right mod p`` where one factor has entries < 2^SKETCH_BITS and the other < p
    < 2^31: float64 BLAS in chunks of the inner dimension short enough to stay exact."""
    inner = left.shape[1]
    total = np.zeros((left.shape[0], right.shape[1]), dtype=np.int64)
    for start in range(0, inner, _EXACT_TERMS):
        part = left[:, start:start + _EXACT_TERMS].astype(np.float64) \
            @ right[start:start + _EXACT_TERMS].astype(np.float64)
        total = (total + np.fmod(part, prime).astype(np.int64)) % prime
    return total


def rank_reaches_mod_p(matrix: np.ndarray, target: int, prime: int, sampler: Sampler) -> bool:
    """Whether rank over F_p of ``matrix`` is at least ``target``, decided on a sketch.

    rank(S M T) <= rank(M) for any S (target x rows) and T (cols x target), so a nonsingular
    target x target sketch proves rank(M) >= target whatever S and T are: a True answer is
    exact, not probabilistic.  S and T have random entries in [0, 2^SKETCH_BITS), so the
    products are exact float64 matrix products (BLAS) and the rank is taken of a
    target x target matrix instead of rows x cols.  False means only that this sketch lost
    rank (or the rank is below target): callers then compute the rank of the matrix itself.
    """
    rows, cols = matrix.shape
    if target <= 0:
        return True
    if target > min(rows, cols):
        return False
    residues = np.remainder(np.asarray(matrix, dtype=np.int64), prime)
    if rows > target:
        left = sampler.integers((target, rows), 0, (1 << SKETCH_BITS) - 1)
        residues = _small_matmul_mod_p(left, residues, prime)
    if cols > target:
        right = sampler.integers((cols, target), 0, (1 << SKETCH_BITS) - 1)
        residues = _small_matmul_mod_p(residues, right, prime)
    return rank_mod_p(residues, prime) == target

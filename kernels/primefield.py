"""Exact linear algebra and arithmetic over a prime field F_p.

Matrices go to python-flint's ``nmod_mat`` (FLINT's word-size modular matrices) for rank
and kernels; nothing here re-implements Gaussian elimination.  Rational numbers are mapped
to F_p by modular inverses of their denominators.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import fmpz_mat, nmod_mat

from kernels.errors import BadInput


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

"""Multigraded interpolation over F_p: the degree-k part of the vanishing ideal of a
parametrized variety, one multidegree block at a time.

Setting.  Variables z_1..z_m carry multidegrees deg(z_s) in Z^d, and the variety is stable
under the torus z_s -> lambda^{deg z_s} z_s (for the attention variety: x -> diag(lambda) x
scales y_(k1,k2,k3) by lambda_k1 lambda_k2 lambda_k3, ARCHITECTURE.md).  Its vanishing
ideal J is then Z^d-graded: the degree-k monomials split into blocks of one multidegree
delta and

    J_k = (+)_delta J_{k,delta},     J_{k,delta} = ker E_delta,

where E_delta (points x monomials of the block) evaluates the block's monomials at random
points of the variety.  Each block is a small, independent kernel over F_p
(python-flint ``nmod_mat``).

Soundness.  The rank of E_delta never exceeds the true rank h (the block's Hilbert
function), so the computed kernel always contains J_{k,delta}; it is too large only when
the points are special.  Every computed kernel is therefore checked at ``fresh`` points
drawn independently of the points that produced it: a kernel vector g outside J has g o mu
nonzero of degree <= k w in the weights (w = 2 or 3), so it survives e fresh points with
probability <= (k w / p)^e (Schwartz-Zippel).  A failed check recomputes with more points.

Points are added adaptively: a block starts with a guess of its rank (``start_points``)
and doubles the number of points while the evaluation matrix has full row rank, since
only then can the rank still grow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import gcd, isqrt
from typing import Callable

import numpy as np
from flint import nmod_mat

from kernels.errors import BadInput
from kernels.monomials import all_monomials, encode, evaluate_monomials
from kernels.primefield import to_nmod_mat
from kernels.sampling import Sampler

#: Fresh points every computed kernel must vanish at (failure <= (k w / p)^FRESH_POINTS).
FRESH_POINTS = 2
#: Recomputations with more points after a failed fresh check before giving up; each
#: failure has probability <= h k w / p, so more than one is practically impossible.
MAX_FRESH_FAILURES = 4


@dataclass(frozen=True)
class MonomialBlocks:
    """The degree-k monomials in m graded variables, grouped by multidegree.

    Attributes
    ----------
    degree : k
    n_variables : m
    monomials : int64 array, shape=[C, k]; sorted variable indices, block after block,
        lexicographic inside a block
    starts : int64 array, shape=[B + 1]; block b is rows starts[b]:starts[b+1]
    multidegrees : int64 array, shape=[B, d]
    """

    degree: int
    n_variables: int
    monomials: np.ndarray
    starts: np.ndarray
    multidegrees: np.ndarray
    _codes: np.ndarray = field(repr=False)
    _order: np.ndarray = field(repr=False)
    _index: dict = field(repr=False)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def block(self, b: int) -> np.ndarray:
        return self.monomials[self.starts[b]:self.starts[b + 1]]

    def size(self, b: int) -> int:
        return int(self.starts[b + 1] - self.starts[b])

    def block_of(self, multidegree) -> int | None:
        """The block of a multidegree, or None when no monomial has it."""
        return self._index.get(tuple(int(v) for v in multidegree))

    def locate(self, monomials: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(block, column) of each row of ``monomials`` (sorted variable indices)."""
        codes = encode(monomials, self.n_variables)
        position = self._order[np.searchsorted(self._codes, codes)]
        blocks = np.searchsorted(self.starts, position, side="right") - 1
        return blocks, position - self.starts[blocks]


def monomial_blocks(variable_degrees: np.ndarray, degree: int) -> MonomialBlocks:
    """Group the degree-k monomials by multidegree (sum of their variables' degrees)."""
    m = len(variable_degrees)
    if float(m) ** degree >= 2.0**62:
        raise BadInput(f"{m} variables in degree {degree} are too many to index")
    monomials = all_monomials(m, degree)
    multidegree = variable_degrees[monomials].sum(axis=1)
    base = int(multidegree.max()) + 1
    keys = encode(multidegree, base)
    order = np.argsort(keys, kind="stable")
    monomials, keys, multidegree = monomials[order], keys[order], multidegree[order]
    firsts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    starts = np.r_[firsts, len(keys)].astype(np.int64)
    degrees = multidegree[firsts]
    codes = encode(monomials, m)
    code_order = np.argsort(codes)
    index = {tuple(int(v) for v in row): b for b, row in enumerate(degrees)}
    return MonomialBlocks(degree, m, monomials, starts, degrees, codes[code_order],
                          code_order, index)


class PointPool:
    """Variable values at random points of the variety, drawn lazily in chunks.

    The chunks are drawn from ``sampler`` one after the other, so the n-th point is the
    same whatever was asked for before: every figure is reproducible from the seed.
    """

    def __init__(self, draw: Callable[[Sampler, int], np.ndarray], sampler: Sampler,
                 chunk: int = 256):
        self._draw, self._sampler, self._chunk = draw, sampler, chunk
        self._values: np.ndarray | None = None
        self._chunks = 0

    def values(self, count: int) -> np.ndarray:
        new = []
        while (self._chunks + len(new)) * self._chunk < count:
            new.append(self._draw(self._sampler, self._chunk))
        if new:
            self._values = np.concatenate(([] if self._values is None else [self._values]) + new)
            self._chunks += len(new)
        return self._values[:count]

    @property
    def drawn(self) -> int:
        """How many points have been drawn so far."""
        return self._chunks * self._chunk


@dataclass
class BlockKernel:
    """J_{k,delta} for one block, as FLINT returned it.

    ``basis`` is an M x M nmod_mat whose first ``nullity`` columns are the kernel basis in
    reduced form: vector f has 1 at its free monomial, 0 at the other free monomials and
    arbitrary entries at the standard monomials (those independent on the variety).
    """

    size: int
    rank: int
    points: int
    basis: nmod_mat
    prime: int

    @property
    def nullity(self) -> int:
        return self.size - self.rank

    def vectors(self) -> np.ndarray:
        """The kernel basis as rows, shape=[nullity, M] (int64 residues)."""
        n = self.nullity
        out = np.empty((n, self.size), dtype=np.int64)
        basis = self.basis
        for i in range(self.size):
            out[:, i] = [int(basis[i, j]) for j in range(n)]
        return out


def free_columns(vectors: np.ndarray) -> np.ndarray:
    """The free monomial of each reduced kernel vector (its last nonzero entry).

    In the reduced form the pivot columns of a row echelon form precede the free column
    they are expressed against, so the last nonzero entry is the free one, equal to 1.
    """
    if len(vectors) == 0:
        return np.zeros(0, dtype=np.int64)
    last = vectors.shape[1] - 1 - np.argmax(vectors[:, ::-1] != 0, axis=1)
    if np.any(vectors[np.arange(len(vectors)), last] != 1):
        raise RuntimeError("nmod_mat.nullspace did not return a reduced basis")
    return last


def interpolate_block(monomials: np.ndarray, pool: PointPool, fresh: np.ndarray,
                      prime: int, start_points: int) -> BlockKernel:
    """ker E_delta for one block, checked at the ``fresh`` variable values (see module doc)."""
    size = len(monomials)
    count = max(1, min(size, start_points))
    failures = 0
    while True:
        matrix = evaluate_monomials(pool.values(count), monomials, prime)
        basis, nullity = to_nmod_mat(matrix, prime).nullspace()
        rank = size - nullity
        if rank == count < size:
            count = min(size, 2 * count)
            continue
        if nullity == 0 or _vanishes(basis, fresh, monomials, prime):
            return BlockKernel(size, rank, count, basis, prime)
        failures += 1
        if failures > MAX_FRESH_FAILURES:
            raise RuntimeError(f"a kernel failed its fresh-point check {failures} times")
        count *= 2


def _vanishes(basis: nmod_mat, fresh: np.ndarray, monomials: np.ndarray, prime: int) -> bool:
    values = to_nmod_mat(evaluate_monomials(fresh, monomials, prime), prime)
    return values * basis == nmod_mat(values.nrows(), basis.ncols(), prime)


def rank_of_rows(rows: np.ndarray, prime: int) -> int:
    """Rank over F_p (an empty stack has rank 0)."""
    return to_nmod_mat(rows, prime).rank() if rows.size else 0


# -- rational reconstruction (for exporting a basis over Q) --------------------------------

def rational_reconstruction(residue: int, modulus: int) -> Fraction | None:
    """The fraction n/q with |n|, q <= sqrt(modulus/2) and n = residue q (mod modulus),
    or None if there is none (Wang's algorithm: extended Euclid stopped half-way)."""
    bound = isqrt(modulus // 2)
    r0, r1 = modulus, residue % modulus
    s0, s1 = 0, 1
    while r1 > bound:
        quotient = r0 // r1
        r0, r1 = r1, r0 - quotient * r1
        s0, s1 = s1, s0 - quotient * s1
    if s1 == 0 or abs(s1) > bound or gcd(r1, abs(s1)) != 1:
        return None
    return Fraction(r1, s1)


def chinese_remainder(residues: list[int], moduli: list[int]) -> tuple[int, int]:
    """(x, M) with x = residues[i] mod moduli[i] and M the product of the (coprime) moduli."""
    x, modulus = 0, 1
    for r, q in zip(residues, moduli):
        x += modulus * ((r - x) * pow(modulus, -1, q) % q)
        modulus *= q
    return x % modulus, modulus

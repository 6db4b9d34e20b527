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

from attngeom.core.errors import BadInput
from attngeom.kernels.monomials import all_monomials, encode, evaluate_monomials
from attngeom.kernels.primefield import to_nmod_mat
from attngeom.kernels.sampling import Sampler

#: Codes m^k up to which :meth:`MonomialBlocks.locate` uses a table (8 bytes each).
DENSE_LOOKUP = 2**22
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
    _lookup: dict = field(default_factory=dict, repr=False)

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
        """(block, column) of each row of ``monomials`` (sorted variable indices).  Many rows
        are located through a table of every code (m^k entries, when that is at most
        :data:`DENSE_LOOKUP`), built once; few by binary search."""
        codes = encode(monomials, self.n_variables)
        table = self._table() if len(codes) > len(self.monomials) else None
        position = table[codes] if table is not None else \
            self._order[np.searchsorted(self._codes, codes)]
        if "block" not in self._lookup:
            self._lookup["block"] = np.repeat(np.arange(len(self)), np.diff(self.starts))
        blocks = self._lookup["block"][position]
        return blocks, position - self.starts[blocks]

    def _table(self) -> np.ndarray | None:
        """code -> position in ``monomials`` for every code below m^k, or None (too many)."""
        if "table" not in self._lookup:
            span = float(self.n_variables) ** self.degree
            table = None
            if span <= DENSE_LOOKUP:
                table = np.zeros(int(span), dtype=np.int64)
                table[self._codes] = self._order
            self._lookup["table"] = table
        return self._lookup["table"]


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
    """J_{k,delta} for one block, from the reduced row echelon form of its evaluation matrix
    as FLINT returned it (``echelon``, points x M, rank ``rank``).

    ``pivots[i]`` is the pivot column of row i; the other columns are ``free``.  The kernel
    basis is in reduced form: the vector of free column f has 1 at f, -echelon[i, f] at
    pivots[i] and 0 at the other free columns (the basis ``nmod_mat.nullspace`` returns).
    """

    size: int
    rank: int
    points: int
    echelon: nmod_mat
    pivots: np.ndarray
    prime: int

    @property
    def nullity(self) -> int:
        return self.size - self.rank

    @property
    def free(self) -> np.ndarray:
        """The free monomial of each kernel vector (increasing)."""
        return np.setdiff1d(np.arange(self.size), self.pivots)

    def vectors(self) -> np.ndarray:
        """The kernel basis as rows, shape=[nullity, M] (int64 residues): only the entries
        of the echelon form at (pivot row, free column) are read."""
        free = self.free
        out = np.zeros((len(free), self.size), dtype=np.int64)
        out[np.arange(len(free)), free] = 1
        echelon = self.echelon
        for i, pivot in enumerate(self.pivots):
            out[:, pivot] = [(-int(echelon[i, int(f)])) % self.prime for f in free]
        return out


def echelon_pivots(echelon: nmod_mat, rank: int) -> np.ndarray:
    """The pivot column of each nonzero row of a reduced row echelon form: the pivots
    increase, so at most M + rank entries are read."""
    pivots, column = [], 0
    for i in range(rank):
        while int(echelon[i, column]) == 0:
            column += 1
        pivots.append(column)
        column += 1
    return np.array(pivots, dtype=np.int64)


def free_columns(vectors: np.ndarray) -> np.ndarray:
    """The free monomial of each reduced kernel vector (its last nonzero entry).

    In the reduced form the pivot columns of a row echelon form precede the free column
    they are expressed against, so the last nonzero entry is the free one, equal to 1.
    """
    if len(vectors) == 0:
        return np.zeros(0, dtype=np.int64)
    last = vectors.shape[1] - 1 - np.argmax(vectors[:, ::-1] != 0, axis=1)
    if np.any(vectors[np.arange(len(vectors)), last] != 1):
        raise RuntimeError("the kernel basis is not in reduced form")
    return last


def interpolate_block(monomials: np.ndarray, pool: PointPool, fresh: np.ndarray,
                      prime: int, start_points: int) -> BlockKernel:
    """ker E_delta for one block, checked at the ``fresh`` variable values (see module doc)."""
    size = len(monomials)
    count = max(1, min(size, start_points))
    failures = 0
    while True:
        matrix = evaluate_monomials(pool.values(count), monomials, prime)
        echelon, rank = to_nmod_mat(matrix, prime).rref()
        if rank == count < size:
            count = min(size, 2 * count)
            continue
        kernel = BlockKernel(size, rank, count, echelon, echelon_pivots(echelon, rank), prime)
        if kernel.nullity == 0 or _vanishes(kernel, fresh, monomials, prime):
            return kernel
        failures += 1
        if failures > MAX_FRESH_FAILURES:
            raise RuntimeError(f"a kernel failed its fresh-point check {failures} times")
        count *= 2


def _vanishes(kernel: BlockKernel, fresh: np.ndarray, monomials: np.ndarray, prime: int) -> bool:
    """Whether the kernel vanishes at the fresh points: the kernel of E is contained in the
    kernel of the fresh evaluation rows F iff every row of F lies in the row space of E,
    i.e. F = F[:, pivots] R for the reduced echelon form R (one small product in FLINT)."""
    values = evaluate_monomials(fresh, monomials, prime)
    weights = np.zeros((len(values), kernel.points), dtype=np.int64)
    weights[:, :kernel.rank] = values[:, kernel.pivots]
    product = to_nmod_mat(weights, prime) * kernel.echelon
    return product == to_nmod_mat(values, prime)


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

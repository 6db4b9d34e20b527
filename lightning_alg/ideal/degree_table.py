"""The degree table of the vanishing ideal J (ADM Def 8): dim J_k and the minimal
generators per degree, by multigraded interpolation over F_p (the method is described in
:mod:`lightning_alg.ideal`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import comb

import numpy as np
from sympy import isprime

from kernels.claim import CheckContext
from kernels.errors import BadInput
from kernels.sampling import DEFAULT_PRIME, Sampler
from kernels.verdict import schwartz_zippel_bound
from lightning_alg.coordinates import CoordinateSystem
from lightning_alg.ideal.interpolation import (
    FRESH_POINTS, MonomialBlocks, PointPool, free_columns, interpolate_block, monomial_blocks,
    rank_of_rows)
from lightning_alg.invariants.linear import default_context
from lightning_alg.labels import Label
from lightning_alg.parametrization import Parametrization, sample_weights_mod_p, weight_degree


DEFAULT_MAX_DEGREE = 4
#: Degree-k monomials in the pivots, and monomials in one block, beyond which the input is
#: refused (BadInput): a block of 8000 monomials is a 0.5 GB evaluation matrix.
MAX_MONOMIALS = 3_000_000
MAX_BLOCK = 8000
#: Random streams Sampler(seed).spawn(key).  ``spawn`` derives a child from the root seed
#: and the key alone (nested spawns do not nest), so every use has its own key and draws
#: from it in sequence; the fresh points must be independent of the interpolation points.
STREAM_POINTS, STREAM_FRESH, STREAM_JACOBIAN, STREAM_MEMBERS, STREAM_PROJECTIONS, \
    STREAM_EXPORT = range(1, 7)
#: Extra points over the expected rank of a block (the rank must stay below the point
#: count, or the block is recomputed with twice the points).
RANK_MARGIN = 4


def coordinate_degrees(coords: CoordinateSystem) -> np.ndarray:
    """The Z^d multidegree of every coordinate: the counts of k1, k2, k3 (ADM's row indices)."""
    out = np.zeros((len(coords), coords.d), dtype=np.int64)
    for c, label in enumerate(coords.labels):
        for k in label.rows:
            out[c, k - 1] += 1
    return out


def pivot_preference(coords: CoordinateSystem) -> np.ndarray:
    """Coordinates in the order the pivots are chosen: the cross-column coordinates of the
    reference context column first (for t >= 2 they span the image, ADM Prop 9), then the
    single-column ones, then the other context columns (sequence copies)."""
    reference = default_context(coords.col) if coords.t >= 2 else None
    rank = [0 if lab.context == reference else (1 if lab.is_single else 2)
            for lab in coords.labels]
    return np.argsort(np.array(rank), kind="stable")


def permutation_stable(coords: CoordinateSystem, variables: np.ndarray) -> bool:
    """Whether permuting the row indices [d] maps the pivot coordinates onto themselves.

    The variety is GL_d-stable (phi_W(G X) = phi_W'(X), W' = (G^T A G, V G)), so a
    permutation sigma of [d] maps J'_{k,delta} onto J'_{k,sigma delta} as soon as it
    permutes the pivots: the blocks of one S_d orbit of multidegrees then have the same
    rank, kernel dimension and generated part, and only one of them is computed.
    """
    pivots = {coords.labels[int(c)] for c in variables}
    for swap in range(1, coords.d):
        sigma = {swap: swap + 1, swap + 1: swap}
        for label in pivots:
            image = Label.from_pairs([(sigma.get(r, r), c) for r, c in label.pairs()], label.row)
            if image not in pivots:
                return False
    return True


@dataclass
class DegreeTable:
    """The figures of one degree k."""

    degree: int
    monomials: int            # degree-k monomials in the pivots
    blocks: int
    blocks_computed: int      # the others are images of computed ones under S_d
    largest_block: int
    hilbert_function: int     # HF(k) = dim of the coordinate ring's degree-k part
    dim_J: int                # dim J_k in F_p[y] (all N coordinates)
    dim_J_mod_linear: int     # dim J'_k (modulo the linear part); J_1 itself for k = 1
    generated_by_lower: int   # dim (J'_{<k})_k
    minimal_generators: int
    max_points: int           # most evaluation points one block needed
    failure_probability: float
    seconds: float


@dataclass
class LinearPart:
    """J_1 and the pivots: ``pivots`` are coordinate indices (the variables of degree >= 2);
    ``substitution[c]`` lists (pivot variable, coefficient mod p) with y_c = sum modulo J_1."""

    blocks: MonomialBlocks
    order: np.ndarray
    kernels: list
    pivots: np.ndarray
    substitution: list


class AttentionIdeal:
    """J of one output coordinate's attention variety (ADM Def 8), degree by degree.

    ``run(max_degree)`` returns the :class:`DegreeTable` rows; with ``keep=True`` the kernel
    bases of every block are kept in ``bases`` (degree -> {block: rows}) for export and
    family attribution.
    """

    def __init__(self, d: int, t: int, a: int, dprime: int = 1, col: int = 1,
                 prime: int = DEFAULT_PRIME, seed: int = 0,
                 context: CheckContext | None = None):
        validate_ideal_params(d, t, a, dprime, col, prime)
        self.d, self.t, self.a, self.prime = d, t, a, prime
        self.coords = CoordinateSystem(d, t, dprime, 1, col)
        self.param = Parametrization(self.coords)
        self.seed = seed
        self.context = context or CheckContext(seed=seed)
        self.weight_degree = weight_degree(d, a)
        self.degrees = coordinate_degrees(self.coords)
        self.bases: dict[int, dict[int, np.ndarray]] = {}
        self.density: dict[int, float] = {}
        self.block_tables: dict[int, MonomialBlocks] = {}
        self.linear = self._linear_part()
        self.variables = self.linear.pivots
        self.variable_degrees = self.degrees[self.variables]
        self.symmetric = permutation_stable(self.coords, self.variables)

    # -- points ---------------------------------------------------------------------------
    def stream(self, key: int) -> Sampler:
        """A fresh copy of random stream ``key`` (STREAM_*)."""
        return Sampler(self.seed).spawn(key)

    def _mu(self, sampler: Sampler, count: int) -> np.ndarray:
        coords = self.coords
        weights = sample_weights_mod_p(sampler, count, coords.d, coords.dprime, self.a, self.prime)
        return self.param.evaluate_mod_p(weights)

    def _pool(self, columns: np.ndarray) -> tuple[PointPool, np.ndarray]:
        """Points of the variety and the independent fresh points, restricted to ``columns``;
        every pool draws the same weights (STREAM_POINTS, STREAM_FRESH)."""
        pool = PointPool(lambda s, n: self._mu(s, n)[:, columns], self.stream(STREAM_POINTS))
        fresh = self._mu(self.stream(STREAM_FRESH), FRESH_POINTS)[:, columns]
        return pool, fresh

    # -- degree 1 ---------------------------------------------------------------------------
    def _linear_part(self) -> LinearPart:
        order = pivot_preference(self.coords)
        blocks = monomial_blocks(self.degrees[order], 1)
        pool, fresh = self._pool(order)
        kernels, pivots = [], []
        substitution: list = [None] * len(self.coords)
        free_sets = []
        for b in range(len(blocks)):
            kernel = interpolate_block(blocks.block(b), pool, fresh, self.prime, blocks.size(b) + 1)
            vectors = kernel.vectors()
            kernels.append(kernel)
            free = free_columns(vectors)
            free_sets.append((vectors, free))
            members = order[blocks.block(b)[:, 0]]
            pivots.extend(members[np.setdiff1d(np.arange(blocks.size(b)), free)])
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        pivots = np.array(sorted(pivots, key=lambda c: position[c]), dtype=np.int64)
        variable_of = {int(c): s for s, c in enumerate(pivots)}
        for b, (vectors, free) in enumerate(free_sets):
            members = order[blocks.block(b)[:, 0]]
            for c in members:
                if int(c) in variable_of:
                    substitution[int(c)] = [(variable_of[int(c)], 1)]
            standard = np.setdiff1d(np.arange(blocks.size(b)), free)
            for vector, f in zip(vectors, free):
                # y_f - sum_s (-v_s) y_s lies in J_1, so y_f = sum_s -v_s y_s modulo J_1
                substitution[int(members[f])] = [
                    (variable_of[int(members[s])], int(-vector[s] % self.prime))
                    for s in standard if vector[s]]
        self.bases[1] = {b: vectors for b, (vectors, _) in enumerate(free_sets)}
        self.block_tables[1] = blocks
        return LinearPart(blocks, order, kernels, pivots, substitution)

    def linear_table(self) -> DegreeTable:
        n = len(self.coords)
        m = len(self.variables)
        bound = sum(schwartz_zippel_bound(self.weight_degree, self.prime, FRESH_POINTS)
                    for k in self.linear.kernels if k.nullity)
        return DegreeTable(1, n, len(self.linear.blocks), len(self.linear.blocks),
                           int(np.diff(self.linear.blocks.starts).max()),
                           m, n - m, n - m, 0, n - m,
                           max(k.points for k in self.linear.kernels), bound, 0.0)

    # -- degree k >= 2 ----------------------------------------------------------------------
    def check_size(self, max_degree: int) -> None:
        m = len(self.variables)
        for k in range(2, max_degree + 1):
            count = comb(m + k - 1, k)
            if count > MAX_MONOMIALS:
                raise BadInput(f"degree {k} has {count:,} monomials in the {m} coordinates of the "
                               f"linear span (limit {MAX_MONOMIALS:,}); lower --max-degree")

    def degree_table(self, blocks: MonomialBlocks, keep: bool, attribution=None) -> DegreeTable:
        """Interpolate J'_k block by block.  ``attribution(k, b, blocks, vectors, generated)``
        sees every block's kernel basis and the rows spanning (J'_{<k})_k."""
        start = time.perf_counter()
        k = blocks.degree
        # the Hilbert function's share of the monomials falls with the degree: the share of
        # degree k - 1 is a good first guess of a block's rank, rarely too small
        density = self.density.get(k - 1, 1.0)
        pool, fresh = self._pool(self.variables)
        previous = self.block_tables.get(k - 1) if k > 2 else None
        orbits: dict = {}
        kept: dict[int, np.ndarray] = {}
        hilbert = nullity = generated_total = max_points = computed = 0
        failure = 0.0
        single = schwartz_zippel_bound(k * self.weight_degree, self.prime, FRESH_POINTS)
        for b in self.context.progress(range(len(blocks)), f"degree {k}", len(blocks)):
            orbit = tuple(sorted(blocks.multidegrees[b]))
            seen = orbits.get(orbit)
            if seen is not None and self.symmetric and (
                    seen[1] == 0 or (not keep and attribution is None)):
                # the image of an earlier block under a permutation of [d]: same figures
                hilbert, nullity, generated_total = (
                    hilbert + seen[0], nullity + seen[1], generated_total + seen[2])
                if attribution is not None:
                    attribution(k, b, blocks, np.zeros((0, blocks.size(b)), np.int64), None)
                continue
            start_points = seen[0] + RANK_MARGIN if seen is not None else \
                int(np.ceil(blocks.size(b) * density)) + RANK_MARGIN
            kernel = interpolate_block(blocks.block(b), pool, fresh, self.prime, start_points)
            computed += 1
            max_points = max(max_points, kernel.points)
            if kernel.nullity:
                failure += single
            vectors = kernel.vectors() if keep or attribution is not None else None
            generated = (self._generated_rows(blocks, b, previous)
                         if previous is not None and kernel.nullity else None)
            rank = rank_of_rows(generated, self.prime) if generated is not None else 0
            if rank > kernel.nullity:
                raise RuntimeError(f"products of J_{k - 1} leave J_{k} in block {b}")
            orbits.setdefault(orbit, (kernel.rank, kernel.nullity, rank))
            hilbert, nullity, generated_total = (
                hilbert + kernel.rank, nullity + kernel.nullity, generated_total + rank)
            if attribution is not None:
                attribution(k, b, blocks, vectors, generated)
            if keep and kernel.nullity:
                kept[b] = vectors
        self.block_tables[k] = blocks
        self.bases[k] = kept
        self.density[k] = hilbert / len(blocks.monomials)
        n = len(self.coords)
        return DegreeTable(k, len(blocks.monomials), len(blocks), computed,
                           int(np.diff(blocks.starts).max()), hilbert, comb(n + k - 1, k) - hilbert,
                           nullity, generated_total, nullity - generated_total, max_points,
                           failure, round(time.perf_counter() - start, 4))

    def _generated_rows(self, blocks: MonomialBlocks, b: int,
                        previous: MonomialBlocks) -> np.ndarray | None:
        """The products z_s g (g in the kernel basis of J'_{k-1}) that land in block b, as
        rows over the block's monomials."""
        target = blocks.multidegrees[b]
        size = blocks.size(b)
        rows = []
        for s in np.flatnonzero((self.variable_degrees <= target).all(axis=1)):
            source = previous.block_of(target - self.variable_degrees[s])
            vectors = self.bases[blocks.degree - 1].get(source) if source is not None else None
            if vectors is None or not len(vectors):
                continue
            monomials = previous.block(source)
            extended = np.sort(np.column_stack([monomials, np.full(len(monomials), s)]), axis=1)
            _, columns = blocks.locate(extended)
            product = np.zeros((len(vectors), size), dtype=np.int64)
            product[:, columns] = vectors
            rows.append(product)
        return np.concatenate(rows) if rows else None

    def blocks(self, k: int) -> MonomialBlocks:
        """The degree-k monomials in the pivots, by multidegree (size limits enforced)."""
        blocks = monomial_blocks(self.variable_degrees, k)
        largest = int(np.diff(blocks.starts).max())
        if largest > MAX_BLOCK:
            raise BadInput(f"degree {k} has a multidegree block of {largest:,} monomials "
                           f"(limit {MAX_BLOCK:,}); lower --max-degree")
        return blocks

    def run(self, max_degree: int, keep: bool = False, attribution=None) -> tuple[list, list]:
        """(degree tables, attribution tables) of degrees 1..max_degree.

        ``attribution`` is a :class:`lightning_alg.ideal.attribution.FamilyAttribution` or None.
        Degree k needs the kernel bases of degree k - 1; the others are dropped unless
        ``keep``.
        """
        self.check_size(max_degree)
        tables = [self.linear_table()]
        attributed = []
        if attribution is not None:
            blocks = self.linear.blocks
            position = np.empty(len(self.coords), dtype=np.int64)
            position[self.linear.order] = np.arange(len(self.coords))
            attribution.prepare(1, blocks, [[(int(position[c]), 1)] for c in range(len(self.coords))])
            for b in range(len(blocks)):
                attribution(1, b, blocks, self.bases[1][b], None)
            attributed.append(attribution.finish(1, tables[0].dim_J_mod_linear,
                                                 tables[0].minimal_generators))
        for k in range(2, max_degree + 1):
            blocks = self.blocks(k)
            if attribution is not None:
                attribution.prepare(k, blocks, self.linear.substitution)
            table = self.degree_table(blocks, keep or k < max_degree, attribution)
            tables.append(table)
            if attribution is not None:
                attributed.append(attribution.finish(k, table.dim_J_mod_linear,
                                                     table.minimal_generators))
            if not keep and k > 2:
                self.bases.pop(k - 1, None)
        return tables, attributed


def validate_ideal_params(d: int, t: int, a: int, dprime: int, col: int, prime: int) -> None:
    for name, value in (("d", d), ("t", t), ("a", a), ("dprime", dprime), ("col", col)):
        if value < 1:
            raise BadInput(f"--{name} must be a positive integer; got {value}")
    if col > t:
        raise BadInput(f"--col {col} is not an output column: t = {t}")
    if not (2 < prime < 2**31 and isprime(prime)):
        raise BadInput(f"--prime must be a prime below 2^31; got {prime}")

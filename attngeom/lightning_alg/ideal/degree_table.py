"""The degree table of the vanishing ideal J (ADM Def 8): dim J_k and the minimal
generators per degree, by multigraded interpolation over F_p (the method is described in
:mod:`attngeom.lightning_alg.ideal`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from math import comb

import numpy as np
from sympy import isprime

from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.core.executor import Executor, SerialExecutor
from attngeom.kernels.monomials import evaluate_monomials
from attngeom.kernels.primefield import nullspace_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.core.verdict import schwartz_zippel_bound
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.ideal.interpolation import (
    FRESH_POINTS, MonomialBlocks, PointPool, interpolate_block, monomial_blocks, rank_of_rows)
from attngeom.lightning_alg.invariants.linear import default_context
from attngeom.lightning_alg.labels import Label
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p, weight_degree


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


@dataclass(frozen=True, eq=False)
class VarietyPoints:
    """The draw function of a :class:`PointPool`: ``count`` random points y = mu(W) of the
    variety over F_p (ADM Def 7, eq 3; rank A <= a), restricted to ``columns``.  A
    top-level object rather than a closure, so that a pool can be sent to another process."""

    param: Parametrization
    a: int
    prime: int
    columns: np.ndarray

    def __call__(self, sampler: Sampler, count: int) -> np.ndarray:
        coords = self.param.coords
        weights = sample_weights_mod_p(sampler, count, coords.d, coords.dprime, self.a, self.prime)
        return self.param.evaluate_mod_p(weights)[:, self.columns]


@dataclass
class BlockSolution:
    """What the family attribution (:mod:`attngeom.lightning_alg.ideal.attribution`) needs of one
    computed block, instead of its kernel basis.

    ``free[i]`` is the free monomial of kernel vector i: the basis is the identity there,
    so an element of J'_{k,delta} is determined by its entries at ``free`` (its kernel
    coordinates).  ``quotient`` (shape=[nullity, q]) has columns spanning {x : G x = 0} for G
    the products (J'_{<k})_k in kernel coordinates, so u -> u quotient has kernel
    (J'_{<k})_k and rank(U quotient) counts the minimal generators that the rows of U account
    for (q = the block's minimal generators); None stands for the identity (nothing
    generated in lower degrees).  ``fresh`` (shape=[FRESH_POINTS, size]) holds the block's
    monomials at the fresh points of the variety: a polynomial of the block lies in J iff it
    vanishes there (up to the Schwartz-Zippel bound of the fresh check).
    """

    free: np.ndarray
    quotient: np.ndarray | None
    fresh: np.ndarray


@dataclass
class DegreeRecord:
    """What the family attribution needs of one degree.

    ``representative[b]`` is the computed block whose figures block b shares (b itself when
    b was computed).  ``columns[i]``, for monomial i of ``blocks.monomials``, is the column,
    in the representative of its block, of its image under the permutation of the variables
    that carries the block onto its representative (induced by a permutation of [d], see
    :func:`permutation_stable`; a bijection between the two blocks' monomials).
    ``solutions`` holds the :class:`BlockSolution` of every computed block."""

    blocks: MonomialBlocks
    representative: np.ndarray
    columns: np.ndarray
    solutions: dict[int, BlockSolution]


@dataclass
class BlockTask:
    """One block of one degree with everything its kernel needs: the unit of work that
    :func:`solve_block` maps over (picklable, so that the blocks of a degree can run in other
    processes).  ``generated`` holds the products z_s g (g in J'_{k-1}) landing in the block,
    as rows over its monomials (None in degree 2 or when J'_{k-1} = 0); ``vectors``: return
    the kernel basis; ``record``: return the :class:`BlockSolution`."""

    monomials: np.ndarray
    pool: PointPool
    fresh: np.ndarray
    prime: int
    start_points: int
    generated: np.ndarray | None = None
    vectors: bool = False
    record: bool = False


@dataclass
class BlockResult:
    """The figures of one block: rank (its share of HF(k)), nullity (dim J'_{k,delta}),
    points used, rank of the products generated in lower degrees; the kernel basis (rows)
    when asked for, and the :class:`BlockSolution` when recording for the attribution."""

    rank: int
    nullity: int
    points: int
    generated_rank: int
    vectors: np.ndarray | None = None
    solution: BlockSolution | None = None


def solve_block(task: BlockTask) -> BlockResult:
    """J'_{k,delta} of one block (ADM Def 8 by interpolation, checked at the fresh points)
    and the dimension of (J'_{<k})_k inside it."""
    kernel = interpolate_block(task.monomials, task.pool, task.fresh, task.prime,
                               task.start_points)
    generated = task.generated if kernel.nullity else None
    rank = rank_of_rows(generated, task.prime) if generated is not None else 0
    solution = None
    if task.record:
        solution = block_solution(kernel.free, generated, rank,
                                  evaluate_monomials(task.fresh, task.monomials, task.prime),
                                  task.prime)
    return BlockResult(kernel.rank, kernel.nullity, kernel.points, rank,
                       kernel.vectors() if task.vectors else None, solution)


def block_solution(free: np.ndarray, generated: np.ndarray | None, generated_rank: int,
                   fresh: np.ndarray, prime: int) -> BlockSolution:
    """The :class:`BlockSolution` of a block whose kernel has the free monomials ``free``.
    The products lie in J'_k, so their kernel coordinates are their entries at the free
    monomials; the quotient map is the right kernel of those coordinates (computed only when
    the block has both generated elements and minimal generators)."""
    if generated is None or generated_rank == 0:
        quotient = None
    elif generated_rank >= len(free):
        quotient = np.zeros((len(free), 0), dtype=np.int64)
    else:
        quotient = nullspace_mod_p(generated[:, free], prime).T.copy()
    return BlockSolution(free, quotient, fresh)


class AttentionIdeal:
    """J of one output coordinate's attention variety (ADM Def 8), degree by degree.

    ``run(max_degree)`` returns the :class:`DegreeTable` rows; with ``keep=True`` the kernel
    bases of every block are kept in ``bases`` (degree -> {block: rows}) for the export; with
    ``record=True`` the :class:`DegreeRecord` of every degree is kept in ``records`` for the
    family attribution.  ``work`` counts the entries of the matrices whose ranks and kernels
    were computed (evaluation matrices and products of lower degrees, over every computed
    block): the ideal's own work, the unit of the attribution budget.
    """

    def __init__(self, d: int, t: int, a: int, dprime: int = 1, col: int = 1,
                 prime: int = DEFAULT_PRIME, seed: int = 0,
                 context: CheckContext | None = None, executor: Executor | None = None):
        validate_ideal_params(d, t, a, dprime, col, prime)
        #: where the blocks of one degree run (attngeom.core.executor; None: in this process)
        self.executor = executor
        self.d, self.t, self.a, self.prime = d, t, a, prime
        self.coords = CoordinateSystem(d, t, dprime, 1, col)
        self.param = Parametrization(self.coords)
        self.seed = seed
        self.context = context or CheckContext(seed=seed)
        self.weight_degree = weight_degree(d, a)
        self.degrees = coordinate_degrees(self.coords)
        self.bases: dict[int, dict[int, np.ndarray]] = {}
        self.records: dict[int, DegreeRecord] = {}
        self.density: dict[int, float] = {}
        self.block_tables: dict[int, MonomialBlocks] = {}
        self.work = 0
        self.linear = self._linear_part()
        self.variables = self.linear.pivots
        self.variable_degrees = self.degrees[self.variables]
        self.symmetric = permutation_stable(self.coords, self.variables)
        self._variable_maps: dict[tuple, np.ndarray] = {}

    # -- points ---------------------------------------------------------------------------
    def stream(self, key: int) -> Sampler:
        """A fresh copy of random stream ``key`` (STREAM_*)."""
        return Sampler(self.seed).spawn(key)

    def _pool(self, columns: np.ndarray) -> tuple[PointPool, np.ndarray]:
        """Points of the variety and the independent fresh points, restricted to ``columns``;
        every pool draws the same weights (STREAM_POINTS, STREAM_FRESH)."""
        draw = VarietyPoints(self.param, self.a, self.prime, columns)
        return PointPool(draw, self.stream(STREAM_POINTS)), draw(self.stream(STREAM_FRESH),
                                                                 FRESH_POINTS)

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
            self.work += kernel.points * blocks.size(b)
            vectors = kernel.vectors()
            kernels.append(kernel)
            free = kernel.free
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

    def linear_record(self) -> DegreeRecord:
        """The :class:`DegreeRecord` of degree 1: the blocks of J_1 are the coordinates of one
        row multiset, in the pivot order (their \"variables\" are positions in that order)."""
        blocks = self.linear.blocks
        _, fresh = self._pool(self.linear.order)
        solutions = {b: BlockSolution(self.linear.kernels[b].free, None,
                                      evaluate_monomials(fresh, blocks.block(b), self.prime))
                     for b in range(len(blocks))}
        return DegreeRecord(blocks, np.arange(len(blocks)), _own_columns(blocks), solutions)

    def linear_substitution(self) -> list:
        """Degree 1 in the variables of :meth:`linear_record`: y_c is position c of the order."""
        position = np.empty(len(self.coords), dtype=np.int64)
        position[self.linear.order] = np.arange(len(self.coords))
        return [[(int(position[c]), 1)] for c in range(len(self.coords))]

    # -- degree k >= 2 ----------------------------------------------------------------------
    def check_size(self, max_degree: int) -> None:
        m = len(self.variables)
        for k in range(2, max_degree + 1):
            count = comb(m + k - 1, k)
            if count > MAX_MONOMIALS:
                raise BadInput(f"degree {k} has {count:,} monomials in the {m} coordinates of the "
                               f"linear span (limit {MAX_MONOMIALS:,}); lower --max-degree")

    def degree_table(self, blocks: MonomialBlocks, keep: bool, record: bool = False) -> DegreeTable:
        """Interpolate J'_k block by block (:func:`solve_block`, mapped over the blocks by
        ``self.executor``).  With ``record`` the :class:`DegreeRecord` of the degree is kept
        in ``records`` for the attribution.

        Under the S_d symmetry only the first block of each orbit is computed; the others
        are its images and repeat its figures.  With ``keep`` the images of a block with
        generators are computed as well (their kernel bases are exported), in a second
        round that starts from the representative's rank.  The result does not depend on
        the executor: every task carries its points and its start."""
        start = time.perf_counter()
        k = blocks.degree
        # the Hilbert function's share of the monomials falls with the degree: the share of
        # degree k - 1 is a good first guess of a block's rank, rarely too small
        density = self.density.get(k - 1, 1.0)
        pool, fresh = self._pool(self.variables)
        previous = self.block_tables.get(k - 1) if k > 2 else None
        first: dict[tuple, int] = {}            # orbit -> its first block
        for b in range(len(blocks)):
            first.setdefault(tuple(sorted(blocks.multidegrees[b])), b)
        orbit_of = [first[tuple(sorted(blocks.multidegrees[b]))] for b in range(len(blocks))]
        results: dict[int, BlockResult] = {}
        representatives = [b for b in range(len(blocks))
                           if not self.symmetric or orbit_of[b] == b]
        self._solve(blocks, representatives, {b: int(np.ceil(blocks.size(b) * density))
                                              for b in representatives},
                    pool, fresh, previous, keep, record, results, "kernels")
        images = [b for b in range(len(blocks)) if self.symmetric and keep
                  and orbit_of[b] != b and results[orbit_of[b]].nullity]
        if images:
            self._solve(blocks, images, {b: results[orbit_of[b]].rank for b in images},
                        pool, fresh, previous, keep, record, results, "kernels of images")
        kept: dict[int, np.ndarray] = {}
        representative = np.arange(len(blocks))
        columns = _own_columns(blocks) if record else None
        solutions: dict[int, BlockSolution] = {}
        hilbert = nullity = generated_total = 0
        for b in range(len(blocks)):
            result = results.get(b)
            if result is None:
                # the image of an earlier block under a permutation of [d]: same figures
                result = results[orbit_of[b]]
                if record:
                    representative[b] = orbit_of[b]
                    images = self._variable_map(blocks.multidegrees[b],
                                                blocks.multidegrees[orbit_of[b]])[blocks.block(b)]
                    _, columns[blocks.starts[b]:blocks.starts[b + 1]] = \
                        blocks.locate(np.sort(images, axis=1))
            else:
                if record:
                    solutions[b] = result.solution
                if keep and result.nullity:
                    kept[b] = result.vectors
            hilbert, nullity, generated_total = (hilbert + result.rank, nullity + result.nullity,
                                                 generated_total + result.generated_rank)
        single = schwartz_zippel_bound(k * self.weight_degree, self.prime, FRESH_POINTS)
        failure = sum(single for r in results.values() if r.nullity)  # as a union bound adds
        self.block_tables[k] = blocks
        self.bases[k] = kept
        if record:
            self.records[k] = DegreeRecord(blocks, representative, columns, solutions)
        self.density[k] = hilbert / len(blocks.monomials)
        n = len(self.coords)
        return DegreeTable(k, len(blocks.monomials), len(blocks), len(results),
                           int(np.diff(blocks.starts).max()), hilbert, comb(n + k - 1, k) - hilbert,
                           nullity, generated_total, nullity - generated_total,
                           max(r.points for r in results.values()), failure,
                           round(time.perf_counter() - start, 4))

    def _solve(self, blocks: MonomialBlocks, chosen: list[int], ranks: dict[int, int],
               pool: PointPool, fresh: np.ndarray, previous: MonomialBlocks | None, keep: bool,
               record: bool, results: dict, stage: str) -> None:
        """Run :func:`solve_block` on the blocks ``chosen`` (starting each from its expected
        rank plus the margin) through the executor, largest block first so that workers
        finish together; the results go into ``results``."""
        chosen = sorted(chosen, key=lambda b: -blocks.size(b))
        tasks = []
        for b in chosen:
            generated = self._generated_rows(blocks, b, previous) if previous is not None else None
            tasks.append(BlockTask(blocks.block(b), pool, fresh, self.prime,
                                   ranks[b] + RANK_MARGIN, generated, keep, record))
        names = [f"degree {blocks.degree} block {b} (multidegree "
                 f"{','.join(map(str, blocks.multidegrees[b]))})" for b in chosen]
        executor = self.executor or SerialExecutor()
        solved = executor.map(solve_block, tasks, names=names,
                              label=f"degree {blocks.degree} blocks: {stage}",
                              progress=self.context.progress)
        for b, task, result in zip(chosen, tasks, solved):
            if result.generated_rank > result.nullity:
                raise RuntimeError(f"products of J_{blocks.degree - 1} leave J_"
                                   f"{blocks.degree} in block {b}")
            self.work += (result.points + (len(task.generated) if task.generated is not None
                                           else 0)) * blocks.size(b)
            results[b] = result

    def _variable_map(self, source: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The permutation of the variables induced by a permutation sigma of [d] with
        sigma(source) = target (multidegrees of one S_d orbit); it maps the monomials of the
        block of ``source`` onto those of the block of ``target`` and, the pivots being
        permuted (:func:`permutation_stable`), J'_k of the one onto J'_k of the other."""
        sigma = np.empty(self.d, dtype=np.int64)
        sigma[np.argsort(source, kind="stable")] = np.argsort(target, kind="stable")
        key = tuple(sigma.tolist())
        if key not in self._variable_maps:
            index = {self.coords.labels[int(c)]: s for s, c in enumerate(self.variables)}
            images = []
            for c in self.variables:
                label = self.coords.labels[int(c)]
                images.append(index[Label.from_pairs(
                    [(int(sigma[r - 1]) + 1, col) for r, col in label.pairs()], label.row)])
            self._variable_maps[key] = np.array(images, dtype=np.int64)
        return self._variable_maps[key]

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

    def run(self, max_degree: int, keep: bool = False, record: bool = False) -> list[DegreeTable]:
        """The degree tables of degrees 1..max_degree.

        Degree k needs the kernel bases of degree k - 1; the others are dropped unless
        ``keep``.  ``record`` keeps each degree's :class:`DegreeRecord` (for the attribution).
        """
        self.check_size(max_degree)
        tables = [self.linear_table()]
        if record:
            self.records[1] = self.linear_record()
        for k in range(2, max_degree + 1):
            blocks = self.blocks(k)
            tables.append(self.degree_table(blocks, keep or k < max_degree, record))
            if not keep and k > 2:
                self.bases.pop(k - 1, None)
        return tables


def _own_columns(blocks: MonomialBlocks) -> np.ndarray:
    """Each monomial's column in its own block (the ``columns`` of a block computed itself)."""
    return np.arange(len(blocks.monomials)) - np.repeat(blocks.starts[:-1], np.diff(blocks.starts))


def validate_ideal_params(d: int, t: int, a: int, dprime: int, col: int, prime: int) -> None:
    for name, value in (("d", d), ("t", t), ("a", a), ("dprime", dprime), ("col", col)):
        if value < 1:
            raise BadInput(f"--{name} must be a positive integer; got {value}")
    if col > t:
        raise BadInput(f"--col {col} is not an output column: t = {t}")
    if not (2 < prime < 2**31 and isprime(prime)):
        raise BadInput(f"--prime must be a prime below 2^31; got {prime}")

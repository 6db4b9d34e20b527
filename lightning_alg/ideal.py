"""The vanishing ideal J of the attention variety, degree by degree (ADM Def 8), by
multigraded interpolation over F_p; the variety's dimension against HMK Cor 3.3.

Variety.  One output coordinate (i, j) = (1, col) of lightning self-attention: the image
closure of mu: W -> y(W) (ADM Def 7, eq 3) in its N = C(d+2,3) + (t-1) d C(d+1,2)
coordinates, with rank A <= a (A = K^T Q when a < d, a generic matrix otherwise).

Method.
1. Grading.  phi_W(diag(lambda) X) = phi_W'(X) with W' = (Lambda A Lambda, V Lambda), so
   the variety is stable under y_(k1,k2,k3) -> lambda_k1 lambda_k2 lambda_k3 y_(k1,k2,k3)
   and J is Z^d-graded: each multidegree is an independent block
   (:mod:`lightning_alg.interpolation`).
2. Linear part.  In degree 1 the blocks are the coordinates of one row multiset
   {k1,k2,k3}; their kernel is J_1 and the coordinates that stay independent on the
   variety (the pivots; the cross-column coordinates of one context column come first,
   so for t >= 2 these are exactly the pivots) are a basis of the coordinate ring's
   degree-1 part.  Every other coordinate is a linear combination of pivots modulo J_1.
3. Degree k >= 2.  Modulo J_1 the ring is the polynomial ring in the m pivots and
   J_k = (J_1 S)_k (+) J'_k with J'_k = J_k cap F_p[pivots]_k, computed block by block.
   With HF(k) the Hilbert function (the ranks of the blocks):
   dim J_k = C(N+k-1, k) - HF(k) and dim J'_k = C(m+k-1, k) - HF(k).
4. Minimal generators: dim J_1 in degree 1; in degree k >= 2, dim J'_k minus the
   dimension of (J'_{<k})_k = span{ z_s g : g in J'_{k-1}, z_s a pivot } (an exact rank).
5. Symmetry.  The variety is even GL_d-stable (phi_W(G X) = phi_W'(X) with
   W' = (G^T A G, V G)); a permutation of [d] that permutes the pivots maps block delta
   onto block sigma(delta).  Where no basis is needed, one block per S_d orbit of
   multidegrees is computed and its figures are those of the whole orbit
   (:func:`permutation_stable`; the table says how many blocks were computed).

The answer is exact over F_p (p = 2^31 - 1 by default) with the failure probability of
the fresh-point checks (:mod:`lightning_alg.interpolation`); over Q, dim_Q J_k <= dim_Fp J_k
with equality unless p divides one of finitely many integers (a "bad prime": rerun with
``--prime`` to cross-check; the Macaulay2 export proves the lower bound over Q).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from math import comb

import numpy as np
from sympy import isprime

from kernels.claim import CheckContext
from kernels.errors import BadInput
from kernels.primefield import matmul_mod_p, rank_mod_p
from kernels.sampling import DEFAULT_PRIME, Sampler
from kernels.verdict import schwartz_zippel_bound
from lightning_alg.coordinates import CoordinateSystem
from lightning_alg.dimension import single_layer_dimension
from lightning_alg.ideal_families import FamilyAttribution, collect_families, family_claims
from lightning_alg.interpolation import (
    FRESH_POINTS, MonomialBlocks, PointPool, free_columns, interpolate_block, monomial_blocks,
    rank_of_rows)
from lightning_alg.invariants.linear import default_context
from lightning_alg.labels import Label
from lightning_alg.parametrization import (
    Parametrization, WeightBatch, sample_weights_mod_p, weight_degree)

DEFAULT_MAX_DEGREE = 4
#: Degree-k monomials in the pivots, and monomials in one block, beyond which the input is
#: refused (BadInput): a block of 8000 monomials is a 0.5 GB evaluation matrix.
MAX_MONOMIALS = 3_000_000
MAX_BLOCK = 8000
#: Points at which the Jacobian rank is measured (the maximum is taken).
JACOBIAN_POINTS = 3
#: Random streams Sampler(seed).spawn(key).  ``spawn`` derives a child from the root seed
#: and the key alone (nested spawns do not nest), so every use has its own key and draws
#: from it in sequence; the fresh points must be independent of the interpolation points.
STREAM_POINTS, STREAM_FRESH, STREAM_JACOBIAN, STREAM_MEMBERS, STREAM_PROJECTIONS, \
    STREAM_EXPORT = range(1, 7)
#: Extra points over the expected rank of a block (the rank must stay below the point
#: count, or the block is recomputed with twice the points).
RANK_MARGIN = 4


# -- dimension ------------------------------------------------------------------------------

def mu_jacobian_mod_p(param: Parametrization, weights: WeightBatch, b: int) -> np.ndarray:
    """The Jacobian of mu at weight point b, mod p, shape=[N, parameters].

    Columns: (A, V) when a >= d; (Q, K, V) when a < d, through dA_ml/dQ_rl = K_rm and
    dA_ml/dK_rm = Q_rl.  From Prop 6: y_c = (1/|Perm|) sum a_{p2 p3} v_{i p1}.
    """
    p = weights.prime
    A, V = weights.A[b], weights.V[b]
    n = len(param.orbit)
    d, dprime = A.shape[0], V.shape[0]
    rows = np.repeat(np.arange(n), param.mask.shape[1])
    mask = param.mask.ravel().astype(bool)
    rows, p1, p2, p3 = rows[mask], param.p1.ravel()[mask], param.p2.ravel()[mask], param.p3.ravel()[mask]
    out_row = param.out_row[rows]
    d_v = np.zeros((n, dprime * d), dtype=np.int64)
    np.add.at(d_v, (rows, out_row * d + p1), A[p2, p3])
    d_a = np.zeros((n, d * d), dtype=np.int64)
    np.add.at(d_a, (rows, p2 * d + p3), V[out_row, p1])
    inverse = np.array([pow(int(o), -1, p) for o in param.orbit], dtype=np.int64)[:, None]
    d_v, d_a = d_v % p * inverse % p, d_a % p * inverse % p
    if weights.Q is None:
        return np.hstack([d_a, d_v])
    Q, K = weights.Q[b], weights.K[b]
    cube = d_a.reshape(n, d, d)                                   # [c, m, l]
    d_q = matmul_mod_p(cube.transpose(0, 2, 1).reshape(n * d, d), K.T.copy(), p)  # [c,l,r]
    d_k = matmul_mod_p(cube.reshape(n * d, d), Q.T.copy(), p)     # [c, m, r]
    a = Q.shape[0]
    d_q = d_q.reshape(n, d, a).transpose(0, 2, 1).reshape(n, a * d)
    d_k = d_k.reshape(n, d, a).transpose(0, 2, 1).reshape(n, a * d)
    return np.hstack([d_q, d_k, d_v])


def variety_dimension(coords: CoordinateSystem, a: int, prime: int, sampler: Sampler,
                      points: int = JACOBIAN_POINTS) -> dict:
    """dim of the image closure of mu = the generic rank of its Jacobian, over F_p.

    The rank at a random point is at most the generic rank and smaller only if every
    maximal nonzero minor vanishes there: an r x r minor has degree r (w - 1) in the
    weights, so the maximum over ``points`` points is wrong with probability at most
    (r (w - 1) / p)^points.
    """
    param = Parametrization(coords)
    weights = sample_weights_mod_p(sampler, points, coords.d, coords.dprime, a, prime)
    ranks = [rank_mod_p(mu_jacobian_mod_p(param, weights, b), prime) for b in range(points)]
    rank = max(ranks)
    degree = rank * (weight_degree(coords.d, a) - 1)
    return {"rank": rank, "ranks": ranks, "points": points, "prime": prime,
            "failure_probability": schwartz_zippel_bound(degree, prime, points)}


def hmk_cor33_violation(d: int, dprime: int, a: int, t: int) -> str | None:
    """The hypothesis of HMK Cor 3.3 that (d, d', a, t) violate, or None."""
    if t < 2:
        return f"HMK Cor 3.3 needs t >= 2; got t={t}"
    if not ((d >= 2 and dprime >= 2) or (d >= 2 and a >= 2)):
        return f"HMK Cor 3.3 needs d, d' >= 2 or d, a >= 2; got d={d}, d'={dprime}, a={a}"
    return None


def dimension_report(d: int, t: int, a: int, dprime: int, col: int, prime: int,
                     sampler: Sampler) -> dict:
    """The measured dimension of one output coordinate's variety and of the whole output
    (HMK's neuromanifold), each beside HMK Cor 3.3.

    The formula is HMK Cor 3.3, eq (7), as printed (``lightning_alg.dimension``):
    2ad + dd' - a^2 - 1 if a <= d, else d^2 + dd' - 1.
    HMK's neuromanifold M_{d,d',a} is the whole output phi_W; ADM's variety here is one
    output coordinate, which only sees row i of V, so its dimension is HMK's formula at
    d' = 1.  For d' = 1 and t >= 2 the two coincide: every output coordinate repeats the
    same coefficients (ADM §3 sequence-copy relations).
    """
    one = CoordinateSystem(d, t, dprime, 1, col)
    measured = variety_dimension(one, a, prime, sampler)
    violation = hmk_cor33_violation(d, 1, a, t)
    out = {"variety_dimension": measured["rank"], "jacobian": measured,
           "hmk_cor33_one_coordinate": {
               "formula": "HMK Cor 3.3 at d'=1: 2ad + d - a^2 - 1 (a <= d), d^2 + d - 1 (a > d)",
               "value": single_layer_dimension(d, 1, a), "applicable": violation is None,
               "hypothesis": violation,
               "agrees": single_layer_dimension(d, 1, a) == measured["rank"]}}
    whole_size = CoordinateSystem.size_of(d, t, dprime, all_outputs=True)
    if whole_size <= 20_000:
        whole = CoordinateSystem(d, t, dprime, all_outputs=True)
        rank = variety_dimension(whole, a, prime, sampler)
        whole_violation = hmk_cor33_violation(d, dprime, a, t)
        out["hmk_cor33_whole_output"] = {
            "formula": "HMK Cor 3.3: 2ad + dd' - a^2 - 1 (a <= d), d^2 + dd' - 1 (a > d)",
            "value": single_layer_dimension(d, dprime, a), "measured": rank["rank"],
            "failure_probability": rank["failure_probability"],
            "applicable": whole_violation is None, "hypothesis": whole_violation,
            "agrees": single_layer_dimension(d, dprime, a) == rank["rank"]}
    return out


# -- the ideal ------------------------------------------------------------------------------

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

        ``attribution`` is a :class:`lightning_alg.ideal_families.FamilyAttribution` or None.
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


@dataclass
class IdealReport:
    """Everything ``attngeom ideal`` prints."""

    params: dict
    ambient_dimension: int
    linear_span_dimension: int
    dimension: dict
    degrees: list[DegreeTable]
    points_drawn: int
    fresh_points: int
    attribution: dict | None = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)
    export: dict | None = None

    @property
    def variety_dimension(self) -> int:
        return self.dimension["variety_dimension"]

    @property
    def failure_probability(self) -> float:
        parts = [t.failure_probability for t in self.degrees]
        parts.append(self.dimension["jacobian"]["failure_probability"])
        return min(1.0, sum(parts))

    def by_degree(self, name: str, nonzero: bool = False) -> dict[str, int]:
        return {str(t.degree): getattr(t, name) for t in self.degrees
                if getattr(t, name) or not nonzero}

    def to_json(self) -> dict:
        return {
            "params": self.params,
            "ambient_dimension": self.ambient_dimension,
            "linear_span_dimension": self.linear_span_dimension,
            "variety_dimension": self.variety_dimension,
            "codimension": self.ambient_dimension - self.variety_dimension,
            "dimension": self.dimension,
            "dim_J": self.by_degree("dim_J"),
            "dim_J_mod_linear": self.by_degree("dim_J_mod_linear"),
            "hilbert_function": self.by_degree("hilbert_function"),
            "minimal_generators": self.by_degree("minimal_generators", nonzero=True),
            "degrees": [asdict(t) for t in self.degrees],
            "points": {"drawn": self.points_drawn, "fresh": self.fresh_points,
                       "prime": self.params["prime"]},
            "failure_probability": self.failure_probability,
            "family_attribution": self.attribution,
            "m2_export": self.export,
            "seconds": self.seconds,
            "notes": self.notes,
        }


def compute_ideal(d: int, t: int, a: int | None = None, dprime: int = 1, col: int = 1,
                  max_degree: int = DEFAULT_MAX_DEGREE, families="all",
                  prime: int | None = None, seed: int = 0,
                  context: CheckContext | None = None,
                  keep: bool = False) -> tuple[IdealReport, AttentionIdeal]:
    """The ideal table of ``attngeom ideal`` and the engine that produced it (whose
    ``bases`` hold every block's kernel basis when ``keep``, for the Macaulay2 export).

    ``families``: "all", "none", a comma list of family claim ids, or a list of
    FamilyClaim instances.
    """
    start = time.perf_counter()
    a = d if a is None else a
    prime = DEFAULT_PRIME if prime is None else prime
    if max_degree < 1:
        raise BadInput(f"--max-degree must be at least 1; got {max_degree}")
    ideal = AttentionIdeal(d, t, a, dprime, col, prime, seed, context)
    ideal.check_size(max_degree)
    claims = family_claims(families) if isinstance(families, str) else list(families)
    attribution = None
    if claims:
        values = {"d": d, "t": t, "a": a, "dprime": dprime, "col": col}
        sources = collect_families(claims, values, ideal.coords, max_degree,
                                   ideal.stream(STREAM_MEMBERS), prime)
        attribution = FamilyAttribution(sources, ideal.coords, prime,
                                         ideal.stream(STREAM_PROJECTIONS))
    tables, attributed = ideal.run(max_degree, keep, attribution)
    dimension = dimension_report(d, t, a, dprime, col, prime, ideal.stream(STREAM_JACOBIAN))
    params = {"d": d, "t": t, "a": a, "dprime": dprime, "row": 1, "col": col,
              "max_degree": max_degree, "prime": prime, "seed": seed}
    report = IdealReport(
        params, len(ideal.coords), len(ideal.variables), dimension, tables,
        max(table.max_points for table in tables), FRESH_POINTS,
        {"degrees": attributed, "skipped": attribution.skipped} if attribution else None,
        round(time.perf_counter() - start, 4))
    if dprime > 1:
        report.notes.append("one output coordinate sees only row 1 of V, so its variety is the "
                            "same for every d'; HMK's neuromanifold is the whole output")
    return report, ideal


def render_report(report: IdealReport) -> str:
    """The table ``attngeom ideal`` prints."""
    p = report.params
    dim = report.dimension
    lines = [f"attention variety of output coordinate (i,j)=(1,{p['col']}): d={p['d']}, "
             f"t={p['t']}, a={p['a']}, d'={p['dprime']}  [ADM Def 8]",
             f"  ambient dimension {report.ambient_dimension}, linear span "
             f"{report.linear_span_dimension}, variety dimension {report.variety_dimension} "
             f"(codimension {report.ambient_dimension - report.variety_dimension}; "
             f"Jacobian rank over F_p at {dim['jacobian']['points']} points)"]
    for key, what in (("hmk_cor33_one_coordinate", "one coordinate (d'=1)"),
                      ("hmk_cor33_whole_output", f"whole output (d'={p['dprime']})")):
        if key not in dim:
            continue
        entry = dim[key]
        measured = entry.get("measured", report.variety_dimension)
        verdict = "agrees" if entry["agrees"] else "DISAGREES"
        scope = "" if entry["applicable"] else f"  (outside its hypotheses: {entry['hypothesis']})"
        lines.append(f"  HMK Cor 3.3, {what}: formula {entry['value']}, measured {measured}: "
                     f"{verdict}{scope}")
    lines.append("")
    header = ("  k  monomials  blocks  computed  largest   HF(k)      dim J_k  dim J_k/J_1  "
              "from J_<k  minimal  points  seconds")
    lines.append(header)
    for t in report.degrees:
        lines.append(f"{t.degree:3d} {t.monomials:10d} {t.blocks:7d} {t.blocks_computed:9d} "
                     f"{t.largest_block:8d} "
                     f"{t.hilbert_function:7d} {t.dim_J:12d} {t.dim_J_mod_linear:12d} "
                     f"{t.generated_by_lower:10d} {t.minimal_generators:8d} {t.max_points:7d} "
                     f"{t.seconds:8.2f}")
    minimal = ", ".join(f"{v} in degree {k}" for k, v in report.by_degree(
        "minimal_generators", nonzero=True).items()) or "none"
    lines.append(f"  minimal generators: {minimal}")
    lines.append(f"  over F_p, p = {p['prime']}: at most {report.points_drawn} random points of the "
                 f"variety per block, every kernel checked at {report.fresh_points} fresh points; "
                 f"failure probability <= {report.failure_probability:.3g} (Schwartz-Zippel)")
    if report.attribution is not None:
        lines.extend(["", *_render_attribution(report.attribution)])
    lines.extend(f"  note: {note}" for note in report.notes)
    if report.export is not None:
        counts = ", ".join(f"{n} of degree {k}" for k, n in report.export["polynomials"].items() if n)
        lines.append(f"  wrote {report.export['path']}: {counts or 'nothing'} (lifted to Q from "
                     f"{len(report.export['primes'])} prime(s), each checked at "
                     f"{report.export['check_points']} points mod {report.export['check_prime']})")
    lines.append(f"  {report.seconds:.2f} s")
    return "\n".join(lines)


def _render_attribution(attribution: dict) -> list[str]:
    lines = ["family attribution (span: inside J_k modulo J_1, J_1 itself for k = 1; "
             "new: minimal generators accounted for)",
             "  k  family                    source                        members  outside J"
             "     span      new"]
    for table in attribution["degrees"]:
        k = table["degree"]
        if not table["families"] and not table["minimal_generators"]:
            continue
        for row in table["families"]:
            mark = "+" if row["lower_bound"] else " "
            lines.append(f"{k:3d}  {row['id']:<24}  {row['source'][:28]:<28}  {row['used']:7d}  "
                         f"{row['outside_J']:9d}  {row['span']:7d}{mark} {row['new_generators']:7d}")
        together = table["all_families"]
        lines.append(f"{k:3d}  {'all families':<24}  {'':<28}  {'':7}  {'':9}  "
                     f"{together['span']:7d}  {together['new_generators']:7d}")
        lines.append(f"{k:3d}  {'unexplained':<24}  {'of dim J_k/J_1, minimal':<28}  {'':7}  {'':9}  "
                     f"{table['unexplained']['span']:7d}  {table['unexplained']['minimal_generators']:7d}"
                     f"   (of {table['dim_J_mod_linear']}, {table['minimal_generators']})")
    if any(row["lower_bound"] for table in attribution["degrees"] for row in table["families"]):
        lines.append("  + lower bound (members sampled or projection saturated)")
    for skipped in attribution["skipped"]:
        lines.append(f"  skipped {skipped['id']}: {skipped['reason']}")
    return lines

"""Claims on the single-column slice (ADM §4): ``lie-flattening`` and ``single-column-rank``;
``chow-111`` is in :mod:`.chow111`.

Each works on the single-column coordinates y_j(K) of one output coordinate (i, j)
(any t >= 1; t = 1 has only these), through the foundation's CoordinateSystem and
Parametrization, and decides rank statements by ranks at sampled points, never by
expanding all minors (see :mod:`attngeom.lightning_alg.invariants.determinantal`).
"""

from __future__ import annotations

from itertools import combinations
from math import comb, factorial

import flint
import numpy as np
from flint import nmod
from sympy.polys.rings import ring

from attngeom.kernels.backend import get_backend
from attngeom.core.claim import CheckContext, Claim, Param
from attngeom.core.errors import BadInput
from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, combine, consistent, proved, refuted, verified
from attngeom.lightning_alg.claims.base import (
    COL, D, DPRIME, MATRIX, ROW, render_invariants, validate_lightning)
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.family_check import (
    DEFAULT_EXACT_POINTS, DEFAULT_NUMERIC_POINTS, NUMERIC_TOLERANCE, prove_family)
from attngeom.lightning_alg.invariant import Invariant, SparseInvariant, leading_coefficient
from attngeom.lightning_alg.invariants.chow import (
    apply_operator, cone_dimension_split_21, operator_trace, split_annihilator)
from attngeom.lightning_alg.invariants.determinantal import (
    LinearMatrix, format_matrix, generic_rank_witness, rank_bound_exact, rank_bound_numeric)
from attngeom.lightning_alg.invariants.lie_flattening import (
    lie_flattening_matrix, lie_flattening_shape, sl_coordinates)
from attngeom.lightning_alg.invariants.single_column import (
    coefficient_submatrix, cubic_coefficients, display_names, sample_slice_mod_p,
    single_column_indices, single_column_symbols, slice_dimension_mod_p, slice_mod_p,
    submatrix_decomposition)
from attngeom.lightning_alg.labels import multisets
from attngeom.lightning_alg.parametrization import (
    Parametrization, WeightBatch, sample_weights_float, symbolic_weights, weight_degree)


T = Param("t", "sequence length t (columns of X); the single-column slice exists for any t",
          default=1)
A_RANK = Param("a", "attention dimension a: rank(A) <= a (default: d, no constraint)")
A_ONE = Param("a", "attention dimension a; ADM Cor 22 needs rank(A) = 1", default=1)

#: Largest M_Lie (rows x columns) evaluated per point: about 80 MB of int64 at 6 points.
MAX_MATRIX_ENTRIES = 2_000_000
#: Up to this d, ``--method auto`` proves symbolically (under 6 s at d = 8).
AUTO_SYMBOLIC_MAX_D = 8
#: Largest estimated number of weight-ring terms (members x s! x (terms of one y)^s) that
#: the symbolic method expands when it substitutes mu(W) into the s x s minors of N (about
#: a second); above it the minors are checked by exact ranks at random points instead.
SYMBOLIC_MINOR_BUDGET = 2_000_000
#: Generic points used to measure the span of Example 19's 45 maximal minors.
SPAN_POINTS = 80


def lemma16_hypothesis(params, source: str) -> str | None:
    if params["d"] < 3:
        return (f"{source} needs d >= 3 (ADM Lemma 16: for d <= 2 M_Lie of a split cubic "
                f"can have full rank); got d={params['d']}")
    return None


def slice_coordinates(params) -> CoordinateSystem:
    return CoordinateSystem(params["d"], params["t"], params["dprime"], params["row"],
                            params["col"])


def _check_size(d: int) -> None:
    rows, cols = lie_flattening_shape(d)
    if rows * cols > MAX_MATRIX_ENTRIES:
        raise BadInput(f"M_Lie for d={d} is {rows} x {cols} ({rows * cols:.3g} entries per "
                       f"point); the limit is {MAX_MATRIX_ENTRIES:,}")


def generic_cubics_mod_p(context: CheckContext, d: int, points: int, prime: int) -> np.ndarray:
    """Uniform points of F_p^{C(d+2,3)}: cubics not constrained to the variety."""
    return context.sampler.spawn(23).prime_field((points, len(multisets(d, 3))), prime)


def numeric_points(coords, a, context):
    """(weights, y, generic y) in float64 on the context's backend."""
    backend = get_backend(context.backend, context.device)
    points = context.samples or DEFAULT_NUMERIC_POINTS
    w = sample_weights_float(context.sampler, points, coords.d, coords.dprime, a)
    y = Parametrization(coords).evaluate_float(backend.asarray(w.A), backend.asarray(w.V), backend)
    y = y[:, backend.asarray(single_column_indices(coords), "int64")]
    generic = backend.asarray(context.sampler.spawn(23).floats((points, y.shape[1])))
    return backend, w, y, generic


def ring_slice(coords, a):
    """(R, A, V, y): generic weights and the single-column coordinates mu(W) in R."""
    R, y = Parametrization(coords).symbolic(a)
    _, A, V = symbolic_weights(coords.d, coords.dprime, a)
    return R, A, V, [y[k] for k in single_column_indices(coords)]


def nmod_rows(matrix, prime):
    return [[nmod(int(x), prime) for x in row] for row in matrix]


def minor_invariants(lm: LinearMatrix, size: int, coords: CoordinateSystem, limit: int | None,
                     family: str, source: str) -> list[Invariant]:
    """The first ``limit`` nonzero size x size minors of ``lm`` as invariants, each signed
    so that its first printed term is positive (a sign changes nothing in J, and a
    command-line argument starting with '-' would read as an option)."""
    symbols = single_column_symbols(coords)
    out = []
    for rows, cols, terms in lm.nonzero_minor_terms(size, limit):
        sign = -1 if leading_coefficient(terms, symbols, coords) < 0 else 1
        out.append(SparseInvariant(terms, symbols, sign, family, source, {
            "rows": [lm.rows[r] for r in rows], "columns": [lm.columns[c] for c in cols],
            "sign": sign}))
    return out


class SingleColumnClaim(Claim):
    """A claim on the single-column slice: every method; parameters validated as for all
    lightning claims and, for the claims that build M_Lie, its size bounded."""

    methods = ("symbolic", "exact", "numeric")
    #: validate() refuses d whose M_Lie exceeds MAX_MATRIX_ENTRIES
    builds_lie_flattening = True

    def validate(self, params):
        validate_lightning(params)
        if self.builds_lie_flattening:
            _check_size(params["d"])


# ==========================================================================================
class LieFlatteningClaim(SingleColumnClaim):
    """ADM Def 15, Lemma 16, Prop 17(2), Example 19: on the single-column slice of the
    attention variety the Lie algebra flattening M_Lie(f_T) (C(d+2,3) x (d^2 - 1), see
    :mod:`attngeom.lightning_alg.invariants.lie_flattening`) is rank-deficient, so all its maximal
    minors lie in J (d >= 3).

    * symbolic (``proved``): Lemma 16's operator D for l = v_i . x, q = x^T A x is built
      with entries in QQ[A, V] (QQ[Q, K, V] if a < d); D(f_T) = 0 is expanded in
      QQ[A, V][x], M_Lie(mu(W)) vec(D) = 0 in QQ[A, V], D != 0 and tr D = 0.  A nonzero
      kernel vector over the function field makes every maximal minor the zero polynomial.
    * exact (``verified``): rank M_Lie < d^2 - 1 at N random points over F_p; Lemma 16's D
      (built mod p) is a kernel vector there, and at a point with q = (m . x)^2 (A = m m^T),
      which takes the proof's case 2.
    * numeric (``consistent``): sigma_{d^2-1}/sigma_1 of the float64 matrix.

    Every method also shows the family is nontrivial: M_Lie has full rank d^2 - 1 at a
    generic cubic.  For d = 3 it checks Example 19's further statements: the slice has
    codimension 2, and the 45 maximal minors span a 35-dimensional space ("J is generated
    by 35 of them; the remaining ones lie in the ideal they generate").
    """

    id = "lie-flattening"
    source = "ADM Def 15, Lemma 16, Prop 17(2), Ex 19"
    statement = ("On the single-column slice the Lie algebra flattening M_Lie(f_T) has rank "
                 "< d^2 - 1, so its maximal minors lie in J (d >= 3).")
    params = (D, T, A_RANK, DPRIME, ROW, COL)
    examples = ({"d": 3},                                    # ADM Example 19
                {"d": 4},                                    # ADM Example 21's 20 x 15 matrix
                {"d": 4, "a": 1},
                {"d": 3, "t": 2, "dprime": 2, "row": 2, "col": 2},
                {"d": 8, "method": "exact"})                 # issue 3's size target

    def hypothesis_violation(self, params):
        return lemma16_hypothesis(params, "the Lie flattening (ADM Prop 17(2))")

    def auto_method(self, params):
        return "symbolic" if params["d"] <= AUTO_SYMBOLIC_MAX_D else "exact"

    # -- common parts ------------------------------------------------------------------
    def _nontrivial(self, d: int, context: CheckContext, prime: int = DEFAULT_PRIME) -> Verdict:
        lm = lie_flattening_matrix(d)
        generic = lm.evaluate_mod_p(generic_cubics_mod_p(context, d, 1, prime), prime)[0]
        return generic_rank_witness(generic, d * d - 1, prime=prime, what="M_Lie")

    def _example19(self, coords, a, context, prime=DEFAULT_PRIME) -> dict[str, Verdict]:
        """ADM Example 19 (d = 3): codim 2 and the span of the 45 maximal minors (the part
        ``example19``; none for d != 3)."""
        if coords.d != 3:
            return {}
        lm = lie_flattening_matrix(3)
        generic = lm.evaluate_mod_p(generic_cubics_mod_p(context, 3, SPAN_POINTS, prime), prime)
        values = np.array([[int(flint.nmod_mat(nmod_rows(m[list(rows)], prime), prime).det())
                            for m in generic] for rows in combinations(range(10), 8)])
        span = rank_mod_p(values, prime)
        weights, _ = sample_slice_mod_p(coords, a, 1, context.sampler.spawn(29), prime)
        dimension = slice_dimension_mod_p(coords, weights, 0)
        expected_dim = cone_dimension_split_21(3) if a >= 3 else None
        evidence = {"maximal_minors": len(values), "span_of_minors": span,
                    "slice_dimension": dimension, "codimension": 10 - dimension}
        problems = []
        if span != 35:
            problems.append(f"the 45 maximal minors span a space of dimension {span}, not 35")
        if expected_dim is not None and dimension != expected_dim:
            problems.append(f"the slice has dimension {dimension}, not 8 (codimension 2)")
        if problems:
            return {"example19": refuted(method="exact", evidence=evidence, summary=(
                "Example 19: " + "; ".join(problems)), counterexample=evidence)}
        return {"example19": proved(checked=len(values), method="exact", evidence=evidence, summary=(
            f"Example 19: the 45 maximal minors span dimension {span} (measured at "
            f"{SPAN_POINTS} generic points over F_p) and the slice has codimension "
            f"{10 - dimension}"))}

    # -- methods -----------------------------------------------------------------------
    def check_symbolic(self, params, context):
        coords = slice_coordinates(params)
        d = coords.d
        R, A, V, y = ring_slice(coords, params["a"])
        linear = V[coords.row - 1]
        symmetric = [[A[m][l] + A[l][m] for l in range(d)] for m in range(d)]
        annihilator = split_annihilator(linear, symmetric)
        vector = sl_coordinates(annihilator.matrix)
        matrix = lie_flattening_matrix(d).evaluate_ring(y)
        products = [sum((row[c] * vector[c] for c in range(len(vector))), R.zero)
                    for row in matrix]
        Rx, *xs = ring([f"x{k}" for k in range(1, d + 1)], R.to_domain())
        cubic = sum((Rx(c) * _monomial(xs, K) for c, K in zip(cubic_coefficients(y, d),
                                                             multisets(d, 3))), Rx.zero)
        applied = apply_operator([[Rx(m) for m in row] for row in annihilator.matrix], cubic, xs)
        ring_name = "QQ[Q, K, V]" if params["a"] < d else "QQ[A, V]"
        residual_rows = [r for r, p in enumerate(products) if p]
        problems = {}
        if applied:
            problems["D(f_T)"] = str(applied.as_expr())[:2000]
        if residual_rows:
            r = residual_rows[0]
            problems["M_Lie vec(D)"] = {"row": lie_flattening_matrix(d).rows[r],
                                        "value": str(products[r].as_expr())[:2000]}
        if operator_trace(annihilator.matrix):
            problems["trace"] = str(operator_trace(annihilator.matrix).as_expr())
        if not any(vector):
            problems["D"] = "the constructed operator is zero"
        if problems:
            lemma = refuted(method="symbolic", counterexample=problems, summary=(
                f"Lemma 16's operator D (case {annihilator.case}) fails with generic weights: "
                + ", ".join(problems)), evidence={"ring": ring_name})
        else:
            lemma = proved(checked=len(products), evidence={
                "ring": ring_name, "lemma16_case": annihilator.case,
                "kernel_vector_terms": sum(len(v) for v in vector),
                "rows_expanded": len(products), "D(f_T)_terms_after": 0}, summary=(
                f"Lemma 16 (case {annihilator.case}) gives a nonzero trace-zero D with entries in "
                f"{ring_name}; D(f_T) = 0 and M_Lie(mu(W)) vec(D) = 0 expand to 0, so M_Lie has "
                f"rank < {d * d - 1} over the function field and all maximal minors vanish on mu"))
        return combine({"lemma16": lemma, "nontrivial": self._nontrivial(d, context),
                        **self._example19(coords, params["a"], context)})

    def check_exact(self, params, context, prime: int = DEFAULT_PRIME):
        coords = slice_coordinates(params)
        d, a = coords.d, params["a"]
        lm = lie_flattening_matrix(d)
        points = context.samples or DEFAULT_EXACT_POINTS
        weights, y = sample_slice_mod_p(coords, a, points, context.sampler, prime)
        rank = rank_bound_exact(lm.evaluate_mod_p(y, prime), d * d - 2, prime=prime,
                                degree=(d * d - 1) * weight_degree(d, a), what="M_Lie(f_T)",
                                point=weights.point)
        weights, y = _with_case2_point(coords, weights, y, context, prime)
        lemma = _lemma16_mod_p(coords, weights, lm.evaluate_mod_p(y, prime), points,
                               2 * weight_degree(d, a) + 1, prime)
        return combine({"rank": rank, "lemma16": lemma, "nontrivial": self._nontrivial(d, context),
                        **self._example19(coords, a, context)})

    def check_numeric(self, params, context):
        coords = slice_coordinates(params)
        d = coords.d
        lm = lie_flattening_matrix(d)
        backend, w, y, generic = numeric_points(coords, params["a"], context)
        rank = rank_bound_numeric(lm.evaluate_float(y, backend), lm.evaluate_float(generic, backend),
                                  d * d - 2, backend=backend, what="M_Lie(f_T)", point=w.point)
        return combine({"rank": rank, "nontrivial": self._nontrivial(d, context)})

    def show(self, params, fmt="text", limit=None):
        coords = slice_coordinates(params)
        lm = lie_flattening_matrix(coords.d)
        if limit is None:
            names, legend = display_names(coords, fmt)
            return format_matrix(lm, names, fmt, legend)
        members = minor_invariants(lm, coords.d ** 2 - 1, coords, limit,
                                   "lie-flattening maximal minor", "ADM Prop 17(2)")
        return render_invariants(members, coords, fmt)


def _monomial(xs, K):
    out = xs[0] ** 0
    for k in K:
        out = out * xs[k - 1]
    return out


def _with_case2_point(coords, weights, y, context, prime):
    """Append a point with A = m m^T (q = (m . x)^2, rank(A) = 1 <= a): on the variety, and
    Lemma 16's proof takes its case 2 there."""
    sampler = context.sampler.spawn(31)
    d = coords.d
    m = sampler.prime_field((d,), prime)
    A = np.outer(m, m) % prime
    V = sampler.prime_field((1, coords.dprime, d), prime)
    extra = WeightBatch(A[None], V, prime=prime)
    both = WeightBatch(np.concatenate([weights.A, extra.A]), np.concatenate([weights.V, V]),
                       prime=prime)
    return both, np.concatenate([y, slice_mod_p(coords, extra)])


def _lemma16_mod_p(coords, weights, matrices, uniform: int, degree: int, prime) -> Verdict:
    """Lemma 16's D built mod p at each point: nonzero, trace zero, M_Lie vec(D) = 0.

    The first ``uniform`` points are uniform random: they carry the Schwartz–Zippel bound
    of the identity M_Lie(mu(W)) vec(D(W)) = 0, of ``degree`` 2 w + 1 in the weights (an
    entry of M_Lie has degree w = 2 in (A, V), 3 in (Q, K, V), one of D degree w + 1).  The
    others are special points that exercise the proof's case 2."""
    cases = []
    for b in range(len(matrices)):
        linear = nmod_rows([weights.V[b][coords.row - 1]], prime)[0]
        if not any(linear):
            continue
        A = weights.A[b]
        annihilator = split_annihilator(linear, nmod_rows((A + A.T) % prime, prime))
        vector = np.array([int(x) for x in sl_coordinates(annihilator.matrix)], dtype=np.int64)
        image = [int(x) for x in (flint.nmod_mat(nmod_rows(matrices[b], prime), prime) *
                                  flint.nmod_mat([[int(v)] for v in vector], prime)).entries()]
        trace = int(operator_trace(annihilator.matrix))
        if any(image) or trace or not vector.any():
            return refuted(method="exact", summary=(
                f"Lemma 16's operator D (case {annihilator.case}) is not a nonzero trace-zero "
                f"kernel vector of M_Lie at a point over F_{prime}"),
                counterexample={"field": f"F_{prime}", "weights": weights.point(b),
                                "D": [[int(x) for x in row] for row in annihilator.matrix],
                                "M_Lie_times_D": image, "trace": trace})
        cases.append(annihilator.case)
    return verified(checked=len(cases), degree=degree, prime=prime,
                    points=min(uniform, len(cases)), evidence={"lemma16_cases": cases}, summary=(
                        f"Lemma 16's D is a nonzero trace-zero kernel vector at {len(cases)} points "
                        f"(cases {sorted(set(cases))})"))


# ==========================================================================================
def submatrix_size(params) -> int:
    """2a + 2: the size of the minors of N that Prop 17(1) makes vanish (when <= d)."""
    return 2 * params["a"] + 2


def _identity_mod_p(coords, weights, matrices, prime) -> list[int]:
    """The points (indices) where 3 N != diag(v)A + diag(v)A^T + diag(A) v^T over F_p."""
    bad = []
    for b in range(len(matrices)):
        A = weights.A[b].tolist()
        v = weights.V[b][coords.row - 1].tolist()
        terms = submatrix_decomposition(A, v)
        d = len(v)
        if any((3 * int(matrices[b][k][kp]) - sum(t[k][kp] for t in terms)) % prime
               for k in range(d) for kp in range(d)):
            bad.append(b)
    return bad


def _minor_substitution_cost(params) -> float:
    """Estimated terms of expanding every (2a+2)-minor of N with mu(W) substituted; inf
    when there are no minors.  One y has at most 6 terms in (A, V), 6a in (Q, K, V)."""
    d, a, size = params["d"], params["a"], submatrix_size(params)
    if size > d:
        return float("inf")
    per_coordinate = 6 * (a if a < d else 1)
    return comb(d, size) ** 2 * factorial(size) * per_coordinate ** size


class SingleColumnRankClaim(SingleColumnClaim):
    """ADM Prop 17(1), Example 21: rank N(j,j,j) <= 2 rank(A) + 1, from the decomposition
    3 N = diag(v_i) A + diag(v_i) A^T + diag(A) v_i^T of its proof; so when 2a + 1 < d the
    (2a+2)-minors of N lie in J (for d = 4, a = 1 the single one is Example 21's quartic
    q(y) = det N).

    * symbolic: the decomposition is expanded in QQ[A, V] (QQ[Q, K, V] if a < d) --
      ``proved``; with it, subadditivity of rank gives the bound.  The minors themselves are
      expanded with mu(W) substituted when that is small (SYMBOLIC_MINOR_BUDGET; e.g.
      Example 21's det N), else the bound is checked by exact ranks at random points.
    * exact: the decomposition and rank N <= 2a + 1 at N random points over F_p.
    * numeric: relative residual of the decomposition and sigma_{2a+2}/sigma_1 in float64.

    Nontriviality: N has rank d at a generic cubic, so its (2a+2)-minors are real
    constraints.  When 2a + 1 >= d the bound is vacuous; only the decomposition is checked.
    """

    id = "single-column-rank"
    source = "ADM Prop 17(1), Ex 21"
    statement = ("rank N(j,j,j) <= 2 rank(A) + 1 (3N = diag(v)A + diag(v)A^T + diag(A) v^T), "
                 "so its (2a+2)-minors lie in J when 2a + 1 < d.")
    params = (D, T, A_RANK, DPRIME, ROW, COL, MATRIX)
    builds_lie_flattening = False
    examples = ({"d": 4, "a": 1},                            # ADM Example 21's det N
                {"d": 3},                                    # 2a + 1 >= d: vacuous bound
                {"d": 5, "a": 1},
                {"d": 8, "a": 3, "method": "exact"})

    def hypothesis_violation(self, params):
        if params["d"] < 3:
            return f"ADM Prop 17 assumes d >= 3; got d={params['d']}"
        return None

    def members(self, params, coords, limit=None) -> list[Invariant]:
        size = submatrix_size(params)
        if size > params["d"]:
            return []
        return minor_invariants(coefficient_submatrix(params["d"]), size, coords, limit,
                                "single-column rank", "ADM Prop 17(1)")

    def _vanishing_exact(self, params, coords, context, prime=DEFAULT_PRIME) -> Verdict:
        """rank N <= 2a + 1 at random points over F_p: the (2a+2)-minors vanish there."""
        d, a, size = params["d"], params["a"], submatrix_size(params)
        points = context.samples or DEFAULT_EXACT_POINTS
        weights, y = sample_slice_mod_p(coords, a, points, context.sampler, prime)
        return rank_bound_exact(coefficient_submatrix(d).evaluate_mod_p(y, prime), size - 1,
                                prime=prime, degree=size * weight_degree(d, a), what="N(j,j,j)",
                                point=weights.point)

    def _nontrivial(self, params, context, prime=DEFAULT_PRIME) -> Verdict:
        d = params["d"]
        generic = coefficient_submatrix(d).evaluate_mod_p(
            generic_cubics_mod_p(context, d, 1, prime), prime)[0]
        return generic_rank_witness(generic, submatrix_size(params), prime=prime,
                                    what="N(j,j,j)")

    def _vacuous(self, params) -> str:
        return (f"; 2a + 1 = {2 * params['a'] + 1} >= d = {params['d']}: the rank bound is "
                f"vacuous and N has no vanishing minors" if submatrix_size(params) > params["d"]
                else "")

    def check_symbolic(self, params, context):
        coords = slice_coordinates(params)
        d, a = coords.d, params["a"]
        R, A, V, y = ring_slice(coords, a)
        matrix = coefficient_submatrix(d).evaluate_ring(y)
        terms = submatrix_decomposition(A, V[coords.row - 1])
        residuals = [(k, kp, 3 * matrix[k][kp] - sum((t[k][kp] for t in terms), R.zero))
                     for k in range(d) for kp in range(d)]
        nonzero = [(k, kp, r) for k, kp, r in residuals if r]
        ring_name = "QQ[Q, K, V]" if a < d else "QQ[A, V]"
        if nonzero:
            k, kp, r = nonzero[0]
            identity = refuted(method="symbolic", summary=(
                f"Prop 17(1)'s decomposition fails at entry ({k + 1},{kp + 1}) of 3N"),
                counterexample={"entry": [k + 1, kp + 1], "residual": str(r.as_expr())[:2000],
                                "ring": ring_name})
        else:
            identity = proved(checked=d * d, evidence={"ring": ring_name, "entries": d * d},
                              summary=(f"3 N(j,j,j) = diag(v)A + diag(v)A^T + diag(A) v^T expands "
                                       f"to an identity in {ring_name}, so rank N <= 2 rank(A) + 1"
                                       + self._vacuous(params)))
        parts = {"prop17-identity": identity}
        if submatrix_size(params) <= d:
            if _minor_substitution_cost(params) <= SYMBOLIC_MINOR_BUDGET:
                parts["vanishing"] = prove_family(self.members(params, coords), coords, a, context)
            else:
                parts["vanishing"] = self._vanishing_exact(params, coords, context)
            parts["nontrivial"] = self._nontrivial(params, context)
        return combine(parts)

    def check_exact(self, params, context, prime: int = DEFAULT_PRIME):
        coords = slice_coordinates(params)
        d, a = coords.d, params["a"]
        points = context.samples or DEFAULT_EXACT_POINTS
        weights, y = sample_slice_mod_p(coords, a, points, context.sampler.spawn(37), prime)
        matrices = coefficient_submatrix(d).evaluate_mod_p(y, prime)
        bad = _identity_mod_p(coords, weights, matrices, prime)
        if bad:
            identity = refuted(method="exact", summary=(
                "Prop 17(1)'s decomposition of 3N fails at a point over F_p"),
                counterexample={"field": f"F_{prime}", "weights": weights.point(bad[0])})
        else:
            ranks = [rank_mod_p(m, prime) for m in matrices]
            identity = verified(checked=points, degree=weight_degree(d, a),
                                prime=prime, points=points, evidence={"ranks_mod_p": ranks},
                                summary=(f"3N = diag(v)A + diag(v)A^T + diag(A) v^T at {points} "
                                         f"random points over F_p" + self._vacuous(params)))
        parts = {"prop17-identity": identity}
        if submatrix_size(params) <= d:
            parts["vanishing"] = self._vanishing_exact(params, coords, context, prime)
            parts["nontrivial"] = self._nontrivial(params, context, prime)
        return combine(parts)

    def check_numeric(self, params, context):
        coords = slice_coordinates(params)
        d, size = coords.d, submatrix_size(params)
        N = coefficient_submatrix(d)
        backend, w, y, generic = numeric_points(coords, params["a"], context)
        matrices = backend.to_numpy(N.evaluate_float(y, backend))
        terms = np.stack([np.array(submatrix_decomposition(w.A[b], w.V[b][coords.row - 1]))
                          for b in range(len(matrices))], axis=0)       # [B, 3, d, d]
        scale = np.abs(terms).sum(axis=1) + 3 * np.abs(matrices)
        residual = np.abs(3 * matrices - terms.sum(axis=1)) / np.maximum(scale, np.finfo(float).tiny)
        worst = float(residual.max())
        if worst > NUMERIC_TOLERANCE:
            b = int(np.argmax(residual.max(axis=(1, 2))))
            identity = refuted(method="numeric", max_residual=worst, backend=backend.name,
                               device=backend.device, summary=(
                                   f"Prop 17(1)'s decomposition of 3N has relative residual "
                                   f"{worst:.3g} > {NUMERIC_TOLERANCE:g}"),
                               counterexample={"field": "float64", "weights": w.point(b)})
        else:
            identity = consistent(checked=len(matrices), max_residual=worst,
                                  tolerance=NUMERIC_TOLERANCE, backend=backend.name,
                                  device=backend.device, summary=(
                                      f"3N = diag(v)A + diag(v)A^T + diag(A) v^T to relative "
                                      f"{worst:.2e} at {len(matrices)} float64 points"
                                      + self._vacuous(params)))
        parts = {"prop17-identity": identity}
        if size <= d:
            parts["vanishing"] = rank_bound_numeric(
                N.evaluate_float(y, backend), N.evaluate_float(generic, backend), size - 1,
                backend=backend, what="N(j,j,j)", point=w.point)
            parts["nontrivial"] = self._nontrivial(params, context)
        return combine(parts)

    def show(self, params, fmt="text", limit=None):
        coords = slice_coordinates(params)
        if params["matrix"]:
            names, legend = display_names(coords, fmt)
            return format_matrix(coefficient_submatrix(coords.d), names, fmt, legend)
        members = self.members(params, coords, limit)
        if not members:
            raise BadInput(f"N(j,j,j) has no vanishing minors: 2a + 1 = {2 * params['a'] + 1} "
                           f">= d = {params['d']} (ADM Prop 17(1) needs 2 rank(A) + 1 < d)")
        return render_invariants(members, coords, fmt)


CLAIMS = [LieFlatteningClaim(), SingleColumnRankClaim()]

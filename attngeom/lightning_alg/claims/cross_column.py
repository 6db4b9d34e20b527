"""What the cross-column claims share (ADM §5, Appendix A): the base class of the families, the
all-minors base of ``low-rank`` and ``cross-row``, and their helpers.  The claims are
``cross-cubic`` (ADM Prop 24, :mod:`.cross_cubic`), ``low-rank`` (ADM Thm 25, Example 26,
:mod:`.low_rank`), ``syzygy`` (ADM Thm 27, Example 28, :mod:`.syzygy`),
``cross-row`` (ADM Prop 44, :mod:`.cross_row`) and ``flattening-entries`` (the entry formula
of Thm 27's proof, :mod:`.flattening_entries`).

Every family claim combines

* a check of the whole family through the theorem's own mechanism: for the rank bounds
  (Prop 24, Thm 25, Prop 44) the factorization of the matrix on the variety, expanded
  exactly (``symbolic``), its rank over F_p at random weights (``exact``), or its singular
  values in float64 (``numeric``); for Thm 27 the factorization F(mu(W)) = Phi(v) A and
  E c = 0 over Q;
* the members as built, evaluated as determinants by
  :func:`~attngeom.lightning_alg.invariants.structured.check_vanishing` (all of them, or a seeded
  sample when there are too many) and shown nonzero by
  :func:`~attngeom.lightning_alg.invariants.structured.check_nontrivial`;
* the count formula against the generated list, and the paper's examples as printed.

A rank <= r at a point is the vanishing of every (r+1)-minor there, so the rank checks
cover every member; the Schwartz–Zippel bound needs no union over the minors (if some
minor g is a nonzero polynomial, rank <= r at N random points needs g to vanish at all N).
"""

from __future__ import annotations

import json
from math import factorial

import numpy as np
from flint import fmpq, fmpq_mat
from sympy import QQ

from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.polyeval import compile_polynomials
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, combine, consistent, proved, refuted
from attngeom.lightning_alg.claims.base import (
    LIGHTNING_PARAMS, MATRIX, FamilyClaim, coordinates_of, refuse_large_symbolic,
    render_invariants)
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.family_check import DEFAULT_EXACT_POINTS, DEFAULT_NUMERIC_POINTS
from attngeom.lightning_alg.invariant import Invariant
from attngeom.lightning_alg.invariants.coordinate_matrices import (
    CoordinateMatrix, cross_column_flattening, minor_index_sets,
    nonsingular_submatrix_mod_p, random_subset, sampled_indices, take)
from attngeom.lightning_alg.invariants.determinantal import (
    RANK_TOLERANCE, rank_bound_exact, ranks_mod_p, singular_value_ratios)
from attngeom.lightning_alg.invariants.structured import (
    ModPArithmetic, Point, check_nontrivial, check_vanishing, padded)
from attngeom.lightning_alg.parametrization import (
    Parametrization, sample_weights_float, sample_weights_mod_p, symbolic_weights,
    uses_query_key, weight_degree)


MEMBER_ENTRY_BUDGET = 4_000_000
#: --method symbolic evaluates members at generic weights while their estimated cost,
#: terms x r! x r x (weight terms per entry)^r summed over the members, stays below this
#: (about 1-6 microseconds each, a few seconds in all); beyond it a seeded sample is
#: evaluated and the factorization carries the proof.
SYMBOLIC_BUDGET = 1_000_000
#: ``show`` without --limit refuses families whose expansion has more terms than this
#: (printing costs about 0.5 ms per term: some 10 s).
SHOW_TERM_LIMIT = 20_000
#: Random points of F_p^N (off the variety) used to count distinct members.
DISTINCT_POINTS = 2
#: Longest generated list enumerated to check a count formula (a few seconds).
MAX_ENUMERATED = 2_000_000
#: Most maximal minors of F_{n,j} (C(C(d+1,2), d)) for which Thm 27's kernel is computed
#: (d = 6 has 54,264; d = 7 has 1,184,040).
MAX_MAXIMAL_MINORS = 100_000

# Independent random streams of one check (attngeom.kernels.sampling.Sampler.spawn keys).
_RANK_STREAM, _CONTROL_STREAM, _SAMPLE_STREAM, _DISTINCT_STREAM = 101, 102, 103, 104


def half_of(n: int, q: int):
    return QQ(n, q)


def context_hypothesis(params, source: str) -> str | None:
    if params["t"] < 2:
        return f"{source} needs a context column n != j, so t >= 2; got t={params['t']}"
    return None


def minor_entry_terms(coords: CoordinateSystem, matrix_index: np.ndarray, a: int) -> int:
    """The most terms a coordinate of the matrix has in the weights (mu(W), ADM Prop 6)."""
    orderings = max(len(Parametrization.orderings(coords.labels[k])) for k in np.unique(matrix_index))
    return orderings * (a if uses_query_key(coords.d, a) else 1)


def generic_weights(coords: CoordinateSystem, a: int):
    """(ring, mu(W) values, A, V, Q, K): the symbolic parametrization and its weights
    (Q, K are None when a >= d; generator names as in parametrization.symbolic_weights)."""
    ring, values = Parametrization(coords).symbolic(a)
    _, A_, V = symbolic_weights(coords.d, coords.dprime, a)
    Q = K = None
    if uses_query_key(coords.d, a):
        gens = dict(zip((str(s) for s in ring.symbols), ring.gens))
        Q = [[gens[f"q_{r}_{l}"] for l in range(1, coords.d + 1)] for r in range(1, a + 1)]
        K = [[gens[f"k_{r}_{m}"] for m in range(1, coords.d + 1)] for r in range(1, a + 1)]
    return ring, values, A_, V, Q, K


def ring_matmul(left, right, zero):
    return [[sum((l_row[m] * right[m][c] for m in range(len(right))), zero)
             for c in range(len(right[0]))] for l_row in left]


def matrix_identity_verdict(what: str, lhs, rhs, row_names, col_names, ring_name: str) -> Verdict | None:
    """None if lhs == rhs entrywise (ring elements), else a refutation naming the entry; sides
    of different shapes are a refutation too (a row or column missing from one side would
    otherwise go unchecked)."""
    shapes = [(len(side), tuple(len(row) for row in side)) for side in (lhs, rhs)]
    if shapes[0] != shapes[1]:
        return refuted(method="symbolic", summary=(
            f"{what}: the matrix has {shapes[0][0]} rows of lengths {sorted(set(shapes[0][1]))}, "
            f"the formula {shapes[1][0]} rows of lengths {sorted(set(shapes[1][1]))}"),
            counterexample={"field": "Q", "rows": [shapes[0][0], shapes[1][0]]})
    for r, (left_row, right_row) in enumerate(zip(lhs, rhs)):
        for c, (left, right) in enumerate(zip(left_row, right_row)):
            if left != right:
                return refuted(method="symbolic", summary=(
                    f"{what} fails at entry [{row_names[r]}, {col_names[c]}] in {ring_name}"),
                    counterexample={"field": "Q", "entry": [str(row_names[r]), str(col_names[c])],
                                    "mu(W)": str(left.as_expr())[:2000],
                                    "formula": str(right.as_expr())[:2000]})
    return None


def weights_ring_name(coords: CoordinateSystem, a: int) -> str:
    return "QQ[Q, K, V]" if uses_query_key(coords.d, a) else "QQ[A, V]"


def flattening_of(params, coords: CoordinateSystem) -> CoordinateMatrix:
    """F_{n,j} of the claim's output row, target column j and context column n (ADM Thm 25)."""
    return cross_column_flattening(coords, params["row"], params["col"], params["context"])


def coordinate_matrix_identity(what: str, matrix: CoordinateMatrix, values, rhs,
                     ring_name: str) -> Verdict | None:
    """:func:`matrix_identity_verdict` of a coordinate matrix at mu(W) (``values``) and ``rhs``."""
    return matrix_identity_verdict(what, matrix.evaluate_ring(values), rhs, matrix.row_names,
                     matrix.col_names, ring_name)


class CrossColumnFamilyClaim(FamilyClaim):
    """Shared machinery of the families of minors of ADM §5 and Appendix A.

    Subclasses give the generated index list (``index_sets``, ``count``, ``random_index``),
    the family for some index sets (``family``), the matrices ``show --matrix`` prints,
    the whole-family check (``criterion``; for the rank-bound families ``rank_what``, the
    matrices at points and ``factorization_proof``) and their count and example checks.
    """

    params = LIGHTNING_PARAMS + (MATRIX,)
    methods = ("symbolic", "exact", "numeric")

    # -- subclass interface ---------------------------------------------------------------
    def index_sets(self, params):
        raise NotImplementedError

    def count(self, params) -> int:
        raise NotImplementedError

    def random_index(self, params, sampler) -> tuple:
        raise NotImplementedError

    def family(self, params, coords, indices):
        raise NotImplementedError

    def shown_matrices(self, params, coords) -> list[tuple[str, CoordinateMatrix]]:
        raise NotImplementedError

    def member_cost(self, params, coords) -> int:
        """The SYMBOLIC_BUDGET cost of evaluating one member at generic weights."""
        raise NotImplementedError

    def member_terms(self, params) -> int:
        """An upper bound on the terms of one member, expanded in y."""
        raise NotImplementedError

    def member_entries(self, params) -> int:
        """Matrix entries gathered to evaluate one member: terms x r^2."""
        raise NotImplementedError

    def criterion(self, method: str, params, coords, context) -> Verdict:
        """The whole-family check; for the rank-bound families the rank over F_p (exact),
        the singular values (numeric) or the factorization of the proof (symbolic)."""
        if method == "exact":
            return self.rank_exact(params, coords, context, self.rank_what(params))
        if method == "numeric":
            return self.rank_numeric(params, coords, context, self.rank_what(params))
        return self.factorization_proof(params, coords)

    def extra_checks(self, method: str, params, coords, context) -> dict[str, Verdict]:
        """Checks beyond the criterion, the members and nontriviality, by part name."""
        return {}

    # -- checking -------------------------------------------------------------------------
    def member_sample(self, params, coords, context):
        """(family, sampled?): every member while MEMBER_ENTRY_BUDGET allows, else a seeded
        random sample of that size."""
        limit = max(1, MEMBER_ENTRY_BUDGET // self.member_entries(params))
        sampler = context.sampler.spawn(_SAMPLE_STREAM)
        indices, sampled = sampled_indices(lambda: self.index_sets(params), self.count(params),
                                           limit, lambda: self.random_index(params, sampler))
        return self.family(params, coords, indices), sampled

    def check_members(self, method: str, params, coords, family, sampled, context
                      ) -> dict[str, Verdict]:
        """The members as built vanish on mu(W) (the part ``members``).  Symbolically only
        as many as SYMBOLIC_BUDGET allows: beyond it, a seeded sample of ``family`` is
        expanded (none when even one member is too costly) and *every* member as built is
        also evaluated exactly over F_p, so the part is ``verified``, not ``proved``: the
        factorization proves the minors of the matrix, and a member built wrong is no
        minor (issue 48: "proved covers the objects as built")."""
        total = self.count(params)
        if not sampled and family.size != total:
            return {"members": refuted(method="exact", checked=1, summary=(
                f"{family.size} members built, but the family's count gives {total}"),
                counterexample={"members_built": family.size, "count": total})}
        if method == "symbolic":
            limit = SYMBOLIC_BUDGET // max(1, self.member_cost(params, coords))
            if limit < family.size:
                every = check_vanishing(family, coords, params["a"], "exact", context)
                parts = {"every-member-exact": every}
                if limit > 0:
                    sampler = context.sampler.spawn(_SAMPLE_STREAM + 1)
                    sample = family.subfamily(random_subset(sampler, family.size, limit))
                    parts = {"symbolic-sample": check_vanishing(sample, coords, params["a"],
                                                                "symbolic", context), **parts}
                verdict = combine(parts)
                which = (f"a seeded sample of {family.size} of the {total} members" if sampled
                         else f"all {family.size} members")
                verdict.summary = (f"{which}, as built, evaluated exactly over F_p (a symbolic "
                                   f"expansion of {max(limit, 0)} of them within the budget): "
                                   + verdict.summary)
                verdict.evidence.update(members_checked=family.size, members_total=total,
                                        sampled=sampled, symbolically_expanded=max(limit, 0))
                return {"members": verdict}
        verdict = check_vanishing(family, coords, params["a"], method, context)
        which = (f"a seeded sample of {family.size} of the {total} members" if sampled
                 else f"all {family.size} members")
        verdict.summary = f"{which}, as built: {verdict.summary}"
        verdict.evidence.update(members_checked=family.size, members_total=total, sampled=sampled)
        return {"members": verdict}

    def check(self, method, params, context):
        if params.get("matrix"):
            raise BadInput("--matrix is an option of `attngeom show`, not of `verify`")
        coords = coordinates_of(params)
        refuse_large_symbolic(method, coords)
        family, sampled = self.member_sample(params, coords, context)
        members = self.check_members(method, params, coords, family, sampled, context)
        verdict = combine({"criterion": self.criterion(method, params, coords, context),
                           **members, "nontrivial": check_nontrivial(family, coords, context),
                           **self.extra_checks(method, params, coords, context)})
        if not members:
            verdict.evidence["note"] = (
                f"no member expanded one by one (one would cost about "
                f"{self.member_cost(params, coords):,} term products); the factorization "
                f"proves every minor")
        return verdict

    # -- the rank checks shared by the rank-bound families ----------------------------------
    def rank_bound(self, params) -> int:
        raise NotImplementedError

    def rank_what(self, params) -> str:
        """The matrix whose rank is bounded, as the summaries name it."""
        raise NotImplementedError

    def factorization_proof(self, params, coords) -> Verdict:
        """The symbolic whole-family check: the proof's factorization, expanded."""
        raise NotImplementedError

    def matrices_mod_p(self, params, coords, y, sampler, prime):
        """The matrix whose rank is bounded, at B points y mod p: shape=[B, rows, cols]."""
        raise NotImplementedError

    def matrices_float(self, params, coords, y, sampler, backend):
        """The same matrix at B float points (arrays of ``backend``)."""
        raise NotImplementedError

    def random_degree(self, params) -> int:
        """Degree of an entry of that matrix in the random variables (weights, lambda)."""
        return weight_degree(params["d"], params["a"])

    def rank_exact(self, params, coords, context, what: str) -> Verdict:
        """rank <= bound at random weights over F_p, with the rank off the variety as control."""
        prime = DEFAULT_PRIME
        bound = self.rank_bound(params)
        points = context.samples or DEFAULT_EXACT_POINTS
        sampler = context.sampler.spawn(_RANK_STREAM)
        weights = sample_weights_mod_p(sampler, points, coords.d, coords.dprime, params["a"], prime)
        matrices = self.matrices_mod_p(params, coords, Parametrization(coords).evaluate_mod_p(weights),
                                       sampler, prime)
        verdict = rank_bound_exact(matrices, bound, prime=prime, degree=(bound + 1) * self.random_degree(params),
                                   what=what, point=weights.point)
        control_sampler = context.sampler.spawn(_CONTROL_STREAM)
        control = control_sampler.prime_field((1, len(coords)), prime)
        verdict.evidence["rank_at_a_random_point_off_the_variety"] = ranks_mod_p(
            self.matrices_mod_p(params, coords, control, control_sampler, prime), prime)[0]
        verdict.evidence["bound_attained"] = max(verdict.evidence["ranks_mod_p"]) == bound
        if verdict.counterexample:
            b = verdict.evidence["ranks_mod_p"].index(verdict.counterexample["rank"])
            rows, cols = nonsingular_submatrix_mod_p(matrices[b], bound + 1, prime)
            verdict.counterexample["nonzero_minor"] = {"rows": list(rows), "cols": list(cols)}
        return verdict

    def rank_numeric(self, params, coords, context, what: str) -> Verdict:
        """sigma_{bound+1}/sigma_1 <= RANK_TOLERANCE at float points on the variety, with the
        same ratio at random points off the variety as control."""
        backend = get_backend(context.backend, context.device)
        bound = self.rank_bound(params)
        points = context.samples or DEFAULT_NUMERIC_POINTS
        sampler = context.sampler.spawn(_RANK_STREAM)
        w = sample_weights_float(sampler, points, coords.d, coords.dprime, params["a"])
        y = Parametrization(coords).evaluate_float(backend.asarray(w.A), backend.asarray(w.V), backend)
        ratios = singular_value_ratios(self.matrices_float(params, coords, y, sampler, backend), backend)
        control_y = backend.asarray(sampler.floats((points, len(coords))))
        control = singular_value_ratios(
            self.matrices_float(params, coords, control_y, sampler, backend), backend)[:, bound]
        residuals = ratios[:, bound]
        worst = float(residuals.max())
        evidence = {"points": points, "rank_bound": bound,
                    "control_min_relative": float(control.min()),
                    "bound_attained_min_relative": float(ratios[:, bound - 1].min()),
                    "tolerance_reason": "float64 rounding bound, see "
                                        "invariants.determinantal.RANK_TOLERANCE"}
        if worst > RANK_TOLERANCE:
            b = int(np.argmax(residuals))
            return refuted(method="numeric", checked=points, max_residual=worst,
                           backend=backend.name, device=backend.device, evidence=evidence,
                           summary=(f"{what}: sigma_{bound + 1}/sigma_1 = {worst:.3g} > "
                                    f"{RANK_TOLERANCE:g}, so rank > {bound} at a float point"),
                           counterexample={"field": "float64", "weights": w.point(b),
                                           "relative_singular_value": worst})
        return consistent(checked=points, max_residual=worst, tolerance=RANK_TOLERANCE,
                          backend=backend.name, device=backend.device, evidence=evidence,
                          summary=(f"{what}: sigma_{bound + 1}/sigma_1 <= {worst:.2e} at {points} "
                                   f"float64 points (sigma_{bound}/sigma_1 >= "
                                   f"{evidence['bound_attained_min_relative']:.2e}; off the variety >= "
                                   f"{evidence['control_min_relative']:.2e})"))

    # -- show -----------------------------------------------------------------------------
    def members(self, params, coords, limit=None):
        if limit is None and self.count(params) * self.member_terms(params) > SHOW_TERM_LIMIT:
            raise BadInput(f"{self.id} has {self.count(params):,} members of up to "
                           f"{self.member_terms(params):,} terms; pass --limit N")
        family = self.family(params, coords, take(self.index_sets(params), limit))
        return [Invariant(poly, family.name, self.source, family.describe(m))
                for m, poly in enumerate(family.expand(coords))]

    def member_family(self, params, coords, max_degree: int):
        """Every member, unexpanded, for ``attngeom ideal``'s attribution (which expands them
        over F_p, under its own budget rather than ``show``'s term limit); None when the
        members lie above the table."""
        family = self.family(params, coords, self.index_sets(params))
        return family if family.degree <= max_degree else None

    def show(self, params, fmt="text", limit=None):
        coords = coordinates_of(params)
        if params.get("matrix"):
            return render_matrices(self.shown_matrices(params, coords), fmt)
        return render_invariants(self.members(params, coords, limit), coords, fmt)


def render_matrices(named: list[tuple[str, CoordinateMatrix]], fmt: str) -> str:
    """Several named matrices: text and latex with a heading each, m2 one per line, json a list."""
    if fmt == "json":
        return json.dumps([{"name": name, **json.loads(m.render("json"))} for name, m in named], indent=1)
    if fmt == "m2":
        return "\n".join(m.render("m2") for _, m in named)
    joiner = " = " if fmt == "latex" else " =\n"
    return "\n\n".join(name + joiner + m.render(fmt) for name, m in named)


def count_check(what: str, index_sets, printed: int, formula: str) -> dict[str, Verdict]:
    """The printed count formula against the length of the generated list (the part
    ``count``); no check when the formula promises more than MAX_ENUMERATED members."""
    if printed > MAX_ENUMERATED:
        return {}
    listed = sum(1 for _ in index_sets)
    evidence = {"listed": listed, "formula": formula, "formula_value": printed}
    if listed != printed:
        return {"count": refuted(method="exact", evidence=evidence, summary=(
            f"{what}: the list has {listed} members, the printed count {formula} gives {printed}"),
            counterexample={"listed": listed, "printed_count": printed})}
    return {"count": proved(checked=1, method="exact", evidence=evidence,
                            summary=f"{what}: {listed} members = {formula}")}


def distinct_members(family, coords: CoordinateSystem, context, prime: int = DEFAULT_PRIME) -> int:
    """How many members differ (up to sign) at DISTINCT_POINTS random points of F_p^N:
    a lower bound on the distinct polynomials, equal to it unless two different members
    agree at every point (probability <= deg/p per point)."""
    y = context.sampler.spawn(_DISTINCT_STREAM).prime_field((DISTINCT_POINTS, len(coords)), prime)
    point = Point(padded(y))
    values = np.concatenate([v for _, v in family.chunks(point, ModPArithmetic(prime))], axis=1).T
    canonical = {tuple(min(tuple(row), tuple((prime - row) % prime))) for row in values}
    return len(canonical)

# -- Thm 25 and Prop 44: all (r+1)-minors of one coordinate matrix of rank <= r ------------------

class MatrixMinorsClaim(CrossColumnFamilyClaim):
    """Shared part of the families of all size x size minors of one coordinate matrix whose
    rank is at most size - 1 on the variety (Thm 25's F_{n,j}, Prop 44's C_S): the index
    sets, the member sizes and the rank checks all follow from the matrix and the size.

    Subclasses give ``minors_shape`` (rows, columns, size), ``rank_matrix`` (the
    :class:`CoordinateMatrix`), its display name ``matrix_name``, ``entry_terms`` (the most
    terms of one entry in the weights), the family, the count and the factorization.
    """

    def minors_shape(self, params) -> tuple[int, int, int]:
        raise NotImplementedError

    def rank_matrix(self, params, coords) -> CoordinateMatrix:
        raise NotImplementedError

    def matrix_name(self, params) -> str:
        raise NotImplementedError

    def entry_terms(self, params, coords) -> int:
        raise NotImplementedError

    def index_sets(self, params):
        return minor_index_sets(*self.minors_shape(params))

    def random_index(self, params, sampler):
        rows, cols, size = self.minors_shape(params)
        return random_subset(sampler, rows, size), random_subset(sampler, cols, size)

    def shown_matrices(self, params, coords):
        return [(self.matrix_name(params), self.rank_matrix(params, coords))]

    def member_terms(self, params):
        return factorial(self.minors_shape(params)[2])

    def member_entries(self, params):
        return self.minors_shape(params)[2] ** 2

    def member_cost(self, params, coords):
        r = self.minors_shape(params)[2]
        return factorial(r) * r * self.entry_terms(params, coords) ** r

    def rank_bound(self, params):
        return self.minors_shape(params)[2] - 1

    def rank_what(self, params):
        return self.matrix_name(params)

    def matrices_mod_p(self, params, coords, y, sampler, prime):
        return self.rank_matrix(params, coords).at(y)

    def matrices_float(self, params, coords, y, sampler, backend):
        return self.rank_matrix(params, coords).at(y, backend)

def rank_over_q(polys, coords: CoordinateSystem) -> int:
    """Rank over Q of the coefficient matrix of polynomials in the coordinates (FLINT)."""
    compiled = compile_polynomials(polys, coords.symbol_index)
    rows = [[fmpq(0)] * compiled.n_polynomials for _ in range(compiled.n_monomials)]
    for m, j, c in compiled.entries:
        rows[m][j] += fmpq(c.numerator, c.denominator)
    return fmpq_mat(compiled.n_monomials, compiled.n_polynomials,
                    [x for row in rows for x in row]).rank()

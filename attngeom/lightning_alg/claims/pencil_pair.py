"""Claim ``pencil-pair``: the 2+2 minors of [M(u); M(w)], polarized in u and w (new;
construction and proof in :mod:`attngeom.lightning_alg.invariants.pencil_pair`)."""

from __future__ import annotations

from itertools import combinations

import flint

from attngeom.core.verdict import Verdict, proved
from attngeom.lightning_alg.claims.cross_column import (
    MEMBER_ENTRY_BUDGET, context_hypothesis, count_check, distinct_members)
from attngeom.lightning_alg.claims.cross_cubic import CrossCubicClaim
from attngeom.lightning_alg.invariants import pencil_pair
from attngeom.lightning_alg.invariants.coordinate_matrices import (
    MinorCombinationFamily, cross_column_slice, random_subset)
from attngeom.lightning_alg.invariants.cross_cubic import slice_formula, stacked_slices
from attngeom.lightning_alg.invariants.structured import check_vanishing
from attngeom.lightning_alg.parametrization import uses_query_key, weight_degree

#: Most members whose symbolic check (each member as built, with the proved slice formula
#: substituted, expanded over Z) runs: 1,686 at d = 4 (under a second), 54,625 at d = 5
#: (about 20 s; the whole verify 25 s on the 2-core machine).  Beyond it (d >= 6, 733,005
#: members) ``--method symbolic`` checks the members exactly over F_p instead, and the
#: verdict is ``verified``, not ``proved``.
SYMBOLIC_MEMBER_LIMIT = 60_000


class PencilPairClaim(CrossCubicClaim):
    """For d >= 4 the 2d x d matrix [M(u); M(w)] of two members of the pencil of slices has
    rank <= 3 on the variety (its rows lie in span(v, Au, Aw), by ADM Prop 24's slice
    formula M_b = 1/2 (v a_b^T + a_b v^T)), so for every 4-subset C of the columns, 2-subsets
    R1, R2 of the rows of each block and multisets S1, S2 of size 2, the coefficient
    Delta_{C; R1,S1; R2,S2} of u^{S1} w^{S2} in the minor (rows R1 of M(u), R2 of M(w),
    columns C) is a quartic in J; C(d,4) (P (P+1)/2 - d^2 C(d,2) - d^2 C(d-1,2)) members,
    P = C(d,2) C(d+1,2) (unordered pairs, without those that are 0 because every determinant
    repeats a row).

    Whole family: the slice formula expanded in QQ[weights] for every context (symbolic),
    rank [M(u); M(w)] <= 3 at random (W, u, w) over F_p (exact), sigma_4/sigma_1 (numeric);
    a rank <= 3 at random (u, w) is the vanishing of every minor's polynomial in (u, w), so
    of each of its coefficients.  Members: every Delta as a sum of 4 x 4 determinants.

    ``proved`` covers every member as built (what ``show`` prints and ``ideal`` attributes),
    not only the minors of [M(u); M(w)]: under ``--method symbolic`` each member, with its
    entries replaced by the proved slice formula 2 M_b = v a_b^T + a_b v^T (generic A and v),
    is expanded over Z and must be 0 (:func:`members_under_slice_formula`), so a member
    that lost a term is caught even though the minors it should be a coefficient of vanish.
    Above SYMBOLIC_MEMBER_LIMIT members they are checked over F_p and the verdict is
    ``verified``; ``--method exact`` samples members beyond MEMBER_ENTRY_BUDGET and says so.
    """

    id = "pencil-pair"
    source = pencil_pair.SOURCE
    statement = ("For d >= 4, [M(u); M(w)] has rank <= 3 on the variety, so the "
                 "coefficients of its 2+2 minors in (u, w) lie in J.")
    examples = ({"d": 4, "t": 2, "a": 4}, {"d": 4, "t": 2, "a": 2},
                {"d": 5, "t": 2, "a": 5, "method": "exact"})

    def hypothesis_violation(self, params):
        if params["d"] < 4:
            return f"the 4 x 4 minors of [M(u); M(w)] need d >= 4; got d={params['d']}"
        return context_hypothesis(params, "the slice formula (ADM Prop 24)")

    def index_sets(self, params):
        return pencil_pair.pair_indices(params["d"])

    def count(self, params):
        return pencil_pair.pair_count(params["d"])

    def random_index(self, params, sampler):
        d = params["d"]
        choices = pencil_pair.row_choices(d)
        first, second = sorted(int(x) for x in sampler.integers((2,), 0, len(choices) - 1))
        return (tuple(x + 1 for x in random_subset(sampler, d, 4)), choices[first], choices[second])

    def family(self, params, coords, indices):
        return pencil_pair.pair_minor_family(coords, params["row"], params["col"],
                                             params["context"], indices)

    def member_terms(self, params):
        return 4 * 24

    def member_entries(self, params):
        return 4 * 16

    def member_cost(self, params, coords):
        entry = 2 * (params["a"] if uses_query_key(params["d"], params["a"]) else 1)
        return 4 * 24 * 4 * entry ** 4

    def rank_bound(self, params):
        return 3

    def random_degree(self, params):
        return weight_degree(params["d"], params["a"]) + 1  # and degree 1 in (u, w)

    def _stacked(self, params, coords):
        return stacked_slices(coords, params["row"], params["col"], params["context"])

    def matrices_mod_p(self, params, coords, y, sampler, prime):
        u, w = (sampler.prime_field((y.shape[0], params["d"]), prime) for _ in range(2))
        return pencil_pair.pair_mod_p(self._stacked(params, coords).at(y), u, w, prime)

    def matrices_float(self, params, coords, y, sampler, backend):
        u, w = (backend.asarray(sampler.floats((y.shape[0], params["d"]))) for _ in range(2))
        return pencil_pair.pair_float(self._stacked(params, coords).at(y, backend), u, w, backend)

    def rank_what(self, params):
        return "[M(u); M(w)] (two members of the pencil of slices, stacked)"

    def check_members(self, method, params, coords, family, sampled, context):
        """Every member as built vanishes on mu(W) (the part ``members``).  Symbolically:
        :func:`members_under_slice_formula` on all members (the slice formula itself is the
        part ``criterion``); a member that does not vanish there is expanded at mu(W) by
        :func:`~attngeom.lightning_alg.invariants.structured.check_vanishing`, which refutes
        with a witness.  Above SYMBOLIC_MEMBER_LIMIT, or when only a sample was built, the
        members are checked over F_p (``verified``, the sample stated)."""
        if method != "symbolic":
            return super().check_members(method, params, coords, family, sampled, context)
        total = self.count(params)
        if sampled or family.size > SYMBOLIC_MEMBER_LIMIT:
            parts = super().check_members("exact", params, coords, family, sampled, context)
            parts["members"].evidence["note"] = (
                f"{total} members are above the symbolic limit of {SYMBOLIC_MEMBER_LIMIT:,}: "
                f"checked over F_p, so the verdict is verified, not proved")
            return parts
        suspects, ring = members_under_slice_formula(family, coords, params["row"], params["col"],
                                                     params["context"])
        for m in suspects:
            verdict = check_vanishing(family.restrict(m), coords, params["a"], "symbolic", context)
            if verdict.status.value == "refuted":
                verdict.summary = f"member {m + 1} of {total}, as built: {verdict.summary}"
                return {"members": verdict}
        verdict = proved(method="symbolic", checked=family.size, summary=(
            f"all {family.size} members, as built, vanish on mu(W): each expands to 0 in "
            f"{ring} with the slice formula 2 M_b = v a_b^T + a_b v^T (the part criterion) "
            f"substituted for its entries, so for every A, in particular A = K^T Q"
            + (f" ({len(suspects)} of them only at mu(W) itself, expanded there)" if suspects else "")),
            evidence={"ring": ring, "members_checked": family.size, "members_total": total,
                      "sampled": False, "expanded_at_mu": len(suspects)})
        return {"members": verdict}

    def factorization_proof(self, params, coords) -> Verdict:
        verdict = super().factorization_proof(params, coords)
        if verdict.status.value == "proved":
            verdict.summary = verdict.summary.replace(
                "so M(lambda) = 1/2 (v u^T + u v^T) with u = A lambda has rank <= 2",
                "so the rows of M(u) and M(w) lie in span(v, Au, Aw) and [M(u); M(w)] has "
                "rank <= 3")
        return verdict

    def extra_checks(self, method, params, coords, context):
        checks = count_check("2+2 minors of [M(u); M(w)]", self.index_sets(params),
                             self.count(params), "C(d,4) (P (P+1)/2 - d^2 C(d,2) - d^2 C(d-1,2)), P = C(d,2) C(d+1,2)")
        if checks and self.count(params) * self.member_entries(params) <= MEMBER_ENTRY_BUDGET // 8:
            family = self.family(params, coords, self.index_sets(params))
            checks["count"].evidence.update(distinct_polynomials=distinct_members(family, coords, context))
        return checks


def members_under_slice_formula(family: MinorCombinationFamily, coords, row: int, col: int,
                                context: int) -> tuple[list[int], str]:
    """The members (0-based) that are not 0 once each entry M_b[k1, k2] of the slices
    (ADM Prop 24's M_{n,j}^{(b)}, :func:`cross_column_slice`) is replaced by the slice formula
    times 2, v_{k1} A[k2, b] + A[k1, b] v_{k2}, with generic A (d x d) and v, expanded over Z
    (python-flint's fmpz_mpoly), and those that use a coordinate outside the slices; and the
    ring's name.  Each member is read from the family as built (its coordinate indices and
    coefficients) and its 4 x 4 determinants are taken by Laplace expansion along the first
    two rows, the 2 x 2 minors cached: a member is homogeneous of degree 4 in the entries,
    so the factor 2^4 does not change which members are 0."""
    d = coords.d
    names = tuple(f"a_{m}_{l}" for m in range(1, d + 1) for l in range(1, d + 1))
    ctx = flint.fmpz_mpoly_ctx.get(names + tuple(f"v_{k}" for k in range(1, d + 1)), "degrevlex")
    gens = ctx.gens()
    A = [list(gens[m * d:(m + 1) * d]) for m in range(d)]
    v = list(gens[d * d:])
    zero = ctx.constant(0)
    values = {len(coords): zero}                          # the padding coordinate
    for b in range(1, d + 1):
        entries = cross_column_slice(coords, row, col, context, b).index
        formula = slice_formula(A, v, b, 1)
        for k1 in range(d):
            for k2 in range(d):
                values[int(entries[k1, k2])] = formula[k1][k2]
    if family.degree != 4:
        raise AssertionError(f"pencil-pair members are 4 x 4 minors; got {family.degree}")
    minors2: dict[tuple, object] = {}

    def minor2(e11, e12, e21, e22):
        key = (e11, e12, e21, e22)
        if key not in minors2:
            minors2[key] = values[e11] * values[e22] - values[e12] * values[e21]
        return minors2[key]

    pairs = [(c, tuple(x for x in range(4) if x not in c)) for c in combinations(range(4), 2)]
    suspects = []
    for m in range(family.size):
        entries = family.entries[m].tolist()
        if any(e not in values for term in entries for line in term for e in line):
            suspects.append(m)
            continue
        total = zero
        for coefficient, E in zip(family.coefficients[m].tolist(), entries):
            if coefficient == 0:
                continue
            det = zero
            for (c1, c2), (r1, r2) in pairs:
                top = minor2(E[0][c1], E[0][c2], E[1][c1], E[1][c2])
                if top.is_zero():
                    continue
                term = top * minor2(E[2][r1], E[2][r2], E[3][r1], E[3][r2])
                det = det - term if (c1 + c2) % 2 == 0 else det + term
            total = total + coefficient * det
        if not total.is_zero():
            suspects.append(m)
    return suspects, f"Z[A, v] ({d * d + d} generators)"


CLAIMS = [PencilPairClaim()]

"""Claim ``pencil-pair``: the 2+2 minors of [M(u); M(w)], polarized in u and w (new;
construction and proof in :mod:`attngeom.lightning_alg.invariants.pencil_pair`)."""

from __future__ import annotations

from attngeom.core.verdict import Verdict
from attngeom.lightning_alg.claims.cross_column import (
    MEMBER_ENTRY_BUDGET, context_hypothesis, count_check, distinct_members)
from attngeom.lightning_alg.claims.cross_cubic import CrossCubicClaim
from attngeom.lightning_alg.invariants import pencil_pair
from attngeom.lightning_alg.invariants.coordinate_matrices import random_subset
from attngeom.lightning_alg.invariants.cross_cubic import stacked_slices
from attngeom.lightning_alg.parametrization import uses_query_key, weight_degree


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


CLAIMS = [PencilPairClaim()]

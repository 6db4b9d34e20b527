"""Claim ``low-rank``: ADM Thm 25 and Example 26, the (a+1)-minors of the flattening
F_{n,j} (see :mod:`.cross_column`)."""

from __future__ import annotations

from math import comb

from attngeom.core.verdict import Verdict, proved, refuted
from attngeom.lightning_alg.claims.cross_column import (
    MatrixMinorsClaim, context_hypothesis, flattening_of, half_of, ring_matmul, coordinate_matrix_identity,
    generic_weights, count_check)
from attngeom.lightning_alg.invariants import low_rank


class LowRankClaim(MatrixMinorsClaim):
    """ADM Thm 25: for a < d, rank F_{n,j} <= a on the variety, so its
    C(C(d+1,2), a+1) C(d, a+1) minors of size a+1 lie in J; ADM Example 26's 6 x 3 matrix
    F_{2,1} (d = 3) entry for entry.

    Whole family: the factorization F(mu(W)) = sum_r s^(r) w^(r)T of the proof (inner
    dimension a) expanded in QQ[Q, K, V] (symbolic), rank F <= a over F_p (exact),
    sigma_{a+1}/sigma_1 (numeric).  Members: every minor as a determinant.
    """

    id = "low-rank"
    source = "ADM Thm 25, Example 26"
    statement = ("For a < d the unbalanced flattening F_{n,j} has rank <= a on the variety, "
                 "so its C(C(d+1,2),a+1) C(d,a+1) (a+1)-minors lie in J.")
    examples = ({"d": 3, "t": 2, "a": 1},                        # ADM Example 26
                {"d": 3, "t": 2, "a": 2}, {"d": 4, "t": 3, "a": 2, "method": "exact"})

    def hypothesis_violation(self, params):
        if params["a"] >= params["d"]:
            return f"ADM Thm 25 needs a < d; got a={params['a']}, d={params['d']}"
        return context_hypothesis(params, "ADM Thm 25")

    def minors_shape(self, params):
        return comb(params["d"] + 1, 2), params["d"], params["a"] + 1

    def count(self, params):
        return low_rank.thm25_count(params["d"], params["a"])

    def rank_matrix(self, params, coords):
        return flattening_of(params, coords)

    def matrix_name(self, params):
        return f"F_{{{params['context']},{params['col']}}}"

    def entry_terms(self, params, coords):
        return 2 * params["a"]

    def family(self, params, coords, indices):
        return low_rank.low_rank_family(flattening_of(params, coords), params["row"],
                                        params["col"], params["context"], indices)

    def factorization_proof(self, params, coords):
        ring, values, _, V, Q, K = generic_weights(coords, params["a"])
        flattening = flattening_of(params, coords)
        s, w = low_rank.rank_one_factors(K, Q, V[params["row"] - 1], half_of(1, 2))
        failure = coordinate_matrix_identity("ADM Thm 25 proof: F(mu(W)) = sum_r s^(r) w^(r)T",
                                   flattening, values, ring_matmul(s, w, ring.zero), "QQ[Q, K, V]")
        return failure or proved(checked=flattening.index.size, summary=(
            f"F(mu(W)) = sum_{{r=1}}^{params['a']} s^(r) w^(r)T holds in QQ[Q, K, V] "
            f"(all {flattening.index.size} entries), so rank F <= a = {params['a']}"),
            evidence={"ring": "QQ[Q, K, V]", "inner_dimension": params["a"],
                      "entries": int(flattening.index.size)})

    def extra_checks(self, method, params, coords, context):
        d, a = params["d"], params["a"]
        checks = count_check("ADM Thm 25 count of (a+1)-minors", self.index_sets(params),
                             self.count(params), f"C(C({d}+1,2),{a}+1) C({d},{a}+1)")
        if all(params[k] == v for k, v in low_rank.EXAMPLE_26_PARAMS.items()):
            checks["example26"] = self.example_26(coords)
        return checks

    def example_26(self, coords) -> Verdict:
        """F_{2,1} (d = 3) against ADM Example 26's printed 6 x 3 matrix, entry for entry."""
        built = flattening_of(dict(low_rank.EXAMPLE_26_PARAMS, a=1), coords).labels()
        printed = low_rank.example_26_labels()
        for r, (built_row, printed_row) in enumerate(zip(built, printed)):
            for c, (ours, theirs) in enumerate(zip(built_row, printed_row)):
                if ours != theirs:
                    return refuted(method="exact", summary=(
                        f"ADM Example 26: entry ({r + 1},{c + 1}) of F_{{2,1}} is "
                        f"{ours.m2()}, printed {theirs.m2()}"),
                        counterexample={"entry": [r + 1, c + 1], "built": ours.m2(),
                                        "printed": theirs.m2()})
        return proved(checked=18, method="exact", summary=(
            "ADM Example 26: F_{2,1} equals the printed 6 x 3 matrix entry for entry"),
            evidence={"entries": 18})


CLAIMS = [LowRankClaim()]

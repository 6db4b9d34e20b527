"""Claim ``cone-flattening``: the flattening of the single-column tensor has rank <= 2a + 1
(new; construction and proof in :mod:`attngeom.lightning_alg.invariants.cone_flattening`)."""

from __future__ import annotations

from math import comb

from attngeom.core.verdict import proved
from attngeom.lightning_alg.claims.cross_column import (
    MatrixMinorsClaim, coordinate_matrix_identity, count_check, generic_weights, half_of,
    weights_ring_name)
from attngeom.lightning_alg.invariants import cone_flattening as cone


class ConeFlatteningClaim(MatrixMinorsClaim):
    """For d >= 2a + 2 the d x C(d+1,2) flattening Fl(T) of the single-column tensor
    (entry T_{k,j,l} = y_j(sorted(k,j,l))) has rank <= 2a + 1 on the variety, so its
    C(d,2a+2) C(C(d+1,2),2a+2) minors of size 2a + 2 lie in J.  At a = 1 (ADM Example 21)
    this says that f_T = l1 l2 l3 is a cone (depends on three linear forms).

    Whole family: T_{k,j,l}(mu(W)) = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj), S = (A + A^T)/2,
    expanded in QQ[weights] (symbolic; rows then lie in span(S, sym(k_r v^T), sym(q_r v^T))),
    rank Fl(T) <= 2a + 1 over F_p (exact), sigma_{2a+2}/sigma_1 (numeric).  Members: every
    minor as a determinant.
    """

    id = "cone-flattening"
    source = cone.SOURCE
    statement = ("For d >= 2a + 2 the flattening of the single-column tensor T has rank "
                 "<= 2a + 1 on the variety, so its (2a+2)-minors lie in J.")
    examples = ({"d": 4, "t": 1, "a": 1}, {"d": 4, "t": 2, "a": 1},
                {"d": 6, "t": 1, "a": 2, "method": "exact"})

    def hypothesis_violation(self, params):
        d, a = params["d"], params["a"]
        if d < cone.rank_bound(a) + 1:
            return (f"the (2a+2)-minors of the d x C(d+1,2) flattening need d >= 2a + 2; "
                    f"got d={d}, a={a}")
        return None

    def minors_shape(self, params):
        d = params["d"]
        return d, comb(d + 1, 2), cone.rank_bound(params["a"]) + 1

    def count(self, params):
        return cone.minor_count(params["d"], params["a"])

    def rank_matrix(self, params, coords):
        return cone.tensor_flattening(coords)

    def matrix_name(self, params):
        return "Fl(T)"

    def entry_terms(self, params, coords):
        return 6 * params["a"]

    def family(self, params, coords, indices):
        return cone.cone_family(self.rank_matrix(params, coords), params["row"], params["col"],
                                indices)

    def factorization_proof(self, params, coords):
        ring, values, A_, V, _, _ = generic_weights(coords, params["a"])
        matrix = self.rank_matrix(params, coords)
        ring_name = weights_ring_name(coords, params["a"])
        failure = coordinate_matrix_identity(
            "T_{k,j,l}(mu(W)) = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj)", matrix, values,
            cone.tensor_formula(A_, V[params["row"] - 1], half_of(1, 6)), ring_name)
        return failure or proved(checked=int(matrix.index.size), summary=(
            f"T_{{k,j,l}}(mu(W)) = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj) in {ring_name} (all "
            f"{matrix.index.size} entries of Fl(T)), so every row lies in span(S, sym(k_r v^T), "
            f"sym(q_r v^T) : r <= a) and rank Fl(T) <= 2a + 1 = {cone.rank_bound(params['a'])}"),
            evidence={"ring": ring_name, "entries": int(matrix.index.size)})

    def extra_checks(self, method, params, coords, context):
        d, a = params["d"], params["a"]
        return count_check("(2a+2)-minors of Fl(T)", self.index_sets(params), self.count(params),
                           f"C({d},{2 * a + 2}) C(C({d}+1,2),{2 * a + 2})")


CLAIMS = [ConeFlatteningClaim()]

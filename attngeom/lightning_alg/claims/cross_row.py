"""Claim ``cross-row``: ADM Prop 44 (Appendix A), the (d+1)-minors of C_S across output
rows (see :mod:`.cross_column`)."""

from __future__ import annotations

from attngeom.core.verdict import proved
from attngeom.lightning_alg.claims.base import A, ALL_OUTPUTS, COL, D, DPRIME, MATRIX, T, validate_lightning
from attngeom.lightning_alg.claims.cross_column import (
    MatrixMinorsClaim, minor_entry_terms, matrix_identity_verdict, ring_matmul, weights_ring_name, generic_weights)
from attngeom.lightning_alg.coordinates import per_coordinate_count
from attngeom.lightning_alg.invariants import cross_row


class CrossRowClaim(MatrixMinorsClaim):
    """ADM Prop 44 (Appendix A): C_S(W) = V M_S(A) for S = every coordinate of the target
    column j, so rank C_S <= d and its (d+1)-minors lie in J (there are some once d' >= d+1).

    The rows i of C_S are output rows, so the claim works in the whole-output view
    (``--all-outputs`` is implied).  Whole family: the factorization with M_S(A)[p, s] =
    d y^{[1]}_s / d v_{1p}, expanded for every row i (symbolic), rank C_S <= d over F_p
    (exact), sigma_{d+1}/sigma_1 (numeric).  Members: every minor while MEMBER_ENTRY_BUDGET
    (symbolic: SYMBOLIC_BUDGET) allows, else a seeded sample.  ADM prints no count; the
    evidence gives C(d', d+1) C(|S|, d+1).
    """

    id = "cross-row"
    source = "ADM Prop 44"
    statement = ("C_S(W) = V M_S(A) for any set S of coordinates of one output column, so "
                 "the (d+1)-minors of C_S lie in J.")
    params = (D, T, A, DPRIME, COL, ALL_OUTPUTS, MATRIX)
    examples = ({"d": 2, "t": 2, "a": 2, "dprime": 3},
                {"d": 3, "t": 2, "a": 3, "dprime": 4, "method": "symbolic"},
                {"d": 2, "t": 3, "a": 1, "dprime": 3, "method": "exact"},
                {"d": 1, "t": 3, "dprime": 2},        # d' = d + 1 = 2: the least d' it applies to
                {"d": 2, "t": 3, "a": 1, "dprime": 2})  # d' = d: outside (no (d+1)-minors)

    def validate(self, params):
        validate_lightning(params)
        params["all_outputs"] = True

    def hypothesis_violation(self, params):
        d, dprime = params["d"], params["dprime"]
        if dprime < 2:
            return f"ADM Prop 44 relates output rows, so it needs d' > 1; got d'={dprime}"
        if dprime < d + 1:
            return (f"ADM Prop 44's (d+1) x (d+1) minors of the d' x |S| matrix C_S need "
                    f"d' >= d+1; got d'={dprime}, d={d}")
        return None

    def minors_shape(self, params):
        return params["dprime"], per_coordinate_count(params["d"], params["t"]), params["d"] + 1

    def count(self, params):
        return cross_row.cross_row_count(params["d"], params["t"], params["dprime"])

    def rank_matrix(self, params, coords):
        return cross_row.cross_row_matrix(coords, params["col"])

    def matrix_name(self, params):
        return "C_S"

    def entry_terms(self, params, coords):
        return minor_entry_terms(coords, self.rank_matrix(params, coords).index, params["a"])

    def family(self, params, coords, indices):
        return cross_row.cross_row_family(self.rank_matrix(params, coords), params["col"], indices)

    def factorization_proof(self, params, coords):
        ring, values, _, V, _, _ = generic_weights(coords, params["a"])
        matrix = self.rank_matrix(params, coords)
        lhs = matrix.evaluate_ring(values)
        M = cross_row.value_coefficients(lhs[0], V[0])
        failure = matrix_identity_verdict("ADM Prop 44: C_S(W) = V M_S(A)", lhs, ring_matmul(V, M, ring.zero),
                            matrix.row_names, matrix.col_names, weights_ring_name(coords, params["a"]))
        return failure or proved(checked=int(matrix.index.size), summary=(
            f"C_S(mu(W)) = V M_S(A) in {weights_ring_name(coords, params['a'])} (all "
            f"{matrix.index.size} entries, M_S(A) read off output row 1), so rank C_S <= d = "
            f"{params['d']}"), evidence={"ring": weights_ring_name(coords, params["a"]),
                                         "inner_dimension": params["d"],
                                         "entries": int(matrix.index.size),
                                         "minors": self.count(params)})


CLAIMS = [CrossRowClaim()]

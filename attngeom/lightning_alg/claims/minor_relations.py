"""Claim ``minor-relations``: the linear relations among the k x k minors of F_{n,j} that
hold on the variety (new; generalizes ADM Thm 27 from k = d to every k; construction and
proof in :mod:`attngeom.lightning_alg.invariants.minor_relations`)."""

from __future__ import annotations

from functools import lru_cache
from math import comb, factorial

from attngeom.core.claim import Param
from attngeom.core.errors import BadInput
from attngeom.core.verdict import proved
from attngeom.lightning_alg.claims.cross_column import (
    CrossColumnFamilyClaim, MAX_MAXIMAL_MINORS, context_hypothesis, flattening_of)
from attngeom.lightning_alg.claims.syzygy import relation_proof
from attngeom.lightning_alg.invariants import minor_relations as rel
from attngeom.lightning_alg.invariants.coordinate_matrices import random_subset
from attngeom.lightning_alg.parametrization import uses_query_key

MINOR_SIZE = Param("minor_size", "size k of the minors of F_{n,j}, 3 <= k <= min(a, d - 1)",
                   default=3)


@lru_cache(maxsize=8)
def relation_basis(d: int, k: int):
    """(E_k by columns, kernel basis over Q, pivot columns, rows of E_k)."""
    columns = rel.minor_coefficients(d, k)
    basis, pivots = rel.kernel_relations(columns)
    return columns, basis, pivots, comb(d, k) * comb(d + k - 1, k)


class MinorRelationsClaim(CrossColumnFamilyClaim):
    """For 3 <= k <= min(a, d - 1) and every k-subset C of the columns of F_{n,j}, every c in
    the kernel of the coefficient matrix E_k of the forms det Phi_{R,S}(v) (rows: the
    k-subsets S of [d] times the degree-k monomials in v; columns: the k-subsets R of the
    C(d+1,2) rows) gives the invariant sum_R c_R det F_{R,C} of degree k in J; these are
    all the linear relations among the k x k minors of F_{n,j} on the variety, C(d,k)
    dim ker E_k of them (50 for each of the 4 column triples at d = 4, k = 3).

    Proof (for the whole family, every d): F(mu(W)) = Phi(v) A (ADM Thm 27's proof) and
    Cauchy-Binet, det F_{R,C} = sum_S det Phi_{R,S}(v) det A_{S,C}, so sum_R c_R det F_{R,C}
    = sum_S det A_{S,C} (E_k c)_S = 0.  Checked: F(mu(W)) = Phi(v) A expanded in
    QQ[weights] and E_k c = 0 over Q for every relation (symbolic); E_k c = 0 (exact,
    numeric); the members as built, evaluated as determinants at generic weights, F_p points
    or float64 (the part ``members``).  k = d is ADM Thm 27 (claim ``syzygy``).
    """

    id = "minor-relations"
    source = rel.SOURCE
    statement = ("For 3 <= k <= min(a, d-1), the linear relations among the k x k minors of "
                 "F_{n,j} given by the kernel of E_k (Cauchy-Binet on F = Phi(v) A) lie in J.")
    params = CrossColumnFamilyClaim.params + (MINOR_SIZE,)
    examples = ({"d": 4, "t": 2, "a": 4},
                {"d": 4, "t": 2, "a": 3, "method": "exact"},
                {"d": 5, "t": 2, "a": 5, "minor_size": 4, "method": "exact"})

    def validate(self, params):
        super().validate(params)
        minors = comb(comb(params["d"] + 1, 2), params["minor_size"])
        if minors > MAX_MAXIMAL_MINORS:
            raise BadInput(f"d={params['d']}, k={params['minor_size']}: F_{{n,j}} has {minors:,} "
                           f"row sets of k x k minors; the kernel of E_k is computed up to "
                           f"{MAX_MAXIMAL_MINORS:,}")

    def hypothesis_violation(self, params):
        d, a, k = params["d"], params["a"], params["minor_size"]
        if not 3 <= k < d:
            return (f"the relations among k x k minors need 3 <= k < d (k = d is ADM Thm 27, "
                    f"claim syzygy; k = 2 gives none); got k={k}, d={d}")
        if k > a:
            return (f"the relations need k <= a (for k > a every k x k minor of F_{{n,j}} "
                    f"vanishes, ADM Thm 25); got k={k}, a={a}")
        return context_hypothesis(params, "the minor relations")

    def basis(self, params):
        return relation_basis(params["d"], params["minor_size"])

    def index_sets(self, params):
        relations = self.basis(params)[1]
        for C in rel.column_subsets(params["d"], params["minor_size"]):
            for number in range(len(relations)):
                yield C, number

    def count(self, params):
        return comb(params["d"], params["minor_size"]) * len(self.basis(params)[1])

    def random_index(self, params, sampler):
        C = random_subset(sampler, params["d"], params["minor_size"])
        return C, int(sampler.integers((), 0, len(self.basis(params)[1]) - 1))

    def family(self, params, coords, indices):
        return rel.relation_family(flattening_of(params, coords), params["row"], params["col"],
                                   params["context"], params["minor_size"], self.basis(params)[1],
                                   indices)

    def shown_matrices(self, params, coords):
        return [(f"F_{{{params['context']},{params['col']}}}", flattening_of(params, coords))]

    def longest_relation(self, params) -> int:
        return max((len(r) for r in self.basis(params)[1]), default=1)

    def member_terms(self, params):
        return self.longest_relation(params) * factorial(params["minor_size"])

    def member_entries(self, params):
        return self.longest_relation(params) * params["minor_size"] ** 2

    def member_cost(self, params, coords):
        k = params["minor_size"]
        entry = 2 * (params["a"] if uses_query_key(params["d"], params["a"]) else 1)
        return self.longest_relation(params) * factorial(k) * k * entry ** k

    def lowest_member_degree(self, params) -> int:
        return params["minor_size"]

    def criterion(self, method, params, coords, context):
        columns, relations, _, _ = self.basis(params)
        return relation_proof(method, params, coords, columns, relations,
                              f"E_{params['minor_size']}", (
                                  "so each sum_R c_R det F_{R,C}(mu(W)) = sum_S det A_{S,C} "
                                  "sum_R c_R det Phi_{R,S}(v) = 0 (Cauchy-Binet)"))

    def extra_checks(self, method, params, coords, context):
        d, k = params["d"], params["minor_size"]
        columns, relations, pivots, rows = self.basis(params)
        evidence = {"row_sets": len(columns), "rows_of_E": rows, "rank_E_over_Q": len(pivots),
                    "relations_per_column_set": len(relations), "column_sets": comb(d, k),
                    "members": self.count(params)}
        return {"count": proved(checked=1, method="exact", evidence=evidence, summary=(
            f"dim ker E_{k} = {len(columns)} - {len(pivots)} = {len(relations)} relations for each "
            f"of the C({d},{k}) = {comb(d, k)} column sets: {self.count(params)} members"))}


CLAIMS = [MinorRelationsClaim()]

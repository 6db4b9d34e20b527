"""Claim ``minor-relations``: the linear relations among the k x k minors of F_{n,j} that
hold on the variety (new; generalizes ADM Thm 27 from k = d to every k; construction and
proof in :mod:`attngeom.lightning_alg.invariants.minor_relations`)."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb, factorial

import numpy as np
from flint import fmpq, fmpq_mat

from attngeom.core.claim import Param
from attngeom.core.errors import BadInput
from attngeom.core.verdict import proved, refuted
from attngeom.kernels.primefield import det_mod_p, rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.lightning_alg.claims.cross_column import (
    CrossColumnFamilyClaim, MAX_MAXIMAL_MINORS, context_hypothesis, flattening_of)
from attngeom.lightning_alg.claims.syzygy import relation_proof
from attngeom.lightning_alg.invariants import minor_relations as rel
from attngeom.lightning_alg.invariants.coordinate_matrices import random_subset
from attngeom.lightning_alg.invariants.structured import det_leibniz
from attngeom.lightning_alg.parametrization import (
    Parametrization, sample_weights_mod_p, uses_query_key)

#: Points beyond the rank to be reached at which the k x k minors of F_{n,j}(mu(W)) are
#: evaluated over F_p for the independent count (the part ``count``).
EXTRA_COUNT_POINTS = 8
#: Most row sets C(C(d+1,2), k) for which a count mismatch is settled exactly, by the rank
#: over Q of the minors expanded in the weights (120 at d = 4, k = 3; 455 at d = 5, k = 3).
MAX_EXACT_COUNT_ROW_SETS = 500
_COUNT_STREAM = 105

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

    The count (the part ``count``) is pinned against an independent one, from the
    definition "all linear relations among the k x k minors of F_{n,j} on the variety"
    rather than from E_k: the relations for one column set C are the kernel of the minors
    det F_{R,C}(mu(W)) as functions of W, so there are C(D,k) - r of them, r the dimension
    of their span (D = C(d+1,2)).  The rank r_p of their values at random weight points over
    F_p is a lower bound on r, so C(D,k) - r_p bounds the relations from above, while the
    dim ker E_k relations of the family, independent and vanishing on the variety (the
    parts ``criterion`` and ``members``), bound them from below: equal, the count is exact.
    More listed relations than the bound refute; fewer are settled by the exact rank over Q
    of the minors expanded in the weights (refuted: relations are missing).  One column set
    (the first) stands for all: a permutation of [d] acting on v and on both indices of A
    permutes the coordinates and maps C to any other column set.
    """

    id = "minor-relations"
    source = rel.SOURCE
    statement = ("For 3 <= k <= min(a, d-1), the linear relations among the k x k minors of "
                 "F_{n,j} given by the kernel of E_k (Cauchy-Binet on F = Phi(v) A) lie in J, "
                 "and they are all such relations on the variety: dim ker E_k for each "
                 "k-subset of the columns.")
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
        row_sets = comb(comb(d + 1, 2), k)
        listed = len(relations)
        evidence = {"row_sets": row_sets, "rows_of_E": rows, "rank_E_over_Q": len(pivots),
                    "relations_per_column_set": listed, "column_sets": comb(d, k),
                    "members": self.count(params)}
        what = (f"dim ker E_{k} = {len(columns)} - {len(pivots)} = {listed} relations for each of "
                f"the C({d},{k}) = {comb(d, k)} column sets ({self.count(params)} members)")
        if len(columns) != row_sets or self.count(params) != comb(d, k) * listed:
            return {"count": refuted(method="exact", evidence=evidence, summary=(
                f"E_{k} has {len(columns)} columns and the family {self.count(params)} members; "
                f"the k-subsets of the C(d+1,2) rows number C({comb(d + 1, 2)},{k}) = {row_sets} "
                f"and C(d,k) dim ker E_k = {comb(d, k) * listed}"),
                counterexample={"columns_of_E": len(columns), "row_sets": row_sets,
                                "members": self.count(params)})}
        sampler = context.sampler.spawn(_COUNT_STREAM)
        points = max(row_sets - listed, 0) + EXTRA_COUNT_POINTS
        rank_p = minors_rank_mod_p(flattening_of(params, coords), coords, k, params["a"],
                                   points, sampler)
        evidence.update(points=points, prime=DEFAULT_PRIME, rank_of_minors_mod_p=rank_p,
                        relations_at_most=row_sets - rank_p)
        if listed == row_sets - rank_p:
            return {"count": proved(checked=1, method="exact", evidence=evidence, summary=(
                f"{what}; and no more exist: the {row_sets} minors det F_{{R,C}}(mu(W)) take values "
                f"of rank {rank_p} at {points} random weight points over F_p, so at most "
                f"{row_sets} - {rank_p} = {row_sets - rank_p} linear relations hold among them on "
                f"the variety"))}
        if listed > row_sets - rank_p:
            return {"count": refuted(method="exact", evidence=evidence, summary=(
                f"{what}, but the minors on the variety span at least {rank_p} dimensions (rank "
                f"of their values at {points} points over F_p), so at most {row_sets - rank_p} "
                f"independent relations hold"),
                counterexample={"relations_listed": listed, "relations_at_most": row_sets - rank_p})}
        if row_sets > MAX_EXACT_COUNT_ROW_SETS:
            raise BadInput(f"minor-relations count: {listed} relations per column set, but the "
                           f"minors' values over F_p leave room for {row_sets - rank_p}; settling "
                           f"it exactly needs {row_sets:,} minors expanded (limit "
                           f"{MAX_EXACT_COUNT_ROW_SETS:,})")
        rank_q = minors_rank_over_q(flattening_of(params, coords), coords, k, params["a"])
        evidence.update(rank_of_minors_over_Q=rank_q, relations_on_the_variety=row_sets - rank_q)
        if listed == row_sets - rank_q:
            return {"count": proved(checked=1, method="exact", evidence=evidence, summary=(
                f"{what}; and no more exist: the {row_sets} minors det F_{{R,C}}(mu(W)), expanded in "
                f"the weights, have rank {rank_q} over Q"))}
        return {"count": refuted(method="exact", evidence=evidence, summary=(
            f"{what}, but {row_sets} - {rank_q} = {row_sets - rank_q} linear relations hold among "
            f"the minors det F_{{R,C}}(mu(W)) on the variety (their expansions in the weights have "
            f"rank {rank_q} over Q): the family misses {row_sets - rank_q - listed} per column set"),
            counterexample={"relations_listed": listed,
                            "relations_on_the_variety": row_sets - rank_q,
                            "rank_of_minors_over_Q": rank_q})}


def _first_column_minors(flattening, k: int):
    """(row sets R, the entries of F_{R,C} for C = {1..k}): coordinate indices [n_R, k, k]."""
    row_sets = list(combinations(range(flattening.shape[0]), k))
    return row_sets, flattening.index[np.array(row_sets)][:, :, :k]


def minors_rank_mod_p(flattening, coords, k: int, a: int, points: int, sampler,
                      prime: int = DEFAULT_PRIME) -> int:
    """Rank over F_p of the values of the k x k minors det F_{R,C}(mu(W)) (C = the first
    k columns, every R) at ``points`` uniform weight points: a lower bound on the
    dimension of their span as functions of W."""
    weights = sample_weights_mod_p(sampler, points, coords.d, coords.dprime, a, prime)
    y = Parametrization(coords).evaluate_mod_p(weights)                 # [B, N]
    _, entries = _first_column_minors(flattening, k)
    values = det_mod_p(y[:, entries], prime)                             # [B, n_R]
    return rank_mod_p(values, prime)


def minors_rank_over_q(flattening, coords, k: int, a: int) -> int:
    """The dimension of the span of the minors det F_{R,C}(mu(W)) (C = the first k columns):
    each expanded in QQ[weights] (mu(W) of :meth:`Parametrization.symbolic`), then the rank
    over Q of their coefficient matrix (FLINT)."""
    _, y = Parametrization(coords).symbolic(a)
    _, entries = _first_column_minors(flattening, k)
    values = np.array(y, dtype=object)[entries]
    minors = [det_leibniz(m[None])[0] for m in values]
    monomials: dict = {}
    for m in minors:
        for monomial in m.keys():
            monomials.setdefault(monomial, len(monomials))
    matrix = [[fmpq(0)] * len(monomials) for _ in minors]
    for i, m in enumerate(minors):
        for monomial, c in m.items():
            matrix[i][monomials[monomial]] = fmpq(int(c.numerator), int(c.denominator))
    if not monomials:
        return 0
    return fmpq_mat(len(minors), len(monomials), [x for row in matrix for x in row]).rank()


CLAIMS = [MinorRelationsClaim()]

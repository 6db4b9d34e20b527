"""Claim ``syzygy``: ADM Thm 27 and Example 28, the cubics from the kernel of the
coefficient matrix E of the maximal minors of Phi(v) (see :mod:`.cross_column`)."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict, proved, refuted
from attngeom.lightning_alg.claims.cross_column import (
    CrossColumnFamilyClaim, MAX_MAXIMAL_MINORS, context_hypothesis, flattening_of, half_of,
    ring_matmul, coordinate_matrix_identity, generic_weights, rank_over_q, weights_ring_name)
from attngeom.lightning_alg.claims.cross_cubic import CrossCubicClaim
from attngeom.lightning_alg.invariants import syzygy


@lru_cache(maxsize=8)
def syzygy_basis(d: int):
    """(E by columns, kernel relations over Q, pivot columns) for the maximal minors of Phi(v)."""
    columns = syzygy.maximal_minor_coefficients(d)
    relations, pivots = syzygy.kernel_relations(columns)
    return columns, relations, pivots


def relation_proof(method, params, coords, columns, relations, name: str,
                   conclusion: str) -> Verdict:
    """The whole-family check of a family of linear relations among minors of F_{n,j}
    (``syzygy``, ``minor-relations``): E c = 0 over Q for every relation c (E by its sparse
    ``columns``, named ``name``); symbolically also F(mu(W)) = Phi(v) A in QQ[weights]
    (ADM Thm 27's proof), from which ``conclusion`` follows."""
    for number, relation in enumerate(relations):
        image: dict[int, Fraction] = {}
        for r, c in relation.items():
            for monomial, e in columns[r].items():
                image[monomial] = image.get(monomial, Fraction(0)) + c * e
        if any(image.values()):
            return refuted(method="exact", summary=(
                f"relation {number + 1} is not in the kernel of {name}: {name} c != 0"),
                counterexample={"relation": {str(r): str(c) for r, c in relation.items()},
                                "E_c": {str(m): str(x) for m, x in image.items() if x}})
    if method != "symbolic":
        return proved(checked=len(relations), method="exact", summary=(
            f"{name} c = 0 over Q for all {len(relations)} kernel relations"),
            evidence={"relations": len(relations)})
    ring, values, A_, V, _, _ = generic_weights(coords, params["a"])
    flattening = flattening_of(params, coords)
    phi = syzygy.phi_matrix(V[params["row"] - 1], ring.zero, half_of)
    ring_name = weights_ring_name(coords, params["a"])
    failure = coordinate_matrix_identity("ADM Thm 27 proof: F(mu(W)) = Phi(v) A", flattening, values,
                                         ring_matmul(phi, A_, ring.zero), ring_name)
    return failure or proved(checked=len(relations), summary=(
        f"F(mu(W)) = Phi(v) A in {ring_name} and {name} c = 0 over Q for all {len(relations)} "
        f"relations, {conclusion}"),
        evidence={"ring": ring_name, "relations": len(relations)})


class SyzygyClaim(CrossColumnFamilyClaim):
    """ADM Thm 27 and Example 28: for a >= d, every c in the kernel of the coefficient
    matrix E of the maximal minors of Phi(v) (in the lexicographic monomial basis of
    degree-d forms in v) gives the invariant sum_R c_R det F_R; there are
    dim ker E >= C(D,d) - C(2d-1,d) of them (exactly 10 for d = 3, Example 28), and for
    d = 3 they are not in the span of Prop 24's cubics.

    Whole family: F(mu(W)) = Phi(v) A expanded in QQ[A, V] and E c = 0 over Q for every
    relation (symbolic; then g_c(mu(W)) = det A sum_R c_R det Phi_R(v) = 0).  Members: every
    relation, as an integer combination of determinants, at generic weights (symbolic,
    within SYMBOLIC_BUDGET), F_p points (exact) or float64 (numeric).  The kernel basis is
    that of the reduced column echelon form, scaled to coprime integers.
    """

    id = "syzygy"
    source = "ADM Thm 27, Example 28"
    statement = ("For a >= d the maximal minors of F_{n,j} satisfy at least "
                 "C(D,d) - C(2d-1,d) independent linear relations on the variety.")
    examples = ({"d": 3, "t": 2, "a": 3},                        # ADM Example 28
                {"d": 4, "t": 3, "a": 4, "method": "exact"})

    def validate(self, params):
        super().validate(params)
        minors = comb(comb(params["d"] + 1, 2), params["d"])
        if minors > MAX_MAXIMAL_MINORS:
            raise BadInput(f"d={params['d']}: F_{{n,j}} has {minors:,} maximal minors; the kernel "
                           f"of their coefficient matrix is computed up to {MAX_MAXIMAL_MINORS:,}")

    def hypothesis_violation(self, params):
        if params["d"] < 2:
            return f"ADM Thm 27 needs d >= 2; got d={params['d']}"
        if params["a"] < params["d"]:
            return f"ADM Thm 27 needs a >= d; got a={params['a']}, d={params['d']}"
        if self.count(params) == 0:
            d = params["d"]
            return (f"ADM Thm 27 gives no relation for d={d}: the {comb(comb(d + 1, 2), d)} "
                    f"maximal minors of Phi(v) are independent (ker E = 0)")
        return context_hypothesis(params, "ADM Thm 27")

    def index_sets(self, params):
        return iter(range(self.count(params)))

    def count(self, params):
        return len(syzygy_basis(params["d"])[1])

    def random_index(self, params, sampler):
        return int(sampler.integers((), 0, self.count(params) - 1))

    def family(self, params, coords, indices):
        relations = syzygy_basis(params["d"])[1]
        indices = list(indices)
        return syzygy.syzygy_family(flattening_of(params, coords), params["row"], params["col"],
                                    params["context"],
                                    [syzygy.integer_relation(relations[i]) for i in indices], indices)

    def shown_matrices(self, params, coords):
        return [(f"F_{{{params['context']},{params['col']}}}", flattening_of(params, coords))]

    def member_terms(self, params):
        return 2 * factorial(params["d"])

    def member_entries(self, params):
        return 2 * params["d"] ** 2

    def member_cost(self, params, coords):
        return 2 * factorial(params["d"]) * params["d"] * 2 ** params["d"]

    def criterion(self, method, params, coords, context):
        columns, relations, _ = syzygy_basis(params["d"])
        return relation_proof(method, params, coords, columns, relations, "E", (
            "so each sum_R c_R det F_R(mu(W)) = det A sum_R c_R det Phi_R(v) = 0"))

    def extra_checks(self, method, params, coords, context):
        d = params["d"]
        columns, relations, pivots = syzygy_basis(d)
        D_ = comb(d + 1, 2)
        bound = syzygy.thm27_bound(d)
        evidence = {"maximal_minors": len(columns), "monomials": comb(2 * d - 1, d),
                    "rank_E_over_Q": len(pivots), "relations": len(relations),
                    "bound": bound, "bound_formula": f"C({D_},{d}) - C({2 * d - 1},{d})",
                    "zero_minors_of_Phi": sum(1 for c in columns if not c),
                    "bound_is_sharp": len(relations) == bound}
        if len(relations) < bound:
            checks = {"thm27": refuted(method="exact", evidence=evidence, summary=(
                f"ADM Thm 27: only {len(relations)} independent relations, fewer than "
                f"C(D,d) - C(2d-1,d) = {bound}"), counterexample={"relations": len(relations),
                                                                    "bound": bound})}
        else:
            checks = {"thm27": proved(checked=1, method="exact", evidence=evidence, summary=(
                f"ADM Thm 27: dim ker E = {len(columns)} - {len(pivots)} = {len(relations)} "
                f">= C({D_},{d}) - C({2 * d - 1},{d}) = {bound}"))}
        if d == 3:
            checks.update({"example28-count": self.example_28_count(len(relations)),
                           "example28-span": self.prop24_span(params, coords)})
        return checks

    @staticmethod
    def example_28_count(relations: int) -> Verdict:
        if relations != 10:
            return refuted(method="exact", summary=(
                f"ADM Example 28: {relations} linear relations among the 20 maximal minors, "
                f"printed 'exactly 10'"), counterexample={"relations": relations, "printed": 10})
        return proved(checked=1, method="exact", summary=(
            "ADM Example 28: exactly 10 linear relations among the 20 maximal minors"),
            evidence={"relations": relations})

    def prop24_span(self, params, coords) -> Verdict:
        """Example 28: the cubics are not in the span of Prop 24's (same n, j), by exact
        ranks over Q of their coefficient matrices in the monomials of the y's."""
        ours = self.members(params, coords)
        prop24 = CrossCubicClaim().members(params, coords)
        ranks = {name: rank_over_q([m.poly for m in polys], coords)
                 for name, polys in (("syzygy", ours), ("prop24", prop24), ("both", ours + prop24))}
        inside = [k + 1 for k, m in enumerate(ours)
                  if rank_over_q([m.poly] + [p.poly for p in prop24], coords) == ranks["prop24"]]
        evidence = {"rank_syzygy": ranks["syzygy"], "rank_prop24": ranks["prop24"],
                    "rank_together": ranks["both"],
                    "dim_intersection": ranks["syzygy"] + ranks["prop24"] - ranks["both"],
                    "syzygy_cubics_in_prop24_span": inside}
        if inside:
            return refuted(method="exact", evidence=evidence, summary=(
                f"ADM Example 28: syzygy cubics {inside} lie in the span of Prop 24's cubics"),
                counterexample={"members_in_span": inside})
        return proved(checked=len(ours), method="exact", evidence=evidence, summary=(
            f"ADM Example 28: no syzygy cubic lies in the span of Prop 24's (ranks over Q: "
            f"{ranks['syzygy']} + {ranks['prop24']} = {ranks['both']} together)"))


CLAIMS = [SyzygyClaim()]

"""ADM §3: sequence-copy relations, Prop 9, Cor 10, Examples 12 and 13, and mutations."""

import pytest
import sympy

from attngeom.core.claim import CheckContext
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg.claims.base import coordinates_of
from attngeom.lightning_alg.family_check import check_family
from attngeom.lightning_alg.invariant import Invariant, format_polynomial
from attngeom.lightning_alg.invariants import linear as linear_module
from attngeom.lightning_alg import labels as labels_module
from attngeom.lightning_alg.parametrization import Parametrization

LINEAR = REGISTRY.get("linear")

EXAMPLE_12 = [  # ADM Example 12, exactly as printed (d = t = a = 2, j = 1, n = 2)
    "y_((2,1),(2,1),(2,1)) - y_((2,2),(2,2),(2,1))",
    "3*y_((1,1),(2,1),(2,1)) - 2*y_((1,2),(2,2),(2,1)) - y_((2,2),(2,2),(1,1))",
    "3*y_((1,1),(1,1),(2,1)) - y_((1,2),(1,2),(2,1)) - 2*y_((1,2),(2,2),(1,1))",
    "y_((1,1),(1,1),(1,1)) - y_((1,2),(1,2),(1,1))",
]


def test_example_12_exactly_as_printed():
    assert LINEAR.show(LINEAR.resolve({"d": 2, "t": 2, "a": 2}), "m2").splitlines() == EXAMPLE_12


def test_example_13_ten_independent_relations():
    v = LINEAR.verify({"d": 3, "t": 2, "a": 1})
    assert v.status is Status.PROVED and v.method == "symbolic"
    cor10 = v.evidence["parts"]["cor10"]
    assert cor10["prop9_rank_over_Q"] == cor10["cor10_count"] == 10
    assert cor10["dim_J1_measured"] == 10 and cor10["family_spans_J1"]


@pytest.mark.parametrize("d,t,a", [(2, 3, 1), (3, 3, 2), (4, 2, 4)])
def test_all_three_methods_agree(d, t, a):
    for method, status in [("symbolic", Status.PROVED), ("exact", Status.VERIFIED),
                           ("numeric", Status.CONSISTENT)]:
        assert LINEAR.verify({"d": d, "t": t, "a": a}, method).status is status


def test_exact_verification_of_a_larger_case():
    v = LINEAR.verify({"d": 6, "t": 4, "a": 2}, "exact")
    assert v.status is Status.VERIFIED and v.failure_probability < 1e-40
    # one coordinate: C(d+2,3) + (t-2) d C(d+1,2) linear relations = 56 + 2*6*21
    assert v.evidence["parts"]["cor10"]["dim_J1_measured"] == 308


def test_whole_output_view_has_the_sequence_copies():
    params = {"d": 2, "t": 3, "a": 2, "dprime": 2, "all_outputs": True}
    v = LINEAR.verify(params, "exact")
    assert v.status is Status.VERIFIED
    side = v.evidence["parts"]["cor10"]
    # whole output, per row: t C(d+2,3) + (t^2 - t - 1) d C(d+1,2) = 12 + 5*6
    assert side["dim_J1_measured"] == 2 * (3 * 4 + 5 * 6) and side["family_spans_J1"]


def test_t1_is_not_applicable():
    v = LINEAR.verify({"d": 3, "t": 1})
    assert v.status is Status.NOT_APPLICABLE and "t >= 2" in v.summary


def _perturbed(members, index, delta):
    inv = members[index]
    first = sorted(inv.poly.free_symbols, key=str)[0]
    return members[:index] + [Invariant(inv.poly + delta * first, inv.family, inv.source)] + members[index + 1:]


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_perturbed_relation_is_refuted(method):
    params = LINEAR.resolve({"d": 3, "t": 2, "a": 2})
    coords = coordinates_of(params)
    members = _perturbed(LINEAR.members(params, coords), 3, sympy.Rational(1, 3))
    v = check_family(members, coords, 2, method, CheckContext(seed=1))
    assert v.status is Status.REFUTED
    assert v.counterexample["field"] == "Q" and v.counterexample["value"] != "0"


def test_mutation_wrong_orbit_scaling_is_refuted(monkeypatch):
    """mu divides y_{(1,2),(2,2),(1,1)} by 3 instead of |Perm{1,2}| = 2."""
    real_init = Parametrization.__init__

    def wrong_scaling(self, coords):
        real_init(self, coords)
        self.orbit[coords.labels.index(labels_module.Label(1, 1, 2, (1, 2, 1)))] = 3

    monkeypatch.setattr(Parametrization, "__init__", wrong_scaling)
    for method in ("symbolic", "exact", "numeric"):
        assert LINEAR.verify({"d": 2, "t": 2, "a": 2}, method).status is Status.REFUTED


def test_mutation_swapped_index_is_refuted(monkeypatch):
    real = linear_module.decompositions

    def swapped(K):  # put the target row b into the pair and a pair row in the target slot
        return [((min(A[0], b), max(A[0], b)), A[1]) for A, b in real(K)]

    monkeypatch.setattr(linear_module, "decompositions", swapped)
    assert LINEAR.verify({"d": 3, "t": 2, "a": 3}, "exact").status is Status.REFUTED


def test_mutation_cor10_count(monkeypatch):
    real = linear_module.internal_symmetrization_relations

    def duplicated(*args):
        out = real(*args)
        return out[:-1] + [out[0]]

    monkeypatch.setattr("attngeom.lightning_alg.claims.linear.internal_symmetrization_relations", duplicated)
    v = LINEAR.verify({"d": 3, "t": 2, "a": 3}, "exact")
    assert v.status is Status.REFUTED and "rank 9" in v.summary


def test_members_are_nonzero_polynomials():
    params = LINEAR.resolve({"d": 4, "t": 3, "a": 2})
    coords = coordinates_of(params)
    assert all(m.poly != 0 and m.degree == 1 for m in LINEAR.members(params, coords))
    assert format_polynomial(LINEAR.members(params, coords)[0].poly, coords, "latex").startswith("y_{")

"""ADM Prop 2, 3, 5, 6 and eq (3) against the actual expansion of V X (X^T A X)."""

import pytest

from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg import coordinates as coordinates_module
from attngeom.lightning_alg import labels as labels_module
from attngeom.lightning_alg.parametrization import Parametrization

COUNT = REGISTRY.get("monomial-count")
COEFFICIENTS = REGISTRY.get("coefficients")


@pytest.mark.parametrize("d,t,dprime", [(1, 1, 1), (2, 3, 2), (3, 2, 1), (4, 4, 1)])
def test_monomial_counts(d, t, dprime):
    assert COUNT.verify({"d": d, "t": t, "dprime": dprime}, "symbolic").status is Status.PROVED
    v = COUNT.verify({"d": d, "t": t, "dprime": dprime}, "exact")
    assert v.status is Status.VERIFIED
    assert v.evidence["total"] == d * t * (d + 1) * (3 * d * t - 2 * d + 2) // 6


@pytest.mark.parametrize("d,t,dprime", [(2, 2, 1), (3, 2, 2), (2, 4, 1)])
def test_coefficient_formulas(d, t, dprime):
    assert COEFFICIENTS.verify({"d": d, "t": t, "dprime": dprime}, "symbolic").status is Status.PROVED
    assert COEFFICIENTS.verify({"d": d, "t": t, "dprime": dprime}, "exact").status is Status.VERIFIED


def test_mutation_wrong_prop5_formula_is_refuted(monkeypatch):
    monkeypatch.setattr("attngeom.lightning_alg.claims.expansion_claims.prop5_total_formula",
                        lambda d, t: coordinates_module.prop5_total_formula(d, t) + 1)
    v = COUNT.verify({"d": 2, "t": 2})
    assert v.status is Status.REFUTED and v.counterexample["problems"][0]["prop"] == "Prop 5 (total)"


def test_mutation_wrong_orbit_scaling_is_refuted(monkeypatch):
    real = labels_module.orbit_size
    monkeypatch.setattr(labels_module.Label, "orbit_size",
                        property(lambda self: 2 * real(self.multiset)))
    for method in ("symbolic", "exact"):
        assert COEFFICIENTS.verify({"d": 2, "t": 2}, method).status is Status.REFUTED


def test_mutation_swapped_prop6_index_is_refuted(monkeypatch):
    real = Parametrization.orderings

    def swapped(label):  # a_{p3 p2} instead of a_{p2 p3}
        return [(p1, p3, p2) for p1, p2, p3 in real(label)]

    monkeypatch.setattr(Parametrization, "orderings", staticmethod(swapped))
    for method in ("symbolic", "exact"):
        v = COEFFICIENTS.verify({"d": 2, "t": 2}, method)
        assert v.status is Status.REFUTED and v.counterexample


def test_expansion_size_guard(run_cli):
    code, _, err = run_cli("verify", "coefficients", "--d", "60", "--t", "20", "--method", "symbolic")
    assert code == 2 and err.count("\n") == 1 and "limit" in err

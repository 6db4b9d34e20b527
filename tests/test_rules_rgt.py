"""The rules of issue 48 on the RGT claims: what a declared identity value may hide, and the
checks added to kill the mutation campaign's survivors (tests/mutation_ledger.json).

``hyperbolic-volume-growth`` declares c = 1 in ``identity_values`` (RGT §7.1.1 has no
curvature parameter), so tests/test_generic_examples.py lets its default and two examples
sit at c = 1, where an exponent on c is invisible.  The declaration is sound only if the
claim's other examples, at c != 1 and for each method, see such a change: checked here by
putting c -> c^2 into each paper-side function of the claim (the c = 1 examples must not
notice, by construction; some c != 1 example must).
"""

from __future__ import annotations

import numpy as np
import pytest

from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.hyperbolic import hierarchy, poincare, products_claims, volume, volume_claims
from attngeom.geometry_proofs.hyperbolic.products import ProductManifold
from attngeom.geometry_proofs.hyperbolic.tree_claims import HierarchyPreservationClaim, reference_loss
from attngeom.kernels.sampling import Sampler
from attngeom.registry import full_registry

VOLUME = full_registry().get("hyperbolic-volume-growth")


def _fingerprint(claim, example):
    """What a verdict decides: status, error kind, errata, and the parts' statuses."""
    params = {k: v for k, v in example.items() if k != "method"}
    verdict = claim.verify(params, example.get("method", "auto"), CheckContext(seed=0))
    parts = verdict.evidence.get("parts", {}) if isinstance(verdict.evidence, dict) else {}
    return (verdict.status.value, str(verdict.error_kind),
            tuple(str(e.kind) for e in verdict.errata),
            tuple(sorted((name, part["status"]) for name, part in parts.items())))


def _unit(example) -> bool:
    return str(example["curvature"]) == "1"


def test_volume_growth_examples_leave_the_identity_for_each_method():
    """The reason in identity_values promises examples at c != 1: one per method."""
    assert "curvature" in VOLUME.identity_values
    off = [e for e in VOLUME.examples if not _unit(e)]
    methods = {e.get("method", "symbolic") for e in off}
    assert methods == set(VOLUME.methods), off


@pytest.mark.parametrize("module, name", [(volume, "volume_symbolic"), (volume, "volume_numeric"),
                                          (volume_claims, "growth_rate")])
def test_an_exponent_on_c_is_caught_off_the_identity(monkeypatch, module, name):
    """c -> c^2 in one paper-side function of the volume claim: the c = 1 examples cannot see
    it (that is why c = 1 is an identity value), an example at c != 1 must."""
    before = {k: _fingerprint(VOLUME, e) for k, e in enumerate(VOLUME.examples)}
    original = getattr(module, name)
    monkeypatch.setattr(module, name, lambda d, c, *rest: original(d, c * c, *rest))
    after = {k: _fingerprint(VOLUME, e) for k, e in enumerate(VOLUME.examples)}
    for k, example in enumerate(VOLUME.examples):
        if _unit(example):
            assert after[k] == before[k], example
    changed = [VOLUME.examples[k] for k in before if after[k] != before[k]]
    assert changed and not any(_unit(e) for e in changed), (name, changed)


# ---- product-manifold: the competitor curve's length (RGT eq 24) --------------------------

@pytest.mark.parametrize("dims, c", [((2, 2, 2), 1.5), ((3, 1, 0), 0.5), ((2, 0, 3), 0.7)])
def test_competitor_length_matches_the_polyline(dims, c):
    """The closed-form length of the reparametrized curve against the polyline of the claim
    (2000 steps), and against the geodesic length: longer unless the factor is absent."""
    manifold = ProductManifold.of(*dims, c_hyperbolic=c, c_spherical=c)
    sampler = Sampler(3)
    x, y = (products_claims._product_points(sampler.spawn(k), manifold, 4, c) for k in (1, 2))
    v = manifold.log_map(x, y)
    ts = np.linspace(0.0, 1.0, products_claims.STEPS + 1)
    for factor in range(len(manifold.factors)):
        polyline = products_claims.curve_length(manifold, x, [manifold.join(
            [part * (t * t if k == factor else t) for k, part in enumerate(manifold.split(v))]) for t in ts])
        expected = products_claims.competitor_length(manifold, x, y, factor)
        assert np.allclose(polyline, expected, rtol=1e-6, atol=0)
        assert np.all(expected > manifold.distance(x, y))
    # the competitor of the claim runs on the second factor: the others give other lengths
    second = products_claims.competitor_length(manifold, x, y, products_claims.REPARAMETRIZED)
    first = products_claims.competitor_length(manifold, x, y, 0)
    assert np.min(np.abs(second - first) / second) > 1e-3


def test_competitor_length_without_reparametrized_factor_is_the_distance():
    manifold = ProductManifold.of(3, 0, 0, c_hyperbolic=0.7)
    x, y = (products_claims._product_points(Sampler(5).spawn(k), manifold, 3, 0.7) for k in (1, 2))
    assert np.allclose(products_claims.competitor_length(manifold, x, y, 1), manifold.distance(x, y),
                       rtol=1e-12)


def test_product_claim_notices_the_wrong_factor(monkeypatch):
    """A competitor formula on another factor than the curve's fails the claim."""
    claim = full_registry().get("product-manifold")
    params = {"factor_dims": (2, 2, 2), "curvature": "3/2"}
    assert claim.verify(params, "numeric", CheckContext(seed=0)).status.holds
    monkeypatch.setattr(products_claims, "REPARAMETRIZED", 0)
    assert not claim.verify(params, "numeric", CheckContext(seed=0)).status.holds


# ---- hierarchy-preservation: the loss trained is Nickel & Kiela's of d_H ------------------

def test_reference_loss_by_hand():
    """Two related nodes and one unrelated: -log(e^-d01 / (e^-d01 + e^-d02)) from node 0 and
    the same from node 1 (unrelated: node 2 to 0 and 1)."""
    points = np.array([[0.1, 0.2], [-0.3, 0.05], [0.4, -0.5]])
    related = np.zeros((3, 3), dtype=bool)
    related[0, 1] = related[1, 0] = True
    d = lambda i, j: float(poincare.distance(points[i], points[j], 1.0))
    want = (-np.log(np.exp(-d(0, 1)) / (np.exp(-d(0, 1)) + np.exp(-d(0, 2))))
            - np.log(np.exp(-d(1, 0)) / (np.exp(-d(1, 0)) + np.exp(-d(1, 2)))))
    assert reference_loss(points, related) == pytest.approx(want, rel=1e-13)
    assert hierarchy.hierarchy_loss(points, related)[0] == pytest.approx(want, rel=1e-12)


def test_hierarchy_claim_refuses_a_loss_of_another_distance(monkeypatch):
    """An isometry-invariant loss of a wrong distance (3 - delta in place of 1 + 2 delta) would
    pass the invariance part; the loss part notices it and the claim does not decide."""
    real = hierarchy._distance_and_gradient

    def wrong(x):
        D, G = real(x)
        return np.arccosh(np.maximum(3 - (np.cosh(D) - 1) / 2, 1.0)), G

    claim = HierarchyPreservationClaim()
    params = {"tree": "balanced:3:2"}
    assert claim.verify(params, "numeric", CheckContext(seed=0)).status.value == "refuted"
    monkeypatch.setattr(hierarchy, "_distance_and_gradient", wrong)
    with pytest.raises(BadInput, match="Nickel & Kiela"):
        claim.check_numeric(claim.resolve(params), CheckContext(seed=0))

"""multihead-mixing: the GL_H symmetry of H heads with a >= d (issue 24, derived)."""

import numpy as np
import pytest

from attngeom.core.claim import CheckContext
from attngeom.kernels.sampling import Sampler
from attngeom.lightning_alg.claims.beyond_mixing import MULTIHEAD_MIXING
from attngeom.lightning_alg.hmk.dimension import Architecture
from attngeom.lightning_alg.models import mixing
from attngeom.lightning_alg.models.network import VariantNetwork
from attngeom.lightning_alg.models.variant import Variant

POINT = dict(d=[3], dprime=3, a=[3], t=2, heads=2)


def _verify(params):
    return MULTIHEAD_MIXING.verify(dict(params), "exact", CheckContext())


def test_mixing_leaves_the_network_unchanged_at_a_finite_group_element():
    """Not only the tangents: a random G in GL_H applied to (V_h, A_h) (A_h = K_h^T Q_h, the
    new A_h carried by Q_h through the right inverse K_h (K_h^T K_h)^{-1} of K_h^T) gives
    the same output (float64; the tangents are checked exactly by the claim)."""
    net = VariantNetwork(Architecture((3, 2), (4,), 3), Variant(3))
    sampler = Sampler(5)
    w = net.sample_weights(sampler.spawn(1), None)
    G = sampler.spawn(3).floats((3, 3)) + 2 * np.eye(3)
    inv = np.linalg.inv(G)
    A = [w[3 * h + 1].T @ w[3 * h] for h in range(3)]
    new = [x.copy() for x in w]
    for h in range(3):
        K = w[3 * h + 1]
        new[3 * h + 2] = sum(w[3 * g + 2] * G[g, h] for g in range(3))
        new[3 * h] = K @ np.linalg.inv(K.T @ K) @ sum(A[g] * inv[h, g] for g in range(3))
    X = sampler.spawn(2).floats((3, 3))
    phi = net.function(np.float64)
    assert np.allclose(phi(w, X), phi(new, X), rtol=1e-10, atol=1e-10)
    assert not np.allclose(w[2], new[2])


def test_examples_hold_and_are_certified():
    for example in MULTIHEAD_MIXING.examples:
        verdict = _verify(example)
        assert verdict.status.value == "verified", verdict.summary
        assert verdict.evidence["parts"]["dimension"]["certified"]
        assert verdict.evidence["parts"]["mixing-kernel"]["nonzero_entries"] == 0


def test_sweep_holds_and_says_it_is_evidence():
    verdict = _verify({})
    assert verdict.status.value == "verified", verdict.summary
    assert "not a proof" in verdict.summary
    assert len(verdict.evidence["parts"]) == len(MULTIHEAD_MIXING.grid)


def test_mutated_defect_is_refuted(monkeypatch):
    monkeypatch.setattr(mixing, "mixing_defect", lambda H: H * (H + 1))
    verdict = _verify(POINT)
    assert verdict.status.value == "refuted"
    assert verdict.evidence["parts"]["dimension"]["status"] == "refuted"


def test_mutated_tangent_is_refuted(monkeypatch):
    original = mixing.head_mixing_tangents

    def flipped(net, weights, prime):
        rows = original(net, weights, prime)
        sizes = np.cumsum([0] + [int(np.prod(s)) for s in net.weight_shapes()])
        rows[:, sizes[2]:sizes[3]] = (-rows[:, sizes[2]:sizes[3]]) % prime   # dV_1 -> -dV_1
        return rows

    monkeypatch.setattr(mixing, "head_mixing_tangents", flipped)
    verdict = _verify(POINT)
    assert verdict.status.value == "refuted"
    assert verdict.evidence["parts"]["mixing-kernel"]["status"] == "refuted"


@pytest.mark.parametrize("params,words", [
    (dict(d=[3], dprime=2, a=[2], t=2, heads=2), "a >= d"),
    (dict(d=[3], dprime=1, a=[3], t=2, heads=2), "d' >= 2"),
    (dict(d=[2], dprime=2, a=[2], t=2, heads=5), "H <= min"),
])
def test_outside_the_hypotheses(params, words):
    verdict = _verify(params)
    assert verdict.status.value == "not-applicable" and words in verdict.summary

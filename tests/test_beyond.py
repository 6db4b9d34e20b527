"""Multi-head, skip and causal lightning attention (issue 24; ADM §6, HMK §5)."""

import numpy as np
import pytest

from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler
from attngeom.lightning_alg.claims import beyond
from attngeom.lightning_alg.hmk.dimension import Architecture
from attngeom.lightning_alg.models import dimension as model_dimension
from attngeom.lightning_alg.models.network import VariantNetwork
from attngeom.lightning_alg.models.variant import Variant


def direct(X, layers, skip, causal):
    """The network by loops over tokens: column j of a head is
    sum_{n (<= j if causal)} (x_n^T A x_j) V x_n; heads summed; + X or + W_s X."""
    for heads, S in layers:
        d_out, t = heads[0][1].shape[0], X.shape[1]
        Y = np.zeros((d_out, t))
        for A, V in heads:
            for j in range(t):
                for n in range(j + 1 if causal else t):
                    Y[:, j] += (X[:, n] @ A @ X[:, j]) * (V @ X[:, n])
        X = Y + (X if skip == "identity" else S @ X if skip == "linear" else 0)
    return X


@pytest.mark.parametrize("d,a,t,heads,skip,causal", [
    ((3, 2), (2,), 3, 2, "none", False), ((3, 3), (2,), 4, 3, "identity", True),
    ((3, 2), (3,), 3, 1, "linear", True), ((2, 3, 2), (2, 1), 3, 2, "linear", False),
    ((3, 3, 3), (2, 2), 3, 2, "identity", True)])
def test_network_equals_direct_numpy_evaluation(d, a, t, heads, skip, causal):
    net = VariantNetwork(Architecture(d, a, t), Variant(heads, skip, causal))
    sampler = Sampler(3)
    weights = net.sample_weights(sampler.spawn(1), None)
    X = sampler.spawn(2).floats((d[0], t))
    layers = [([(h.A, h.V) for h in hs], S) for hs, S, _ in net.split(weights)]
    expected = direct(X, layers, skip, causal)
    got = net.function(np.float64)(weights, X)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert net.parameters == sum(w.size for w in weights)


def test_symmetries_lie_in_the_kernel_and_bad_input_is_refused():
    net = VariantNetwork(Architecture((3, 3, 3), (2, 2), 3), Variant(2, "linear", True))
    m = model_dimension.measure_variant(net, Sampler(0))
    assert m.kernel_residual == 0 and m.certified
    assert m.parameters - m.rank == model_dimension.symmetry_orbit_dimension(net)
    for bad in ({"heads": 0}, {"skip": "foo"}, {"heads": True}):
        with pytest.raises(BadInput):
            Variant(**bad)
    with pytest.raises(BadInput, match="equal widths"):
        VariantNetwork(Architecture((3, 2), (2,), 2), Variant(skip="identity"))


def test_scaling_survives_the_identity_skip():
    """f(X) = V X (X^T A X) is unchanged by (cA, V/c), so f(X) + X is too: the fibre of a
    single layer with identity skip is a^2 + 1 (GL_a and the scaling), not a^2."""
    net = VariantNetwork(Architecture((3, 3), (2,), 2), Variant(skip="identity"))
    m = model_dimension.measure_variant(net, Sampler(0))
    assert m.certified and m.parameters - m.rank == 2 * 2 + 1


def _point(claim, **params):
    return claim.verify(params, "exact", CheckContext())


def test_claims_at_their_examples():
    assert _point(beyond.MULTIHEAD_JOIN, d=[3], dprime=2, a=[2], t=2, heads=2).status.value == "verified"
    bad = _point(beyond.MULTIHEAD_JOIN, d=[3], dprime=2, a=[3], t=2, heads=2)
    assert bad.status.value == "refuted"        # a defect case: rank 26 < 28
    assert bad.evidence["measured_rank"] < bad.evidence["formula"]
    for example in beyond.SKIP_FIBRE.examples + beyond.CAUSAL_DIMENSION.examples:
        claim = beyond.SKIP_FIBRE if "skip" in example else beyond.CAUSAL_DIMENSION
        assert claim.verify(dict(example), "exact", CheckContext()).status.value == "verified"


@pytest.mark.parametrize("claim,name,params", [
    (beyond.MULTIHEAD_JOIN, "join_expected_dimension", dict(d=[3], dprime=2, a=[2], t=2, heads=2)),
    (beyond.SKIP_FIBRE, "symmetry_orbit_dimension", dict(d=[3], a=[2], t=2, skip="identity")),
    (beyond.CAUSAL_DIMENSION, "unmasked_dimension", dict(d=[3], dprime=2, a=[2], t=3, causal=True)),
])
def test_mutated_formula_is_refuted(monkeypatch, claim, name, params):
    original = getattr(model_dimension, name)
    monkeypatch.setattr(model_dimension, name, lambda *a: original(*a) + 1)
    assert _point(claim, **params).status.value == "refuted"
    monkeypatch.setattr(model_dimension, name, lambda *a: original(*a) - 1)
    assert _point(claim, **params).status.value == "refuted"


def test_skip_and_causal_sweeps_hold():
    for claim in (beyond.SKIP_FIBRE, beyond.CAUSAL_DIMENSION):
        verdict = claim.verify({}, "exact", CheckContext())
        assert verdict.status.value == "verified", verdict.summary
        assert "not a proof" in verdict.summary


@pytest.mark.slow
def test_multihead_sweep_finds_defects():
    verdict = beyond.MULTIHEAD_JOIN.verify({}, "exact", CheckContext())
    assert verdict.status.value == "refuted"
    parts = verdict.evidence["parts"]
    defects = {n: p["formula"] - p["measured_rank"] for n, p in parts.items() if p["status"] == "refuted"}
    assert defects["d=3,3/a=3/t=2/H=2/skip=none"] == 2
    assert all(p["measured_rank"] <= p["formula"] for p in parts.values())

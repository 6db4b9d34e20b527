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


# -- issue 48 / 51: the model check, the head mixing with a skip, the routing of `dimension` --
from attngeom.lightning_alg.claims.beyond_base import model_check  # noqa: E402
from attngeom.lightning_alg.models import network as network_module  # noqa: E402
from attngeom.lightning_alg.models.by_tokens import output_by_tokens  # noqa: E402


@pytest.mark.parametrize("mask", [lambda t, dtype=np.int64: np.ones((t, t), dtype=dtype),
                                  lambda t, dtype=np.int64: np.tril(np.ones((t, t), dtype=dtype))],
                         ids=["removed", "transposed"])
def test_a_lost_or_transposed_mask_is_refuted(monkeypatch, mask):
    """'masked = unmasked' holds trivially for a network without its mask: the model check
    (network = token-by-token causal construction, != the unmasked one) refutes it."""
    monkeypatch.setattr(network_module, "causal_mask", mask)
    for params in CAUSAL_POINTS:
        verdict = _point(beyond.CAUSAL_DIMENSION, **params)
        assert verdict.status.value == "refuted" and "not the model defined" in verdict.summary


CAUSAL_POINTS = (dict(d=[3], dprime=2, a=[2], t=3, causal=True),
                 dict(d=[3, 3, 3], a=[2, 2], t=3, causal=True))


def test_a_lost_skip_is_refuted(monkeypatch):
    """At one layer the fibre with the identity skip equals the fibre without (a^2 + 1): the
    rank alone cannot tell a lost skip; the model check does."""
    monkeypatch.setattr(network_module, "with_skip", lambda out, X, skip, S=None: out)
    verdict = _point(beyond.SKIP_FIBRE, d=[3], a=[2], t=2, skip="identity")
    assert verdict.status.value == "refuted" and "not the model defined" in verdict.summary


def test_model_check_passes_and_records_the_comparisons():
    net = VariantNetwork(Architecture((3, 3, 3), (2, 2), 3), Variant(2, "linear", True))
    problem, evidence = model_check(net, Sampler(4))
    assert problem is None and evidence["equals_definition"]
    assert evidence["differs_from"] == ["unmasked", "without skip"]


def test_by_tokens_is_the_definition_on_a_hand_example():
    """One head, t = 2, d = d' = 1, causal: column 1 = (x1 K Q x1) V x1, column 2 =
    (x1 K Q x2) V x1 + (x2 K Q x2) V x2; + X with the identity skip."""
    Q, K, V, x1, x2 = 2, 3, 5, 7, 11
    w = [np.array([[Q]]), np.array([[K]]), np.array([[V]])]
    out = output_by_tokens(w, np.array([[x1, x2]]), 1, "identity", True, 1)
    assert out.tolist() == [[x1 * K * Q * x1 * V * x1 + x1,
                             x1 * K * Q * x2 * V * x1 + x2 * K * Q * x2 * V * x2 + x2]]


@pytest.mark.parametrize("params,rank", [
    (dict(d=[3], dprime=3, a=[3], t=2, heads=2, skip="identity"), 32),      # issue 51: not 34
    (dict(d=[2, 2, 2], a=[2, 2], t=3, heads=2, skip="identity"), 24),       # issue 51: not 28
    (dict(d=[3], a=[2], t=2, heads=3, skip="identity"), 45),                # capped: 3 (9 + 9 - 3)
    (dict(d=[3], a=[4], t=2, heads=2, skip="linear"), 41),
])
def test_skip_fibre_counts_the_head_mixing(params, rank):
    verdict = _point(beyond.SKIP_FIBRE, **params)
    assert verdict.status.value == "verified", verdict.summary
    assert verdict.evidence["formula"] == verdict.evidence["measured_rank"] == rank


def test_skip_fibre_is_no_erratum_of_hmk(monkeypatch):
    """A refutation of skip-fibre refutes this project's formula: its source is attngeom's,
    so `attngeom errata` files nothing at HMK §5 (which prints no formula)."""
    from attngeom.core.errata_report import errata_rows
    original = model_dimension.symmetry_orbit_dimension
    monkeypatch.setattr(model_dimension, "symmetry_orbit_dimension", lambda net: original(net) - 2)
    verdict = _point(beyond.SKIP_FIBRE, d=[2, 2, 2], a=[2, 2], t=3, heads=2, skip="identity")
    assert verdict.status.value == "refuted"
    assert verdict.source.startswith("attngeom") and beyond.CAUSAL_DIMENSION.source.startswith("attngeom")
    assert errata_rows([verdict.to_json()]) == []


@pytest.mark.parametrize("params,claim,formula", [
    (dict(d=[4, 2], a=[4], t=2, heads=2), "multihead-mixing", 44),          # issue 51: not join 46
    (dict(d=[3, 2], a=[2], t=2, heads=2), "multihead-join", 26),
    (dict(d=[2, 2, 2], a=[2, 2], t=3, heads=2, skip="identity"), "skip-fibre", 24),
])
def test_dimension_routes_to_the_right_expected_dimension(params, claim, formula):
    from attngeom.lightning_alg.claims.hmk import dimension_report, run_dimension
    verdict = run_dimension(params, False, "auto", CheckContext())
    report = dimension_report(verdict)
    assert (verdict.claim, verdict.status.value) == (claim, "verified"), verdict.summary
    assert report["formula"] == report["measured_rank"] == formula

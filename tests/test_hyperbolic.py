"""RGT geometry: the Poincare ball, Lorentz model, products, Frechet means, attention variants
and their claims (verdicts at the examples, mutation tests, bad input, backends, geoopt)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from attngeom.geometry_proofs.hyperbolic import (
    attention, cost, frechet, layers, lorentz, poincare, products, tangent_error, volume)
from attngeom.geometry_proofs.hyperbolic.accelerated import gram
from attngeom.geometry_proofs.hyperbolic import frechet_claims, volume_claims
from attngeom.geometry_proofs.hyperbolic.cost_claims import CostClaim
from attngeom.geometry_proofs.hyperbolic.frechet_claims import (
    EinsteinMidpointClaim, FrechetAlgorithmClaim, GyroAttentionWeightsClaim)
from attngeom.geometry_proofs.hyperbolic.geometry_claims import (
    ClippingClaim, ExpLogClaim, GeodesicDistanceClaim, GyrogroupClaim, LorentzIsometryClaim, ParallelTransportClaim,
    PoincareCurvatureClaim)
from attngeom.geometry_proofs.hyperbolic.layers_claims import GeodesicResidualClaim, RiemannianNormClaim, RiemannianSGDClaim
from attngeom.geometry_proofs.hyperbolic.products_claims import ProductManifoldClaim
from attngeom.geometry_proofs.hyperbolic.stability_claims import LorentzStabilityClaim
from attngeom.geometry_proofs.hyperbolic.tangent_claims import TangentAttentionErrorClaim
from attngeom.geometry_proofs.hyperbolic.volume_claims import VolumeGrowthClaim
from attngeom.kernels.backend import get_backend
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BackendUnavailable, BadInput
from attngeom.kernels.sampling import Sampler

ALL = [PoincareCurvatureClaim(), ClippingClaim(), GyrogroupClaim(), GeodesicDistanceClaim(), ExpLogClaim(),
       LorentzIsometryClaim(), ParallelTransportClaim(), GyroAttentionWeightsClaim(),
       FrechetAlgorithmClaim(), EinsteinMidpointClaim(), GeodesicResidualClaim(),
       RiemannianNormClaim(), RiemannianSGDClaim(), TangentAttentionErrorClaim(),
       VolumeGrowthClaim(), ProductManifoldClaim(), CostClaim(), LorentzStabilityClaim()]

#: The verdict of every claim at each of its examples, as measured (docs/hyperbolic.md).
EXPECTED = {
    "poincare-curvature": ["proved", "proved", "consistent"],
    "poincare-clipping": ["consistent", "consistent"],
    "mobius-gyrogroup": ["proved", "consistent"],
    "poincare-distance-geodesic": ["consistent", "consistent"],
    "exp-log-inverse": ["consistent", "consistent"],
    "lorentz-ball-isometry": ["consistent", "consistent"],
    "parallel-transport": ["consistent", "consistent"],
    "gyro-attention-weights": ["consistent", "consistent"],
    "frechet-algorithm-1": ["consistent", "consistent", "refuted"],
    "einstein-midpoint-shortcut": ["consistent", "consistent"],
    "geodesic-residual": ["consistent", "consistent"],
    "riemannian-norm": ["consistent", "consistent"],
    "riemannian-sgd": ["consistent", "consistent"],
    "tangent-attention-error": ["refuted", "consistent"],
    "hyperbolic-volume-growth": ["proved", "proved", "refuted", "refuted"],
    "product-manifold": ["consistent", "consistent"],
    "riemannian-attention-cost": ["consistent", "consistent"],
    "lorentz-stability": ["consistent"],
}


def verify(claim, example: dict):
    example = dict(example)
    method = example.pop("method", "auto")
    samples = example.pop("samples", None)
    return claim.verify(example, method, CheckContext(seed=0, samples=samples))


def by_id(claim_id):
    return next(c for c in ALL if c.id == claim_id)


# --------------------------------------------------------------------------------------
# verdicts at the examples
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("claim", ALL, ids=lambda c: c.id)
def test_examples_verdicts(claim):
    assert claim.examples, claim.id
    got = [verify(claim, ex).status.value for ex in claim.examples]
    assert got == EXPECTED[claim.id]


def test_registry_lists_every_claim(run_cli):
    code, out, _ = run_cli("list", "--source", "RGT")
    assert code == 0
    for claim_id in EXPECTED:
        assert claim_id in out


# --------------------------------------------------------------------------------------
# mutation tests: a changed formula makes the claim say refuted
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["symbolic", "numeric"])
def test_mutation_curvature(monkeypatch, method):
    """lambda = 1/(1 - c|x|^2) instead of 2/(1 - c|x|^2): curvature -4c."""
    monkeypatch.setattr(poincare, "metric_field", lambda phi, ops, c: (1 / (1 - c * (phi * phi).sum())) ** 2
                        * ops.const(np.eye(phi.shape[-1], dtype=int)))
    assert verify(by_id("poincare-curvature"), {"d": 2, "method": method}).status.value == "refuted"


def test_mutation_lorentz_stability(monkeypatch):
    original = lorentz.distance
    monkeypatch.setattr(lorentz, "distance", lambda x, y, c: original(x, y, c) * (1 + 1e-6))
    assert verify(by_id("lorentz-stability"), {}).status.value == "refuted"


def test_mutation_clipping(monkeypatch):
    monkeypatch.setattr(poincare, "project", lambda x, c, eps=poincare.PAPER_EPS: x * 0.999)
    assert verify(by_id("poincare-clipping"), {}).status.value == "refuted"


@pytest.mark.parametrize("curvature", ["1", "3/2", "1/4"])
def test_mutation_clipping_radius(monkeypatch, curvature):
    """Issue 27 (mutation audit): a clip radius 1/sqrt(c) - 10 eps in place of eq (28)'s
    1/sqrt(c) - eps kept every point inside the ball with finite distances and passed; the
    clipped points must sit at r_max."""
    original = poincare.project
    monkeypatch.setattr(poincare, "project", lambda x, c, eps=poincare.PAPER_EPS: original(x, c, 10 * eps))
    verdict = verify(by_id("poincare-clipping"), {"curvature": curvature})
    assert verdict.status.value == "refuted" and "clipped off r_max" in verdict.summary


def _flipped_mobius(x, y, c):
    """Eq (9) with one sign changed: (1 + c|x|^2) y instead of (1 - c|x|^2) y."""
    xy, x2, y2 = poincare._dot(x, y), poincare._sqnorm(x), poincare._sqnorm(y)
    return ((1 + 2 * c * xy + c * y2) * x + (1 + c * x2) * y) / (1 + 2 * c * xy + c * c * x2 * y2)


@pytest.mark.parametrize("method", ["symbolic", "numeric"])
def test_mutation_gyrogroup(monkeypatch, method):
    monkeypatch.setattr(poincare, "_mobius_add", _flipped_mobius)
    assert verify(by_id("mobius-gyrogroup"), {"method": method, "samples": 20}).status.value == "refuted"


@pytest.mark.parametrize("curvature, witness", [("3/2", "x = (1/2, 0)"), ("7", "x = (1/4, 0)")])
def test_gyrogroup_witnesses_at_the_given_curvature(curvature, witness):
    """Issue 48: the non-commutativity / non-associativity witnesses are evaluated at --curvature
    (not at c = 1), scaled by 1/k into the ball c|p|^2 < 1."""
    verdict = verify(by_id("mobius-gyrogroup"), {"curvature": curvature})
    assert verdict.status.value == "proved"
    assert witness in verdict.summary and f"c = {curvature}" in verdict.summary


def test_mutation_distance(monkeypatch):
    original = poincare.distance
    monkeypatch.setattr(poincare, "distance", lambda x, y, c: 1.01 * original(x, y, c))
    assert verify(by_id("poincare-distance-geodesic"), {"samples": 1}).status.value == "refuted"


def test_mutation_exp_log(monkeypatch):
    original = poincare.log_map
    monkeypatch.setattr(poincare, "log_map", lambda x, y, c: 0.99 * original(x, y, c))
    assert verify(by_id("exp-log-inverse"), {}).status.value == "refuted"


def test_mutation_lorentz(monkeypatch):
    monkeypatch.setattr(lorentz, "lorentz_inner", lambda x, y: (x * y).sum(-1, keepdims=True))
    assert verify(by_id("lorentz-ball-isometry"), {}).status.value == "refuted"


def _consistent_lambda(monkeypatch, factor, conformal=True, maps=True):
    """lambda_x replaced by factor(x, c) in conformal_factor and in exp / log (which carry
    their own lambda): exp'_x(v) = exp_x(r v), log'_x = log_x / r with r = lambda' / lambda,
    so the three stay mutually consistent and only the metric (eq 8) can tell."""
    cf, exp, log = poincare.conformal_factor, poincare.exp_map, poincare.log_map
    ratio = lambda x, c: factor(x, c) / cf(x, c, keepdims=True)
    if conformal:
        monkeypatch.setattr(poincare, "conformal_factor",
                            lambda x, c, keepdims=False: factor(x, c) if keepdims else factor(x, c)[..., 0])
    if maps:
        monkeypatch.setattr(poincare, "exp_map", lambda x, v, c: exp(x, ratio(x, c) * v, c))
        monkeypatch.setattr(poincare, "log_map", lambda x, y, c: log(x, y, c) / ratio(x, c))


_LAMBDAS = {"without the 2": lambda x, c: 1.0 / (1.0 - c * (x * x).sum(-1, keepdims=True)),
            # sqrt(c) lambda: 2 / (1 - c|x|^2) at c = 1, invisible there
            "times sqrt(c)": lambda x, c: 2.0 * np.sqrt(c) / (1.0 - c * (x * x).sum(-1, keepdims=True))}


@pytest.mark.parametrize("mutation", sorted(_LAMBDAS))
@pytest.mark.parametrize("where", ["all three", "exp and log", "conformal_factor"])
def test_mutation_exp_log_lambda_is_refuted_by_every_certified_example(monkeypatch, mutation, where):
    _consistent_lambda(monkeypatch, _LAMBDAS[mutation], conformal=where != "exp and log",
                       maps=where != "conformal_factor")
    claim = by_id("exp-log-inverse")
    for example in list(claim.examples) + [{}]:
        verdict = verify(claim, example)
        assert verdict.status.value == "refuted", example
        if where == "exp and log":    # d(x, exp'_x v) = lambda' |v| against eq (8)'s lambda
            assert verdict.counterexample["check"] == "distance"


def test_exp_log_examples_and_default_use_c_other_than_1():
    claim = by_id("exp-log-inverse")
    assert all(ex["curvature"] != "1" for ex in claim.examples)
    assert claim.resolve({})["curvature"] == "2"


def _isometry_without_sqrt_c(monkeypatch, where):
    real_distance = lorentz.distance
    mutated = {
        "from_ball": lambda x, c: np.concatenate(
            [(1 + c * (x * x).sum(-1, keepdims=True)) / (1 - c * (x * x).sum(-1, keepdims=True)),
             2 * x / (1 - c * (x * x).sum(-1, keepdims=True))], axis=-1),
        "to_ball": lambda x, c: x[..., 1:] / (1 + x[..., :1]),
        "distance": lambda x, y, c: real_distance(x, y, c) * np.sqrt(c)}
    monkeypatch.setattr(lorentz, where, mutated[where])


@pytest.mark.parametrize("where", ["from_ball", "to_ball", "distance"])
def test_mutation_lorentz_sqrt_c_is_refuted_by_every_certified_example(monkeypatch, where):
    # at c = 1 (the old first example) every one of these is the true formula
    _isometry_without_sqrt_c(monkeypatch, where)
    claim = by_id("lorentz-ball-isometry")
    for example in list(claim.examples) + [{}]:
        assert verify(claim, example).status.value == "refuted", example
    assert all(ex["curvature"] != "1" for ex in claim.examples)
    assert verify(claim, {"curvature": "1"}).status.value == "consistent"


def test_mutation_transport(monkeypatch):
    monkeypatch.setattr(poincare, "parallel_transport", lambda x, y, v, c: poincare.gyration(y, -x, v, c))
    assert verify(by_id("parallel-transport"), {"samples": 1}).status.value == "refuted"


def test_mutation_attention_scores(monkeypatch):
    original = attention.geodesic_scores
    monkeypatch.setattr(attention, "geodesic_scores", lambda q, k, c: -original(q, k, c))
    assert verify(by_id("gyro-attention-weights"), {"tokens": 8}).status.value == "refuted"


def test_mutation_frechet_rate(monkeypatch):
    original = frechet.riemannian_hessian
    monkeypatch.setattr(frechet, "riemannian_hessian", lambda *a, **k: 0.5 * original(*a, **k))
    ex = {"d": 3, "radius": "1", "tokens": 6, "eta": "1.5"}
    assert verify(by_id("frechet-algorithm-1"), ex).status.value == "refuted"


def test_frechet_divergence_is_a_missing_hypothesis_whose_condition_is_checked(monkeypatch):
    witness = FrechetAlgorithmClaim.examples[2]
    verdict = verify(by_id("frechet-algorithm-1"), witness)
    assert verdict.status.value == "refuted" and verdict.error_kind.value == "missing-hypothesis"
    parts = verdict.evidence["parts"]
    assert parts["printed"]["status"] == "refuted" and parts["condition"]["status"] == "consistent"
    condition = parts["condition"]
    # the condition itself is tested: a step inside it reaches the mean, one outside does not
    assert condition["inside"]["eta"] < condition["eta_max"] < condition["outside"]["eta"]
    assert condition["inside"]["reached_mean"] and not condition["outside"]["converged"]
    assert condition["eta_max"] < float(Fraction(witness["eta"]))
    # the verdict prints the inequality that holds
    assert "eta = 0.9 >= 2/lambda_max = 0.8597" in verdict.summary
    # a "correction" step outside the condition (1.1 * 2/lambda_max) fails the check, and the
    # refutation no longer claims a missing hypothesis
    monkeypatch.setattr(frechet_claims, "condition_steps",
                        lambda eig: (2.2 / float(np.max(eig)), 2.4 / float(np.max(eig))))
    broken = verify(by_id("frechet-algorithm-1"), witness)
    assert broken.evidence["parts"]["condition"]["status"] == "refuted"
    assert broken.error_kind.value == "false-statement"


@pytest.mark.parametrize("factor", [4.0, 1.0])
def test_frechet_condition_loosened_or_tightened(monkeypatch, factor):
    """Issue 48: the stated condition eta < 2/lambda_max loosened to 4/lambda_max (or tightened
    to 1/lambda_max) is caught at the default (part condition) and at the witness (no missing
    hypothesis then), and no verdict text contradicts itself."""
    monkeypatch.setattr(frechet_claims, "STEP_CONDITION", factor)
    default = verify(by_id("frechet-algorithm-1"), {})
    assert default.status.value == "refuted"
    witness = verify(by_id("frechet-algorithm-1"), FrechetAlgorithmClaim.examples[2])
    assert witness.status.value == "refuted" and witness.error_kind.value == "false-statement"
    eta_max = witness.evidence["parts"]["printed"]["eta_max"]
    assert (f"eta = 0.9 < {factor:g}/lambda_max" in witness.summary) == (0.9 < eta_max)
    assert (f"eta = 0.9 >= {factor:g}/lambda_max" in witness.summary) == (0.9 >= eta_max)


def test_mutation_einstein(monkeypatch):
    monkeypatch.setattr(frechet, "einstein_midpoint", lambda points, weights, c: points[..., 0, :])
    ex = {"d": 2, "curvature": "1/2", "radius": "3/4", "tokens": 5, "variant": "printed"}
    verdict = verify(by_id("einstein-midpoint-shortcut"), ex)
    assert verdict.status.value == "refuted"
    assert verdict.evidence["parts"]["einstein"]["status"] == "refuted"
    assert verdict.evidence["parts"]["naming"]["status"] == "refuted"


def test_einstein_misnomer_is_recorded_not_refuted(monkeypatch):
    ex = EinsteinMidpointClaim.examples[0]
    verdict = verify(by_id("einstein-midpoint-shortcut"), ex)
    assert verdict.status.value == "consistent" and verdict.error_kind is None
    assert [e.kind.value for e in verdict.errata] == ["misnomer"]
    naming = verdict.evidence["parts"]["naming"]
    assert naming["distance_step_midpoint"] > 1e-3       # two different points
    # the one-step reading replaced by v_1 (no step at all): not a stand-in, refuted
    original = frechet.frechet_mean
    monkeypatch.setattr(frechet, "frechet_mean", lambda points, weights, c, steps=None, **k:
                        original(points, weights, c, steps=0, **k) if steps == 1
                        else original(points, weights, c, steps=steps, **k))
    broken = verify(by_id("einstein-midpoint-shortcut"), {**ex, "variant": "corrected"})
    assert broken.status.value == "refuted" and broken.evidence["parts"]["one-step"]["status"] == "refuted"


def test_mutation_residual(monkeypatch):
    monkeypatch.setattr(poincare, "parallel_transport", lambda x, y, v, c: v)
    assert verify(by_id("geodesic-residual"), {"samples": 20}).status.value == "refuted"


def test_mutation_riemannian_norm(monkeypatch):
    def origin_mean(points, c):
        return poincare.exp_map0(poincare.log_map0(points, c).mean(0), c)
    monkeypatch.setattr(layers, "batch_mean", origin_mean)
    assert verify(by_id("riemannian-norm"), {"tokens": 16}).status.value == "refuted"


def test_mutation_rsgd(monkeypatch):
    monkeypatch.setattr(poincare, "riemannian_gradient",
                        lambda x, g, c: (1 - c * poincare._sqnorm(x)) / 2 * g)
    assert verify(by_id("riemannian-sgd"), {"samples": 10}).status.value == "refuted"


def test_mutation_tangent(monkeypatch):
    monkeypatch.setitem(tangent_error.VARIANTS, "query", attention.tangent_attention_printed)
    ex = {"d": 4, "tokens": 8, "variant": "corrected"}
    assert verify(by_id("tangent-attention-error"), ex).status.value == "refuted"


def test_tangent_error_printed_is_a_misprinted_formula_whose_correction_is_checked(monkeypatch):
    printed = TangentAttentionErrorClaim.examples[0]
    verdict = verify(by_id("tangent-attention-error"), printed)
    assert verdict.error_kind.value == "misprinted-formula"
    assert verdict.evidence["parts"]["corrected"]["status"] == "consistent"
    assert verdict.counterexample["c"] == 1e-6
    # the correction replaced by the printed line 3: its check fails, no misprint is claimed
    monkeypatch.setitem(tangent_error.VARIANTS, "query", attention.tangent_attention_printed)
    broken = verify(by_id("tangent-attention-error"), printed)
    assert broken.evidence["parts"]["corrected"]["status"] == "refuted"
    assert broken.error_kind.value == "false-statement"


def test_mutation_volume(monkeypatch):
    import sympy

    def wrong(d, c, r):  # sinh^d instead of sinh^(d-1)
        t = sympy.Symbol("t", positive=True)
        return volume.sphere_area(d) * sympy.integrate(sympy.sinh(t).rewrite(sympy.exp) ** d, (t, 0, r))
    monkeypatch.setattr(volume, "volume_symbolic", wrong)
    assert verify(by_id("hyperbolic-volume-growth"), {"d": 2}).status.value == "refuted"


@pytest.mark.parametrize("example", [{"d": 3, "curvature": "4"},
                                     {"d": 10, "curvature": "1/4", "method": "numeric"}])
def test_volume_rate_is_a_convention_whose_forms_are_checked(monkeypatch, example):
    verdict = verify(by_id("hyperbolic-volume-growth"), example)
    assert verdict.status.value == "refuted" and verdict.error_kind.value == "convention"
    parts = verdict.evidence["parts"]
    assert parts["printed"]["status"] == "refuted"
    assert parts["curvature-1"]["status"] != "refuted" and parts["rate"]["status"] != "refuted"
    # a wrong correction (rate (d-1) c instead of (d-1) sqrt(c)): its check fails, no convention
    monkeypatch.setattr(volume_claims, "growth_rate",
                        lambda d, c: (d - 1) * c)
    broken = verify(by_id("hyperbolic-volume-growth"), example)
    assert broken.status.value == "refuted" and broken.error_kind.value != "convention"


def test_mutation_product(monkeypatch):
    monkeypatch.setattr(products.ProductManifold, "distance",
                        lambda self, x, y: sum(f.distance(a, b) for (f, _), a, b in
                                               zip(self.factors, self.split(x), self.split(y))))
    assert verify(by_id("product-manifold"), {"samples": 3}).status.value == "refuted"


def test_mutation_cost_counts(monkeypatch):
    # the element-wise Algorithm 3 (2 N^2 Mobius additions over d-vectors) in place of the Gram
    # form: the d-vector work grows like N^2, outside Prop 9.3's optimized class
    monkeypatch.setattr(gram, "tangent_attention_printed",
                        lambda q, k, v, c, w_v=None: attention.tangent_attention_printed(q, k, v, c, w_v))
    verdict = verify(by_id("riemannian-attention-cost"), {"tokens": 32, "model_dim": 8})
    assert verdict.status.value == "refuted"
    assert verdict.counterexample["implementation"] == "tangent_printed"


@pytest.mark.parametrize("kernel, wrong", [
    # a Gram factor: a_i = c / (1 - c|x_i|^2) with c dropped (invisible at c = 1)
    ("_ball_left", lambda original: lambda x, c, check=None, sq=None: original(x, 1.0, check, sq)),
    # zero steps of Algorithm 1 in the naive layer
    ("geodesic_attention", lambda original: lambda q, k, v, c, steps=3, **kw: original(q, k, v, c, 0, **kw)),
    ("einstein_midpoint", lambda original: lambda w, p, c: original(w, p, 1.0)),
    ("lorentz_distance", lambda original: lambda x, y, c: original(x, y, c) * (1 + 1e-6)),
    ("lorentz_midpoint", lambda original: lambda w, p, c: original(w * w, p, c)),
])
def test_mutation_cost_values(monkeypatch, kernel, wrong):
    """Issue 48: the cost claim checks the values of the kernels it counts and times
    (against element-wise references); a wrong Gram factor or zero Algorithm 1 steps refute."""
    monkeypatch.setattr(gram, kernel, wrong(getattr(gram, kernel)))
    verdict = verify(by_id("riemannian-attention-cost"), {"tokens": 32, "model_dim": 8})
    assert verdict.status.value == "refuted"
    assert verdict.evidence["parts"]["values"]["status"] == "refuted"


def test_cost_values_cover_every_gram_kernel():
    """Every public kernel of gram (but the counter and helpers) has an element-wise
    reference in cost.kernel_agreement, within 1e-12 here."""
    errors = cost.kernel_agreement(Sampler(2), 24, 5, 1.7)
    public = {name for name in dir(gram) if not name.startswith("_") and callable(getattr(gram, name))
              and getattr(getattr(gram, name), "__module__", "") == gram.__name__}
    public -= {"GramCount", "matmul"}
    assert public <= set(errors), public - set(errors)
    assert max(errors.values()) <= 1e-12


def test_mutation_cost_pins_algorithm_1_steps(monkeypatch):
    monkeypatch.setattr(cost, "NAIVE_STEPS", 2)
    verdict = verify(by_id("riemannian-attention-cost"), {"tokens": 32, "model_dim": 8})
    assert verdict.status.value == "refuted"
    assert verdict.evidence["parts"]["geodesic"]["status"] == "refuted"


def test_mutation_gyro_distance(monkeypatch):
    """Issue 48: the scores are checked against a distance independent of poincare.distance
    (the Lorentz form): a factor inside eq (10)'s artanh refutes."""
    def distance(x, y, c):
        sc = np.sqrt(c)
        return (2 / sc) * np.arctanh(np.clip(0.999 * sc * poincare._norm(poincare._mobius_add(-x, y, c)),
                                             0, 1 - 1e-16))[..., 0]
    monkeypatch.setattr(poincare, "distance", distance)
    assert verify(by_id("gyro-attention-weights"), {}).status.value == "refuted"


def test_mutation_distance_curvature_exponent(monkeypatch):
    """Issue 48: at the default c = 3/2 the prefactor 2/sqrt(c) -> 2/c of eq (10) shows."""
    original = poincare.distance
    monkeypatch.setattr(poincare, "distance", lambda x, y, c: original(x, y, c) / np.sqrt(c))
    assert verify(by_id("poincare-distance-geodesic"), {"samples": 1}).status.value == "refuted"


@pytest.mark.parametrize("seconds, status", [
    ({"euclidean": 1.0, "geodesic": 20.0, "tangent_printed": 20.0, "tangent_origin": 1.8}, "consistent"),
    # within the paper's bands only up to the 2x margin: still consistent
    ({"euclidean": 1.0, "geodesic": 90.0, "tangent_printed": 9.0, "tangent_origin": 3.9}, "consistent"),
    ({"euclidean": 1.0, "geodesic": 500.0, "tangent_printed": 200.0, "tangent_origin": 1.8}, "refuted"),
    ({"euclidean": 1.0, "geodesic": 20.0, "tangent_printed": 20.0, "tangent_origin": 8.0}, "refuted"),
])
def test_cost_decision(monkeypatch, seconds, status):
    monkeypatch.setattr(cost, "time_implementations", lambda *a, **k: dict(seconds))
    assert verify(by_id("riemannian-attention-cost"), {"method": "numeric", "tokens": 256}).status.value == status


def test_cost_timing_needs_compute_bound_sizes(run_cli):
    code, _, err = run_cli("verify", "riemannian-attention-cost", "--method", "numeric", "--tokens", "64")
    assert code == 2 and "256" in err


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("c", [0.7, 3.0])
def test_gram_forms_match_the_elementwise_forms(backend, c):
    """The Gram (matrix-product) kernels give the element-wise numbers to 1e-12 (float64)."""
    try:
        be = get_backend(backend)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    q, k, v = (be.asarray(a) for a in cost.inputs(Sampler(3), 24, 5, c))
    w = be.asarray(Sampler(4).floats((5, 5)))
    pairs = [(gram.distance(q, k, c), poincare.distance(q[:, None, :], k[None, :, :], c)),
             (gram.geodesic_scores(q, k, c), attention.geodesic_scores(q, k, c)),
             (gram.geodesic_attention(q, k, v, c), attention.geodesic_attention(q, k, v, c)),
             (gram.tangent_attention_printed(q, k, v, c), attention.tangent_attention_printed(q, k, v, c)),
             (gram.tangent_attention_printed(q, k, v, c, w), attention.tangent_attention_printed(q, k, v, c, w)),
             (gram.tangent_attention_origin(q, k, v, c), attention.tangent_attention_origin(q, k, v, c)),
             (gram.euclidean_attention(q, k, v), attention.euclidean_attention(q, k, v))]
    for fast, slow in pairs:
        assert np.max(np.abs(be.to_numpy(fast) - be.to_numpy(slow))) <= 1e-12


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_gram_frechet_mean_to_a_tolerance(backend):
    """Algorithm 1 in Gram form run to a tolerance (issue 26) stops where the element-wise
    form stops and gives its means to 1e-12, within 1e-9 of the damped reference mean; with
    the step-size rule it converges too.  Mutation: a looser tolerance moves the means."""
    be = get_backend(backend)
    c = 0.7
    q, k, v = (be.asarray(a) for a in cost.inputs(Sampler(5), 16, 4, c))
    fast = be.to_numpy(gram.geodesic_attention(q, k, v, c, tol=1e-12))
    slow = be.to_numpy(attention.geodesic_attention(q, k, v, c, tol=1e-12))
    assert np.max(np.abs(fast - slow)) <= 1e-12
    alpha = attention.softmax(attention.geodesic_scores(*(be.to_numpy(a) for a in (q, k)), c))
    reference = frechet.frechet_mean_damped(be.to_numpy(v)[None], alpha, c).mean
    assert np.max(np.abs(fast - reference)) <= 1e-9
    ruled = be.to_numpy(gram.geodesic_attention(q, k, v, c, eta=gram.STEP_RULE, tol=1e-12))
    assert np.max(np.abs(ruled - reference)) <= 1e-9
    loose = be.to_numpy(gram.geodesic_attention(q, k, v, c, tol=1e-2))
    assert np.max(np.abs(loose - reference)) > 1e-9


@pytest.mark.parametrize("backend", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("c", [0.7, 3.0])
def test_gram_forms_issue_26(backend, c):
    """Issue 26's Gram kernels against the element-wise forms, to 1e-12 (float64), on each
    backend: every implementation of the benchmark (Lorentz attention, Einstein midpoints,
    the query-dependent Algorithm 3, Algorithm 1 with the step-size rule), the Minkowski Gram
    distance, the Hessian bound; on jax also under jax.jit."""
    from attngeom.geometry_proofs.hyperbolic import attention_benchmark as bench
    try:
        be = get_backend(backend)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    q, k, v = cost.inputs(Sampler(3), 24, 5, c)
    ball = [be.asarray(a) for a in (q, k, v)]
    hyperboloid = [lorentz.from_ball(a, c) for a in ball]
    for name, kernel in bench.IMPLEMENTATIONS.items():
        args = hyperboloid if name == "lorentz" else ball
        want = bench.elementwise_reference(name, q, k, v, c)
        assert np.max(np.abs(be.to_numpy(kernel(*args, c)) - want)) <= 1e-12, name
        if backend == "jax":
            jitted = be.library.jit(lambda a, b, d, f=kernel: f(a, b, d, c))
            assert np.max(np.abs(be.to_numpy(jitted(*args)) - want)) <= 1e-12, name
    ql, kl = hyperboloid[:2]
    slow = lorentz.distance(ql[:, None, :], kl[None, :, :], c)
    assert np.max(np.abs(be.to_numpy(gram.lorentz_distance(ql, kl, c)) - be.to_numpy(slow))) <= 1e-12
    alpha = attention.softmax(attention.geodesic_scores(q, k, c))
    p = poincare.exp_map0(alpha @ poincare.log_map0(v, c), c)
    bound = gram.hessian_bound(be.asarray(p), ball[2], be.asarray(alpha), c)[:, 0]
    assert np.max(np.abs(be.to_numpy(bound) - frechet.hessian_bound(p, v[None], alpha, c))) <= 1e-12
    # the Lorentz and the ball forms of the Einstein-midpoint attention are one map
    assert np.max(np.abs(be.to_numpy(lorentz.to_ball(gram.lorentz_attention(*hyperboloid, c), c))
                         - be.to_numpy(gram.einstein_attention(*ball, c)))) <= 1e-12


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_gram_in_place_passes_leave_the_inputs(backend):
    """The Gram kernels overwrite only arrays they computed (issue 26: in-place passes,
    scratch arrays reused across Algorithm 1's steps): queries, keys, values and weights
    come back bit for bit, and a second call gives the first call's numbers."""
    be = get_backend(backend)
    c = 0.7
    ball = [be.asarray(a) for a in cost.inputs(Sampler(3), 24, 5, c)]
    hyperboloid = [lorentz.from_ball(a, c) for a in ball]
    alpha = gram.softmax(gram.geodesic_scores(ball[0], ball[1], c))
    inputs = ball + hyperboloid + [alpha]
    before = [be.to_numpy(a).copy() for a in inputs]
    from attngeom.geometry_proofs.hyperbolic import attention_benchmark as bench
    for name, kernel in bench.IMPLEMENTATIONS.items():
        args = hyperboloid if name == "lorentz" else ball
        first = be.to_numpy(kernel(*args, c)).copy()
        assert np.array_equal(be.to_numpy(kernel(*args, c)), first), name
    gram.frechet_steps(ball[2], alpha, c, ball[0], 3, eta=gram.STEP_RULE)
    gram.hessian_bound(ball[0], ball[2], alpha, c)
    for a, b in zip(inputs, before):
        assert np.array_equal(be.to_numpy(a), b)


def test_gram_asinh_ratio_small_and_large_arguments():
    """phi(t) = asinh(sqrt t) / sqrt(t (1 + t)) (= artanh(r) / r / (1 + t), the log maps'
    factor) from tau = 2t agrees with a 50-digit evaluation to 1e-12 relative from t = 0
    (phi = 1: the floor keeps 0 / 0 out) and denormal t through t = 1e15 (points near the
    boundary), where log1p keeps the ratio exact for close pairs."""
    import mpmath
    tau = np.array([0.0, 5e-324, 1e-300, 1e-32, 1e-20, 1e-12, 1e-6, 2e-3, 0.3, 1.0, 40.0, 1e6, 1e15])
    with mpmath.workdps(50):
        want = np.array([1.0] + [float(mpmath.asinh(mpmath.sqrt(mpmath.mpf(x) / 2))
                                       / mpmath.sqrt(mpmath.mpf(x) / 2 * (1 + mpmath.mpf(x) / 2)))
                                 for x in tau[1:]])
    assert np.max(np.abs(gram._asinh_ratio_(tau.copy()) / want - 1)) <= 1e-12


def test_gram_forms_near_the_boundary():
    """Points at sqrt(c)|x| = 1 - 1e-6 (distance ~14 from 0): the Gram forms stay finite
    and agree with the element-wise ones as well as float64 allows there (the pair terms
    1 - c|x|^2 ~ 2e-6 cost about 6 digits in both forms)."""
    c = 1.0
    q, k, v = cost.inputs(Sampler(5), 16, 4, c)
    v = v / np.linalg.norm(v, axis=-1, keepdims=True) * (1 - 1e-6)
    k = k / np.linalg.norm(k, axis=-1, keepdims=True) * (1 - 1e-6)
    from attngeom.geometry_proofs.hyperbolic import attention_benchmark as bench
    for name in ("geodesic", "geodesic_bound", "algorithm3_query", "einstein", "tangent_origin"):
        fast = bench.IMPLEMENTATIONS[name](q, k, v, c)
        assert np.isfinite(fast).all() and (np.sum(fast ** 2, -1) < 1).all(), name
        if name not in ("geodesic", "einstein"):   # eta = 1 leaves the ball: rows stop (Gram) / the batch
            slow = bench.elementwise_reference(name, q, k, v, c)
            assert np.max(np.abs(fast - slow)) <= 1e-6, name
    # Einstein midpoint: the element-wise form's gamma = 1/sqrt(1 - c|k|^2) (Klein) loses ~5
    # digits at 1 - c|x|^2 ~ 2e-6, the Gram form's gamma = (1 + c|x|^2)/(1 - c|x|^2) does not:
    # it matches a 50-digit evaluation with the same weights to 1e-9
    import mpmath
    alpha = gram.softmax(gram.geodesic_scores(q, k, c))
    fast = gram.einstein_midpoint(alpha, v, c)
    with mpmath.workdps(50):
        rows = [[mpmath.mpf(float(x)) for x in row] for row in v]
        sq = [sum(x * x for x in row) for row in rows]
        gamma = [(1 + s) / (1 - s) for s in sq]
        for i in range(3):
            w = [mpmath.mpf(float(a)) * g for a, g in zip(alpha[i], gamma)]
            klein = [sum(wj * 2 * row[t] / (1 + s) for wj, row, s in zip(w, rows, sq)) / sum(w) for t in range(4)]
            mean = [x / (1 + mpmath.sqrt(1 - sum(y * y for y in klein))) for x in klein]
            assert max(abs(float(m) - f) for m, f in zip(mean, fast[i])) <= 1e-9
    scores = gram.geodesic_scores(q, k, c)
    assert np.max(np.abs(scores - attention.geodesic_scores(q, k, c)) / np.abs(scores)) <= 1e-6


def test_step_size_rule_converges_where_eta_1_fails():
    """Spread values (radius 6, as frechet-algorithm-1's refuting example): Algorithm 1 at the
    printed eta = 1 does not settle, the rule eta_i = 2/(1 + L_i) (< 2/lambda_max) does."""
    c = 1.0
    alpha = np.full((4, 6), 1 / 6)
    for seed in (0, 4, 5):
        _step_rule_case(poincare.random_points(Sampler(seed), (6, 2), c, 6.0), alpha, c)


def _step_rule_case(v, alpha, c):
    init = poincare.exp_map0(alpha @ poincare.log_map0(v, c), c)

    def residual(p):
        u = gram.tangent_mean(p, v, alpha, c)
        return float(np.max(poincare.conformal_factor(p, c) * np.linalg.norm(u, axis=-1)))

    ruled = gram.frechet_steps(v, alpha, c, init, 200, eta=gram.STEP_RULE)
    printed = gram.frechet_steps(v, alpha, c, init, 200, eta=1.0)
    assert residual(ruled) <= 1e-10
    assert not residual(printed) <= 1e-6


# --------------------------------------------------------------------------------------
# bad input: one line, exit 2
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("verify", "exp-log-inverse", "--point", "0.9,0.9"),
    ("verify", "exp-log-inverse", "--curvature", "0"),
    ("verify", "exp-log-inverse", "--curvature", "-1"),
    ("verify", "mobius-gyrogroup", "--radius", "-2"),
    ("verify", "frechet-algorithm-1", "--eta", "0"),
    ("verify", "exp-log-inverse", "--point", "0.1,0.2,0.3"),
    ("verify", "tangent-attention-error", "--variant", "other"),
    ("verify", "exp-log-inverse", "--radius", "9"),
    ("verify", "riemannian-sgd", "--radius", "6"),
])
def test_bad_input_exit_2(run_cli, args):
    code, out, err = run_cli(*args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("args", [("verify", "tangent-attention-error", "--tokens", "1"),
                                  ("verify", "poincare-curvature", "--d", "1")])
def test_outside_hypotheses_is_not_applicable(run_cli, args):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and err.startswith("attngeom: not-applicable:")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_ball_functions_refuse_bad_points():
    with pytest.raises(BadInput, match="not in the Poincare ball"):
        poincare.distance(np.array([0.8, 0.7]), np.zeros(2), 1.0)
    with pytest.raises(BadInput, match="c > 0"):
        poincare.exp_map(np.zeros(2), np.ones(2), 0.0)
    with pytest.raises(BadInput, match="c > 0"):
        poincare.log_map(np.zeros(2), np.zeros(2), -1.0)


# --------------------------------------------------------------------------------------
# the numeric API: shapes, projection, backends
# --------------------------------------------------------------------------------------

def _points(shape, c=1.0, radius=3.0, key=1):
    return poincare.random_points(Sampler(7).spawn(key), shape, c, radius)


def test_batched_shapes_and_broadcasting():
    x, y = _points((3, 5, 4)), _points((5, 4), key=2)
    assert poincare.distance(x, y, 1.0).shape == (3, 5)
    assert poincare.exp_map(x, y, 1.0).shape == (3, 5, 4)
    assert poincare.conformal_factor(x, 1.0).shape == (3, 5)
    assert poincare.metric_matrix(y, 1.0).shape == (5, 4, 4)


def test_projection_eq_28():
    c = 2.0
    far = np.array([[3.0, 4.0], [0.1, 0.0]])
    out = poincare.project(far, c)
    assert np.isclose(np.linalg.norm(out[0]), 1 / np.sqrt(c) - poincare.PAPER_EPS)
    assert np.array_equal(out[1], far[1])
    with pytest.raises(BadInput):
        poincare.project(far, 1e12)


def test_zero_vectors_are_handled():
    x = _points((4, 3))
    assert np.allclose(poincare.exp_map(x, np.zeros_like(x), 1.0), x)
    assert np.allclose(poincare.log_map(x, x, 1.0), 0)
    assert np.allclose(poincare.exp_map0(np.zeros(3), 1.0), 0)


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_backends_agree(name):
    be = get_backend(name)
    c = 0.7
    x, y, v = _points((20, 5), c), _points((20, 5), c, key=2), Sampler(3).floats((20, 5), 0.3)
    X, Y, V = (be.asarray(a) for a in (x, y, v))
    pairs = [
        (poincare.distance(X, Y, c), poincare.distance(x, y, c)),
        (poincare.exp_map(X, V, c), poincare.exp_map(x, v, c)),
        (poincare.log_map(X, Y, c), poincare.log_map(x, y, c)),
        (poincare.parallel_transport(X, Y, V, c), poincare.parallel_transport(x, y, v, c)),
        (poincare.rsgd_step(X, V, 0.1, c), poincare.rsgd_step(x, v, 0.1, c)),
        (lorentz.distance(lorentz.from_ball(X, c), lorentz.from_ball(Y, c), c), poincare.distance(x, y, c)),
        (attention.geodesic_attention(X, Y, X, c), attention.geodesic_attention(x, y, x, c)),
        (attention.tangent_attention_origin(X, Y, X, c), attention.tangent_attention_origin(x, y, x, c)),
    ]
    for got, want in pairs:
        assert np.allclose(be.to_numpy(got), want, rtol=1e-11, atol=1e-12)


def test_torch_autodiff_passes_through():
    torch = get_backend("torch").module
    x = torch.tensor(_points((1, 3))[0], requires_grad=True)
    y = torch.tensor(_points((1, 3), key=2)[0])
    poincare.distance(x, y, 1.0).backward()
    # grad of d at x points away from y: the Riemannian gradient is -log_x(y) / d
    rgrad = poincare.riemannian_gradient(x.detach().numpy(), x.grad.numpy(), 1.0)
    expected = -poincare.log_map(x.detach().numpy(), y.numpy(), 1.0) / poincare.distance(x.detach().numpy(), y.numpy(), 1.0)
    assert np.allclose(rgrad, expected, atol=1e-10)


def test_attention_blocks_match_unblocked():
    q, k, v = _points((9, 3)), _points((7, 3), key=2), _points((7, 3), key=3)
    whole = attention.tangent_attention_printed(q, k, v, 1.0)
    blocked = attention.tangent_attention_printed(q, k, v, 1.0, elements=21)
    assert np.allclose(whole, blocked)
    assert attention.geodesic_attention(q, k, v, 1.0, elements=21).shape == (9, 3)


def test_volume_formula_matches_metric():
    for d, c, r in [(2, 1.0, 1.5), (4, 0.3, 2.0)]:
        assert np.isclose(volume.volume_numeric(d, c, r), volume.volume_from_metric(d, c, r), rtol=1e-10)


# --------------------------------------------------------------------------------------
# optional cross-checks: geoopt and geomstats
# --------------------------------------------------------------------------------------

def test_distance_near_the_boundary_matches_mpmath():
    """Points up to distance 14 from 0 (1 - sqrt(c)|x| down to 4e-5): eq (10) in float64
    against the arcosh form at 50 digits."""
    mpmath = pytest.importorskip("mpmath")
    c = 0.7
    x, y = _points((30, 4), c, 14.0), _points((30, 4), c, 14.0, key=2)
    with mpmath.workdps(50):
        cc = mpmath.mpf(c)
        def exact(a, b):
            a, b = [mpmath.mpf(t) for t in a], [mpmath.mpf(t) for t in b]
            na, nb = sum(t * t for t in a), sum(t * t for t in b)
            gap = sum((p - q) ** 2 for p, q in zip(a, b))
            return float(mpmath.acosh(1 + 2 * cc * gap / ((1 - cc * na) * (1 - cc * nb))) / mpmath.sqrt(cc))
        reference = np.array([exact(a, b) for a, b in zip(x, y)])
    assert np.allclose(poincare.distance(x, y, c), reference, rtol=1e-8)


@pytest.mark.parametrize("radius", [1.0, 6.0, 10.0])
def test_geoopt_agrees(radius):
    geoopt = pytest.importorskip("geoopt")
    torch = get_backend("torch").module
    c = 0.7
    ball = geoopt.PoincareBall(c=torch.tensor(c, dtype=torch.float64))
    x, y = _points((50, 4), c, radius), _points((50, 4), c, radius, key=2)
    # tangent vectors of metric norm <= 1, so exp stays clear of geoopt's boundary clipping
    v = Sampler(5).floats((50, 4)) / poincare.conformal_factor(x, c, keepdims=True) / 4
    T = lambda a: torch.tensor(a, dtype=torch.float64)
    # (theirs, ours, is a point): geoopt projects points to |x| <= (1 - 1e-5)/sqrt(c) in
    # float64, so points are compared where ours lie inside that radius
    checks = [(ball.dist(T(x), T(y)), poincare.distance(x, y, c), False),
              (ball.mobius_add(T(x), T(y)), poincare.mobius_add(x, y, c), True),
              (ball.expmap(T(x), T(v)), poincare.exp_map(x, v, c), True),
              (ball.logmap(T(x), T(y)), poincare.log_map(x, y, c), False),
              (ball.transp(T(x), T(y), T(v)), poincare.parallel_transport(x, y, v, c), False),
              (ball.egrad2rgrad(T(x), T(v)), poincare.riemannian_gradient(x, v, c), False)]
    for theirs, ours, is_point in checks:
        keep = np.sqrt(c) * np.linalg.norm(ours, axis=-1) < 1 - 1e-5 if is_point else slice(None)
        assert np.allclose(theirs.numpy()[keep], ours[keep], rtol=1e-9, atol=1e-11)


def test_geoopt_riemannian_sgd_agrees():
    """geoopt's RiemannianSGD on PoincareBallExact (exp-map retraction) takes the steps of
    eq (21) with the gradient of eq (22)."""
    geoopt = pytest.importorskip("geoopt")
    torch = get_backend("torch").module
    c = 1.0
    ball = geoopt.PoincareBallExact(c=torch.tensor(c, dtype=torch.float64))
    start, target = _points((4, 3), c, 2.0), _points((4, 3), c, 2.0, key=2)
    param = geoopt.ManifoldParameter(torch.tensor(start), manifold=ball)
    optimizer = geoopt.optim.RiemannianSGD([param], lr=0.05)
    ours = start.copy()
    for _ in range(10):
        optimizer.zero_grad()
        (ball.dist(param, torch.tensor(target)) ** 2).sum().backward()
        optimizer.step()
        ours = poincare.rsgd_step(ours, _euclidean_grad(ours, target, c), 0.05, c)
    assert np.allclose(param.detach().numpy(), ours, atol=1e-10)


def _euclidean_grad(x, target, c):
    torch = get_backend("torch").module
    t = torch.tensor(x, requires_grad=True)
    (poincare.distance(t, torch.tensor(target), c) ** 2).sum().backward()
    return t.grad.numpy()


def test_geomstats_frechet_mean_agrees():
    pytest.importorskip("geomstats", exc_type=ImportError)
    try:
        from geomstats.geometry.poincare_ball import PoincareBall
        from geomstats.learning.frechet_mean import FrechetMean
    except Exception as exc:  # geomstats installed without its own dependencies
        pytest.skip(f"geomstats unusable here: {exc}")
    points = _points((6, 2), 1.0, 1.5)
    weights = np.array([0.1, 0.2, 0.3, 0.15, 0.15, 0.1])
    space = PoincareBall(dim=2)
    estimator = FrechetMean(space)
    estimator.fit(points, weights=weights)
    ours = frechet.frechet_mean_damped(points, weights, 1.0).mean
    assert np.allclose(estimator.estimate_, ours, atol=1e-6)


@pytest.mark.parametrize("claim", ALL, ids=lambda c: c.id)
@pytest.mark.parametrize("fmt", ["text", "latex", "m2", "json"])
def test_show_every_format(claim, fmt):
    params = claim.resolve({})
    out = claim.show(params, fmt)
    assert out.strip()
    if fmt == "json":
        import json
        assert isinstance(json.loads(out), dict)


def test_cli_verify_json_and_exit_codes(run_cli):
    import json
    code, out, _ = run_cli("verify", "hyperbolic-volume-growth", "--d", "3", "--curvature", "4", "--json")
    assert code == 1 and json.loads(out)["status"] == "refuted"
    code, out, _ = run_cli("verify", "riemannian-norm", "--tokens", "8", "--json")
    assert code == 0 and json.loads(out)["status"] == "consistent"


def test_feed_forward_and_algorithm_2_layer_stay_in_the_ball():
    """Eq (18) gives a tangent vector; Algorithm 2's lines 10-16 (residual, norm, feed-forward,
    residual) map a batch of the ball into the ball."""
    c, sampler = 1.0, Sampler(11)
    x = _points((8, 4), c, 2.0)
    w1, b1 = sampler.spawn(1).floats((6, 4)), sampler.spawn(2).floats(6)
    w2, b2 = sampler.spawn(3).floats((4, 6)), sampler.spawn(4).floats(4)
    attn = attention.geodesic_attention(x, x, x, c, tol=1e-12)
    y = layers.residual_toward(x, attn, 0.5, c)
    z = layers.riemannian_norm(y, c)
    out = poincare.exp_map(z, 0.1 * layers.feed_forward(z, w1, b1, w2, b2, c), c)
    assert out.shape == x.shape
    assert np.all(c * np.sum(out ** 2, -1) < 1)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_kept_inside_keeps_the_last_iterate_of_rows_that_leave(backend):
    """gram._kept_inside: rows of the new iterate outside the ball (c|x|^2 >= 1) fall back to
    the old row and its |x|^2; when every row is inside the new iterate is returned as it
    is (the host-side shortcut of NumPy and torch's CPU) with its own |x|^2."""
    try:
        be = get_backend(backend)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    c = 0.5
    old = be.asarray(np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.4]]))
    old_sq = be.asarray(np.array([[0.05], [0.1], [0.16]]))
    new = be.asarray(np.array([[0.2, 0.1], [1.5, 0.2], [0.0, -1.0]]))   # row 1: c|x|^2 = 1.145
    kept, sq = gram._kept_inside(new, old, old_sq, c)
    kept, sq = be.to_numpy(kept), be.to_numpy(sq)
    np.testing.assert_array_equal(kept, [[0.2, 0.1], [0.3, -0.1], [0.0, -1.0]])
    np.testing.assert_allclose(sq, [[0.05], [0.1], [1.0]], rtol=0, atol=1e-15)
    inside = be.asarray(np.array([[0.2, 0.1], [0.5, 0.2], [0.0, -1.0]]))
    kept, sq = gram._kept_inside(inside, old, old_sq, c)
    assert kept is inside
    np.testing.assert_allclose(be.to_numpy(sq), [[0.05], [0.29], [1.0]], rtol=0, atol=1e-15)

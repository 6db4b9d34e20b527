"""Rules for the GT (gauge-theoretic KL attention) side found by the mutation campaign
(issue 48): input validation of the kernel, witness points away from identity values, the
density the Fisher information differentiates, the Dirac limit's evidence and branches."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import sympy

from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.gauge import dirac
from attngeom.geometry_proofs.gauge import natural_gradient as NG
from attngeom.geometry_proofs.gauge import symbolic_free_energy as SF
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import check_attention_inputs, skew, so_dimension
from attngeom.geometry_proofs.gauge.beliefs import sample_covariances
from attngeom.kernels.backend import get_backend
from attngeom.kernels.sampling import Sampler


def _inputs(heads=2, tokens=3, n=3):
    sampler = Sampler(11)
    mu = sampler.spawn(0).floats((heads, tokens, n))
    sigma = sample_covariances(sampler.spawn(1), heads * tokens, n).reshape(heads, tokens, n, n)
    frames = skew(sampler.spawn(2).floats((1, tokens, so_dimension(n)), 0.6), n, get_backend("numpy"))
    return mu, sigma, frames


def test_attention_inputs_accepts_matching_shapes():
    check_attention_inputs(*_inputs(), 0.7)


@pytest.mark.parametrize("empty", ["heads", "tokens", "n"])
def test_attention_inputs_refuses_each_empty_axis(empty):
    """N, n and H >= 1 each on its own (a check joined with 'and' would let one through)."""
    sizes = {"heads": 2, "tokens": 3, "n": 3}
    sizes[empty] = 0
    mu = np.zeros((sizes["heads"], sizes["tokens"], sizes["n"]))
    with pytest.raises(BadInput, match="H, N, n >= 1"):
        check_attention_inputs(mu, np.zeros(mu.shape + (sizes["n"],)), np.zeros((1, sizes["tokens"], sizes["n"], sizes["n"])), 0.7)


@pytest.mark.parametrize("part", ["n", "tokens", "heads"])
def test_attention_inputs_refuses_frames_of_another_shape(part):
    mu, sigma, frames = _inputs(heads=2, tokens=3, n=3)
    if part == "n":
        bad = np.zeros((1, 3, 2, 2))
    elif part == "tokens":
        bad = np.zeros((1, 4, 3, 3))
    else:
        bad = np.zeros((3, 3, 3, 3))
    with pytest.raises(BadInput, match="frames must have shape"):
        check_attention_inputs(mu, sigma, bad, 0.7)


def test_symbolic_witness_points_avoid_identity_values():
    """kappa = 1 or a variance 1 hides a missing factor 1/kappa or 1/s_i from the witness."""
    system = SF.scalar_system(2)
    point = system.point()
    assert point[system.kappa] != 1
    assert all(point[s] != 1 for s in system.s)
    true, printed, _, kappa = SF.generic_alignment(3)
    assert dict(SF.generic_point(true - printed, kappa))[kappa] != 1


def test_symbolic_point_sees_a_missing_one_over_kappa():
    """eq 15 without 1/kappa differs from the derivative at the witness point itself."""
    system = SF.scalar_system(2)
    exact = sympy.diff(system.F, system.m[0])
    without = SF.assembled(system, "mean", corrected=True).subs(system.kappa, 1)
    value = sympy.N((exact - without).subs(system.point()), 30)
    assert abs(value) > 1e-6


def test_log_density_is_the_gaussian_log_density():
    sampler = Sampler(5)
    for dim in (1, 2, 4):
        mu = sampler.spawn(dim).floats((dim,))
        Sigma = sample_covariances(sampler.spawn(10 + dim), 1, dim)[0]
        x = sampler.spawn(20 + dim).floats((dim,))
        theta = np.concatenate([mu, NG.vech(Sigma)])
        value = float(NG.log_density(x, theta, dim, get_backend("numpy")))
        assert value == pytest.approx(scipy.stats.multivariate_normal(mu, Sigma).logpdf(x), rel=1e-12)


def test_sample_dirac_system_norms():
    """Equal norms 1.5, or spread over [0.5, 2.5]; one token gets norm 0.5."""
    for tokens in (1, 2, 5):
        for equal in (True, False):
            mu, frames = dirac.sample_dirac_system(Sampler(3), tokens, 4, equal)
            norms = np.linalg.norm(mu, axis=1)
            expected = np.full(tokens, 1.5) if equal else (np.linspace(0.5, 2.5, tokens) if tokens > 1 else [0.5])
            assert np.allclose(norms, expected)
            assert frames.shape == (tokens, so_dimension(4))


def test_dirac_limit_records_the_key_term_at_growing_n():
    from attngeom.core.claim import CheckContext
    from attngeom.geometry_proofs.gauge.dirac_claims import CONCENTRATION_DIMS, DiracLimitClaim

    claim = DiracLimitClaim()
    params = claim.resolve({"key_norms": "equal"})
    verdict = claim.check("numeric", params, CheckContext(seed=0))
    (gaps,) = [v for k, v in verdict.evidence.items() if k.startswith("App. D.2 key term")]
    assert len(gaps) == len(CONCENTRATION_DIMS)
    assert min(gaps) > 0.1          # the key term does not wash out as n grows (App. D.2)


@pytest.mark.parametrize("tolerance", [2.0 ** -53, 2.0 ** -24])
@pytest.mark.parametrize("degree", [8, 16, 32])
def test_taylor_threshold_is_the_largest_theta_of_the_bound(degree, tolerance):
    """frame_exp's truncation: at theta_m the bound theta^{m+1}/(m+1)!/(1 - theta/(m+2)) meets
    the tolerance (the largest such theta, not a smaller one), and the true tail
    sum_{k > m} theta^k / k! is below it."""
    import math

    from attngeom.geometry_proofs.gauge.accelerated.kl_primitives import taylor_threshold

    theta = taylor_threshold(degree, tolerance)
    bound = theta ** (degree + 1) / math.factorial(degree + 1) / (1 - theta / (degree + 2))
    assert bound == pytest.approx(tolerance, rel=1e-9)
    tail = sum(theta ** k / math.factorial(k) for k in range(degree + 1, degree + 60))
    assert tail <= tolerance


@pytest.mark.parametrize("claim_id", ["gt-beta-gradient", "gt-grad-frame-assembled"])
def test_one_agent_gradients_are_refused_not_refuted(claim_id):
    """With N = 1 beta = 1 and the frames do not enter F: the gradient vanishes identically and
    a relative error has no scale (it used to report a false statement)."""
    import attngeom

    with pytest.raises(BadInput, match="tokens >= 2"):
        attngeom.verify(claim_id, method="numeric", tokens=1, dim=4)


def test_kl_attention_checks_the_diagonal_kernel_form():
    """gt-kl-attention hands diagonal covariances to the kernel as variances (diagonal_sigma)."""
    import attngeom

    verdict = attngeom.verify("gt-kl-attention", dim=5, tokens=4, covariance="diagonal")
    assert verdict.status.value == "consistent"
    assert verdict.checked == 3 * 7

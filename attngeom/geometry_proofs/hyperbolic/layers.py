"""The non-attention parts of the Riemannian Geodesic Transformer layer (RGT §5.3-5.4,
Algorithm 2) on the Poincare ball.

* geodesic residual (17): x_next = exp_{x_curr}(lambda P_{x_prev -> x_curr}(F)), F in T_{x_prev};
* residual toward a point (Algorithm 2, line 10): y = exp_x(lambda log_x(a));
* feed-forward (18): F(x) = W_2 sigma(W_1 log_o(x) + b_1) + b_2 (o the origin);
* Riemannian normalization (19): exp_mu(log_mu(x) / sigma), mu the Frechet mean of the batch
  and sigma its dispersion sqrt(mean_i d(mu, x_i)^2).

Shapes: points ``shape=[..., n, d]`` (a batch of n tokens), tangent vectors alike.
"""

from __future__ import annotations

from attngeom.geometry_proofs.hyperbolic import frechet, poincare
from attngeom.geometry_proofs.hyperbolic.poincare import namespace


def geodesic_residual(x_prev, x_curr, direction, step, c):
    """Eq (17): exp_{x_curr}(step P_{x_prev -> x_curr}(direction)), ``direction`` a tangent
    vector at x_prev (the only reading in which the transport is defined); shape=[..., d]."""
    return poincare.exp_map(x_curr, step * poincare.parallel_transport(x_prev, x_curr, direction, c), c)


def residual_toward(x, target, step, c):
    """Algorithm 2, line 10: exp_x(step log_x(target)); shape=[..., d]."""
    return poincare.exp_map(x, step * poincare.log_map(x, target, c), c)


def feed_forward(x, w1, b1, w2, b2, c):
    """Eq (18): W_2 tanh(W_1 log_0(x) + b_1) + b_2 (tanh as sigma); x shape=[..., d],
    w1 [h, d], w2 [d, h]; a tangent vector, shape=[..., d]."""
    xp = namespace(x)
    return xp.tanh(poincare.log_map0(x, c) @ w1.T + b1) @ w2.T + b2


def batch_mean(points, c, tol: float = 1e-13):
    """The (unweighted) Frechet mean of a batch ``shape=[n, d]`` (reference iteration)."""
    n = points.shape[-2]
    weights = namespace(points).ones(points.shape[:-1], dtype=points.dtype) / n
    return frechet.frechet_mean_damped(points, weights, c, tol=tol).mean


def riemannian_norm(points, c, mean=None):
    """Eq (19): exp_mu(log_mu(x_i) / sigma), mu = the Frechet mean of the batch,
    sigma = sqrt(mean_i d(mu, x_i)^2); points shape=[n, d] -> shape=[n, d]."""
    mu = batch_mean(points, c) if mean is None else mean
    sigma = (poincare.distance(mu[None, :], points, c) ** 2).mean() ** 0.5
    return poincare.exp_map(mu[None, :], poincare.log_map(mu[None, :], points, c) / sigma, c)

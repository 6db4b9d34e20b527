"""Weighted Frechet means on the Poincare ball (RGT Def 5.2, eq 16, Algorithm 1, §5.2.2).

* objective (16): F(p) = sum_j alpha_j d_c(p, v_j)^2;
* Algorithm 1: u_j = log_p(v_j), u = sum_j alpha_j u_j, p <- exp_p(eta u) (u = -grad F / 2,
  so this is Riemannian gradient descent on F/2 with step eta);
* the Einstein midpoint (the "single iteration" shortcut of §5.2.2): in the Klein model
  k = 2x / (1 + c|x|^2), m_K = sum_j alpha_j gamma_j k_j / sum_j alpha_j gamma_j with the
  Lorentz factors gamma_j = 1 / sqrt(1 - c|k_j|^2), mapped back by x = k / (1 + sqrt(1 - c|k|^2)).

Shapes: points ``shape=[..., n, d]``, weights ``shape=[..., n]`` (nonnegative, summing to 1),
means ``shape=[..., d]``; NumPy, PyTorch or JAX arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.geometry_proofs.hyperbolic.poincare import _sqnorm, check_curvature, namespace
from attngeom.core.errors import BadInput


def frechet_objective(p, points, weights, c):
    """F(p) = sum_j alpha_j d_c(p, v_j)^2, RGT eq (16); shape=[...]."""
    return (weights * poincare.distance(p[..., None, :], points, c) ** 2).sum(-1)


def tangent_mean(p, points, weights, c):
    """u = sum_j alpha_j log_p(v_j) (Algorithm 1, lines 3-4); shape=[..., d]."""
    return (weights[..., None] * poincare.log_map(p[..., None, :], points, c)).sum(-2)


@dataclass
class FrechetRun:
    """The outcome of Algorithm 1: the last iterate and the metric norm of the tangent mean
    |u|_g at each iterate (0 exactly at the Frechet mean)."""

    mean: object
    residuals: list = field(default_factory=list)
    converged: bool = False

    @property
    def iterations(self) -> int:
        return len(self.residuals) - 1


def frechet_mean(points, weights, c, eta: float = 1.0, max_steps: int = 100, tol: float = 1e-12,
                 init=None, steps: int | None = None) -> FrechetRun:
    """Algorithm 1 of RGT: p <- exp_p(eta sum_j alpha_j log_p v_j).

    ``init`` (shape=[..., d]) defaults to v_1, "one of the v_j" as line 1 prints.  The loop
    stops when the largest |u|_g over the batch is <= ``tol`` (or after ``max_steps``;
    ``steps`` forces a fixed count, as the attention layers use).  Divergence (a non-finite
    iterate or one leaving the ball) ends the run with ``converged=False``.
    """
    c = check_curvature(c)
    if not eta > 0:
        raise BadInput(f"the step size eta must be positive; got {eta}")
    p = points[..., 0, :] if init is None else init
    run = FrechetRun(p)
    count = max_steps if steps is None else steps
    for step in range(count + 1):
        u = tangent_mean(p, points, weights, c)
        residual = float((poincare.conformal_factor(p, c) * poincare._norm(u)[..., 0]).max())
        run.residuals.append(residual)
        run.mean = p
        if not np.isfinite(residual):
            return run
        if steps is None and residual <= tol:
            run.converged = True
            return run
        if step == count:
            break
        p = poincare.exp_map(p, eta * u, c)
        if not bool((c * _sqnorm(p) < 1).all()):
            run.residuals.append(float("inf"))
            return run
    run.converged = steps is not None or run.residuals[-1] <= tol
    return run


def to_klein(x, c):
    """Poincare -> Klein: k = 2x / (1 + c|x|^2); shape=[..., d]."""
    return 2 * x / (1 + c * _sqnorm(x))


def from_klein(k, c):
    """Klein -> Poincare: x = k / (1 + sqrt(1 - c|k|^2)); shape=[..., d]."""
    xp = namespace(k)
    return k / (1 + xp.sqrt(1 - c * _sqnorm(k)))


def einstein_midpoint(points, weights, c):
    """The weighted Einstein midpoint (§5.2.2's shortcut) of points (shape=[..., n, d]) with
    weights (shape=[..., n]); shape=[..., d]."""
    c = check_curvature(c)
    poincare.check_in_ball(points, c, "points")
    xp = namespace(points)
    k = to_klein(points, c)
    gamma = 1 / xp.sqrt(1 - c * _sqnorm(k))
    w = weights[..., None] * gamma
    return from_klein((w * k).sum(-2) / w.sum(-2), c)


def riemannian_hessian(mean, points, weights, c, h: float = 1e-4) -> np.ndarray:
    """The Hessian of F/2 at ``mean`` (one point, NumPy) in an orthonormal frame of
    T_mean: central second differences of w -> F(exp_mean(w / lambda_mean)) / 2; [d, d]."""
    d = mean.shape[-1]
    lam = float(poincare.conformal_factor(mean, c))

    def f(w):
        return float(frechet_objective(poincare.exp_map(mean, w / lam, c), points, weights, c)) / 2

    hess = np.zeros((d, d))
    eye = np.eye(d) * h
    f0 = f(np.zeros(d))
    for i in range(d):
        for j in range(i, d):
            if i == j:
                value = (f(eye[i]) - 2 * f0 + f(-eye[i])) / h ** 2
            else:
                value = (f(eye[i] + eye[j]) - f(eye[i] - eye[j]) - f(eye[j] - eye[i])
                         + f(-eye[i] - eye[j])) / (4 * h ** 2)
            hess[i, j] = hess[j, i] = value
    return hess


def hessian_bound(p, points, weights, c):
    """L(p) = sum_j alpha_j sqrt(c) d_j coth(sqrt(c) d_j), d_j = d_c(p, v_j): an upper bound on
    the eigenvalues of the Hessian of F/2 at p (comparison theorem, curvature -c); shape=[...]."""
    xp = namespace(points)
    s = np.sqrt(c) * poincare.distance(p[..., None, :], points, c)
    safe = xp.where(s > 1e-8, s, 1.0)
    return (weights * xp.where(s > 1e-8, safe / xp.tanh(safe), 1.0)).sum(-1)


def frechet_mean_damped(points, weights, c, tol: float = 1e-13, max_steps: int = 5000,
                        init=None) -> FrechetRun:
    """The reference Frechet mean: Algorithm 1 with the safe step eta_t = 1 / L(p_t)
    (:func:`hessian_bound`), a descent method for any spread (NumPy, one batch)."""
    c = check_curvature(c)
    p = points[..., 0, :] if init is None else init
    run = FrechetRun(p)
    for _ in range(max_steps + 1):
        u = tangent_mean(p, points, weights, c)
        residual = float((poincare.conformal_factor(p, c) * poincare._norm(u)[..., 0]).max())
        run.residuals.append(residual)
        run.mean = p
        if residual <= tol:
            run.converged = True
            return run
        eta = 1 / hessian_bound(p, points, weights, c)
        p = poincare.exp_map(p, eta[..., None] * u, c)
    return run

"""The Lorentz (hyperboloid) model L_c^d = {x in R^{d+1} : <x,x>_L = -1/c, x_0 > 0} (RGT eq 12)
and its isometry with the Poincare ball.

* Lorentz product <x, y>_L = -x_0 y_0 + sum_i x_i y_i (eq 12);
* distance d(x, y) = arcosh(-c <x, y>_L) / sqrt(c);
* exp_x(v) = cosh(sqrt(c)|v|_L) x + sinh(sqrt(c)|v|_L) v / (sqrt(c)|v|_L), |v|_L^2 = <v,v>_L;
* log_x(y) = d(x, y) w / |w|_L with w = y + c <x, y>_L x (the tangent part of y at x);
* ball -> hyperboloid: x -> ((1 + c|x|^2) / (sqrt(c)(1 - c|x|^2)), 2x / (1 - c|x|^2)), and back
  x = x_{1:} / (1 + sqrt(c) x_0).

Points of L_c^d have ``shape=[..., d+1]`` (coordinate 0 the time-like one); NumPy, PyTorch
or JAX arrays as in :mod:`attngeom.geometry_proofs.hyperbolic.poincare`.
"""

from __future__ import annotations

import math

from attngeom.geometry_proofs.hyperbolic.poincare import (_safe, _sqnorm, check_curvature,
                                                  check_in_ball, namespace)


def lorentz_inner(x, y):
    """<x, y>_L = -x_0 y_0 + sum_{i>=1} x_i y_i (RGT eq 12); shape=[..., 1]."""
    prod = x * y
    return prod[..., 1:].sum(-1, keepdims=True) - prod[..., :1]


def distance(x, y, c):
    """d(x, y) = arcosh(-c <x,y>_L) / sqrt(c); x, y shape=[..., d+1] -> shape=[...]."""
    c = check_curvature(c)
    xp = namespace(x)
    arg = xp.clip(-c * lorentz_inner(x, y), 1.0, None) if xp.__name__ != "torch" \
        else (-c * lorentz_inner(x, y)).clamp_min(1.0)
    return (xp.arccosh(arg) / math.sqrt(c))[..., 0]


def _tangent_norm(v):
    xp = namespace(v)
    sq = lorentz_inner(v, v)
    return xp.sqrt(xp.where(sq > 0, sq, 0.0))


def exp_map(x, v, c):
    """exp_x(v) on the hyperboloid, v in T_x (<x, v>_L = 0); shape=[..., d+1]."""
    c = check_curvature(c)
    xp, sc = namespace(x), math.sqrt(c)
    n = _tangent_norm(v)
    safe = _safe(n)
    return xp.cosh(sc * n) * x + xp.where(n > 0, xp.sinh(sc * safe) / (sc * safe), 1.0) * v


def log_map(x, y, c):
    """log_x(y) = d(x, y) w / |w|_L, w = y + c <x,y>_L x; shape=[..., d+1]."""
    c = check_curvature(c)
    xp = namespace(x)
    w = y + c * lorentz_inner(x, y) * x
    n = _tangent_norm(w)
    return xp.where(n > 0, distance(x, y, c)[..., None] / _safe(n), 0.0) * w


def from_ball(x, c):
    """The isometry B_c^d -> L_c^d; shape=[..., d] -> shape=[..., d+1]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    xp = namespace(x)
    sq = _sqnorm(x)
    time = (1 + c * sq) / (math.sqrt(c) * (1 - c * sq))
    if xp.__name__ == "torch":
        return xp.cat([time, 2 * x / (1 - c * sq)], dim=-1)
    return xp.concatenate([time, 2 * x / (1 - c * sq)], axis=-1)


def to_ball(x, c):
    """The inverse isometry L_c^d -> B_c^d: x_{1:} / (1 + sqrt(c) x_0); shape=[..., d]."""
    c = check_curvature(c)
    return x[..., 1:] / (1 + math.sqrt(c) * x[..., :1])


def constraint_residual(x, c):
    """|<x, x>_L + 1/c| * c: how far x is from L_c^d (0 on it); shape=[...]."""
    c = check_curvature(c)
    return namespace(x).abs(c * lorentz_inner(x, x) + 1)[..., 0]

"""Matrix-product (Gram) forms of the Poincare-ball attention kernels (RGT eqs 9-11, 14-16,
Algorithm 1, Algorithm 3, §8.2), as an expert would write them for Prop 9.3 / Table 1.

Every pairwise quantity of the ball is a function of three numbers per pair: for points x_i
(shape=[..., n, d]) and y_j (shape=[..., m, d]), the Gram matrix G_ij = <x_i, y_j> (one
matrix product, n m d multiply-adds) and the squared norms X_i = |x_i|^2, Y_j = |y_j|^2:

* Mobius addition (9) of the pair, w_ij = (-x_i) (+) y_j = -a_ij x_i + b_ij y_j with
  D_ij = 1 - 2c G_ij + c^2 X_i Y_j, a_ij = (1 - 2c G_ij + c Y_j) / D_ij,
  b_ij = (1 - c X_i) / D_ij, and |w_ij|^2 = a^2 X_i - 2 a b G_ij + b^2 Y_j;
* distance (10): d_c(x_i, y_j) = 2/sqrt(c) artanh(sqrt(c) |w_ij|);
* log map (inverse of eq 11): log_{x_i}(y_j) = s_ij w_ij, s_ij = 2/(sqrt(c) lambda_{x_i})
  artanh(sqrt(c)|w_ij|)/|w_ij| (2/lambda_{x_i} at w = 0), lambda_x = 2/(1 - c|x|^2);
  so sum_j alpha_ij log_{x_i}(y_j) = -(sum_j alpha_ij s_ij a_ij) x_i + ((alpha s b) @ Y)_i:
  one more matrix product, no [n, m, d] array.

The Lorentz model (issue 26): the distance is one Minkowski product, arcosh(-c <x_i, y_j>_L)
/ sqrt(c) with <x, y>_L a Gram matrix with the time coordinate negated; the Einstein
midpoint is the weighted sum of the hyperboloid points projected back onto L_c^d.  Eq (14)'s
scores on the ball use cosh(sqrt(c) d) = 1 + 2c|x - y|^2 / ((1 - c|x|^2)(1 - c|y|^2)).  On
the CPU, artanh and arcosh are evaluated through ``log`` (NumPy's arctanh and arccosh, and
torch's arccosh, cost 3-6x an exp).

The kernels here give the same numbers as the element-wise ones of
:mod:`attngeom.geometry_proofs.hyperbolic.attention` (to 1e-12 in float64, ``tests/test_hyperbolic.py``)
with O(n m d) work in matrix products, O(n m) scalar work per pair (a fixed number of
transcendental functions of three numbers) and O(n d) vector work per query (exp maps).
:class:`GramCount` counts the three while active (deterministic, unlike timings).

Shapes as in :mod:`.attention`; NumPy, PyTorch or JAX arrays (the namespace follows the
argument, :func:`attngeom.geometry_proofs.hyperbolic.poincare.namespace`, i.e. the
:mod:`attngeom.kernels.backend` switch).
"""

from __future__ import annotations

import math

from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.geometry_proofs.hyperbolic.poincare import _sqnorm, check_curvature, namespace


class GramCount:
    """Work counted while active: ``gemm`` multiply-adds of matrix products, ``pair`` scalar
    entries of per-pair coefficient arrays ([..., n, m], a fixed number of flops each) and
    ``vector`` entries of per-token vector maps ([..., n, d]).  Riemannian primitives over
    d-vectors (Mobius additions inside exp / log maps) are counted by
    :class:`attngeom.geometry_proofs.hyperbolic.poincare.OperationCount` as usual."""

    active: "GramCount | None" = None

    def __init__(self):
        self.gemm = 0
        self.pair = 0
        self.vector = 0

    def __enter__(self):
        GramCount.active = self
        return self

    def __exit__(self, *exc):
        GramCount.active = None

    def as_dict(self) -> dict[str, int]:
        return {"gemm": self.gemm, "pair": self.pair, "vector": self.vector}


def _size(shape) -> int:
    out = 1
    for s in shape:
        out *= int(s)
    return out


def _add(kind: str, amount: int) -> None:
    counter = GramCount.active
    if counter is not None:
        setattr(counter, kind, getattr(counter, kind) + int(amount))


def matmul(a, b):
    """a @ b, its multiply-adds counted (``a`` shape=[..., n, k], ``b`` [..., k, m])."""
    out = a @ b
    _add("gemm", _size(out.shape) * a.shape[-1])
    return out


def _t(x):
    return x.swapaxes(-1, -2) if namespace(x).__name__ != "torch" else x.transpose(-1, -2)


def _row(x):
    """|x_i|^2 as a column, shape=[..., n, 1]."""
    return _sqnorm(x)


def _artanh(r):
    """artanh(r) = log((1 + r) / (1 - r)) / 2 for 0 <= r < 1 (NumPy's arctanh and log1p take
    5x as long as its log; the absolute error stays a few ulp)."""
    return 0.5 * namespace(r).log((1 + r) / (1 - r))


#: below this r, artanh(r) / r by its series (the log form's error divided by r would grow).
_SERIES_BELOW = 1e-3


def _artanh_ratio(r):
    """artanh(r) / r for 0 <= r < 1 (1 at r = 0): the series 1 + r^2/3 + r^4/5 + r^6/7 below
    r = 1e-3 (truncation < 1e-25), :func:`_artanh` / r above (error < 3e-13 relative)."""
    xp = namespace(r)
    r2 = r * r
    series = 1 + r2 * (1 / 3 + r2 * (1 / 5 + r2 / 7))
    big = r >= _SERIES_BELOW
    safe = xp.where(big, r, 0.5)
    return xp.where(big, _artanh(safe) / safe, series)


def _arcosh(z):
    """arcosh(z) = log(z + sqrt((z - 1)(z + 1))) for z >= 1 (faster than NumPy's and torch's
    arccosh on the CPU; absolute error a few ulp)."""
    xp = namespace(z)
    return xp.log(z + xp.sqrt((z - 1) * (z + 1)))


def pair_coefficients(x, y, c):
    """For w_ij = (-x_i) (+) y_j: (a, b, |w|^2) with w_ij = -a_ij x_i + b_ij y_j, each
    shape=[..., n, m], from the Gram matrix G = x y^T and the squared norms (eq 9)."""
    g = matmul(x, _t(y))
    xx, yy = _row(x), _t(_row(y))
    den = 1 - 2 * c * g + c * c * xx * yy
    a = (1 - 2 * c * g + c * yy) / den
    b = (1 - c * xx) / den
    w2 = a * a * xx - 2 * a * b * g + b * b * yy
    _add("pair", 8 * _size(g.shape))
    xp = namespace(g)
    return a, b, xp.clip(w2, 0, None) if xp.__name__ != "torch" else w2.clamp(min=0)


def distance(x, y, c):
    """All-pairs d_c(x_i, y_j) = 2/sqrt(c) artanh(sqrt(c)|(-x_i) (+) y_j|), eq (10), by the
    Gram matrix; shape=[..., n, m]."""
    c = check_curvature(c)
    poincare.check_in_ball(x, c)
    poincare.check_in_ball(y, c, "y")
    xp, sc = namespace(x), math.sqrt(c)
    _, _, w2 = pair_coefficients(x, y, c)
    _add("pair", _size(w2.shape))
    return (2 / sc) * _artanh(xp.clip(sc * xp.sqrt(w2), 0, 1 - 1e-16))


def geodesic_scores(q, k, c):
    """S_ij = -d_c(q_i, k_j)^2 c / sqrt(d_k), eq (14), by the Gram matrix:
    cosh(sqrt(c) d) = 1 + 2c |q_i - k_j|^2 / ((1 - c|q_i|^2)(1 - c|k_j|^2)) with
    |q_i - k_j|^2 = |q_i|^2 + |k_j|^2 - 2 G_ij, so S_ij = -arcosh(.)^2 / sqrt(d_k) (one
    transcendental function per pair; :func:`distance`'s |w| has the same cancellation for
    close pairs, harmless here: d^2 ~ 2 (cosh - 1) keeps its absolute error); shape=[..., n, m]."""
    c = check_curvature(c)
    poincare.check_in_ball(q, c)
    poincare.check_in_ball(k, c, "y")
    xx, yy = _row(q), _t(_row(k))
    g = matmul(q, _t(k))
    xp = namespace(g)
    sq = xx + yy - 2 * g
    sq = sq.clamp_min(0.0) if xp.__name__ == "torch" else xp.clip(sq, 0, None)
    z = 1 + sq * (2 * c / (1 - c * xx)) / (1 - c * yy)
    _add("pair", 14 * _size(g.shape))
    return -_arcosh(z) ** 2 / math.sqrt(q.shape[-1])


def _log_coefficients(x, y, c):
    """(A, B, ratio, r^2): log_{x_i}(y_j) = -A_ij x_i + B_ij y_j, ratio = artanh(r) / r and
    r = sqrt(c) |(-x_i) (+) y_j| = tanh(sqrt(c) d_c(x_i, y_j) / 2), shape=[..., n, m] each."""
    xp, sc = namespace(x), math.sqrt(c)
    a, b, w2 = pair_coefficients(x, y, c)
    r = xp.clip(sc * xp.sqrt(w2), 0, 1 - 1e-16)
    ratio = _artanh_ratio(r)
    s = (1 - c * _row(x)) * ratio  # 2 / lambda_x * artanh(sqrt(c) n) / (sqrt(c) n)
    _add("pair", 4 * _size(w2.shape))
    return s * a, s * b, ratio, c * w2


def log_coefficients(x, y, c):
    """(A, B), shape=[..., n, m] each, with log_{x_i}(y_j) = -A_ij x_i + B_ij y_j."""
    return _log_coefficients(x, y, c)[:2]


def _tangent_mean(p, points, weights, c):
    big_a, big_b, ratio, r2 = _log_coefficients(p, points, c)
    _add("pair", 2 * _size(big_a.shape))
    _add("vector", _size(p.shape))
    u = -(weights * big_a).sum(-1, keepdims=True) * p + matmul(weights * big_b, points)
    return u, ratio, r2


def tangent_mean(p, points, weights, c):
    """u_i = sum_j alpha_ij log_{p_i}(v_j) (Algorithm 1, lines 3-4) for a base point per row:
    p shape=[..., n, d], points [..., m, d], weights [..., n, m] -> shape=[..., n, d]."""
    return _tangent_mean(p, points, weights, c)[0]


def hessian_bound(p, points, weights, c):
    """L_i = sum_j alpha_ij s_ij coth(s_ij), s_ij = sqrt(c) d_c(p_i, v_j), as
    :func:`attngeom.geometry_proofs.hyperbolic.frechet.hessian_bound` (an upper bound on the
    eigenvalues of Hess(F_i/2) at p_i), from the Gram matrix: with r = tanh(s/2),
    s coth s = artanh(r) (1 + r^2) / r; shape=[..., n, 1]."""
    _, ratio, r2 = _tangent_mean(p, points, weights, c)
    return _bound(weights, ratio, r2)


def _bound(weights, ratio, r2):
    _add("pair", 3 * _size(r2.shape))
    return (weights * ratio * (1 + r2)).sum(-1, keepdims=True)


#: ``eta`` of :func:`frechet_steps` that selects the step-size rule.
STEP_RULE = "bound"


def frechet_steps(points, weights, c, init, steps: int, eta: float | str = 1.0,
                  tol: float | None = None, max_steps: int = 200):
    """``steps`` iterations of Algorithm 1, p_i <- exp_{p_i}(eta u_i), from ``init``
    (shape=[..., n, d]), values ``points`` [..., m, d] shared by the n rows, weights
    [..., n, m]; shape=[..., n, d].  With ``tol``: until the largest residual
    |u_i|_{g_{p_i}} = lambda_{p_i} |u_i| over the batch is <= ``tol`` (at most ``max_steps``
    steps; the stopping rule of the element-wise :func:`.frechet.frechet_mean`, one host
    read per step, so not under ``jax.jit``).

    ``eta="bound"`` (:data:`STEP_RULE`) takes the step eta_i = 2 / (1 + L_i) per row, L_i
    the comparison bound :func:`hessian_bound` at the current iterate (from the same Gram
    pass as u_i: no extra matrix product).  The eigenvalues of Hess(F_i/2) lie in
    [1, L] on H^d(-c), so this is the best-rate step for that interval and satisfies
    Algorithm 1's convergence condition eta < 2 / lambda_max (``frechet-algorithm-1``) at
    every spread, where the printed eta = 1 fails once lambda_max >= 2.

    A row whose step would leave the ball (eta = 1 on values near the boundary: tanh
    saturates and the Mobius addition rounds outside) keeps its last iterate; the other rows
    go on (the element-wise :func:`.frechet.frechet_mean` stops the whole batch there)."""
    p = init
    for _ in range(steps if tol is None else max_steps):
        u, ratio, r2 = _tangent_mean(p, points, weights, c)
        if tol is not None and float(poincare.metric_norm(p, u, c).max()) <= tol:
            break
        step = 2 / (1 + _bound(weights, ratio, r2)) if eta == STEP_RULE else eta
        new = poincare.exp_map(p, step * u, c)
        p = namespace(p).where(c * _row(new) < 1, new, p)
        _add("vector", 3 * _size(p.shape))
    return p


def softmax(scores):
    """Softmax along the last axis, eq (15)."""
    e = _exp_shifted(scores)
    return e / e.sum(-1, keepdims=True)


def _exp_shifted(scores):
    """exp(S - max_j S): eq (15)'s weights up to a factor per row (enough for the Einstein
    midpoints, which are invariant under scaling a row of weights)."""
    xp = namespace(scores)
    top = scores.amax(-1, keepdim=True) if xp.__name__ == "torch" else scores.max(-1, keepdims=True)
    _add("pair", 3 * _size(scores.shape))
    return xp.exp(scores - top)


def geodesic_attention(q, k, v, c, steps: int = 3, eta: float | str = 1.0,
                       tol: float | None = None):
    """Gyro-attention, eqs (14)-(16) with ``steps`` iterations of Algorithm 1 started at the
    tangent mean at the origin (or to ``tol``, as :func:`.attention.geodesic_attention`), in
    Gram form; ``eta="bound"`` the step-size rule of :func:`frechet_steps`; shape=[..., n, d]."""
    alpha = softmax(geodesic_scores(q, k, c))
    init = poincare.exp_map0(matmul(alpha, poincare.log_map0(v, c)), c)
    _add("vector", 2 * _size(v.shape) + 2 * _size(q.shape))
    return frechet_steps(v, alpha, c, init, steps, eta, tol)


def tangent_attention_printed(q, k, v, c, w_v=None):
    """Algorithm 3 as printed, s_ij = <log_{q_i} k_j, W_v log_{q_i} v_j> (W_v the identity
    when None, shape=[d, d]), out_i = exp_{q_i}(sum_j alpha_ij log_{q_i} v_j), in Gram form:
    with log_{q_i}(k_j) = -A_ij q_i + B_ij k_j and log_{q_i}(v_j) = -A'_ij q_i + B'_ij v_j,
    s_ij = A A' <q_i, W q_i> - A B' <q_i, W v_j> - B A' <k_j, W q_i> + B B' <k_j, W v_j>;
    shape=[..., n, d]."""
    ka, kb = log_coefficients(q, k, c)
    va, vb = log_coefficients(q, v, c)
    wq = q if w_v is None else matmul(q, _t(w_v))
    wv = v if w_v is None else matmul(v, _t(w_v))
    qwq = (q * wq).sum(-1, keepdims=True)              # [n, 1]
    qwv = matmul(q, _t(wv))                            # <q_i, W v_j>
    kwq = matmul(wq, _t(k))                            # <k_j, W q_i>
    kwv = _t((k * wv).sum(-1, keepdims=True))          # [1, m]: <k_j, W v_j>
    _add("vector", 2 * _size(q.shape) + _size(k.shape))
    scores = ka * va * qwq - ka * vb * qwv - kb * va * kwq + kb * vb * kwv
    _add("pair", 11 * _size(scores.shape))
    alpha = softmax(scores)
    u = -(alpha * va).sum(-1, keepdims=True) * q + matmul(alpha * vb, v)
    _add("vector", 2 * _size(q.shape))
    return poincare.exp_map(q, u, c)


def tangent_attention_query(q, k, v, c):
    """Algorithm 3 with the query-dependent score s_ij = -|log_{q_i} k_j|_g^2 c / sqrt(d_k),
    as :func:`.attention.tangent_attention_query`: |log_{q_i} k_j|_g = d_c(q_i, k_j), so the
    scores are eq (14)'s (one Gram matrix) and only the aggregation is in T_{q_i}:
    out_i = exp_{q_i}(-(sum_j alpha_ij A_ij) q_i + (alpha B) @ v); shape=[..., n, d]."""
    alpha = softmax(geodesic_scores(q, k, c))
    va, vb = log_coefficients(q, v, c)
    u = -(alpha * va).sum(-1, keepdims=True) * q + matmul(alpha * vb, v)
    _add("pair", 2 * _size(va.shape))
    _add("vector", 2 * _size(q.shape))
    return poincare.exp_map(q, u, c)


def einstein_midpoint(weights, points, c):
    """Einstein midpoints (§5.2.2), one per row of ``weights`` (shape=[..., n, m]) of
    ``points`` (shape=[..., m, d]), as :func:`.frechet.einstein_midpoint` row by row: in
    the Klein model k_j = 2 v_j / (1 + c|v_j|^2) with gamma_j = (1 + c|v_j|^2) / (1 - c|v_j|^2),
    m_i = (alpha (gamma k))_i / (alpha gamma)_i (one matrix product of [n, m] by
    [m, d + 1]), mapped back to the ball; shape=[..., n, d]."""
    c = check_curvature(c)
    poincare.check_in_ball(points, c, "points")
    xp = namespace(points)
    sq = _row(points)
    gamma = (1 + c * sq) / (1 - c * sq)
    both = matmul(weights, _cat([gamma * (2 * points / (1 + c * sq)), gamma], -1))
    _add("vector", 4 * _size(points.shape) + 3 * _size(both.shape))
    klein = both[..., :-1] / both[..., -1:]
    return klein / (1 + xp.sqrt(1 - c * _row(klein)))


def einstein_attention(q, k, v, c):
    """Eq (14)-(15) weights aggregated by the Einstein midpoint (§5.2.2's one-step shortcut
    of eq 16) on the Poincare ball; shape=[..., n, d]."""
    return einstein_midpoint(_exp_shifted(geodesic_scores(q, k, c)), v, c)


def _cat(parts, axis):
    xp = namespace(parts[0])
    return xp.cat(parts, dim=axis) if xp.__name__ == "torch" else xp.concatenate(parts, axis=axis)


# --------------------------------------------------------------------------------------
# The Lorentz model L_c^d (points shape=[..., d+1], coordinate 0 time-like; RGT eq 12)
# --------------------------------------------------------------------------------------

def minkowski_gram(x, y):
    """<x_i, y_j>_L = -x_i0 y_j0 + sum_k x_ik y_jk for all pairs: one matrix product over the
    space coordinates and an outer product of the time coordinates; shape=[..., n, m]."""
    g = matmul(x[..., 1:], _t(y[..., 1:])) - x[..., :1] * _t(y[..., :1])
    _add("pair", 2 * _size(g.shape))
    return g


def lorentz_distance(x, y, c):
    """All-pairs d(x_i, y_j) = arcosh(-c <x_i, y_j>_L) / sqrt(c) (as
    :func:`.lorentz.distance`, the argument clipped at 1); shape=[..., n, m]."""
    c = check_curvature(c)
    xp = namespace(x)
    arg = -c * minkowski_gram(x, y)
    arg = arg.clamp_min(1.0) if xp.__name__ == "torch" else xp.clip(arg, 1.0, None)
    _add("pair", 3 * _size(arg.shape))
    return _arcosh(arg) / math.sqrt(c)


def lorentz_scores(q, k, c):
    """S_ij = -d(q_i, k_j)^2 c / sqrt(d_k) = -arcosh(-c <q_i, k_j>_L)^2 / sqrt(d_k), eq (14)
    on L_c^d (d_k = d, the manifold's dimension: the last axis has d + 1 coordinates); the
    factor -c folded into the queries before the one matrix product; shape=[..., n, m]."""
    c = check_curvature(c)
    xp = namespace(q)
    z = matmul(-c * q[..., 1:], _t(k[..., 1:])) + (c * q[..., :1]) * _t(k[..., :1])
    z = z.clamp_min(1.0) if xp.__name__ == "torch" else xp.clip(z, 1.0, None)
    _add("pair", 10 * _size(z.shape))
    return -_arcosh(z) ** 2 / math.sqrt(q.shape[-1] - 1)


def lorentz_midpoint(weights, points, c):
    """Einstein midpoints on L_c^d: the Klein midpoint with gamma_j = sqrt(c) v_j0 is the
    projection of the weighted sum, m_i = S_i / (sqrt(c) sqrt(-<S_i, S_i>_L)) with
    S = weights @ points (one matrix product); weights shape=[..., n, m], points
    [..., m, d+1] -> shape=[..., n, d+1]."""
    c = check_curvature(c)
    xp = namespace(points)
    s = matmul(weights, points)
    sq = (s[..., 1:] * s[..., 1:]).sum(-1, keepdims=True) - s[..., :1] * s[..., :1]
    _add("vector", 3 * _size(s.shape))
    return s / (math.sqrt(c) * xp.sqrt(-sq))


def lorentz_attention(q, k, v, c):
    """Attention on the Lorentz model: eq (14)-(15) weights from one Minkowski Gram matrix,
    the Einstein midpoint of the values (one more matrix product); q [..., n, d+1], k, v
    [..., m, d+1] on L_c^d -> shape=[..., n, d+1]."""
    return lorentz_midpoint(_exp_shifted(lorentz_scores(q, k, c)), v, c)


def tangent_attention_origin(q, k, v, c):
    """Tangent attention in T_0 (the GEMM form of §8.2.2 / Table 1's "optimized" column):
    s_ij = -4|log_0 q_i - log_0 k_j|^2 c / sqrt(d_k), out_i = exp_0(sum_j alpha_ij log_0 v_j),
    as :func:`.attention.tangent_attention_origin`; shape=[..., n, d]."""
    qt, kt, vt = poincare.log_map0(q, c), poincare.log_map0(k, c), poincare.log_map0(v, c)
    _add("vector", 2 * (_size(q.shape) + _size(k.shape) + _size(v.shape)))
    sq = _row(qt) + _t(_row(kt))
    alpha = softmax(-4.0 * (sq - 2 * matmul(qt, _t(kt))) * c / math.sqrt(q.shape[-1]))
    _add("pair", 4 * _size(sq.shape))
    out = poincare.exp_map0(matmul(alpha, vt), c)
    _add("vector", 2 * _size(q.shape))
    return out


def euclidean_attention(q, k, v):
    """softmax(q k^T / sqrt(d)) v, the baseline of Table 1; shape=[..., n, d]."""
    scores = matmul(q, _t(k)) / math.sqrt(q.shape[-1])
    _add("pair", _size(scores.shape))
    return matmul(softmax(scores), v)

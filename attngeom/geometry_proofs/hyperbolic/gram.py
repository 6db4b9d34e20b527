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
    return (2 / sc) * xp.arctanh(xp.clip(sc * xp.sqrt(w2), 0, 1 - 1e-16))


def geodesic_scores(q, k, c):
    """S_ij = -d_c(q_i, k_j)^2 c / sqrt(d_k), eq (14), by the Gram matrix; shape=[..., n, m]."""
    return -distance(q, k, c) ** 2 * c / math.sqrt(q.shape[-1])


def log_coefficients(x, y, c):
    """(A, B), shape=[..., n, m] each, with log_{x_i}(y_j) = -A_ij x_i + B_ij y_j."""
    xp, sc = namespace(x), math.sqrt(c)
    a, b, w2 = pair_coefficients(x, y, c)
    n = xp.sqrt(w2)
    safe = xp.where(n > 0, n, 1.0)
    ratio = xp.where(n > 0, xp.arctanh(xp.clip(sc * safe, 0, 1 - 1e-16)) / (sc * safe), 1.0)
    s = (1 - c * _row(x)) * ratio  # 2 / lambda_x * artanh(sqrt(c) n) / (sqrt(c) n)
    _add("pair", 4 * _size(w2.shape))
    return s * a, s * b


def tangent_mean(p, points, weights, c):
    """u_i = sum_j alpha_ij log_{p_i}(v_j) (Algorithm 1, lines 3-4) for a base point per row:
    p shape=[..., n, d], points [..., m, d], weights [..., n, m] -> shape=[..., n, d]."""
    big_a, big_b = log_coefficients(p, points, c)
    _add("pair", 2 * _size(big_a.shape))
    _add("vector", _size(p.shape))
    return -(weights * big_a).sum(-1, keepdims=True) * p + matmul(weights * big_b, points)


def frechet_steps(points, weights, c, init, steps: int, eta: float = 1.0):
    """``steps`` iterations of Algorithm 1, p_i <- exp_{p_i}(eta u_i), from ``init``
    (shape=[..., n, d]), values ``points`` [..., m, d] shared by the n rows, weights
    [..., n, m]; shape=[..., n, d]."""
    p = init
    for _ in range(steps):
        u = tangent_mean(p, points, weights, c)
        p = poincare.exp_map(p, eta * u, c)
        _add("vector", 2 * _size(p.shape))
    return p


def softmax(scores):
    """Softmax along the last axis, eq (15)."""
    xp = namespace(scores)
    top = scores.amax(-1, keepdim=True) if xp.__name__ == "torch" else scores.max(-1, keepdims=True)
    e = xp.exp(scores - top)
    _add("pair", 3 * _size(scores.shape))
    return e / e.sum(-1, keepdims=True)


def geodesic_attention(q, k, v, c, steps: int = 3, eta: float = 1.0):
    """Gyro-attention, eqs (14)-(16) with ``steps`` iterations of Algorithm 1 started at the
    tangent mean at the origin (as :func:`.attention.geodesic_attention`), in Gram form;
    shape=[..., n, d]."""
    alpha = softmax(geodesic_scores(q, k, c))
    init = poincare.exp_map0(matmul(alpha, poincare.log_map0(v, c)), c)
    _add("vector", 2 * _size(v.shape) + 2 * _size(q.shape))
    return frechet_steps(v, alpha, c, init, steps, eta)


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

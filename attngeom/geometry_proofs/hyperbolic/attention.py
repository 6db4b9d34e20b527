"""Attention on the Poincare ball (RGT §5.2, Algorithms 2-3, §8.2) and the Euclidean baseline.

* geodesic (gyro-)attention: scores (14) S_ij = -d_c(q_i, k_j)^2 c / sqrt(d_k), weights (15)
  alpha = softmax_j S, output the weighted Frechet mean (16) of the values, Algorithm 1;
* tangent-space attention as printed (Algorithm 3): k'_j = log_{q_i}(k_j),
  s_ij = <k'_j, W_v log_{q_i}(v_j)> (line 3 compares a KEY with a VALUE; the query enters
  only as the base point), alpha = softmax_j s, out_i = exp_{q_i}(sum_j alpha_ij log_{q_i}(v_j));
* the query-dependent variant: the same tangent spaces, with the score of eq (14) written in
  T_{q_i}: s_ij = -|log_{q_i}(k_j)|_g^2 c / sqrt(d_k) (|.|_g the metric norm; it equals
  -d(q_i, k_j)^2 c / sqrt(d_k)), so only the aggregation is linearized;
* tangent attention at the origin (the GEMM form that §8.2.2 and Table 1's "optimized" column
  describe): q', k', v' = log_0 of each, s_ij = -lambda_0^2 |q'_i - k'_j|^2 c / sqrt(d_k)
  (one matrix product), out_i = exp_0(sum_j alpha_ij v'_j);
* Euclidean attention: softmax(q k^T / sqrt(d)) v.

Shapes: queries ``shape=[..., n, d]``, keys and values ``shape=[..., m, d]``, outputs
``shape=[..., n, d]``.  The all-pairs maps work on blocks of queries (``block`` rows at a
time) so the [n, m, d] intermediates fit in memory.  NumPy, PyTorch or JAX arrays.
"""

from __future__ import annotations

import math

from attngeom.geometry_proofs.hyperbolic import frechet, poincare
from attngeom.geometry_proofs.hyperbolic.poincare import _sqnorm, namespace

#: Queries per block of the all-pairs maps: block * m * d floats at a time.
DEFAULT_ELEMENTS = 1 << 22


def softmax(scores):
    """Softmax along the last axis (shifted by the maximum), eq (15); shape kept."""
    xp = namespace(scores)
    top = scores.max(-1, keepdims=True) if xp.__name__ != "torch" else scores.amax(-1, keepdim=True)
    e = xp.exp(scores - top)
    return e / e.sum(-1, keepdims=True)


def _concat(parts, axis):
    xp = namespace(parts[0])
    if xp.__name__ == "torch":
        return xp.cat(parts, dim=axis)
    return xp.concatenate(parts, axis=axis)


def _blocks(q, k, elements: int):
    n, m, d = q.shape[-2], k.shape[-2], q.shape[-1]
    step = max(1, elements // max(1, m * d))
    return [(start, min(n, start + step)) for start in range(0, n, step)]


def geodesic_scores(q, k, c):
    """S_ij = -d_c(q_i, k_j)^2 c / sqrt(d_k), RGT eq (14); shape=[..., n, m]."""
    return -poincare.distance(q[..., :, None, :], k[..., None, :, :], c) ** 2 * c / math.sqrt(q.shape[-1])


def geodesic_attention(q, k, v, c, steps: int = 3, eta: float = 1.0, tol: float | None = None,
                       elements: int = DEFAULT_ELEMENTS):
    """Gyro-attention (eqs 14-16, Algorithm 2 lines 4-6): Frechet means of the values with
    the weights of eq (15), by ``steps`` iterations of Algorithm 1 started at the tangent
    mean at the origin (or to ``tol`` when given); shape=[..., n, d]."""
    out = []
    for start, stop in _blocks(q, k, elements):
        alpha = softmax(geodesic_scores(q[..., start:stop, :], k, c))
        values = v[..., None, :, :]  # [..., 1, m, d], broadcast against the b queries
        init = poincare.exp_map0((alpha[..., None] * poincare.log_map0(v, c)[..., None, :, :]).sum(-2), c)
        if tol is None:
            run = frechet.frechet_mean(values, alpha, c, eta=eta, init=init, steps=steps)
        else:
            run = frechet.frechet_mean(values, alpha, c, eta=eta, init=init, tol=tol, max_steps=200)
        out.append(run.mean)
    return _concat(out, -2)


def _tangent_at_queries(q, k, v, c, score, elements):
    out = []
    for start, stop in _blocks(q, k, elements):
        base = q[..., start:stop, None, :]
        k_tan = poincare.log_map(base, k[..., None, :, :], c)
        v_tan = poincare.log_map(base, v[..., None, :, :], c)
        alpha = softmax(score(base, k_tan, v_tan))
        out.append(poincare.exp_map(base[..., 0, :], (alpha[..., None] * v_tan).sum(-2), c))
    return _concat(out, -2)


def tangent_attention_printed(q, k, v, c, w_v=None, elements: int = DEFAULT_ELEMENTS):
    """Algorithm 3 exactly as printed: s_ij = <log_{q_i} k_j, W_v log_{q_i} v_j> (W_v the
    identity when None, shape=[d, d]); shape=[..., n, d]."""
    def score(base, k_tan, v_tan):
        mapped = v_tan if w_v is None else v_tan @ w_v.T
        return (k_tan * mapped).sum(-1)
    return _tangent_at_queries(q, k, v, c, score, elements)


def tangent_attention_query(q, k, v, c, elements: int = DEFAULT_ELEMENTS):
    """Algorithm 3 with the query-dependent score -|log_{q_i} k_j|_g^2 c / sqrt(d_k) (eq 14
    in T_{q_i}); shape=[..., n, d]."""
    scale = c / math.sqrt(q.shape[-1])

    def score(base, k_tan, v_tan):
        lam2 = (2.0 / (1.0 - c * _sqnorm(base))) ** 2
        return -(lam2 * _sqnorm(k_tan))[..., 0] * scale
    return _tangent_at_queries(q, k, v, c, score, elements)


def tangent_attention_origin(q, k, v, c):
    """Tangent attention in T_0 (GEMM form): s = -4 |log_0 q_i - log_0 k_j|^2 c / sqrt(d_k)
    via one matrix product, out = exp_0(alpha log_0 v); shape=[..., n, d]."""
    qt, kt, vt = poincare.log_map0(q, c), poincare.log_map0(k, c), poincare.log_map0(v, c)
    cross = qt @ kt.swapaxes(-1, -2)
    sq = _sqnorm(qt) + _sqnorm(kt).swapaxes(-1, -2)
    alpha = softmax(-4.0 * (sq - 2 * cross) * c / math.sqrt(q.shape[-1]))
    return poincare.exp_map0(alpha @ vt, c)


def euclidean_attention(q, k, v):
    """softmax(q k^T / sqrt(d)) v, the baseline of Table 1; shape=[..., n, d]."""
    return softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])) @ v

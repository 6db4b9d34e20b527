"""The error of tangent-space attention (RGT Algorithm 3, §8.2) against geodesic attention
(eqs 14-16 with the Frechet mean), as a function of the spread r and the curvature c.

A trial: one query q (seeded, within distance 1 of the origin), n keys and n values
exp_q(w) with |w|_g uniform in [0, r] (so every point lies within geodesic distance r of
q).  The reference output is the weighted Frechet mean (converged to |grad| <= 1e-13) with the
weights of eq (15); the error of a variant is the geodesic distance of its output to it.
"""

from __future__ import annotations

import numpy as np

from attngeom.geometry_proofs.hyperbolic import attention, frechet, poincare

VARIANTS = {"printed": attention.tangent_attention_printed,
            "query": attention.tangent_attention_query}


def cluster(sampler, q, count: int, r: float, c: float) -> np.ndarray:
    """``count`` points exp_q(w) with |w|_g uniform in [0, r], seeded; shape=[count, d]."""
    d = q.shape[-1]
    gauss = sampler.spawn(1).floats((count, d))
    lengths = r * np.abs(sampler.spawn(2).floats((count, 1))).clip(0, 1)
    w = gauss / np.linalg.norm(gauss, axis=-1, keepdims=True) * lengths
    return poincare.exp_map(q[None, :], w / poincare.conformal_factor(q, c), c)


def reference_attention(q, k, v, c) -> np.ndarray:
    """Geodesic-score + Frechet-mean attention for one query (NumPy, shape=[d])."""
    alpha = attention.softmax(attention.geodesic_scores(q[None, :], k, c))[0]
    return frechet.frechet_mean_damped(v, alpha, c, tol=1e-13).mean


def trial_errors(sampler, d: int, n: int, r: float, c: float) -> dict[str, float]:
    """The error of each variant in one seeded trial."""
    q = poincare.random_points(sampler.spawn(0), (d,), c, 1.0)
    k, v = cluster(sampler.spawn(1), q, n, r, c), cluster(sampler.spawn(2), q, n, r, c)
    ref = reference_attention(q, k, v, c)
    return {name: float(poincare.distance(f(q[None, :], k, v, c)[0], ref, c))
            for name, f in VARIANTS.items()}


def error_table(sampler, d: int, n: int, radii, curvatures, trials: int = 3) -> list[dict]:
    """Max error over ``trials`` per (c, r) and variant."""
    rows = []
    for ci, c in enumerate(curvatures):
        for ri, r in enumerate(radii):
            errs = [trial_errors(sampler.spawn(100 * ci + 10 * ri + t), d, n, r, c) for t in range(trials)]
            rows.append({"c": c, "r": r, **{name: max(e[name] for e in errs) for name in VARIANTS}})
    return rows


def fit_exponents(rows, name: str) -> dict[str, float]:
    """Least squares log err = a log c + b log r + log K over the table, with the standard
    errors of a and b (residual variance RSS / (cells - 3) times (X^T X)^-1)."""
    table = np.array([[row["c"], row["r"], row[name]] for row in rows])
    design = np.column_stack([np.log(table[:, 0]), np.log(table[:, 1]), np.ones(len(rows))])
    target = np.log(table[:, 2])
    (a, b, k), *_ = np.linalg.lstsq(design, target, rcond=None)
    rss = float(np.sum((design @ np.array([a, b, k]) - target) ** 2))
    cov = rss / max(1, len(rows) - 3) * np.linalg.inv(design.T @ design)
    return {"a": float(a), "b": float(b), "K": float(np.exp(k)),
            "se_a": float(np.sqrt(cov[0, 0])), "se_b": float(np.sqrt(cov[1, 1]))}

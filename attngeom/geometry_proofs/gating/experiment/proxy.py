"""The finite-difference curvature proxy of GEC §4 and A.5.4-A.5.5.

    kappa(x) = || (f(x + eps v) - 2 f(x) + f(x - eps v)) / eps^2 ||,   eps = 1e-2,

averaged over 64 random unit directions v, where f is the attention-output mean
m(X) = mean_i Y'_i(X) in R^64 (:func:`model.attention_output_mean`) and x = X is a test
sequence, so v is a unit vector of the whole input space R^(8 x 2).  Beside the isotropic
norm:

* anisotropic (A.5.5): || P^(1/2) d2 || for the diagonal precision P = diag(p),
  p_k = cond^(k / 63 - 1/2), k = 0..63 (condition number cond, det P = 1, so only the
  shape of the metric changes, not its volume), cond in {2, 4, 8, 12, 20};
* Fisher-Rao square-root embedding (A.5.4): the paper does not define it for a Gaussian
  mean; we use the categorical one, m -> 2 sqrt(softmax(m)) (the isometric embedding of
  the probability simplex with its Fisher metric into the sphere of radius 2), and take
  the Euclidean norm of its second difference.

This is GEC's proxy as printed: it is not invariant (it depends on the parametrisation
and on the scale of x); :mod:`invariant` computes the Gaussian curvature beside it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from attngeom.kernels.sampling import Sampler

EPSILON = 1e-2
DIRECTIONS = 64
CONDITIONS = (2, 4, 8, 12, 20)
#: Centres per chunk of the batched differences (memory: chunk x 64 x 8 x 64 float64).
CHUNK = 64


def precision_diagonal(condition: float, dim: int = 64) -> np.ndarray:
    """p_k = cond^(k/(dim-1) - 1/2): condition number ``condition``, product 1, shape=[dim]."""
    return float(condition) ** (np.arange(dim) / (dim - 1) - 0.5)


def unit_directions(sampler: Sampler, count: int, shape: tuple[int, ...]) -> np.ndarray:
    """``count`` seeded directions uniform on the unit sphere of R^prod(shape), shape=[count, *shape]."""
    raw = sampler.floats((count, int(np.prod(shape))))
    return (raw / np.linalg.norm(raw, axis=1, keepdims=True)).reshape((count,) + tuple(shape))


def sqrt_embedding(values, torch: Any):
    """The Fisher-Rao square-root embedding 2 sqrt(softmax(m)), shape=[..., 64]."""
    return 2.0 * torch.sqrt(torch.softmax(values, dim=-1))


def second_differences(function: Callable, sequences, directions, epsilon: float,
                       embeddings: dict[str, Callable]) -> dict:
    """(e(f(x + eps v)) - 2 e(f(x)) + e(f(x - eps v))) / eps^2 for every (x, v) and every
    embedding e of ``embeddings`` (f evaluated once per point): sequences shape=[N, 8, 2],
    directions shape=[K, 8, 2] -> {name: shape=[N, K, 64]}."""
    step = epsilon * directions[None]
    values = (function(sequences[:, None] + step), function(sequences)[:, None],
              function(sequences[:, None] - step))
    out = {}
    for name, embed in embeddings.items():
        plus, centre, minus = (embed(v) for v in values)
        out[name] = (plus - 2.0 * centre + minus) / epsilon ** 2
    return out


def curvature_proxies(function: Callable, sequences, directions, torch: Any,
                      epsilon: float = EPSILON, conditions=CONDITIONS) -> dict[str, np.ndarray]:
    """kappa at every sequence, averaged over the directions: {"iso", "aniso_<cond>",
    "sqrt"} -> shape=[N] (NumPy).  ``function`` maps shape=[..., 8, 2] to shape=[..., 64]."""
    weights = {f"aniso_{c}": torch.as_tensor(np.sqrt(precision_diagonal(c)), dtype=sequences.dtype,
                                             device=sequences.device) for c in conditions}
    embeddings = {"mean": lambda v: v, "sqrt": lambda v: sqrt_embedding(v, torch)}
    out: dict[str, list] = {"iso": [], **{name: [] for name in weights}, "sqrt": []}
    with torch.no_grad():
        for start in range(0, sequences.shape[0], CHUNK):
            d2 = second_differences(function, sequences[start:start + CHUNK], directions, epsilon,
                                    embeddings)
            out["iso"].append(d2["mean"].norm(dim=-1).mean(dim=-1))
            for name, w in weights.items():
                out[name].append((d2["mean"] * w).norm(dim=-1).mean(dim=-1))
            out["sqrt"].append(d2["sqrt"].norm(dim=-1).mean(dim=-1))
    return {name: torch.cat(parts).cpu().numpy() for name, parts in out.items()}

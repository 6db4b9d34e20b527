"""The cost of the attention variants (RGT Prop 9.3, Table 1, §8.1-8.2): deterministic counts
of the work and wall-clock timings measured in one process.

Implementations: ``euclidean`` softmax(q k^T/sqrt(d)) v (the baseline); ``geodesic`` all-pairs
distances (eq 14) and the Frechet mean by 3 iterations of Algorithm 1 (the "naive Riemannian"
column); ``tangent_printed`` Algorithm 3 as printed (tangent spaces at every query);
``tangent_origin`` one tangent space at the origin (the "optimized" column).  Each in two
forms: ``gram`` (:mod:`.gram`: pairwise quantities from Gram matrices, as an expert writes
them; the form the cost claim is judged by) and ``elementwise`` (:mod:`.attention`: Mobius
additions over [n, m, d] arrays, the reference the Gram form is tested against).
"""

from __future__ import annotations

import math
import time

import numpy as np

from attngeom.geometry_proofs.hyperbolic import attention, frechet, lorentz, poincare
from attngeom.geometry_proofs.hyperbolic.accelerated import gram

IMPLEMENTATIONS = ("euclidean", "geodesic", "tangent_printed", "tangent_origin")
FORMS = ("gram", "elementwise")


def _run(name: str, q, k, v, c: float, elements: int, form: str = "gram"):
    if form == "gram":
        return {"euclidean": gram.euclidean_attention, "geodesic": gram.geodesic_attention,
                "tangent_printed": gram.tangent_attention_printed,
                "tangent_origin": gram.tangent_attention_origin}[name](
                    *((q, k, v) if name == "euclidean" else (q, k, v, c)))
    if name == "euclidean":
        return attention.euclidean_attention(q, k, v)
    if name == "geodesic":
        return attention.geodesic_attention(q, k, v, c, steps=3, elements=elements)
    if name == "tangent_printed":
        return attention.tangent_attention_printed(q, k, v, c, elements=elements)
    return attention.tangent_attention_origin(q, k, v, c)


def inputs(sampler, n: int, d: int, c: float):
    """Seeded queries, keys, values within distance 1 of the origin (NumPy, [n, d] each)."""
    return [poincare.random_points(sampler.spawn(k), (n, d), c, 1.0) for k in range(3)]


def operation_counts(sampler, n: int, d: int, c: float = 2 / 3,
                     form: str = "elementwise") -> dict[str, dict[str, int]]:
    """The work each implementation does: Riemannian primitives over d-vectors (``mobius``:
    Mobius additions inside distances, exp and log maps, one per point or pair; ``origin``:
    exp_0 / log_0), and for the Gram form also ``gemm`` (multiply-adds of matrix products),
    ``pair`` (per-pair scalar entries) and ``vector`` (per-token vector entries)."""
    q, k, v = inputs(sampler, n, d, c)
    out = {}
    for name in IMPLEMENTATIONS:
        with poincare.OperationCount() as count, gram.GramCount() as work:
            _run(name, q, k, v, c, attention.DEFAULT_ELEMENTS, form)
        out[name] = {"mobius": count.mobius, "origin": count.origin}
        if form == "gram":
            out[name].update(work.as_dict())
    return out


def time_implementations(be, sampler, n: int, d: int, c: float = 2 / 3, repeats: int = 5,
                         elements: int = attention.DEFAULT_ELEMENTS,
                         form: str = "gram") -> dict[str, float]:
    """Best-of-``repeats`` seconds of each implementation on backend ``be``, the
    implementations interleaved round-robin so load from other processes hits all alike
    (one warm-up round; CUDA / jax synchronized)."""
    q, k, v = (be.asarray(a) for a in inputs(sampler, n, d, c))
    seconds = {name: float("inf") for name in IMPLEMENTATIONS}
    for rep in range(repeats + 1):
        for name in IMPLEMENTATIONS:
            start = time.perf_counter()
            result = _run(name, q, k, v, c, elements, form)
            be.synchronize(result)
            if rep:
                seconds[name] = min(seconds[name], time.perf_counter() - start)
    return seconds


def ratios(seconds: dict[str, float]) -> dict[str, float]:
    """Each implementation's time over the Euclidean baseline's."""
    base = seconds["euclidean"]
    return {name: seconds[name] / base for name in IMPLEMENTATIONS if name != "euclidean"}


# --------------------------------------------------------------------------------------
# The values of the Gram kernels against element-wise references built from the definitions
# --------------------------------------------------------------------------------------

#: Algorithm 1 steps of the naive (geodesic) layer of the cost comparison: eq (14) and 3
#: steps of Algorithm 1 (the reference runs exactly this many; the Gram layer its own default).
NAIVE_STEPS = 3


def _rows(fn, count):
    """[fn(i) for the first ``count`` rows] stacked along axis 0 (NumPy)."""
    return np.stack([np.asarray(fn(i)) for i in range(count)])


def _relative(fast, slow) -> float:
    """max |fast - slow| / max |slow|: the agreement of a kernel with its reference, relative
    to the reference's size (the attention outputs lie near the origin: an absolute error
    would hide a wrong output there); inf for a wrong shape or a non-finite entry."""
    fast, slow = np.asarray(fast, dtype=float), np.asarray(slow, dtype=float)
    if fast.shape != slow.shape or not np.all(np.isfinite(fast)):
        return float("inf")
    return float(np.max(np.abs(fast - slow)) / max(float(np.max(np.abs(slow))), 1e-300))


def kernel_agreement(sampler, n: int, d: int, c: float, rows: int = 8) -> dict[str, float]:
    """Each Gram kernel of :mod:`.accelerated.gram` (run on all N queries of the seeded
    inputs of :func:`inputs`, keys and values [N, d]) against its element-wise reference on
    the first ``rows`` queries, one query at a time (the kernels' rows are independent):
    kernel name -> max |Gram - reference| / max |reference|.

    The references are the definitions evaluated pair by pair over d-vectors -- eq (10) by
    Mobius addition and artanh (:func:`.poincare.distance`), eq (11)'s log map, Algorithm 1
    (:func:`.frechet.frechet_mean`: ``NAIVE_STEPS`` steps from the tangent mean at the
    origin; with the step 2 / (1 + L) of :func:`.frechet.hessian_bound` for
    ``eta="bound"``), the Einstein midpoint in the Klein model (:func:`.frechet.einstein_midpoint`,
    the Lorentzian centroid: the Lorentz kernels' reference through the isometry
    :func:`.lorentz.from_ball`), eq (12)'s distance arcosh(-c <x, y>_L) / sqrt(c) and
    Algorithm 3 / tangent attention of :mod:`.attention` -- none of them a Gram product."""
    q, k, v = inputs(sampler, n, d, c)
    w = sampler.spawn(7).floats((d, d)) / math.sqrt(d)
    r = min(n, rows)
    big_q, big_k, big_v = (lorentz.from_ball(x, c) for x in (q, k, v))
    alpha = attention.softmax(attention.geodesic_scores(q[:r], k, c))       # eq (15), [r, N]
    start = poincare.exp_map0(alpha @ poincare.log_map0(v, c), c)          # Algorithm 1's start
    one = lambda x, i: x[i:i + 1]

    def algorithm1(i, bound):
        p = start[i]
        for _ in range(NAIVE_STEPS):
            u = frechet.tangent_mean(p, v, alpha[i], c)
            eta = 2 / (1 + frechet.hessian_bound(p, v, alpha[i], c)) if bound else 1.0
            p = poincare.exp_map(p, eta * u, c)
        return p

    einstein = _rows(lambda i: frechet.einstein_midpoint(v, alpha[i], c), r)
    pairs = {
        "euclidean_attention": (gram.euclidean_attention(q, k, v)[:r], attention.euclidean_attention(q[:r], k, v)),
        "softmax": (gram.softmax(gram.geodesic_scores(q, k, c))[:r], alpha),
        "distance": (gram.distance(q, k, c)[:r],
                     _rows(lambda i: poincare.distance(q[i][None, :], k, c), r)),
        "geodesic_scores": (gram.geodesic_scores(q, k, c)[:r],
                            _rows(lambda i: -poincare.distance(q[i][None, :], k, c) ** 2 * c / math.sqrt(d), r)),
        "log_coefficients": (_log_from_coefficients(q, k, c)[:r],
                             _rows(lambda i: poincare.log_map(q[i][None, :], k, c), r)),
        "tangent_mean": (gram.tangent_mean(start, v, alpha, c),
                         _rows(lambda i: frechet.tangent_mean(start[i], v, alpha[i], c), r)),
        "hessian_bound": (gram.hessian_bound(start, v, alpha, c)[:, 0],
                          _rows(lambda i: frechet.hessian_bound(start[i], v, alpha[i], c), r)),
        "frechet_steps": (gram.frechet_steps(v, alpha, c, start, NAIVE_STEPS),
                          _rows(lambda i: frechet.frechet_mean(v, alpha[i], c, init=start[i],
                                                               steps=NAIVE_STEPS).mean, r)),
        "geodesic_attention": (gram.geodesic_attention(q, k, v, c)[:r], _rows(lambda i: algorithm1(i, False), r)),
        "geodesic_attention_bound": (gram.geodesic_attention(q, k, v, c, steps=NAIVE_STEPS, eta=gram.STEP_RULE)[:r],
                                     _rows(lambda i: algorithm1(i, True), r)),
        "tangent_attention_printed": (gram.tangent_attention_printed(q, k, v, c)[:r],
                                      _rows(lambda i: attention.tangent_attention_printed(one(q, i), k, v, c)[0], r)),
        "tangent_attention_printed_w": (gram.tangent_attention_printed(q, k, v, c, w)[:r],
                                        _rows(lambda i: attention.tangent_attention_printed(one(q, i), k, v, c, w)[0], r)),
        "tangent_attention_query": (gram.tangent_attention_query(q, k, v, c)[:r],
                                    _rows(lambda i: attention.tangent_attention_query(one(q, i), k, v, c)[0], r)),
        "tangent_attention_origin": (gram.tangent_attention_origin(q, k, v, c)[:r],
                                     _rows(lambda i: attention.tangent_attention_origin(one(q, i), k, v, c)[0], r)),
        "einstein_midpoint": (gram.einstein_midpoint(alpha, v, c), einstein),
        "einstein_attention": (gram.einstein_attention(q, k, v, c)[:r], einstein),
        "minkowski_gram": (gram.minkowski_gram(big_q, big_k)[:r],
                           _rows(lambda i: lorentz.lorentz_inner(big_q[i][None, :], big_k)[:, 0], r)),
        "lorentz_distance": (gram.lorentz_distance(big_q, big_k, c)[:r],
                             _rows(lambda i: lorentz.distance(big_q[i][None, :], big_k, c), r)),
        "lorentz_scores": (gram.lorentz_scores(big_q, big_k, c)[:r],
                           _rows(lambda i: -lorentz.distance(big_q[i][None, :], big_k, c) ** 2 * c / math.sqrt(d), r)),
        "lorentz_midpoint": (gram.lorentz_midpoint(alpha, big_v, c), lorentz.from_ball(einstein, c)),
        "lorentz_attention": (gram.lorentz_attention(big_q, big_k, big_v, c)[:r], lorentz.from_ball(einstein, c)),
    }
    return {name: _relative(fast, slow) for name, (fast, slow) in pairs.items()}


def _log_from_coefficients(x, y, c):
    """log_{x_i}(y_j) = -A_ij x_i + B_ij y_j from :func:`.gram.log_coefficients`;
    shape=[n, m, d]."""
    big_a, big_b = gram.log_coefficients(x, y, c)
    return -big_a[..., None] * x[:, None, :] + big_b[..., None] * y[None, :, :]

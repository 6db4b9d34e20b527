"""The cost of the attention variants (RGT Prop 9.3, Table 1, §8.1-8.2): deterministic counts
of Riemannian primitives and wall-clock timings measured in one process.

Implementations (:mod:`.attention`): ``euclidean`` softmax(q k^T/sqrt(d)) v (the baseline);
``geodesic`` all-pairs distances (eq 14) and the Frechet mean by ``steps`` iterations of
Algorithm 1 (the "naive Riemannian" column); ``tangent_printed`` Algorithm 3 as printed
(tangent spaces at every query); ``tangent_origin`` one tangent space at the origin (GEMM
form, the "optimized" column).
"""

from __future__ import annotations

import time

from geometry_proofs.hyperbolic import attention, poincare

IMPLEMENTATIONS = ("euclidean", "geodesic", "tangent_printed", "tangent_origin")


def _run(name: str, q, k, v, c: float, elements: int):
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


def operation_counts(sampler, n: int, d: int, c: float = 1.0) -> dict[str, dict[str, int]]:
    """Riemannian primitives (Mobius additions, origin maps) each implementation evaluates."""
    q, k, v = inputs(sampler, n, d, c)
    out = {}
    for name in IMPLEMENTATIONS:
        with poincare.OperationCount() as count:
            _run(name, q, k, v, c, attention.DEFAULT_ELEMENTS)
        out[name] = {"mobius": count.mobius, "origin": count.origin}
    return out


def time_implementations(be, sampler, n: int, d: int, c: float = 1.0, repeats: int = 5,
                         elements: int = attention.DEFAULT_ELEMENTS) -> dict[str, float]:
    """Best-of-``repeats`` seconds of each implementation on backend ``be``, the
    implementations interleaved round-robin so load from other processes hits all alike
    (one warm-up round; CUDA / jax synchronized)."""
    q, k, v = (be.asarray(a) for a in inputs(sampler, n, d, c))
    seconds = {name: float("inf") for name in IMPLEMENTATIONS}
    for rep in range(repeats + 1):
        for name in IMPLEMENTATIONS:
            start = time.perf_counter()
            result = _run(name, q, k, v, c, elements)
            be.synchronize(result)
            if rep:
                seconds[name] = min(seconds[name], time.perf_counter() - start)
    return seconds


def ratios(seconds: dict[str, float]) -> dict[str, float]:
    """Each implementation's time over the Euclidean baseline's."""
    base = seconds["euclidean"]
    return {name: seconds[name] / base for name in IMPLEMENTATIONS if name != "euclidean"}

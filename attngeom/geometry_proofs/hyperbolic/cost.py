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

import time

from attngeom.geometry_proofs.hyperbolic import attention, poincare

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


def operation_counts(sampler, n: int, d: int, c: float = 1.0,
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


def time_implementations(be, sampler, n: int, d: int, c: float = 1.0, repeats: int = 5,
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

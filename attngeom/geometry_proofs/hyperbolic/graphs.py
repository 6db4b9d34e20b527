"""The RGT Gram kernels (:mod:`attngeom.geometry_proofs.hyperbolic.gram`) replayed from CUDA
graphs on torch-cuda (issue 26: on an H200 they are launch-bound, 29-39x Euclidean
attention against 1.6-4.5x compiled JAX; docs/hyperbolic.md).

Host reads in the kernels: :mod:`.gram` has none of its own in the benchmarked kernels
(``frechet_steps`` reads the residual only with ``tol``, which the benchmark does not use;
no ``.item()``, no data-dependent shapes), but it calls
:func:`attngeom.geometry_proofs.hyperbolic.poincare.check_in_ball` (``bool(inside.all())``)
on its inputs and, through the exp / log maps, on intermediate points.  Inside a capture
:func:`deferred_ball_checks` replaces that check by a deferred one
(:func:`attngeom.kernels.cuda_graphs.defer_check`): the graph computes "all inside", the
caller reads it after the replay (one host read per call, as the eager kernel's checks
need at least one), and a point outside the ball reruns the kernel eagerly, which raises
the eager BadInput.  ``gram.py`` itself is not changed.

:func:`graphed_section` is the ``cuda_graphs`` part of ``attngeom benchmark
hyperbolic-attention --cuda-graphs``: every kernel and Euclidean attention replayed from
graphs, timed round-robin with eager Euclidean attention, ratios against both.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable

import numpy as np

from attngeom.geometry_proofs.hyperbolic import lorentz, poincare
from attngeom.kernels import cuda_graphs


@contextlib.contextmanager
def deferred_ball_checks():
    """While active, ``poincare.check_in_ball`` inside a capture by
    :func:`attngeom.kernels.cuda_graphs.run` records c|x|^2 < 1 on the device instead of
    reading it on the host; outside a capture it is the usual check.  (Swaps the module
    attribute, which :mod:`.gram` and :mod:`.poincare` look up at each call: not for
    concurrent threads.)"""
    original = poincare.check_in_ball

    def check(x, c, name: str = "x", sq=None):
        if not cuda_graphs.deferring():
            return original(x, c, name, sq)
        c = poincare.check_curvature(c)
        if not poincare._abstract(x):
            sq = poincare._sqnorm(x) if sq is None else sq
            cuda_graphs.defer_check((sq * c < 1).all())
        return x
    poincare.check_in_ball = check
    try:
        yield
    finally:
        poincare.check_in_ball = original


def graphed(name: str, kernel: Callable, c: float, be) -> Callable:
    """``kernel(q, k, v)`` replayed from a CUDA graph per shape on torch-cuda (called
    directly elsewhere), key ``(name, c)``; returns fresh arrays."""
    def call(q, k, v):
        with deferred_ball_checks():
            return cuda_graphs.run(lambda q, k, v, _be: kernel(q, k, v), (q, k, v), be,
                                   key=("rgt-gram", name, float(c)))
    return call


def graphed_section(config, be, kernels: dict, rows: list) -> dict:
    """Time every kernel of ``kernels`` (name -> f(q, k, v), the benchmark's) replayed from
    graphs at every N of ``rows``, round-robin with eager Euclidean attention; add to each
    row ``cuda_graphs`` = {seconds, ratios_over_euclidean_graphed, ratios_over_euclidean
    (eager), targets_met_over_...}; return the report's ``cuda_graphs`` part: ``graphed``
    (replays and no fallback), the cache's counters and fallback reasons, and max |graphed
    - eager| per kernel at the smallest N (must be <= 1e-12 in float64)."""
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import TARGETS, _inputs_for, sample_inputs
    c = float(config.curvature)
    cuda_graphs.clear()
    cuda_graphs.reset_stats()
    fast = {name: graphed(name, kernel, c, be) for name, kernel in kernels.items()}
    timed = dict(fast)
    timed["euclidean_eager"] = kernels["euclidean"]
    try:
        for row in rows:
            ball = [be.asarray(a) for a in sample_inputs(config, row["N"])]
            hyperboloid = [lorentz.from_ball(a, c) for a in ball]
            runs = {name: [] for name in timed}
            for rep in range(config.repeats + 1):          # the first round captures
                for name, kernel in timed.items():
                    start = time.perf_counter()
                    be.synchronize(kernel(*_inputs_for(name, ball, hyperboloid)))
                    if rep:
                        runs[name].append(time.perf_counter() - start)
            best = {name: min(times) for name, times in runs.items()}
            seconds = {name: {"best_s": best[name], "median_s": float(np.median(runs[name]))}
                       for name in timed}
            names = [name for name in fast if name != "euclidean"]
            over_graphed = {name: best[name] / best["euclidean"] for name in names}
            over_eager = {name: best[name] / best["euclidean_eager"] for name in names}
            row["cuda_graphs"] = {
                "seconds": seconds,
                "ratios_over_euclidean_graphed": over_graphed,
                "ratios_over_euclidean": over_eager,
                "targets_met_over_euclidean_graphed": {n: over_graphed[n] <= t for n, t in TARGETS.items()},
                "targets_met_over_euclidean": {n: over_eager[n] <= t for n, t in TARGETS.items()}}
            cuda_graphs.clear()                            # one N's graphs at a time
        counters = cuda_graphs.stats()
        n = min(config.sizes)
        ball = [be.asarray(a) for a in sample_inputs(config, n)]
        hyperboloid = [lorentz.from_ball(a, c) for a in ball]
        agreement = {}
        for name, kernel in kernels.items():
            inputs = _inputs_for(name, ball, hyperboloid)
            fast[name](*inputs)                            # capture, then compare a replay
            agreement[name] = float(np.max(np.abs(be.to_numpy(fast[name](*inputs))
                                                  - be.to_numpy(kernel(*inputs)))))
    finally:
        cuda_graphs.clear()
    return {"graphed": counters["replays"] > 0 and not counters["fallbacks"],
            "applicable": cuda_graphs.applicable(be), "stats": counters,
            "agreement_with_eager": agreement}

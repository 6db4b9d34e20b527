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
the eager BadInput.  The same deferral serves ``torch.compile`` (:func:`compiled`,
:mod:`attngeom.kernels.torch_compile`), where a host read is a graph break; ``gram.py``'s
one host read for speed (``_kept_inside``) takes its traceable branch there.

:func:`timed_section` is the ``cuda_graphs`` part of ``attngeom benchmark
hyperbolic-attention --cuda-graphs`` and the ``torch_compile`` part of ``--compile``:
every kernel and Euclidean attention replayed from graphs (or compiled), timed round-robin
with eager Euclidean attention, ratios against both.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from attngeom.geometry_proofs.hyperbolic import lorentz, poincare
from attngeom.kernels import cuda_graphs, torch_compile


def _deferred_check(x, c, name: str = "x", sq=None):
    """:func:`.poincare.check_in_ball` while :func:`deferred_ball_checks` is active: inside
    a capture or a compiled call (:func:`attngeom.kernels.cuda_graphs.deferring`) it records
    c|x|^2 < 1 on the device; otherwise the usual check.  One function for every call (a
    new closure per call would be a new object for TorchDynamo's guards each time)."""
    if not cuda_graphs.deferring():
        return _EAGER_CHECK(x, c, name, sq)
    c = poincare.check_curvature(c)
    if not poincare._abstract(x):
        sq = poincare._sqnorm(x) if sq is None else sq
        cuda_graphs.defer_check((sq * c < 1).all())
    return x


_EAGER_CHECK = poincare.check_in_ball


@contextlib.contextmanager
def deferred_ball_checks():
    """While active, ``poincare.check_in_ball`` inside a capture by
    :func:`attngeom.kernels.cuda_graphs.run` (or a compiled call by
    :func:`attngeom.kernels.torch_compile.run`) records c|x|^2 < 1 on the device instead of
    reading it on the host (:func:`_deferred_check`); outside them it is the usual check.
    (Swaps the module attribute, which :mod:`.gram` and :mod:`.poincare` look up at each
    call: not for concurrent threads.)"""
    previous = poincare.check_in_ball
    poincare.check_in_ball = _deferred_check
    try:
        yield
    finally:
        poincare.check_in_ball = previous


def graphed(name: str, kernel: Callable, c: float, be) -> Callable:
    """``kernel(q, k, v)`` replayed from a CUDA graph per shape on torch-cuda (called
    directly elsewhere), key ``(name, c)``; returns fresh arrays."""
    def call(q, k, v):
        with deferred_ball_checks():
            return cuda_graphs.run(lambda q, k, v, _be: kernel(q, k, v), (q, k, v), be,
                                   key=("rgt-gram", name, float(c)))
    return call


def compiled(name: str, kernel: Callable, c: float, be) -> Callable:
    """``kernel(q, k, v)`` through ``torch.compile`` on torch
    (:func:`attngeom.kernels.torch_compile.run`: the ball checks deferred, a failed one
    rerun eagerly; called directly where it does not apply), key ``(name, c)``."""
    def call(q, k, v):
        with deferred_ball_checks():
            return torch_compile.run(kernel, (q, k, v), be, key=("rgt-gram", name, float(c)))
    return call


@dataclass(frozen=True)
class Part:
    """One way of running the kernels faster, for :func:`timed_section`: ``label`` (the
    report's word: "graphed", "compiled"), ``wrap`` (name, kernel, c, be -> callable), the
    runner module (``clear``, ``reset_stats``, ``stats``), whether it applies on a backend,
    whether its caches are dropped after each N (CUDA graphs hold their memory pools;
    compiled code is kept: a new N reuses it with symbolic sizes), whether its counters say
    it engaged, and whether it runs only Euclidean attention and the kernels with a target
    (compiling costs seconds per kernel and shape: 15-17 s for eq 14 on this CPU)."""

    label: str
    wrap: Callable
    runner: Any
    applies: Callable
    clear_each_size: bool
    engaged: Callable
    only_targets: bool = False


PARTS = {
    "cuda_graphs": Part("graphed", graphed, cuda_graphs, cuda_graphs.applicable, True,
                        lambda counts: counts["replays"] > 0 and not counts["fallbacks"]),
    "torch_compile": Part("compiled", compiled, torch_compile,
                          lambda be: torch_compile.unavailable(be) is None, False,
                          lambda counts: counts["calls"] > 0 and not counts["fallbacks"],
                          only_targets=True),
}


def graphed_section(config, be, kernels: dict, rows: list) -> dict:
    """The ``cuda_graphs`` part of the report (:func:`timed_section`)."""
    return timed_section(config, be, kernels, rows, "cuda_graphs")


def timed_section(config, be, kernels: dict, rows: list, part_name: str) -> dict:
    """Time every kernel of ``kernels`` (name -> f(q, k, v), the benchmark's) run as
    :data:`PARTS` ``[part_name]`` says (replayed from CUDA graphs, or compiled) at every N
    of ``rows``, round-robin with eager Euclidean attention (the first round captures or
    compiles, untimed); add to each row ``part_name`` = {seconds,
    ratios_over_euclidean_<label>, ratios_over_euclidean (eager), targets_met_over_...}, the
    ratios of best wall-clock times on CUDA and of best process CPU times on the CPU;
    return the report's ``part_name`` part (the kernels with a target only, when the part
    says so): ``<label>`` (engaged, no fallback),
    ``applicable``, the runner's counters and fallback reasons, and max |fast - eager| per
    kernel at the smallest N (must be <= 1e-12 in float64)."""
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import TARGETS, _inputs_for, sample_inputs
    part = PARTS[part_name]
    label = part.label
    c = float(config.curvature)
    part.runner.clear()
    part.runner.reset_stats()
    if part.only_targets:
        kernels = {name: kernel for name, kernel in kernels.items() if name == "euclidean" or name in TARGETS}
    fast = {name: part.wrap(name, kernel, c, be) for name, kernel in kernels.items()}
    timed = dict(fast)
    timed["euclidean_eager"] = kernels["euclidean"]
    try:
        for row in rows:
            ball = [be.asarray(a) for a in sample_inputs(config, row["N"])]
            hyperboloid = [lorentz.from_ball(a, c) for a in ball]
            runs = {name: [] for name in timed}
            cpu_runs = {name: [] for name in timed}
            for rep in range(config.repeats + 1):          # the first round captures / compiles
                for name, kernel in timed.items():
                    start, cpu_start = time.perf_counter(), time.process_time()
                    be.synchronize(kernel(*_inputs_for(name, ball, hyperboloid)))
                    if rep:
                        runs[name].append(time.perf_counter() - start)
                        cpu_runs[name].append(time.process_time() - cpu_start)
            seconds = {name: {"best_s": min(runs[name]), "median_s": float(np.median(runs[name])),
                              "cpu_best_s": min(cpu_runs[name])} for name in timed}
            # on the CPU the ratios are of process CPU time, as the eager table's
            best = {name: seconds[name]["cpu_best_s" if be.device == "cpu" else "best_s"]
                    for name in timed}
            names = [name for name in fast if name != "euclidean"]
            over_fast = {name: best[name] / best["euclidean"] for name in names}
            over_eager = {name: best[name] / best["euclidean_eager"] for name in names}
            row[part_name] = {
                "seconds": seconds,
                f"ratios_over_euclidean_{label}": over_fast,
                "ratios_over_euclidean": over_eager,
                f"targets_met_over_euclidean_{label}": {n: over_fast[n] <= t for n, t in TARGETS.items()},
                "targets_met_over_euclidean": {n: over_eager[n] <= t for n, t in TARGETS.items()}}
            if part.clear_each_size:
                part.runner.clear()                        # one N's graphs at a time
        counters = part.runner.stats()
        n = min(config.sizes)
        ball = [be.asarray(a) for a in sample_inputs(config, n)]
        hyperboloid = [lorentz.from_ball(a, c) for a in ball]
        agreement = {}
        for name, kernel in kernels.items():
            inputs = _inputs_for(name, ball, hyperboloid)
            fast[name](*inputs)                            # capture / compile, then compare
            agreement[name] = float(np.max(np.abs(be.to_numpy(fast[name](*inputs))
                                                  - be.to_numpy(kernel(*inputs)))))
    finally:
        part.runner.clear()
    return {label: part.engaged(counters), "applicable": part.applies(be), "stats": counters,
            "agreement_with_eager": agreement}

"""The RGT Gram kernels (:mod:`attngeom.geometry_proofs.hyperbolic.accelerated.gram`) replayed from CUDA
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

:func:`attngeom.geometry_proofs.hyperbolic.attention_benchmark.timed_section` is the
``cuda_graphs`` part of ``attngeom benchmark
hyperbolic-attention --cuda-graphs`` and the ``torch_compile`` part of ``--compile``:
every kernel and Euclidean attention replayed from graphs (or compiled), timed round-robin
with eager Euclidean attention, ratios against both.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable

from attngeom.geometry_proofs.hyperbolic import poincare
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
    """One way of running the kernels faster, for
    :func:`attngeom.geometry_proofs.hyperbolic.attention_benchmark.timed_section`: ``label`` (the
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

"""``torch.compile`` of the attention kernels (issue 26: eager torch runs every pass over an
[N, N] array as its own operator -- on the CPU ~3-5 us of dispatch each, a third of RGT eq
14's time at N = 128; on CUDA a kernel launch each).

:func:`run` calls ``function(*args)`` through ``torch.compile`` (TorchInductor: the
element-wise passes fused into generated C++ loops on the CPU, Triton kernels on CUDA;
matrix products and factorizations stay library calls), one compiled callable per cache
key and mode.  TorchDynamo compiles a graph at the first call of each input signature and
re-uses it afterwards; with ``dynamic=None`` (torch's default) a second shape recompiles
once with symbolic sizes, so a sweep over N compiles about twice per kernel.

Host reads inside the traced code are graph breaks.  The kernels' checks that read the host
(the Poincare-ball checks of the hyperbolic kernels, through
``attngeom.geometry_proofs.hyperbolic.accelerated.graphs.deferred_ball_checks``) are *deferred*, as
inside a CUDA-graph capture (:func:`attngeom.kernels.cuda_graphs.defer_check`): while
:func:`run` calls the compiled function, every such check records a device boolean, which
Dynamo returns as a graph output; :func:`run` reads their conjunction after the call (one
host read) and, if a check failed, calls ``function`` eagerly, which raises the eager error.
Code that branches on host values for speed alone asks :func:`compiling` and takes its
traceable branch (``gram._kept_inside``).

Modes: ``"default"`` on the CPU; on CUDA ``"reduce-overhead"`` (the compiled graph replayed
from CUDA graphs: the launches go too), whose outputs torch overwrites at the next replay,
so :func:`run` returns clones there.

Each key's function is compiled from a wrapper with its own code object (Dynamo's cache
and its limit of 8 graphs are per code object: kernels made as closures of one lambda would
share them, and past the limit Dynamo silently runs eagerly, which :func:`run` turns into a
recorded fallback).  Where it does not apply (not torch, or torch on the CPU without a C++
compiler, which Inductor's CPU code needs) and where compiling fails, :func:`run` calls
``function`` eagerly (the same results) and records why under ``STATS["fallbacks"]`` (:func:`stats`; the
benchmarks put it in their JSON).  Compilation costs seconds per kernel and shape (15-17 s
for eq 14 on this 2-core CPU): the kernels stay eager unless a caller asks for this.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
from typing import Any, Callable

from attngeom.kernels import cuda_graphs
from attngeom.kernels.backend import Backend

#: counters since the last :func:`reset_stats`: ``signatures`` (first calls of a key and
#: input signature: what Dynamo compiles for), ``calls`` (calls through a compiled
#: function), ``fallbacks`` (reason -> count: calls that ran eagerly).
STATS: dict[str, Any] = {"signatures": 0, "calls": 0, "fallbacks": {}}

_COMPILED: dict[tuple, Callable] = {}
_SEEN: set[tuple] = set()
_FAILED: dict[tuple, str] = {}


def stats() -> dict:
    """A copy of :data:`STATS` (JSON-ready)."""
    return {"signatures": STATS["signatures"], "calls": STATS["calls"],
            "fallbacks": dict(STATS["fallbacks"])}


def reset_stats() -> None:
    STATS.update(signatures=0, calls=0, fallbacks={})


def record_fallback(reason: str) -> None:
    """Count one call that wanted the compiled path and ran eagerly, with its reason."""
    STATS["fallbacks"][reason] = STATS["fallbacks"].get(reason, 0) + 1


def clear() -> None:
    """Forget every compiled function (and failed key); Dynamo's own caches are reset too."""
    _COMPILED.clear()
    _SEEN.clear()
    _FAILED.clear()
    if "torch" in sys.modules:
        sys.modules["torch"]._dynamo.reset()


def compiling() -> bool:
    """True while TorchDynamo traces the calling code (host reads there are graph breaks);
    False otherwise, and always when torch was never imported."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def unavailable(be: Backend) -> str | None:
    """Why :func:`run` cannot compile on ``be`` (None when it can): not torch, a torch
    without ``torch.compile``, or the CPU without a C++ compiler (``$CXX``, ``c++``, ``g++``)."""
    if be.name != "torch":
        return f"{be.name} (torch.compile is torch's)"
    if not hasattr(be.module, "compile"):
        return "this torch has no torch.compile"
    if be.device == "cpu" and not _cpp_compiler(os.environ.get("CXX", "")):
        return "no C++ compiler (TorchInductor's CPU code needs one)"
    return None


@functools.lru_cache(maxsize=None)
def _cpp_compiler(cxx: str) -> str | None:
    """The first of ``$CXX``, ``c++``, ``g++`` on the PATH (looked up once: a lookup costs
    ~0.1 ms, a compiled call at N = 128 a few)."""
    return next((found for name in (cxx, "c++", "g++") if name and (found := shutil.which(name))), None)


def default_mode(be: Backend) -> str:
    """``"reduce-overhead"`` on CUDA (compiled and replayed from CUDA graphs), ``"default"``
    elsewhere."""
    return "reduce-overhead" if be.device == "cuda" else "default"


def run(function: Callable, args: tuple, be: Backend, *, key, mode: str | None = None):
    """``function(*args)`` through ``torch.compile`` (see the module's text), or eagerly
    where that does not apply.

    Parameters
    ----------
    function : tensors in, a tensor or a tuple / list / dict of tensors out; checks that
        read the host deferred (:func:`attngeom.kernels.cuda_graphs.defer_check`).
    args : its arguments (tensors; other values are constants of the compiled graph).
    key : hashable: the function and every setting it closes over.
    mode : ``torch.compile``'s mode; None: :func:`default_mode`.
    """
    reason = unavailable(be)
    if reason is not None:
        record_fallback(reason)
        return function(*args)
    mode = default_mode(be) if mode is None else mode
    full_key = (key, mode, cuda_graphs.signature(args))
    if full_key in _FAILED:
        record_fallback(_FAILED[full_key])
        return function(*args)
    compiled = _COMPILED.get((key, mode))
    if compiled is None:
        compiled = _COMPILED[key, mode] = be.module.compile(_own_code(function, len(_COMPILED)), mode=mode)
    first = full_key not in _SEEN
    if first:
        _SEEN.add(full_key)
        STATS["signatures"] += 1
    flags: list = []
    # at a new signature (what makes Dynamo compile again) past its recompile limit Dynamo
    # would run the frame eagerly without a word: make that an error, so that it is
    # recorded as a fallback (and the call runs eagerly); not at every call (~35 us)
    limit = (be.module._dynamo.config.patch(fail_on_recompile_limit_hit=True) if first
             else contextlib.nullcontext())
    try:
        with cuda_graphs.deferring_checks(flags), limit:
            out = compiled(*args)
    except Exception as error:      # noqa: BLE001 -- a failed compilation runs eagerly, recorded
        if _is_input_error(error):
            raise
        _FAILED[full_key] = f"compilation failed: {type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
        record_fallback(_FAILED[full_key])
        return function(*args)
    STATS["calls"] += 1
    if flags and not bool(be.module.stack([f.reshape(()) for f in flags]).all()):
        record_fallback("a deferred check failed (rerun eagerly)")
        return function(*args)
    if mode == "reduce-overhead":
        return cuda_graphs.map_tensors(out, lambda t: t.clone())
    return out


def _own_code(function: Callable, number: int) -> Callable:
    """``function`` called from a wrapper with a code object of its own.  Dynamo keeps its
    compiled graphs per code object, at most ``recompile_limit`` (8) of them: functions
    that share one code (closures or lambdas made in a loop, e.g. the benchmarks' kernel
    table) would share those 8 places across every key, and past them run eagerly."""
    def call(*args):
        return function(*args)
    call.__code__ = call.__code__.replace(co_name=f"compiled_{number}")
    return call


def _is_input_error(error: Exception) -> bool:
    """The kernels' own one-line input errors (BadInput) pass through."""
    from attngeom.core.errors import BadInput
    return isinstance(error, BadInput)

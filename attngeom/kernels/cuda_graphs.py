"""CUDA-graph replay of fixed-shape torch kernels on CUDA (issue 26: launch-bound kernels).

On an H200 the GT structured kernel and the RGT Gram kernels spend their time launching
tens of small kernels (docs/gauge-attention.md, docs/hyperbolic.md).  :func:`run` captures
``function(*tensors, backend)`` once per cache key into a ``torch.cuda.CUDAGraph`` and
replays it afterwards: a call is then the copies of the inputs into the graph's static
input tensors, one graph launch and (by default) one clone per output.

Capture follows the PyTorch CUDA-graph documentation ("CUDA Graphs" notes,
``torch.cuda.graph``): static input tensors (clones of the first call's inputs) that every
later call copies into; warm-up iterations (:data:`WARMUP`) on a side stream that first
waits for the current stream, the current stream then waiting for the side stream; the
capture under ``with torch.cuda.graph(g, stream=side)`` (capture_error_mode
"thread_local", :func:`_graph_context`) on that same side stream (warm-up
and capture on one stream, as ``torch.cuda.make_graphed_callables`` does, so that library
handles and workspaces created lazily in the warm-up are the capture stream's); replay on
the caller's current stream (``CUDAGraph.replay`` launches on it, after the input copies
queued there).  Everything runs under ``torch.no_grad()``: graphs here are forward-only,
and a call whose inputs require grad (grad mode on) runs eagerly (recorded, below).

Outputs: with ``clone=True`` (default) every call returns fresh clones; with
``clone=False`` the graph's static output tensors themselves, **overwritten by the next
replay of the same graph** (and, where another graph takes them as inputs, read by it:
:func:`run` uses a tensor that is already a static tensor of a cached graph in place, with
no copy, so graphs can be chained).

Host reads are not allowed inside a capture.  The function runs with a backend whose
``asarray`` caches its constants (created in the warm-up, reused by the capture: a
host-to-device copy inside a capture fails) and whose ``linalg.cholesky`` is
``cholesky_ex`` (no host check of the factorization's info) while capturing; checks that
need the host (the info, or the Poincare-ball checks of the hyperbolic kernels, see
``attngeom.geometry_proofs.hyperbolic.accelerated.graphs``) are *deferred*: :func:`defer_check`
records a device boolean, the graph computes their conjunction, :func:`run` reads it after
the replay (one host read) and, if any check failed, runs the function eagerly, which
raises the eager error.  (So a graphed call that has deferred checks synchronizes once;
one without returns without waiting.)

Not CUDA (numpy, jax, torch on the cpu): :func:`run` calls ``function(*tensors, backend)``
(the same results), counted under ``STATS["eager"]``.  A capture that fails is not
retried: that key runs eagerly from then on, the reason recorded under
``STATS["fallbacks"]`` (read it with :func:`stats`; the benchmarks put it in their JSON).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable

from attngeom.kernels.backend import Backend

#: warm-up iterations before a capture (the PyTorch notes' example uses 3; also what
#: ``torch.cuda.make_graphed_callables`` defaults to).
WARMUP = 3

#: counters since the last :func:`reset_stats`: captures, replays, eager calls (not CUDA),
#: and fallbacks (reason -> count: calls that wanted a graph and ran eagerly).
STATS: dict[str, Any] = {"captures": 0, "replays": 0, "eager": 0, "fallbacks": {}}


def stats() -> dict:
    """A copy of :data:`STATS` (JSON-ready)."""
    return {"captures": STATS["captures"], "replays": STATS["replays"], "eager": STATS["eager"],
            "fallbacks": dict(STATS["fallbacks"])}


def reset_stats() -> None:
    STATS.update(captures=0, replays=0, eager=0, fallbacks={})


def record_fallback(reason: str) -> None:
    """Count one call that wanted a graph and ran eagerly, with its reason."""
    STATS["fallbacks"][reason] = STATS["fallbacks"].get(reason, 0) + 1


def applicable(be: Backend) -> bool:
    """Whether :func:`run` captures graphs on ``be``: torch on CUDA."""
    return be.name == "torch" and be.device == "cuda"


# ---------------------------------------------------------------------------------------
# deferred host checks


_DEFERRED: list | None = None


def deferring() -> bool:
    """Whether :func:`run` is capturing or :func:`attngeom.kernels.torch_compile.run` is
    calling a compiled function (host checks must be deferred with :func:`defer_check`);
    False in the capture's warm-up and in eager calls."""
    return _DEFERRED is not None


def defer_check(flag) -> None:
    """Inside a capture by :func:`run`: record ``flag`` (a device boolean, True when the
    check passes); :func:`run` reads the conjunction of the recorded flags after every
    replay and reruns the function eagerly if it is False."""
    if _DEFERRED is None:
        raise RuntimeError("defer_check outside a capture by attngeom.kernels.cuda_graphs.run")
    _DEFERRED.append(flag)


@contextlib.contextmanager
def deferring_checks(flags: list):
    """While active, :func:`defer_check` appends to ``flags`` (:func:`run`'s capture, and
    :func:`attngeom.kernels.torch_compile.run`'s compiled calls, whose traced checks come
    back as graph outputs)."""
    global _DEFERRED
    previous, _DEFERRED = _DEFERRED, flags
    try:
        yield flags
    finally:
        _DEFERRED = previous


# ---------------------------------------------------------------------------------------
# the backend a captured function runs with


class _Linalg:
    """``torch.linalg`` with ``cholesky`` = ``cholesky_ex`` (its info deferred) while capturing:
    ``torch.linalg.cholesky`` reads the info on the host to raise, a sync."""

    def __init__(self, linalg):
        self._linalg = linalg

    def cholesky(self, a, *, upper: bool = False):
        if _DEFERRED is None:                    # not inside a capture by run()
            return self._linalg.cholesky(a, upper=upper)
        lower, info = self._linalg.cholesky_ex(a, upper=upper)
        defer_check((info == 0).all())
        return lower

    def __getattr__(self, name):
        return getattr(self._linalg, name)


class _Module:
    """The torch module with :class:`_Linalg` as ``linalg``; everything else torch's."""

    def __init__(self, torch):
        self._torch = torch
        self.linalg = _Linalg(torch.linalg)

    def __getattr__(self, name):
        return getattr(self._torch, name)


@dataclass(frozen=True)
class GraphBackend(Backend):
    """``be`` for a function under capture: ``asarray`` of a NumPy constant returns the
    device tensor made the first time (in the warm-up) for equal contents, shape and dtype,
    so the capture makes no host-to-device copy; ``module.linalg.cholesky`` as
    :class:`_Linalg`.  One per captured graph (its constants live as long as the graph)."""

    constants: dict = field(default_factory=dict, compare=False, hash=False)

    def asarray(self, array, dtype: str = "float64"):
        import numpy as np
        host = np.asarray(array, dtype=dtype)
        key = (host.dtype.str, host.shape, host.tobytes())
        if key not in self.constants:
            self.constants[key] = Backend.asarray(self, host, dtype)
        return self.constants[key]


def graph_backend(be: Backend) -> GraphBackend:
    return GraphBackend(be.name, be.device, _Module(be.module), be._device_handle)


# ---------------------------------------------------------------------------------------
# the cache


def map_tensors(structure, leaf: Callable):
    """``leaf`` applied to every tensor of a tensor / tuple / list / dict structure (other
    values kept)."""
    if isinstance(structure, (tuple, list)):
        mapped = [map_tensors(x, leaf) for x in structure]
        return type(structure)(mapped) if type(structure) in (tuple, list) else type(structure)(*mapped)
    if isinstance(structure, dict):
        return {k: map_tensors(v, leaf) for k, v in structure.items()}
    return leaf(structure) if _is_tensor(structure) else structure


def _leaves(structure) -> list:
    out = []
    map_tensors(structure, lambda t: out.append(t) or t)
    return out


def _is_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


@dataclass
class _Entry:
    replay: Callable[[], None]
    static_inputs: tuple
    static_outputs: Any
    flag: Any                 # the conjunction of the deferred checks, or None
    backend: GraphBackend
    graph: Any = None


_CACHE: dict[tuple, _Entry] = {}
_FAILED: dict[tuple, str] = {}
#: id -> tensor of every static tensor (input or output) of a cached graph: passed to
#: :func:`run` again it is used in place.
_STATIC: dict[int, Any] = {}


def cache_size() -> int:
    return len(_CACHE)


def clear() -> None:
    """Drop every captured graph (their memory pools return to torch's allocator) and the
    record of failed captures."""
    for entry in _CACHE.values():
        if entry.graph is not None:
            entry.graph.reset()
    _CACHE.clear()
    _FAILED.clear()
    _STATIC.clear()


def signature(args) -> tuple:
    """The shapes, dtypes and devices of the tensors of ``args`` (other values by repr)."""
    return tuple((tuple(a.shape), str(a.dtype), str(a.device)) if _is_tensor(a) else ("value", repr(a))
                 for a in args)


def run(function: Callable, args: tuple, be: Backend, *, key, clone: bool = True):
    """``function(*args, backend)`` replayed from a CUDA graph on torch-cuda (captured at the
    first call of a cache key), called directly elsewhere.

    Parameters
    ----------
    function : called as ``function(*args, backend)``; tensors in, a tensor or a tuple /
        list / dict of tensors out; no host reads of device values (defer them with
        :func:`defer_check`), no data-dependent shapes.
    args : the inputs (tensors; other values are baked into the graph and keyed by repr).
    key : hashable: the function and every static setting it closes over (the cache key
        is ``key`` with the inputs' shapes, dtypes and devices).
    clone : return clones of the outputs (default) or the static outputs themselves,
        overwritten by the next replay.
    """
    if not applicable(be):
        STATS["eager"] += 1
        return function(*args, be)
    torch = be.module
    if torch.is_grad_enabled() and any(_is_tensor(a) and a.requires_grad for a in args):
        record_fallback("inputs require grad (graphs here are forward-only)")
        return function(*args, be)
    full_key = (key, signature(args))
    if full_key in _FAILED:
        record_fallback(_FAILED[full_key])
        return function(*args, be)
    entry = _CACHE.get(full_key)
    if entry is None:
        try:
            entry = _capture(function, args, be)
        except _WarmupError as error:
            raise error.__cause__ from None      # the eager function's own error
        except Exception as error:               # noqa: BLE001 - recorded, then eager
            reason = f"capture failed: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            _FAILED[full_key] = reason
            record_fallback(reason)
            _recover(torch)
            return function(*args, be)
        _CACHE[full_key] = entry
        for tensor in list(entry.static_inputs) + _leaves(entry.static_outputs):
            if _is_tensor(tensor):
                _STATIC[id(tensor)] = tensor
        STATS["captures"] += 1
    with torch.no_grad():
        for static, given in zip(entry.static_inputs, args):
            if _is_tensor(static) and static is not given:
                static.copy_(given)
        entry.replay()
        STATS["replays"] += 1
        if entry.flag is not None and not bool(entry.flag):
            record_fallback("a deferred check failed; eager rerun")
            return function(*args, be)
        return map_tensors(entry.static_outputs, lambda t: t.clone()) if clone else entry.static_outputs


class _WarmupError(Exception):
    """The function failed eagerly in the warm-up: its error is the caller's."""


def _static_input(x):
    """The static tensor of an input: the input itself when it is a static tensor of a
    cached graph (chained graphs), else a clone (``clone`` keeps the strides of a dense
    tensor, so the captured kernels are the eager ones)."""
    if not _is_tensor(x):
        return x
    if _STATIC.get(id(x)) is x:
        return x
    return x.detach().clone()


def _capture(function: Callable, args: tuple, be: Backend) -> _Entry:
    """Warm-up on a side stream, then capture on it (the PyTorch notes' recipe)."""
    torch = be.module
    static_inputs = tuple(_static_input(a) for a in args)
    backend = graph_backend(be)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad():
        try:
            with torch.cuda.stream(side):
                for _ in range(WARMUP):
                    function(*static_inputs, backend)
        except Exception as error:  # noqa: BLE001
            torch.cuda.current_stream().wait_stream(side)
            raise _WarmupError() from error
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        flags: list = []
        with deferring_checks(flags), _graph_context(torch, graph, side):
            outputs = function(*static_inputs, backend)
            flag = torch.stack([f.reshape(()) for f in flags]).all() if flags else None
    return _Entry(replay=graph.replay, static_inputs=static_inputs, static_outputs=outputs,
                  flag=flag, backend=backend, graph=graph)


def _graph_context(torch, graph, stream):
    """``torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local")``: an
    unsafe CUDA call (a sync, a host read) in *this* thread still ends the capture with an
    error, but other threads of the process -- JAX's runtime, in a pytest process that ran
    the JAX tests first -- are not made to fail, nor fail the capture, by their own CUDA
    calls ("global", the default, would).  Versions of torch without the argument: the
    default mode."""
    try:
        return torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local")
    except TypeError:
        return torch.cuda.graph(graph, stream=stream)


def _recover(torch) -> None:
    """After a failed capture: wait for the device, drop cached blocks (errors ignored:
    the eager rerun that follows reports anything that is still wrong)."""
    with contextlib.suppress(Exception):
        torch.cuda.synchronize()
    with contextlib.suppress(Exception):
        torch.cuda.empty_cache()


def emulated_capture(function: Callable, args: tuple, be: Backend) -> _Entry:
    """A stand-in for the capture on a machine without CUDA (tests: monkeypatch ``_capture``
    with it and ``applicable`` to accept torch-cpu): the static inputs as a capture makes
    them, deferred checks recorded as in a capture, and 'replay' = the function run again
    on the static inputs, its results copied into the static outputs and the flag (what a
    graph replay does to them)."""
    torch = be.module
    static_inputs = tuple(_static_input(a) for a in args)
    backend = graph_backend(be)

    def run_once():
        flags: list = []
        with torch.no_grad(), deferring_checks(flags):
            outputs = function(*static_inputs, backend)
        return outputs, (torch.stack([f.reshape(()) for f in flags]).all() if flags else None)
    outputs, flag = run_once()

    def replay():
        fresh, fresh_flag = run_once()
        for static, new in zip(_leaves(outputs), _leaves(fresh)):
            if static is not new:
                static.copy_(new)
        if flag is not None:
            flag.copy_(fresh_flag)
    return _Entry(replay=replay, static_inputs=static_inputs, static_outputs=outputs, flag=flag,
                  backend=backend)

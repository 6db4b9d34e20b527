"""The full-Sigma per-token statistics of the GT structured kernel in Triton (torch on CUDA;
issue 26).

:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics` computes, for every batch, head
and token, from Sigma_i (n x n), mu_i and the frame R_i = exp(phi_i) the rows of the
pairwise product (:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_pairwise.pairwise_operands` with offsets).
As library calls that is about a dozen batched kernels: on an H100 at GT's size, N = 1024,
the batched 20 x 20 products took 0.57 ms, the Cholesky factorization 0.32, the triangular
solve 0.22 and the concatenations 0.26 of the structured kernel's 2.0-2.2 ms of device time
(docs/gauge-attention.md, fifth GPU session).  Here (:data:`MODE` "fused"; the default
"warp" runs the CUDA C kernel of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cuda` instead, and
this one where that cannot run) one Triton program per (batch, head, token) does it all in registers, on an n x n tile padded
to a power of two (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton_kernels`):

* Sigma = L L^T by the right-looking Cholesky factorization (n steps, step k: column k of
  L from the pivot Sigma^(k)_kk > 0, then the rank-one update of the trailing matrix), and
  logdet Sigma = sum_k log Sigma^(k)_kk;
* in the same n steps X = B L^{-T} with B = [R^T; mu^T] ((n+1) x n): X L^T = B is solved
  column by column, column k of X final once column k of L is (X[:, k] /= L_kk, then
  X[:, j] -= X[:, k] L_jk for j > k);
* nu = R^T mu and M = R^T Sigma R + nu nu^T = R^T (Sigma + mu mu^T) R (two tile products);
* G = X X^T (one tile product): G[:n, :n] = R^T Sigma^{-1} R = P, G[n, :n] = (P nu)^T and
  G[n, n] = mu^T Sigma^{-1} mu (R orthogonal);

and it writes, n(n+1)/2 entries of the upper triangle in the order of
:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._triangle_pairs` (the diagonal, then row by row),

    query_i = [M_i (diagonal halved), -nu_i, 1/2, -(logdet Sigma_i + n) / 2]
    key_j   = [P_j, P_j nu_j, nu_j^T P_j nu_j + logdet Sigma_j, 1]

so that query_i . key_j = K_ij (GT eq 13 through the structured identity of
:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured`), plus nu_i and
logdet Sigma_i.  The same numbers as the library calls up to rounding (another order of
the sums: rows within 2.3e-13 at GT's size, N = 1024, float64); tests compare them
(``tests/test_kl_statistics_triton.py``).  :data:`MODE` "products" keeps the library's
Cholesky factorization and triangular solve and does the rest in Triton.

Measured on an H100 (docs/gauge-attention.md, sixth GPU session), GT's size, full Sigma,
float64, one process: at N = 1024 the graphed kernel 1.96 ms with the fused statistics
against 2.38 ("products") and 2.53 (library calls), eager 2.89 against 3.36 and 3.96; at
N = 128 graphed 0.51 / 0.53 / 0.61 ms.  The fused kernel is register-bound (255 registers
a thread; with 2 warps, :data:`NUM_WARPS`, 174 spilled, and still the fastest).  :data:`STREAM`
= 1 forms the products without tile products (rank-one updates, operands read from memory:
fewer registers); timed on an H200 it was slower in every setting (1.31-2.72 against 1.16 ms
at N = 1024; ``tests/benchmarks/profile_gauge_kernel.py``, ``run_gpu_checks.sh gauge-profile``).

When it applies (:func:`unavailable` says why not): torch on CUDA with Triton importable,
float32 or float64, n + 1 <= 32 (:data:`MAX_TILE`), outside autograd (forward only: inputs
that require grad keep the library calls, differentiable) and outside ``torch.compile``
(Inductor makes its own kernels).  The factorization's check: the program writes whether every pivot was
positive; eagerly the flags are read on the host (one sync, as ``torch.linalg.cholesky``
makes) and a failed factorization reruns the library calls, which raise torch's error;
inside a CUDA-graph capture the check is deferred (:func:`attngeom.kernels.cuda_graphs.defer_check`).
A launch that fails (Triton cannot compile or run the kernel on this machine) is recorded
in :data:`FAILED` and the library calls run from then on; one of the CUDA C kernel is
recorded in :data:`WARP_FAILED` and Triton runs from then on.

Triton is imported at the first launch only (start-up, issue 26).  On the CPU the kernel
runs only under Triton's interpreter (``TRITON_INTERPRET=1`` and :data:`INTERPRETED_ON_CPU`
set, what the CPU tests do): there it is a correctness check, far slower than the library
calls.
"""

from __future__ import annotations

import contextlib
import functools
import os

from attngeom.geometry_proofs.gauge.accelerated.kl_primitives import _swap, cholesky, solve_lower_right
from attngeom.kernels.backend import Backend
from attngeom.kernels.switch import Switch

#: the largest tile (n + 1 <= MAX_TILE): a 32 x 32 float64 tile already fills the registers
#: (255 a thread at GT's n = 20, measured); a 64 x 64 one would spill four times as much, and
#: only n = 20 has been timed, so larger heads keep the library calls
MAX_TILE = 32

#: warps per program (the tile's 32 x 32 entries spread over them).  2: on an H100 at GT's
#: size, N = 1024, the statistics alone took 1.16-1.18 ms with 2 warps against 1.61 (4), 2.14
#: (1) and 2.82 (8), 1.46-1.56 for the "products" mode and 1.88-2.14 for the library calls
#: (wall time of eager calls; docs/gauge-attention.md, sixth GPU session)
NUM_WARPS = 2

#: "fused": the factorization, the solve and the products in one kernel; "products": the
#: library's Cholesky factorization and triangular solve, then one kernel for the rest;
#: "warp": not Triton but the CUDA C kernel of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cuda`
#: (one warp per matrix, ``NUM_WARPS`` warps a block)
MODES = ("fused", "products", "warp")

#: the mode, "warp" by default: on an H200 at GT's size, N = 1024, full Sigma, float64, the
#: statistics alone took 0.62 ms against 1.14 for "fused" and the graphed kernel 1.33 ms
#: against 1.77 (docs/gauge-attention.md, eighth GPU session).  Where torch has no NVRTC
#: entry point, or the CUDA C kernel failed here (:data:`WARP_FAILED`), "warp" runs as
#: "fused" (:func:`mode`).  The environment variable ATTNGEOM_GT_STATISTICS chooses another
#: mode for a whole run; a value that is not one of :data:`MODES` turns the kernels off
#: (:func:`unavailable` says so, the library calls run)
MODE = os.environ.get("ATTNGEOM_GT_STATISTICS", "warp")

#: the fused kernel's n steps: 0 unrolled, k >= 1 a loop unrolled k times
UNROLL = 0

#: the products: 0 tile products (``tl.dot``), 1 rank-one updates with operands read from
#: memory (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton_kernels`).  Timed on an H200 (seventh
#: GPU session): 1 is slower in every setting, statistics alone at N = 1024 1.31-2.72 ms
#: against 1.16 for the default, though it spills less (0-718 against 172 registers)
STREAM = 0

#: registers and spills per thread of the kernels launched, by (mode, unroll, warps, stream, n, dtype)
#: (None under the interpreter)
LAUNCHES: dict = {}

#: run the kernel on torch's CPU tensors too (only meaningful under TRITON_INTERPRET=1: the
#: CPU tests set it in a subprocess)
INTERPRETED_ON_CPU = False

#: why a launch failed (Triton could not compile or run the kernel here), once: from then on
#: the library calls run, and :func:`unavailable` says this
FAILED: list[str] = []

#: why the CUDA C kernel (mode "warp") failed here (NVRTC could not compile it, or its
#: launch failed), once: from then on "warp" runs as "fused" (:func:`mode`)
WARP_FAILED: list[str] = []


#: on, or off inside ``disabled()`` (the structured kernel then uses the eager statistics:
#: the A/B of the benchmark and the profile script)
SWITCH = Switch()
disabled, enabled = SWITCH.disabled, SWITCH.enabled


def mode() -> str:
    """The mode a launch uses: :data:`MODE`, except "warp" where it cannot run here (torch
    has no NVRTC entry point, or :data:`WARP_FAILED`), which runs as "fused"."""
    if MODE == "warp":
        from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cuda
        if WARP_FAILED or kl_statistics_cuda.compiler_missing():
            return "fused"
    return MODE


def setting() -> tuple:
    """What decides the kernel a call launches (the CUDA-graph cache keys on it: a graph
    captured with one setting is not replayed for a caller with another)."""
    return (enabled(), mode(), UNROLL, NUM_WARPS, STREAM)


@contextlib.contextmanager
def configured(name: str, unroll: int = 0, warps: int = 2, stream: int = 0):
    """Within it the kernels launch with the mode ``name`` (one of :data:`MODES`), ``unroll``,
    ``warps`` and ``stream`` (the benchmark's A/B)."""
    global MODE, UNROLL, NUM_WARPS, STREAM
    previous = MODE, UNROLL, NUM_WARPS, STREAM
    MODE, UNROLL, NUM_WARPS, STREAM = name, unroll, warps, stream
    try:
        yield
    finally:
        MODE, UNROLL, NUM_WARPS, STREAM = previous


@functools.lru_cache(maxsize=1)
def _triton_missing() -> str | None:
    try:
        import triton  # noqa: F401
    except ImportError:
        return "Triton is not installed"
    return None


def unavailable(be: Backend, *tensors) -> str | None:
    """Why the fused statistics do not apply to ``tensors`` (mu, Sigma, rotation) on ``be``,
    or None when they do."""
    if not enabled():
        return "disabled"
    if be.name != "torch":
        return f"{be.name} is not torch"
    torch = be.module
    first = tensors[0]
    if first.device.type != "cuda" and not (INTERPRETED_ON_CPU and os.environ.get("TRITON_INTERPRET") == "1"):
        return "not CUDA"
    if any(x.dtype != first.dtype or x.device != first.device for x in tensors):
        return "mixed dtypes or devices"
    if first.dtype not in (torch.float32, torch.float64):
        return f"dtype {first.dtype}"
    if torch.is_grad_enabled() and any(x.requires_grad for x in tensors):
        return "autograd (the eager statistics are differentiable)"
    if torch.compiler.is_compiling():
        return "inside torch.compile"
    n = first.shape[-1]
    if not 1 <= n < MAX_TILE:
        return f"n = {n} outside 1 .. {MAX_TILE - 1}"
    if any(s == 0 for x in tensors for s in x.shape):
        return "empty input"
    if FAILED:
        return FAILED[0]
    if MODE not in MODES:
        return f"ATTNGEOM_GT_STATISTICS={MODE!r} is not one of {', '.join(MODES)}"
    return None if mode() == "warp" else _triton_missing()


def _tile(n: int) -> int:
    """The tile's side: the power of two >= n + 1 (the rows of [R^T; mu^T]), at least 16
    (the smallest side of a Triton tile product)."""
    return max(16, 1 << n.bit_length())


def _kernels() -> dict:
    """The Triton kernels by mode (their module imports Triton: at the first launch only)."""
    from attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton_kernels import KERNELS
    return KERNELS


def full_statistics(mu, Sigma, rotation, head: str, be: Backend, fallback) -> dict:
    """:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics` for full Sigma: the same
    dict (``second``, ``precision``, ``precision_nu``, ``offset`` views of the ``operands``
    (query, key) rows) from Triton, by :data:`MODE`.  ``rotation``: the frames' exponentials,
    [..., N, n, n] shared by the heads (``head`` = '') or [..., H, N, n, n].  ``fallback()``:
    the library statistics, called when a pivot was not positive (they raise)."""
    torch = be.module
    n = mu.shape[-1]
    per_head = rotation if head else rotation[..., None, :, :, :]
    shape = torch.broadcast_shapes(tuple(mu.shape[:-1]), tuple(Sigma.shape[:-2]), tuple(per_head.shape[:-2]))
    heads, tokens = shape[-2], shape[-1]
    sigma = Sigma.expand(shape + (n, n)).contiguous()
    means = mu.expand(shape + (n,)).contiguous()
    frames = per_head.expand(shape + (n, n))
    turned = frames.reshape((-1, heads, tokens, n, n))
    count = sigma.numel() // (n * n)
    width = n * (n + 1) // 2 + n + 2
    query, key = sigma.new_empty(shape + (width,)), sigma.new_empty(shape + (width,))
    nu, logdet = sigma.new_empty(shape + (n,)), sigma.new_empty(shape)
    rows = (query, key, nu, logdet, heads, tokens) + tuple(turned.stride())
    options = {"n": n, "TILE": _tile(n), "STREAM": STREAM, "num_warps": NUM_WARPS}
    ok = torch.empty(shape, dtype=torch.int8, device=sigma.device)     # every pivot positive
    current = mode()
    if current == "warp":
        return _warp_statistics(sigma, means, turned, rotation, head, rows, ok, fallback,
                                lambda: fallback() if _triton_missing()
                                else full_statistics(mu, Sigma, rotation, head, be, fallback))
    if current == "products":
        lower = cholesky(sigma, be).reshape((-1, n, n))
        solved = solve_lower_right(lower, torch.cat([_swap(frames).reshape((-1, n, n)),
                                                     means.reshape((-1, 1, n))], -2), be).contiguous()
        arguments = (sigma, means, turned, lower, solved, *rows, lower.stride(0), lower.stride(1) + lower.stride(2))
    else:
        arguments = (sigma, means, turned, *rows[:4], ok, *rows[4:])
        options["UNROLL"] = UNROLL
    try:
        launched = _kernels()[current][(count,)](*arguments, **options)
    except Exception as error:           # Triton could not compile or launch it here
        return _failed(FAILED, "Triton", error, fallback)
    if current != "products" and not _factored(ok):
        return fallback()
    LAUNCHES[(current, UNROLL, NUM_WARPS, STREAM, n, str(sigma.dtype))] = {
        "registers": getattr(launched, "n_regs", None), "spills": getattr(launched, "n_spills", None)}
    return _statistics(rotation, head, rows)


def _failed(record: list, what: str, error: Exception, fallback) -> dict:
    """A kernel that could not be compiled or launched here: the reason kept in ``record``
    (:data:`FAILED`: the library calls from then on; :data:`WARP_FAILED`: Triton from then
    on), and ``fallback()``'s statistics now."""
    # one line, the compiler's log kept (NVRTC's message is "Kernel compilation failed:" and
    # then the log's lines)
    record.append(f"{what} failed: {type(error).__name__}: {' '.join(str(error).split())[:400]}")
    return fallback()


def _factored(ok) -> bool:
    """Whether every pivot was positive (``ok``: a flag per matrix): read on the host eagerly,
    deferred inside a CUDA-graph capture (then True here)."""
    from attngeom.kernels import cuda_graphs
    factored = ok.bool().all()
    if cuda_graphs.deferring():
        cuda_graphs.defer_check(factored)
        return True
    return bool(factored)


def _statistics(rotation, head: str, rows) -> dict:
    """The statistics dict from the written rows (query, key, nu, logdet, ...)."""
    query, key, nu, logdet = rows[:4]
    n = nu.shape[-1]
    size = n * (n + 1) // 2
    return {"rotation": rotation, "nu": nu, "second": query[..., :size], "precision": key[..., :size],
            "precision_nu": key[..., size:size + n], "offset": key[..., size + n], "logdet": logdet,
            "head": head, "operands": (query, key)}


def _warp_statistics(sigma, means, turned, rotation, head: str, rows, ok, fallback, triton) -> dict:
    """:func:`full_statistics` by the CUDA C kernel (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cuda`,
    :data:`NUM_WARPS` warps a block); ``triton()``: the same by Triton, where the CUDA C kernel
    cannot be compiled or launched (recorded in :data:`WARP_FAILED`, Triton from then on)."""
    from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cuda
    try:
        kl_statistics_cuda.launch(sigma, means, turned, *rows[:4], ok, *rows[4:6], rows[6:], NUM_WARPS)
    except Exception as error:           # NVRTC could not compile it, or the launch failed
        return _failed(WARP_FAILED, "CUDA C", error, triton)
    if not _factored(ok):
        return fallback()
    return _statistics(rotation, head, rows)

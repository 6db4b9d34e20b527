"""The full-Sigma per-token statistics of the GT structured kernel, compiled for the CPU
(NumPy, and torch's CPU outside autograd; issue 26).

:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics` needs, for every batch, head and
token, from Sigma_i (n x n), mu_i and the frame R_i = exp(phi_i), the rows of the pairwise
product (:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_pairwise.pairwise_operands` with offsets):

    query_i = [M_i (diagonal halved), -nu_i, 1/2, -(logdet Sigma_i + n) / 2]
    key_j   = [P_j, P_j nu_j, nu_j^T P_j nu_j + logdet Sigma_j, 1]

(n(n+1)/2 entries of the upper triangle in the order of
:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._triangle_pairs`), with nu = R^T mu,
M = R^T (Sigma + mu mu^T) R and P = R^T Sigma^{-1} R, so that query_i . key_j = K_ij
(GT eq 13 through the structured identity of
:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured`).

As batched library calls this is a Cholesky factorization, a triangular solve and four
small products per token and head.  LAPACK's cost for a 20 x 20 matrix is mostly its
per-call overhead: at GT's size (1,920 matrices) ``numpy.linalg.cholesky`` took 6.6 ms and
the ``?trtrs`` loop 12 ms, for 2.6 and 8 million multiply-adds (0.4-0.7 GFMA/s), and the
statistics 34 ms in all against a floor (frame exponentials + pairwise product) of 13 ms
(one core, 2026-11-26).  No arrangement of those calls reaches issue 26's target of (b)
within 2x of the floor (docs/gauge-attention.md).

The C kernel (``attngeom/geometry_proofs/gauge/accelerated/csrc/kl_statistics_cpu.c``, the extension
``attngeom.geometry_proofs.gauge.accelerated._kl_statistics_cpu``) computes the same numbers for a group of items at
once, one item per SIMD lane (4 in float64, 8 in float32 with AVX2; the same code without
it): Sigma = L L^T (right-looking), logdet Sigma = sum_k log L_kk^2, Y = L^{-1} [R | mu]
(forward substitution), G = Y^T Y = [P, P nu; ., mu^T Sigma^{-1} mu] (R orthogonal),
F = [L | mu]^T R = [L^T R; nu^T] and M = F^T F, about 19,000 multiply-adds an item at
n = 20, and writes the rows in place.  The same numbers as the library calls up to rounding
(another order of the sums; tests compare them, ``tests/test_kl_statistics_cpu.py``).

When it applies (:func:`unavailable` says why not): the extension was built (``pip install``
compiles it where a C compiler is found; it is optional), NumPy arrays or torch CPU
tensors outside autograd and ``torch.compile`` (the library calls are differentiable),
float32 or float64 alike, 1 <= n <= :data:`MAX_N`.  A Sigma that is not positive definite
(a pivot <= 0 or NaN) makes the kernel return a count of failures, and then the library
calls run and raise their own error.
"""

from __future__ import annotations

import functools

import numpy as np

from attngeom.geometry_proofs.gauge.accelerated.kl_pairwise import _pairs, _triangle_pairs
from attngeom.kernels.backend import Backend
from attngeom.kernels.switch import Switch

#: the largest head dimension the compiled kernel takes (its work space, about 6 n^2 vectors,
#: leaves the L2 cache beyond it).  Measured against the library calls with the rows
#: concatenated (CPU time, one thread, 3 x 5 heads x N tokens with N n^2 ~ 51,200): 7.3x
#: faster at n = 8, 4.3x at 20, 2.7x at 48, 2.2x at 64, 1.4x at 96
MAX_N = 64

#: the code path: -1 AVX2 + FMA where the CPU has them (else the baseline), 0 the baseline
#: code (the tests run both)
PATH = -1

#: on, or off inside ``disabled()`` (the structured kernel then uses the library calls: the
#: benchmark's and the tests' A/B)
SWITCH = Switch()
disabled, enabled = SWITCH.disabled, SWITCH.enabled


@functools.lru_cache(maxsize=1)
def _extension():
    """The compiled module, or None when it was not built."""
    try:
        from attngeom.geometry_proofs.gauge.accelerated import _kl_statistics_cpu
    except ImportError:
        return None
    return _kl_statistics_cpu


def instruction_set() -> str | None:
    """"avx2+fma" or "baseline" (the code path the kernel runs on this CPU), None when the
    extension was not built."""
    module = _extension()
    return None if module is None else module.instruction_set()


def unavailable(be: Backend, *arrays) -> str | None:
    """Why the compiled statistics do not apply to ``arrays`` (mu, Sigma, rotation) on
    ``be``, or None when they do."""
    if not enabled():
        return "disabled"
    if be.name not in ("numpy", "torch"):
        return f"{be.name} is neither numpy nor torch"
    if be.name == "torch" and any(x.device.type != "cpu" for x in arrays):
        return "not on the CPU"
    if _extension() is None:
        return "the C extension was not built"
    first = arrays[0]
    if be.name == "torch":
        torch = be.module
        if torch.is_grad_enabled() and any(x.requires_grad for x in arrays):
            return "autograd (the library calls are differentiable)"
        if torch.compiler.is_compiling():
            return "inside torch.compile"
        dtypes = {str(x.dtype).removeprefix("torch.") for x in arrays}
    else:
        dtypes = {np.asarray(x).dtype.name for x in arrays}
    if len(dtypes) != 1:
        return "mixed dtypes"
    dtype = dtypes.pop()
    if dtype not in ("float32", "float64"):
        return f"dtype {dtype}"
    n = first.shape[-1]
    if not 1 <= n <= MAX_N:
        return f"n = {n} outside 1 .. {MAX_N}"
    if any(s == 0 for x in arrays for s in x.shape):
        return "empty input"
    return None


def statistics(mu, Sigma, rotation, head: str, be: Backend, fallback, *, diagonal: bool = False) -> dict:
    """:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics`: the same dict (``second``,
    ``precision``, ``precision_nu``, ``offset`` views of the ``operands`` (query, key) rows),
    from the C kernel.  ``Sigma``: [..., n, n], or the variances [..., n] with ``diagonal``
    (then L = diag(sqrt(v)): no factorization, no solve, and F's rows sqrt(v_c) R_c).
    ``rotation``: the frames' exponentials, [..., N, n, n] shared by the heads (``head`` =
    '') or [..., H, N, n, n]; the leading shapes of mu, Sigma and the frames broadcast.
    ``fallback()``: the library statistics, called when a pivot (a variance) was not
    positive: the caller sees what they do (raise, or NaN rows)."""
    torch = be.name == "torch"
    arrays = [x.detach().numpy() if torch else np.asarray(x) for x in (mu, Sigma, rotation)]
    means, sigma, frames = arrays
    n = means.shape[-1]
    per_head = frames if head else frames[..., None, :, :, :]
    matrix = () if diagonal else (n,)
    shape = np.broadcast_shapes(means.shape[:-1], sigma.shape[:-1 - len(matrix)], per_head.shape[:-2])
    sigma = np.ascontiguousarray(np.broadcast_to(sigma, shape + (n,) + matrix))
    means = np.ascontiguousarray(np.broadcast_to(means, shape + (n,)))
    frames = np.ascontiguousarray(frames)
    width = n * (n + 1) // 2 + n + 2
    query, key = np.empty(shape + (width,), dtype=sigma.dtype), np.empty(shape + (width,), dtype=sigma.dtype)
    nu, logdet = np.empty(shape + (n,), dtype=sigma.dtype), np.empty(shape, dtype=sigma.dtype)
    module = _extension()
    lanes = module.LANES_FLOAT64 if sigma.itemsize == 8 else module.LANES_FLOAT32
    failed = module.statistics(sigma, means, frames, _frame_index(per_head.shape[:-2], shape),
                               _pair_table(n, diagonal), _order(shape, per_head.shape[-4] == 1, lanes),
                               query, key, nu, logdet, n, sigma.itemsize, diagonal, PATH)
    if failed:
        return fallback()
    if torch:
        query, key, nu, logdet = (be.module.from_numpy(x) for x in (query, key, nu, logdet))
    size = n * (n + 1) // 2
    return {"rotation": rotation, "nu": nu, "second": query[..., :size], "precision": key[..., :size],
            "precision_nu": key[..., size:size + n], "offset": key[..., size + n], "logdet": logdet,
            "head": head, "operands": (query, key)}


def _frame_index(frame_shape: tuple, shape: tuple) -> np.ndarray:
    """For every item of ``shape`` (the broadcast [..., H, N]), the flat index of its frame in
    the frames' array of leading shape ``frame_shape`` ([..., H or 1, N]), int64, contiguous."""
    frames = int(np.prod(frame_shape, dtype=np.int64))
    return np.ascontiguousarray(np.broadcast_to(np.arange(frames, dtype=np.int64).reshape(frame_shape), shape))


@functools.lru_cache(maxsize=None)
def _pair_table(n: int, diagonal: bool) -> np.ndarray:
    """The pairs (a, b) of the rows' n(n+1)/2 entries, int32 [rows; columns], in the order the
    library calls use: :func:`~attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._pairs` (diagonal by diagonal)
    for diagonal Sigma, :func:`~attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._triangle_pairs` (row by row)
    for full Sigma -- so that ``second`` and ``precision`` are the library's arrays."""
    table = np.stack((_pairs if diagonal else _triangle_pairs)(n)).astype(np.int32)
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=64)
def _order(shape: tuple, shared: bool, lanes: int) -> np.ndarray:
    """The items of ``shape`` ([..., H, N], flat in C order) in the order the kernel computes
    them, ``lanes`` at a time (-1: an empty lane, at the end of a head's tokens).  With the
    heads sharing frames (``shared``) a group of ``lanes`` tokens goes through every head in
    turn, so the kernel gathers their frames once for all heads (at GT's size 0.5-0.75 ms of
    the float64 statistics' 5-7 when gathered for every group); otherwise a head's tokens
    ``lanes`` at a time."""
    heads, tokens = shape[-2], shape[-1]
    lead = int(np.prod(shape[:-2], dtype=np.int64))
    width = -(-tokens // lanes) * lanes
    order = np.full((lead, heads, width), -1, dtype=np.int64)
    order[..., :tokens] = np.arange(lead * heads * tokens, dtype=np.int64).reshape(lead, heads, tokens)
    if shared:
        order = order.reshape(lead, heads, width // lanes, lanes).transpose(0, 2, 1, 3)
    order = np.ascontiguousarray(order).reshape(-1)
    order.setflags(write=False)
    return order

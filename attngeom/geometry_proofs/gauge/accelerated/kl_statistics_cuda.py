"""The full-Sigma per-token statistics of the GT structured kernel in CUDA C, one warp per
matrix (torch on CUDA; issue 26): :data:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton.MODE` "warp".

Why: on an H200 at GT's size, N = 1024, the Triton kernel (one program of two warps per
matrix, the n x n matrix spread over a tile) takes 0.92 ms of the graphed kernel's 1.48 ms
(docs/gauge-attention.md, seventh GPU session), and neither fewer registers nor fewer spills
made it faster: each of its n factorization steps reduces across the tile.  Here lane i of
a warp holds index i (n + 1 <= 32), the factorization's pivots and columns pass between
lanes by register shuffles, and nothing is reduced across warps
(``csrc/kl_statistics_warp.cu`` states the steps and the formulas):

* Cholesky Sigma = L L^T, right-looking, lane r holding row r; logdet Sigma = sum log pivots;
* in the same steps Y = L^{-1} [R, mu], lane c holding column c;
* G = Y^T Y = [R, mu]^T Sigma^{-1} [R, mu], so P = R^T Sigma^{-1} R, P nu and nu^T P nu;
* M = R^T Sigma R + nu nu^T from broadcast loads;

written as the query and key rows of :func:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton.full_statistics`
(the same layout and the same factorization check).  ptxas (CUDA 13.0, sm_90, n = 20): 136
registers a thread in float64, 127 in float32, no spills.

It is compiled at run time with NVRTC through torch (``torch.cuda._compile_kernel``, torch
>= 2.8; no other dependency), once per (n, dtype, device), and launched on torch's current
stream, so CUDA graphs capture it (where no CUDA toolkit is installed, under a stand-in
CUDA_HOME: :func:`_cuda_home`).  NVRTC 13.5 compiles it through torch's wrapper with the
registers above.  On the CPU the tests run the same source under a warp
emulation (``tests/csrc/warp_emulation.cpp``, 32 threads in lockstep per warp) against the
library calls.  **The default since the eighth GPU session** (H200, GT's size, full Sigma,
float64; ``tests/benchmarks/profile_gauge_kernel.py``, key ``fused_ab``): the statistics
alone 0.60-0.73 ms at N = 1024 (1 to 8 warps a block) against 1.14 for the Triton kernel,
0.45-0.57 against 0.56 at N = 128; the graphed structured kernel 1.30-1.35 against 1.77 ms
at N = 1024; rows within 2.3e-13 of the library calls'.  Where it cannot be compiled or
launched, the Triton kernel runs (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton.mode`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from pathlib import Path

#: the kernel's source; :func:`source` prefixes the size and the type
SOURCE_PATH = Path(__file__).with_name("csrc") / "kl_statistics_warp.cu"

#: its entry point
KERNEL = "kl_statistics_warp"

#: the largest n (lanes 0 .. n hold the columns of [R, mu])
MAX_N = 31

#: every integer argument and offset the kernel computes in int must stay below this
INT_LIMIT = 2**31 - 1


def source(n: int, dtype: str) -> str:
    """The CUDA source for n x n matrices of ``dtype`` ("float64" or "float32")."""
    if not 1 <= n <= MAX_N:
        raise ValueError(f"n = {n} outside 1 .. {MAX_N}")
    kind, suffix = {"float64": ("double", ""), "float32": ("float", "f")}[dtype]
    return f"#define NN {n}\n#define T {kind}\n#define SQRT sqrt{suffix}\n#define LOG log{suffix}\n" + SOURCE_PATH.read_text()


def _compile_function():
    """torch's NVRTC entry point, or None (torch < 2.8)."""
    import torch
    return getattr(torch.cuda, "_compile_kernel", None) or getattr(torch.cuda, "compile_kernel", None)


def compiler_missing() -> str | None:
    """Why the kernel cannot be compiled here, or None."""
    return None if _compile_function() is not None else "torch has no NVRTC entry point (torch.cuda._compile_kernel)"


@functools.lru_cache(maxsize=None)
def _kernel(n: int, dtype: str, device: int):
    """The compiled kernel for (n, dtype) on CUDA device ``device`` (a callable taking
    ``grid``, ``block`` and ``args``)."""
    import torch
    with torch.cuda.device(device), _cuda_home():
        return _compile_function()(source(n, dtype), KERNEL)


@contextlib.contextmanager
def _cuda_home():
    """A stand-in CUDA_HOME while torch compiles, where none is set.

    torch's NVRTC wrapper passes ``-I $CUDA_HOME/include`` and raises OSError ("CUDA_HOME
    environment variable is not set") where no CUDA toolkit is installed, although NVRTC
    itself comes with torch's CUDA wheels; this kernel includes no header, so an empty
    folder stands in for the toolkit's."""
    from torch.utils import cpp_extension
    if getattr(cpp_extension, "CUDA_HOME", None) is not None:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="attngeom-cuda-home-") as home:
        os.mkdir(os.path.join(home, "include"))
        cpp_extension.CUDA_HOME = home
        try:
            yield
        finally:
            cpp_extension.CUDA_HOME = None


def too_large(count: int, strides) -> str | None:
    """Why the kernel's int arguments would overflow (the matrix count, the frames' element
    strides), or None; the offsets it forms from them are 64-bit."""
    if count > INT_LIMIT or any(abs(int(s)) > INT_LIMIT for s in strides):
        return "too large for the kernel's int arguments"
    return None


def launch(sigma, means, turned, query, key, nu, logdet, ok, heads: int, tokens: int, strides,
           warps_per_block: int = 4) -> None:
    """Fill ``query``, ``key``, ``nu``, ``logdet`` and ``ok`` (int8, every pivot positive)
    for the contiguous ``sigma`` [..., n, n] and ``means`` [..., n] and the frames ``turned``
    [B, H, N, n, n] of element ``strides`` (5, the head's 0 when shared)."""
    n = sigma.shape[-1]
    count = sigma.numel() // (n * n)
    dtype = str(sigma.dtype).removeprefix("torch.")
    device = sigma.device.index if sigma.device.type == "cuda" else -1
    kernel = _kernel(n, dtype, device)
    problem = too_large(count, strides)
    if problem:
        raise ValueError(problem)
    blocks = -(-count // warps_per_block)
    with _on(sigma.device):              # the module and the current stream are the tensors' device's
        kernel(grid=(blocks, 1, 1), block=(32 * warps_per_block, 1, 1),
               args=[sigma, means, turned, query, key, nu, logdet, ok, count, heads, tokens, *map(int, strides)])


def _on(device):
    """``torch.cuda.device(device)`` for a CUDA device, else nothing (the tests' emulation)."""
    import torch
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()

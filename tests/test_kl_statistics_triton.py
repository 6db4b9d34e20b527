"""The fused per-token statistics of the GT structured kernel (attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton,
issue 26): when they apply, and that they are the library calls' numbers -- under Triton's
interpreter on the CPU (skipped where Triton is not installed) and on CUDA (-m gpu)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla
from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cpu
from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_triton as fused
from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import kl_attention_direct, kl_attention_structured, skew, so_dimension
from attngeom.kernels.sampling import Sampler

ROW_KEYS = ("nu", "second", "precision", "precision_nu", "offset", "logdet")


@contextlib.contextmanager
def library_calls():
    """The eager statistics as library calls: the Triton kernel and the compiled CPU kernel
    (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cpu`, which torch's CPU tensors would get under the
    interpreter) disabled."""
    with fused.disabled(), kl_statistics_cpu.disabled():
        yield


def _inputs(seed=0, batch=2, heads=3, tokens=5, n=4, shared=True):
    sampler = Sampler(seed)
    mu = sampler.spawn(0).floats((batch, heads, tokens, n))
    factor = sampler.spawn(1).floats((batch, heads, tokens, n, n), 0.5)
    sigma = factor @ np.swapaxes(factor, -1, -2) / n + 0.3 * np.eye(n)
    frames = sampler.spawn(3).floats((batch, 1 if shared else heads, tokens, so_dimension(n)), 0.5)
    return mu, sigma, skew(frames, n, get_backend("numpy"))


def test_where_the_fused_statistics_apply():
    """Only torch on CUDA (or the CPU under the interpreter, for tests), float32/64, outside
    autograd and torch.compile, 1 <= n < 32; each refusal says why in a few words."""
    import torch
    be = get_backend("torch")
    mu, sigma, frames = (torch.as_tensor(x) for x in _inputs())
    assert fused.unavailable(get_backend("numpy"), *(x.numpy() for x in (mu, sigma, frames))) == "numpy is not torch"
    assert fused.unavailable(be, mu, sigma, frames) == "not CUDA"
    previous = fused.INTERPRETED_ON_CPU
    try:
        fused.INTERPRETED_ON_CPU = True
        os.environ["TRITON_INTERPRET"] = "1"
        reason = fused.unavailable(be, mu, sigma, frames)
        assert reason in (None, "Triton is not installed")
        assert fused.unavailable(be, mu.requires_grad_(), sigma, frames).startswith("autograd")
        with torch.no_grad():
            assert fused.unavailable(be, mu, sigma, frames) == reason
        mu.requires_grad_(False)
        assert fused.unavailable(be, mu.float(), sigma, frames) == "mixed dtypes or devices"
        assert fused.unavailable(be, mu.to(torch.float16), sigma.to(torch.float16),
                                 frames.to(torch.float16)) == "dtype torch.float16"
        big = torch.zeros((1, 1, 1, 32))
        assert fused.unavailable(be, big, big, big) == "n = 32 outside 1 .. 31"
        assert fused.unavailable(be, mu[:, :, :0], sigma[:, :, :0], frames) == "empty input"
        with fused.disabled():
            assert not fused.enabled() and fused.unavailable(be, mu, sigma, frames) == "disabled"
        assert fused.enabled()
    finally:
        fused.INTERPRETED_ON_CPU = previous
        os.environ.pop("TRITON_INTERPRET", None)


class BrokenKernel:
    """A stand-in for a Triton kernel of ``_kernels()`` whose every launch raises
    RuntimeError(``message``), recording its grid in ``launches``."""

    def __init__(self, launches: list, message: str):
        self.launches, self.message = launches, message

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.launches.append(grid)
            raise RuntimeError(self.message)
        return launch


def test_a_launch_that_fails_falls_back_once_and_says_why(monkeypatch):
    """A kernel that Triton cannot compile or launch: the library calls' numbers, the reason
    kept on one line with what followed its first (a compiler's log; ``unavailable`` returns it
    from then on, so no second launch is tried)."""
    import torch
    be = get_backend("torch")
    mu, sigma, frames = (torch.as_tensor(x) for x in _inputs())
    launches = []
    broken = BrokenKernel(launches, "no compiler for this device\nmore lines")
    monkeypatch.setattr(fused, "INTERPRETED_ON_CPU", True)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(fused, "_triton_missing", lambda: None)
    monkeypatch.setattr(fused, "_kernels", lambda: {"fused": broken, "products": broken})
    monkeypatch.setattr(fused, "FAILED", [])
    monkeypatch.setattr(fused, "MODE", "fused")
    assert fused.unavailable(be, mu, sigma, frames) is None
    got = kla.rotated_statistics(mu, sigma, frames, be)
    with library_calls():
        want = kla.rotated_statistics(mu, sigma, frames, be)
    assert "operands" not in got and all(torch.equal(got[k], want[k]) for k in ROW_KEYS)
    assert fused.FAILED == ["Triton failed: RuntimeError: no compiler for this device more lines"]
    assert fused.unavailable(be, mu, sigma, frames) == fused.FAILED[0]
    kla.rotated_statistics(mu, sigma, frames, be)
    assert launches == [(2 * 3 * 5,)]


def test_tile_is_a_power_of_two_above_n():
    assert [fused._tile(n) for n in (1, 4, 15, 16, 20, 31, 32, 63)] == [16, 16, 16, 32, 32, 32, 64, 64]


_INTERPRETED = textwrap.dedent("""
    import numpy as np, torch
    from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla, kl_statistics_triton as fused
    from attngeom.kernels.backend import get_backend
    from tests.test_kl_statistics_triton import ROW_KEYS, _inputs, compare_with_library
    fused.INTERPRETED_ON_CPU = True
    be = get_backend("torch")
    default = ("fused", 0, fused.NUM_WARPS, 0)      # the Triton kernel "warp" falls back to
    for setting in (default, ("fused", 1, 2, 0), ("fused", 0, 2, 1), ("fused", 1, 2, 1),
                    ("products", 0, 2, 0), ("products", 0, 2, 1)):
        with fused.configured(*setting):
            for n, shared in ((4, True), (4, False), (20, True)):
                if n == 20 and setting not in (default, ("fused", 0, 2, 1)):
                    continue                  # GT's head: the default and the streamed fused kernel
                for dtype in (torch.float64, torch.float32):
                    arrays = [torch.as_tensor(x, dtype=dtype)
                              for x in _inputs(n=n, shared=shared, tokens=3 if n == 20 else 5)]
                    compare_with_library(be, *arrays)
    print("interpreted: ok")
""")


def compare_with_library(be, mu, sigma, frames):
    """The fused statistics (they must apply), the kernel with them and the direct kernel
    (a) against the library calls: float64 to 1e-12 (rows and K, beta, values; (a) to 1e-10),
    float32 to 1e-5 relative to each array's largest entry; a mutation (the frames'
    transposes, R^T for R) moves the rows by more than 1e-3; a Sigma that is not positive
    definite raises the library's error."""
    import torch
    assert fused.unavailable(be, mu, sigma, frames) is None, fused.unavailable(be, mu, sigma, frames)
    bound = 1e-12 if mu.dtype == torch.float64 else 1e-5

    def close(a, b, what):
        scale = 1.0 if mu.dtype == torch.float64 else max(1.0, float(b.abs().max()))
        difference = float((a - b).abs().max())
        assert difference <= bound * scale, (what, difference)

    got = kla.rotated_statistics(mu, sigma, frames, be)
    with library_calls():
        want = kla.rotated_statistics(mu, sigma, frames, be)
        library = kl_attention_structured(mu, sigma, frames, 0.7, be, causal=True)
    assert "operands" in got and "operands" not in want
    for key in ROW_KEYS:
        close(got[key], want[key], key)
    result = kl_attention_structured(mu, sigma, frames, 0.7, be, causal=True)
    for name in ("kl", "beta", "values"):
        close(getattr(result, name), getattr(library, name), name)
    if mu.dtype == torch.float64:
        direct = kl_attention_direct(mu, sigma, frames, 0.7, be, causal=True)
        for name in ("kl", "beta", "values"):
            assert float((getattr(direct, name) - getattr(result, name)).abs().max()) <= 1e-10
    mutated = kla.rotated_statistics(mu, sigma, -frames, be)
    assert max(float((mutated[k] - want[k]).abs().max()) for k in ("nu", "second", "precision")) > 1e-3
    broken = sigma.clone()
    broken[..., 1, 0, 0, 0] = -1.0
    with pytest.raises(torch.linalg.LinAlgError):
        kl_attention_structured(mu, broken, frames, 0.7, be)


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")
def test_fused_statistics_under_the_interpreter():
    """Triton's interpreter (NumPy on the CPU) runs the kernels at n = 4 (shared and per-head
    frames; the default setting, the fused kernel's loop form, the "products" mode, each
    with tile products and streamed) and n = 20 (GT's head, a 32 x 32 tile; the default and
    the streamed fused kernel), float64 and float32 (a subprocess: the interpreter is chosen
    when Triton is imported)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    triton_home = os.path.dirname(os.path.dirname(importlib.util.find_spec("triton").origin))
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join(
        [root, triton_home] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    done = subprocess.run([sys.executable, "-c", _INTERPRETED], cwd=root, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0 and "interpreted: ok" in done.stdout, done.stderr[-3000:]


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["warp", "fused"])
def test_fused_statistics_on_cuda(mode):
    """On torch-cuda the statistics of each mode (the default CUDA C kernel, "warp", and the
    Triton kernel, "fused") are what the kernel uses (full Sigma, outside autograd) and give
    the library calls' numbers, at GT's head (n = 20) and n = 4; with grad the library calls
    run (differentiable)."""
    from tests.conftest import cuda_available
    if not cuda_available("torch"):
        pytest.skip("torch sees no CUDA device")
    if importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed")
    import torch
    be = get_backend("torch", "cuda")
    with fused.configured(mode, 0, fused.NUM_WARPS, 0):
        assert fused.mode() == mode
        for n, shared, tokens in ((4, True, 5), (4, False, 5), (20, True, 64), (20, False, 17)):
            for dtype in (torch.float64, torch.float32):
                arrays = [torch.as_tensor(x, dtype=dtype, device="cuda")
                          for x in _inputs(n=n, shared=shared, tokens=tokens)]
                compare_with_library(be, *arrays)
    assert fused.FAILED == [] and fused.WARP_FAILED == []
    mu, sigma, frames = (torch.as_tensor(x, device="cuda") for x in _inputs(n=20))
    mu.requires_grad_()
    assert "operands" not in kla.rotated_statistics(mu, sigma, frames, be)


@pytest.mark.gpu
def test_graphed_kernel_with_fused_statistics_checks_the_factorization():
    """Inside a CUDA-graph capture the factorization check is deferred: a replay whose Sigma
    is not positive definite reruns eagerly and raises; the graphs with and without the
    fused statistics are cached apart and agree."""
    from tests.conftest import cuda_available
    if not cuda_available("torch") or importlib.util.find_spec("triton") is None:
        pytest.skip("no CUDA device or no Triton")
    import torch

    from attngeom.kernels import cuda_graphs
    be = get_backend("torch", "cuda")
    mu, sigma, frames = (torch.as_tensor(x, device="cuda") for x in _inputs(n=20, tokens=33))
    cuda_graphs.clear()
    try:
        graphed = kl_attention_structured(mu, sigma, frames, 0.7, be, graphs=True)
        with fused.disabled():
            library = kl_attention_structured(mu, sigma, frames, 0.7, be, graphs=True)
        assert cuda_graphs.cache_size() == 3        # frame powers, structured with and without
        for name in ("kl", "beta", "values"):
            assert float((getattr(graphed, name) - getattr(library, name)).abs().max()) <= 1e-12
        broken = sigma.clone()
        broken[0, 1, 2, 0, 0] = -1.0
        with pytest.raises(torch.linalg.LinAlgError):
            kl_attention_structured(mu, broken, frames, 0.7, be, graphs=True)
    finally:
        cuda_graphs.clear()

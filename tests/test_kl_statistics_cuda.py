"""The CUDA C per-token statistics of the GT structured kernel (attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cuda,
issue 26; ``kl_statistics_triton.MODE`` "warp"): the kernel's source run on the CPU under a warp
emulation (tests/csrc/warp_emulation.cpp: 32 threads in lockstep at each shuffle) through
the same Python wrapper as on CUDA, against the library calls; two mutants of the source
must disagree; ptxas must compile it without spills where nvcc is installed.  Skipped
where no C++20 compiler is found.  On CUDA: -m gpu."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla
from attngeom.geometry_proofs.gauge.accelerated import kl_pairwise, kl_primitives
from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cpu
from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cuda as warp
from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_triton as fused
from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import skew, so_dimension
from attngeom.kernels.sampling import Sampler
from tests.test_kl_statistics_triton import BrokenKernel

torch = pytest.importorskip("torch")

EMULATOR = Path(__file__).parent / "csrc" / "warp_emulation.cpp"
COMPILER = shutil.which("g++")
ROW_KEYS = ("nu", "second", "precision", "precision_nu", "offset", "logdet")
TOLERANCE = {"float64": 1e-12, "float32": 2e-5}

needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no C++ compiler (g++) for the warp emulation")


@functools.lru_cache(maxsize=None)
def _emulator(n: int, dtype: str, source: str, directory: str):
    """The emulation of ``source`` (the kernel's text, without the prefix) for (n, dtype),
    built into ``directory``."""
    kernel = Path(directory) / f"kernel_{abs(hash(source))}.cu"
    kernel.write_text(source)
    library = Path(directory) / f"emulated_{n}_{dtype}_{abs(hash(source))}.so"
    kind = {"float64": "double", "float32": "float"}[dtype]
    built = subprocess.run([COMPILER, "-std=c++20", "-O1", "-pthread", "-shared", "-fPIC", f"-DNN={n}",
                            f"-DT={kind}", f'-DKERNEL="{kernel}"', str(EMULATOR), "-o", str(library)],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"the warp emulation does not build here: {built.stderr.strip().splitlines()[-1:]}")
    return ctypes.CDLL(str(library))


def _emulated_kernel(directory, source=None):
    """A stand-in for :func:`kl_statistics_cuda._kernel`: the same call (grid, block, args)
    run by the emulation on torch's CPU tensors."""
    text = warp.SOURCE_PATH.read_text() if source is None else source

    def kernel_for(n, dtype, device):
        library = _emulator(n, dtype, text, str(directory))

        def run(grid, block, args):
            converted = [ctypes.c_void_p(a.data_ptr()) if isinstance(a, torch.Tensor) else ctypes.c_int(a)
                         for a in args]
            assert library.emulate(ctypes.c_int(grid[0]), ctypes.c_int(block[0]), *converted) == 0
        return run
    return kernel_for


def _inputs(n, dtype, shared=True, batch=1, heads=2, tokens=3, seed=0):
    sampler = Sampler(seed)
    mu = sampler.spawn(0).floats((batch, heads, tokens, n))
    factor = sampler.spawn(1).floats((batch, heads, tokens, n, n), 0.5)
    sigma = factor @ np.swapaxes(factor, -1, -2) / n + 0.3 * np.eye(n)
    angles = sampler.spawn(3).floats((batch, 1 if shared else heads, tokens, so_dimension(n)), 0.5)
    be = get_backend("torch")
    frames = skew(torch.as_tensor(angles), n, be)
    mu, sigma = torch.as_tensor(mu), torch.as_tensor(sigma)
    if dtype == "float32":
        mu, sigma, frames = mu.float(), sigma.float(), frames.float()
    head, skew_frames = kl_primitives._frame_spec(frames)
    return mu, sigma, kla.frame_exp(skew_frames, be), head, be


def _library(mu, sigma, rotation, head, be):
    with fused.disabled(), kl_statistics_cpu.disabled():
        return kl_pairwise._full_statistics(mu, sigma, rotation, head, be)


def _warp_statistics(monkeypatch, directory, mu, sigma, rotation, head, be, source=None, warps=2):
    monkeypatch.setattr(warp, "_kernel", _emulated_kernel(directory, source))
    calls = []

    def fallback():
        calls.append(1)
        return "library"
    with fused.configured("warp", 0, warps, 0):
        got = fused.full_statistics(mu, sigma, rotation, head, be, fallback)
    return got, calls


def _largest_difference(got, want, be) -> float:
    rows = max(float((got[k] - want[k]).abs().max()) for k in ROW_KEYS)
    operands = max(float((a - b).abs().max()) for a, b in zip(
        kla.pairwise_operands(got, be, offsets=True), kla.pairwise_operands(want, be, offsets=True)))
    return max(rows, operands)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One directory for the module's emulations (each (n, dtype, source) built once)."""
    return tmp_path_factory.mktemp("emulated")


@needs_compiler
@pytest.mark.parametrize("n,shared,dtype", [(1, True, "float64"), (3, False, "float64"), (20, True, "float64"),
                                            (20, False, "float64"), (20, False, "float32"), (20, True, "float32")])
def test_the_warp_kernel_gives_the_library_calls_rows(monkeypatch, built, n, shared, dtype):
    """Every row of the pairwise product, nu and logdet as the library calls give them, with
    frames shared by the heads and per head, 3 warps a block over 6 matrices (a partial
    block: 2 of 3 warps idle in the second)."""
    mu, sigma, rotation, head, be = _inputs(n, dtype, shared)
    got, calls = _warp_statistics(monkeypatch, built, mu, sigma, rotation, head, be, warps=3 if n == 20 else 2)
    assert not calls and fused.FAILED == []
    want = _library(mu, sigma, rotation, head, be)
    scale = max(float(want[k].abs().max()) for k in ROW_KEYS)
    assert _largest_difference(got, want, be) <= TOLERANCE[dtype] * max(1.0, scale)


@needs_compiler
def test_a_matrix_that_is_not_positive_definite_reruns_the_library_calls(monkeypatch, built):
    """A negative pivot clears the flag: the fallback runs (eagerly it is the library calls,
    which raise torch's error)."""
    mu, sigma, rotation, head, be = _inputs(3, "float64")
    sigma = sigma.clone()
    sigma[0, 1, 2] = -sigma[0, 1, 2]
    got, calls = _warp_statistics(monkeypatch, built, mu, sigma, rotation, head, be)
    assert got == "library" and calls == [1]


#: changes to the source that must make the comparison fail: the solve's update (sign), the
#: triangle's position of the off-diagonal entries, and M without nu nu^T
MUTANTS = {"solve": ("y[j] -= l_jk * y[k];", "y[j] += l_jk * y[k];"),
           "position": ("+ c - r - 1;", "+ c - r;"),
           "second": ("s += nu * nu_d;", "s += (T)0 * nu_d;")}


@needs_compiler
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_mutated_kernel_disagrees(monkeypatch, built, mutant):
    original, changed = MUTANTS[mutant]
    text = warp.SOURCE_PATH.read_text()
    assert text.count(original) == 1
    mu, sigma, rotation, head, be = _inputs(3, "float64")
    got, _ = _warp_statistics(monkeypatch, built, mu, sigma, rotation, head, be,
                              source=text.replace(original, changed))
    assert _largest_difference(got, _library(mu, sigma, rotation, head, be), be) > 1e-3


def test_where_the_warp_kernel_applies():
    """MODE "warp" needs torch's NVRTC entry point, not Triton; off CUDA it does not apply;
    the source's size bounds and the int arguments' limit say why in one line."""
    mu, sigma, rotation, head, be = _inputs(3, "float64")
    with fused.configured("warp", 0, 2, 0):
        assert fused.unavailable(be, mu, sigma, rotation) == "not CUDA"
    assert warp.compiler_missing() in (None, "torch has no NVRTC entry point (torch.cuda._compile_kernel)")
    with pytest.raises(ValueError, match="outside 1 .. 31"):
        warp.source(32, "float64")
    assert warp.source(20, "float32").startswith("#define NN 20\n#define T float\n#define SQRT sqrtf\n#define LOG logf\n")
    assert warp.too_large(10, (1, 0, 400, 20, 1)) is None
    assert warp.too_large(2**31, (1, 0, 1, 1, 1)) == "too large for the kernel's int arguments"


def test_warp_is_the_default_and_triton_stands_in_where_it_cannot_run(monkeypatch):
    """"warp" is the default mode (unless ATTNGEOM_GT_STATISTICS says otherwise); where torch
    has no NVRTC entry point it runs as "fused", and a CUDA C kernel that fails to compile is
    recorded once in WARP_FAILED and the Triton kernel is tried (here it fails too: the
    library calls' rows, FAILED recorded); with Triton missing, the library calls at once."""
    import os
    assert fused.MODE == os.environ.get("ATTNGEOM_GT_STATISTICS", "warp")
    mu, sigma, rotation, head, be = _inputs(3, "float64")
    monkeypatch.setattr(fused, "MODE", "warp")
    monkeypatch.setattr(fused, "FAILED", [])
    monkeypatch.setattr(fused, "WARP_FAILED", [])
    monkeypatch.setattr(fused, "INTERPRETED_ON_CPU", True)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(fused, "_triton_missing", lambda: None)
    with monkeypatch.context() as patched:
        patched.setattr(warp, "compiler_missing", lambda: "no NVRTC")
        assert fused.mode() == "fused" and fused.setting()[1] == "fused"
    assert fused.mode() == "warp" and fused.unavailable(be, mu, sigma, rotation) is None

    def broken_kernel(n, dtype, device):
        raise RuntimeError("Kernel compilation failed:\nerror: something")
    monkeypatch.setattr(warp, "_kernel", broken_kernel)
    launches = []
    monkeypatch.setattr(fused, "_kernels", lambda: {"fused": BrokenKernel(launches, "no Triton here")})
    want = _library(mu, sigma, rotation, head, be)
    got = fused.full_statistics(mu, sigma, rotation, head, be, lambda: want)
    assert got is want and launches == [(1 * 2 * 3,)]
    assert fused.WARP_FAILED == ["CUDA C failed: RuntimeError: Kernel compilation failed: error: something"]
    assert fused.FAILED == ["Triton failed: RuntimeError: no Triton here"]
    assert fused.mode() == "fused"

    monkeypatch.setattr(fused, "FAILED", [])
    monkeypatch.setattr(fused, "WARP_FAILED", [])
    monkeypatch.setattr(fused, "_triton_missing", lambda: "Triton is not installed")
    launches.clear()
    assert fused.full_statistics(mu, sigma, rotation, head, be, lambda: want) is want
    assert launches == [] and fused.FAILED == [] and len(fused.WARP_FAILED) == 1


def test_the_benchmark_says_which_statistics_ran(monkeypatch):
    """The benchmark's "per-token statistics" line: the CUDA C kernel, or Triton with the
    reason the CUDA C kernel did not run."""
    from attngeom.geometry_proofs.gauge.attention_benchmark import BenchmarkConfig, _statistics_path
    mu, sigma, rotation, head, be = _inputs(3, "float64")
    monkeypatch.setattr(fused, "MODE", "warp")
    monkeypatch.setattr(fused, "WARP_FAILED", [])
    monkeypatch.setattr(fused, "INTERPRETED_ON_CPU", True)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(fused, "_triton_missing", lambda: None)
    monkeypatch.setattr(warp, "compiler_missing", lambda: None)
    config = BenchmarkConfig(tokens=3)
    with kl_statistics_cpu.disabled():
        assert _statistics_path(config, be, mu, sigma, rotation) == "CUDA C (one warp a matrix)"
        fused.WARP_FAILED.append("CUDA C failed: RuntimeError: x")
        assert _statistics_path(config, be, mu, sigma, rotation) == "triton (CUDA C failed: RuntimeError: x)"
        fused.WARP_FAILED.clear()
        monkeypatch.setattr(warp, "compiler_missing", lambda: "no NVRTC")
        assert _statistics_path(config, be, mu, sigma, rotation) == "triton (no NVRTC)"
        monkeypatch.setattr(fused, "MODE", "fused")
        assert _statistics_path(config, be, mu, sigma, rotation) == "triton"


def test_the_compile_step_needs_no_cuda_toolkit(monkeypatch):
    """torch's NVRTC wrapper asks cpp_extension for CUDA_HOME/include and raises where no
    toolkit is installed (CUDA_HOME None; the GPU machines have torch's NVRTC, maybe no
    toolkit): ``_kernel`` compiles under a stand-in folder then, and leaves CUDA_HOME as it
    found it."""
    from torch.utils import cpp_extension
    seen = []

    def compile_(text, name):            # what torch's wrapper does first with the folder
        seen.append((cpp_extension.include_paths("cuda")[-1], name, text.splitlines()[0]))
        return "compiled"

    monkeypatch.setattr(warp, "_compile_function", lambda: compile_)
    monkeypatch.setattr(torch.cuda, "device", lambda index: contextlib.nullcontext())
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", None)
    with pytest.raises(OSError, match="CUDA_HOME"):
        compile_("", "")
    assert warp._kernel.__wrapped__(20, "float64", 0) == "compiled"
    folder, name, first = seen[-1]
    assert (name, first) == (warp.KERNEL, "#define NN 20")
    assert folder.endswith("include") and cpp_extension.CUDA_HOME is None
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", "/opt/cuda-x")
    assert warp._kernel.__wrapped__(3, "float32", 0) == "compiled"
    assert seen[-1][0] == "/opt/cuda-x/include" and cpp_extension.CUDA_HOME == "/opt/cuda-x"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ptxas_compiles_the_kernel_without_spills(tmp_path, dtype):
    """The source as NVRTC gets it (n = 20, GT's size) compiles for sm_90 with no spill
    stores and no stack frame (ptxas's report)."""
    kernel = tmp_path / "kernel.cu"
    kernel.write_text(warp.source(20, dtype))
    built = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
                            str(kernel)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert "0 bytes spill stores" in built.stderr and "0 bytes stack frame" in built.stderr, built.stderr


def _nvrtc():
    """NVRTC, loaded by ctypes (the system's, or the nvidia-cuda-nvrtc wheel's that torch's
    CUDA builds install), or None."""
    names = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
    try:
        import nvidia
        names += sorted(str(p) for root in nvidia.__path__ for p in Path(root).glob("*/lib/libnvrtc.so*"))
    except ImportError:
        pass
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nvrtc_compiles_the_kernel_without_spills(dtype):
    """The source as torch hands it to NVRTC (n = 20) compiles for sm_90 with no spill
    stores and no stack frame (ptxas's report in NVRTC's log; NVRTC 13.5: 136 registers in
    float64, 127 in float32).  Skipped where NVRTC is not installed, as in CI."""
    nvrtc = _nvrtc()
    if nvrtc is None:
        pytest.skip("NVRTC is not installed (pip install nvidia-cuda-nvrtc)")
    program = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(program), warp.source(20, dtype).encode(), b"kernel.cu",
                                    0, None, None) == 0
    options = [b"--gpu-architecture=sm_90", b"--ptxas-options=-v"]
    status = nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    report = log.value.decode()
    assert status == 0, report
    assert "0 bytes spill stores" in report and "0 bytes stack frame" in report, report


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_warp_kernel_on_cuda(dtype):
    """On CUDA through NVRTC: the library calls' rows (n = 20, per-head frames, 5 heads x 64
    tokens, batch 2), without falling back or recording a failure."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    if warp.compiler_missing():
        pytest.skip(warp.compiler_missing())
    mu, sigma, rotation, head, be = (x.cuda() if isinstance(x, torch.Tensor) else x
                                     for x in _inputs(20, dtype, False, batch=2, heads=5, tokens=64))
    with fused.configured("warp", 0, 4, 0):
        got = fused.full_statistics(mu, sigma, rotation, head, be, lambda: pytest.fail("fell back"))
    assert fused.FAILED == []
    want = _library(mu, sigma, rotation, head, be)
    scale = max(float(want[k].abs().max()) for k in ROW_KEYS)
    assert _largest_difference(got, want, be) <= TOLERANCE[dtype] * max(1.0, scale)


def test_an_unknown_mode_turns_the_kernels_off(monkeypatch):
    """ATTNGEOM_GT_STATISTICS (read into MODE at import) that is not a mode: the library calls
    run, and ``unavailable`` says which value and the modes there are."""
    mu, sigma, rotation, head, be = _inputs(3, "float64")
    monkeypatch.setattr(fused, "INTERPRETED_ON_CPU", True)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(fused, "MODE", "wrap")
    assert fused.unavailable(be, mu, sigma, rotation) == "ATTNGEOM_GT_STATISTICS='wrap' is not one of fused, products, warp"

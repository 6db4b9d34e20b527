"""The RGT Gram kernels replayed from CUDA graphs or compiled by torch.compile (issue 26;
:mod:`attngeom.geometry_proofs.hyperbolic.accelerated.graphs`), on the CPU: the --cuda-graphs option off
torch-cuda, the graph path's bookkeeping with an emulated capture, and the compiled path
(its runner in every run; the kernels compiled under the slow marker).  The CUDA run is
``test_hyperbolic_attention_cuda_graphs`` in tests/benchmarks/test_hyperbolic_attention_bench.py."""

from __future__ import annotations

import numpy as np
import pytest

from attngeom.geometry_proofs.hyperbolic.attention_benchmark import BenchmarkConfig, format_report, run_benchmark
from attngeom.kernels.backend import get_backend


def _graph_inputs(be, n=24, d=8, radius=1.0):
    from attngeom.geometry_proofs.hyperbolic import lorentz
    config = BenchmarkConfig(sizes=(n,), dim=d, radius=radius)
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import sample_inputs
    ball = [be.asarray(a) for a in sample_inputs(config, n)]
    return ball, [lorentz.from_ball(a, 1.0) for a in ball]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_cuda_graphs_option_off_cuda(backend):
    """--cuda-graphs off torch-cuda: the eager kernels under the graphed names, the same
    numbers, reported as not graphed (no silent claim of a graph)."""
    report = run_benchmark(BenchmarkConfig(sizes=(16, 32), dim=8, backend=backend, repeats=1,
                                           cuda_graphs=True))
    graphs = report["cuda_graphs"]
    assert graphs["graphed"] is False and graphs["applicable"] is False
    assert max(graphs["agreement_with_eager"].values()) == 0.0
    for row in report["rows"]:
        assert set(row["cuda_graphs"]["ratios_over_euclidean"]) == set(row["ratios"])
    assert "CUDA graphs: NOT graphed" in format_report(report)


def test_graphed_gram_kernels_with_emulated_capture(monkeypatch):
    """The graph path's bookkeeping on torch-cpu (emulated capture): every kernel equals
    its eager self for two input sets of one shape; the ball checks are deferred inside
    the capture and a point outside the ball still raises the eager BadInput."""
    from attngeom.geometry_proofs.hyperbolic import poincare
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import IMPLEMENTATIONS
    from attngeom.geometry_proofs.hyperbolic.accelerated.graphs import graphed
    from attngeom.kernels import cuda_graphs
    from attngeom.core.errors import BadInput
    be = get_backend("torch")
    monkeypatch.setattr(cuda_graphs, "applicable", lambda backend: backend.name == "torch")
    monkeypatch.setattr(cuda_graphs, "_capture", cuda_graphs.emulated_capture)
    cuda_graphs.clear()
    cuda_graphs.reset_stats()
    check = poincare.check_in_ball
    try:
        for radius in (1.0, 2.0):
            ball, hyperboloid = _graph_inputs(be, radius=radius)
            for name, kernel in IMPLEMENTATIONS.items():
                inputs = hyperboloid if name == "lorentz" else ball
                eager = be.to_numpy(kernel(*inputs, 1.0))
                fast = be.to_numpy(graphed(name, lambda q, k, v, f=kernel: f(q, k, v, 1.0), 1.0, be)(*inputs))
                assert np.max(np.abs(eager - fast)) <= 1e-12, name
        counters = cuda_graphs.stats()
        assert counters["captures"] == len(IMPLEMENTATIONS) and counters["replays"] == 2 * len(IMPLEMENTATIONS)
        assert not counters["fallbacks"]
        assert poincare.check_in_ball is check        # the deferral is undone after each call
        outside = [x.clone() for x in ball]
        outside[0][3] *= 1e3 / float(outside[0][3].norm())
        with pytest.raises(BadInput, match="Poincare ball"):
            graphed("geodesic", lambda q, k, v: IMPLEMENTATIONS["geodesic"](q, k, v, 1.0), 1.0, be)(*outside)
        assert "a deferred check failed; eager rerun" in cuda_graphs.stats()["fallbacks"]
    finally:
        cuda_graphs.clear()


# ---------------------------------------------------------------------------------------
# torch.compile (attngeom.kernels.torch_compile; --compile)


def test_compile_option_off_torch():
    """--compile where torch.compile does not apply (NumPy): the eager kernels under the
    compiled names, the same numbers, reported as not compiled with the reason."""
    report = run_benchmark(BenchmarkConfig(sizes=(16,), dim=8, backend="numpy", repeats=1,
                                           compiled=True, check=False))
    part = report["torch_compile"]
    assert part["compiled"] is False and part["applicable"] is False
    assert max(part["agreement_with_eager"].values()) == 0.0
    assert any("torch.compile is torch's" in reason for reason in part["stats"]["fallbacks"])
    assert "torch.compile: NOT compiled" in format_report(report)


def test_compile_runner_falls_back_where_it_cannot_compile(monkeypatch):
    """torch_compile.run without a compiler (monkeypatched), and with a compilation that
    fails: the function runs eagerly, each reason counted; a BadInput raised while tracing
    passes through unchanged."""
    import torch

    from attngeom.kernels import torch_compile
    from attngeom.core.errors import BadInput
    be = get_backend("torch")
    x = torch.arange(4.0, dtype=torch.float64)
    torch_compile.reset_stats()
    monkeypatch.setattr(torch_compile, "unavailable", lambda backend: "no C++ compiler (test)")
    assert torch.equal(torch_compile.run(lambda t: t * 2, (x,), be, key="double"), x * 2)
    assert torch_compile.stats()["fallbacks"] == {"no C++ compiler (test)": 1}
    monkeypatch.undo()

    class Broken:
        def __init__(self, error):
            self.error = error

        def __call__(self, function, mode=None):
            def call(*args):
                raise self.error
            return call
    monkeypatch.setattr(be.module, "compile", Broken(RuntimeError("inductor exploded")))
    torch_compile.clear()
    torch_compile.reset_stats()
    try:
        assert torch.equal(torch_compile.run(lambda t: t + 1, (x,), be, key="plus"), x + 1)
        assert torch.equal(torch_compile.run(lambda t: t + 1, (x,), be, key="plus"), x + 1)
        reasons = torch_compile.stats()["fallbacks"]
        assert reasons == {"compilation failed: RuntimeError: inductor exploded": 2}
        monkeypatch.setattr(be.module, "compile", Broken(BadInput("c must be > 0")))
        with pytest.raises(BadInput, match="c must be > 0"):
            torch_compile.run(lambda t: t, (x,), be, key="bad")
    finally:
        torch_compile.clear()
        torch_compile.reset_stats()


@pytest.mark.slow
def test_compiled_closures_of_one_code_do_not_share_dynamo_cache(compiled_torch):
    """Twelve closures of one lambda over twelve torch functions (as the benchmarks' kernel
    tables close over their kernels: Dynamo guards on the function's identity, so each is
    its own graph), each under its own key, at two shapes: 24 graphs of one code, three
    times Dynamo's recompile limit of 8 per code object.  Every call is compiled (no
    fallback) and right: the runner compiles each key from a wrapper with its own code; a
    run past the limit would be recorded, not silently eager."""
    import torch

    from attngeom.kernels import torch_compile
    unary = [torch.sin, torch.cos, torch.tan, torch.exp, torch.tanh, torch.sinh, torch.cosh,
             torch.sigmoid, torch.atan, torch.asinh, torch.expm1, torch.log1p]
    functions = [(lambda x, g=g: g(x) + x) for g in unary]
    for size in (5, 7):
        x = torch.linspace(0.0, 1.0, size, dtype=torch.float64)
        for a, (g, function) in enumerate(zip(unary, functions)):
            out = torch_compile.run(function, (x,), compiled_torch, key=("closure", a))
            assert torch.allclose(out, g(x) + x, rtol=1e-15, atol=1e-15)
    assert torch_compile.stats() == {"signatures": 24, "calls": 24, "fallbacks": {}}


@pytest.mark.slow
def test_compiled_gram_kernels_on_torch_cpu(compiled_torch):
    """torch.compile of two Gram kernels (eq 14 with Algorithm 1, and the Lorentz model) on
    torch's CPU: equal to the eager kernels to 1e-12 for two input sets of one shape and a
    second shape; the ball checks deferred inside the compiled code, so a point outside the
    ball still raises the eager BadInput; the deferral is undone after each call (~40 s of
    compilation)."""
    from attngeom.geometry_proofs.hyperbolic import poincare
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import IMPLEMENTATIONS
    from attngeom.geometry_proofs.hyperbolic.accelerated.graphs import compiled
    from attngeom.kernels import torch_compile
    from attngeom.core.errors import BadInput
    be = compiled_torch
    check = poincare.check_in_ball
    kernels = {name: compiled(name, lambda q, k, v, f=IMPLEMENTATIONS[name]: f(q, k, v, 1.0), 1.0, be)
               for name in ("geodesic", "lorentz")}
    for n, radius in ((24, 1.0), (24, 2.0), (40, 1.0)):
        ball, hyperboloid = _graph_inputs(be, n=n, radius=radius)
        for name, kernel in kernels.items():
            inputs = hyperboloid if name == "lorentz" else ball
            eager = be.to_numpy(IMPLEMENTATIONS[name](*inputs, 1.0))
            assert np.max(np.abs(eager - be.to_numpy(kernel(*inputs)))) <= 1e-12, (name, n, radius)
    counters = torch_compile.stats()
    assert counters["calls"] == 6 and not counters["fallbacks"], counters
    assert poincare.check_in_ball is check
    outside = [x.clone() for x in ball]
    outside[2][3] *= 1e3 / float(outside[2][3].norm())
    with pytest.raises(BadInput, match="Poincare ball"):
        kernels["geodesic"](*outside)
    assert "a deferred check failed (rerun eagerly)" in torch_compile.stats()["fallbacks"]


def test_jax_on_the_cpu_is_reported_in_wall_clock_time():
    """numpy and torch print process-CPU-time ratios; jax prints wall-clock ratios with the
    reason (its CPU time is spread over XLA's threads), both kinds kept in the JSON."""
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import JAX_WALL_CLOCK_NOTE
    for backend in ("numpy", "jax"):
        report = run_benchmark(BenchmarkConfig(sizes=(16,), dim=8, backend=backend, repeats=1))
        text = format_report(report)
        row = report["rows"][0]
        assert "ratios" in row and "ratios_cpu_time" in row
        shown = row["ratios_cpu_time" if backend == "numpy" else "ratios"]["lorentz"]
        assert f"{shown:15.2f}" in text
        assert ("(process CPU time /" in text) == (backend == "numpy")
        assert (JAX_WALL_CLOCK_NOTE in text) == (backend == "jax")

"""The RGT Gram kernels replayed from CUDA graphs (issue 26;
:mod:`attngeom.geometry_proofs.hyperbolic.graphs`), on the CPU: the --cuda-graphs option off
torch-cuda, and the graph path's bookkeeping with an emulated capture.  The CUDA run is
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
    from attngeom.geometry_proofs.hyperbolic.graphs import graphed
    from attngeom.kernels import cuda_graphs
    from attngeom.kernels.errors import BadInput
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

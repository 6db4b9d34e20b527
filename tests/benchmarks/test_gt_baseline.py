"""GT's public code (cdenn016/Gauge-Transformer, ``transformer/core/attention.py``) against
our structured KL-attention kernel at GT's size (N = 128, K = 100 = 5 x SO(20), batch 3),
float64, one thread (issue 26, ask 4).  Skips when their code is not available here
(ATTNGEOM_GT_CODE=checkout, or the local mirror).  Figures go to $ATTNGEOM_BENCH_DIR:

    pytest -m benchmark tests/benchmarks/test_gt_baseline.py -s
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from attngeom.geometry_proofs.gauge import gt_baseline
from attngeom.geometry_proofs.gauge.attention_benchmark import BenchmarkConfig, sample_inputs
from attngeom.geometry_proofs.gauge.gt_code import GTCodeUnavailable, load_gt_code

pytestmark = pytest.mark.benchmark


@pytest.fixture(scope="module")
def code():
    try:
        return load_gt_code()
    except GTCodeUnavailable as missing:
        pytest.skip(str(missing))


def test_per_head_calls_follow_their_forward(code):
    """gt_weights (compute_transport_operators + compute_attention_weights per head) gives
    the attention weights of IrrepMultiHeadAttention.forward (SO(N) mode)."""
    config = BenchmarkConfig(tokens=12, batch=1)
    inputs = sample_inputs(config)
    generators = np.asarray(code.generate_son_generators(config.head_dim), dtype=np.float64)
    layout = gt_baseline.gt_layout(inputs, config.head_dim, generators)
    beta, _ = gt_baseline.gt_weights(code, layout, generators, config.kappa, diagonal=False)
    assert np.max(np.abs(gt_baseline.gt_forward_weights(code, inputs, config.kappa) - beta)) < 1e-12


def test_gt_code_against_structured_kernel(code):
    report = gt_baseline.run_gt_baseline(BenchmarkConfig(backend="torch", repeats=5))
    folder = os.environ.get("ATTNGEOM_BENCH_DIR", "tests/benchmarks/results")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "gauge_attention_gt_baseline.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print("\n" + gt_baseline.format_gt_report(report))
    full, diagonal = report["full"], report["diagonal"]
    # full Sigma: the same K and beta once their Sigma + 1e-6 I is applied to our inputs
    assert full["kl_max_abs_diff_regularized"] < 1e-5 < full["kl_max_abs_diff"]
    assert full["beta_max_abs_diff_regularized"] < 3e-6
    # diagonal mode: their KL is the KL against diag(Omega D Omega^T) ...
    assert diagonal["kl_max_abs_diff_vs_diagonal_cut"] < 1e-9
    # ... which is not KL(q_i || Omega q_j): a real discrepancy, not rounding
    assert diagonal["kl_max_relative_error"] > 0.01
    assert full["gt_over_ours"] > 1 and diagonal["gt_over_ours"] > 1

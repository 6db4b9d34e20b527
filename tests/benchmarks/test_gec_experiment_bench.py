"""GEC experiment (issue 16): the cost of one full-size run, by part, in one process.

One gated (alpha = 1) run of A.5's size (4000 examples, 20 epochs, batch 128) and its
evaluation (proxy at 256 test sequences x 64 directions, invariant curvature at 256 centres),
CPU seconds of each part with one torch thread, and the whole experiment's idle 2-core time
extrapolated from them (70 runs on 2 workers).  Asserted: the evaluation costs at most twice
the training (a ratio, measured in this process).  Figures as JSON in $ATTNGEOM_BENCH_DIR.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from attngeom.geometry_proofs.gating.experiment import data, invariant, model, proxy, train
from attngeom.kernels.backend import get_backend

RUNS = 70


@pytest.mark.benchmark
def test_one_full_run_by_part():
    be = get_backend("torch", "cpu")
    torch = be.module
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        spec = train.RunSpec("curved", model.Variant("gated", 1.0), 0)
        train_split, test_split = data.make_task("curved", spec.train_size, spec.test_size, 0)
        start = time.process_time()
        params, _ = train.train_parameters(spec, train_split, torch)
        training = time.process_time() - start
        double = {k: v.detach().to(torch.float64) for k, v in params.items()}
        indices, directions = train.evaluation_points(spec, test_split)
        start = time.process_time()
        proxy.curvature_proxies(lambda x: model.attention_output_mean(double, x, spec.variant, torch),
                                be.asarray(test_split.sequences[indices]), be.asarray(directions), torch)
        proxy_seconds = time.process_time() - start
        start = time.process_time()
        invariant.gaussian_curvatures(double, spec.variant, be.asarray(test_split.centres[indices]), be)
        invariant_seconds = time.process_time() - start
    finally:
        torch.set_num_threads(threads)
    per_run = training + proxy_seconds + invariant_seconds
    figures = {"train_cpu_s": round(training, 3), "proxy_cpu_s": round(proxy_seconds, 3),
               "invariant_cpu_s": round(invariant_seconds, 3), "per_run_cpu_s": round(per_run, 3),
               "steps": spec.epochs * -(-spec.train_size // spec.batch_size),
               "extrapolated_idle_2core_s": round(RUNS * per_run / 2, 1),
               "load_average": list(os.getloadavg())}
    out = Path(os.environ.get("ATTNGEOM_BENCH_DIR", "tests/benchmarks/results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "gec_experiment.json").write_text(json.dumps(figures, indent=1))
    print(figures)
    assert proxy_seconds + invariant_seconds <= 2 * training

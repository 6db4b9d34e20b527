"""GEC §4 / App. A.2-A.5: the training experiment (geometry_proofs.gating.experiment).

The 1-seed 2-epoch experiment through the CLI, workers-independence of the rows, the
proxy and the invariant curvature on known maps, the claims' verdicts on the committed
results and their mutation tests on doctored CSVs, and the CLI's bad input."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from geometry_proofs.gating.experiment import invariant, model, proxy, runner, train
from geometry_proofs.gating.experiment import statistics as st
from geometry_proofs.gating.experiment.claims import CLAIMS, PAPER_R
from kernels.backend import get_backend
from kernels.claim import CheckContext
from kernels.sampling import Sampler

CLAIM = {claim.id: claim for claim in CLAIMS}
TINY = dict(train_size=256, test_size=64, centres=8, boundary_grid=6)


def _strip(rows):
    return [{k: v for k, v in row.items() if k not in train.TIMING_COLUMNS} for row in rows]


# --------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------

def test_one_seed_two_epochs_through_the_cli(run_cli, tmp_path):
    start = time.perf_counter()
    code, out, err = run_cli("experiment", "gec", "--seeds", "0", "--epochs", "2", "--centres", "16",
                             "--workers", "1", "--out", tmp_path, "--json")
    seconds = time.perf_counter() - start
    assert code == 0, err
    summary = json.loads(out)
    assert summary["runs"] == 14                     # 7 curved + 2 ablation + 5 linear
    rows = runner.read_csv(tmp_path / "results.csv")
    assert len(rows) == 14 and {r["task"] for r in rows} == {"curved", "linear"}
    assert (tmp_path / "gec_fig3_decision_boundaries.png").is_file()
    assert (tmp_path / "table1.md").is_file()
    # GEC Thm 3.1 on trained weights: with equal tokens the ungated output is affine in c
    ungated = st.select(rows, "curved", "ungated")[0]
    assert ungated["K_noisefree_abs_median"] < 1e-20
    # and with 2-d inputs it lies in the 2-plane of the value map: K = 0 to rounding
    assert ungated["K_iso_relative_abs_median"] < 1e-12
    gated = st.select(rows, "curved", "gated", 1.0)[0]
    assert gated["K_iso_relative_abs_median"] > 1e-8
    assert all(0.4 <= r["accuracy"] <= 1.0 for r in rows)
    print(f"1-seed 2-epoch experiment: {seconds:.1f} s wall")


def test_rows_do_not_depend_on_the_number_of_workers():
    config = runner.ExperimentConfig(task="ablation", seeds=(0, 1), epochs=1, **TINY)
    one, boundaries_one = runner.run_experiment(config)
    two, boundaries_two = runner.run_experiment(runner.ExperimentConfig(
        task="ablation", seeds=(0, 1), epochs=1, workers=2, **TINY))
    assert _strip(one) == _strip(two)
    assert boundaries_one.keys() == boundaries_two.keys()
    assert all((boundaries_one[k] == boundaries_two[k]).all() for k in boundaries_one)


def test_runs_are_seeded_by_their_key():
    spec = train.RunSpec("curved", model.Variant("gated", 0.5), 3, epochs=1, **TINY)
    again = train.run(spec).row
    assert _strip([train.run(spec).row]) == _strip([again])
    other = train.run(train.RunSpec("curved", model.Variant("gated", 0.5), 4, epochs=1, **TINY)).row
    assert other["accuracy"] != again["accuracy"] or other["proxy_iso"] != again["proxy_iso"]


# --------------------------------------------------------------------------------------
# the proxy and the invariant curvature on known maps
# --------------------------------------------------------------------------------------

def test_proxy_of_a_quadratic_and_an_affine_map():
    torch = get_backend("torch", "cpu").module
    weights = torch.as_tensor(Sampler(1).floats(64), dtype=torch.float64)
    quadratic = lambda x: (x ** 2).sum(dim=(-1, -2))[..., None] * weights
    affine = lambda x: x.sum(dim=(-1, -2))[..., None] * weights + 1.0
    sequences = torch.as_tensor(Sampler(2).floats((5, 8, 2)), dtype=torch.float64)
    directions = torch.as_tensor(proxy.unit_directions(Sampler(3), 16, (8, 2)), dtype=torch.float64)
    values = proxy.curvature_proxies(quadratic, sequences, directions, torch)
    # d2 = 2 |v|^2 w exactly for |v| = 1
    assert np.allclose(values["iso"], 2 * float(weights.norm()), rtol=1e-6)
    p = proxy.precision_diagonal(12)
    assert np.isclose(p.max() / p.min(), 12) and np.isclose(np.prod(p), 1.0)
    assert np.allclose(values["aniso_12"], 2 * float((weights * torch.as_tensor(np.sqrt(p))).norm()),
                       rtol=1e-6)
    assert np.all(proxy.curvature_proxies(affine, sequences, directions, torch)["iso"] < 1e-8)


def test_invariant_curvature_is_zero_for_ungated_and_not_for_gated_weights():
    be = get_backend("torch", "cpu")
    centres = be.asarray(Sampler(5).floats((6, 2)))
    out = {}
    for variant in (model.Variant("ungated"), model.Variant("gated", 1.0)):
        params = model.to_tensors(model.initial_parameters(variant, Sampler(9)), be.module, "cpu",
                                  be.module.float64)
        out[variant.name] = invariant.gaussian_curvatures(params, variant, centres, be)
    ungated_relative = np.abs(out["ungated"]["iso"]) / out["ungated"]["iso_scale"]
    gated_relative = np.abs(out["gated"]["iso"]) / out["gated"]["iso_scale"]
    assert np.all(ungated_relative < 1e-12) and np.all(gated_relative > 1e-8)


# --------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------

def test_statistics():
    x = np.arange(10.0)
    assert st.pearson(x, 2 * x + 1) == pytest.approx(1.0)
    assert st.spearman(x, x ** 3) == pytest.approx(1.0)
    y = x + Sampler(0).floats(10) * 3
    assert st.bootstrap_interval(x, y, 0) == st.bootstrap_interval(x, y, 0)
    low, high = st.bootstrap_interval(x, y, 0)
    assert low < st.pearson(x, y) < high
    assert runner.parse_seeds("0-2,5") == (0, 1, 2, 5)


# --------------------------------------------------------------------------------------
# the claims: verdicts on the committed results, mutation tests on doctored CSVs
# --------------------------------------------------------------------------------------

def synthetic_rows(seeds=5, correlation_noise=0.35) -> list[dict]:
    """A results table on which every claim holds (GEC's statements as printed)."""
    noise = Sampler(11).floats((seeds, len(model.ALPHAS), 3))
    rows = []

    def add(task, variant, alpha, seed, curvature, accuracy):
        row = {"task": task, "variant": variant, "alpha": "" if alpha is None else alpha,
               "seed": seed, "accuracy": accuracy, "device": "cpu"}
        for prefix in ("proxy", "K"):
            iso = curvature if prefix == "proxy" else curvature * 1e-3
            key = "proxy_iso" if prefix == "proxy" else "K_iso_abs_median"
            row[key] = iso
            for c in proxy.CONDITIONS:
                row[f"proxy_aniso_{c}" if prefix == "proxy" else f"K_aniso_{c}_abs_median"] = iso * (1 + c / 40)
        rows.append(row)

    for seed in range(seeds):
        for k, alpha in enumerate(model.ALPHAS):
            level = 1.0 + alpha + 0.05 * noise[seed, k, 0]
            accuracy = 0.9 + 0.02 * (alpha + correlation_noise * noise[seed, k, 1])
            add("curved", "gated", alpha, seed, level, accuracy)
            add("linear", "gated", alpha, seed, level, 0.96 + 0.005 * noise[seed, k, 2])
        for j, variant in enumerate(("ungated", "silu", "gated-sigmoid", "gated-nonsparse")):
            base = [0.5, 0.8, 2.0, 1.8][j]
            add("curved", variant, None, seed, base + 0.01 * seed, 0.90 + 0.01 * j + 0.001 * seed)
    return rows


def _verdict(claim_id, path, measure=None):
    raw = {"results": str(path)}
    if measure:
        raw["measure"] = measure
    return CLAIM[claim_id].verify(raw, context=CheckContext(seed=0))


@pytest.fixture
def synthetic_csv(tmp_path):
    return runner.write_csv(synthetic_rows(), tmp_path / "synthetic.csv")


@pytest.mark.parametrize("claim_id", sorted(CLAIM))
def test_claims_hold_on_a_table_where_the_statements_are_true(claim_id, synthetic_csv):
    for measure in (("proxy", "invariant") if claim_id != "gec-linear-control-no-advantage" else (None,)):
        verdict = _verdict(claim_id, synthetic_csv, measure)
        assert verdict.status.value == "consistent", verdict.summary


def _doctor(tmp_path, change) -> str:
    rows = synthetic_rows()
    for row in rows:
        change(row)
    return runner.write_csv(rows, tmp_path / "doctored.csv")


MUTATIONS = {
    # alpha = 1.5 loses its curvature: no longer monotone
    "gec-gating-curvature-monotone": lambda r: r.update(
        {k: v * 0.1 for k, v in r.items() if k.startswith(("proxy_", "K_")) and r["alpha"] == 1.5}),
    # accuracy falls with gate strength: r < 0
    "gec-curvature-accuracy-correlation": lambda r: r.update(
        accuracy=1.0 - r["accuracy"]) if r["variant"] == "gated" else None,
    # SiLU above the gated variants in accuracy
    "gec-ablation-ordering": lambda r: r.update(accuracy=0.99) if r["variant"] == "silu" else None,
    # gating helps on the linear task by 3 points
    "gec-linear-control-no-advantage": lambda r: r.update(accuracy=r["accuracy"] + 0.03)
    if r["task"] == "linear" and r["alpha"] == 1.5 else None,
    # the anisotropic metric reverses the ranking
    "gec-iso-aniso-ranking": lambda r: r.update(
        {k: 1.0 / v for k, v in r.items() if "aniso" in k and r["task"] == "curved"}),
}


@pytest.mark.parametrize("claim_id", sorted(MUTATIONS))
def test_mutated_results_refute_the_claim(claim_id, tmp_path):
    path = _doctor(tmp_path, MUTATIONS[claim_id])
    verdict = _verdict(claim_id, path)
    assert verdict.status.value == "refuted", verdict.summary
    assert verdict.counterexample


def test_correlation_claim_needs_the_printed_value_inside_the_interval(tmp_path):
    # a perfect correlation (r ~ 1) has an interval above 0.79: refuted as printed
    path = runner.write_csv(synthetic_rows(correlation_noise=0.0), tmp_path / "perfect.csv")
    verdict = _verdict("gec-curvature-accuracy-correlation", path)
    assert verdict.status.value == "refuted"
    assert verdict.counterexample["ci"][0] > PAPER_R


COMMITTED = {  # measured on data/results.csv (all tasks, seeds 0-4, 20 epochs)
    ("gec-gating-curvature-monotone", "proxy"): "refuted",
    ("gec-gating-curvature-monotone", "invariant"): "refuted",
    ("gec-curvature-accuracy-correlation", "proxy"): "refuted",
    ("gec-curvature-accuracy-correlation", "invariant"): "refuted",
    ("gec-ablation-ordering", "proxy"): "consistent",
    ("gec-ablation-ordering", "invariant"): "consistent",
    ("gec-linear-control-no-advantage", "proxy"): "consistent",
    ("gec-iso-aniso-ranking", "proxy"): "consistent",
    ("gec-iso-aniso-ranking", "invariant"): "consistent",
}


@pytest.mark.parametrize("claim_id", sorted(CLAIM))
def test_claims_on_the_committed_results(claim_id):
    for example in CLAIM[claim_id].examples:
        verdict = CLAIM[claim_id].verify(dict(example), context=CheckContext(seed=0))
        assert verdict.status.value in ("consistent", "refuted")
        expected = COMMITTED.get((claim_id, example.get("measure", "proxy")))
        if expected:
            assert verdict.status.value == expected, verdict.summary


@pytest.mark.slow
def test_claims_on_fresh_runs(run_cli):
    # the whole grid at one seed, one epoch, trained now (14 runs)
    code, out, err = run_cli("verify", "gec-ablation-ordering", "--results", "run:0:1", "--json")
    verdict = json.loads(out)
    assert verdict["status"] in ("consistent", "refuted") and code in (0, 1), err
    assert verdict["evidence"]["results"].startswith("fresh runs run:0:1")
    code, out, _ = run_cli("verify", "gec-linear-control-no-advantage", "--results", "run:0:1", "--json")
    assert json.loads(out)["status"] in ("consistent", "refuted")   # the cached runs, no retraining


def test_monotone_refutation_checks_the_invariant_statement():
    verdict = CLAIM["gec-gating-curvature-monotone"].verify({}, context=CheckContext(seed=0))
    assert verdict.status.value == "refuted" and verdict.counterexample["column"] == "proxy_iso"
    # the corrected statement, checked on the same runs: the invariant isotropic |K| rises
    assert verdict.evidence["isotropic_invariant_rises_at_every_step"] is True


def test_claims_reject_bad_results(run_cli, tmp_path):
    code, _, err = run_cli("verify", "gec-ablation-ordering", "--results", tmp_path / "none.csv")
    assert code == 2 and "no results file" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli("verify", "gec-ablation-ordering", "--results", "run:x:2")
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = run_cli("verify", "gec-ablation-ordering", "--measure", "curly")
    assert code == 2 and "--measure" in err


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("--task", "bogus"), ("--seeds", "3-1"), ("--seeds", "a"), ("--epochs", "0"),
    ("--workers", "0"), ("--centres", "0"),
])
def test_cli_bad_input(run_cli, tmp_path, args):
    code, out, err = run_cli("experiment", "gec", *args, "--out", tmp_path)
    assert code == 2
    assert err.startswith("attngeom: error:") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


@pytest.mark.gpu
def test_one_run_on_cuda():
    spec = train.RunSpec("curved", model.Variant("gated", 1.0), 0, epochs=2, device="cuda", **TINY)
    row = train.run(spec).row
    assert row["device"] == "cuda" and 0.4 <= row["accuracy"] <= 1.0
    assert np.isfinite(row["proxy_iso"]) and np.isfinite(row["K_iso_median"])

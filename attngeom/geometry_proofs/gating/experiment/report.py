"""Run the GEC experiment and write what the paper shows: the CSV of every run, the
figures, Table 1 (measured beside printed) and the claims' verdicts on these runs.
``attngeom experiment gec`` calls :func:`run_and_report` and prints :func:`summary_lines`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable, Iterable

from attngeom.geometry_proofs.gating.experiment import figures
from attngeom.geometry_proofs.gating.experiment import statistics as st
from attngeom.geometry_proofs.gating.experiment.claims import CLAIMS, PAPER_TABLE1
from attngeom.geometry_proofs.gating.experiment.runner import (
    ExperimentConfig, read_csv, run_experiment, save_boundaries, write_csv)
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.core.executor import Executor


def table1(rows: list[dict]) -> list[dict]:
    """GEC Table 1 (linear control) as measured, mean +- std over seeds, beside the
    printed row: accuracy, proxy iso, proxy aniso (cond 12), and the invariant median |K|."""
    columns = {"accuracy": "accuracy", "proxy_iso": "proxy_iso",
               "proxy_aniso_12": "proxy_aniso_12", "K_iso_abs_median": "K_iso_abs_median"}
    stats = {name: st.per_alpha(rows, "linear", column) for name, column in columns.items()}
    out = []
    for alpha in sorted(stats["accuracy"]):
        entry = {"alpha": alpha, "runs": stats["accuracy"][alpha][2]}
        for name in columns:
            entry[name] = stats[name][alpha][:2]
        printed = PAPER_TABLE1.get(alpha)
        entry["paper"] = printed
        out.append(entry)
    return out


def table1_markdown(rows: list[dict]) -> str:
    lines = ["| alpha | accuracy (measured) | accuracy (paper) | proxy iso (measured) | "
             "proxy iso (paper) | proxy aniso 12 (measured) | proxy aniso 12 (paper) | "
             "median abs K iso (measured) |", "|" + "---|" * 8]
    for e in table1(rows):
        paper = e["paper"] or (float("nan"),) * 4
        lines.append(
            f"| {e['alpha']:g} | {e['accuracy'][0]:.4f} ± {e['accuracy'][1]:.4f} | "
            f"{paper[0]:.4f} ± {paper[1]:.4f} | {e['proxy_iso'][0]:.4f} ± {e['proxy_iso'][1]:.4f} | "
            f"{paper[2]:.4f} | {e['proxy_aniso_12'][0]:.4f} ± {e['proxy_aniso_12'][1]:.4f} | "
            f"{paper[3]:.4f} | {e['K_iso_abs_median'][0]:.3g} |")
    return "\n".join(lines) + "\n"


def variant_means(rows: list[dict]) -> list[dict]:
    """Mean +- std over seeds per (task, variant, alpha): accuracy, proxy, invariant K."""
    keys = list(dict.fromkeys((r["task"], r["variant"], r["alpha"]) for r in rows))
    out = []
    for task, variant, alpha in keys:
        sel = [r for r in rows if (r["task"], r["variant"], r["alpha"]) == (task, variant, alpha)]
        entry = {"task": task, "variant": variant, "alpha": alpha, "runs": len(sel)}
        for name in ("accuracy", "proxy_iso", "proxy_aniso_12", "proxy_sqrt", "K_iso_median",
                     "K_iso_abs_median", "K_noisefree_abs_median", "K_sqrt_abs_median"):
            if name in sel[0]:
                entry[name] = st.mean_std(st.column(sel, name))
        out.append(entry)
    return out


def proxy_invariant_correlation(rows: list[dict]) -> dict:
    """Across the curved-task runs: Pearson r and Spearman rho between GEC's proxy and the
    invariant median |K| (isotropic), with the number of runs."""
    runs = [r for r in rows if r["task"] == "curved"]
    if len(runs) < 2:
        return {"runs": len(runs)}
    x, y = st.column(runs, "proxy_iso"), st.column(runs, "K_iso_abs_median")
    return {"runs": len(runs), "pearson_r": st.pearson(x, y), "spearman_rho": st.spearman(x, y)}


def _available(rows: list[dict]) -> set[str]:
    tasks = {r["task"] for r in rows}
    variants = {(r["task"], r["variant"]) for r in rows}
    out = set()
    if ("curved", "gated") in variants:
        out |= {"fig2", "fig4", "fig6"}
    if {("curved", v) for v in ("ungated", "silu", "gated-sigmoid", "gated-nonsparse")} <= variants:
        out |= {"fig5", "fig7"}
    if "linear" in tasks:
        out |= {"fig8", "fig9", "table1"}
    if "curved" in tasks:
        out.add("proxy_vs_invariant")
    return out


def write_outputs(rows: list[dict], boundaries: dict, out_dir: Path, seed: int = 0) -> dict:
    """The CSV, boundaries, figures, Table 1 and the claims' verdicts on these rows, in
    ``out_dir``; returns the summary dict (also written as summary.json)."""
    out_dir = Path(out_dir)
    csv_path = write_csv(rows, out_dir / "results.csv")
    rows = read_csv(csv_path)   # the typed rows every reader of the CSV sees
    files = {"results": str(csv_path)}
    if boundaries:
        files["boundaries"] = str(save_boundaries(boundaries, out_dir / "boundaries.npz"))
        files["fig3"] = str(figures.decision_boundaries(boundaries, out_dir))
    available = _available(rows)
    if len({r["seed"] for r in rows}) >= 2:
        drawers = {"fig2": lambda: figures.curvature_vs_alpha(rows, out_dir),
                   "fig4": lambda: figures.accuracy_vs_curvature(rows, out_dir, seed),
                   "fig5": lambda: figures.ablation(rows, out_dir),
                   "fig7": lambda: figures.ablation_anisotropic(rows, out_dir),
                   "fig6": lambda: figures.iso_vs_aniso(rows, out_dir),
                   "fig8": lambda: figures.curvature_vs_alpha(rows, out_dir, "linear", "fig8"),
                   "fig9": lambda: figures.accuracy_vs_curvature(rows, out_dir, seed, None,
                                                                 "linear", "fig9"),
                   "proxy_vs_invariant": lambda: figures.proxy_vs_invariant(rows, out_dir)}
        for name, draw in drawers.items():
            if name in available:
                files[name] = str(draw())
    summary = {"runs": len(rows), "files": files, "variants": variant_means(rows), "claims": [],
               "proxy_vs_invariant": proxy_invariant_correlation(rows)}
    if "table1" in available:
        path = out_dir / "table1.md"
        path.write_text(table1_markdown(rows))
        files["table1"] = str(path)
    for claim in CLAIMS:
        for measure in ("proxy", "invariant"):
            raw = {"results": str(csv_path)}
            if any(p.name == "measure" for p in claim.params):
                raw["measure"] = measure
            elif measure == "invariant":
                continue
            try:
                verdict = claim.verify(raw, context=CheckContext(seed=seed))
            except BadInput as error:  # a grid too small for the statistic (e.g. one seed)
                summary["claims"].append({"claim": claim.id, "measure": raw.get("measure"),
                                          "status": "not evaluated", "summary": str(error)})
                continue
            summary["claims"].append({"claim": claim.id, "measure": raw.get("measure"),
                                      "status": verdict.status.value, "summary": verdict.summary})
    return summary


def run_and_report(config: ExperimentConfig, out_dir: Path,
                   progress: Callable[..., Iterable] | None = None,
                   executor: Executor | None = None) -> dict:
    """Run the grid of ``config`` (on ``executor``, default ``config.workers`` local
    processes) and write every output to ``out_dir``; the summary holds the wall time, the
    CPU seconds of every run summed and the load average, so the timing on a shared
    machine can be judged."""
    start = time.perf_counter()
    rows, boundaries = run_experiment(config, progress, executor)
    wall = time.perf_counter() - start
    summary = write_outputs(rows, boundaries, Path(out_dir))
    summary["timing"] = {"wall_seconds": round(wall, 1),
                         "workers": executor.workers if executor else config.workers,
                         "run_cpu_seconds_total": round(sum(r["cpu_seconds"] for r in rows), 1),
                         "run_cpu_seconds_mean": round(sum(r["cpu_seconds"] for r in rows) / len(rows), 2),
                         "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
                         "cpu_count": os.cpu_count()}
    summary["config"] = {"task": config.task, "seeds": list(config.seeds), "epochs": config.epochs,
                         "device": config.device, "centres": config.centres}
    (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary


def summary_lines(summary: dict) -> list[str]:
    """The human-readable report of :func:`run_and_report`."""
    t = summary["timing"]
    lines = [f"{summary['runs']} runs in {t['wall_seconds']} s wall ({t['workers']} workers; "
             f"{t['run_cpu_seconds_mean']} CPU s per run; load average {t['load_average_1_5_15']})",
             f"{'task':<7} {'variant':<16} {'alpha':>5}  {'accuracy':>15}  {'proxy iso':>15}  "
             f"{'median |K| iso':>20}"]
    for e in summary["variants"]:
        alpha = "" if e["alpha"] is None else f"{e['alpha']:g}"
        lines.append(f"{e['task']:<7} {e['variant']:<16} {alpha:>5}  "
                     f"{e['accuracy'][0]:.4f} ± {e['accuracy'][1]:.4f}  "
                     f"{e['proxy_iso'][0]:.4f} ± {e['proxy_iso'][1]:.4f}  "
                     f"{e['K_iso_abs_median'][0]:.3e} ± {e['K_iso_abs_median'][1]:.1e}")
    pv = summary["proxy_vs_invariant"]
    if "pearson_r" in pv:
        lines.append(f"proxy vs invariant |K| over {pv['runs']} curved-task runs: Pearson r = "
                     f"{pv['pearson_r']:.3f}, Spearman rho = {pv['spearman_rho']:.3f}")
    for c in summary["claims"]:
        measure = f" [{c['measure']}]" if c["measure"] else ""
        lines.append(f"{c['status']:<14} {c['claim']}{measure}: {c['summary']}")
    for name, path in summary["files"].items():
        lines.append(f"{name}: {path}")
    return lines

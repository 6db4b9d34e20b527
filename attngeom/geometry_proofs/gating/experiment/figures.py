"""The figures of GEC §4 / A.2 / A.4 drawn from the rows of a results CSV (matplotlib, Agg),
each with the invariant curvature beside the paper's proxy and the paper's printed value
where it gives one (Fig 4: r ~ 0.79; Table 1 in :mod:`report`).

Every function takes the rows (and the boundary grids for Fig 3) and a directory, writes
one small PNG (``gec_fig<N>_<name>.png``) and returns its path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attngeom.geometry_proofs.gating.experiment import statistics as st
from attngeom.geometry_proofs.gating.experiment.data import BOX, task_score
from attngeom.geometry_proofs.gating.experiment.proxy import CONDITIONS
from attngeom.geometry_proofs.gating.experiment.train import boundary_centres

DPI = 80
MEASURE_LABELS = {"proxy": "proxy kappa (iso)", "invariant": "median |K| (iso)"}


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out_dir: Path, name: str) -> Path:
    path = Path(out_dir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    _pyplot().close(fig)
    return path


def _alpha_curves(ax, rows, task, names_labels, log=False):
    for name, label in names_labels:
        means = st.per_alpha(rows, task, name)
        alphas = sorted(means)
        m = np.array([means[a][0] for a in alphas])
        s = np.array([means[a][1] for a in alphas])
        ax.errorbar(alphas, m, yerr=s, marker="o", capsize=3, label=label)
    ax.set_xlabel("gate strength alpha")
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize=7)


def curvature_vs_alpha(rows, out_dir, task: str = "curved", figure: str = "fig2") -> Path:
    """Fig 2 (curved task; Fig 8 for the linear control): mean +- std over seeds of the
    proxy (iso and aniso, cond 2..20) and of the invariant median |K| against alpha."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    _alpha_curves(axes[0], rows, task, [("proxy_iso", "iso")] +
                  [(f"proxy_aniso_{c}", f"aniso cond {c}") for c in CONDITIONS])
    axes[0].set_ylabel("GEC proxy kappa")
    axes[0].set_title(f"{task}: the paper's proxy")
    _alpha_curves(axes[1], rows, task, [("K_iso_abs_median", "iso")] +
                  [(f"K_aniso_{c}_abs_median", f"aniso cond {c}") for c in CONDITIONS])
    axes[1].set_ylabel("median |K| (Gauss equation)")
    axes[1].set_title(f"{task}: invariant Gaussian curvature")
    return _save(fig, out_dir, f"gec_{figure}_{task}_curvature_vs_alpha.png")


#: The models of Fig 3 (GEC shows ungated and gated; SiLU added).
BOUNDARY_PANELS = ("curved:ungated", "curved:silu", "curved:gated(alpha=1)")


def decision_boundaries(boundaries: dict, out_dir, panels=BOUNDARY_PANELS) -> Path:
    """Fig 3: the ground-truth region s(c) > 0 and the predicted class of the models named
    in ``panels`` on the noise-free sequences x_i = c (first seed), on [-2, 2]^2."""
    plt = _pyplot()
    panels = [("ground truth", None)] + [(k, boundaries[k]) for k in panels if k in boundaries]
    fig, axes = plt.subplots(1, len(panels), figsize=(2.6 * len(panels), 2.8))
    axes = np.atleast_1d(axes)
    for ax, (title, grid) in zip(axes, panels):
        if grid is None:
            n = next(iter(boundaries.values())).shape[0] if boundaries else 60
            grid = (task_score("curved", boundary_centres(n)) > 0).reshape(n, n)
        ax.imshow(grid, origin="lower", extent=(-BOX, BOX, -BOX, BOX), cmap="coolwarm",
                  vmin=0, vmax=1, interpolation="nearest")
        n = grid.shape[0]
        truth = task_score("curved", boundary_centres(n)).reshape(n, n)
        axis = np.linspace(-BOX, BOX, n)
        ax.contour(axis, axis, truth, levels=[0.0], colors="k", linewidths=0.8)
        ax.set_title(title.replace("curved:", ""), fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    return _save(fig, out_dir, "gec_fig3_decision_boundaries.png")


def accuracy_vs_curvature(rows, out_dir, seed: int = 0, paper_r: float | None = 0.79,
                          task: str = "curved", figure: str = "fig4") -> Path:
    """Fig 4 (curved task; Fig 9 for the linear control, where GEC prints no r): test
    accuracy against curvature over the gated runs, with Pearson r and its seeded bootstrap
    95% interval, beside the paper's r ~ 0.79."""
    plt = _pyplot()
    runs = st.select(rows, task, "gated")
    y = st.column(runs, "accuracy")
    alphas = np.array([r["alpha"] for r in runs])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, measure in zip(axes, ("proxy", "invariant")):
        x = st.column(runs, st.measure_column(measure))
        r = st.pearson(x, y)
        low, high = st.bootstrap_interval(x, y, seed)
        points = ax.scatter(x, y, c=alphas, cmap="viridis", s=18)
        ax.set_xlabel(MEASURE_LABELS[measure])
        ax.set_ylabel("test accuracy")
        printed = f"  (paper: r ~ {paper_r})" if paper_r is not None else ""
        ax.set_title(f"{task}: r = {r:.2f} [{low:.2f}, {high:.2f}]{printed}", fontsize=9)
    fig.colorbar(points, ax=axes[-1], label="alpha")
    name = "accuracy_vs_curvature" if task == "curved" else f"{task}_accuracy_vs_curvature"
    return _save(fig, out_dir, f"gec_{figure}_{name}.png")


ABLATION_VARIANTS = ("ungated", "silu", "gated-sigmoid", "gated-nonsparse")


def _ablation_panel(ax, rows, column: str, label: str, title: str) -> None:
    """Bars: mean +- std accuracy per variant; markers (right axis): the curvature ``column``."""
    positions = np.arange(len(ABLATION_VARIANTS))
    acc = [st.mean_std(st.column(st.select(rows, "curved", v), "accuracy")) for v in ABLATION_VARIANTS]
    cur = [st.mean_std(st.column(st.select(rows, "curved", v), column)) for v in ABLATION_VARIANTS]
    ax.bar(positions, [a for a, _ in acc], yerr=[s for _, s in acc], color="lightsteelblue", capsize=3)
    ax.set_ylim(max(0.0, min(a - s for a, s in acc) - 0.02), 1.0)
    ax.set_ylabel("test accuracy")
    ax.set_xticks(positions, [v.replace("-", "-\n") for v in ABLATION_VARIANTS], fontsize=7)
    twin = ax.twinx()
    twin.errorbar(positions, [c for c, _ in cur], yerr=[s for _, s in cur], color="darkred",
                  marker="D", linestyle="none", capsize=3)
    twin.set_ylabel(label, color="darkred")
    ax.set_title(title, fontsize=9)


def ablation(rows, out_dir) -> Path:
    """Fig 5: mean +- std over seeds of accuracy (bars) and isotropic curvature (markers,
    right axis) per variant, the proxy and the invariant median |K|."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, measure in zip(axes, ("proxy", "invariant")):
        _ablation_panel(ax, rows, st.measure_column(measure), MEASURE_LABELS[measure],
                        f"ablation: accuracy and {measure}")
    return _save(fig, out_dir, "gec_fig5_ablation.png")


def ablation_anisotropic(rows, out_dir) -> Path:
    """Fig 7 (A.3): the ablation under the anisotropic metrics, one panel per condition
    number, the proxy (top) and the invariant median |K| (bottom)."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, len(CONDITIONS), figsize=(3.2 * len(CONDITIONS), 6))
    for row, measure in enumerate(("proxy", "invariant")):
        for ax, cond in zip(axes[row], CONDITIONS):
            _ablation_panel(ax, rows, st.ANISO_COLUMNS[measure].format(c=cond),
                            f"{measure} (aniso)", f"{measure}, condition {cond}")
    return _save(fig, out_dir, "gec_fig7_ablation_anisotropic.png")


def iso_vs_aniso(rows, out_dir) -> Path:
    """Fig 6 (A.2): per (alpha, condition number) the mean isotropic against the mean
    anisotropic curvature (gated curved-task runs); marker = alpha, colour = condition."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    markers = "os^Dv"
    colours = plt.get_cmap("plasma")(np.linspace(0, 0.85, len(CONDITIONS)))
    for ax, measure in zip(axes, ("proxy", "invariant")):
        iso = st.per_alpha(rows, "curved", st.measure_column(measure))
        for k, cond in enumerate(CONDITIONS):
            aniso = st.per_alpha(rows, "curved", st.ANISO_COLUMNS[measure].format(c=cond))
            for j, alpha in enumerate(sorted(iso)):
                ax.scatter(iso[alpha][0], aniso[alpha][0], marker=markers[j % len(markers)],
                           color=colours[k], s=22,
                           label=f"cond {cond}" if j == 0 else None)
        ax.set_xlabel(f"isotropic {measure}")
        ax.set_ylabel(f"anisotropic {measure}")
        ax.set_title(f"{measure}: marker = alpha, colour = condition", fontsize=9)
        ax.legend(fontsize=7)
    return _save(fig, out_dir, "gec_fig6_iso_vs_aniso.png")


def proxy_vs_invariant(rows, out_dir) -> Path:
    """Beyond the paper: the proxy against the invariant median |K| for every run, by
    variant (curved task), with Pearson r and Spearman rho."""
    plt = _pyplot()
    runs = st.select(rows, "curved")
    x, y = st.column(runs, "proxy_iso"), st.column(runs, "K_iso_abs_median")
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for variant in dict.fromkeys(r["variant"] for r in runs):
        sel = [i for i, r in enumerate(runs) if r["variant"] == variant]
        ax.scatter(x[sel], y[sel], s=16, label=variant)
    ax.set_xlabel("GEC proxy kappa (iso)")
    ax.set_ylabel("median |K| (iso)")
    ax.set_title(f"Pearson r = {st.pearson(x, y):.2f}, Spearman rho = {st.spearman(x, y):.2f}",
                 fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, out_dir, "gec_proxy_vs_invariant.png")

"""The statistics of GEC §4 computed from the rows of a results CSV: selections, means and
standard deviations over seeds, Pearson and Spearman correlations and seeded percentile
bootstrap intervals (resampling runs with replacement)."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from geometry_proofs.gating.experiment.model import ALPHAS
from kernels.errors import BadInput
from kernels.sampling import Sampler

#: The curvature columns behind ``--measure``: GEC's isotropic proxy, or the median |K| of
#: the invariant Gaussian curvature (isotropic Fisher metric).
MEASURES = {"proxy": "proxy_iso", "invariant": "K_iso_abs_median"}
#: The anisotropic counterpart of each measure at condition number ``c``.
ANISO_COLUMNS = {"proxy": "proxy_aniso_{c}", "invariant": "K_aniso_{c}_abs_median"}
BOOTSTRAP_RESAMPLES = 2000


def measure_column(measure: str) -> str:
    if measure not in MEASURES:
        raise BadInput(f"--measure must be one of {', '.join(MEASURES)}; got {measure!r}")
    return MEASURES[measure]


def select(rows: Iterable[dict], task: str, variant: str | None = None,
           alpha: float | None = None) -> list[dict]:
    """Rows of ``task`` (and ``variant``, and gate strength ``alpha`` when given)."""
    return [r for r in rows if r["task"] == task and (variant is None or r["variant"] == variant)
            and (alpha is None or r["alpha"] == alpha)]


def column(rows: list[dict], name: str) -> np.ndarray:
    try:
        return np.array([float(r[name]) for r in rows])
    except KeyError:
        raise BadInput(f"the results have no column {name!r}") from None


def mean_std(values: np.ndarray) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; 0 for one value) over seeds."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise BadInput("no runs to average (the results lack this task or variant)")
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def per_alpha(rows: list[dict], task: str, name: str) -> dict[float, tuple[float, float, int]]:
    """{alpha: (mean, std, runs)} of column ``name`` over the gated runs of ``task``."""
    out = {}
    for alpha in ALPHAS:
        values = column(select(rows, task, "gated", alpha), name)
        if values.size:
            out[alpha] = (*mean_std(values), int(values.size))
    if not out:
        raise BadInput(f"the results have no gated runs of task {task!r}")
    return out


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r = cov(x, y) / (std x std y); nan when either is constant."""
    x, y = np.asarray(x, float) - np.mean(x), np.asarray(y, float) - np.mean(y)
    denominator = np.sqrt((x @ x) * (y @ y))
    return float(x @ y / denominator) if denominator > 0 else float("nan")


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties averaged."""
    x = np.asarray(x, float)
    order = np.argsort(x, kind="stable")
    out = np.empty(len(x))
    out[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        out[tied] = out[tied].mean()
    return out


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson's r of the ranks."""
    return pearson(ranks(x), ranks(y))


def bootstrap_interval(x: np.ndarray, y: np.ndarray, seed: int, statistic=pearson,
                       resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(x, y)``: ``resamples`` resamples of the
    runs with replacement, drawn from ``Sampler(seed)``; degenerate resamples (a constant
    column) are skipped."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3:
        raise BadInput(f"a bootstrap interval needs at least 3 runs; got {len(x)}")
    draws = Sampler(seed).spawn(424).integers((resamples, len(x)), 0, len(x) - 1)
    values = np.array([statistic(x[i], y[i]) for i in draws])
    values = values[np.isfinite(values)]
    tail = (1.0 - level) / 2
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))

"""The statistics of GEC §4 computed from the rows of a results CSV: selections, means and
standard deviations over seeds, Pearson and Spearman correlations and seeded percentile
bootstrap intervals (resampling runs with replacement)."""

from __future__ import annotations

from statistics import NormalDist
from typing import Iterable

import numpy as np

from attngeom.geometry_proofs.gating.experiment.model import ALPHAS
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler

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


# --------------------------------------------------------------------------------------
# the reviewer's statistics (issue 27): Fisher-z intervals, the seed-bootstrap trend test
# --------------------------------------------------------------------------------------

#: Level of the trend interval and of the correlation intervals.
TREND_LEVEL = 0.95
#: Family-wise level of the four consecutive-step intervals (Bonferroni: each at
#: 1 - 0.05 / 4 = 98.75%).
STEP_FAMILY_LEVEL = 0.95


def fisher_interval(r: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Fisher's z interval of a Pearson r over n pairs: tanh(atanh(r) -+ z_q / sqrt(n - 3)),
    z_q the (1 + level) / 2 normal quantile (bivariate normal, independent pairs); n >= 4."""
    if n < 4:
        raise BadInput(f"a Fisher interval needs at least 4 pairs; got {n}")
    if not np.isfinite(r):
        return float("nan"), float("nan")
    z = float(np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15)))
    half = NormalDist().inv_cdf(0.5 + level / 2) / np.sqrt(n - 3)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def seed_alpha_matrix(rows: list[dict], name: str, task: str = "curved") -> tuple[list, np.ndarray]:
    """Column ``name`` of the gated runs of ``task`` as a matrix [seed, alpha] (a seed's runs
    share its data, so the seeds are the resampling unit): (seeds, shape=[S, 5]).  Every seed
    needs exactly one run at every alpha."""
    runs = select(rows, task, "gated")
    seeds = sorted({r["seed"] for r in runs})
    matrix = np.full((len(seeds), len(ALPHAS)), np.nan)
    for r in runs:
        i, j = seeds.index(r["seed"]), ALPHAS.index(r["alpha"])
        if not np.isnan(matrix[i, j]):
            raise BadInput(f"two gated {task} runs at seed {r['seed']}, alpha {r['alpha']}")
        matrix[i, j] = float(r[name])
    if not seeds or np.isnan(matrix).any():
        raise BadInput(f"the trend test needs one gated {task} run at every alpha for every seed")
    return seeds, matrix


def _row_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (1..n) along the last axis, ties averaged, vectorised."""
    below = (values[..., None, :] < values[..., :, None]).sum(-1)
    equal = (values[..., None, :] == values[..., :, None]).sum(-1)
    return below + (equal + 1) / 2.0


def _row_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = x - x.mean(-1, keepdims=True)
    y = y - y.mean(-1, keepdims=True)
    den = np.sqrt((x * x).sum(-1) * (y * y).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (x * y).sum(-1) / np.where(den > 0, den, 1.0), np.nan)


def trend_test(matrix: np.ndarray, seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> dict:
    """The noise-aware reading of "curvature increases with alpha" (GEC §4.1, Fig 2), on a
    [seed, alpha] matrix (alphas ascending).

    Statistic: rho = Spearman(alpha, seed-mean at alpha), the trend of Fig 2's curve.
    Bootstrap over seeds (``resamples`` draws of S seeds with replacement, a seed's five runs
    kept together, from ``Sampler(seed).spawn(425)``): the 95% percentile interval of rho, and
    for each step alpha_k -> alpha_(k+1) the percentile interval of the mean paired
    difference at 1 - 0.05/4 (Bonferroni over the four steps).

    Rule (fixed before the results were read): the trend holds iff the rho interval lies
    above 0 (a rising trend beyond the seed noise) and no step's interval lies entirely
    below 0 (no significant fall).  With one seed the intervals collapse to the point
    values (strict monotonicity).
    """
    matrix = np.asarray(matrix, float)
    seeds, steps = matrix.shape[0], matrix.shape[1] - 1
    alphas = np.arange(matrix.shape[1], dtype=float)
    means = matrix.mean(axis=0)
    rho = float(_row_pearson(_row_ranks(alphas), _row_ranks(means)))
    draws = Sampler(seed).spawn(425).integers((resamples, seeds), 0, seeds - 1)
    boot = matrix[draws].mean(axis=1)                                   # [R, A]
    rhos = _row_pearson(_row_ranks(alphas)[None], _row_ranks(boot))
    rhos = rhos[np.isfinite(rhos)]
    tail = (1 - TREND_LEVEL) / 2
    rho_ci = (float(np.quantile(rhos, tail)), float(np.quantile(rhos, 1 - tail)))
    diffs = np.diff(matrix, axis=1)                                     # [S, A-1]
    boot_diffs = diffs[draws].mean(axis=1)                              # [R, A-1]
    step_tail = (1 - STEP_FAMILY_LEVEL) / (2 * steps)
    step_ci = [(float(np.quantile(boot_diffs[:, k], step_tail)),
                float(np.quantile(boot_diffs[:, k], 1 - step_tail))) for k in range(steps)]
    falls = [k for k, (_, high) in enumerate(step_ci) if high < 0]
    return {"means": [float(m) for m in means], "rho": rho, "rho_ci": list(rho_ci),
            "step_mean_differences": [float(d) for d in diffs.mean(axis=0)],
            "step_ci": [list(ci) for ci in step_ci], "significant_falls": falls,
            "holds": bool(rho_ci[0] > 0 and not falls), "seeds": seeds,
            "resamples": resamples, "step_level": 1 - (1 - STEP_FAMILY_LEVEL) / steps}


def correlation_readings(runs: list[dict], name: str) -> dict:
    """Pearson r(curvature ``name``, accuracy) over the gated runs two ways (GEC §4.1, Fig 4,
    "across gate strengths"): ``alpha-means``, the five (seed-mean curvature, seed-mean
    accuracy) points; ``runs``, every run.  Each with its 95% Fisher-z interval."""
    out = {}
    x, y = column(runs, name), column(runs, "accuracy")
    alphas = sorted({r["alpha"] for r in runs})
    mx = np.array([x[[r["alpha"] == a for r in runs]].mean() for a in alphas])
    my = np.array([y[[r["alpha"] == a for r in runs]].mean() for a in alphas])
    for key, (u, v) in (("alpha-means", (mx, my)), ("runs", (x, y))):
        r = pearson(u, v)
        out[key] = {"pearson_r": r, "fisher_95": list(fisher_interval(r, len(u))), "n": len(u)}
    return out

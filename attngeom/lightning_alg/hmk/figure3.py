"""HMK Figure 3: estimated and expected dimension of the neuromanifold as delta varies.

The experiment of HMK §3.4: l = 2 layers, t = 3, a_i = 2, d_0 = d_1 = d_2 = delta = 3..10.
For each delta both sweeps are measured at one random point (seeded):

* softmax (HMK eq 15): float64 Jacobian rank at N = 250 inputs with the singular-value rule of
  :func:`attngeom.kernels.jacobian.numerical_rank`, against eq (16) ("Expected" in HMK's figure);
* lightning: exact Jacobian rank over F_p, against eq (14) as printed and the corrected value
  eq (16) - l (see :mod:`attngeom.lightning_alg.hmk.dimension`).

Every measured rank is also compared with the exact upper bound P - dim(symmetry orbit).
The points are independent tasks (:func:`figure3_row`), run by an executor
(``--workers`` / ``--scheduler``); each is seeded by its delta, so the rows do not depend
on where they ran.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

from attngeom.core.claim import CheckContext
from attngeom.core.executor import Executor, SerialExecutor
from attngeom.lightning_alg.hmk.dimension import (Architecture, deep_dimension_corrected,
                                     deep_dimension_printed, measure_exact, measure_numeric,
                                     softmax_dimension_printed)

DELTAS = tuple(range(3, 11))
LAYERS, T, A = 2, 3, 2
FILENAME = "hmk_figure3.png"


def figure3_rows(context: CheckContext, deltas=DELTAS,
                 executor: Executor | None = None) -> list[dict]:
    """One row per delta (:func:`figure3_row`), the points run by ``executor`` (default:
    one after another in this process) under one progress bar."""
    point = CheckContext(seed=context.seed, samples=context.samples, backend=context.backend,
                         device=context.device)           # what travels: no progress display
    return (executor or SerialExecutor()).map(
        partial(figure3_row, context=point), list(deltas),
        names=[f"delta={delta}" for delta in deltas], label="HMK Figure 3",
        progress=context.progress)


def figure3_row(delta: int, context: CheckContext) -> dict:
    """The point delta: measured ranks, formulas, certification, timings."""
    light = Architecture((delta,) * (LAYERS + 1), (A,) * LAYERS, T)
    soft = Architecture(light.d, light.a, T, softmax=True)
    start = time.perf_counter()
    exact = measure_exact(light, context.sampler.spawn(delta))
    middle = time.perf_counter()
    numeric = measure_numeric(soft, context.sampler.spawn(delta), context.samples,
                              context.backend, context.device)
    end = time.perf_counter()
    return {
        "delta": delta, "parameters": light.parameters,
        "lightning_measured": exact.rank, "lightning_certified": exact.certified,
        "lightning_eq14_printed": deep_dimension_printed(light, delta),
        "lightning_corrected": deep_dimension_corrected(light, delta),
        "softmax_measured": numeric.rank, "softmax_certified": numeric.certified,
        "softmax_eq16": softmax_dimension_printed(soft, delta),
        "softmax_gap_clear": numeric.numerical.clear,
        "softmax_sigma_kept_min_relative": numeric.numerical.kept_min,
        "softmax_sigma_dropped_max_relative": numeric.numerical.dropped_max,
        "softmax_samples": numeric.samples, "prime": exact.prime,
        "seconds_lightning": round(middle - start, 4), "seconds_softmax": round(end - middle, 4)}


def rows_are_right(rows: list[dict]) -> bool:
    """Every point certified, softmax = eq (16), lightning = the corrected eq (14)."""
    return all(r["lightning_certified"] and r["softmax_certified"] and r["softmax_gap_clear"]
               and r["softmax_measured"] == r["softmax_eq16"]
               and r["lightning_measured"] == r["lightning_corrected"] for r in rows)


def plot_figure3(rows: list[dict], out_dir: Path) -> Path:
    """Two panels (softmax, lightning): measured rank and formulas against delta, as PNG."""
    from matplotlib.figure import Figure

    deltas = [r["delta"] for r in rows]
    figure = Figure(figsize=(10, 4.2), dpi=120)
    soft, light = figure.subplots(1, 2)
    soft.plot(deltas, [r["softmax_eq16"] for r in rows], "-", color="tab:orange", lw=2,
              label="Expected, eq (16)")
    soft.plot(deltas, [r["softmax_measured"] for r in rows], "o", color="tab:blue",
              label="Estimated (float64 SVD, N = 250)")
    soft.set_title("softmax attention")
    light.plot(deltas, [r["lightning_eq14_printed"] for r in rows], "--", color="tab:red",
               label="eq (14) as printed")
    light.plot(deltas, [r["lightning_corrected"] for r in rows], "-", color="tab:orange", lw=2,
               label="eq (14), sum over 1 < i <= l")
    light.plot(deltas, [r["lightning_measured"] for r in rows], "o", color="tab:blue",
               label="Estimated (exact rank over F_p)")
    light.set_title("lightning attention")
    for axes in (soft, light):
        axes.set_xlabel("delta")
        axes.set_ylabel("dimension")
        axes.grid(alpha=0.3)
        axes.legend()
    figure.suptitle(f"HMK Figure 3: l = {LAYERS}, t = {T}, a_i = {A}, d_i = delta")
    figure.tight_layout()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILENAME
    figure.savefig(path, metadata={"Software": None})
    return path

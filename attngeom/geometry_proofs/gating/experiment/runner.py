"""The grid of runs of GEC §4 / A.3-A.5 (tasks x variants x seeds), run by an executor
(:mod:`attngeom.core.executor`: this process, local worker processes or a Dask cluster), and the
results CSV.

Grids (``--task``):

* ``curved`` (Fig 2-4): ungated, SiLU and gated with alpha in {0, 0.25, 0.5, 1, 1.5};
* ``ablation`` (Fig 5, §4.2): ungated, SiLU, gated-sigmoid, gated-nonsparse on the curved
  task (the first two are shared with ``curved``);
* ``linear`` (Table 1, A.4): gated with the five alphas on the linear control, as Table 1;
* ``all``: their union (14 runs per seed).

Each run is seeded from its own (task, variant, alpha, seed) key and computes with one
torch thread, so the rows are the same wherever and by how many workers they run; the
timing columns (:data:`train.TIMING_COLUMNS`) are the only ones that vary.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from attngeom.geometry_proofs.gating.experiment.model import ALPHAS, Variant
from attngeom.geometry_proofs.gating.experiment.train import RunSpec, run
from attngeom.core.errors import BadInput
from attngeom.core.executor import Executor, make_executor

GRIDS = ("curved", "ablation", "linear")
TASK_CHOICES = GRIDS + ("all",)
#: The committed results of the full experiment (all tasks, seeds 0-4, 20 epochs).
RESULTS_FILE = Path(__file__).resolve().parent / "data" / "results.csv"
BOUNDARIES_FILE = RESULTS_FILE.with_name("boundaries.npz")
#: Points per side of the decision-boundary grid (Fig 3), drawn for the first seed.
BOUNDARY_GRID = 60
#: Columns that hold text; every other column is a number ("" for none).
TEXT_COLUMNS = ("task", "variant", "device", "init", "layer", "space")


def grid_variants(grid: str) -> list[tuple[str, Variant]]:
    """(data task, variant) pairs of one grid."""
    gated = [Variant("gated", alpha) for alpha in ALPHAS]
    if grid == "curved":
        return [("curved", v) for v in [Variant("ungated"), Variant("silu")] + gated]
    if grid == "ablation":
        return [("curved", Variant(name)) for name in
                ("ungated", "silu", "gated-sigmoid", "gated-nonsparse")]
    if grid == "linear":
        return [("linear", v) for v in gated]
    raise BadInput(f"unknown task {grid!r}; choose one of {', '.join(TASK_CHOICES)}")


def parse_seeds(text: str) -> tuple[int, ...]:
    """'0-4' or '0,2,5' (or a mix: '0-2,7') -> sorted distinct non-negative seeds."""
    seeds: set[int] = set()
    try:
        for part in str(text).split(","):
            part = part.strip()
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                if high < low:
                    raise ValueError
                if high - low >= 100:
                    raise BadInput(f"--seeds {part} names {high - low + 1} seeds; at most 100")
                seeds.update(range(low, high + 1))
            elif part:
                seeds.add(int(part))
    except ValueError:
        raise BadInput(f"--seeds must look like 0-4 or 0,1,2 (non-negative); got {text!r}") from None
    if not seeds or min(seeds) < 0:
        raise BadInput(f"--seeds must name non-negative seeds; got {text!r}")
    if len(seeds) > 100:
        raise BadInput(f"--seeds names {len(seeds)} seeds; at most 100")
    return tuple(sorted(seeds))


@dataclass(frozen=True)
class ExperimentConfig:
    """The grid to run and the size of each run (GEC A.5 defaults)."""

    task: str = "all"
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    epochs: int = 20
    workers: int = 1
    device: str = "cpu"
    train_size: int = 4000
    test_size: int = 1000
    centres: int = 256
    boundary_grid: int = BOUNDARY_GRID

    def specs(self) -> list[RunSpec]:
        """The distinct runs, in a fixed order (grid, variant, seed)."""
        if self.task not in TASK_CHOICES:
            raise BadInput(f"unknown task {self.task!r}; choose one of {', '.join(TASK_CHOICES)}")
        if self.workers < 1 or self.workers > 64:
            raise BadInput(f"--workers must be between 1 and 64; got {self.workers}")
        if self.epochs < 1 or self.epochs > 1000:
            raise BadInput(f"--epochs must be between 1 and 1000; got {self.epochs}")
        grids = GRIDS if self.task == "all" else (self.task,)
        pairs = list(dict.fromkeys(pair for grid in grids for pair in grid_variants(grid)))
        first = min(self.seeds)
        specs = [RunSpec(task, variant, seed, epochs=self.epochs, train_size=self.train_size,
                         test_size=self.test_size, centres=self.centres, device=self.device,
                         boundary_grid=self.boundary_grid if seed == first and task == "curved" else 0)
                 for task, variant in pairs for seed in self.seeds]
        for spec in specs:
            spec.validate()
        return specs


def run_experiment(config: ExperimentConfig, progress: Callable[..., Iterable] | None = None,
                   executor: Executor | None = None) -> tuple[list[dict], dict]:
    """Run every spec of ``config`` on ``executor`` (default: ``config.workers`` local
    processes); returns (CSV rows in spec order, decision-boundary grids {variant label:
    int8 array shape=[n, n]} of the first seed).  ``progress`` wraps the stream of finished
    runs (a terminal progress bar in the CLI)."""
    specs = config.specs()
    if executor is None:
        with make_executor(workers=config.workers) as own:
            return run_experiment(config, progress, own)
    results = executor.map(run, specs, label="GEC runs", progress=progress,
                           names=[f"{s.task}/{s.variant.label}/seed {s.seed}" for s in specs])
    rows = [results[i].row for i in range(len(specs))]
    boundaries = {f"{specs[i].task}:{specs[i].variant.label}": results[i].boundary
                  for i in range(len(specs)) if results[i].boundary is not None}
    return rows, boundaries


# --------------------------------------------------------------------------------------
# the CSV
# --------------------------------------------------------------------------------------

def write_csv(rows: list[dict], path: Path) -> Path:
    """Every run, one row each; columns in the order of the first row."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k, "")) for k in columns})
    return path


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else repr(float(value))
    return value


def read_csv(path: Path) -> list[dict]:
    """The rows of a results CSV, numbers as floats (alpha None when empty)."""
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"no results file at {path}")
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or not {"task", "variant", "alpha", "seed", "accuracy", "proxy_iso"} <= set(rows[0]):
        raise BadInput(f"{path} is not a GEC results CSV (needs task, variant, alpha, seed, "
                       f"accuracy, proxy_iso columns)")
    out = []
    for row in rows:
        parsed = {}
        for key, value in row.items():
            if key in TEXT_COLUMNS:
                parsed[key] = value
            elif value == "":
                parsed[key] = None if key == "alpha" else float("nan")
            else:
                try:
                    parsed[key] = float(value)
                except ValueError:
                    raise BadInput(f"{path}: column {key} holds {value!r}, not a number") from None
        out.append(parsed)
    return out


def save_boundaries(boundaries: dict, path: Path) -> Path:
    path = Path(path)
    np.savez_compressed(path, **{k: v for k, v in boundaries.items()})
    return path


def load_boundaries(path: Path = BOUNDARIES_FILE) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {k: archive[k] for k in archive.files}


def reduced_config(text: str) -> ExperimentConfig:
    """'run:SEEDS:EPOCHS' (e.g. run:0-1:5) -> the full grid at those seeds and epochs, in
    one worker process per CPU (the fresh-run route of the experiment claims)."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] != "run":
        raise BadInput(f"--results must be a CSV path or run:SEEDS:EPOCHS (e.g. run:0-1:5); got {text!r}")
    try:
        epochs = int(parts[2])
    except ValueError:
        raise BadInput(f"--results run:SEEDS:EPOCHS needs an integer EPOCHS; got {parts[2]!r}") from None
    config = replace(ExperimentConfig(), seeds=parse_seeds(parts[1]), epochs=epochs, boundary_grid=0)
    return replace(config, workers=max(1, min(os.cpu_count() or 1, len(config.specs()))))


def experiment_config(task: str, seeds: str, epochs: int, workers: int | None, centres: int,
                      device: str) -> ExperimentConfig:
    """The configuration of ``attngeom experiment gec`` (BadInput for nonsense); workers
    default to the CPU count, capped by the number of runs; a CUDA device that is not there
    fails here, before any run starts."""
    from attngeom.kernels.backend import get_backend
    if device == "cuda":
        get_backend("torch", "cuda")
    if centres < 1 or centres > 1000:
        raise BadInput(f"--centres must be between 1 and 1000 (the test split); got {centres}")
    config = ExperimentConfig(task=task, seeds=parse_seeds(seeds), epochs=epochs, workers=1,
                              centres=centres, device=device)
    runs = len(config.specs())
    config = replace(config, workers=min(workers or os.cpu_count() or 1, runs) if workers is None
                     else workers)
    config.specs()
    return config

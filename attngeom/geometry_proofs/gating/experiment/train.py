"""One run of the GEC experiment: train one variant on one task with one seed (GEC A.5.2),
then evaluate accuracy, the proxy (A.5.4-A.5.5) and the invariant curvature.

Training is float32 (AdamW, lr 2e-3, weight decay 1e-4, batch 128, 20 epochs by default);
evaluation is float64 (the trained weights cast).  Every random choice (data, initial
weights, batch order, the evaluation subset of test centres, the proxy's directions)
comes from :class:`attngeom.kernels.sampling.Sampler` streams keyed by (task, seed) for the data
and (task, variant, alpha, seed) for the run, and the run computes with one torch thread
and deterministic algorithms, so its result does not depend on which process runs it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from attngeom.geometry_proofs.gating.experiment import data as data_mod
from attngeom.geometry_proofs.gating.experiment import invariant, model, proxy
from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler

#: The fixed seed of the evaluation subset and the proxy's directions (shared by all runs).
EVALUATION_SEED = 7


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines one run (GEC A.5.2 defaults).

    ``centres``: how many test centres (a seeded subset of the test split, the same for
    every run of a seed) carry the proxy and the invariant curvature; ``boundary_grid``:
    points per side of the decision-boundary grid on [-2, 2]^2 (0: none).
    """

    task: str
    variant: model.Variant
    seed: int
    epochs: int = 20
    train_size: int = 4000
    test_size: int = 1000
    batch_size: int = 128
    learning_rate: float = 2e-3
    weight_decay: float = 1e-4
    centres: int = 256
    directions: int = proxy.DIRECTIONS
    boundary_grid: int = 0
    device: str = "cpu"
    #: the initialisation scheme (:data:`model.INIT_SCHEMES`; not part of the CSV row)
    init: str = "lecun-normal"

    def key(self) -> tuple[int, int, int, int]:
        """The (task, variant, alpha, seed) key of the run's random streams."""
        alpha = 0 if self.variant.alpha is None else 1 + model.ALPHAS.index(self.variant.alpha)
        return (data_mod.TASKS.index(self.task), model.VARIANT_NAMES.index(self.variant.name),
                alpha, self.seed)

    def validate(self) -> None:
        if self.task not in data_mod.TASKS:
            raise BadInput(f"unknown task {self.task!r}; choose one of {', '.join(data_mod.TASKS)}")
        if self.variant.alpha is not None and self.variant.alpha not in model.ALPHAS:
            raise BadInput(f"gate strength {self.variant.alpha} is not one of GEC's {model.ALPHAS}")
        for name in ("epochs", "train_size", "test_size", "batch_size", "centres", "directions"):
            if getattr(self, name) < 1:
                raise BadInput(f"{name.replace('_', '-')} must be positive; got {getattr(self, name)}")
        if self.seed < 0:
            raise BadInput(f"seeds must be non-negative; got {self.seed}")
        if self.init not in model.INIT_SCHEMES:
            raise BadInput(f"unknown initialisation {self.init!r}; choose one of "
                           f"{', '.join(model.INIT_SCHEMES)}")


@dataclass
class RunResult:
    """The CSV row of a run (``row``) and the arrays that do not fit a row."""

    row: dict[str, Any]
    boundary: np.ndarray | None = None
    extras: dict[str, Any] = field(default_factory=dict)


def _summary(prefix: str, values: np.ndarray) -> dict[str, float]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {f"{prefix}_median": float("nan")}
    q25, q50, q75 = np.percentile(finite, [25, 50, 75])
    return {f"{prefix}_median": float(q50), f"{prefix}_q25": float(q25), f"{prefix}_q75": float(q75),
            f"{prefix}_abs_median": float(np.median(np.abs(finite)))}


def train_parameters(spec: RunSpec, train: data_mod.Dataset, torch: Any) -> tuple[dict, float]:
    """AdamW training in float32; returns the trained tensors and the last epoch's mean loss."""
    sampler = _run_sampler(spec)
    params = model.to_tensors(model.initial_parameters(spec.variant, sampler.spawn(0), spec.init), torch,
                              spec.device, torch.float32, trainable=True)
    optimiser = torch.optim.AdamW(list(params.values()), lr=spec.learning_rate,
                                  weight_decay=spec.weight_decay)
    inputs = torch.as_tensor(train.sequences, dtype=torch.float32, device=spec.device)
    targets = torch.as_tensor(train.labels, device=spec.device)
    order_stream = sampler.spawn(1)
    loss_sum = 0.0
    for epoch in range(spec.epochs):
        order = torch.as_tensor(_permutation(order_stream.spawn(epoch), len(train)),
                                device=spec.device)
        loss_sum, batches = 0.0, 0
        for start in range(0, len(train), spec.batch_size):
            batch = order[start:start + spec.batch_size]
            loss = torch.nn.functional.cross_entropy(
                model.logits(params, inputs[batch], spec.variant, torch), targets[batch])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            loss_sum, batches = loss_sum + float(loss.detach()), batches + 1
        loss_sum /= batches
    return params, loss_sum


def _permutation(sampler: Sampler, count: int) -> np.ndarray:
    """A seeded uniform permutation of range(count)."""
    return np.argsort(sampler.floats(count), kind="stable")


def _run_sampler(spec: RunSpec) -> Sampler:
    sampler = Sampler(spec.seed)
    for part in spec.key()[:3]:
        sampler = sampler.spawn(part)
    return sampler


def evaluation_points(spec: RunSpec, test: data_mod.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The seeded subset of test examples carrying the curvatures and the proxy's unit
    directions: (indices shape=[centres], directions shape=[K, 8, 2])."""
    sampler = Sampler(EVALUATION_SEED).spawn(spec.seed)
    count = min(spec.centres, len(test))
    indices = np.sort(_permutation(sampler.spawn(0), len(test))[:count])
    directions = proxy.unit_directions(Sampler(EVALUATION_SEED).spawn(10_000), spec.directions,
                                       test.sequences.shape[1:])
    return indices, directions


def boundary_centres(points_per_side: int) -> np.ndarray:
    """The grid of the decision-boundary figure on [-2, 2]^2, shape=[n^2, 2] (row-major in c_2)."""
    axis = np.linspace(-data_mod.BOX, data_mod.BOX, points_per_side)
    c1, c2 = np.meshgrid(axis, axis)
    return np.stack([c1.ravel(), c2.ravel()], axis=1)


@contextmanager
def one_deterministic_thread(torch: Any) -> Iterator[None]:
    """One torch thread and deterministic algorithms while a run trains and is measured (its
    numbers then do not depend on the machine's thread count); both restored afterwards."""
    threads = torch.get_num_threads()
    deterministic = (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled())
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])


@dataclass
class TrainedRun:
    """A trained run (:func:`train_and_score`): the float64 parameters, the final training
    loss, the test accuracy, the test split and the evaluation centres with their
    directions, and the training wall time."""

    double: dict
    loss: float
    accuracy: float
    test: data_mod.Dataset
    indices: np.ndarray
    directions: np.ndarray
    train_seconds: float


def train_and_score(spec: RunSpec, be) -> TrainedRun:
    """Train ``spec`` (GEC A.5) on backend ``be`` (torch) and score it on its test split;
    call inside :func:`one_deterministic_thread`."""
    torch = be.module
    wall0 = time.perf_counter()
    train, test = data_mod.make_task(spec.task, spec.train_size, spec.test_size, spec.seed)
    params, loss = train_parameters(spec, train, torch)
    wall1 = time.perf_counter()
    double = {name: value.detach().to(torch.float64) for name, value in params.items()}
    with torch.no_grad():
        predicted = model.logits(double, be.asarray(test.sequences), spec.variant, torch).argmax(-1)
    accuracy = float((be.to_numpy(predicted) == test.labels).mean())
    indices, directions = evaluation_points(spec, test)
    return TrainedRun(double, loss, accuracy, test, indices, directions, wall1 - wall0)


def run(spec: RunSpec) -> RunResult:
    """Train and evaluate one run; the CSV row holds its spec, accuracy, the proxies (mean
    over the evaluation centres) and the invariant curvature (median, quartiles, median |K|)."""
    spec.validate()
    be = get_backend("torch", spec.device)
    torch = be.module
    with one_deterministic_thread(torch):
        cpu0 = time.process_time()
        fitted = train_and_score(spec, be)
        wall1 = time.perf_counter()
        double, loss, accuracy, test = fitted.double, fitted.loss, fitted.accuracy, fitted.test
        indices, directions = fitted.indices, fitted.directions
        mean_map = lambda x: model.attention_output_mean(double, x, spec.variant, torch)
        proxies = proxy.curvature_proxies(mean_map, be.asarray(test.sequences[indices]),
                                          be.asarray(directions), torch)
        curvatures = invariant.gaussian_curvatures(double, spec.variant,
                                                   be.asarray(test.centres[indices]), be)
        boundary = None
        if spec.boundary_grid:
            grid = boundary_centres(spec.boundary_grid)
            sequences = np.repeat(grid[:, None, :], data_mod.SEQUENCE_LENGTH, axis=1)
            with torch.no_grad():
                boundary = be.to_numpy(model.logits(double, be.asarray(sequences), spec.variant,
                                                    torch).argmax(-1)).reshape(
                    spec.boundary_grid, spec.boundary_grid).astype(np.int8)
        cpu2, wall2 = time.process_time(), time.perf_counter()
    row = {"task": spec.task, "variant": spec.variant.name,
           "alpha": spec.variant.alpha,
           "seed": spec.seed, "epochs": spec.epochs, "train_size": spec.train_size,
           "test_size": spec.test_size, "centres": len(indices), "directions": spec.directions,
           "accuracy": accuracy, "final_train_loss": loss}
    row.update({f"proxy_{name}": float(np.mean(values)) for name, values in proxies.items()})
    scale = curvatures.pop("iso_scale")
    for name, values in curvatures.items():
        row.update(_summary(f"K_{name}", values))
    row["K_iso_relative_abs_median"] = float(np.nanmedian(np.abs(curvatures["iso"]) / scale))
    row["K_degenerate_points"] = int(np.sum(~np.isfinite(curvatures["iso"])))
    row.update({"train_seconds": round(fitted.train_seconds, 3), "eval_seconds": round(wall2 - wall1, 3),
                "cpu_seconds": round(cpu2 - cpu0, 3), "device": spec.device})
    return RunResult(row, boundary, {"spec": asdict(spec)})


#: CSV columns that depend on the machine and the load, not on the seed.
TIMING_COLUMNS = ("train_seconds", "eval_seconds", "cpu_seconds", "device")

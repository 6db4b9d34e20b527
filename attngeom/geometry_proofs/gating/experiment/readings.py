"""The readings of GEC §4's proxy that the paper leaves open, measured on retrained models.

GEC §4 / A.5.4 define kappa(x) = || (f(x + eps v) - 2 f(x) + f(x - eps v)) / eps^2 ||,
averaged over 64 random unit directions v, eps = 1e-2, "the curvature of the attention
output mean", and say that "a residual connection and layer normalization follow the
attention block".  They do not fix:

* **layer** -- which map f is: ``block``, the block's output m(X) = mean_i Y'_i (what
  ``results.csv``'s ``proxy_*`` columns hold), or ``post-ln``, the token mean after the
  residual and the layer norm, mean_i LN(H0 + Y')_i (the pooled features the MLP reads);
* **space** -- where v lives: ``sequence``, a unit vector of the whole input R^(8x2) at the
  test sequence X (as ``results.csv``), or ``centre``, a unit vector u of the latent plane R^2
  moving every token alike, X + eps (u, ..., u) (the latent centre c moves by eps u; f as a
  function of c at the test sequence's own noise), at the same 256 test sequences;
* **init** -- the initialisation of the weights (A.5 names none): ``lecun-normal``, the
  project's (:func:`model.initial_parameters`), and ``torch-default``, torch.nn.Linear's
  U(+-1/sqrt(fan_in)) for matrices and biases (weight std 1/sqrt(3) of LeCun's).

Every (init, seed, alpha) gated curved-task run is trained with the project's own code
(:func:`train.train_parameters`; GEC A.5.2 settings: AdamW lr 2e-3, wd 1e-4, batch 128,
20 epochs, seeds 0-4), then measured under the four (layer, space) readings; each gives one
row of ``data/readings.csv`` (long format: init, layer, space, seed, alpha, accuracy,
proxy_iso, proxy_aniso_<cond>, proxy_sqrt), with the invariant curvature of the run
(``K_iso_abs_median``, ``K_aniso_<cond>_abs_median``: :mod:`invariant`, which depends on the
init only) repeated on its four rows.  The lecun-normal / block / sequence rows are the
``results.csv`` runs again (same keys, same streams).  Regenerate with
``attngeom experiment gec-readings --out DIR`` (``--workers 2``: 50 runs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from attngeom.geometry_proofs.gating.experiment import data as data_mod
from attngeom.geometry_proofs.gating.experiment import invariant, model, proxy, train
from attngeom.geometry_proofs.gating.experiment.runner import RESULTS_FILE, parse_seeds
from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.core.executor import Executor, make_executor
from attngeom.kernels.sampling import Sampler

READINGS_FILE = RESULTS_FILE.with_name("readings.csv")
LAYERS = ("block", "post-ln")
SPACES = ("sequence", "centre")
INITS = model.INIT_SCHEMES
#: The reading of ``results.csv`` (the project's proxy before this module).
PROJECT_READING = ("lecun-normal", "block", "sequence")
#: The stream of the latent directions u of the ``centre`` space (beside 10_000, the
#: sequence directions of :func:`train.evaluation_points`).
CENTRE_DIRECTIONS_KEY = 10_001


def reading_name(init: str, layer: str, space: str) -> str:
    """The reading's slug, e.g. ``init=lecun-normal,layer=block,space=sequence``."""
    return f"init={init},layer={layer},space={space}"


def layer_map(params: dict, variant: model.Variant, layer: str, torch: Any) -> Callable:
    """f of the proxy: X shape=[..., 8, 2] -> shape=[..., 64]; ``block`` mean_i Y'_i,
    ``post-ln`` mean_i LayerNorm(H0 + Y')_i (the layer norm of :func:`model.logits`)."""
    if layer == "block":
        return lambda x: model.attention_output_mean(params, x, variant, torch)
    if layer == "post-ln":
        def post(x):
            hidden, output = model.attention_block(params, x, variant, torch)
            normed = torch.nn.functional.layer_norm(hidden + output, (model.HIDDEN,),
                                                    params["norm_weight"], params["norm_bias"])
            return normed.mean(dim=-2)
        return post
    raise BadInput(f"unknown layer {layer!r}; choose one of {', '.join(LAYERS)}")


def centre_directions(count: int) -> np.ndarray:
    """``count`` seeded unit vectors u of R^2, each repeated over the 8 tokens: shape=[K, 8, 2]
    (the step eps (u, ..., u) moves the latent centre by eps u)."""
    u = proxy.unit_directions(Sampler(train.EVALUATION_SEED).spawn(CENTRE_DIRECTIONS_KEY),
                              count, (2,))
    return np.repeat(u[:, None, :], data_mod.SEQUENCE_LENGTH, axis=1)


def reading_run(spec: train.RunSpec) -> list[dict]:
    """Train one run (``spec``, its ``init`` included) and measure it under every (layer,
    space) reading: one row each, in the order of :data:`LAYERS` x :data:`SPACES`."""
    spec.validate()
    be = get_backend("torch", spec.device)
    torch = be.module
    with train.one_deterministic_thread(torch):
        fitted = train.train_and_score(spec, be)
        wall1 = time.perf_counter()
        double, indices, test = fitted.double, fitted.indices, fitted.test
        points = be.asarray(test.sequences[indices])
        directions = {"sequence": fitted.directions, "centre": centre_directions(spec.directions)}
        measured = {(layer, space): proxy.curvature_proxies(
            layer_map(double, spec.variant, layer, torch), points, be.asarray(directions[space]), torch)
            for layer in LAYERS for space in SPACES}
        curvatures = invariant.gaussian_curvatures(double, spec.variant,
                                                   be.asarray(test.centres[indices]), be)
        wall2 = time.perf_counter()
    invariant_row = {}
    for name in ["iso"] + [f"aniso_{c}" for c in proxy.CONDITIONS]:
        finite = curvatures[name][np.isfinite(curvatures[name])]
        invariant_row[f"K_{name}_abs_median"] = float(np.median(np.abs(finite))) if finite.size else float("nan")
    rows = []
    for (layer, space), values in measured.items():
        row = {"init": spec.init, "layer": layer, "space": space, "task": spec.task,
               "variant": spec.variant.name, "alpha": spec.variant.alpha, "seed": spec.seed,
               "epochs": spec.epochs, "train_size": spec.train_size, "test_size": spec.test_size,
               "centres": len(indices), "directions": spec.directions,
               "accuracy": fitted.accuracy, "final_train_loss": fitted.loss}
        row.update({f"proxy_{name}": float(np.mean(v)) for name, v in values.items()})
        row.update(invariant_row)
        row.update({"train_seconds": round(fitted.train_seconds, 3),
                    "eval_seconds": round(wall2 - wall1, 3),
                    "device": spec.device})
        rows.append(row)
    return rows


@dataclass(frozen=True)
class ReadingsConfig:
    """The runs behind ``readings.csv``: the gated curved-task runs at every alpha, seed and
    initialisation (GEC A.5 sizes by default; smaller ones for tests)."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    epochs: int = 20
    inits: tuple[str, ...] = INITS
    workers: int = 1
    device: str = "cpu"
    train_size: int = 4000
    test_size: int = 1000
    centres: int = 256

    def specs(self) -> list[train.RunSpec]:
        if not 1 <= self.workers <= 64:
            raise BadInput(f"--workers must be between 1 and 64; got {self.workers}")
        if not 1 <= self.epochs <= 1000:
            raise BadInput(f"--epochs must be between 1 and 1000; got {self.epochs}")
        specs = [train.RunSpec("curved", model.Variant("gated", alpha), seed, epochs=self.epochs,
                               train_size=self.train_size, test_size=self.test_size,
                               centres=self.centres, device=self.device, init=init)
                 for init in self.inits for alpha in model.ALPHAS for seed in self.seeds]
        for spec in specs:
            spec.validate()
        return specs


def readings_config(seeds: str, epochs: int, workers: int, inits: Iterable[str], device: str) -> ReadingsConfig:
    """The configuration of ``attngeom experiment gec-readings`` (BadInput for nonsense)."""
    inits = tuple(dict.fromkeys(inits)) or INITS
    config = ReadingsConfig(seeds=parse_seeds(seeds), epochs=epochs, inits=inits,
                            workers=workers, device=device)
    config.specs()
    return config


def run_readings(config: ReadingsConfig, progress=None, executor: Executor | None = None) -> list[dict]:
    """Every run of ``config`` on ``executor`` (default ``config.workers`` local processes):
    the rows of ``readings.csv`` in spec order."""
    specs = config.specs()
    if executor is None:
        with make_executor(workers=config.workers) as own:
            return run_readings(config, progress, own)
    results = executor.map(reading_run, specs, label="GEC reading runs", progress=progress,
                           names=[f"{s.init}/{s.variant.label}/seed {s.seed}" for s in specs])
    return [row for rows in results for row in rows]


def rows_of_reading(rows: list[dict], init: str, layer: str, space: str) -> list[dict]:
    """The rows of one reading."""
    return [r for r in rows if (r.get("init"), r.get("layer"), r.get("space")) == (init, layer, space)]


def is_readings_table(rows: list[dict]) -> bool:
    """Whether ``rows`` are readings rows (init, layer, space columns) or results rows."""
    return bool(rows) and {"init", "layer", "space"} <= set(rows[0])


def readings_present(rows: list[dict]) -> list[tuple[str, str, str]]:
    """The (init, layer, space) readings of a readings table, in the canonical order."""
    have = {(r["init"], r["layer"], r["space"]) for r in rows}
    order = [(i, l, s) for i in INITS for l in LAYERS for s in SPACES]
    unknown = have - set(order)
    if unknown:
        raise BadInput(f"unknown readings in the table: {sorted(unknown)}")
    return [k for k in order if k in have]


def write(rows: list[dict], path: Path) -> Path:
    from attngeom.geometry_proofs.gating.experiment.runner import write_csv
    return write_csv(rows, path)

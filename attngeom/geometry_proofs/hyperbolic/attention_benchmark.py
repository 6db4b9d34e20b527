"""Timing of the RGT attention kernels in matrix-product (Gram) form against Euclidean
attention (issue 26; RGT Prop 9.3 / Table 1), in one process, on one backend / device.

Implementations (all from :mod:`attngeom.geometry_proofs.hyperbolic.accelerated.gram`, O(N^2 + N d) memory):

* ``euclidean``        softmax(q k^T / sqrt(d)) v, the baseline;
* ``geodesic``         eq (14) scores, eq (15) weights, three steps of Algorithm 1 (eta = 1)
  from the tangent mean at the origin (eq 16);
* ``geodesic_bound``   the same with the step-size rule eta_i = 2 / (1 + L_i)
  (:func:`~attngeom.geometry_proofs.hyperbolic.accelerated.gram.frechet_steps`);
* ``algorithm3``       Algorithm 3 as printed (key-value scores in T_{q_i});
* ``algorithm3_query`` its query-dependent variant (eq 14 scores, aggregation in T_{q_i});
* ``tangent_origin``   tangent attention in T_0 (the "optimized" column of Table 1);
* ``einstein``         eq (14)-(15) on the Poincare ball, Einstein midpoint of the values;
* ``lorentz``          the same on the Lorentz model: one Minkowski Gram matrix for the
  distances, the Einstein midpoint as a projected weighted sum (inputs on L_c^d, mapped from
  the ball before timing).

Every figure is the best (and the median) of ``repeats`` timed runs after one warm-up run,
the implementations interleaved round-robin so load from other processes hits all alike;
the ratios divide best times measured in the same round-robin, in wall-clock time and, on
the CPU, in process CPU time (``*_cpu_time``: robust on a shared machine; run with one
BLAS / torch thread so that CPU time is the kernel's time).  On JAX every
implementation, the baseline included, is ``jax.jit``-compiled.  Inputs: seeded points
within distance ``radius`` of the origin (:func:`attngeom.geometry_proofs.hyperbolic.cost.inputs`).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterable

import numpy as np

from attngeom.geometry_proofs.hyperbolic import attention, frechet, lorentz, poincare

from attngeom.geometry_proofs.hyperbolic.accelerated import gram
from attngeom.kernels.allocator import NOT_KEPT_NOTE, keep_freed_memory
from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler

#: name -> the Gram-form kernel, called as f(q, k, v, c) (Lorentz: points on L_c^d).
IMPLEMENTATIONS: dict[str, Callable] = {
    "euclidean": lambda q, k, v, c: gram.euclidean_attention(q, k, v),
    "geodesic": lambda q, k, v, c: gram.geodesic_attention(q, k, v, c, steps=3),
    "geodesic_bound": lambda q, k, v, c: gram.geodesic_attention(q, k, v, c, steps=3, eta=gram.STEP_RULE),
    "algorithm3": gram.tangent_attention_printed,
    "algorithm3_query": gram.tangent_attention_query,
    "tangent_origin": gram.tangent_attention_origin,
    "einstein": gram.einstein_attention,
    "lorentz": gram.lorentz_attention,
}

#: issue 26's targets: time over Euclidean attention's at N = 128 ... 1024, d = 64.
TARGETS = {"geodesic": 10.0, "tangent_origin": 2.0, "lorentz": 2.0}

#: the share of the memory (physical, or the CUDA device's) a run may plan to use.
MEMORY_SHARE = 0.5


@dataclass(frozen=True)
class BenchmarkConfig:
    """Sizes and setting of one run."""

    sizes: tuple = (128, 256, 512, 1024)
    dim: int = 64
    backend: str = "numpy"
    device: str = "cpu"
    repeats: int = 5
    curvature: float = 1.0
    radius: float = 1.0
    seed: int = 0
    check: bool = True
    cuda_graphs: bool = False
    compiled: bool = False

    def planned_bytes(self) -> int:
        """float64 bytes alive at once, an upper estimate: about 16 [N, N] pair arrays
        (the log coefficients of Algorithm 1 and Algorithm 3) and 24 [N, d + 1] arrays."""
        n = max(self.sizes)
        return 8 * (16 * n * n + 24 * n * (self.dim + 1))

    def validate(self, memory_bytes: int | None = None) -> None:
        """BadInput (one line) for sizes that make no sense or would not fit in
        ``MEMORY_SHARE`` of ``memory_bytes`` (a CUDA device's) or of physical memory."""
        if not self.sizes or min(self.sizes) < 1:
            raise BadInput(f"--n must be at least 1; got {','.join(map(str, self.sizes)) or 'nothing'}")
        if self.dim < 1:
            raise BadInput(f"--d must be at least 1; got {self.dim}")
        if self.repeats < 1:
            raise BadInput(f"--repeats must be at least 1; got {self.repeats}")
        if not (self.curvature > 0 and math.isfinite(self.curvature)):
            raise BadInput(f"the curvature c must be > 0; got {self.curvature}")
        if not self.radius > 0:
            raise BadInput(f"--radius must be > 0; got {self.radius}")
        limit = MEMORY_SHARE * (memory_bytes or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        if self.planned_bytes() > limit:
            raise BadInput(f"N = {max(self.sizes)}, d = {self.dim} would need about "
                           f"{self.planned_bytes() / 2**30:,.1f} GiB (limit {limit / 2**30:,.1f} GiB); "
                           f"choose a smaller --n")


def sample_inputs(config: BenchmarkConfig, n: int) -> list[np.ndarray]:
    """Queries, keys, values on the ball (NumPy, [n, d] each), within ``radius`` of 0."""
    sampler = Sampler(config.seed)
    return [poincare.random_points(sampler.spawn(k), (n, config.dim), config.curvature, config.radius)
            for k in range(3)]


def elementwise_reference(name: str, q, k, v, c):
    """The element-wise (Mobius over [n, m, d]) evaluation of implementation ``name`` on
    the ball (NumPy), the reference the Gram forms agree with (Lorentz: mapped to L_c^d)."""
    if name == "euclidean":
        return attention.euclidean_attention(q, k, v)
    if name == "geodesic":
        return attention.geodesic_attention(q, k, v, c, steps=3)
    if name == "geodesic_bound":
        alpha = attention.softmax(attention.geodesic_scores(q, k, c))
        p = poincare.exp_map0(alpha @ poincare.log_map0(v, c), c)
        for _ in range(3):
            step = 2 / (1 + frechet.hessian_bound(p, v[None], alpha, c))
            p = poincare.exp_map(p, step[:, None] * frechet.tangent_mean(p, v[None], alpha, c), c)
        return p
    if name == "algorithm3":
        return attention.tangent_attention_printed(q, k, v, c)
    if name == "algorithm3_query":
        return attention.tangent_attention_query(q, k, v, c)
    if name == "tangent_origin":
        return attention.tangent_attention_origin(q, k, v, c)
    mean = frechet.einstein_midpoint(v[None], attention.softmax(attention.geodesic_scores(q, k, c)), c)
    return lorentz.from_ball(mean, c) if name == "lorentz" else mean


def _inputs_for(name, ball, hyperboloid):
    return hyperboloid if name == "lorentz" else ball


def run_benchmark(config: BenchmarkConfig,
                  progress: Callable[..., Iterable] = lambda items, **_: items) -> dict:
    """Time every implementation at every N of ``config``; return plain data.

    Returns
    -------
    dict with ``config``, ``device_label``, ``targets`` and ``rows``: one per N with
    ``seconds`` (name -> best and median, wall clock and process CPU time), ``ratios``
    (name -> best time over Euclidean attention's best), ``targets_met`` (name -> bool), on
    the CPU also ``ratios_cpu_time`` and ``targets_met_cpu_time`` (the same in CPU time),
    and, when ``check``,
    ``agreement`` at the smallest N (name -> max |Gram - element-wise|).
    """
    config.validate()
    be = get_backend(config.backend, config.device)
    if be.memory_bytes:
        config.validate(be.memory_bytes)
    c = float(config.curvature)
    kernels = dict(IMPLEMENTATIONS)
    if be.name == "jax":
        jax = be.library
        kernels = {name: jax.jit(lambda q, k, v, f=f: f(q, k, v, c)) for name, f in kernels.items()}
    else:
        kernels = {name: (lambda q, k, v, f=f: f(q, k, v, c)) for name, f in kernels.items()}
    rows = []
    heap_kept = keep_freed_memory()       # no job pays for another's page faults
    for n in progress(list(config.sizes), label="timing sizes", length=len(config.sizes)):
        ball = [be.asarray(a) for a in sample_inputs(config, n)]
        hyperboloid = [lorentz.from_ball(a, c) for a in ball]
        runs, cpu_runs = _round_robin(kernels, be, ball, hyperboloid, config.repeats)
        seconds = {name: {"best_s": min(runs[name]), "median_s": float(np.median(runs[name])),
                          "cpu_best_s": min(cpu_runs[name]),
                          "cpu_median_s": float(np.median(cpu_runs[name]))} for name in kernels}
        rows.append(_row(n, config, seconds))
    report = {"config": asdict(config), "device_label": be.label, "heap_kept": heap_kept,
              "targets": dict(TARGETS), "rows": rows}
    if config.check:
        report["agreement"] = agreement(config, be, kernels, min(config.sizes))
    # every kernel replayed from CUDA graphs (torch-cuda; launch-bound there) or compiled by
    # torch.compile (torch), against the same of Euclidean attention and its eager form:
    # timed_section
    for part, wanted in (("cuda_graphs", config.cuda_graphs), ("torch_compile", config.compiled)):
        if wanted:
            report[part] = timed_section(config, be, kernels, rows, part)
    return report


def _round_robin(kernels: dict, be, ball, hyperboloid, repeats: int) -> tuple[dict, dict]:
    """Wall-clock and process CPU times (``time.process_time``) of ``repeats`` runs of every
    kernel after one warm-up, the kernels interleaved round-robin; name -> list each."""
    runs = {name: [] for name in kernels}
    cpu_runs = {name: [] for name in kernels}
    for rep in range(repeats + 1):
        for name, kernel in kernels.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            be.synchronize(kernel(*_inputs_for(name, ball, hyperboloid)))
            if rep:
                runs[name].append(time.perf_counter() - start)
                cpu_runs[name].append(time.process_time() - cpu_start)
    return runs, cpu_runs


def _row(n: int, config: BenchmarkConfig, seconds: dict) -> dict:
    """One row of the report: best-time ratios over Euclidean attention, wall clock
    (``ratios``) and, on the CPU, process CPU time (``ratios_cpu_time``: the work done,
    whatever else the machine runs; on a shared machine wall-clock ratios move 2x between
    runs, CPU-time ratios a few percent), and the targets judged on each."""
    names = [name for name in seconds if name != "euclidean"]
    row = {"N": n, "d": config.dim, "seconds": seconds}
    for suffix, key in (("", "best_s"), ("_cpu_time", "cpu_best_s")):
        if suffix and config.device != "cpu":
            continue
        ratios = {name: seconds[name][key] / seconds["euclidean"][key] for name in names}
        row["ratios" + suffix] = ratios
        row["targets_met" + suffix] = {name: ratios[name] <= target for name, target in TARGETS.items()}
    return row


def agreement(config: BenchmarkConfig, be, kernels: dict, n: int) -> dict[str, float]:
    """max |Gram form - element-wise form| of every implementation at N = n (float64)."""
    c = float(config.curvature)
    q, k, v = sample_inputs(config, n)
    ball = [be.asarray(a) for a in (q, k, v)]
    hyperboloid = [lorentz.from_ball(a, c) for a in ball]
    out = {}
    for name, kernel in kernels.items():
        fast = be.to_numpy(kernel(*_inputs_for(name, ball, hyperboloid)))
        out[name] = float(np.max(np.abs(fast - elementwise_reference(name, q, k, v, c))))
    return out


#: Why jax on the CPU is reported in wall-clock time (its ``ratios_cpu_time`` stay in the
#: JSON): measured with jax 0.10.2 on the 2-core machine (2026-11-27, threads planned to 1,
#: ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false``), the process CPU time of a jitted
#: softmax(Q K^T / 8) V at N = 1024 is not a count of its work: best-of-20 readings of one
#: call ranged 0.75-3.3 ms from one process to the next against 1.65-1.87 ms wall, and 1,500
#: calls took 5.9 s of CPU in 4.0 s wall (2,048: 3.9 s in 4.1 s), time XLA's runtime
#: threads spend around a call, not arithmetic.
JAX_WALL_CLOCK_NOTE = ("jax: wall-clock ratios (the process CPU time of a jax call also "
                       "counts XLA's runtime threads: not a reliable count of the work)")


def _judged_in_cpu_time(config: dict) -> bool:
    """Whether the printed ratios are process CPU time (the CPU, not jax) or wall clock."""
    return config["device"] == "cpu" and config["backend"] != "jax"


def format_report(report: dict) -> str:
    """A table of ratios over Euclidean attention (what ``attngeom benchmark
    hyperbolic-attention`` prints)."""
    config = report["config"]
    names = [name for name in IMPLEMENTATIONS if name != "euclidean"]
    cpu = _judged_in_cpu_time(config)
    suffix, key = ("_cpu_time", "cpu_best_s") if cpu else ("", "best_s")
    lines = [f"RGT attention in Gram form, d={config['dim']}, c={config['curvature']:g}, "
             f"radius {config['radius']:g}, {report['device_label']} "
             f"({'process CPU' if cpu else 'wall-clock'} time / Euclidean attention's, best of "
             f"{config['repeats']}; * = issue 26's target met)",
             f"  {'N':>6} {'euclidean':>12} " + " ".join(f"{name:>16}" for name in names)]
    for row in report["rows"]:
        met, ratios = row["targets_met" + suffix], row["ratios" + suffix]
        cells = [f"{ratios[name]:15.2f}" + _mark(met, name) for name in names]
        lines.append(f"  {row['N']:>6} {row['seconds']['euclidean'][key] * 1e3:9.3f} ms "
                     + " ".join(cells))
    lines.append("  targets: " + ", ".join(f"{name} <= {target:g}x" for name, target in report["targets"].items()))
    if config["device"] == "cpu" and not cpu:
        lines.append("  " + JAX_WALL_CLOCK_NOTE)
    if not report.get("heap_kept", True):
        lines.append("  " + NOT_KEPT_NOTE)
    if "agreement" in report:
        worst = max(report["agreement"].values())
        lines.append(f"  Gram vs element-wise forms at N={min(config['sizes'])}: max |diff| {worst:.2e}")
    for part, label, header in (("cuda_graphs", "graphed", "CUDA graphs"),
                                ("torch_compile", "compiled", "torch.compile")):
        if part in report:
            lines += _part_lines(report, part, label, header, names)
    return "\n".join(lines)


def _part_lines(report: dict, part: str, label: str, header: str, names: list) -> list[str]:
    """The table of a ``cuda_graphs`` or ``torch_compile`` part: time over the same form of
    Euclidean attention's, eager Euclidean in brackets."""
    section = report[part]
    lines = [f"  {header}: " + (label if section[label] else
                                f"NOT {label} (fallbacks: {section['stats']['fallbacks'] or 'not applicable'})")
             + f"; {label} vs eager max |diff| {max(section['agreement_with_eager'].values()):.2e}; "
             f"time / {label} Euclidean attention's (eager Euclidean in brackets; * / ! = "
             "issue 26's target met / missed against eager Euclidean)"]
    key = "cpu_best_s" if report["config"]["device"] == "cpu" else "best_s"
    names = [name for name in names if name in report["rows"][0][part]["ratios_over_euclidean"]]
    lines.append(f"  {'N':>6} {'euclidean':>12} " + " ".join(f"{name:>16}" for name in names))
    for row in report["rows"]:
        cells = row[part]
        lines.append(f"  {row['N']:>6} {cells['seconds']['euclidean'][key] * 1e3:9.3f} ms " + " ".join(
            f"{cells[f'ratios_over_euclidean_{label}'][name]:7.2f} ({cells['ratios_over_euclidean'][name]:6.2f})".rjust(15)
            + _mark(cells["targets_met_over_euclidean"], name) for name in names))
    return lines


def _mark(met: dict, name: str) -> str:
    """``*`` where a kernel meets its target, ``!`` where it misses, a blank without one."""
    return ("*" if met[name] else "!") if name in met else " "


def timed_section(config, be, kernels: dict, rows: list, part_name: str) -> dict:
    """Time every kernel of ``kernels`` (name -> f(q, k, v), the benchmark's) run as
    :data:`PARTS` ``[part_name]`` says (replayed from CUDA graphs, or compiled) at every N
    of ``rows``, round-robin with eager Euclidean attention (the first round captures or
    compiles, untimed); add to each row ``part_name`` = {seconds,
    ratios_over_euclidean_<label>, ratios_over_euclidean (eager), targets_met_over_...}, the
    ratios of best wall-clock times on CUDA and of best process CPU times on the CPU;
    return the report's ``part_name`` part (the kernels with a target only, when the part
    says so): ``<label>`` (engaged, no fallback),
    ``applicable``, the runner's counters and fallback reasons, and max |fast - eager| per
    kernel at the smallest N (must be <= 1e-12 in float64)."""
    from attngeom.geometry_proofs.hyperbolic.accelerated.graphs import PARTS
    part = PARTS[part_name]
    label = part.label
    c = float(config.curvature)
    part.runner.clear()
    part.runner.reset_stats()
    if part.only_targets:
        kernels = {name: kernel for name, kernel in kernels.items() if name == "euclidean" or name in TARGETS}
    fast = {name: part.wrap(name, kernel, c, be) for name, kernel in kernels.items()}
    timed = dict(fast)
    timed["euclidean_eager"] = kernels["euclidean"]
    try:
        for row in rows:
            ball = [be.asarray(a) for a in sample_inputs(config, row["N"])]
            hyperboloid = [lorentz.from_ball(a, c) for a in ball]
            runs = {name: [] for name in timed}
            cpu_runs = {name: [] for name in timed}
            for rep in range(config.repeats + 1):          # the first round captures / compiles
                for name, kernel in timed.items():
                    start, cpu_start = time.perf_counter(), time.process_time()
                    be.synchronize(kernel(*_inputs_for(name, ball, hyperboloid)))
                    if rep:
                        runs[name].append(time.perf_counter() - start)
                        cpu_runs[name].append(time.process_time() - cpu_start)
            seconds = {name: {"best_s": min(runs[name]), "median_s": float(np.median(runs[name])),
                              "cpu_best_s": min(cpu_runs[name])} for name in timed}
            # on the CPU the ratios are of process CPU time, as the eager table's
            best = {name: seconds[name]["cpu_best_s" if be.device == "cpu" else "best_s"]
                    for name in timed}
            names = [name for name in fast if name != "euclidean"]
            over_fast = {name: best[name] / best["euclidean"] for name in names}
            over_eager = {name: best[name] / best["euclidean_eager"] for name in names}
            row[part_name] = {
                "seconds": seconds,
                f"ratios_over_euclidean_{label}": over_fast,
                "ratios_over_euclidean": over_eager,
                f"targets_met_over_euclidean_{label}": {n: over_fast[n] <= t for n, t in TARGETS.items()},
                "targets_met_over_euclidean": {n: over_eager[n] <= t for n, t in TARGETS.items()}}
            if part.clear_each_size:
                part.runner.clear()                        # one N's graphs at a time
        counters = part.runner.stats()
        n = min(config.sizes)
        ball = [be.asarray(a) for a in sample_inputs(config, n)]
        hyperboloid = [lorentz.from_ball(a, c) for a in ball]
        agreement = {}
        for name, kernel in kernels.items():
            inputs = _inputs_for(name, ball, hyperboloid)
            fast[name](*inputs)                            # capture / compile, then compare
            agreement[name] = float(np.max(np.abs(be.to_numpy(fast[name](*inputs))
                                                  - be.to_numpy(kernel(*inputs)))))
    finally:
        part.runner.clear()
    return {label: part.engaged(counters), "applicable": part.applies(be), "stats": counters,
            "agreement_with_eager": agreement}

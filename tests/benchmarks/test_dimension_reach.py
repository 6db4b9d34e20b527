"""How far HMK's dimension experiment reaches in a minute (issue 6), on each device.

Run on purpose:

    python3 -m pytest -m benchmark tests/benchmarks/test_dimension_reach.py -s      # cpu
    python3 -m pytest -m "benchmark and gpu" tests/benchmarks/test_dimension_reach.py -s

For l = 2, 3, 4 layers (t = 3, a_i = 2, d_0 = ... = d_l = delta, HMK Figure 3's setting
widened) delta grows through DELTAS; each point measures the Jacobian rank of both networks
of Figure 3 at one seeded random point:

* softmax: float64 rank at N = 250 inputs with the singular-value rule, on the backend and
  device under test, against eq (16);
* lightning: on the cpu the exact rank over F_p (python-flint; it has no GPU path), on
  CUDA the float64 rank like softmax; against the corrected eq (14) (eq (16) - l).

A sweep stops at the first delta that took longer than BUDGET seconds, or whose time,
extrapolated from the two previous points as a power of delta, would exceed 1.5 BUDGET, or
that the size guard refuses (exit-2 territory on the CLI), or whose float64 spectrum has
no clear singular-value gap, or whose rank equals the formula but is not certified (the
symmetry bound is not resolved, or the symmetries miss the kernel by more than 1e-10 in
float64): the rank is then not decided -- float64 has run out of digits, not the formula.
The reach reported is the largest delta measured within BUDGET with the rank right
(= formula and certified by the symmetry bound).  The table is printed and saved as JSON
(``ATTNGEOM_BENCH_DIR``).  The only assertion is that no point with a clear gap measures a
rank other than the formula: a reach is a measurement, not a target.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from pathlib import Path

import pytest

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler
from attngeom.lightning_alg.hmk.dimension import (Architecture, deep_dimension_corrected, measure_exact,
                                     measure_numeric, softmax_dimension_printed)

pytestmark = pytest.mark.benchmark

BUDGET = float(os.environ.get("ATTNGEOM_REACH_SECONDS", 60))
LAYERS = (2, 3, 4)
DELTAS = (4, 8, 12, 16, 24, 32, 48, 64, 96, 128)
T, A = 3, 2
OUT_DIR = Path(os.environ.get("ATTNGEOM_BENCH_DIR", Path(__file__).parent / "results"))


def _predicted(points: list[tuple[int, float]], delta: int) -> float:
    """Time at ``delta`` extrapolated as c delta^k from the last two points (k in [2, 6])."""
    if len(points) < 2:
        return 0.0
    (d1, t1), (d2, t2) = points[-2:]
    k = min(6.0, max(2.0, math.log(max(t2, 1e-3) / max(t1, 1e-3)) / math.log(d2 / d1)))
    return t2 * (delta / d2) ** k


def _measure(sweep: str, layers: int, delta: int, backend: str, device: str) -> dict:
    light = Architecture((delta,) * (layers + 1), (A,) * layers, T)
    arch = Architecture(light.d, light.a, T, softmax=(sweep == "softmax"))
    sampler = Sampler(0).spawn(layers).spawn(delta)
    start = time.perf_counter()
    if sweep == "lightning" and device == "cpu":
        m = measure_exact(arch, sampler)
    else:
        m = measure_numeric(arch, sampler, None, backend, device)
    seconds = time.perf_counter() - start
    formula = (softmax_dimension_printed(arch, delta) if sweep == "softmax"
               else deep_dimension_corrected(light, delta))
    return {"sweep": sweep, "layers": layers, "delta": delta, "parameters": arch.parameters,
            "method": m.method, "rows": m.rows, "measured_rank": m.rank, "formula": formula,
            "certified": m.certified, "right": m.certified and m.rank == formula,
            "upper_bound": m.upper_bound, "symmetries_in_kernel_residual": m.kernel_residual,
            "gap_clear": m.numerical is None or m.numerical.clear,
            "sigma_kept_min_relative": m.numerical and m.numerical.kept_min,
            "seconds": round(seconds, 3)}


def _verdict(row: dict) -> str:
    if row["right"]:
        return "right" if row["gap_clear"] else (
            f"right: certified by the symmetry bound, though float64 shows no clear gap "
            f"(smallest kept sigma/sigma_1 {row['sigma_kept_min_relative']:.1e})")
    if not row["gap_clear"]:
        return f"no clear gap: smallest kept sigma/sigma_1 {row['sigma_kept_min_relative']:.1e}"
    if row["measured_rank"] != row["formula"]:
        return "WRONG"
    if not row["certified"]:
        residual = row["symmetries_in_kernel_residual"]
        return (f"= formula, not certified: symmetry bound {row['upper_bound']}, kernel "
                f"residual {'-' if residual is None else f'{residual:.1e}'}")
    return "right"


def reach(backend: str, device: str) -> list[dict]:
    rows = []
    for sweep in ("softmax", "lightning"):
        for layers in LAYERS:
            done: list[tuple[int, float]] = []
            for delta in DELTAS:
                guess = _predicted(done, delta)
                if guess > 1.5 * BUDGET:
                    rows.append({"sweep": sweep, "layers": layers, "delta": delta,
                                 "stopped": f"predicted {guess:.0f} s"})
                    break
                try:
                    row = _measure(sweep, layers, delta, backend, device)
                except BadInput as refused:
                    rows.append({"sweep": sweep, "layers": layers, "delta": delta,
                                 "stopped": f"refused: {refused}"})
                    break
                rows.append(row)
                verdict = _verdict(row)
                print(f"  {sweep:9} l={layers} delta={delta:>3}  P={row['parameters']:>6}  "
                      f"rank {row['measured_rank']:>6} (formula {row['formula']:>6}, "
                      f"{verdict})  {row['seconds']:8.2f} s", flush=True)
                done.append((delta, row["seconds"]))
                if row["seconds"] > BUDGET or not row["right"]:
                    break
    return rows


def summary(rows: list[dict]) -> list[dict]:
    """Per (sweep, l): the largest delta measured right within BUDGET seconds."""
    out = []
    for sweep in ("softmax", "lightning"):
        for layers in LAYERS:
            ok = [r for r in rows if r["sweep"] == sweep and r["layers"] == layers
                  and "seconds" in r and r["seconds"] <= BUDGET and r["right"]]
            best = max(ok, key=lambda r: r["delta"]) if ok else None
            out.append({"sweep": sweep, "layers": layers,
                        "delta_in_budget": best and best["delta"],
                        "parameters": best and best["parameters"],
                        "seconds": best and best["seconds"]})
    return out


def _run(backend: str, device: str) -> None:
    print(f"\nHMK dimension reach on {backend}-{device}, {BUDGET:.0f} s per point")
    rows = reach(backend, device)
    table = summary(rows)
    for s in table:
        print(f"  {s['sweep']:9} l={s['layers']}: delta {s['delta_in_budget']} "
              f"(P = {s['parameters']}, {s['seconds']} s)")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / f"dimension-reach-{backend}-{device}-{platform.node()}.json").write_text(
        json.dumps({"budget_seconds": BUDGET, "points": rows, "reach": table}, indent=1))
    wrong = [r for r in rows if r.get("gap_clear") and r["measured_rank"] != r["formula"]]
    assert not wrong, wrong


def test_reach_on_the_cpu():
    _run("numpy", "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_reach_on_cuda(backend):
    _run(backend, "cuda")

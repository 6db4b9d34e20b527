"""Benchmark of the thread rule (issue 17, item 1): a busy core costs at most 1.5x.

In ONE process: time a command on the machine as it is ("idle"), then start a second
process that keeps one core busy (a spin loop), time the same command again ("busy"), and,
for comparison, once more with the BLAS / OpenMP / torch threads forced to the machine's
core count (the behaviour before :mod:`attngeom.kernels.threads`: OpenBLAS's default); then stop
the spinner.  Each timed run first applies the plan as the CLI does for every command
(``attngeom.kernels.threads.configure``, which measures the free cores when large work arrives),
then calls the library function behind the command; imports and first calls are warmed
up before.  Asserted: busy / idle <= 1.5, in wall time and in CPU time, for

* ``attngeom dimension --figure3`` (``figure3_rows``, both sweeps, delta = 3..10);
* ``attngeom ideal --d 3 --t 2 --a 3`` (ADM Example 36, to degree 4, every family
  attributed, as the CLI's default ``--families all``).

The "idle" run is only as idle as the machine: the cores other processes kept busy during
each run are recorded (``others_busy_cores``, from /proc/stat), and the comparison is
skipped, its figures recorded, when they used more than half a core beyond the spinner.
The CPU-time ratio is asserted on any machine: threads that wait for a busy core spin and
show as CPU time that grows with the load, while a run that only gets a smaller share of
a crowded machine keeps its CPU time.
A third test records the threshold of the rule: SVDs around ``LARGE_WORK`` with one thread
and with every core.  Figures go to ``$ATTNGEOM_BENCH_DIR/threads.json`` (default
tests/benchmarks/results).  Run with

    pytest -m benchmark tests/benchmarks/test_threads_bench.py -s
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attngeom.kernels import threads
from attngeom.core.claim import CheckContext

pytestmark = pytest.mark.benchmark

MAX_RATIO = 1.5
REPEATS = 2                      # idle and busy: the fastest of at least two runs,
MIN_SECONDS = 2.0                # and of as many more as fit in this time (short commands)
MAX_REPEATS = 10
SETTLE_SECONDS = 0.5             # the spinner reaches full speed before a timed run
NOT_IDLE = 0.5                   # cores other processes may use before "idle" means nothing
OUT = Path(os.environ.get("ATTNGEOM_BENCH_DIR", "tests/benchmarks/results")) / "threads.json"


def _save(name: str, figures: dict) -> None:
    """Add (or replace) the figures of ``name`` in threads.json."""
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[name] = figures
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1, default=str))


def _figure3():
    from attngeom.lightning_alg.hmk.figure3 import figure3_rows, rows_are_right
    assert rows_are_right(figure3_rows(CheckContext(seed=0)))


def _ideal_example_36():
    from attngeom.lightning_alg.claims import family_claims
    from attngeom.lightning_alg.ideal.report import compute_ideal
    report, _ = compute_ideal(3, 2, 3, max_degree=4, families=family_claims("all"), seed=0,
                              context=CheckContext(seed=0))
    assert report.to_json()["minimal_generators"] == {"1": 10, "3": 20, "4": 90}


def _timed(run, option: str, repeats: int) -> dict:
    """The fastest of ``repeats`` runs (more while they take under MIN_SECONDS in all), each
    after applying the plan of ``--threads option`` as the CLI does; with the cores other
    processes kept busy meanwhile (the largest)."""
    best, cpu, others, count, begin = float("inf"), float("inf"), 0.0, 0, time.perf_counter()
    while count < repeats or (time.perf_counter() - begin < MIN_SECONDS
                              and count < MAX_REPEATS):
        count += 1
        plan = threads.configure(option)
        snapshot = threads.cpu_snapshot()
        start, cpu_start = time.perf_counter(), time.process_time()
        run()
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - cpu_start)
        others = max(others, threads.busy_since(snapshot) or 0.0)
    return {"seconds": round(best, 3), "cpu_seconds": round(cpu, 3), "runs": count,
            "others_busy_cores": round(others, 2), "plan": plan.describe()}


def _spinner() -> subprocess.Popen:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(SETTLE_SECONDS)
    return spinner


def _measure(name: str, run) -> dict:
    """Idle, busy (a spinner beside) and busy with every core forced, in this process;
    skipped, figures recorded, when other processes kept the machine from being idle."""
    cores = threads.usable_cores()
    with threads.restoring():
        threads.configure("1")
        run()                                                   # imports and first calls
        idle = _timed(run, "auto", REPEATS)
        spinner = _spinner()
        try:
            busy = _timed(run, "auto", REPEATS)
            forced = _timed(run, str(cores), 1)
        finally:
            spinner.terminate()
            spinner.wait()
    row = {"usable_cores": cores, "idle": idle, "busy": busy, "busy_forced_all_cores": forced,
           "busy_over_idle": round(busy["seconds"] / idle["seconds"], 3),
           "forced_over_idle": round(forced["seconds"] / idle["seconds"], 3),
           "cpu_busy_over_idle": round(busy["cpu_seconds"] / idle["cpu_seconds"], 3),
           "cpu_forced_over_idle": round(forced["cpu_seconds"] / idle["cpu_seconds"], 3),
           "date": time.strftime("%Y-%m-%d %H:%M")}
    _save(name, row)
    print(f"\n{name}: idle {idle['seconds']:.2f} s, one core busy {busy['seconds']:.2f} s "
          f"({row['busy_over_idle']:.2f}x), busy with {cores} forced threads "
          f"{forced['seconds']:.2f} s ({row['forced_over_idle']:.2f}x); CPU time "
          f"{idle['cpu_seconds']:.2f} / {busy['cpu_seconds']:.2f} / {forced['cpu_seconds']:.2f} s; "
          f"other processes used {idle['others_busy_cores']:.2f} / "
          f"{busy['others_busy_cores']:.2f} cores (idle / busy runs)")
    return row


def _check(row: dict) -> None:
    """CPU time within 1.5x on any machine (no thread waits for the busy core); wall time
    within 1.5x where the machine was idle, else skipped with the reason."""
    assert row["cpu_busy_over_idle"] <= MAX_RATIO
    idle, busy = row["idle"]["others_busy_cores"], row["busy"]["others_busy_cores"]
    if idle > NOT_IDLE or busy > 1 + NOT_IDLE:
        pytest.skip(f"the machine was not idle (other processes used {idle} cores in the idle "
                    f"run, {busy} with the spinner); figures recorded in {OUT}")
    assert row["busy_over_idle"] <= MAX_RATIO


def test_figure3_with_a_busy_core_within_1_5x_of_idle():
    _check(_measure("dimension --figure3", _figure3))


def test_ideal_example_36_with_a_busy_core_within_1_5x_of_idle():
    _check(_measure("ideal --d 3 --t 2 --a 3", _ideal_example_36))


#: SVDs around LARGE_WORK: Figure 3's largest Jacobian (delta = 10), and two larger ones.
SVD_SHAPES = ((7500, 280), (10000, 500), (2000, 2000))


def test_threads_pay_off_only_for_large_work():
    """The threshold of the rule, measured: each SVD with one thread and with every core,
    on the machine as it is (record only; what the speedup is depends on the machine)."""
    import numpy as np
    import threadpoolctl

    cores = threads.usable_cores()
    before = threads.busy_cores(0.5)
    rows = []
    for shape in SVD_SHAPES:
        matrix = np.random.default_rng(0).standard_normal(shape)
        seconds = {}
        for count in (1, cores):
            with threadpoolctl.threadpool_limits(count, user_api="blas"):
                np.linalg.svd(matrix, compute_uv=False)
                start = time.perf_counter()
                np.linalg.svd(matrix, compute_uv=False)
                seconds[count] = time.perf_counter() - start
        rows.append({"shape": list(shape), "work": threads.svd_work(shape),
                     "large": threads.svd_work(shape) >= threads.LARGE_WORK,
                     "one_thread_seconds": round(seconds[1], 4),
                     f"{cores}_threads_seconds": round(seconds[cores], 4),
                     "speedup": round(seconds[1] / seconds[cores], 3)})
        print(f"\nSVD {shape}: work {rows[-1]['work']:.1e}, 1 thread {seconds[1]:.3f} s, "
              f"{cores} threads {seconds[cores]:.3f} s (x{rows[-1]['speedup']:.2f})")
    _save("svd threshold", {"usable_cores": cores, "busy_cores_before": round(before, 2),
                            "large_work": threads.LARGE_WORK, "rows": rows,
                            "date": time.strftime("%Y-%m-%d %H:%M")})

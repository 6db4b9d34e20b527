"""Benchmarks of ``attngeom ideal`` (issue 5): absolute times against the issue's targets.

Macaulay2 1.21's ``eliminate`` on the same kind of 2-core machine took 22 s for ADM
Example 36 (d = 3, t = 2, a = 3, to degree 4) and 53 s for Example 19 (d = 3, t = 1,
a = 3, to degree 8); the targets are 2 s and 5 s, and the degree-4 table of d = 4, t = 2,
a = 4 in under 10 minutes with its peak memory reported.  Every run is seeded (seed 0)
and also checks the numbers it computes.  Run with

    pytest -m benchmark tests/benchmarks/test_ideal_bench.py -s
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attngeom.lightning_alg.claims import family_claims
from attngeom.lightning_alg.ideal.report import compute_ideal

pytestmark = pytest.mark.benchmark

MACAULAY2_SECONDS = {"example-36": 22.0, "example-19": 53.0}


def _timed(d, t, a, max_degree):
    start = time.perf_counter()
    report, _ = compute_ideal(d, t, a, max_degree=max_degree, seed=0)
    return time.perf_counter() - start, report.to_json()


def _report(name, seconds, target, extra=""):
    m2 = MACAULAY2_SECONDS.get(name)
    versus = f", {m2 / seconds:.1f}x faster than Macaulay2's {m2:.0f} s" if m2 else ""
    print(f"\n{name}: {seconds:.2f} s (target {target:.0f} s){versus}{extra}")


def test_example_36_to_degree_4_under_2_seconds():
    seconds, out = _timed(3, 2, 3, 4)
    _report("example-36", seconds, 2.0)
    assert out["minimal_generators"] == {"1": 10, "3": 20, "4": 90}
    assert seconds < 2.0


def test_example_19_to_degree_8_under_5_seconds():
    seconds, out = _timed(3, 1, 3, 8)
    _report("example-19", seconds, 5.0)
    assert out["minimal_generators"] == {"8": 35}
    assert seconds < 5.0


MEASURE_BIG = """
import json, resource, time
from attngeom.lightning_alg.ideal.report import compute_ideal
start = time.perf_counter()
report, _ = compute_ideal(4, 2, 4, max_degree=4, seed=0)
seconds = time.perf_counter() - start
out = report.to_json()
print(json.dumps({"seconds": seconds, "peak_rss_mib": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss / 1024, "minimal_generators": out["minimal_generators"],
    "dim_J_mod_linear": out["dim_J_mod_linear"], "degrees": [
        {k: row[k] for k in ("degree", "monomials", "blocks", "largest_block", "seconds")}
        for row in out["degrees"]]}))
"""


@pytest.mark.slow
def test_d4_t2_a4_degree_4_under_10_minutes():
    """In a fresh process, so that the peak resident memory is this computation's."""
    done = subprocess.run([sys.executable, "-c", MEASURE_BIG], capture_output=True, text=True,
                          timeout=1200, check=True)
    data = json.loads(done.stdout)
    _report("d4-t2-a4", data["seconds"], 600.0, f", peak memory {data['peak_rss_mib']:.0f} MiB; "
            f"minimal generators {data['minimal_generators']}")
    print(json.dumps(data["degrees"]))
    assert data["minimal_generators"]["1"] == 20
    assert data["seconds"] < 600.0


# -- issue 17: the family attribution at the cost of the ideal --------------------------------

OUT_DIR = Path(os.environ.get("ATTNGEOM_BENCH_DIR", Path(__file__).parent / "results"))
#: (d, t, a) to degree 4, and the default run's limit as a multiple of --families none.
ATTRIBUTION_POINTS = ((3, 2, 3), (4, 2, 1), (4, 2, 4))
MAX_ATTRIBUTION_RATIO = 2.0


def _best_of(repeats, d, t, a, families):
    best, report = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        report, _ = compute_ideal(d, t, a, max_degree=4, families=families, seed=0)
        best = min(best, time.perf_counter() - start)
    return best, report


def test_default_attribution_within_twice_families_none():
    """The default ``attngeom ideal`` (every registered family attributed) against
    ``--families none`` at (3,2,3), (4,2,1), (4,2,4) to degree 4, in one process: the two
    configurations alternate, best of 3 at d = 3 (a tenth of a second) and one run each at
    d = 4; ADM Example 36's imports and caches are warmed once first (the d = 4 resultant
    caches are not, as in a fresh command).  The attribution figures are checked too."""
    families = family_claims("all")
    compute_ideal(3, 2, 3, max_degree=4, families=families)
    rows = {}
    for d, t, a in ATTRIBUTION_POINTS:
        repeats = 3 if d == 3 else 1
        plain, base = _best_of(repeats, d, t, a, ())
        seconds, report = _best_of(repeats, d, t, a, families)
        attribution = report.attribution
        assert report.to_json()["degrees"][-1]["minimal_generators"] == \
            base.to_json()["degrees"][-1]["minimal_generators"]
        assert all(s["reason"].startswith("not-applicable") for s in attribution["skipped"])
        last = attribution["degrees"][-1]
        rows[f"{d},{t},{a}"] = {
            "families_none_seconds": round(plain, 3), "default_seconds": round(seconds, 3),
            "ratio": round(seconds / plain, 3), "budget": attribution["budget"],
            "unexplained_minimal": {str(x["degree"]): x["unexplained"]["minimal_generators"]
                                    for x in attribution["degrees"]},
            "all_families_degree_4": last["all_families"]}
        print(f"\n({d},{t},{a}) to degree 4: --families none {plain:.2f} s, default "
              f"{seconds:.2f} s, ratio {seconds / plain:.2f} (limit {MAX_ATTRIBUTION_RATIO})")
    assert rows["3,2,3"]["unexplained_minimal"]["4"] == 0
    assert rows["3,2,3"]["all_families_degree_4"]["new_generators"] == 90
    assert rows["4,2,4"]["unexplained_minimal"]["3"] == 200
    assert rows["4,2,4"]["unexplained_minimal"]["4"] == 400
    report = {"machine": platform.platform(), "cpus": os.cpu_count(),
              "load_average": list(os.getloadavg()), "max_ratio": MAX_ATTRIBUTION_RATIO,
              "points": rows}
    print(json.dumps(report, indent=1))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "ideal-attribution.json").write_text(json.dumps(report, indent=1))
    assert all(row["ratio"] <= MAX_ATTRIBUTION_RATIO for row in rows.values()), rows


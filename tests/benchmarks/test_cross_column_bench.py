"""Benchmarks of the cross-column and cross-row families (issue 4, first half): exact
verification at the largest sizes the issue names (d = 6, t = 4), each under a minute on
the 2-core machine, the same target the issue sets for ``veronese`` and ``resultant``.

Every run is seeded (seed 0), checks its verdict, and prints the absolute wall time, the
members evaluated one by one and their rate (members x points / second).  Run with

    pytest -m benchmark tests/benchmarks/test_cross_column_bench.py -s
"""

from __future__ import annotations

import time

import pytest

from attngeom.core.claim import CheckContext
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY

pytestmark = pytest.mark.benchmark

TARGET_SECONDS = 60.0

CASES = [
    ("cross-cubic", {"d": 6, "t": 4, "a": 6}),
    ("low-rank", {"d": 6, "t": 4, "a": 3}),
    ("low-rank", {"d": 6, "t": 4, "a": 5}),
    ("syzygy", {"d": 6, "t": 4, "a": 6}),
    ("cross-row", {"d": 6, "t": 4, "a": 6, "dprime": 7}),
]


@pytest.mark.parametrize("claim_id,params", CASES, ids=[f"{c}-a{p['a']}" for c, p in CASES])
def test_exact_verification_at_d6_t4_under_a_minute(claim_id, params):
    claim = REGISTRY.get(claim_id)
    REGISTRY.get("linear").verify({"d": 2, "t": 2}, "exact")  # imports and first calls
    start = time.perf_counter()
    verdict = claim.verify(params, "exact", CheckContext(seed=0))
    seconds = time.perf_counter() - start
    members = verdict.evidence["parts"]["members"]
    points = members["points"]
    rate = members["members_checked"] * points / seconds
    print(f"\n{claim_id} {params}: {verdict.status.value} in {seconds:.2f} s (target "
          f"{TARGET_SECONDS:.0f} s); {members['members_checked']:,} of "
          f"{members['members_total']:,} members at {points} points, {rate:,.0f} member-points/s")
    assert verdict.status is Status.VERIFIED
    assert seconds < TARGET_SECONDS

"""attngeom.kernels.allocator: the benchmarks keep freed memory, so no job times another's
page faults (docs/gauge-attention.md, issue 26)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

#: Allocate and touch 20 MB, free it, and again: the minor page faults of both rounds.
#: glibc's default maps the first block and unmaps it when freed (raising its thresholds), so
#: the second comes from a heap grown for it (here 284 and 783 faults); with the thresholds
#: fixed, the first block already comes from the heap and the second reuses its pages (284
#: and 0).  The counts depend on the kernel's page sizes, so the test compares the rounds.
PROBE = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from attngeom.kernels.allocator import keep_freed_memory
    assert keep_freed_memory() and keep_freed_memory()     # applied once, True on glibc
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
counts = []
for _ in range(2):
    start = faults()
    block = np.ones(2_500_000); del block
    counts.append(faults() - start)
print(*counts)
"""


def _faults(mode: str) -> tuple[int, int]:
    run = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    first, second = map(int, run.stdout.split()[-2:])
    assert first > 0
    return first, second


@pytest.mark.skipif(not GLIBC, reason="mallopt thresholds are glibc's")
def test_freed_memory_is_reused_without_page_faults():
    first, second = _faults("keep")
    assert second <= first / 20, (first, second)
    first, second = _faults("default")          # the mutant: glibc's own thresholds
    assert second >= first / 2, (first, second)


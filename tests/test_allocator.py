"""attngeom.kernels.allocator: the benchmarks keep freed memory, so no job times another's
page faults (docs/gauge-attention.md, issue 26)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

#: Allocate and touch 20 MB, free it, and again: the minor page faults of both rounds.  With
#: the thresholds fixed the first block comes from the heap and the second reuses its pages
#: (here 284 and 0 faults); the mutant fixes thresholds that give every block back
#: (mmap threshold 128 KiB, trim threshold 0), so the second round faults like the first.
#: (glibc's own dynamic thresholds vary from run to run: 284 / 783 and 795 / 271 were
#: measured.)  The counts depend on the kernel's page sizes, so the test compares rounds.
PROBE = """
import ctypes, resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from attngeom.kernels.allocator import keep_freed_memory
    assert keep_freed_memory() and keep_freed_memory()     # applied once, True on glibc
else:
    libc = ctypes.CDLL("libc.so.6")
    assert libc.mallopt(-3, 128 * 1024) == 1 and libc.mallopt(-1, 0) == 1
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
    run = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    first, second = map(int, run.stdout.split()[-2:])
    assert first > 0
    return first, second


@pytest.mark.skipif(not GLIBC, reason="mallopt thresholds are glibc's")
def test_freed_memory_is_reused_without_page_faults():
    first, second = _faults("keep")
    assert second <= first / 20, (first, second)
    first, second = _faults("give_back")        # the mutant: thresholds that give memory back
    assert second >= first / 2, (first, second)


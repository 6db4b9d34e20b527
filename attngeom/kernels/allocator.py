"""Keep freed memory in the process while a benchmark times its jobs (glibc ``malloc``).

glibc hands large freed blocks back to the system: a block above the mmap threshold is
unmapped when freed, and the top of the heap is trimmed above ``M_TRIM_THRESHOLD``.  The next
allocation of that size faults its pages back in, one minor fault per 4 KiB page, and the
threshold itself moves with the sizes freed so far.  On the project's 2-core machines (a
virtual machine) a fault costs about 2.6 us, so a job's time depended on what ran before
it in the same process: at GT's size the floor's ``frame_exp`` took 7.9 ms or 18.8 ms for
the same work, and one change to the structured kernel's temporaries moved the benchmark's
(b) / floor from 2.3x to 1.5x through the floor's faults alone (2026-11-26).

:func:`keep_freed_memory` fixes the thresholds (mmap threshold 32 MiB, glibc's largest;
trim threshold 1 GiB; 64 MiB of top padding), so after the warm-up round every job reuses
memory the process already holds and its time is the work it does.  Blocks above 32 MiB
(N of several thousand) are still mapped per call.  The CPU benchmarks
(:mod:`attngeom.geometry_proofs.gauge.attention_benchmark`,
:mod:`attngeom.geometry_proofs.hyperbolic.attention_benchmark`) call it before timing and
report whether it applied; a process that calls it keeps up to 1 GiB of freed memory.
Elsewhere than glibc (musl, macOS) it does nothing and says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

#: mallopt parameters (glibc <malloc.h>).
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
#: the values set: glibc caps the mmap threshold at 32 MiB on 64-bit systems.
SETTINGS = {M_MMAP_THRESHOLD: 32 * 2 ** 20, M_TRIM_THRESHOLD: 2 ** 30, M_TOP_PAD: 64 * 2 ** 20}

#: what a benchmark report says when :func:`keep_freed_memory` could not apply.
NOT_KEPT_NOTE = "(freed memory returned to the system between jobs: its page faults are timed)"

_APPLIED: list[bool] = []


def keep_freed_memory() -> bool:
    """Fix glibc's malloc thresholds for this process (once); True when glibc took all three."""
    if not _APPLIED:
        _APPLIED.append(_apply())
    return _APPLIED[0]


def _apply() -> bool:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all(mallopt(parameter, value) == 1 for parameter, value in SETTINGS.items())

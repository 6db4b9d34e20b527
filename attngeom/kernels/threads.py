"""How many threads BLAS / OpenMP, torch and jax use: one rule, chosen in one place.

The rule (``--threads auto``, the default):

* **Small work runs on one thread.**  Everything outside large dense linear algebra runs
  with one BLAS / OpenMP / torch thread.  OpenBLAS's threads busy-wait for each other: on
  a core that another process keeps busy, a 7500 x 280 SVD took 7.8 s with two threads
  against 0.16 s with one, and ``attngeom dimension --figure3`` 13-19 s against 1-2.7 s.
* **Large dense work uses the cores that are free now.**  A dense operation of at least
  :data:`LARGE_WORK` multiply-adds (an m x n SVD or QR counts m n min(m, n); callers wrap
  it in :func:`for_work`) runs with :func:`available_cores` threads: the CPUs of this
  process's affinity mask (``os.sched_getaffinity``; capped by a cgroup v2 CPU quota),
  minus the cores other processes keep busy, measured from ``/proc/stat`` over
  :data:`WINDOW` s on the first large operation and again every :data:`REMEASURE_SECONDS`
  (a core counts as busy above :data:`BUSY_SLACK` of its time; without ``/proc/stat`` the
  1-minute load average is used; without an affinity mask, ``os.cpu_count()``).  At
  least one thread, always.  The bar is high on purpose: a second thread gains at most
  2x, while a core that becomes busy during the call costs 3-50x (an SVD of 1e9 takes
  about 0.2 s on one core); Figure 3's Jacobians (at most 7500 x 280: 5.9e8) stay on one
  thread.
* **An override fixes one count for everything**: ``attngeom --threads N`` (N >= 1 or
  ``auto``), else the environment variable ``ATTNGEOM_THREADS``; the option wins.  Any
  other value is a one-line :class:`~attngeom.core.errors.BadInput` (exit 2).

Applying a plan (:func:`configure`; the CLI does it for every command) sets the loaded BLAS
and OpenMP libraries through threadpoolctl, ``torch.set_num_threads`` when torch is loaded
(:func:`configure_torch` when :mod:`attngeom.kernels.backend` loads it later), and
``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS`` for libraries loaded
later and for child processes.  jax reads its threads once, at import: before it, one
thread is ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` (more leaves XLA's default,
which sizes its pool from the affinity mask); once jax is imported its threads are fixed
(the plan says so).  Worker processes of :mod:`attngeom.core.executor` start with one thread
each (its ``WORKER_ENVIRONMENT``).  Without an applied plan (library use) nothing changes.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from dataclasses import dataclass, field

from attngeom.core.errors import BadInput

#: The environment variable of the override (``--threads`` wins over it).
ENV_VAR = "ATTNGEOM_THREADS"
#: Multiply-adds from which a dense operation may use more than one thread.
LARGE_WORK = 1e9
#: Seconds over which /proc/stat is sampled to find busy cores.
WINDOW = 0.1
#: Fraction of a core that other processes may use before the core counts as busy.
BUSY_SLACK = 0.3
#: Seconds a measurement of the free cores is trusted; large work after that measures again.
REMEASURE_SECONDS = 10.0
#: Variables read by BLAS / OpenMP libraries when they load (and by child processes).
LIBRARY_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_EIGEN_FLAG = "--xla_cpu_multi_thread_eigen"


#: Most threads an override may ask for (BLAS and OpenMP take a C int; more threads than
#: this are no machine's cores).
MAX_THREADS = 4096

def requested_threads(option: str | None = None) -> tuple[int | None, str]:
    """The override as (N or None for the rule, where it came from): ``--threads``
    (``option``) wins over ``$ATTNGEOM_THREADS``; BadInput for anything but N >= 1 or auto."""
    for value, source in ((option, "--threads"), (os.environ.get(ENV_VAR), ENV_VAR)):
        if value is None or not str(value).strip():
            continue
        text = str(value).strip().lower()
        if text == "auto":
            return None, source
        try:
            count = int(text) if len(text) <= 6 else 0
        except ValueError:
            count = 0
        if not 1 <= count <= MAX_THREADS:
            shown = ascii(text if len(text) <= 40 else text[:37] + "...")
            raise BadInput(f"{source} must be a positive integer or 'auto' (at most "
                           f"{MAX_THREADS}); got {shown}")
        return count, source
    return None, "auto"


def usable_cores() -> int:
    """CPUs this process may run on: its affinity mask (else os.cpu_count()), capped by a
    cgroup v2 CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        quota, period = open("/sys/fs/cgroup/cpu.max").read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _cpu_ticks(cpus: set[int]) -> dict[int, tuple[int, int]] | None:
    """(busy, total) jiffies of each CPU in ``cpus`` from /proc/stat; None without it."""
    try:
        lines = open("/proc/stat").read().splitlines()
    except OSError:
        return None
    ticks = {}
    for line in lines:
        name, *values = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            numbers = [int(v) for v in values[:8]]         # user .. steal; guest is in user
            ticks[int(name[3:])] = (sum(numbers) - numbers[3] - numbers[4], sum(numbers))
    return ticks or None


def cpu_snapshot() -> tuple:
    """Where the CPUs of this process's affinity mask stand now, for :func:`busy_since`."""
    try:
        cpus = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        cpus = set(range(os.cpu_count() or 1))
    return _cpu_ticks(cpus), time.process_time(), time.perf_counter()


def busy_since(snapshot: tuple) -> float | None:
    """Cores' worth of CPU time that other processes used since ``snapshot`` (this
    process's own time is not counted); None without /proc/stat."""
    first, own, wall = snapshot
    if first is None:
        return None
    second = _cpu_ticks(set(first))
    busy = sum((second[c][0] - first[c][0]) / max(1, second[c][1] - first[c][1])
               for c in first if c in second)
    own = (time.process_time() - own) / max(1e-9, time.perf_counter() - wall)
    return max(0.0, busy - own)


def busy_cores(window: float = WINDOW) -> float:
    """Cores' worth of CPU time that other processes use, measured over ``window`` s on
    the CPUs of this process's affinity mask; the 1-minute load average where /proc/stat
    is missing, 0 where that is too."""
    snapshot = cpu_snapshot()
    if snapshot[0] is None:
        try:
            return max(0.0, os.getloadavg()[0])
        except (AttributeError, OSError):
            return 0.0
    time.sleep(window)
    return busy_since(snapshot)


def available_cores(window: float = WINDOW) -> int:
    """Usable cores minus busy ones (a core is busy above BUSY_SLACK of its time); >= 1."""
    busy = max(0, math.ceil(busy_cores(window) - BUSY_SLACK))
    return max(1, usable_cores() - busy)


@dataclass
class ThreadPlan:
    """The thread counts of one command: ``fixed`` N (the override) or the rule (None)."""

    fixed: int | None = None
    source: str = "auto"
    window: float = WINDOW
    jax: str = ""
    _available: int | None = field(default=None, repr=False)
    _measured_at: float = field(default=-math.inf, repr=False)

    @property
    def base(self) -> int:
        """Threads outside large dense work."""
        return self.fixed or 1

    def threads_for(self, work: float) -> int:
        """Threads for a dense operation of ``work`` multiply-adds (the rule above); the
        free cores are measured on the first large operation, and again on a large one
        more than REMEASURE_SECONDS later."""
        if self.fixed or work < LARGE_WORK:
            return self.base
        if time.monotonic() - self._measured_at > REMEASURE_SECONDS:
            self._available = available_cores(self.window)
            self._measured_at = time.monotonic()
        return self._available

    def describe(self) -> dict:
        return {"threads": self.fixed or "auto", "source": self.source, "base": self.base,
                "large_work_threads": self._available, "jax": self.jax}


_current: ThreadPlan | None = None


def current() -> ThreadPlan | None:
    """The plan applied last in this process (None: libraries keep their defaults)."""
    return _current


def configure(option: str | None = None, window: float = WINDOW) -> ThreadPlan:
    """Choose the plan from ``--threads`` (``option``) / $ATTNGEOM_THREADS and apply it."""
    fixed, source = requested_threads(option)
    return apply(ThreadPlan(fixed, source, window))


def apply(plan: ThreadPlan) -> ThreadPlan:
    """Set every library to ``plan.base`` threads and make ``plan`` the current one."""
    global _current
    _current = plan
    count = plan.base
    for name in LIBRARY_VARIABLES:
        os.environ[name] = str(count)
    _limit(count)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(count)
    plan.jax = _configure_jax(count)
    return plan


def configure_torch(torch) -> None:
    """Give a freshly imported torch the current plan's threads (no plan: no change)."""
    if _current is not None:
        torch.set_num_threads(_current.base)
        _limit(_current.base)                  # torch's own OpenMP runtime is loaded now


@contextlib.contextmanager
def for_work(work: float):
    """Run the block with the current plan's threads for ``work`` multiply-adds, then go
    back to the plan's base count.  No plan, or the same count: nothing changes."""
    plan = _current
    count = plan.threads_for(work) if plan is not None else None
    if count is None or count == plan.base:
        yield
        return
    import threadpoolctl
    torch = sys.modules.get("torch")
    with threadpoolctl.threadpool_limits(count):
        if torch is not None:
            torch.set_num_threads(count)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(plan.base)


@contextlib.contextmanager
def restoring():
    """Undo, after the block, every plan applied in it: the current plan, the library
    limits, torch's threads and the environment variables (for tests and notebooks)."""
    global _current
    import threadpoolctl
    saved = _current, {k: os.environ.get(k) for k in LIBRARY_VARIABLES + ("XLA_FLAGS",)}
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None
    try:
        with threadpoolctl.threadpool_limits(None):        # restores the limits on exit
            yield
    finally:
        _current = saved[0]
        for key, value in saved[1].items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if torch_threads is not None:                      # torch loaded before the block
            torch.set_num_threads(torch_threads)


def svd_work(shape) -> float:
    """Multiply-adds of an SVD or QR of a matrix of ``shape`` (m n min(m, n))."""
    m, n = (tuple(shape) + (1, 1))[:2]
    return float(m) * n * min(m, n)


def _limit(count: int) -> None:
    import threadpoolctl
    threadpoolctl.threadpool_limits(count)               # every loaded BLAS and OpenMP


def _configure_jax(count: int) -> str:
    """XLA_FLAGS for a jax not imported yet; what jax will use, in words."""
    if "jax" in sys.modules:
        return "fixed: jax was imported before the plan"
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith(_EIGEN_FLAG)]
    if count == 1:
        flags.append(f"{_EIGEN_FLAG}=false")
    if flags:
        os.environ["XLA_FLAGS"] = " ".join(flags)
    else:
        os.environ.pop("XLA_FLAGS", None)
    return "1 (XLA_FLAGS)" if count == 1 else "XLA default (the affinity mask)"

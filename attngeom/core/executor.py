"""Where independent tasks run: in this process, in local worker processes, or on a Dask
cluster, behind one interface.

``make_executor(workers, scheduler)`` picks the executor from the command line's
``--workers N`` / ``--scheduler ADDRESS``; :meth:`Executor.map` runs a top-level function
over a list of tasks and returns the results in task order::

    with make_executor(workers=2) as executor:
        rows = executor.map(partial(figure3_row, context=point), deltas,
                            names=[f"delta={d}" for d in deltas], label="HMK Figure 3",
                            progress=context.progress)

The contract every executor keeps:

* Results do not depend on the executor: a task gets nothing from where it runs (seeds
  travel in the task), and local workers compute with one BLAS / OpenMP thread
  (:data:`WORKER_ENVIRONMENT`; a Dask nanny sets the same by default), the base count of
  :mod:`attngeom.kernels.threads`.
* One progress bar over all tasks, in the progress convention of
  :class:`attngeom.core.claim.CheckContext` (``progress(iterable, label=, length=)``), advanced
  as tasks finish, in whatever order they finish.
* Failures name the task: an exception in a task, or a worker process that dies while
  running it, raises :class:`TaskFailed` (a one-line :class:`BadInput`, exit 2 in the CLI),
  and the tasks not yet started are cancelled.  A :class:`BadInput` raised by a task is
  the user's bad input and reaches the caller unchanged.
* Tasks and results travel by pickle: ``func`` must be a module-level function (or a
  ``functools.partial`` of one), importable where the task runs -- on a Dask cluster,
  every worker needs attngeom installed.
* A process runs one task at a time (:data:`_TASK_LOCK`), also on a Dask worker with
  several threads: parallelism comes from processes (``dask worker --nthreads 1``).

Local workers are started with the ``spawn`` method (torch and ``fork`` do not mix), once
per executor, and reused by every ``map`` until :meth:`Executor.close`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import socket
import sys
import threading
import traceback
import uuid
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from attngeom.core.errors import BadInput
from attngeom.kernels.threads import LIBRARY_VARIABLES

try:  # POSIX only; peak memory is reported where it can be measured
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

#: The environment a local worker process starts with: one BLAS / OpenMP (and so torch)
#: thread, so that N workers use N cores (the variables of :mod:`attngeom.kernels.threads`, read
#: when the libraries load, before any code of ours runs there); a fixed cuBLAS
#: workspace, which torch's deterministic algorithms need on CUDA.
WORKER_ENVIRONMENT = {**dict.fromkeys(LIBRARY_VARIABLES, "1"),
                      "CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
#: Seconds to wait for a Dask scheduler to answer.
CONNECT_TIMEOUT = 10
DASK_EXTRA = "pip install 'attngeom[dask]'"

Progress = Callable[..., Iterable]


class TaskFailed(BadInput):
    """A task raised, or the worker running it died; the message names the task."""

    def __init__(self, task: str, reason: str):
        super().__init__(f"task {task} failed: {reason}")
        self.task = task


def make_executor(workers: int | None = None, scheduler: str | None = None) -> "Executor":
    """The executor of ``--workers N`` / ``--scheduler ADDRESS``.

    Neither, or ``workers=1``: this process, one task after another.  ``workers=N > 1``:
    N local worker processes.  ``scheduler``: the Dask cluster whose scheduler listens at
    ADDRESS (``tcp://host:8786``; needs the ``dask`` extra).  BadInput for both, or N < 1.
    """
    if workers is not None and scheduler is not None:
        raise BadInput("give --workers or --scheduler, not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise BadInput(f"--workers must be a positive integer; got {workers!r}")
    if scheduler is not None:
        return DaskExecutor(scheduler)
    if workers is None or workers == 1:
        return SerialExecutor()
    return LocalProcessExecutor(workers)


# --------------------------------------------------------------------------------------
# what a task sends back
# --------------------------------------------------------------------------------------

@dataclass
class _Outcome:
    """A task's value, or why it failed (an exception object may not survive pickling,
    so a failure travels as text); the worker and its peak memory so far."""

    value: Any = None
    error: str | None = None
    bad_input: bool = False
    worker: str = ""
    peak_bytes: int | None = None

    def unwrap(self, name: str) -> Any:
        if self.bad_input:
            raise BadInput(self.error)
        if self.error is not None:
            raise TaskFailed(name, self.error)
        return self.value


#: Set in a local worker process: a queue on which it announces (pid, task index) before
#: running a task, so that a worker that dies can be matched with its task.
_started_queue = None


def _init_local_worker(queue) -> None:
    global _started_queue
    _started_queue = queue


#: One task at a time per process: tasks set process-wide state (BLAS and torch thread
#: counts, torch's forward-AD levels), so the threads of a multi-threaded Dask worker (or
#: of an in-process LocalCluster) take turns.  Re-entrant, for a task that maps serially.
_TASK_LOCK = threading.RLock()


def _run_task(func: Callable, task: Any, index: int) -> _Outcome:
    """Run one task where it was sent; every exception becomes a one-line failure."""
    if _started_queue is not None:
        _started_queue.put((os.getpid(), index))
    try:
        with _TASK_LOCK:
            outcome = _Outcome(value=func(task))
    except BadInput as error:
        outcome = _Outcome(error=str(error), bad_input=True)
    except Exception as error:  # noqa: BLE001 - reported with the task named
        outcome = _Outcome(error=_describe_exception(error))
    outcome.worker, outcome.peak_bytes = f"{socket.gethostname()}:{os.getpid()}", _peak_bytes()
    return outcome


def _describe_exception(error: BaseException) -> str:
    """'ZeroDivisionError: division by zero (at linear.py:40)': one line, naming the
    innermost frame of the task's own code."""
    text = str(error).strip().splitlines()
    where = [frame for frame in traceback.extract_tb(error.__traceback__)
             if frame.filename != __file__]
    at = f" (at {Path(where[-1].filename).name}:{where[-1].lineno})" if where else ""
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ") + at


def _peak_bytes() -> int | None:
    """Peak resident memory of this process (bytes), where the OS reports it: Linux's
    VmHWM (getrusage's ru_maxrss would count the parent's peak in a spawned worker, as
    Linux carries it across fork and exec), else ru_maxrss."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _no_progress(iterable: Iterable, label: str = "", length: int | None = None) -> Iterable:
    return iterable


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


# --------------------------------------------------------------------------------------
# the executors
# --------------------------------------------------------------------------------------

class Executor:
    """Runs independent tasks; see the module docstring for the contract.

    ``workers`` is how many tasks run at once; ``description`` says where, in words.
    """

    workers: int = 1
    description: str = "this process"

    def __init__(self) -> None:
        self._peaks: dict[str, int] = {}

    def map(self, func: Callable[[Any], Any], tasks: Sequence[Any],
            names: Sequence[str] | None = None, label: str = "",
            progress: Progress | None = None) -> list[Any]:
        """``[func(task) for task in tasks]``, run by this executor, in task order."""
        tasks = list(tasks)
        results: list[Any] = [None] * len(tasks)
        for index, value in self.as_completed(func, tasks, names, label, progress):
            results[index] = value
        return results

    def as_completed(self, func: Callable[[Any], Any], tasks: Sequence[Any],
                     names: Sequence[str] | None = None, label: str = "",
                     progress: Progress | None = None) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, func(tasks[index]))`` as tasks finish (so a caller can save each
        result at once); ``names[index]`` names a task in errors (default: its repr, or
        ``func[index]``).  Stopping early cancels the tasks not yet started."""
        tasks = list(tasks)
        names = list(names) if names is not None else [_default_name(func, t, k)
                                                        for k, t in enumerate(tasks)]
        if len(names) != len(tasks):
            raise ValueError(f"{len(names)} names for {len(tasks)} tasks")
        outcomes = self._outcomes(func, tasks, names)
        shown = (progress or _no_progress)(outcomes, label=label, length=len(tasks))
        try:
            for index, outcome in shown:
                if outcome.peak_bytes is not None:
                    self._peaks[outcome.worker] = max(outcome.peak_bytes,
                                                      self._peaks.get(outcome.worker, 0))
                yield index, outcome.unwrap(names[index])
        finally:
            _close(shown)
            _close(outcomes)

    def peak_memory(self) -> dict[str, int]:
        """Peak resident memory (bytes) of each worker ('host:pid') that ran a task, as
        reported at the end of its tasks (in this process: this process's own peak)."""
        return dict(self._peaks)

    def close(self) -> None:
        """Stop the workers (a no-op for this process)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _outcomes(self, func, tasks, names) -> Iterator[tuple[int, _Outcome]]:
        raise NotImplementedError


def _default_name(func: Callable, task: Any, index: int) -> str:
    text = repr(task)
    return text if len(text) <= 60 else f"{getattr(func, '__name__', 'task')}[{index}]"


class SerialExecutor(Executor):
    """One task after another, in this process (the default)."""

    def _outcomes(self, func, tasks, names):
        for index, task in enumerate(tasks):
            yield index, _run_task(func, task, index)


class LocalProcessExecutor(Executor):
    """``workers`` worker processes on this machine (``spawn``; one BLAS thread each)."""

    def __init__(self, workers: int):
        super().__init__()
        self.workers = workers
        self.description = f"{workers} local worker processes"
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._started = None

    def _outcomes(self, func, tasks, names):
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._started = context.SimpleQueue()
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_init_local_worker,
                initargs=(self._started,))
        # the pool spawns its processes as tasks are submitted: they inherit this environment
        with _environment(WORKER_ENVIRONMENT):
            futures = {self._pool.submit(_run_task, func, task, index): index
                       for index, task in enumerate(tasks)}
        # pid -> Process, to tell by exit code which worker died (a private attribute of
        # ProcessPoolExecutor; without it every unfinished task is named)
        processes = dict(getattr(self._pool, "_processes", None) or {})
        running: dict[int, int] = {}          # pid -> index of the task it last started
        done: set[int] = set()
        try:
            for future in concurrent.futures.as_completed(futures):
                self._drain(running)
                index = futures[future]
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    raise TaskFailed(*self._casualty(running, done, processes, names)) from None
                except Exception as error:  # noqa: BLE001 - the task or its result did not pickle
                    raise TaskFailed(names[index], f"it could not travel to or from a worker: "
                                     f"{_describe_exception(error)}") from None
                done.add(index)
                yield index, outcome
        finally:
            for future in futures:
                future.cancel()

    def _drain(self, running: dict[int, int]) -> None:
        while not self._started.empty():
            pid, index = self._started.get()
            running[pid] = index

    def _casualty(self, running, done, processes, names) -> tuple[str, str]:
        """(task, reason) for a pool broken by a worker that died: the unfinished task of
        the process that exited abnormally (a process the pool stopped itself exits by
        SIGTERM), or, if that cannot be told, every unfinished task."""
        self._drain(running)
        self.close()                                  # the pool is unusable; start afresh
        unfinished = {pid: index for pid, index in running.items() if index not in done}
        codes = {pid: processes[pid].exitcode for pid in unfinished if pid in processes}
        dead = [pid for pid, code in codes.items() if code not in (None, -15)]
        chosen = dead or list(unfinished)
        if not chosen:
            return "(unknown)", "a worker process died before it started a task"
        tasks = " or ".join(names[unfinished[pid]] for pid in chosen)
        code = codes.get(chosen[0]) if len(chosen) == 1 else None
        how = (f" (killed by signal {-code})" if code is not None and code < 0
               else f" (exit code {code})" if code is not None else "")
        return tasks, f"its worker process died{how}"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._started.close()


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    """Set environment variables for the duration of the block (for spawned children)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class DaskExecutor(Executor):
    """The tasks on a Dask distributed cluster (``dask scheduler`` / ``dask worker``).

    Each worker needs attngeom installed (the same version, for results that match); a
    worker process started by a nanny already runs one BLAS thread.  ``scheduler`` is the
    scheduler's address, or a ``distributed`` cluster object (e.g. a ``LocalCluster``)."""

    def __init__(self, scheduler: Any):
        super().__init__()
        try:
            from distributed import Client
        except ImportError:
            raise BadInput(f"--scheduler needs Dask, an optional extra: {DASK_EXTRA}") from None
        try:
            self._client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError, TypeError) as error:
            raise BadInput(f"cannot reach the Dask scheduler at {scheduler}: "
                           f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
                           ) from None
        self.workers = max(1, len(self._client.nthreads()))      # a task per process
        address = getattr(self._client.scheduler, "address", scheduler)
        self.description = f"the Dask cluster at {address} ({self.workers} workers)"

    def _outcomes(self, func, tasks, names):
        from distributed import KilledWorker, as_completed

        batch = uuid.uuid4().hex[:8]
        prefix = getattr(func, "__name__", None) or getattr(getattr(func, "func", None),
                                                            "__name__", "task")
        futures = [self._client.submit(_run_task, func, task, index, pure=False,
                                       key=f"attngeom-{prefix}-{batch}-{index}")
                   for index, task in enumerate(tasks)]
        position = {future.key: index for index, future in enumerate(futures)}
        try:
            for future in as_completed(futures, loop=self._client.loop):
                index = position[future.key]
                try:
                    outcome = future.result()
                except KilledWorker:
                    raise TaskFailed(names[index], "the Dask workers running it died") from None
                except Exception as error:  # noqa: BLE001 - e.g. the scheduler went away
                    hint = ("; do the Dask workers have this attngeom installed?"
                            if isinstance(error, (ImportError, AttributeError)) else "")
                    raise TaskFailed(names[index], _describe_exception(error) + hint) from None
                yield index, outcome
        finally:
            self._client.cancel([future for future in futures if not future.done()])

    def close(self) -> None:
        self._client.close()

"""attngeom.kernels.threads: the thread rule, the override, and that the limits reach the libraries."""

from __future__ import annotations

import os
import sys

import pytest
import threadpoolctl

from attngeom.kernels import threads
from attngeom.core.errors import BadInput


@pytest.fixture(autouse=True)
def isolated(monkeypatch):
    """Every test starts without a plan and without $ATTNGEOM_THREADS, and leaves the
    process's threads as it found them."""
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    monkeypatch.setattr(threads, "_current", None)
    with threads.restoring():
        yield


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpoolctl.threadpool_info()
            if lib["user_api"] == "blas"}


# -- the rule -------------------------------------------------------------------------------

def test_small_work_gets_one_thread_large_work_the_free_cores(monkeypatch):
    monkeypatch.setattr(threads, "available_cores", lambda window: 4)
    plan = threads.ThreadPlan()
    assert plan.base == 1
    assert plan.threads_for(threads.svd_work((200, 50))) == 1
    assert plan.threads_for(threads.LARGE_WORK - 1) == 1
    assert plan.threads_for(threads.LARGE_WORK) == 4
    assert plan.describe()["large_work_threads"] == 4


def test_a_fixed_count_applies_to_all_work(monkeypatch):
    monkeypatch.setattr(threads, "available_cores", lambda window: 4)
    plan = threads.ThreadPlan(fixed=3)
    assert plan.base == plan.threads_for(1.0) == plan.threads_for(1e12) == 3


@pytest.mark.parametrize("busy, expected", [(0.0, 2), (0.25, 2), (0.6, 1), (1.0, 1), (5.0, 1)])
def test_available_cores_are_the_usable_ones_minus_the_busy_ones(monkeypatch, busy, expected):
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "busy_cores", lambda window: busy)
    assert threads.available_cores() == expected


def test_busy_cores_from_proc_stat(monkeypatch):
    """One CPU fully busy and one idle over the window: one busy core."""
    samples = iter([{0: (0, 0), 1: (0, 0)}, {0: (10, 10), 1: (0, 10)}])
    monkeypatch.setattr(threads, "_cpu_ticks", lambda cpus: next(samples))
    assert threads.busy_cores(0.01) == pytest.approx(1.0, abs=0.3)


def test_busy_cores_on_this_machine_is_a_number_of_cores():
    assert 0.0 <= threads.busy_cores(0.02) <= threads.usable_cores() + 1
    assert 1 <= threads.available_cores(0.02) <= threads.usable_cores()


# -- the override ---------------------------------------------------------------------------

def test_option_wins_over_the_environment_variable(monkeypatch):
    assert threads.requested_threads(None) == (None, "auto")
    monkeypatch.setenv(threads.ENV_VAR, "3")
    assert threads.requested_threads(None) == (3, threads.ENV_VAR)
    assert threads.requested_threads("2") == (2, "--threads")
    assert threads.requested_threads("auto") == (None, "--threads")
    monkeypatch.setenv(threads.ENV_VAR, "nonsense")
    assert threads.requested_threads("1") == (1, "--threads")


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5", "two"])
def test_bad_values_are_refused(monkeypatch, value):
    with pytest.raises(BadInput, match="positive integer or 'auto'"):
        threads.requested_threads(value)
    monkeypatch.setenv(threads.ENV_VAR, value)
    with pytest.raises(BadInput, match=threads.ENV_VAR):
        threads.requested_threads(None)


# -- the libraries --------------------------------------------------------------------------

def test_the_plan_reaches_blas_and_openmp(monkeypatch):
    threads.configure("2")
    assert _blas_threads() == {2}
    plan = threads.configure(None)
    assert plan.fixed is None and _blas_threads() == {1}
    assert all(lib["num_threads"] == 1 for lib in threadpoolctl.threadpool_info())
    monkeypatch.setattr(threads, "available_cores", lambda window: 2)
    with threads.for_work(threads.LARGE_WORK):
        assert _blas_threads() == {2}
    assert _blas_threads() == {1}
    with threads.for_work(1e3):
        assert _blas_threads() == {1}


def test_without_a_plan_nothing_changes():
    before = threadpoolctl.threadpool_info()
    with threads.for_work(1e12):
        assert threadpoolctl.threadpool_info() == before


def test_torch_follows_the_plan():
    torch = pytest.importorskip("torch")
    threads.configure("1")
    assert torch.get_num_threads() == 1
    torch.set_num_threads(2)
    threads.configure_torch(torch)                 # what attngeom.kernels.backend does on import
    assert torch.get_num_threads() == 1


def test_jax_flags_before_import_and_fixed_after(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    assert threads._configure_jax(1) == "1 (XLA_FLAGS)"
    assert os.environ["XLA_FLAGS"].split() == ["--xla_dump_to=/tmp/x",
                                               "--xla_cpu_multi_thread_eigen=false"]
    threads._configure_jax(2)
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/x"
    monkeypatch.setitem(sys.modules, "jax", object())
    assert threads._configure_jax(1).startswith("fixed")


# -- the command line -----------------------------------------------------------------------

def test_cli_applies_the_option(run_cli):
    code, out, err = run_cli("--threads", "1", "list", "--source", "HMK")
    assert code == 0 and out
    assert threads.current().fixed == 1 and threads.current().source == "--threads"
    assert _blas_threads() == {1}


def test_cli_default_is_the_rule(run_cli, monkeypatch):
    monkeypatch.setenv(threads.ENV_VAR, "2")
    assert run_cli("--threads", "auto", "list", "--source", "HMK")[0] == 0
    assert threads.current().fixed is None and _blas_threads() == {1}


@pytest.mark.parametrize("args, env", [(("--threads", "0"), None), (("--threads", "-2"), None),
                                       (("--threads", "many"), None), ((), "0")])
def test_cli_bad_values_exit_2_with_one_line(run_cli, monkeypatch, args, env):
    if env is not None:
        monkeypatch.setenv(threads.ENV_VAR, env)
    code, out, err = run_cli(*args, "list")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "positive integer or 'auto'" in err

"""attngeom.core.executor and the commands that use it (issue 18): the same results in this
process, in 2 local worker processes and on an in-process Dask LocalCluster; one
progress bar; failures named; certificates written atomically and skipped when up to
date; bad --workers / --scheduler input.

This module stays light to import: local worker processes import it to run its task
functions."""

from __future__ import annotations

import csv
import json
import os
import signal
import sys

import pytest

from attngeom.core import atomic_files
from attngeom.core import executor as executor_module
from attngeom.core.atomic_files import write_text_atomically
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.core.executor import TaskFailed, make_executor

#: Cheap claims covering proved / verified (F_p points) / consistent (floats, torch).
SUITE_CLAIMS = "linear,exp-log-inverse,gt-kl-attention,gec-ablation-ordering"
SUITE_FILES = 11
PLACES = ("serial", "local", "dask")


# -- task functions (module level: they travel to worker processes) ---------------------------

def _square(x):
    return x * x


def _fails_at_three(x):
    return 1 // (x - 3)


def _refuses(x):
    raise BadInput(f"--x must be small; got {x}")


def _dies(x):
    os.kill(os.getpid(), signal.SIGKILL)


# -- fixtures -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    """An in-process Dask cluster: 2 workers, one thread each (as README advises)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as local_cluster:
        yield local_cluster


@pytest.fixture(scope="module")
def local():
    """Two local worker processes, started once for the module."""
    with make_executor(workers=2) as executor:
        yield executor


@pytest.fixture
def place(request, local, cluster):
    """(name, executor, CLI options) for serial, 2 local workers, the Dask cluster."""
    name = request.param
    if name == "serial":
        yield name, make_executor(), ()
    elif name == "local":
        yield name, local, ("--workers", "2")
    else:
        with make_executor(scheduler=cluster.scheduler_address) as executor:
            yield name, executor, ("--scheduler", cluster.scheduler_address)


def _places(*names):
    return pytest.mark.parametrize("place", names or PLACES, indirect=True)


class _RecordingProgress:
    """A progress callable (CheckContext convention) that counts its bars and items."""

    def __init__(self):
        self.bars, self.items = [], 0

    def __call__(self, iterable, label="", length=None):
        self.bars.append((label, length))
        for item in iterable:
            self.items += 1
            yield item


def _without_times(value):
    """A certificate / report without its measured times."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items()
                if k != "seconds" and not k.startswith("seconds_")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _certificates(directory):
    return {p.name: _without_times(json.loads(p.read_text())) for p in directory.glob("*.json")}


# -- the executor -------------------------------------------------------------------------------

@_places()
def test_results_in_task_order_under_one_progress_bar(place):
    _, executor, _ = place
    progress = _RecordingProgress()
    assert executor.map(_square, range(7), label="squares", progress=progress) == \
        [x * x for x in range(7)]
    assert progress.bars == [("squares", 7)] and progress.items == 7
    assert executor.peak_memory() and all(v > 0 for v in executor.peak_memory().values())


@_places()
def test_a_task_that_raises_is_named(place):
    _, executor, _ = place
    with pytest.raises(TaskFailed, match=r"task x=3 failed: ZeroDivisionError: integer division"
                                         r".* \(at test_executor.py:\d+\)"):
        executor.map(_fails_at_three, range(6), names=[f"x={x}" for x in range(6)])
    with pytest.raises(BadInput, match="^--x must be small; got 5$"):     # passes unchanged
        executor.map(_refuses, [5])
    assert executor.map(_square, [4]) == [16]                             # still usable


def test_a_worker_that_dies_is_named(local):
    with pytest.raises(TaskFailed, match=r"task doomed failed: its worker process died "
                                         r"\(killed by signal 9\)"):
        local.map(_dies, [1], names=["doomed"])
    assert local.map(_square, [1, 2, 3]) == [1, 4, 9]                     # a fresh pool


@pytest.mark.parametrize("workers,scheduler,message", [
    (0, None, "--workers must be a positive integer; got 0"),
    (-2, None, "--workers must be a positive integer"),
    (2, "tcp://localhost:8786", "give --workers or --scheduler, not both"),
])
def test_bad_executor_options(workers, scheduler, message):
    with pytest.raises(BadInput, match=message):
        make_executor(workers, scheduler)


@pytest.mark.parametrize("command", [
    ("certify", "linear", "--d", "2", "--t", "2", "--out", "{tmp}"),
    ("check-certificates", "{tmp}"),
    ("dimension", "--d", "3", "--a", "2", "--t", "2"),
    ("experiment", "gec", "--seeds", "0", "--epochs", "1", "--out", "{tmp}"),
    ("ideal", "--d", "2", "--t", "2"),
])
@pytest.mark.parametrize("options,message", [
    (("--workers", "0"), "--workers must be"),
    (("--workers", "2", "--scheduler", "tcp://localhost:8786"), "not both"),
])
def test_bad_executor_options_on_every_command(run_cli, tmp_path, command, options, message):
    (tmp_path / "x.json").write_text("{}")
    code, out, err = run_cli(*(a.format(tmp=tmp_path) for a in command), *options)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_unreachable_scheduler_is_one_line(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(executor_module, "CONNECT_TIMEOUT", 1)
    with pytest.raises(BadInput, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        make_executor(scheduler="tcp://127.0.0.1:9")


def test_scheduler_without_dask_is_one_line(run_cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)        # import distributed fails
    code, out, err = run_cli("certify", "linear", "--d", "2", "--t", "2", "--out", tmp_path,
                             "--scheduler", "tcp://localhost:8786")
    assert code == 2 and "attngeom[dask]" in err and len(err.strip().splitlines()) == 1


# -- the commands give the same results wherever they run ---------------------------------------

def test_certify_and_check_certificates_are_the_same_everywhere(run_cli, tmp_path, cluster):
    places = {"serial": (), "local": ("--workers", "2"),
              "dask": ("--scheduler", cluster.scheduler_address)}
    for name, options in places.items():
        code, _, err = run_cli("certify", "--suite", "paper", "--claims", SUITE_CLAIMS,
                               "--out", tmp_path / name, *options)
        assert code == 0, err
    made = {name: _certificates(tmp_path / name) for name in places}
    assert len(made["serial"]) == SUITE_FILES
    assert made["serial"] == made["local"] == made["dask"]
    reports = {}
    for name, options in places.items():
        code, out, err = run_cli("check-certificates", tmp_path / "serial", "--json", *options)
        assert code == 0, err
        reports[name] = json.loads(out)
    assert reports["serial"] == reports["local"] == reports["dask"]
    assert all(row["ok"] for row in reports["serial"])


@_places()
def test_figure3_points_are_the_same_everywhere(place):
    from attngeom.lightning_alg.hmk.figure3 import figure3_rows
    _, executor, _ = place
    progress = _RecordingProgress()
    rows = figure3_rows(CheckContext(seed=0, progress=progress), deltas=(3, 4),
                        executor=executor)
    serial = figure3_rows(CheckContext(seed=0), deltas=(3, 4))
    assert [r["delta"] for r in rows] == [3, 4] and progress.bars == [("HMK Figure 3", 2)]
    assert _without_times(rows) == _without_times(serial)


def test_dimension_point_on_the_cluster(run_cli, cluster):
    args = ("dimension", "--layers", "2", "--d", "3,3,3", "--a", "2,2", "--t", "3", "--json")
    here = run_cli(*args)
    there = run_cli(*args, "--scheduler", cluster.scheduler_address)
    assert here[0] == there[0] == 1                        # eq (14) as printed fails
    assert _without_times(json.loads(here[1])) == _without_times(json.loads(there[1]))


@_places()
def test_ideal_is_the_same_everywhere(run_cli, tmp_path, place):
    """The blocks of each degree mapped over the executor (ADM Example 36's point, with the
    family attribution and the Macaulay2 export, whose images of blocks with generators
    are computed in a second round): the same JSON and the same export everywhere."""
    name, _, options = place
    args = ("ideal", "--d", "3", "--t", "2", "--a", "3", "--json")
    serial = run_cli(*args, "--m2", str(tmp_path / "serial.m2"))
    there = run_cli(*args, "--m2", str(tmp_path / f"{name}.m2"), *options)
    assert serial[0] == there[0] == 0, there[2]
    strip = lambda text: {k: v for k, v in _without_times(json.loads(text)).items()
                          if k != "m2_export"}
    assert strip(there[1]) == strip(serial[1])
    assert json.loads(there[1])["minimal_generators"] == {"1": 10, "3": 20, "4": 90}
    assert (tmp_path / f"{name}.m2").read_text() == (tmp_path / "serial.m2").read_text()


@_places("dask")       # serial against 2 local workers: test_gec_experiment.py
def test_gec_runs_are_the_same_everywhere(place):
    from attngeom.geometry_proofs.gating.experiment import runner, train
    _, executor, _ = place
    config = runner.ExperimentConfig(task="ablation", seeds=(0,), epochs=1, train_size=256,
                                     test_size=64, centres=8, boundary_grid=6)
    strip = lambda rows: [{k: v for k, v in row.items() if k not in train.TIMING_COLUMNS}
                          for row in rows]
    rows, boundaries = runner.run_experiment(config, executor=executor)
    serial_rows, serial_boundaries = runner.run_experiment(config)
    assert strip(rows) == strip(serial_rows)
    assert boundaries.keys() == serial_boundaries.keys()
    assert all((boundaries[k] == serial_boundaries[k]).all() for k in boundaries)


def test_gec_command_on_the_cluster(run_cli, tmp_path, cluster):
    from attngeom.geometry_proofs.gating.experiment import train
    args = ("experiment", "gec", "--task", "ablation", "--seeds", "0", "--epochs", "1",
            "--centres", "1", "--json")
    tables = []
    for name, options in (("here", ("--workers", "1")),
                          ("there", ("--scheduler", cluster.scheduler_address))):
        code, out, err = run_cli(*args, "--out", tmp_path / name, *options)
        assert code == 0, err
        with open(tmp_path / name / "results.csv", newline="") as handle:
            tables.append([{k: v for k, v in row.items() if k not in train.TIMING_COLUMNS}
                           for row in csv.DictReader(handle)])
    assert len(tables[0]) == 4 and tables[0] == tables[1]


# -- failures: named, nothing half-written, a rerun skips what is done --------------------------

def test_a_failing_claim_is_named_and_finished_certificates_stay(run_cli, tmp_path, monkeypatch):
    from attngeom import cli
    check = type(cli.REGISTRY.get("linear")).check
    monkeypatch.setattr(type(cli.REGISTRY.get("linear")), "check", lambda self, method, params,
                        context: 1 / 0 if params["d"] == 6 else check(self, method, params, context))
    code, out, err = run_cli("certify", "--suite", "paper", "--claims", "linear",
                             "--out", tmp_path)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "task linear__a2__d6__t4.json failed: ZeroDivisionError: division by zero" in err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written and "linear__a2__d6__t4.json" not in written      # no file for the failure
    monkeypatch.undo()
    code, out, _ = run_cli("certify", "--suite", "paper", "--claims", "linear", "--out", tmp_path)
    assert code == 0 and out.count("skipped (up to date)") == len(written)


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "c.json"
    target.write_text("old\n")

    def interrupted(descriptor):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic_files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomically(target, "new\n" * 1000)
    assert target.read_text() == "old\n" and list(tmp_path.iterdir()) == [target]


def test_a_failed_write_is_one_line(run_cli, tmp_path, monkeypatch):
    def full(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "replace", full)
    code, out, err = run_cli("certify", "linear", "--d", "2", "--t", "2", "--out", tmp_path)
    assert code == 2 and "No space left on device" in err and "linear__d2__t2.json" in err
    assert len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_a_rerun_skips_up_to_date_certificates(run_cli, tmp_path):
    args = ("certify", "--suite", "paper", "--claims", "linear", "--out", tmp_path, "--json")
    assert run_cli(*args)[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.json")}
    rows = json.loads(run_cli(*args)[1])
    assert all(row["skipped"] for row in rows) and len(rows) == len(before) == 5
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.json")} == before
    stale = {"linear__a2__d2__t2.json": lambda c: c.update(seed=1),
             "linear__a1__d3__t2.json": lambda c: c.update(digest="0" * 64),
             "linear__a3__d3__t2.json": lambda c: c.update(toolkit_version="0.0.1"),
             "linear__a2__d6__t4.json": lambda c: c["verdict"].update(status="sure")}
    for name, edit in stale.items():
        cert = json.loads((tmp_path / name).read_text())
        edit(cert)
        (tmp_path / name).write_text(json.dumps(cert))
    (tmp_path / "linear__a2__all_outputs__d2__dprime2__t3.json").write_text("{half a fi")
    rows = json.loads(run_cli(*args)[1])
    assert not any(row["skipped"] for row in rows)
    assert _certificates(tmp_path) == {name: _without_times(json.loads(text))
                                       for name, text in before.items()}
    code, out, _ = run_cli(*args[:-1], "--force")
    assert code == 0 and "skipped" not in out

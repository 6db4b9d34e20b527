"""Certificates from others (issue 49): special files are never read, one bad file never
ends the run, and a tampered verdict never checks out or survives ``certify``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import attngeom
from attngeom.core.certificate_schema import MAX_INT_DIGITS

ROOT = Path(__file__).resolve().parents[1]
#: a refuted claim with a convention erratum, checked in milliseconds
REFUTED = ROOT / "certificates" / "gt-counts-parameters.json"
#: a holding one, as fast
HOLDING = ROOT / "certificates" / "gt-counts-architecture.json"


def _check(directory: Path) -> dict[str, list[str]]:
    check = attngeom.check_certificates(str(directory))
    return {Path(r.path).name: list(r.problems) for r in check}


def _tampered(tmp_path: Path, change) -> dict[str, list[str]]:
    cert = json.loads(REFUTED.read_text())
    change(cert)
    (tmp_path / REFUTED.name).write_text(json.dumps(cert))
    return _check(tmp_path)


def test_the_untouched_certificates_check_out(tmp_path):
    shutil.copy(REFUTED, tmp_path)
    shutil.copy(HOLDING, tmp_path)
    assert _check(tmp_path) == {REFUTED.name: [], HOLDING.name: []}


@pytest.mark.parametrize("change, field", [
    (lambda c: c["verdict"].update(errata=[]), "errata"),
    (lambda c: c["verdict"].update(error_kind=None), "error_kind"),
    (lambda c: c["verdict"]["errata"][0].update(kind="false-statement"), "errata"),
    (lambda c: c["verdict"]["errata"][0].update(location="GT Table 9"), "errata"),
    (lambda c: c["verdict"]["errata"][0].update(correct="the printed figures are right"),
     "errata"),
])
def test_tampered_errata_do_not_check_out(tmp_path, change, field):
    problems = _tampered(tmp_path, change)[REFUTED.name]
    assert problems and any(field in p for p in problems), problems


def test_a_symlink_fifo_or_device_is_not_read(tmp_path):
    shutil.copy(HOLDING, tmp_path)
    os.symlink(HOLDING, tmp_path / "link.json")
    os.symlink("/dev/zero", tmp_path / "zero.json")
    os.mkfifo(tmp_path / "fifo.json")
    check = attngeom.check_certificates(str(tmp_path))
    by_name = {Path(r.path).name: r for r in check}
    assert by_name[HOLDING.name].ok
    for name in ("link.json", "zero.json"):
        assert by_name[name].invalid and "symbolic link" in by_name[name].problems[0]
    assert by_name["fifo.json"].invalid and "FIFO" in by_name["fifo.json"].problems[0]


def test_one_bad_file_is_its_own_failure(tmp_path):
    """A huge integer, and a parameter whose re-run raises: each file fails alone, the
    others are still checked and reported."""
    shutil.copy(HOLDING, tmp_path)
    cert = json.loads(REFUTED.read_text())
    text = json.dumps(cert).replace('"checked": ', '"checked": ' + "9" * 5000 + ", \"x\": ", 1)
    (tmp_path / "huge.json").write_text(text)
    problems = _check(tmp_path)
    assert problems[HOLDING.name] == []
    assert f"at most {MAX_INT_DIGITS}" in problems["huge.json"][0]


def test_a_crash_in_one_rerun_does_not_end_the_run(tmp_path, monkeypatch):
    from attngeom.registry import REGISTRY
    shutil.copy(HOLDING, tmp_path)
    shutil.copy(REFUTED, tmp_path)
    claim = REGISTRY.get("gt-counts-parameters")

    def boom(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(claim, "verify", boom)
    problems = _check(tmp_path)
    assert problems[HOLDING.name] == []
    assert problems[REFUTED.name] == ["cannot re-run: RecursionError: maximum recursion depth "
                                      "exceeded"]


def test_certify_rewrites_a_tampered_certificate(tmp_path):
    cert = json.loads(REFUTED.read_text())
    cert["verdict"].update(status="proved", errata=[], error_kind=None)
    target = tmp_path / REFUTED.name
    target.write_text(json.dumps(cert))
    row = attngeom.certify(suite="paper", claim_ids="gt-counts-parameters", out=str(tmp_path))[0]
    assert row["status"] == "refuted" and not row["skipped"]
    assert json.loads(target.read_text())["verdict"]["status"] == "refuted"
    row = attngeom.certify(suite="paper", claim_ids="gt-counts-parameters", out=str(tmp_path))[0]
    assert row["skipped"]                       # now up to date: kept


# -- output targets --------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["check-certificates", "certificates", "--junit", "/dev/null"], "not a place for output"),
    (["ideal", "--d", "2", "--t", "2", "--m2", "/proc/version"], "not a place for output"),
    (["embed-tree", "path:5", "--plot", "x.exe"], "suffix must be one of"),
])
def test_output_targets_are_refused_before_any_work(run_cli, args, words):
    code, out, err = run_cli(*args)
    assert code == 2 and words in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_an_output_symlink_or_special_file_is_never_replaced(run_cli, tmp_path):
    from attngeom.core.atomic_files import write_text_atomically
    from attngeom.core.errors import BadInput
    target = tmp_path / "real.xml"
    target.write_text("mine")
    os.symlink(target, tmp_path / "link.xml")
    os.mkfifo(tmp_path / "fifo.xml")
    for name in ("link.xml", "fifo.xml"):
        with pytest.raises(BadInput):
            write_text_atomically(tmp_path / name, "theirs")
    os.symlink(target, tmp_path / "link.png")
    code, _, err = run_cli("embed-tree", "path:5", "--plot", tmp_path / "link.png")
    assert code == 2 and "symbolic link" in err
    assert target.read_text() == "mine"
    assert (tmp_path / "link.xml").is_symlink() and (tmp_path / "link.png").is_symlink()


# -- a certificate is data, never a path ------------------------------------------------------

@pytest.mark.parametrize("tree", [" /etc/passwd", "/etc/passwd\n", "/etc//passwd", "/etc/../etc/passwd"])
def test_a_certificate_never_names_a_file(tmp_path, tree):
    cert = json.loads((ROOT / "certificates" / "hierarchy-preservation__treebalanced_2_3__varianttrained.json").read_text())
    cert["params"]["tree"] = tree
    (tmp_path / "c.json").write_text(json.dumps(cert))
    result = attngeom.check_certificates(str(tmp_path))[0]
    assert result.invalid and "file" in result.problems[0]
    assert "root:" not in " ".join(result.problems)          # nothing of /etc/passwd shown


def test_a_certificate_cannot_ask_for_endless_training(tmp_path):
    cert = json.loads((ROOT / "certificates" / "hierarchy-preservation__treebalanced_2_3__varianttrained.json").read_text())
    cert["params"]["epochs"] = 10 ** 17
    (tmp_path / "c.json").write_text(json.dumps(cert))
    result = attngeom.check_certificates(str(tmp_path))[0]
    assert result.invalid and "at most 20000" in result.problems[0]

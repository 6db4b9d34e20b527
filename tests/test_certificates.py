"""Certificates: writing, re-checking, tampering, format versions, the committed suite."""

import json
from pathlib import Path

import pytest

from attngeom import cli
from attngeom.core.certificates import (CERTIFICATE_FIELDS, FORMAT_VERSION, VERDICT_FIELDS,
                                  check_certificate, write_certificate)
from attngeom.core.claim import CheckContext

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def certificates(tmp_path):
    linear = cli.REGISTRY.get("linear")
    exact, _ = write_certificate(linear, {"d": 3, "t": 2, "a": 2}, "exact", CheckContext(seed=3),
                                 tmp_path)
    symbolic, _ = write_certificate(linear, {"d": 2, "t": 2, "a": 2}, "symbolic", CheckContext(),
                                    tmp_path)
    return {"exact": exact, "symbolic": symbolic}


def test_fresh_certificates_check_out(certificates):
    for path in certificates.values():
        result = check_certificate(path, cli.REGISTRY)
        assert result.ok, result.problems
    cert = json.loads(certificates["exact"].read_text())
    assert cert["verdict"]["status"] == "verified" and cert["seed"] == 3
    vanishing = cert["verdict"]["evidence"]["parts"]["vanishing"]
    assert len(vanishing["weights_mod_p"]) == 6 and vanishing["prime"] == 2**31 - 1
    assert set(cert) == set(CERTIFICATE_FIELDS) and set(cert["verdict"]) == set(VERDICT_FIELDS)


def _tamper(path, edit):
    cert = json.loads(path.read_text())
    edit(cert)
    path.write_text(json.dumps(cert))
    return check_certificate(path, cli.REGISTRY)


@pytest.mark.parametrize("edit,expected", [
    (lambda c: c["verdict"].update(status="proved"), "verdict.status"),
    (lambda c: c.update(seed=4), "weights_mod_p"),
    (lambda c: c["params"].update(d=4), "verdict.params.d"),
    (lambda c: c.update(digest="0" * 64), "digest"),
    (lambda c: c["verdict"]["evidence"]["parts"]["vanishing"].update(points=7),
     "verdict.evidence.parts.vanishing.points"),
    (lambda c: c["verdict"]["evidence"]["parts"]["cor10"].update(prop9_rank_over_Q=9),
     "verdict.evidence.parts.cor10.prop9_rank_over_Q"),
    (lambda c: c["verdict"]["evidence"]["parts"]["cor10"].update(extra=1),
     "verdict.evidence.parts.cor10.extra is not produced by the re-run"),
    (lambda c: c["verdict"].update(failure_probability=1e-3), "failure_probability"),
])
def test_tampering_is_named(certificates, edit, expected):
    result = _tamper(certificates["exact"], edit)
    assert not result.ok and any(expected in p for p in result.problems), result.problems


@pytest.mark.parametrize("edit,named", [
    (lambda c: c.update(status="proved"), "status"),
    (lambda c: c.update(status="proved", note="x"), "status, note"),
    (lambda c: c["verdict"].update(verified_by="me"), "verdict.verified_by"),
])
def test_fields_the_format_does_not_define_are_refused(certificates, edit, named):
    result = _tamper(certificates["exact"], edit)
    assert result.problems == [f"field(s) the certificate format does not define: {named}"]
    assert result.claim == "linear"


def test_newer_format_and_malformed_files_are_refused(certificates, tmp_path):
    result = _tamper(certificates["symbolic"], lambda c: c.update(format_version=FORMAT_VERSION + 1))
    assert not result.ok and "format version" in result.problems[0]
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    assert "malformed" in check_certificate(bad, cli.REGISTRY).problems[0]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something-else"}))
    assert "malformed" in check_certificate(other, cli.REGISTRY).problems[0]


def test_cli_certify_and_check(run_cli, tmp_path, certificates):
    code, out, _ = run_cli("certify", "linear", "--d", 2, "--t", 3, "--out", tmp_path / "c")
    assert code == 0 and out.startswith("proved")
    code, out, _ = run_cli("check-certificates", tmp_path / "c")
    assert code == 0 and "1 of 1 certificates check out" in out
    _tamper(certificates["exact"], lambda c: c["verdict"].update(status="refuted"))
    code, out, _ = run_cli("check-certificates", certificates["exact"].parent, "--json")
    rows = json.loads(out)
    assert code == 1 and [r["ok"] for r in rows].count(False) == 1
    assert run_cli("certify", "--out", tmp_path)[0] == 2
    assert run_cli("check-certificates", tmp_path / "nowhere")[0] == 2


def test_every_registered_claim_has_paper_examples():
    missing = [claim.id for claim in cli.REGISTRY if not claim.examples]
    assert not missing, f"claims without examples for the certificate suite: {missing}"


def test_committed_suite_covers_every_claim():
    """Every registered claim has a committed certificate (they are re-checked under three
    BLAS configurations by tests/test_certificates_portable.py)."""
    files = sorted((REPO / "certificates").glob("*.json"))
    claims = {json.loads(f.read_text())["claim"] for f in files}
    assert claims == {claim.id for claim in cli.REGISTRY}

"""Typed evidence (attngeom.core.evidence), its comparison rules, certificate validation before
anything runs, and the JUnit report (issues 23 and 29)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from attngeom import cli
from attngeom.core.certificate_compare import Comparison, mask_numbers
from attngeom.core.certificates import check_certificate, write_certificate
from attngeom.core.claim import CheckContext
from attngeom.core.evidence import Bound, measured, split_kinds
from attngeom.core.verdict import combine, consistent


# -- the kinds themselves ------------------------------------------------------------------

def test_marked_values_stay_plain_python_values_and_are_found_by_path():
    evidence = {"largest error": Bound(2e-10, 1e-6), "run": measured({"loss": 1.5}),
                "rows": [measured("a"), 2.0], "exact": 3}
    assert evidence["largest error"] * 2 == 4e-10 and evidence["run"]["loss"] == 1.5
    plain, kinds = split_kinds({"evidence": evidence})
    assert plain == {"evidence": {"largest error": 2e-10, "run": {"loss": 1.5},
                                  "rows": ["a", 2.0], "exact": 3}}
    assert type(plain["evidence"]["largest error"]) is float
    assert kinds == {"evidence.largest error": {"kind": "bound", "relation": "<=", "limit": 1e-6},
                     "evidence.run": {"kind": "measured"},
                     "evidence.rows[0]": {"kind": "measured"}}


def test_consistent_residuals_are_bounds_and_combine_keeps_them():
    part = consistent(checked=1, max_residual=3e-9, tolerance=1e-8, summary="s",
                      backend="numpy", device="cpu")
    fields = part.to_json()["kinds"]["fields"]
    assert fields == {"max_residual": {"kind": "bound", "relation": "<=", "limit": 1e-8}}
    both = combine({"a": part, "b": part})
    assert both.to_json()["kinds"]["fields"]["max_residual"]["limit"] == 1e-8


def _compare(stored, fresh, fields=None, name="evidence"):
    comparison = Comparison({"float": {"rel_tol": 1e-9, "abs_tol": 1e-12}, "fields": fields or {}})
    comparison.field(name, stored, fresh)
    return comparison.problems


@pytest.mark.parametrize("stored,fresh,ok", [
    ({"x": 1.0}, {"x": 1.0 + 1e-12}, True),
    ({"x": 1.0}, {"x": 1.0 + 1e-8}, False),           # beyond the float tolerance
    ({"x": [1.0, 1e-15]}, {"x": [1.0, 3e-15]}, True),  # scale of the whole vector
    ({"x": 3}, {"x": 4}, False),
    ({"x": True}, {"x": 1}, False),                   # a flag is not a number
    ({"x": "7/3"}, {"x": "7/3"}, True),
    ({"x": [1, 2]}, {"x": [1, 2, 3]}, False),
])
def test_float_and_exact_rules(stored, fresh, ok):
    problems = _compare(stored, fresh)
    assert (not problems) is ok, problems
    if not ok:
        assert problems[0].startswith("verdict.evidence.x") and ("exact" in problems[0]
                                                                  or "float" in problems[0]
                                                                  or "entries" in problems[0])


def test_bound_compares_only_the_bound_and_measured_nothing():
    fields = {"evidence.err": {"kind": "bound", "relation": "<=", "limit": 1e-6},
              "evidence.run": {"kind": "measured"}}
    assert not _compare({"err": 2e-10, "run": {"a": 1}}, {"err": 4e-10, "run": {"a": 9}}, fields)
    moved = _compare({"err": 2e-10, "run": 1}, {"err": 2e-5, "run": 1}, fields)
    assert moved == ["verdict.evidence.err: re-run 2e-05 does not meet the bound (certificate "
                     "2e-10; bound: <= 1e-06)"]
    forged = _compare({"err": 0.5, "run": 1}, {"err": 2e-10, "run": 1}, fields)
    assert forged and "does not meet its own bound" in forged[0]


def test_summaries_compare_as_text_with_numbers_masked():
    assert mask_numbers("error 1.2e-10 at 3 of 5 points") == "error # at # of # points"
    assert not _compare("largest 1.5e-10", "largest 4e-10", name="summary")
    assert _compare("holds at 3 points", "fails at 3 points", name="summary")
    # a sub-verdict's summary, and an erratum's texts, alike; an erratum's kind exactly
    part = lambda text: {"parts": {"a": {"status": "consistent", "summary": text}}}
    assert not _compare(part("at most 3.2e-15"), part("at most 2.5e-15"), name="evidence")
    assert _compare(part("holds"), part("fails"), name="evidence")
    erratum = lambda kind, text: [{"kind": kind, "location": "eq (2)", "printed": text}]
    assert not _compare(erratum("convention", "5.76"), erratum("convention", "5.77"), name="errata")
    assert _compare(erratum("convention", "x"), erratum("false-statement", "x"), name="errata")


# -- certificates ---------------------------------------------------------------------------

@pytest.fixture
def gt_certificate(tmp_path):
    claim = cli.REGISTRY.get("gt-grad-mu-self")
    path, verdict = write_certificate(claim, {"dim": 4}, "numeric", CheckContext(), tmp_path)
    assert verdict.status.value == "consistent"
    return path


def _edit(path: Path, edit):
    cert = json.loads(path.read_text())
    edit(cert)
    path.write_text(json.dumps(cert))
    return check_certificate(path, cli.REGISTRY)


def test_a_bound_value_may_move_within_its_bound(gt_certificate):
    part = lambda c: c["verdict"]["evidence"]["parts"]["finite-differences"]
    result = _edit(gt_certificate, lambda c: part(c).update({"largest error": 9e-7}))
    assert result.ok, result.problems
    result = _edit(gt_certificate, lambda c: part(c).update({"largest error": 2e-6}))
    assert not result.ok and "does not meet its own bound" in result.problems[0]


def test_a_certificate_cannot_declare_its_own_kinds(gt_certificate):
    """The rules come from the code: calling a field measured in the file is a mismatch."""
    def relabel(cert):
        cert["verdict"]["kinds"]["fields"]["evidence.parts.formula.why the tolerance"] = {"kind": "measured"}
        cert["verdict"]["evidence"]["parts"]["formula"]["why the tolerance"] = "anything"
    result = _edit(gt_certificate, relabel)
    assert not result.ok
    assert any("kinds.fields" in p for p in result.problems)
    assert any("why the tolerance" in p and "(exact)" in p for p in result.problems)


def test_format_version_1_is_refused_with_advice(gt_certificate):
    result = _edit(gt_certificate, lambda c: c.update(format_version=1))
    assert result.invalid and "re-certify" in result.problems[0]


# -- validation before anything runs --------------------------------------------------------

@pytest.fixture
def never_run(monkeypatch):
    """Fail the test if any claim is re-run."""
    from attngeom.core.claim import Claim

    def verify(*args, **kwargs):
        raise AssertionError("an invalid certificate reached a claim")
    monkeypatch.setattr(Claim, "verify", verify)


@pytest.mark.parametrize("edit,reason", [
    (lambda c: c.update(seed=-1), "--seed"),
    (lambda c: c.update(seed="0"), "seed must be an integer"),
    (lambda c: c.update(samples=10**9), "--samples"),
    (lambda c: c.update(backend="os.system"), "unknown backend"),
    (lambda c: c.update(claim="__import__"), "unknown claim"),
    (lambda c: c.update(method_requested="eval"), "method_requested"),
    (lambda c: c.update(digest="x" * 64), "digest"),
    (lambda c: c["params"].update(dim=10**6), "too large"),
    (lambda c: c["params"].update(dim=-3), "--dim"),
    (lambda c: c["params"].update(dim={"a": 1}), "params.dim"),
    (lambda c: c["params"].update(psi="u**2"), "does not take --psi"),
    (lambda c: c["verdict"].update(status="true"), "verdict.status"),
    (lambda c: c["verdict"].update(evidence=[]), "verdict.evidence"),
    (lambda c: c["verdict"].pop("kinds"), "verdict lacks kinds"),
    (lambda c: c["verdict"]["evidence"].update(deep=json.loads("[" * 60 + "]" * 60)), "nested"),
])
def test_invalid_certificates_are_named_and_never_run(gt_certificate, never_run, edit, reason):
    result = _edit(gt_certificate, edit)
    assert result.invalid and len(result.problems) == 1, result.problems
    assert reason in result.problems[0], result.problems


def test_certificates_name_no_local_file_and_start_no_training(tmp_path, never_run):
    """A certificate from others cannot read a file of the checking machine or train."""
    base = json.loads((Path(__file__).parent.parent / "certificates"
                       / "gec-ablation-ordering.json").read_text())
    for value, reason in ((str(Path(__file__)), "names a file"),
                          ("run:0-4:20", "reads the committed results only")):
        cert = json.loads(json.dumps(base))
        cert["params"]["results"] = value
        path = tmp_path / "gec.json"
        path.write_text(json.dumps(cert))
        result = check_certificate(path, cli.REGISTRY)
        assert result.invalid and reason in result.problems[0], result.problems


def test_oversized_and_deeply_nested_files_are_refused(tmp_path, never_run):
    big = tmp_path / "big.json"
    big.write_text('{"format": "attngeom-certificate", "pad": "' + "x" * (5 * 2**20) + '"}')
    assert "bytes" in check_certificate(big, cli.REGISTRY).problems[0]
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "malformed" in check_certificate(deep, cli.REGISTRY).problems[0]


def test_check_certificates_exit_codes_and_junit(run_cli, tmp_path, gt_certificate):
    folder = gt_certificate.parent
    junit = tmp_path / "report.xml"
    code, out, err = run_cli("check-certificates", folder, "--junit", junit)
    assert code == 0 and err == ""
    case, = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert case.get("classname") == "gt-grad-mu-self" and len(case) == 0

    _edit(gt_certificate, lambda c: c["verdict"].update(checked=99))
    code, out, err = run_cli("check-certificates", folder, "--junit", junit)
    assert code == 1
    failure = ET.parse(junit).getroot().find("./testsuite/testcase/failure")
    assert "verdict.checked: certificate 99" in failure.get("message")

    (folder / "payload.json").write_text(json.dumps({"format": "attngeom-certificate"}))
    code, out, err = run_cli("check-certificates", folder, "--junit", junit)
    assert code == 2 and err.count("\n") == 1 and "payload.json" in err
    suite = ET.parse(junit).getroot().find("./testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")

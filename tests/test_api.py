"""The public Python API (attngeom.api): each function on a small example, against what the
CLI prints; BadInput with the CLI's message; the markdown displays; a light `import
attngeom`; docs/api.md generated from the docstrings and not stale."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

import attngeom
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.verdict import Status, Verdict, combine, proved, refuted
from attngeom.core.verdict_format import format_verdict

ROOT = Path(__file__).resolve().parents[1]


def masked(text: str) -> str:
    """Timings masked: they differ between two runs (and on a loaded machine): "0.04 s", and
    the seconds column that ends each row of the ideal's degree table (11 counts, then
    seconds)."""
    text = re.sub(r"(?m)^(\s*\d+(?:\s+\d+){10})\s+\d+\.\d+$", r"\1 X", text)
    return re.sub(r"\d+\.\d+ s\b", "X s", text)


# -- verify -----------------------------------------------------------------------------

def test_verify_returns_the_verdict_the_cli_prints(run_cli):
    verdict = attngeom.verify("linear", d=3, t=2, a=3)
    assert isinstance(verdict, Verdict)
    assert verdict.status is Status.PROVED and verdict.claim == "linear"
    assert verdict.params["d"] == 3 and verdict.params["a"] == 3
    assert str(verdict) == format_verdict(verdict)
    code, out, _ = run_cli("verify", "linear", "--d", "3", "--t", "2", "--a", "3")
    assert code == 0 and masked(out.rstrip("\n")) == masked(str(verdict))


def test_bad_parameters_raise_badinput_with_the_cli_message(run_cli):
    with pytest.raises(attngeom.BadInput) as error:
        attngeom.verify("linear", d=0, t=2)
    code, _, err = run_cli("verify", "linear", "--d", "0", "--t", "2")
    assert code == 2
    assert err.strip() == f"attngeom: error: {error.value}"
    assert issubclass(attngeom.BadInput, ValueError)
    assert attngeom.BadInput is __import__("attngeom.core.errors").core.errors.BadInput


@pytest.mark.parametrize("call, message", [
    (lambda: attngeom.verify("linearr", d=3, t=2), "unknown claim 'linearr'; did you mean 'linear'?"),
    (lambda: attngeom.verify("linear", d=3, t=2, foo=1), "does not take --foo"),
    (lambda: attngeom.verify("linear", d="x", t=2), "--d must be an integer"),
    (lambda: attngeom.verify("linear", d=3, t=2, method="fast"), "unknown method 'fast'"),
    (lambda: attngeom.verify("linear", d=3, t=2, backend="cupy"), "unknown backend 'cupy'"),
    (lambda: attngeom.verify("linear", d=3, t=2, samples=0), "--samples must be between 1"),
    (lambda: attngeom.show("linear", d=3, t=2, fmt="pdf"), "unknown format 'pdf'"),
    (lambda: attngeom.show("linear", d=3, t=2, limit=0), "--limit must be at least 1"),
    (lambda: attngeom.claims("XYZ"), "unknown source 'XYZ'"),
    (lambda: attngeom.curvature("sphere", layers=2), "does not take --layers"),
    (lambda: attngeom.ideal(2, 2, max_degree=0), "--max-degree must be at least 1"),
])
def test_every_function_refuses_bad_input_with_one_line(call, message):
    with pytest.raises(attngeom.BadInput) as error:
        call()
    assert message in str(error.value) and "\n" not in str(error.value)


def test_python_values_are_read_as_the_command_line_reads_them():
    as_list = attngeom.verify("dimension-deep", d=[2, 2, 2], a=(1, 1), t=2)
    as_text = attngeom.verify("dimension-deep", d="2,2,2", a="1,1", t="2")
    assert as_list.params == as_text.params
    assert as_list.params["d"] == (2, 2, 2) and as_list.status == as_text.status


def test_not_applicable_is_a_verdict_from_verify_and_an_exception_from_show():
    verdict = attngeom.verify("single-column-rank", d=2)
    assert verdict.status is Status.NOT_APPLICABLE and "d >= 3" in verdict.summary
    with pytest.raises(attngeom.NotApplicable, match="d >= 3"):
        attngeom.show("single-column-rank", d=2)


# -- show -------------------------------------------------------------------------------

def test_show_gives_the_polynomials_as_sympy_objects_with_provenance(run_cli):
    shown = attngeom.show("linear", d=3, t=2, limit=3)
    assert len(shown) == 3
    first = shown[0]
    assert isinstance(first.poly, sympy.Expr) and first.poly.free_symbols
    assert first.source == "ADM Prop 9" and first.family and "K" in first.indices
    assert first.poly.free_symbols <= set(shown.coords.symbols)
    for fmt in ("text", "m2", "latex", "json"):
        code, out, _ = run_cli("show", "linear", "--d", "3", "--t", "2", "--limit", "3",
                               "--format", fmt)
        assert code == 0
        assert out.rstrip("\n") == attngeom.show("linear", d=3, t=2, limit=3, fmt=fmt)
        assert out.rstrip("\n") == shown.text(fmt)
    markdown = shown._repr_markdown_()
    assert "| family |" in markdown and "ADM Prop 9" in markdown and markdown.count("\n| 3 |") == 1


def test_show_of_a_formula_claim_is_its_text(run_cli):
    shown = attngeom.show("gated-sphere")
    assert isinstance(shown, str)
    _, out, _ = run_cli("show", "gated-sphere")
    assert shown == out.rstrip("\n") == attngeom.show("gated-sphere", fmt="text")


# -- claims -----------------------------------------------------------------------------

def test_claims_lists_the_registry_as_the_cli_does(run_cli):
    listed = attngeom.claims()
    _, out, _ = run_cli("list")
    assert str(listed) == out.rstrip("\n")
    hmk = attngeom.claims("HMK")
    assert hmk and all(c["source"].startswith("HMK") for c in hmk)
    _, out, _ = run_cli("list", "--json", "--source", "HMK")
    assert json.loads(out) == list(hmk)
    assert "linear" in attngeom.claims("ADM").ids
    markdown = hmk._repr_markdown_()
    assert "| id | source | statement |" in markdown
    assert all(f"`{claim_id}`" in markdown for claim_id in hmk.ids)


# -- ideal ------------------------------------------------------------------------------

def test_ideal_report_table_markdown_and_m2(run_cli, tmp_path):
    report = attngeom.ideal(2, 2, max_degree=2, families="none")
    assert report.variety_dimension == 5
    assert report.by_degree("minimal_generators", nonzero=True) == {"1": 4}
    _, out, _ = run_cli("ideal", "--d", "2", "--t", "2", "--max-degree", "2",
                        "--families", "none", "--m2", tmp_path / "j.m2")
    cli_lines = [line for line in masked(out).splitlines() if "wrote" not in line]
    assert masked(str(report)).splitlines() == cli_lines
    m2 = report.to_m2()
    assert m2 == (tmp_path / "j.m2").read_text()
    assert len(m2.splitlines()) == 4 and "y_((" in m2
    markdown = report._repr_markdown_()
    assert "| k | monomials |" in markdown and "dim J_k" in markdown
    assert "| 1 | 10 | 4 |" in markdown and "4 in degree 1" in markdown and "HMK Cor 3.3" in markdown


def test_ideal_m2_file_and_families():
    report = attngeom.ideal(2, 2, max_degree=1, families=["linear"])
    rows = report.attribution["degrees"][0]["families"]
    assert [row["id"] for row in rows] == ["linear"]
    assert "family attribution" in report._repr_markdown_()


# -- dimension, curvature, errata -------------------------------------------------------

def test_dimension_is_the_verdict_of_the_dimension_claim(run_cli):
    verdict = attngeom.dimension(2, 2, 1)
    assert verdict.claim == "dimension-single-layer" and verdict.status.holds
    _, out, _ = run_cli("dimension", "--d", "2", "--t", "2", "--a", "1", "--json")
    assert json.loads(out)["measured_rank"] == verdict.evidence["measured_rank"]


def test_curvature_report_prints_as_the_cli(run_cli):
    report = attngeom.curvature("sphere", points=3)
    assert report.holds is True and len(report["K"]) == 3
    _, out, _ = run_cli("curvature", "sphere", "--points", "3")
    assert str(report) == out.rstrip("\n")
    deep = attngeom.curvature("normal-form", layers=2, amplitudes=[0.5, "1/4"], ambient=4,
                              points=2)
    _, out, _ = run_cli("curvature", "normal-form", "--layers", "2", "--amplitudes", "0.5,1/4",
                        "--ambient", "4", "--points", "2", "--json")
    assert json.loads(out) == json.loads(json.dumps(deep))


def test_errata_from_certificates(run_cli):
    report = attngeom.errata("HMK", certificates=str(ROOT / "certificates"))
    assert report.rows and all(row.paper == "HMK" for row in report.rows)
    _, out, _ = run_cli("errata", "--source", "HMK", "--certificates", ROOT / "certificates")
    assert str(report) == out.rstrip("\n")
    shown = report._repr_markdown_()          # the page's per-paper tables, without its title
    assert report.render("markdown").endswith(shown.split("\n", 1)[1])
    assert "| location | kind |" in shown and "# Errata of" not in shown


# -- certificates -------------------------------------------------------------------------

def test_certify_and_check_certificates_as_the_cli_does(run_cli, tmp_path):
    """certify writes the certificate the CLI writes (the same file name and verdict), keeps
    it when up to date, and check_certificates re-runs it as `check-certificates` does:
    the same text, JSON and JUnit; a tampered status fails, a file that is not a
    certificate is invalid (the CLI's exit codes 1 and 2)."""
    run = attngeom.certify("linear", d=3, t=2, a=3, out=str(tmp_path / "api"))
    assert len(run) == 1 and run[0]["status"] == "proved" and not run[0]["skipped"]
    code, out, _ = run_cli("certify", "linear", "--d", 3, "--t", 2, "--a", 3, "--out", tmp_path / "cli")
    name = Path(run[0]["file"]).name
    assert code == 0 and out.split()[-1].endswith(name) and (tmp_path / "cli" / name).is_file()
    again = attngeom.certify("linear", d=3, t=2, a=3, out=str(tmp_path / "api"))
    assert again[0]["skipped"] and "skipped (up to date)" in str(again)
    assert "| status | claim | seconds | file |" in run._repr_markdown_()

    check = attngeom.check_certificates(str(tmp_path / "api"))
    assert check.ok and not check.failed and not check.invalid
    assert str(check).endswith("1 of 1 certificates check out")
    code, out, _ = run_cli("check-certificates", tmp_path / "api")
    assert code == 0 and out.rstrip("\n") == str(check)
    code, out, _ = run_cli("check-certificates", tmp_path / "api", "--json")
    assert json.loads(out) == check.to_json()
    assert 'tests="1"' in check.junit() and "1 of 1" in check._repr_markdown_()

    path = tmp_path / "api" / name
    cert = json.loads(path.read_text())
    cert["verdict"]["status"] = "refuted"
    path.write_text(json.dumps(cert))
    (tmp_path / "api" / "not-a-certificate.json").write_text("[1, 2]")
    check = attngeom.check_certificates(str(tmp_path / "api"))
    assert not check.ok and len(check.failed) == 2 and [r.path.name for r in check.invalid] == ["not-a-certificate.json"]
    code, _, err = run_cli("check-certificates", tmp_path / "api")
    assert code == 2 and "not-a-certificate.json" in err


def test_certify_a_suite_of_chosen_claims(tmp_path):
    """suite="paper" with claim_ids as a list or a comma list: every example of those claims."""
    from attngeom.registry import REGISTRY
    run = attngeom.certify(suite="paper", claim_ids=["linear"], out=str(tmp_path))
    assert len(run) == len(REGISTRY.get("linear").examples) and {row["claim"] for row in run} == {"linear"}
    assert all(row["status"] in ("proved", "verified") for row in run)
    assert all(row["skipped"] for row in attngeom.certify(suite="paper", claim_ids="linear", out=str(tmp_path)))


@pytest.mark.parametrize("call, message", [
    (lambda out: attngeom.certify(out=out), "give either a CLAIM or --suite paper"),
    (lambda out: attngeom.certify("linear", suite="paper", out=out), "give either a CLAIM or --suite paper"),
    (lambda out: attngeom.certify("linear", d=3, t=2, claim_ids="linear", out=out), "choose the claims of --suite"),
    (lambda out: attngeom.certify(suite="paper", source="XYZ", out=out), "unknown source 'XYZ'"),
    (lambda out: attngeom.certify(suite="all", out=out), "unknown suite 'all'"),
    (lambda out: attngeom.certify("linear", d=0, t=2, out=out), "--d must be"),
    (lambda out: attngeom.check_certificates(out), "no *.json certificates"),
    (lambda out: attngeom.check_certificates(out + "/missing"), "is not a directory"),
])
def test_certificate_functions_refuse_bad_input_with_one_line(tmp_path, call, message):
    with pytest.raises(attngeom.BadInput) as error:
        call(str(tmp_path))
    assert message in str(error.value) and "\n" not in str(error.value)


# -- the verdict's markdown -------------------------------------------------------------

def test_verdict_markdown_shows_status_params_evidence_and_parts():
    verdict = attngeom.verify("linear", d=3, t=2, a=3)
    markdown = verdict._repr_markdown_()
    assert markdown.startswith("**proved**") and "`linear`" in markdown
    assert "ADM Prop 9" in markdown and "d=3 t=2 a=3" in markdown and "symbolic" in markdown
    assert "| key | value |" in markdown
    assert re.search(r"\| \*\*vanishing\*\* \| \*\*proved\*\* \(symbolic\)", markdown)
    assert re.search(r"\| \*\*cor10\*\* \| \*\*proved\*\* \(exact\)", markdown)
    assert "terms\\_before\\_cancellation" in markdown


def test_verdict_markdown_of_a_refutation_names_kind_counterexample_and_errata():
    wrong = refuted(method="exact", counterexample={"x": 2, "lhs": 5, "rhs": 4},
                    summary="eq (3) fails at x = 2",
                    erratum=Erratum(ErrorKind.FALSE_STATEMENT, "Paper Thm 1", "f(x) = x^2"))
    holds = proved(checked=1, summary="the identity expands to 0", evidence={"terms": 3})
    verdict = combine({"identity": holds, "eq3": wrong})
    verdict.claim, verdict.source, verdict.params = "demo", "Paper Thm 1", {"n": 3}
    markdown = verdict._repr_markdown_()
    assert markdown.startswith("**refuted (false statement)**")
    assert "counterexample" in markdown and '"lhs": 5' in markdown
    assert "**Errata**" in markdown and "Paper Thm 1" in markdown and "f(x) = x^2" in markdown
    assert re.search(r"\*\*eq3\*\* \| \*\*refuted\*\*", markdown)
    assert re.search(r"\*\*identity\*\* \| \*\*proved\*\*", markdown)
    assert "| pipe" not in markdown


# -- import time and the API page -------------------------------------------------------

def test_import_attngeom_loads_no_heavy_module():
    code = ("import sys, attngeom\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('sympy', 'torch', 'jax', "
            "'numpy', 'click', 'flint') or m.startswith(('attngeom.lightning_alg', "
            "'attngeom.geometry_proofs', 'attngeom.cli', 'attngeom.registry'))]\n"
            "assert not heavy, heavy\n"
            "attngeom.verify\n"
            "assert 'attngeom.api' in sys.modules and 'sympy' not in sys.modules\n"
            "assert callable(attngeom.ideal) and attngeom.BadInput.__name__ == 'BadInput'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_public_names_and_typing_marker():
    for name in ("verify", "show", "claims", "ideal", "dimension", "curvature", "errata",
                 "certify", "check_certificates", "BadInput", "NotApplicable", "__version__"):
        assert name in attngeom.__all__ and hasattr(attngeom, name)
    assert (ROOT / "attngeom" / "py.typed").is_file()
    for name in ("verify", "show", "claims", "ideal", "dimension", "curvature", "errata",
                 "certify", "check_certificates"):
        doc = getattr(attngeom, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert f"\n    {section}\n    ---" in doc, (name, section)
        assert getattr(attngeom, name).__annotations__.get("return")


def test_docs_api_is_not_stale():
    from attngeom.apidoc import render
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert page == render(), "docs/api.md is stale: python -m attngeom.apidoc > docs/api.md"


def test_the_docstring_examples_run():
    import doctest

    from attngeom import api
    result = doctest.testmod(api)
    assert result.failed == 0 and result.attempted >= 6


def test_lists_are_comma_lists_for_text_parameters_too():
    """verify passes a list as the command line's comma list, also to a text parameter
    (depth-amplification's --amplitudes), as the docstring promises."""
    verdict = attngeom.verify("depth-amplification", layers=4, amplitudes=["1", "1/2", "1/4", "3/4"])
    assert verdict.params["amplitudes"] == "1,1/2,1/4,3/4" and verdict.status.holds


def test_reports_have_one_line_reprs():
    report = attngeom.curvature("sphere", points=5)
    assert repr(report).startswith("CurvatureReport('sphere', 5 points") and "\n" not in repr(report)
    errata = attngeom.errata("ADM", certificates=str(ROOT / "certificates"))
    assert repr(errata).startswith("ErrataReport(") and "\n" not in repr(errata)
    shown = errata._repr_markdown_()
    assert "## ADM" in shown and "# Errata of the five papers" not in shown

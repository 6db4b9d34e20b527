"""The kinds of refutation (attngeom/core/erratum.py), how claims earn them, and the errata report
(attngeom/core/errata_report.py, `attngeom errata`, docs/errata.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attngeom import cli
from attngeom.geometry_proofs.gauge import dirac
from attngeom.geometry_proofs.gauge import gradients as G
from attngeom.core.certificate_compare import mask_numbers
from attngeom.core.claim import CheckContext
from attngeom.core.errata_report import errata_rows, render
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.verdict import Status, combine, consistent, refuted, with_erratum
from attngeom.core.verdict_format import format_verdict, verdict_line
from attngeom.lightning_alg.hmk import dimension as hmk_dimension

ROOT = Path(__file__).resolve().parents[1]


def verify(claim_id, method="auto", **params):
    return cli.REGISTRY.get(claim_id).verify(params, method, CheckContext(seed=0))


# -- the vocabulary -------------------------------------------------------------------------

def _witness(**kw):
    return refuted(method="numeric", counterexample={"x": 1}, summary="fails", **kw)


def test_kinds_that_name_a_correction_must_say_what_holds_and_how_it_was_checked():
    with pytest.raises(AssertionError):
        Erratum(ErrorKind.MISPRINTED_FORMULA, "eq (1)", "x = 1")
    with pytest.raises(AssertionError):
        Erratum(ErrorKind.MISSING_HYPOTHESIS, "eq (1)", "x = 1", correct="x = 2")
    assert Erratum(ErrorKind.FALSE_STATEMENT, "eq (1)", "x = 1").correct == ""


def test_a_proof_step_never_refutes_and_a_holding_verdict_takes_only_proof_steps():
    step = Erratum(ErrorKind.PROOF_STEP, "proof of Thm 1", "z = a * b", "z = a / b", "part x")
    wrong = Erratum(ErrorKind.FALSE_STATEMENT, "Thm 1", "K = 1")
    holds = consistent(checked=1, max_residual=0.0, tolerance=1e-9, summary="ok",
                       backend="numpy", device="cpu")
    with_erratum(holds, step)
    assert holds.status is Status.CONSISTENT and holds.error_kind is None
    with pytest.raises(AssertionError):
        with_erratum(holds, wrong)
    assert _witness(erratum=wrong).error_kind is ErrorKind.FALSE_STATEMENT
    # a refutation's own erratum comes first, whatever order they were attached in
    both = with_erratum(_witness(), step)
    with_erratum(both, wrong)
    assert [e.kind for e in both.errata] == [ErrorKind.FALSE_STATEMENT, ErrorKind.PROOF_STEP]


def test_combine_keeps_the_refuted_parts_errata_first():
    step = Erratum(ErrorKind.PROOF_STEP, "proof", "a", "b", "c")
    misprint = Erratum(ErrorKind.MISPRINTED_FORMULA, "eq (2)", "y = 1", "y = 2", "checked")
    holds = with_erratum(consistent(checked=1, max_residual=0.0, tolerance=1e-9, summary="ok",
                                    backend="numpy", device="cpu"), step)
    combined = combine({"a": holds, "b": _witness(erratum=misprint)})
    assert combined.error_kind is ErrorKind.MISPRINTED_FORMULA
    assert combined.errata == [misprint, step]
    assert combine({"a": holds}).errata == [step]


def test_the_kind_is_in_the_json_and_on_the_status_line():
    verdict = verify("gt-beta-gradient-mean", dim=2)
    data = verdict.to_json()
    assert data["status"] == "refuted" and data["error_kind"] == "misprinted-formula"
    assert data["errata"][0]["location"] == "GT eq (50)"
    assert format_verdict(verdict).startswith("refuted (misprinted formula)  gt-beta-gradient-mean")
    assert verdict_line(verdict).startswith("refuted (misprinted formula) gt-beta-gradient-mean")


def test_a_refutation_without_a_kind_is_recorded_as_a_false_statement():
    verdict = verify("gt-curvature-minimization")
    assert verdict.error_kind is ErrorKind.FALSE_STATEMENT
    assert verdict.errata[0].printed == cli.REGISTRY.get("gt-curvature-minimization").statement


# -- kinds earned by a check that runs --------------------------------------------------------

def test_misprinted_formula_needs_the_correction_to_hold(monkeypatch):
    """GT eq (50): the corrected sign is checked; when the correction is broken too (both
    signs printed), the refutation is only a false statement."""
    verdict = verify("gt-beta-gradient-mean", dim=2)
    assert verdict.evidence["erratum check"]["status"] == "proved"
    monkeypatch.setattr(G, "EQ15_SIGN", G.EQ50_SIGN)
    broken = verify("gt-beta-gradient-mean", dim=2)
    assert broken.status is Status.REFUTED and broken.error_kind is ErrorKind.FALSE_STATEMENT
    assert broken.evidence["erratum check"]["status"] == "refuted"


def test_missing_hypothesis_needs_the_condition_to_restore_the_statement(monkeypatch):
    """GT's Dirac limit holds for equal key norms (App. D.2's assumption): a missing
    hypothesis.  A printed limit that fails for equal norms too is a false statement."""
    verdict = verify("gt-dirac-limit", key_norms="unequal")
    assert verdict.error_kind is ErrorKind.MISSING_HYPOTHESIS
    assert verdict.evidence["erratum check"]["params"] == {"key_norms": "equal"}
    monkeypatch.setattr(dirac, "printed_limit",
                        lambda mu, frames, c, be: dirac.corrected_limit(2 * mu, frames, c, be))
    assert verify("gt-dirac-limit", key_norms="unequal").error_kind is ErrorKind.FALSE_STATEMENT


def test_missing_hypothesis_of_gec_thm_3_2():
    verdict = verify("curvature-lower-bound", variant="printed")
    assert verdict.error_kind is ErrorKind.MISSING_HYPOTHESIS
    assert "affine chart" in verdict.errata[0].correct


def test_hmk_eq14_is_a_misprint_only_while_the_corrected_formula_is_the_rank(monkeypatch):
    verdict = verify("dimension-deep", d="4,2,3", a="2,2", t=3)
    assert [e.location for e in verdict.errata] == ["HMK eq (14)", "HMK eq (5)"]
    assert verdict.error_kind is ErrorKind.MISPRINTED_FORMULA
    import attngeom.lightning_alg.claims.hmk as hmk_claims
    monkeypatch.setattr(hmk_claims, "deep_dimension_corrected",
                        lambda arch, delta: hmk_dimension.deep_dimension_corrected(arch, delta) + 1)
    assert verify("dimension-deep", d="4,2,3", a="2,2", t=3).error_kind is ErrorKind.FALSE_STATEMENT


def test_adm_thm27_proof_entries_and_hmk_lemma_a3():
    entries = verify("flattening-entries", d=3, t=2, a=3)
    assert entries.error_kind is ErrorKind.MISPRINTED_FORMULA and "lie-flattening" in entries.errata[0].correct
    lemma = verify("singular-locus", d="2", t=2)
    assert lemma.error_kind is ErrorKind.MISPRINTED_FORMULA
    assert lemma.errata[0].location == "HMK Lemma A.3"


def test_the_gloss_of_gec_thm_3_1_is_a_false_statement():
    verdict = cli.REGISTRY.get("ungated-flat").verify({"values": 4}, "auto", CheckContext(seed=0, samples=30))
    assert verdict.error_kind is ErrorKind.FALSE_STATEMENT
    assert "§3.1" in verdict.errata[0].location


# -- the report -------------------------------------------------------------------------------

def _verdict_json(claim, source, kind, location, printed, status="refuted", summary="w 1.5"):
    correct, check = ("", "") if kind == "false-statement" else ("holds", "checked")
    return {"claim": claim, "source": source, "status": status, "summary": summary,
            "params": {"d": 2}, "errata": [{"kind": kind, "location": location,
                                            "printed": printed, "correct": correct,
                                            "check": check}]}


def test_rows_are_deduplicated_per_claim_and_listed_in_paper_order():
    verdicts = [_verdict_json("b", "RGT Alg 1", "missing-hypothesis", "RGT Alg 1", "eta free"),
                _verdict_json("a", "ADM Thm 27", "false-statement", "ADM Thm 27", "x = 1"),
                _verdict_json("a", "ADM Thm 27", "false-statement", "ADM Thm 27", "x = 1",
                              summary="w 2.5"),
                {"claim": "c", "source": "GT eq 1", "status": "proved", "errata": []}]
    rows = errata_rows(verdicts)
    assert [(r.claim, r.examples, r.witness) for r in rows] == [("a", 2, "w 1.5"), ("b", 1, "w 1.5")]
    for fmt in ("text", "markdown", "json"):
        out = render(rows, fmt, 3, 4, "test")
        assert "eta free" in out and "x = 1" in out
    assert json.loads(render(rows, "json", 3, 4, "test"))["errata"][0]["kind"] == "false-statement"


def test_cli_errata_one_paper_from_certificates(run_cli):
    code, out, err = run_cli("errata", "--source", "HMK", "--certificates",
                             str(ROOT / "certificates"), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    locations = {row["location"] for row in report["errata"]}
    assert {"HMK eq (14)", "HMK Lemma A.3"} <= locations
    assert all(row["paper"] == "HMK" for row in report["errata"])


def test_cli_errata_bad_input(run_cli, tmp_path):
    code, _, err = run_cli("errata", "--certificates", str(tmp_path))
    assert code == 2 and "no certificate" in err and "Traceback" not in err
    code, _, err = run_cli("errata", "--format", "pdf")
    assert code == 2


def test_docs_errata_is_not_stale(run_cli):
    """docs/errata.md is `attngeom errata --format markdown --certificates certificates`
    (the certificates are themselves re-run in CI); numbers compare masked, as a
    certificate's summary does, so a last-bit change of a witness on another BLAS does not
    make it stale.  Regenerate with that command when this fails."""
    code, out, err = run_cli("errata", "--format", "markdown", "--certificates",
                             str(ROOT / "certificates"))
    assert code == 0, err
    committed = (ROOT / "docs" / "errata.md").read_text()
    assert mask_numbers(committed) == mask_numbers(out.rstrip("\n") + "\n"), (
        "docs/errata.md is stale: attngeom errata --format markdown --certificates "
        "certificates > docs/errata.md")


def test_a_misnomer_is_attached_to_a_verdict_that_holds():
    """RGT §5.2.2 calls one iteration of Algorithm 1 'the Einstein midpoint': a wrong name,
    no wrong mathematics; the verdict holds and carries the erratum."""
    verdict = verify("einstein-midpoint-shortcut", d=2, curvature="1/2", radius="1", tokens=5)
    assert verdict.status is Status.CONSISTENT and verdict.error_kind is None
    assert [e.kind for e in verdict.errata] == [ErrorKind.MISNOMER]
    assert format_verdict(verdict).startswith("consistent (erratum: misnomer)")
    assert not ErrorKind.MISNOMER.refutes
    with pytest.raises(AssertionError):
        Erratum(ErrorKind.MISNOMER, "x", "a name")          # says what the object is


def test_re_run_and_certificates_give_the_same_report(run_cli):
    """`attngeom errata` re-runs the claims; with --certificates it reads their verdicts:
    the tables agree (numbers masked) apart from the line that says where they came from."""
    tables = []
    for extra in ((), ("--certificates", str(ROOT / "certificates"))):
        code, out, err = run_cli("errata", "--source", "HMK", "--format", "markdown", *extra)
        assert code == 0, err
        tables.append([mask_numbers(line) for line in out.splitlines() if "verdicts of" not in line])
    assert tables[0] == tables[1] and any("`dimension-deep`" in line for line in tables[0])


def test_a_correction_outside_the_hypotheses_grants_no_kind(monkeypatch):
    """The correction's run is checked against the claim's hypotheses first: there it is
    not-applicable, and the refutation stays a false statement (no crash, no kind)."""
    claim = cli.REGISTRY.get("gt-beta-gradient-mean")
    monkeypatch.setattr(type(claim), "hypothesis_violation",
                        lambda self, params: "test hypothesis" if params.get("variant") == "corrected" else None)
    verdict = verify("gt-beta-gradient-mean", dim=2)
    assert verdict.error_kind is ErrorKind.FALSE_STATEMENT
    assert verdict.evidence["erratum check"]["status"] == "not-applicable"


def test_a_refuted_expectation_of_this_project_is_no_paper_erratum():
    """The errata report lists printed statements of the five papers only: a refuted claim
    whose source is attngeom's own expectation (``multihead-join``) is left out, the same
    verdict with a paper's source is listed."""
    erratum = {"location": "x", "kind": "false-statement", "printed": "p", "correct": "", "check": ""}
    ours = {"claim": "multihead-join", "status": "refuted", "errata": [erratum],
            "source": "attngeom (issue 24): expected join dimension"}
    assert errata_rows([ours]) == []
    assert [row.paper for row in errata_rows([{**ours, "source": "HMK §5"}])] == ["HMK"]

"""The CLI contract: commands, exit codes 0/1/2, one-line errors, JSON verdicts."""

import json

import pytest

from tests.test_linear import EXAMPLE_12


def test_verify_linear_proved(run_cli):
    code, out, err = run_cli("verify", "linear", "--d", 3, "--t", 2, "--a", 3)
    assert code == 0 and out.startswith("proved  linear") and err == ""


def test_verify_exact_prints_failure_bound(run_cli):
    code, out, _ = run_cli("verify", "linear", "--d", 6, "--t", 4, "--a", 2, "--method", "exact")
    assert code == 0 and out.startswith("verified") and "failure probability <=" in out


def test_json_verdict(run_cli):
    code, out, _ = run_cli("verify", "linear", "--d", 2, "--t", 2, "--a", 2, "--json")
    data = json.loads(out)
    assert code == 0 and data["claim"] == "linear" and data["status"] == "proved"
    assert data["params"]["d"] == 2 and data["version"] == "0.1.0"


def test_show_m2_round_trips_through_verify_poly(run_cli):
    code, out, _ = run_cli("show", "linear", "--d", 2, "--t", 2, "--a", 2, "--format", "m2")
    assert code == 0 and out.splitlines() == EXAMPLE_12
    for line in out.splitlines():
        code, verdict, _ = run_cli("verify-poly", line, "--d", 2, "--t", 2, "--a", 2)
        assert code == 0 and verdict.startswith("proved")


def test_show_formats(run_cli):
    for fmt in ("text", "latex", "json"):
        code, out, _ = run_cli("show", "linear", "--d", 2, "--t", 3, "--format", fmt, "--limit", 2)
        assert code == 0 and out.strip()
    assert len(json.loads(run_cli("show", "linear", "--d", 3, "--t", 2, "--format", "json")[1])) == 10
    code, out, _ = run_cli("show", "coefficients", "--d", 2, "--t", 2, "--format", "m2")
    assert code == 0 and "y_((1,2),(2,2),(1,1)) => a_(1,1)*v_(1,2)/2 + a_(2,1)*v_(1,1)/2" in out


def test_verify_poly_refutes_with_witness(run_cli):
    code, out, _ = run_cli("verify-poly", "y_((1,1),(1,1),(1,1)) - 2*y_((1,2),(1,2),(1,1))",
                           "--d", 2, "--t", 2, "--a", 2, "--method", "exact", "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "refuted"
    weights = data["counterexample"]["weights"]
    a11, v1 = weights["A"][0][0], weights["V"][0][0]
    assert data["counterexample"]["value"] == str(a11 * v1 - 2 * a11 * v1)


def test_verify_poly_accepts_a_leading_minus(run_cli):
    code, out, _ = run_cli("verify-poly", "-y_((1,1),(1,1),(1,1)) + y_((1,2),(1,2),(1,1))",
                           "--d", 2, "--t", 2)
    assert code == 0 and out.startswith("proved")
    code, _, err = run_cli("verify-poly", "y_((1,1),(1,1),(1,1))", "--dd", 2, "--t", 2)
    assert code == 2 and err.count("\n") == 1


def test_list(run_cli):
    code, out, _ = run_cli("list", "--source", "ADM", "--json")
    assert code == 0 and {"linear", "monomial-count", "coefficients"} <= {c["id"] for c in json.loads(out)}


@pytest.mark.parametrize("args", [
    ("verify", "linear", "--d", 0, "--t", 2),
    ("verify", "linear", "--d", 3, "--t", -1),
    ("verify", "no-such-claim", "--d", 2, "--t", 2),
    ("verify", "linear", "--d", 2, "--t", 2, "--dprime", 0),
    ("verify", "linear", "--d", 100000, "--t", 2),
    ("verify", "linear", "--d", 3),
    ("verify", "linear", "--d", "x", "--t", 2),
    ("verify", "linear", "--d", 3, "--t", 2, "--no-such-option", 1),
    ("verify", "linear", "--d", 3, "--t", 2, "--method", "guess"),
    ("verify", "linear", "--d", 3, "--t", 2, "--row", 2),
    ("verify", "linear", "--d", 3, "--t", 2, "--context", 1),
    ("verify", "monomial-count", "--d", 3, "--t", 2, "--a", 2),
    ("verify", "linear", "--d", 3, "--t", 2, "--backend", "numpy", "--device", "cuda", "--method", "numeric"),
    ("verify-poly", "y_((1,1),(1,1),(1,1)) +", "--d", 2, "--t", 2),
    ("verify-poly", "y_((3,1),(1,1),(1,1))", "--d", 2, "--t", 2),
])
def test_bad_input_is_one_line_and_exit_2(run_cli, args):
    code, out, err = run_cli(*args)
    assert code == 2 and out == ""
    assert err.startswith("attngeom: error:") and err.count("\n") == 1 and "Traceback" not in err


LINEAR_T1 = ("linear", "--d", 3, "--t", 1)
LINEAR_T1_LINE = ("attngeom: not-applicable: ADM Prop 9 needs a context column n != j, "
                  "so t >= 2; got t=1\n")


@pytest.mark.parametrize("command", ["verify", "show"])
def test_not_applicable_is_one_line_on_stderr_and_exit_2(run_cli, command):
    assert run_cli(command, *LINEAR_T1) == (2, "", LINEAR_T1_LINE)


def test_not_applicable_json_verdict_stays_on_stdout(run_cli):
    code, out, err = run_cli("verify", *LINEAR_T1, "--json")
    verdict = json.loads(out)
    assert code == 2 and err == LINEAR_T1_LINE
    assert verdict["status"] == "not-applicable" and verdict["params"]["t"] == 1
    assert f"attngeom: not-applicable: {verdict['evidence']['hypothesis']}\n" == err


@pytest.mark.parametrize("as_json", [False, True])
def test_dimension_not_applicable_agrees(run_cli, as_json):
    code, out, err = run_cli("dimension", "--d", "3,3,3", "--a", 2, "--t", 2,
                             *(["--json"] if as_json else []))
    assert code == 2 and err == "attngeom: not-applicable: HMK Cor 3.8 needs t >= 3; got t=2\n"
    if as_json:
        report = json.loads(out)
        assert report["status"] == "not-applicable" and report["verdict"]["status"] == "not-applicable"
    else:
        assert out == ""


def test_help_and_version(run_cli):
    assert run_cli("--help")[0] == 0
    code, out, _ = run_cli("--version")
    assert code == 0 and "0.1.0" in out


def test_verify_poly_bounds_its_work(run_cli):
    """Issue 29: a huge exponent is refused at once; a symbolic check that would multiply
    out too many terms is refused, and auto evaluates exactly instead."""
    code, out, err = run_cli("verify-poly", "y_((1,1),(1,1),(1,1))^999999999 - 1", "--d", 2, "--t", 2)
    assert code == 2 and err.startswith("attngeom: error: the exponent 999999999")
    big = "(y_((1,1),(2,1),(2,1)) + y_((1,2),(2,2),(2,1)) + y_((1,2),(2,2),(1,1)))^20"
    code, out, err = run_cli("verify-poly", big, "--d", 2, "--t", 2, "--method", "symbolic")
    assert code == 2 and "use --method exact" in err and len(err.splitlines()) == 1
    code, out, err = run_cli("verify-poly", big, "--d", 2, "--t", 2, "--json")
    assert code == 1 and '"method": "exact"' in out

"""Hostile or malformed inputs answered with one line (issue 49): values outside the
domain, floating-point overflow, wrong types through the Python API."""

from __future__ import annotations

import pytest

import attngeom


@pytest.mark.parametrize("psi, words", [
    ("log(0) + u^2", "infinite or undefined"),
    ("log(-1) + u^2", "complex"),
    ("sqrt(-1) * u^2", "complex"),
    ("(-8)^(1/3) * u^2", "root of a negative number"),
])
def test_values_outside_the_domain_are_refused(run_cli, psi, words):
    code, out, err = run_cli("curvature", "normal-form", "--psi", psi)
    assert code == 2 and words in err and len(err.splitlines()) == 1


def test_nested_exponentials_are_refused_before_any_work(run_cli):
    """exp(exp(exp(exp(u + 100)))): a traceback on some PYTHONHASHSEEDs, a hang on others
    (SymPy evaluating numbers of ~10^43 digits) before the nesting limit."""
    code, out, err = run_cli("verify", "graph-curvature", "--psi", "exp(exp(exp(exp(u+100))))")
    assert code == 2 and "nests exp-like functions" in err and len(err.splitlines()) == 1


def test_overflow_is_one_line(run_cli, monkeypatch):
    from attngeom.geometry_proofs.gating import depth

    def overflow(*args, **kwargs):
        raise OverflowError("math range error")
    monkeypatch.setattr(depth.GraphCurvatureClaim, "validate", overflow)
    code, out, err = run_cli("verify", "graph-curvature")
    assert code == 2 and "floating-point overflow" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("call", [
    lambda: attngeom.verify(12345),
    lambda: attngeom.show(None),
    lambda: attngeom.ideal(2, 2, 2, families=123),
    lambda: attngeom.check_certificates(None),
])
def test_wrong_types_through_the_api_are_bad_input(call):
    with pytest.raises(attngeom.BadInput):
        call()


@pytest.mark.parametrize("args, words", [
    (["embed-tree", "path:5", "--eps", "1e-100"], "below 0.0001"),
    (["verify", "tree-hyperbolic-distortion", "--tree", "path:5", "--eps", "1e-100"], "below 0.0001"),
    (["ideal", "--d", "2", "--t", "2", "--attribution-budget", "1e308"], "'none' for no limit"),
])
def test_values_that_would_overflow_the_work_are_refused(run_cli, args, words):
    code, out, err = run_cli(*args)
    assert code == 2 and words in err and len(err.splitlines()) == 1

"""Work bombs refused up front with one line and exit 2 (issue 49): nested powers in
expressions and polynomials, too many distinct labels."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("psi, words", [
    ("((((2*u)^64)^64)^64)^64", "powers of powers multiply"),
    ("((u+1)^64)^64", "bits"),
    ("(((u*v)^16)^16)", "degree about 512"),
])
def test_nested_powers_in_psi_are_refused(run_cli, psi, words):
    code, out, err = run_cli("curvature", "normal-form", "--psi", psi)
    assert code == 2 and words in err and len(err.splitlines()) == 1


def test_an_ordinary_psi_with_powers_still_runs(run_cli):
    code, out, err = run_cli("curvature", "normal-form", "--psi", "1/4 + (u^2 + v^2/3)^2 / 5")
    assert code in (0, 1) and "error" not in err, err


def test_nested_number_powers_in_a_polynomial_are_refused(run_cli):
    code, out, err = run_cli("verify-poly", "--d", 2, "--t", 2,
                             "((((2^64)^64)^64)^64)^64 * y_((1,1),(1,1),(1,1))")
    assert code == 2 and "coefficients of" in err and len(err.splitlines()) == 1


def test_too_many_distinct_labels_are_refused():
    from attngeom.core.errors import BadInput
    from attngeom.lightning_alg import polynomial_io
    from attngeom.lightning_alg.coordinates import CoordinateSystem
    coords = CoordinateSystem(2, 2)
    labels = polynomial_io.MAX_LABELS
    polynomial_io.MAX_LABELS = 3
    try:
        text = ("y_((2,1),(2,1),(2,1)) + y_((2,2),(2,2),(2,1)) + y_((1,1),(2,1),(2,1)) "
                "+ y_((1,2),(2,2),(2,1))")
        with pytest.raises(BadInput, match="4 distinct coordinates"):
            polynomial_io.parse_polynomial(text, coords)
    finally:
        polynomial_io.MAX_LABELS = labels

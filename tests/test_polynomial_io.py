"""Reading Macaulay2-syntax polynomials in the coefficient coordinates."""

import re

import pytest
import sympy

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariant import format_polynomial
from attngeom.lightning_alg.labels import Label
from attngeom.lightning_alg.polynomial_io import parse_polynomial

COORDS = CoordinateSystem(2, 2)


def sym(*pairs, coords=COORDS, row=1):
    return coords.symbol(Label.from_pairs(pairs, row))


def test_arithmetic_and_label_forms():
    y1, y2 = sym((1, 1), (1, 1), (1, 1)), sym((1, 2), (2, 2), (2, 1))
    cases = {
        "y_((1,1),(1,1),(1,1)) - 2*y_((1,2),(2,2),(2,1))": y1 - 2 * y2,
        "y_((1,2),(2,1),(2,2))^2/3 - (1/2)*y_((1,1),(1,1),(1,1))": y2**2 / 3 - y1 / 2,
        "-(y_{(1,1),(1,1),(1,1)} + 3)*y_{(1,2),(2,2),(2,1)}": -(y1 + 3) * y2,
        " 7 ": sympy.Integer(7),
        "3 y_{(1,2),(2,2),(2,1)} - 2 y_{(1,1),(1,1),(1,1)}": 3 * y2 - 2 * y1,
    }
    for text, expected in cases.items():
        assert sympy.expand(parse_polynomial(text, COORDS) - expected) == 0


def test_round_trip_through_every_format():
    y1, y2 = sym((1, 1), (1, 1), (1, 1)), sym((1, 2), (2, 2), (2, 1))
    poly = sympy.Rational(3, 2) * y1**2 * y2 - y2 + 4
    for fmt in ("m2", "text"):
        assert sympy.expand(parse_polynomial(format_polynomial(poly, COORDS, fmt), COORDS) - poly) == 0


def test_rows_in_labels():
    coords = CoordinateSystem(2, 2, dprime=2, all_outputs=True)
    expr = parse_polynomial("y_(2,(1,2),(2,2),(2,1)) - y^{[1]}_{(1,1),(1,1),(1,1)}", coords)
    assert expr == sym((1, 2), (2, 2), (2, 1), coords=coords, row=2) - sym((1, 1), (1, 1), (1, 1), coords=coords)
    with pytest.raises(BadInput, match="needs its output row"):
        parse_polynomial("y_((1,1),(1,1),(1,1))", coords)


@pytest.mark.parametrize("text,message", [
    ("y_((1,1),(1,1),(1,1)) +", "end of input"),
    ("2 ** y_((1,1),(1,1),(1,1))", "column 4"),
    ("y_((1,1),(1,1),(1,1)) / y_((1,1),(1,1),(1,1))", "nonzero constant"),
    ("y_((1,3),(1,1),(1,1))", "not a coordinate"),
    ("y_((1,1),(1,2),(1,3))", "no lightning coefficient"),
    ("x_((1,1),(1,1),(1,1))", "cannot read"),
    ("(y_((1,1),(1,1),(1,1))", "missing"),
    ("", "empty"),
    ("y_((1,1),(1,1),(1,1))^(2)", "exponent"),
])
def test_errors_are_one_clear_line(text, message):
    with pytest.raises(BadInput, match=message) as err:
        parse_polynomial(text, COORDS)
    assert "\n" not in str(err.value)


Y = "y_((1,1),(1,1),(1,1))"
SUM = "(y_((1,1),(1,1),(1,1)) + y_((1,2),(1,2),(1,1)) + y_((2,2),(2,2),(1,1)) + 1)"


@pytest.mark.parametrize("text,message", [
    (f"{Y}^999999999 - 1", "exponent 999999999 at column 23 is beyond"),
    (f"(({Y}^8)^8)^8", "total degree 128; the limit is 64"),
    (f"{SUM}^40 * {SUM}^20", "the limit is 4,000,000 term pairs"),
    ("(" * 60 + Y + ")" * 60, "nesting deeper than 50"),
    (f"{Y} \uff0b 1", "non-ASCII character '\\uff0b' at column 23"),
    ("9" * 101, "the limit is 100"),
])
def test_work_is_bounded_before_it_is_done(text, message):
    with pytest.raises(BadInput, match=re.escape(message)):
        parse_polynomial(text, COORDS)


def test_a_power_within_the_limits_expands_exactly():
    y1 = sym((1, 1), (1, 1), (1, 1))
    assert parse_polynomial(f"({Y} - 1)^64", COORDS) == sympy.expand((y1 - 1) ** 64)

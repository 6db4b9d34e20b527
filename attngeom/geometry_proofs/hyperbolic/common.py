"""What the RGT geometry claims share: parameters, parsing of real-valued options, the
claim base class and seeded point samplers (``show`` rendering and the residual rule are
:mod:`attngeom.geometry_proofs.claim_support`'s)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attngeom.geometry_proofs.claim_support import LimitedClaim, format_value
from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.core.claim import Param
from attngeom.core.errors import BadInput
from attngeom.core.expressions import MAX_TEXT_LENGTH, parse_rational

#: The curvature and the sampling radius default to generic values, not 1 (issue 48; the charter:
#: "never c = 1 unless the claim is about it"): at c = 1 a factor or an exponent on c or
#: sqrt(c) in a paper-side formula (eqs 8-12, 28, 36) is invisible, and at radius 1 one on r.
#: A claim that is about c = 1 replaces the default and says why in ``identity_values``.
CURVATURE = Param("curvature", "curvature parameter c > 0 of the Poincare ball B_c^d (sectional "
                  "curvature -c; RGT), a number or a rational such as 1/2", default="3/2", kind="str")
BALL_DIM = Param("d", "dimension d of the Poincare ball B_c^d (RGT)", default=2)
RADIUS = Param("radius", "geodesic radius r of the sampled points around their centre (RGT), "
               "a number", default="5/4", kind="str")
POINT = Param("point", "a point of the ball as a comma list, e.g. 0.3,-0.2 (must satisfy "
              "c|x|^2 < 1; RGT)", default=None, kind="str")
ETA = Param("eta", "step size eta of RGT Algorithm 1 (a number > 0)", default="1", kind="str")
TOKENS = Param("tokens", "sequence length N (RGT attention)", default=64)


def parse_real(text: Any, name: str, positive: bool = True) -> float:
    """A float from '0.5', '1/2', '1e-3' (:func:`attngeom.core.expressions.parse_rational`;
    BadInput otherwise; > 0 when ``positive``)."""
    value = float(parse_rational(text, f"--{name}"))
    if not math.isfinite(value):
        raise BadInput(f"--{name} must be finite; got {text!r}")
    if positive and not value > 0:
        raise BadInput(f"--{name} must be > 0; got {text!r}")
    return value


def parse_curvature(text: Any) -> float:
    """c > 0 (the ball B_c^d has curvature -c): BadInput with one line otherwise."""
    value = float(parse_rational(text, "--curvature"))
    return poincare.check_curvature(value)


def parse_point(text: str | None, d: int, c: float) -> np.ndarray | None:
    """The --point option as a NumPy vector of the ball (BadInput if outside or wrong size)."""
    if text is None:
        return None
    if len(str(text)) > MAX_TEXT_LENGTH:
        raise BadInput(f"--point has {len(str(text)):,} characters; the limit is {MAX_TEXT_LENGTH:,}")
    point = np.array([float(parse_rational(p, "--point")) for p in str(text).split(",")])
    if point.shape != (d,):
        raise BadInput(f"--point has {point.size} coordinates; the ball has d={d}")
    poincare.check_in_ball(point, c, "--point")
    return point


#: Largest --radius (geodesic distance from the origin) the float64 checks resolve: at r = 8,
#: 1 - sqrt(c)|x| ~ 7e-4, and the checks compose points up to 2r from the origin.
MAX_RADIUS = 8.0


class RGTClaim(LimitedClaim):
    """An RGT geometry claim; parameters beyond ``limits`` are refused (BadInput), real-valued
    options are parsed and the point must lie in the ball."""

    def validate(self, params):
        super().validate(params)
        if "curvature" in params:
            parse_curvature(params["curvature"])
        if "radius" in params and parse_real(params["radius"], "radius") > MAX_RADIUS:
            raise BadInput(f"--radius {params['radius']} is beyond float64 resolution: points that far "
                           f"from the origin have 1 - sqrt(c)|x| ~ 2e^(-r); use --radius <= {MAX_RADIUS:g}")
        if "eta" in params:
            parse_real(params["eta"], "eta")
        if "point" in params:
            parse_point(params["point"], params.get("d", 2), parse_curvature(params.get("curvature", "1")))


def fmt(value) -> str:
    """A number for a summary as a float: :func:`~attngeom.geometry_proofs.claim_support.format_value`
    (9 decimals, 6 significant digits, stable across machines)."""
    return format_value(float(value))


def as_list(array, digits: int = 12) -> list:
    """A NumPy array as nested lists of floats rounded to ``digits`` (witnesses in JSON)."""
    return np.round(np.asarray(array, dtype=float), digits).tolist()

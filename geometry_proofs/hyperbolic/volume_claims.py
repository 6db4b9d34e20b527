"""RGT §7.1.1: the volume growth of geodesic balls in H^d."""

from __future__ import annotations

import math

import numpy as np
import sympy

from geometry_proofs.claim_support import render_items
from geometry_proofs.hyperbolic import volume
from geometry_proofs.hyperbolic.common import BALL_DIM, CURVATURE, RGTClaim, fmt, parse_curvature
from kernels.verdict import combine, consistent, proved, refuted


class VolumeGrowthClaim(RGTClaim):
    """RGT §7.1.1: "Vol(B_r) ∝ e^{(d-1) r}" in H^d (curvature -c, the ball of §4.4.1).

    The exact volume is omega_{d-1} int_0^r (sinh(sqrt(c) t)/sqrt(c))^{d-1} dt.
    ``symbolic`` (d <= 6): SymPy integrates it in closed form and takes
    L = lim_{r->oo} Vol(B_r) e^{-(d-1) sqrt(c) r} (positive and finite: the true rate is
    (d-1) sqrt(c)) and P = lim Vol(B_r) e^{-(d-1) r}, the printed rate: proved when P is
    positive and finite (c = 1; proportionality then holds asymptotically only, the ratio at
    r = 1 is reported), refuted (P = 0 or oo) otherwise.  ``numeric``: the sinh formula
    against quadrature of the volume element lambda^d of metric (8), and the growth rate
    fitted on r in [20/sqrt(c), 40/sqrt(c)].
    """

    id = "hyperbolic-volume-growth"
    source = "RGT §7.1.1"
    statement = "The volume of a geodesic ball of radius r in H^d grows like e^{(d-1) r}."
    params = (BALL_DIM, CURVATURE)
    methods = ("symbolic", "numeric")
    limits = {"d": 64}
    examples = ({"d": 2, "curvature": "1"}, {"d": 3, "curvature": "1"}, {"d": 3, "curvature": "4"},
                {"d": 10, "curvature": "1/4", "method": "numeric"})

    def hypothesis_violation(self, params):
        if params["d"] < 2:
            return f"volume growth e^((d-1) r) concerns H^d with d >= 2; got d={params['d']}"
        return None

    def check_symbolic(self, params, context):
        d = params["d"]
        if d > 6:
            return self.check_numeric(params, context)
        c = sympy.nsimplify(params["curvature"])
        parse_curvature(params["curvature"])
        r = sympy.Symbol("r", positive=True)
        vol = volume.volume_symbolic(d, c, r)
        true_limit = sympy.limit(vol * sympy.exp(-(d - 1) * sympy.sqrt(c) * r), r, sympy.oo)
        printed_limit = sympy.limit(vol * sympy.exp(-(d - 1) * r), r, sympy.oo)
        ratio_at_1 = sympy.N(vol.subs(r, 1) * sympy.exp(-(d - 1)), 12)
        evidence = {"volume": str(sympy.simplify(vol)), "rate": str((d - 1) * sympy.sqrt(c)),
                    "limit_true_rate": str(true_limit), "limit_printed_rate": str(printed_limit),
                    "ratio_at_r=1": str(ratio_at_1)}
        if not (true_limit.is_positive and true_limit.is_finite):
            return refuted(method="symbolic", summary=f"the exact volume does not grow like e^(d-1) sqrt(c) r: limit {true_limit}",
                           counterexample=evidence)
        if printed_limit.is_positive and printed_limit.is_finite:
            return proved(checked=2, evidence=evidence, summary=(
                f"Vol(B_r) = {sympy.simplify(vol)} in H^{d}(-{c}); Vol e^(-(d-1) r) -> {printed_limit}: "
                f"e^((d-1) r) growth holds asymptotically (the ratio is {fmt(ratio_at_1)} at r = 1, "
                f"not constant)"))
        return refuted(method="symbolic", evidence=evidence, counterexample={"d": d, "c": str(c), **evidence},
                       summary=(f"in H^{d} of curvature -{c}, Vol(B_r) e^(-(d-1) r) -> {printed_limit}: the "
                                f"growth rate is (d-1) sqrt(c) = {(d - 1) * sympy.sqrt(c)}, not d-1 "
                                f"(Vol ~ {true_limit} e^({(d - 1) * sympy.sqrt(c)} r))"))

    def check_numeric(self, params, context):
        d, c = params["d"], parse_curvature(params["curvature"])
        radii = [0.5, 1.0, 2.0]
        agree = max(abs(volume.volume_numeric(d, c, r) / volume.volume_from_metric(d, c, r) - 1) for r in radii)
        far = np.array([20.0, 30.0, 40.0]) / math.sqrt(c)
        logs = [math.log(volume.volume_numeric(d, c, r)) for r in far]
        slope = float(np.polyfit(far, logs, 1)[0])
        part_formula = consistent(checked=len(radii), max_residual=agree, tolerance=1e-9, backend="numpy",
                                  device="cpu", summary="the sinh formula equals the volume of metric (8)")
        rate_error = abs(slope - (d - 1)) / (d - 1)
        evidence = {"fitted_rate": round(slope, 6), "printed_rate": d - 1,
                    "formula_vs_metric_8": "agree" if agree <= 1e-9 else f"differ by {agree:.3g}",
                    "true_rate": round((d - 1) * math.sqrt(c), 9)}
        if rate_error <= 1e-3:
            return combine({"sinh-formula": part_formula,
                            "rate": consistent(checked=3, max_residual=rate_error, tolerance=1e-3,
                                               backend="numpy", device="cpu", evidence=evidence,
                                               summary="fitted rate = d - 1")},
                           summary=f"Vol(B_r) grows like e^({fmt(slope)} r), the printed rate d-1 = {d - 1}")
        return refuted(method="numeric", backend="numpy", device="cpu", evidence=evidence,
                       counterexample={"d": d, "c": c, "radii": far.tolist(), "log_volumes": [round(v, 9) for v in logs]},
                       summary=(f"log Vol(B_r) grows with slope {fmt(slope)} in H^{d}(-{fmt(c)}), not d-1 = {d - 1}: "
                                f"the rate is (d-1) sqrt(c) = {fmt((d - 1) * math.sqrt(c))}"))

    def show(self, params, fmt="text", limit=None):
        return render_items([("Vol(B_r)", "omega_{d-1} int_0^r (sinh(sqrt(c) t)/sqrt(c))^{d-1} dt"),
                             ("omega_{d-1}", "2 pi^{d/2} / Gamma(d/2)"),
                             ("printed", "Vol(B_r) ∝ e^{(d-1) r}")], fmt)


CLAIMS = [VolumeGrowthClaim()]

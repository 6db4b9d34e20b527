"""RGT §7.1.1: the volume growth of geodesic balls in H^d."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.hyperbolic import volume
from attngeom.geometry_proofs.hyperbolic.common import BALL_DIM, CURVATURE, RGTClaim, fmt, parse_curvature
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.verdict import combine, consistent, proved, refuted, with_erratum

#: The printed statement's own curvature, -1 (see ``identity_values`` below).
UNIT_CURVATURE = dataclasses.replace(CURVATURE, default="1")


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
    params = (BALL_DIM, UNIT_CURVATURE)
    methods = ("symbolic", "numeric")
    limits = {"d": 64}
    #: the claim is about c = 1: §7.1.1 states Vol(B_r) ∝ e^{(d-1) r} for H^d with no
    #: curvature parameter, i.e. curvature -1; the default and the first two examples check
    #: it there (proved), and the examples c = 4, 1/4 check the (d-1) sqrt(c) rate of the
    #: ball B_c^d (refuted with a convention erratum), where a factor on c shows
    identity_values = {"curvature": "RGT §7.1.1 states Vol(B_r) ∝ e^{(d-1) r} for H^d of curvature "
                                    "-1 (no c in the statement); c != 1 is covered by the examples "
                                    "c = 4 and c = 1/4"}
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
        true_limit = sympy.limit(vol * sympy.exp(-growth_rate(d, c) * r), r, sympy.oo)
        printed_limit = sympy.limit(vol * sympy.exp(-(d - 1) * r), r, sympy.oo)
        ratio_at_1 = sympy.N(vol.subs(r, 1) * sympy.exp(-(d - 1)), 12)
        evidence = {"volume": str(sympy.simplify(vol)), "rate": str(growth_rate(d, c)),
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
        printed = refuted(method="symbolic", evidence=evidence, counterexample={"d": d, "c": str(c), **evidence},
                          summary=(f"in H^{d} of curvature -{c}, Vol(B_r) e^(-(d-1) r) -> {printed_limit}: the "
                                   f"growth rate is (d-1) sqrt(c) = {growth_rate(d, c)}, not d-1 "
                                   f"(Vol ~ {true_limit} e^({growth_rate(d, c)} r))"))
        rate = proved(checked=1, evidence={"limit": str(true_limit), "rate": str(growth_rate(d, c))}, summary=(
            f"curvature -{c}: Vol(B_r) e^(-{growth_rate(d, c)} r) -> {true_limit}, positive and finite"))
        unit = volume.volume_symbolic(d, sympy.Integer(1), r)
        unit_limit = sympy.limit(unit * sympy.exp(-(d - 1) * r), r, sympy.oo)
        if unit_limit.is_positive and unit_limit.is_finite:
            unit_part = proved(checked=1, evidence={"volume": str(sympy.simplify(unit)), "limit": str(unit_limit)},
                               summary=(f"curvature -1 (H^{d} as usually normalized): Vol(B_r) = "
                                        f"{sympy.simplify(unit)}, Vol e^(-(d-1) r) -> {unit_limit}: the printed "
                                        f"e^((d-1) r) growth"))
        else:
            unit_part = refuted(method="symbolic", counterexample={"d": d, "limit": str(unit_limit)},
                                summary=f"curvature -1: Vol e^(-(d-1) r) -> {unit_limit}, not positive and finite")
        return self._convention(
            printed, rate, unit_part, f"Vol(B_r) ~ {true_limit} e^{{(d-1) sqrt(c) r}} (d = {d}, c = {c})",
            f"part 'curvature-1': Vol e^(-(d-1) r) -> {unit_limit} at c = 1 (symbolic); part 'rate': "
            f"Vol e^(-(d-1) sqrt(c) r) -> {true_limit} at c = {c}")

    @staticmethod
    def _convention(printed, rate, unit_part, correct, check):
        """The printed rate is the curvature -1 one: a convention erratum when both its c = 1
        form and the sqrt(c) rate at curvature -c were checked (parts ``curvature-1``, ``rate``)."""
        if rate.status.holds and unit_part.status.holds:
            with_erratum(printed, Erratum(
                ErrorKind.CONVENTION, "RGT §7.1.1 (Key Property of H^d)", "Vol(B_r) ∝ e^{(d-1) r}",
                "holds (asymptotically) for curvature -1, the usual normalization of H^d; on the ball "
                "B_c^d of §4.4.1 (curvature -c) " + correct, check + "; part 'printed': the printed "
                "rate at curvature -c fails"))
        return combine({"printed": printed, "rate": rate, "curvature-1": unit_part})

    def check_numeric(self, params, context):
        d, c = params["d"], parse_curvature(params["curvature"])
        radii = [0.5, 1.0, 2.0]
        agree = max(abs(volume.volume_numeric(d, c, r) / volume.volume_from_metric(d, c, r) - 1) for r in radii)
        slope, far, logs = _fitted_rate(d, c)
        part_formula = _formula_part(agree, len(radii))
        rate_error = abs(slope - (d - 1)) / (d - 1)
        evidence = {"fitted_rate": round(slope, 6), "printed_rate": d - 1,
                    "formula_vs_metric_8": "agree" if agree <= 1e-9 else f"differ by {agree:.3g}",
                    "true_rate": round(float(growth_rate(d, c)), 9)}
        if rate_error <= 1e-3:
            return combine({"sinh-formula": part_formula,
                            "rate": consistent(checked=3, max_residual=rate_error, tolerance=1e-3,
                                               backend="numpy", device="cpu", evidence=evidence,
                                               summary="fitted rate = d - 1")},
                           summary=f"Vol(B_r) grows like e^({fmt(slope)} r), the printed rate d-1 = {d - 1}")
        printed = refuted(method="numeric", backend="numpy", device="cpu", evidence=evidence,
                          counterexample={"d": d, "c": c, "radii": far.tolist(), "log_volumes": [round(v, 9) for v in logs]},
                          summary=(f"log Vol(B_r) grows with slope {fmt(slope)} in H^{d}(-{fmt(c)}), not d-1 = {d - 1}: "
                                   f"the rate is (d-1) sqrt(c) = {fmt(float(growth_rate(d, c)))}"))
        true_error = abs(slope - float(growth_rate(d, c))) / float(growth_rate(d, c))
        rate = _rate_part(f"curvature -{fmt(c)}: fitted rate {fmt(slope)} = (d-1) sqrt(c)", true_error,
                          {"fitted_rate": round(slope, 6), "rate": round(float(growth_rate(d, c)), 9)})
        unit_slope, *_ = _fitted_rate(d, 1.0)
        unit_part = _rate_part(f"curvature -1: fitted rate {fmt(unit_slope)} = d - 1 = {d - 1}, the printed rate",
                               abs(unit_slope - (d - 1)) / (d - 1), {"fitted_rate": round(unit_slope, 6)})
        formula_ok = agree <= 1e-9
        return self._convention(
            printed, combine({"sinh-formula": part_formula, "fit": rate}) if formula_ok else rate, unit_part,
            f"log Vol(B_r) grows with slope (d-1) sqrt(c) = {fmt(float(growth_rate(d, c)))} (d = {d}, c = {fmt(c)})",
            f"part 'curvature-1': fitted slope {fmt(unit_slope)} = d - 1 at c = 1; part 'rate': fitted slope "
            f"{fmt(slope)} = (d-1) sqrt(c) at c = {fmt(c)}, the sinh formula checked against metric (8)")

    def show(self, params, fmt="text", limit=None):
        return render_items([("Vol(B_r)", "omega_{d-1} int_0^r (sinh(sqrt(c) t)/sqrt(c))^{d-1} dt"),
                             ("omega_{d-1}", "2 pi^{d/2} / Gamma(d/2)"),
                             ("printed", "Vol(B_r) ∝ e^{(d-1) r}")], fmt)


def growth_rate(d: int, c):
    """The exponential growth rate of Vol(B_r) in H^d of curvature -c: (d - 1) sqrt(c)."""
    return (d - 1) * (sympy.sqrt(c) if isinstance(c, sympy.Basic) else math.sqrt(c))


def _fitted_rate(d: int, c: float):
    """The slope of log Vol(B_r) fitted on r in [20, 40] / sqrt(c) (quadrature)."""
    far = np.array([20.0, 30.0, 40.0]) / math.sqrt(c)
    logs = [math.log(volume.volume_numeric(d, c, r)) for r in far]
    return float(np.polyfit(far, logs, 1)[0]), far, logs


def _formula_part(agree: float, checked: int):
    """Part ``sinh-formula``: the sinh formula against quadrature of metric (8) (relative 1e-9)."""
    if agree <= 1e-9:
        return consistent(checked=checked, max_residual=agree, tolerance=1e-9, backend="numpy",
                          device="cpu", summary="the sinh formula equals the volume of metric (8)")
    return refuted(method="numeric", backend="numpy", device="cpu", counterexample={"relative_error": agree},
                   summary=f"the sinh formula differs from the volume of metric (8) by {agree:.3g} (relative)")


def _rate_part(summary: str, error: float, evidence: dict):
    if error <= 1e-3:
        return consistent(checked=3, max_residual=error, tolerance=1e-3, backend="numpy", device="cpu",
                          summary=summary, evidence=evidence)
    return refuted(method="numeric", backend="numpy", device="cpu", evidence=evidence,
                   counterexample={"relative_error": error, **evidence}, summary=summary + f" fails ({error:.3g})")


CLAIMS = [VolumeGrowthClaim()]

"""The named constructions that ``attngeom curvature WITNESS`` samples.

* ``sphere``: GEC Thm 3.6's gated attention layer (:class:`attention.SphereWitness`), with
  an optional gate strength s (gate sigma(s X_g W_theta)): s = 1 is the theorem's gate
  (K = 1), s = 0 the constant gate of Cor 3.7 (K = 0), other values interpolate;
* ``normal-form``: Lemma 3.11's L-layer gated residual stack
  (:class:`attention.NormalFormStack`), K(0) = A_L^2 det D^2 psi(0) (Lemma 3.12).

The parameters go through the claims ``gated-sphere`` and ``depth-amplification``, so the
same validation and hypotheses apply.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from attngeom.geometry_proofs.gating import attention
from attngeom.geometry_proofs.gating.common import MAX_SAMPLES, SPHERE_TOLERANCE, uniform_points
from attngeom.geometry_proofs.gating.depth import DepthAmplificationClaim
from attngeom.geometry_proofs.gating.sphere import GatedSphereClaim
from attngeom.geometry_proofs.riemann import Immersion
from attngeom.kernels.backend import get_backend
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput, NotApplicable
from attngeom.core.expressions import parse_rational
from attngeom.kernels.sampling import Sampler

WITNESSES = ("sphere", "normal-form")
#: Options each witness takes (the rest are refused, not silently ignored).
OPTIONS = {"sphere": ("ambient", "values", "gate_strength"),
           "normal-form": ("ambient", "layers", "amplitudes", "psi")}


def _gate_strength(text) -> Fraction:
    """--gate-strength as an exact rational (1, 0.5, 1/2; attngeom.core.expressions.parse_rational)."""
    return parse_rational(text, "--gate-strength")


def _resolve(claim, raw: dict) -> dict:
    params = claim.resolve(raw)
    violation = claim.hypothesis_violation(params)
    if violation:
        raise NotApplicable(violation)
    return params


def sample_curvature(witness: str, options: dict[str, Any], points: int = 10, seed: int = 0,
                     backend: str = "numpy", device: str = "cpu") -> dict[str, Any]:
    """Gaussian curvature of ``witness`` at ``points`` seeded points, as plain data."""
    if witness not in WITNESSES:
        raise BadInput(f"unknown witness {witness!r}; choose one of {', '.join(WITNESSES)}")
    given = {k: v for k, v in options.items() if v is not None}
    foreign = sorted(set(given) - set(OPTIONS[witness]))
    if foreign:
        names = ", ".join("--" + k.replace("_", "-") for k in foreign)
        raise BadInput(f"witness {witness!r} does not take {names} "
                       f"(it takes {', '.join('--' + k.replace('_', '-') for k in OPTIONS[witness])})")
    if not 1 <= points <= MAX_SAMPLES:
        raise BadInput(f"--points must be between 1 and {MAX_SAMPLES:,}; got {points}")
    be = get_backend(backend, device)
    if witness == "sphere":
        return _sphere(given, points, seed, be)
    return _normal_form(given, points, seed, be)


def _report(name, description, params, phi, K, expected, be) -> dict[str, Any]:
    deviation = None if expected is None else float(np.max(np.abs(K - float(expected))))
    return {"witness": name, "construction": description, "params": params,
            "backend": be.name, "device": be.device, "points": phi.tolist(), "K": K.tolist(),
            "K_min": float(K.min()), "K_max": float(K.max()),
            "expected": None if expected is None else str(expected),
            "max_abs_deviation": deviation, "tolerance": SPHERE_TOLERANCE,
            "holds": None if deviation is None else deviation <= SPHERE_TOLERANCE}


def _sphere(given, points, seed, be):
    strength = _gate_strength(given.pop("gate_strength", 1))
    claim = GatedSphereClaim()
    params = _resolve(claim, given)
    witness = claim.witness(params, CheckContext(seed=seed)).with_gate_strength(strength)
    phi = uniform_points(Sampler(seed), points, *attention.SPHERE_SAMPLING_BOX)
    K = be.to_numpy(Immersion("sphere witness", 2, witness.gated).curvature(phi, be).gaussian)
    expected = {Fraction(1): 1, Fraction(0): 0}.get(strength)
    return _report("sphere", "GEC Thm 3.6: gated attention layer, W_Q = W_K = 0, sampled in "
                   "[pi/32, 7pi/32]^2", {**params, "gate_strength": str(strength)}, phi, K,
                   expected, be)


def _normal_form(given, points, seed, be):
    claim = DepthAmplificationClaim()
    given.setdefault("layers", 4)
    params = _resolve(claim, given)
    stack = claim.stack(params)
    phi = np.vstack([np.zeros((1, 2)), uniform_points(Sampler(seed), points - 1, -0.5, 0.5)])
    K = be.to_numpy(Immersion("normal-form stack", 2, stack.output).curvature(phi, be).gaussian)
    report = _report("normal-form", "GEC Lemma 3.11: gated residual stack, first point the "
                     "origin, the others in (-1/2, 1/2)^2", params, phi, K, None, be)
    expected = claim.expected_curvature(params)
    deviation = abs(float(K[0]) - float(expected))
    report.update({"K(0)": float(K[0]), "expected_K(0)": str(expected), "deviation_at_origin": deviation,
                   "holds": deviation <= SPHERE_TOLERANCE * max(1.0, abs(float(expected)))})
    return report


def curvature_lines(report: dict[str, Any]) -> list[str]:
    """``attngeom curvature``'s text output of a :func:`sample_curvature` report."""
    lines = [f"{report['witness']}: {report['construction']}  [{report['backend']}-{report['device']}]",
             "  params    " + " ".join(f"{k}={v}" for k, v in report["params"].items()),
             f"  {'phi_1':>12} {'phi_2':>12} {'K':>22}"]
    for (p1, p2), k in list(zip(report["points"], report["K"]))[:20]:
        lines.append(f"  {p1:12.6f} {p2:12.6f} {k:22.15g}")
    if len(report["K"]) > 20:
        lines.append(f"  ... {len(report['K']) - 20} more points (--json lists all)")
    lines.append(f"  K in [{report['K_min']:.15g}, {report['K_max']:.15g}] at {len(report['K'])} points")
    if report["expected"] is not None:
        lines.append(f"  max |K - {report['expected']}| = {report['max_abs_deviation']:.3g}")
    if "K(0)" in report:
        lines.append(f"  K(0) = {report['K(0)']:.15g}, A_L^2 det D^2 psi(0) = {report['expected_K(0)']}")
    return lines

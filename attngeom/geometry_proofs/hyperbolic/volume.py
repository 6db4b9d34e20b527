"""Volumes of geodesic balls in H^d of curvature -c (RGT §7.1.1).

vol B_r = omega_{d-1} int_0^r (sinh(sqrt(c) t) / sqrt(c))^{d-1} dt, omega_{d-1} = 2 pi^{d/2} /
Gamma(d/2) the area of the unit sphere S^{d-1}; in the Poincare ball the same ball is the
Euclidean ball of radius rho = tanh(sqrt(c) r / 2) / sqrt(c) with volume element lambda^d
(metric 8): omega_{d-1} int_0^rho (2 / (1 - c s^2))^d s^{d-1} ds.
"""

from __future__ import annotations

import math

import sympy
from scipy.integrate import quad

from attngeom.geometry_proofs.hyperbolic.poincare import check_curvature


def sphere_area(d: int):
    """omega_{d-1} = 2 pi^{d/2} / Gamma(d/2), exact (SymPy)."""
    return 2 * sympy.pi ** sympy.Rational(d, 2) / sympy.gamma(sympy.Rational(d, 2))


def volume_symbolic(d: int, c, r: sympy.Symbol):
    """vol B_r in H^d(-c) as a closed-form SymPy expression in r (c exact)."""
    t = sympy.Symbol("t", positive=True)
    integrand = (sympy.sinh(sympy.sqrt(c) * t) / sympy.sqrt(c)) ** (d - 1)
    return sphere_area(d) * sympy.integrate(sympy.expand_trig(integrand).rewrite(sympy.exp), (t, 0, r))


def volume_numeric(d: int, c: float, r: float) -> float:
    """vol B_r by quadrature of the sinh formula."""
    c = check_curvature(c)
    area = float(sphere_area(d))
    return area * quad(lambda t: (math.sinh(math.sqrt(c) * t) / math.sqrt(c)) ** (d - 1), 0, r,
                       epsabs=0, epsrel=1e-13, limit=200)[0]


def volume_from_metric(d: int, c: float, r: float) -> float:
    """vol B_r by quadrature of the volume element lambda^d of metric (8) in the ball."""
    c = check_curvature(c)
    rho = math.tanh(math.sqrt(c) * r / 2) / math.sqrt(c)
    area = float(sphere_area(d))
    return area * quad(lambda s: (2 / (1 - c * s * s)) ** d * s ** (d - 1), 0, rho,
                       epsabs=0, epsrel=1e-13, limit=200)[0]

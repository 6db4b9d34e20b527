"""Surfaces and metrics with known curvature: the engine's answer key.

Each function returns an :class:`~attngeom.geometry_proofs.riemann.Immersion` or
:class:`~attngeom.geometry_proofs.riemann.MetricField` written once in ``attngeom.geometry_proofs.ops``, and
its docstring states the known curvature the tests hold it to.
"""

from __future__ import annotations

from fractions import Fraction

import sympy

from attngeom.geometry_proofs.ops import evaluate_expression
from attngeom.geometry_proofs.riemann import Immersion, MetricField


def sphere(radius=1) -> Immersion:
    """(R cos a cos b, R cos a sin b, R sin a): K = 1 / R^2 (GEC Thm 3.6's s(phi) for R = 1)."""
    def mu(phi, ops):
        return ops.stack([radius * ops.cos(phi[0]) * ops.cos(phi[1]),
                          radius * ops.cos(phi[0]) * ops.sin(phi[1]),
                          radius * ops.sin(phi[0])])
    return Immersion(f"sphere(R={radius})", 2, mu)


def torus(major=2, minor=1) -> Immersion:
    """((R + r cos a) cos b, (R + r cos a) sin b, r sin a): K = cos a / (r (R + r cos a))."""
    def mu(phi, ops):
        ring = major + minor * ops.cos(phi[0])
        return ops.stack([ring * ops.cos(phi[1]), ring * ops.sin(phi[1]), minor * ops.sin(phi[0])])
    return Immersion(f"torus(R={major}, r={minor})", 2, mu)


def pseudosphere() -> Immersion:
    """(sech t cos b, sech t sin b, t - tanh t) for t > 0: the tractricoid, K = -1."""
    def mu(phi, ops):
        sech = 1 / ops.cosh(phi[0])
        return ops.stack([sech * ops.cos(phi[1]), sech * ops.sin(phi[1]), phi[0] - ops.tanh(phi[0])])
    return Immersion("pseudosphere", 2, mu)


def poincare_half_plane() -> MetricField:
    """g = (dx^2 + dy^2) / y^2 on y > 0: the hyperbolic plane, K = -1."""
    def g(phi, ops):
        w = 1 / phi[1] ** 2
        return ops.stack([ops.stack([w, 0 * w]), ops.stack([0 * w, w])])
    return MetricField("Poincare half-plane", 2, g)


def poincare_disk() -> MetricField:
    """g = 4 (dx^2 + dy^2) / (1 - x^2 - y^2)^2 on the unit disk: K = -1."""
    def g(phi, ops):
        w = 4 / (1 - phi[0] ** 2 - phi[1] ** 2) ** 2
        return ops.stack([ops.stack([w, 0 * w]), ops.stack([0 * w, w])])
    return MetricField("Poincare disk", 2, g)


def polar_plane() -> Immersion:
    """(r cos t, r sin t): the flat plane in polar coordinates, K = 0."""
    def mu(phi, ops):
        return ops.stack([phi[0] * ops.cos(phi[1]), phi[0] * ops.sin(phi[1])])
    return Immersion("plane in polar coordinates", 2, mu)


def parabolic_plane() -> Immersion:
    """(s t, (t^2 - s^2) / 2): the flat plane in parabolic coordinates, K = 0."""
    def mu(phi, ops):
        return ops.stack([phi[0] * phi[1], (phi[1] ** 2 - phi[0] ** 2) / 2])
    return Immersion("plane in parabolic coordinates", 2, mu)


def elliptic_plane(focus=1) -> Immersion:
    """(c cosh m cos n, c sinh m sin n): the flat plane in elliptic coordinates, K = 0."""
    def mu(phi, ops):
        return ops.stack([focus * ops.cosh(phi[0]) * ops.cos(phi[1]),
                          focus * ops.sinh(phi[0]) * ops.sin(phi[1])])
    return Immersion("plane in elliptic coordinates", 2, mu)


def spherical_space() -> Immersion:
    """(r sin a cos b, r sin a sin b, r cos a): flat R^3 in spherical coordinates, R = 0."""
    def mu(phi, ops):
        return ops.stack([phi[0] * ops.sin(phi[1]) * ops.cos(phi[2]),
                          phi[0] * ops.sin(phi[1]) * ops.sin(phi[2]),
                          phi[0] * ops.cos(phi[1])])
    return Immersion("R^3 in spherical coordinates", 3, mu)


def cylinder_in_anisotropic_gaussian() -> Immersion:
    """(cos a, sin a, b) with covariance diag(1, 1, 4): the cylinder stays flat, K = 0; the
    Fisher–Rao metric of GEC §2.1 with a non-isotropic Sigma."""
    def mu(phi, ops):
        return ops.stack([ops.cos(phi[0]), ops.sin(phi[0]), phi[1]])
    return Immersion("cylinder, Sigma = diag(1, 1, 4)", 2, mu,
                     covariance=[[1, 0, 0], [0, 1, 0], [0, 0, 4]])


def ellipsoid_patch_in_anisotropic_gaussian(a=Fraction(3, 2), b=1, c=Fraction(1, 2)) -> Immersion:
    """(cos u cos v, cos u sin v, sin u) with Sigma = diag(1/a^2, 1/b^2, 1/c^2): whitening
    gives the ellipsoid x^2/a^2 + y^2/b^2 + z^2/c^2 = 1 (semi-axes a, b, c), whose Gaussian
    curvature is 1 / (a^2 b^2 c^2 (x^2/a^4 + y^2/b^4 + z^2/c^4)^2) at (x, y, z) = (a X, b Y, c Z)."""
    covariance = [[Fraction(1) / a ** 2, 0, 0], [0, Fraction(1) / b ** 2, 0],
                  [0, 0, Fraction(1) / c ** 2]]
    return Immersion("ellipsoid via anisotropic Sigma", 2, sphere(1).function, covariance=covariance)


def graph_surface(height: sympy.Expr, ambient: int = 3) -> Immersion:
    """(u, v, f(u, v), 0, ..., 0) in R^ambient (GEC Lemma 3.12, Cor 3.14):
    K = (f_uu f_vv - f_uv^2) / (1 + f_u^2 + f_v^2)^2; ``height`` is an expression in u, v."""
    def mu(phi, ops):
        f = evaluate_expression(height, {"u": phi[0], "v": phi[1]}, ops)
        return ops.stack([phi[0], phi[1], f] + [0 * phi[0]] * (ambient - 3))
    return Immersion(f"graph of {height}", 2, mu)

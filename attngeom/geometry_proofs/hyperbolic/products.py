"""Spherical and Euclidean components and the product manifold H^{d1} x S^{d2} x E^{d3}
(RGT eqs 24, 26, 27).

* sphere S_c^d = {x in R^{d+1} : |x|^2 = 1/c} (curvature +c): d(x, y) = arccos(c<x,y>)/sqrt(c),
  exp_x(v) = cos(sqrt(c)|v|) x + sin(sqrt(c)|v|) v / (sqrt(c)|v|), log_x(y) = d w / |w|,
  w = y - c<x,y> x;
* Euclidean E^d: d(x, y) = |x - y|, exp_x(v) = x + v, log_x(y) = y - x;
* the hyperbolic factor is the Poincare ball (:mod:`.poincare`);
* product (eq 24): a point is the concatenation of its components (``shape=[..., D]``,
  D = d1 + (d2 + 1) + d3); distance (26) d^2 = d_H^2 + d_S^2 + d_E^2, exp map (27)
  componentwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.geometry_proofs.hyperbolic.poincare import _dot, _norm, _safe, check_curvature, namespace
from attngeom.core.errors import BadInput


class Sphere:
    """S_c^d embedded in R^{d+1} (ambient coordinates, shape=[..., d+1])."""

    def __init__(self, c: float):
        self.c = check_curvature(c)

    def distance(self, x, y):
        xp = namespace(x)
        cos = xp.clip(self.c * _dot(x, y), -1.0, 1.0)
        return (xp.arccos(cos) / math.sqrt(self.c))[..., 0]

    def exp_map(self, x, v):
        xp, sc = namespace(x), math.sqrt(self.c)
        n = _norm(v)
        safe = _safe(n)
        return xp.cos(sc * n) * x + xp.where(n > 0, xp.sin(sc * safe) / (sc * safe), 1.0) * v

    def log_map(self, x, y):
        xp = namespace(x)
        w = y - self.c * _dot(x, y) * x
        n = _norm(w)
        return xp.where(n > 0, self.distance(x, y)[..., None] / _safe(n), 0.0) * w


class Euclidean:
    """E^d: the flat factor."""

    def distance(self, x, y):
        return _norm(x - y)[..., 0]

    def exp_map(self, x, v):
        return x + v

    def log_map(self, x, y):
        return y - x


class Hyperbolic:
    """H^d as the Poincare ball B_c^d."""

    def __init__(self, c: float):
        self.c = check_curvature(c)

    def distance(self, x, y):
        return poincare.distance(x, y, self.c)

    def exp_map(self, x, v):
        return poincare.exp_map(x, v, self.c)

    def log_map(self, x, y):
        return poincare.log_map(x, y, self.c)


@dataclass(frozen=True)
class ProductManifold:
    """H^{d1} x S^{d2} x E^{d3} (RGT eq 24) with the product metric; ``factors`` pairs each
    component with the number of its ambient coordinates."""

    factors: tuple

    @staticmethod
    def of(d_hyperbolic: int, d_spherical: int, d_euclidean: int, c_hyperbolic: float = 1.0,
           c_spherical: float = 1.0) -> "ProductManifold":
        if min(d_hyperbolic, d_spherical, d_euclidean) < 0:
            raise BadInput("product manifold dimensions must be >= 0")
        factors = []
        if d_hyperbolic:
            factors.append((Hyperbolic(c_hyperbolic), d_hyperbolic))
        if d_spherical:
            factors.append((Sphere(c_spherical), d_spherical + 1))
        if d_euclidean:
            factors.append((Euclidean(), d_euclidean))
        if not factors:
            raise BadInput("the product manifold needs at least one positive dimension")
        return ProductManifold(tuple(factors))

    def split(self, x):
        parts, start = [], 0
        for _, width in self.factors:
            parts.append(x[..., start:start + width])
            start += width
        return parts

    def join(self, parts):
        xp = namespace(parts[0])
        if xp.__name__ == "torch":
            return xp.cat(parts, dim=-1)
        return xp.concatenate(parts, axis=-1)

    def distance(self, x, y):
        """sqrt(d_H^2 + d_S^2 + d_E^2), RGT eq (26); shape=[...]."""
        total = 0.0
        for (factor, _), a, b in zip(self.factors, self.split(x), self.split(y)):
            total = total + factor.distance(a, b) ** 2
        return namespace(x).sqrt(total)

    def exp_map(self, x, v):
        """(exp^H_{x1} v1, exp^S_{x2} v2, exp^E_{x3} v3), RGT eq (27); shape=[..., D]."""
        return self.join([factor.exp_map(a, b) for (factor, _), a, b
                          in zip(self.factors, self.split(x), self.split(v))])

    def log_map(self, x, y):
        """Componentwise log maps: the inverse of eq (27); shape=[..., D]."""
        return self.join([factor.log_map(a, b) for (factor, _), a, b
                          in zip(self.factors, self.split(x), self.split(y))])

    def metric_norm(self, x, v):
        """|v|_g = sqrt(sum |v_i|_{g_i}^2) (the product metric); shape=[...]."""
        total = 0.0
        for (factor, _), a, b in zip(self.factors, self.split(x), self.split(v)):
            if isinstance(factor, Hyperbolic):
                total = total + poincare.metric_norm(a, b, factor.c) ** 2
            else:
                total = total + _norm(b)[..., 0] ** 2
        return namespace(x).sqrt(total)

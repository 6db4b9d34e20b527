"""RGT eqs 24, 26, 27: the product manifold H^{d1} x S^{d2} x E^{d3}."""

from __future__ import annotations

import numpy as np

from attngeom.geometry_proofs.claim_support import render_items, residual_verdict
from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.geometry_proofs.hyperbolic.common import CURVATURE, RGTClaim, as_list, fmt, parse_curvature
from attngeom.geometry_proofs.hyperbolic.products import ProductManifold
from attngeom.core.claim import Param

FACTOR_DIMS = Param("factor_dims", "dimensions d1,d2,d3 of H^d1 x S^d2 x E^d3 (RGT eq 24; 0 drops a factor)",
                    default=(2, 2, 2), kind="intlist", minimum=0)
STEPS = 2000


def _product_points(sampler, manifold: ProductManifold, count: int, c: float):
    parts = []
    for k, (factor, width) in enumerate(manifold.factors):
        name = type(factor).__name__
        if name == "Hyperbolic":
            parts.append(poincare.random_points(sampler.spawn(k), (count, width), factor.c, 2.0))
        elif name == "Sphere":
            g = sampler.spawn(k).floats((count, width))
            parts.append(g / np.linalg.norm(g, axis=-1, keepdims=True) / np.sqrt(factor.c))
        else:
            parts.append(sampler.spawn(k).floats((count, width)))
    return manifold.join(parts)


def curve_length(manifold: ProductManifold, x, tangents) -> np.ndarray:
    """Length of the polyline through exp_x(tangents[k]) (a curve sampled at STEPS + 1
    parameters), by the metric norm of the product metric at each segment's midpoint (no
    distance function used); shape=[batch]."""
    curve = [manifold.exp_map(x, v) for v in tangents]
    return sum(_metric_length(manifold, a, b) for a, b in zip(curve[:-1], curve[1:]))


#: The factor that the competitor curve runs on the schedule t^2 (the second: S^d2 when
#: d1 > 0), the others on t.
REPARAMETRIZED = 1
#: Gauss-Legendre nodes for the competitor's length integral (its integrand is smooth).
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)


def competitor_length(manifold: ProductManifold, x, y, factor: int) -> np.ndarray:
    """The length of t -> exp_x(log_x y) with factor ``factor`` on the schedule t^2 by the
    product metric (24): its speed is sqrt(sum_k (s_k'(t) d_k)^2), d_k the factor distances
    d_k(x_k, y_k) (each factor's geodesic has constant speed d_k), s_k'(t) = 2t for
    ``factor`` and 1 otherwise; integrated by Gauss-Legendre on [0, 1]; shape=[batch]."""
    t = (_NODES + 1) / 2
    dist = [f.distance(a, b) for (f, _), a, b in zip(manifold.factors, manifold.split(x), manifold.split(y))]
    speed2 = sum(np.multiply.outer(d ** 2, (2 * t) ** 2 if k == factor else np.ones_like(t))
                 for k, d in enumerate(dist))
    return np.sqrt(speed2) @ _WEIGHTS / 2


def _metric_length(manifold, a, b):
    """|b - a| in the product metric at the chord's midpoint (each factor's own metric)."""
    return manifold.metric_norm((a + b) / 2, b - a)


class ProductManifoldClaim(RGTClaim):
    """RGT eqs (24), (26), (27): on H^{d1} x S^{d2} x E^{d3}, the distance is
    d^2 = d_H^2 + d_S^2 + d_E^2 and exp acts componentwise.

    ``numeric``: for seeded pairs, (i) exp_x(log_x y) = y with the componentwise maps of
    eq (27); (ii) the length of the componentwise geodesic t -> exp_x(t log_x y), measured
    with the product metric on a 2000-step polyline (no distance function involved), equals
    eq (26); (iii) a reparametrized competitor t -> exp_x((t, t^2, t) log_x y) is longer,
    and its polyline length equals int_0^1 sqrt(d_H^2 + 4 t^2 d_S^2 + d_E^2) dt, the product
    metric (24) along a curve that is not a geodesic (:func:`competitor_length`).
    """

    id = "product-manifold"
    source = "RGT eqs (24), (26), (27)"
    statement = "On H x S x E the geodesic distance is sqrt(d_H^2 + d_S^2 + d_E^2) and exp is componentwise."
    params = (FACTOR_DIMS, CURVATURE)
    methods = ("numeric",)
    examples = ({"factor_dims": (2, 2, 2), "curvature": "3/2"}, {"factor_dims": (3, 1, 0), "curvature": "1/2"})

    def check_numeric(self, params, context):
        c = parse_curvature(params["curvature"])
        dims = tuple(params["factor_dims"])
        if len(dims) != 3:
            from attngeom.core.errors import BadInput
            raise BadInput(f"--factor-dims needs three dimensions d1,d2,d3; got {dims}")
        manifold = ProductManifold.of(*dims, c_hyperbolic=c, c_spherical=c)
        count = context.samples or 8
        x, y = (_product_points(context.sampler.spawn(k), manifold, count, c) for k in (1, 2))
        v = manifold.log_map(x, y)
        round_trip = float(np.max(np.abs(manifold.exp_map(x, v) - y)))
        eq26 = manifold.distance(x, y)
        ts = np.linspace(0.0, 1.0, STEPS + 1)
        length = curve_length(manifold, x, [t * v for t in ts])
        length_error = float(np.max(np.abs(length - eq26) / (1 + eq26)))
        widths = [w for _, w in manifold.factors]
        # competitor: the same endpoints, the second factor on the schedule t^2
        competitor = curve_length(manifold, x, [manifold.join(
            [part * (t * t if k == 1 else t) for k, part in enumerate(manifold.split(v))]) for t in ts])
        longer = bool(np.all(competitor >= length - 1e-9)) if len(widths) > 1 else True
        expected = competitor_length(manifold, x, y, REPARAMETRIZED)
        competitor_error = float(np.max(np.abs(competitor - expected) / (1 + expected)))
        worst = max(round_trip, length_error, competitor_error)
        k = int(np.argmax(np.abs(length - eq26)))
        return residual_verdict(None, worst if longer else float("inf"), 1e-5, checked=3 * count, summary=(
            f"on H^{dims[0]} x S^{dims[1]} x E^{dims[2]} (c={fmt(c)}): exp(log) = id componentwise, the "
            f"componentwise geodesic has product-metric length = eq (26) at {count} seeded pairs "
            f"(polyline of {STEPS} steps, tolerance 1e-5), and a reparametrized curve is longer, of the "
            f"length the product metric (24) gives it"),
            failure=("eq (26) is not the length of the product geodesic (or exp/log fail, or a "
                     "reparametrized curve's length is not the product metric's)"),
            counterexample={"x": as_list(x[k]), "y": as_list(y[k]), "eq26": float(eq26[k]),
                            "measured_length": float(length[k]), "c": c, "dims": list(dims)},
            evidence={"round_trip": "ok" if round_trip < 1e-9 else round_trip})

    def show(self, params, fmt="text", limit=None):
        return render_items([("d^2", "d_H(x1,y1)^2 + d_S(x2,y2)^2 + d_E(x3,y3)^2"),
                             ("exp_x(v)", "(exp^H_{x1}(v1), exp^S_{x2}(v2), exp^E_{x3}(v3))"),
                             ("d_S", "arccos(c<x,y>)/sqrt(c)")], fmt)


CLAIMS = [ProductManifoldClaim()]

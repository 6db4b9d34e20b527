"""``attngeom verify-poly --heads H --skip S --causal``: is a polynomial in ADM's
coordinates of one output coordinate in the vanishing ideal of a variant lightning layer
(issue 24, ask 3; ADM §6, HMK §5)?

The points of the variant variety over F_p (:mod:`attngeom.lightning_alg.ideal.variant_ideal`):

* H heads: y = sum_h mu(W_h), the sum of H points of the single-head variety (the
  coefficients are linear in V_h (x) A_h);
* causal mask: the coordinates of contexts n > j of output column j are 0;
* skip connection: f(X) + X or f(X) + W_s X adds only the linear coordinates z (the
  coefficients of x_{k,j}); the cubic coordinates y are mu(W) as without skip, so a
  polynomial in y vanishes on the skip variety iff it vanishes on that of f (the skip
  variety is V_f x {e_1} or V_f x F^d).

Every member is evaluated at ``samples`` random points (each head's weights drawn uniformly
over F_p): ``verified`` when all vanish, with the Schwartz-Zippel bound of the single-head
check (each coordinate of a sum of heads keeps its degree w in all the weights), ``refuted``
with the weights of every head at the first point where one does not.
"""

from __future__ import annotations

import numpy as np

from attngeom.core.claim import CheckContext
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, refuted, verified
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.family_check import DEFAULT_EXACT_POINTS, compile_family
from attngeom.lightning_alg.ideal.variant_ideal import variant_keep
from attngeom.lightning_alg.models.variant import Variant
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p, weight_degree

def verify_on_variant(members, coords: CoordinateSystem, a: int, variant: Variant,
                      context: CheckContext, prime: int = DEFAULT_PRIME) -> Verdict:
    """Evaluate every member (an :class:`~attngeom.lightning_alg.invariant.Invariant`) at
    random points sum_h mu(W_h) o keep of the variant variety over F_p."""
    compiled = compile_family(members, coords)
    points = context.samples or DEFAULT_EXACT_POINTS
    param = Parametrization(coords)
    heads = [sample_weights_mod_p(context.sampler.spawn(h), points, coords.d, coords.dprime, a, prime)
             for h in range(variant.heads)]
    y = np.zeros((points, len(coords)), dtype=np.int64)
    for weights in heads:
        y = (y + param.evaluate_mod_p(weights)) % prime
    y = y * variant_keep(coords, variant) % prime
    values = compiled.evaluate_mod_p(y, prime)
    degree = max(compiled.degrees, default=0) * weight_degree(coords.d, a)
    model = variant.slug + ("" if variant.skip == "none" else
                            " (the skip adds only linear coordinates: the cubic ones are f's)")
    bad = np.argwhere(values != 0)
    if bad.size:
        b, j = (int(x) for x in bad[0])
        return refuted(method="exact", checked=compiled.n_polynomials, summary=(
            f"member {j + 1} is nonzero at a random point of the {model} variety over F_{prime}"),
            counterexample={"field": f"F_{prime}", "prime": prime, "model": variant.describe(),
                            "weights_per_head": [w.point(b) for w in heads],
                            "value_mod_p": int(values[b, j])})
    return verified(checked=compiled.n_polynomials, degree=degree, prime=prime, points=points,
                    members=compiled.n_polynomials, summary=(
                        f"all {compiled.n_polynomials} polynomials vanish at {points} random "
                        f"points of the {model} variety over F_{prime}"),
                    evidence={"model": variant.describe(),
                              "note": "each head's weights uniform over F_p; bound per member as "
                                      "for one head (degree w in all weights), union bound"})

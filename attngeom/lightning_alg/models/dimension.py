"""Dimension and fibres of the variant networks: measured ranks and expected formulas.

Measured (exact, over F_p): the rank r of the Jacobian of W -> phi_W on N random inputs at
random weights (:func:`measure_variant`, through
:func:`attngeom.lightning_alg.hmk.dimension.rank_by_doubling`), bracketed by the symmetry
orbit s of :meth:`VariantNetwork.symmetry_tangents` (dim <= P - s).  The generic fibre has
dimension P - dim; P - r is an upper bound of it and s a lower bound.

Expected formulas (each a claim in :mod:`attngeom.lightning_alg.claims.beyond`):

* H heads, one layer, no skip, no mask: the join of H copies of the single-head variety
  (ADM §6, HMK §5), expected dimension min(H dim_1, span), dim_1 = HMK Cor 3.3 eq (7) and
  span = the dimension of the linear span of the single-head variety (the whole output's
  coefficient vectors mu(W), ADM Def 7), measured by :func:`linear_span_dimension`.
* skip connection: generic fibre = the orbit of the remaining symmetries (this project's
  expectation; HMK §5 believes the parametrization "generically one-to-one" and prints no
  formula), of dimension
  s = sum_i (H (2 a_i d_{i-1} - (2 alpha_i d_{i-1} - alpha_i^2) + 1) + [a_i >= d_{i-1}] H (H - 1))
  + [skip != identity] sum_{0<i<l} d_i^2: per head the GL_a fibre of (Q, K) -> K^T Q (HMK
  Lemma 3.1; a^2 for a <= d, 2ad - d^2 for a > d) and the scaling (cA, V/c) (HMK Thm 3.2);
  per layer with a_i >= d_{i-1} the GL_H mixing of its heads beyond their scalings
  (:mod:`attngeom.lightning_alg.models.mixing`); between layers GL_{d_i} (HMK eq 9).  For one
  layer of H >= 2 heads the rank is capped by the linear span of the head's variety and by
  the rank-<= H tensors (plus the d d' entries of W_s for a linear skip),
  :func:`skip_expected_rank`.
* causal mask: the whole-output variety has the dimension of the unmasked one, HMK eq (7)
  for one layer (column t of the masked output is the unmasked column t) and the corrected
  HMK eq (14) for several.
"""

from __future__ import annotations

import math

import numpy as np

from attngeom.kernels.jacobian import check_size
from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.hmk.dimension import (EXTRA_ROWS, Architecture, RankMeasurement,
                                                  deep_dimension_corrected, rank_by_doubling,
                                                  single_layer_dimension)
from attngeom.lightning_alg.models.mixing import mixing_defect, rank_h_tensor_dimension
from attngeom.lightning_alg.models.network import VariantNetwork
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p


def initial_variant_inputs(net: VariantNetwork) -> int:
    """Enough inputs for the Jacobian to have P + EXTRA_ROWS rows (doubled when short)."""
    return math.ceil((net.parameters + EXTRA_ROWS) / (net.arch.d[-1] * net.arch.t))


def measure_variant(net: VariantNetwork, sampler: Sampler, samples: int | None = None,
                    prime: int = DEFAULT_PRIME, extra_tangents=None) -> RankMeasurement:
    """Exact rank over F_p of the Jacobian of W -> phi_W at random weights and inputs,
    with the symmetry bound P - s (:meth:`VariantNetwork.symmetry_tangents`, plus the rows
    of ``extra_tangents(net, weights, prime)`` when given, e.g. the head mixing of
    :func:`attngeom.lightning_alg.models.mixing.head_mixing_tangents`)."""
    count = samples or initial_variant_inputs(net)
    check_size(count * net.arch.d[-1] * net.arch.t, net.parameters)
    weights = net.sample_weights(sampler.spawn(1), prime)
    tangents = net.symmetry_tangents(weights, lambda x: (-x) % prime)
    if extra_tangents is not None:
        tangents = np.concatenate([tangents, extra_tangents(net, weights, prime)])
    shape = (net.arch.d[0], net.arch.t)
    return rank_by_doubling(net.function(), weights, tangents, net.parameters, count,
                            lambda s, n: s.prime_field((n,) + shape, prime), sampler,
                            bool(samples), prime)


def linear_span_dimension(d: int, dprime: int, t: int, sampler: Sampler,
                          prime: int = DEFAULT_PRIME) -> int:
    """dim of the linear span of the single-head whole-output variety: the rank over F_p of
    B random coefficient vectors mu(W) (ADM Def 7, all outputs), B = min(N, d' d^3) + 8
    (mu is linear in V (x) A, so the span has dimension <= d' d^3 and <= N)."""
    coords = CoordinateSystem(d, t, dprime, all_outputs=True)
    count = min(len(coords), dprime * d ** 3) + EXTRA_ROWS
    weights = sample_weights_mod_p(sampler, count, d, dprime, d, prime)
    return rank_mod_p(Parametrization(coords).evaluate_mod_p(weights), prime)


def join_expected_dimension(heads: int, single: int, span: int) -> int:
    """The expected dimension of the join of H copies of a variety: min(H dim_1, span)."""
    return min(heads * single, span)


def symmetry_orbit_dimension(net: VariantNetwork) -> int:
    """s of the module docstring: per head the GL_a fibre of (Q, K) -> K^T Q and the
    scaling; per layer with a_i >= d_(i-1) the H (H - 1) directions of GL_H mixing its heads
    beyond the scalings (:func:`~attngeom.lightning_alg.models.mixing.mixing_defect`); between
    layers GL_{d_i} unless the skip is the identity."""
    arch, total = net.arch, 0
    for i in range(1, arch.layers + 1):
        d_in, a, alpha = arch.d[i - 1], arch.a[i - 1], arch.alpha(i)
        total += net.variant.heads * (2 * a * d_in - (2 * alpha * d_in - alpha ** 2) + 1)
        if a >= d_in:
            total += mixing_defect(net.variant.heads)
    if net.variant.skip != "identity":
        total += sum(w * w for w in arch.d[1:-1])
    return total


def skip_expected_rank(net: VariantNetwork, span: int | None) -> int:
    """P - s (:func:`symmetry_orbit_dimension`); for one layer of H >= 2 heads (``span``
    given) at most the dimension of f's variety, which is <= ``span`` (the linear span of the
    single-head whole-output variety, which holds the sum of H heads) and <= the dimension of
    the rank-<= H tensors sum_h V_h (x) A_h
    (:func:`~attngeom.lightning_alg.models.mixing.rank_h_tensor_dimension`), plus d d' for the
    linear skip (W_s X adds the degree-1 monomials, apart from f's cubic ones); the identity
    skip translates f's variety."""
    value = net.parameters - symmetry_orbit_dimension(net)
    if span is None:
        return value
    d, dprime = net.arch.d[0], net.arch.d[1]
    linear = d * dprime if net.variant.skip == "linear" else 0
    return min(value, min(span, rank_h_tensor_dimension(net.variant.heads, d, dprime)) + linear)


def unmasked_dimension(arch: Architecture) -> int:
    """HMK eq (7) for one layer, the corrected eq (14) (App. A.7) for several."""
    if arch.layers == 1:
        return single_layer_dimension(arch.d[0], arch.d[1], arch.a[0])
    return deep_dimension_corrected(arch, arch.delta)

"""``multihead-mixing``: H lightning heads with a >= d have the GL_H mixing symmetry and the
dimension min(H (dd' + d^2 - H), span) (issue 24; derived here, not a paper's statement).

f = sum_h V_h X (X^T A_h X) depends only on T = sum_h V_h (x) A_h, invariant under
(V_h, A_h) -> (sum_g V_g G_gh, sum_g (G^{-1})_hg A_g), G in GL_H
(:mod:`attngeom.lightning_alg.models.mixing`).  At each point the claim checks, exactly over
F_p (p = 2^31 - 1):

* ``mixing-kernel``: the H (H - 1) tangents of GL_H beyond the scalings lie in the kernel of
  the Jacobian of (Q_h, K_h, V_h)_h -> phi (J T^T = 0, together with the per-head GL_a and
  scaling tangents of :meth:`VariantNetwork.symmetry_tangents`);
* ``dimension``: the Jacobian rank (adaptive, a lower bound of the dimension) equals
  min(H dim_1 - H (H - 1), span), dim_1 = d^2 + dd' - 1 (HMK eq 7, a >= d), span the measured
  dimension of the linear span of the single-head variety.  P - rank(all tangents) is then
  H (dd' + d^2 - H): a rank that meets it is certified.

Hypotheses: one layer, no skip, no mask, a >= d >= 2, d' >= 2 (for d' = 1 the coefficients
see V (x) A only symmetrized in (p1, p2), so there are more directions in the kernel:
``multihead-join``'s defects at d' = 1 are not covered), 2 <= H <= min(dd', d^2), t >= 2.
A sweep is evidence over its range, not a proof for every size.
"""

from __future__ import annotations

import numpy as np

from attngeom.kernels.primefield import matmul_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, combine, refuted, verified
from attngeom.lightning_alg.claims.beyond_base import VariantDimensionClaim
from attngeom.lightning_alg.claims.hmk_support import dimension_verdict
from attngeom.lightning_alg.hmk.dimension import Architecture
from attngeom.lightning_alg.models import dimension as model_dimension
from attngeom.lightning_alg.models import mixing
from attngeom.lightning_alg.models.network import VariantNetwork
from attngeom.lightning_alg.models.variant import Variant

#: Random stream of the mixing-kernel check (independent of the rank measurement's).
STREAM_KERNEL = 11


def mixing_kernel_verdict(net: VariantNetwork, sampler, prime: int) -> Verdict:
    """J T^T = 0 over F_p for the H (H - 1) mixing tangents T at random weights, J the exact
    Jacobian at random inputs (as many rows as parameters and more).  An entry of J T^T,
    cleared of the denominator det(K_r^T K_r), has degree <= 2d + 6 in (Q, K, V, X)."""
    from attngeom.kernels.jacobian import jacobian_mod_p
    weights = net.sample_weights(sampler.spawn(1), prime)
    tangents = mixing.head_mixing_tangents(net, weights, prime)
    count = model_dimension.initial_variant_inputs(net)
    X = sampler.spawn(2).prime_field((count, net.arch.d[0], net.arch.t), prime)
    J = jacobian_mod_p(net.function(), weights, X, prime)
    product = matmul_mod_p(J, np.ascontiguousarray(tangents.T), prime)
    nonzero = int(np.count_nonzero(product))
    evidence = {"mixing_tangents": len(tangents), "jacobian_rows": int(J.shape[0]),
                "nonzero_entries": nonzero}
    if nonzero:
        return refuted(method="exact", evidence=evidence,
                       counterexample={"architecture": net.arch.describe(), "prime": prime,
                                       "nonzero_entries_of_J_T": nonzero},
                       summary=f"{nonzero} entries of J T^T are nonzero: the GL_H tangents "
                               "are not in the kernel")
    return verified(checked=int(product.size), degree=2 * net.arch.d[0] + 6, prime=prime,
                    points=1, evidence=evidence,
                    summary=f"the {len(tangents)} GL_H mixing tangents lie in the kernel of "
                            f"the Jacobian ({J.shape[0]} rows)")


class MultiHeadMixingClaim(VariantDimensionClaim):
    """H heads with a >= d: GL_H mixes the heads, dim = min(H (dd' + d^2 - H), span)
    (derived in :mod:`attngeom.lightning_alg.models.mixing`; the module docstring states
    what is checked).  ``attngeom dimension --heads H`` (no skip, no mask) checks this claim
    wherever its hypotheses hold: there the join's expected dimension min(H dim_1, span)
    of ``multihead-join`` exceeds the dimension by H (H - 1) unless the span caps it (issue
    51: d = 4, d' = 2, a = 4, H = 2 has rank 44, not the join's 46)."""

    id = "multihead-mixing"
    source = "attngeom (issue 24): derived"
    statement = ("H heads, a >= d, d' >= 2: f depends only on sum_h V_h (x) A_h, invariant "
                 "under GL_H mixing the heads; dim = min(H (dd' + d^2 - H), span).")
    formula_name = "min(H dim_1 - H(H-1), span)"
    formula_text = "min(H (d^2 + dd' - 1) - H (H - 1), span) = min(H (dd' + d^2 - H), span)"
    examples = ({"d": [3], "dprime": 3, "a": [3], "t": 2, "heads": 2},
                {"d": [3], "dprime": 2, "a": [4], "t": 3, "heads": 3})
    grid = tuple((Architecture((d, dp), (a,), t), Variant(H))
                 for d in (2, 3) for dp in (2, 3) for a in (d, d + 1) for t in (2, 3)
                 for H in range(2, min(4, d * dp, d * d) + 1))
    grid_text = "d = 2..3, d' = 2..3, a = d..d+1, t = 2..3, H = 2..min(4, dd', d^2)"

    def violation(self, net):
        v, arch = net.variant, net.arch
        if arch.layers != 1 or v.skip != "none" or v.causal:
            return "multihead-mixing is for one layer without skip or mask (--layers 1)"
        d, dp, a, H = arch.d[0], arch.d[1], arch.a[0], v.heads
        if arch.t < 2:
            return f"needs t >= 2; got t={arch.t}"
        if not (2 <= d <= a and dp >= 2):
            return f"needs a >= d >= 2 and d' >= 2 (A_h unconstrained); got d={d}, d'={dp}, a={a}"
        if not 2 <= H <= min(d * dp, d * d):
            return f"needs 2 <= H <= min(dd', d^2) = {min(d * dp, d * d)}; got H={H}"
        return None

    def expected(self, net, context):
        arch = net.arch
        span = model_dimension.linear_span_dimension(arch.d[0], arch.d[1], arch.t,
                                                     context.sampler.spawn(7))
        value = mixing.mixing_expected_dimension(net.variant.heads, arch.d[0], arch.d[1], span)
        return value, {"linear_span": span, "mixing_defect": mixing.mixing_defect(net.variant.heads),
                       "expected": value}

    def point(self, net, context):
        bad, checked = self.model_verdict(net, context)
        if bad is not None:
            return bad
        prime = DEFAULT_PRIME
        kernel = mixing_kernel_verdict(net, context.sampler.spawn(STREAM_KERNEL), prime)
        m = model_dimension.measure_variant(
            net, context.sampler.spawn(0), context.samples, prime,
            extra_tangents=lambda *args: mixing.head_mixing_tangents(*args))
        formula, evidence = self.expected(net, context)
        evidence = {"architecture": net.arch.describe(), "variant": net.variant.describe(),
                    "model_check": checked, **evidence}
        dimension = dimension_verdict(self.formula_name, formula, m, net.arch, context.seed,
                                       evidence)
        return combine({"mixing-kernel": kernel, "dimension": dimension})


MULTIHEAD_MIXING = MultiHeadMixingClaim()
CLAIMS = [MULTIHEAD_MIXING]

"""Dimension and fibres beyond one plain head (ADM §6, HMK §5): multi-head, skip, causal.

Each claim measures the exact Jacobian rank over F_p of a variant network
(:mod:`attngeom.lightning_alg.models`) at every point of a sweep (or at the point given) and
compares it with an expected formula (:mod:`attngeom.lightning_alg.models.dimension`).  None
is a statement the papers print: ADM §6 asks for "masked self-attention, deep attention
networks, and multi-head models"; HMK §5 believes that with skip connections "the
parameterization via (M, L) is generically one-to-one" and that several heads add "new
symmetries due to permutation of heads", and prints no formula.  So each claim's source
is this project's (``attngeom ...``): a refutation refutes our expectation, never files an
erratum of ADM or HMK (``attngeom errata`` leaves them out).

* ``multihead-join``: H heads, one layer: dim = min(H dim_1, span), the expected dimension
  of the join of H copies of the single-head variety (dim_1 = HMK eq 7).  Defective at
  a >= d (the heads mix: ``multihead-mixing``) and at d' = 1.
* ``skip-fibre``: with a skip connection the generic fibre is the orbit of the remaining
  symmetries (per head GL_a on (Q, K) and (cA, V/c); per layer with a >= d the GL_H mixing
  of its heads; between layers GL_d unless the skip is the identity): rank = P - s, for one
  layer of H >= 2 heads capped by the span and by the rank-<= H tensors.
* ``causal-dimension``: the causal mask leaves the dimension of the whole-output variety
  that of the unmasked one (HMK eq 7; corrected eq 14 for several layers).

Each point first checks that the network measured is the model defined, and differs from
the model without its mask or skip (:func:`~attngeom.lightning_alg.claims.beyond_base.model_check`).
Each point's verdict is exact (``verified``: the rank is a certified lower bound, and equals
the formula; ``refuted`` when an ample or certified rank differs).  A sweep is evidence for
the formula over its range, not a proof for every size; the summary states the range.
"""

from __future__ import annotations

from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict
from attngeom.lightning_alg.claims.beyond_base import (CAUSAL, HEADS, SKIP, VARIANT_PARAMS,  # noqa: F401
                                                       VariantDimensionClaim, variant_network)
from attngeom.lightning_alg.claims.beyond_mixing import MULTIHEAD_MIXING
from attngeom.lightning_alg.hmk.dimension import Architecture
from attngeom.lightning_alg.models import dimension as model_dimension
from attngeom.lightning_alg.models import mixing
from attngeom.lightning_alg.models.variant import Variant


# -- multi-head ---------------------------------------------------------------------------
def _cor33_violation(arch: Architecture) -> str | None:
    d, dp, a = arch.d[0], arch.d[1], arch.a[0]
    if arch.t < 2:
        return f"HMK Cor 3.3 (dim_1) needs t >= 2; got t={arch.t}"
    if not (d >= 2 and (dp >= 2 or a >= 2)):
        return f"HMK Cor 3.3 (dim_1) needs d, d' >= 2 or d, a >= 2; got d={d}, d'={dp}, a={a}"
    return None


class MultiHeadJoinClaim(VariantDimensionClaim):
    """H lightning heads, outputs summed, one layer (the open direction of ADM §6 / HMK §5;
    the formula is this project's expectation, not a statement of the papers: its defects
    are not errata of ADM or HMK and ``attngeom errata`` leaves them out).

    The coefficient vector of H heads is the sum of H single-head vectors, so the variety
    is the join of H copies of the single-head one; expected dimension
    min(H dim_1, span) with dim_1 = HMK Cor 3.3 eq (7) and span the measured dimension of
    the linear span of the single-head whole-output variety.  Measured: the rank of the
    Jacobian of (Q_h, K_h, V_h)_h -> phi.  Defect cases (rank below the expected value,
    ample or certified) refute the expected formula there.
    """

    id = "multihead-join"
    # not a statement of either paper: the expected dimension this project tested in the
    # direction ADM §6 and HMK §5 leave open (HMK §5 names only permutations of heads)
    source = "attngeom (issue 24): expected join dimension, the open direction of ADM §6, HMK §5"
    statement = ("H heads: the whole-output variety has the expected join dimension "
                 "min(H dim_1, span), dim_1 = HMK eq (7).")
    formula_name = "join min(H dim_1, span)"
    formula_text = "min(H (2ad + dd' - a^2 - 1), span) (a <= d; d^2 + dd' - 1 for a > d)"
    examples = ({"d": [3], "dprime": 2, "a": [2], "t": 2, "heads": 2},
                {"d": [3], "dprime": 2, "a": [1], "t": 3, "heads": 3})
    grid = tuple((Architecture((d, dp), (a,), t), Variant(H))
                 for d in (2, 3) for dp in (1, 2, 3) for a in range(1, d + 1) for t in (2, 3)
                 for H in (2, 3, 4) if dp >= 2 or a >= 2)
    grid_text = "H = 2..4, d = 2..3, d' = 1..3, a = 1..d, t = 2..3"

    def violation(self, net):
        v = net.variant
        if net.arch.layers != 1 or v.skip != "none" or v.causal:
            return "the join formula is for one layer without skip or mask (--layers 1)"
        return _cor33_violation(net.arch)

    def expected(self, net, context):
        arch = net.arch
        single = model_dimension.single_layer_dimension(arch.d[0], arch.d[1], arch.a[0])
        span = model_dimension.linear_span_dimension(arch.d[0], arch.d[1], arch.t,
                                                     context.sampler.spawn(7))
        value = model_dimension.join_expected_dimension(net.variant.heads, single, span)
        return value, {"single_head_eq7": single, "linear_span": span, "expected": value}


# -- skip connections -----------------------------------------------------------------------
class SkipFibreClaim(VariantDimensionClaim):
    """Skip connections (the direction of HMK §5, which believes the parametrization "via
    (M, L) generically one-to-one" and prints no formula; the formula is this project's):
    the generic fibre is the orbit of the symmetries that remain.  Remaining (each measured
    to lie in the kernel): per head GL_a on (Q, K) (HMK Lemma 3.1) and the scaling
    (cA, V/c) (HMK Thm 3.2: f itself is unchanged, so f(X) + X and f(X) + W_s X are too;
    these per-layer scalings are the rescalings of HMK eq 13, and they survive the skip);
    per layer with a_i >= d_(i-1), the H (H - 1) directions of GL_H mixing its heads beyond
    their scalings (:mod:`attngeom.lightning_alg.models.mixing`); between layers GL_{d_i}
    (HMK eq 9) for --skip linear (W_s transforms with V).  The identity skip fixes the basis
    of each hidden Y_i and so removes GL_{d_i}, a symmetry of the weights that leaves the
    virtual weights (M, L) unchanged.

    Expected rank P - s, s = :func:`~attngeom.lightning_alg.models.dimension.symmetry_orbit_dimension`;
    for one layer of H >= 2 heads at most min(span, H (dd' + d^2 - H)) + [linear] d d' (the
    heads can fill the span of the single-head variety or the rank-<= H tensors
    sum_h V_h (x) A_h, whatever a), :func:`~attngeom.lightning_alg.models.dimension.skip_expected_rank`.
    Hypotheses for H >= 2: d_i >= 2 for i >= 1 (at d' = 1 more directions lie in the kernel,
    not derived), and H = 2 for several layers (with H >= 3 a layer's heads can fill its span
    inside the network; no count derived).
    """

    id = "skip-fibre"
    source = ("attngeom (issue 24): the fibre with a skip connection, from HMK Lemma 3.1, "
              "Thm 3.2, eq (9); the direction of HMK §5, which prints no formula")
    statement = ("With a skip connection the generic fibre is the orbit of the remaining "
                 "symmetries (per head GL_a and scaling, per layer with a >= d the GL_H head "
                 "mixing, GL_d between layers unless the skip is the identity): rank = P - s, "
                 "for one layer of H >= 2 heads min(P - s, min(span, H (dd' + d^2 - H)) + [linear] dd').")
    formula_name = "P - s (remaining symmetries)"
    formula_text = ("P - sum_i (H (2a_i d_(i-1) - 2 alpha_i d_(i-1) + alpha_i^2 + 1) "
                    "+ [a_i >= d_(i-1)] H (H - 1)) - [skip linear] sum_(0<i<l) d_i^2; "
                    "one layer, H >= 2: min(that, min(span, H (dd' + d^2 - H)) + [linear] dd')")
    examples = ({"d": [3], "a": [2], "t": 2, "skip": "identity"},
                {"d": [3, 3, 3], "a": [2, 2], "t": 3, "skip": "linear"},
                {"d": [3], "dprime": 3, "a": [3], "t": 2, "heads": 2, "skip": "identity"})
    grid = tuple([(Architecture((d, dp), (a,), t), Variant(1, skip))
                  for skip in ("identity", "linear") for d in (2, 3, 4)
                  for dp in ((d,) if skip == "identity" else (1, d))
                  for a in range(1, d + 2) for t in (2, 3)]
                 + [(Architecture(d, (2,) * (len(d) - 1), t), Variant(1, skip))
                    for skip in ("identity", "linear") for d in ((2, 2, 2), (3, 3, 3), (2, 2, 2, 2))
                    for t in (2, 3)]
                 + [(Architecture((d, d), (a,), 2), Variant(H, skip))
                    for skip in ("identity", "linear") for d in (2, 3) for a in (d - 1, d, d + 1)
                    for H in (2, 3)]
                 + [(Architecture(d, (a, a), 3), Variant(2, skip))
                    for skip in ("identity", "linear") for d in ((2, 2, 2), (3, 3, 3)) for a in (2, 3)])
    grid_text = ("H = 1, skip identity/linear: one layer d = 2..4, d' in {1, d}, a = 1..d+1, "
                 "t = 2..3; two and three layers d = (2,2,2), (3,3,3), (2,2,2,2), a = 2, t = 2..3; "
                 "H = 2..3, one layer d = d' = 2..3, a = d-1..d+1, t = 2; H = 2, two layers "
                 "d = (2,2,2), (3,3,3), a = 2..3, t = 3")

    def violation(self, net):
        v, arch = net.variant, net.arch
        if v.skip == "none":
            return "skip-fibre is about a skip connection: give --skip identity or --skip linear"
        if arch.t < 2:
            return f"needs t >= 2; got t={arch.t}"
        if v.heads >= 2 and min(arch.d[1:]) < 2:
            return (f"with H >= 2 heads needs d_i >= 2 for i >= 1 (at d' = 1 more directions lie "
                    f"in the kernel; no count derived); got d = {list(arch.d)}")
        if v.heads >= 3 and arch.layers >= 2:
            return ("with several layers needs H <= 2 (a layer of H >= 3 heads can fill its "
                    f"span inside the network; no count derived); got H={v.heads}")
        return None

    def extra_tangents(self, net):
        return mixing.head_mixing_tangents if net.variant.heads >= 2 else None

    def expected(self, net, context):
        arch, v = net.arch, net.variant
        span = None
        if v.heads >= 2 and arch.layers == 1:
            span = model_dimension.linear_span_dimension(arch.d[0], arch.d[1], arch.t,
                                                         context.sampler.spawn(7))
        s = model_dimension.symmetry_orbit_dimension(net)
        remaining = ["GL_a per head on (Q, K)", "(cA, V/c) per head"]
        mixed = [i + 1 for i in range(arch.layers) if arch.a[i] >= arch.d[i]]
        if v.heads >= 2 and mixed:
            remaining.append(f"GL_H head mixing in layer(s) {mixed}")
        if v.skip == "linear" and arch.layers > 1:
            remaining.append("GL_d between layers (W_s with V)")
        value = model_dimension.skip_expected_rank(net, span)
        evidence = {"fibre_expected": net.parameters - value, "symmetry_orbit_expected": s,
                    "remaining_symmetries": remaining}
        if span is not None:
            evidence["linear_span"] = span
        return value, evidence


# -- causal mask --------------------------------------------------------------------------------
class CausalDimensionClaim(VariantDimensionClaim):
    """Masked self-attention (the open direction of ADM §6, which states no formula; the
    expectation is this project's): the whole-output variety of causal lightning attention
    has the dimension of the unmasked one, HMK eq (7) for one layer and the corrected eq (14)
    (App. A.7) for several.  For one layer: column t of the masked output is the unmasked
    column t, which determines the whole unmasked output.

    "masked = unmasked" holds trivially if the mask is not applied; so every point also
    checks (:func:`~attngeom.lightning_alg.claims.beyond_base.model_check`, exactly over
    F_p at random weights and input) that the network measured equals the token-by-token
    causal construction (column j from the columns 1..j) and differs from the unmasked
    one."""

    id = "causal-dimension"
    source = "attngeom (issue 24): the masked dimension, the open direction of ADM §6"
    statement = ("The causal mask leaves the dimension of the whole-output variety unchanged: "
                 "HMK eq (7), corrected eq (14) for several layers.")
    formula_name = "unmasked dimension (eq 7 / corrected eq 14)"
    formula_text = "eq (7) for l = 1; eq (32) - (l-1) delta^2 - l for l > 1"
    examples = ({"d": [3], "dprime": 2, "a": [2], "t": 3, "causal": True},
                {"d": [3, 3, 3], "a": [2, 2], "t": 3, "causal": True})
    grid = tuple([(Architecture((d, dp), (a,), t), Variant(causal=True))
                  for d in (2, 3, 4) for dp in (1, 2) for a in range(1, d + 1) for t in (2, 3, 4)
                  if dp >= 2 or a >= 2]
                 + [(Architecture(d, (2,) * (len(d) - 1), t), Variant(causal=True))
                    for d in ((2, 2, 2), (3, 3, 3), (3, 2, 2, 3), (2, 2, 2, 2)) for t in (2, 3)])
    grid_text = ("one layer d = 2..4, d' = 1..2, a = 1..d, t = 2..4; two and three layers "
                 "d = (2,2,2), (3,3,3), (3,2,2,3), (2,2,2,2), a = 2, t = 2..3")

    def violation(self, net):
        v = net.variant
        if not v.causal or v.heads != 1 or v.skip != "none":
            return "causal-dimension is about one causal head without skip (--causal)"
        if net.arch.layers == 1:
            return _cor33_violation(net.arch)
        if net.arch.t < 2:
            return f"needs t >= 2; got t={net.arch.t}"
        return net.arch.bottleneck_violation()

    def expected(self, net, context):
        value = model_dimension.unmasked_dimension(net.arch)
        return value, {"unmasked_formula": value}


def run_variant_dimension(raw: dict, softmax: bool, method: str, context) -> Verdict:
    """``attngeom dimension --heads/--skip/--causal``: skip-fibre with --skip, else
    causal-dimension with --causal, else multihead-mixing where its hypotheses hold (H heads
    with a >= d >= 2, d' >= 2: the heads mix, and the join's expected dimension is not the
    dimension) and multihead-join elsewhere (exact ranks only).  A combined verdict
    (multihead-mixing's kernel and dimension parts) shows its dimension part's fields."""
    if softmax:
        raise BadInput("--heads, --skip and --causal are for lightning attention, not --softmax")
    if method not in ("auto", "exact"):
        raise BadInput("--heads, --skip and --causal take exact ranks over F_p: --method exact")
    if context.device == "cuda":
        raise BadInput("exact ranks over F_p run on the cpu")
    params = SKIP_FIBRE.resolve(raw)
    if params["skip"] not in (None, "none"):
        claim = SKIP_FIBRE
    elif params["causal"]:
        claim = CAUSAL_DIMENSION
    elif params["d"] is not None and params["t"] is not None \
            and MULTIHEAD_MIXING.violation(variant_network(params)) is None:
        claim = MULTIHEAD_MIXING
    else:
        claim = MULTIHEAD_JOIN
    verdict = claim.verify(raw, "exact", context)
    parts = verdict.evidence.get("parts", {})
    if "dimension" in parts and "measured_rank" in parts["dimension"]:
        shown = {k: v for k, v in parts["dimension"].items() if k not in ("status", "method", "summary")}
        verdict.evidence = {**shown, **verdict.evidence}
    return verdict


MULTIHEAD_JOIN = MultiHeadJoinClaim()
SKIP_FIBRE = SkipFibreClaim()
CAUSAL_DIMENSION = CausalDimensionClaim()
CLAIMS = [MULTIHEAD_JOIN, SKIP_FIBRE, CAUSAL_DIMENSION]

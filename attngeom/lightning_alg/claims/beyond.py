"""Dimension and fibres beyond one plain head (ADM §6, HMK §5): multi-head, skip, causal.

Each claim measures the exact Jacobian rank over F_p of a variant network
(:mod:`attngeom.lightning_alg.models`) at every point of a sweep (or at the point given) and
compares it with an expected formula (:mod:`attngeom.lightning_alg.models.dimension`):

* ``multihead-join`` (this project's expectation in the direction of ADM §6, HMK §5; neither
  paper states it): H heads, one layer: dim = min(H dim_1, span), the expected dimension of
  the join of H copies of the single-head variety (dim_1 = HMK eq 7).
* ``skip-fibre`` (HMK §5): with a skip connection the generic fibre is the orbit of the
  remaining symmetries (per head GL_a on (Q, K) and (cA, V/c); between layers GL_d unless
  the skip is the identity): dim = P - s.
* ``causal-dimension`` (ADM §6): the causal mask leaves the dimension of the whole-output
  variety that of the unmasked one (HMK eq 7; corrected eq 14 for several layers).

Each point's verdict is exact (``verified``: the rank is a certified lower bound, and equals
the formula; ``refuted`` when an ample or certified rank differs).  A sweep is evidence for
the formula over its range, not a proof for every size; the summary states the range.
"""

from __future__ import annotations

from attngeom.core.claim import Claim, Param
from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict, combine
from attngeom.lightning_alg.claims.hmk_support import NETWORK_PARAMS, dimension_verdict, formula_show
from attngeom.lightning_alg.hmk.dimension import Architecture, architecture
from attngeom.lightning_alg.models import dimension as model_dimension
from attngeom.lightning_alg.models.network import VariantNetwork
from attngeom.lightning_alg.models.variant import SKIPS, Variant, variant_from

HEADS = Param("heads", "number of heads H (outputs summed; each head its own Q, K, V)")
SKIP = Param("skip", f"skip connection: {'|'.join(SKIPS)} (f(X), f(X) + X, f(X) + W_s X)",
             kind="str")
CAUSAL = Param("causal", "causal mask: output column j attends to columns 1..j", kind="flag")
VARIANT_PARAMS = NETWORK_PARAMS + (HEADS, SKIP, CAUSAL)


def variant_network(params: dict) -> VariantNetwork:
    """The VariantNetwork of claim / CLI parameters (d, a, t, layers, dprime, heads, skip,
    causal)."""
    return VariantNetwork(architecture(params),
                          variant_from(params.get("heads"), params.get("skip"), params.get("causal")))


class VariantDimensionClaim(Claim):
    """A formula for the dimension of a variant network, checked by exact Jacobian ranks
    over F_p at one point or over :attr:`grid` (pairs of Architecture and Variant)."""

    params = VARIANT_PARAMS
    methods = ("exact",)
    grid: tuple = ()
    grid_text = ""
    formula_name = ""

    def validate(self, params):
        variant_from(params.get("heads"), params.get("skip"), params.get("causal"))
        if params["d"] is not None:
            if params["t"] is None:
                raise BadInput("--t is required")
            variant_network(params)

    def hypothesis_violation(self, params):
        return None if params["d"] is None else self.violation(variant_network(params))

    def violation(self, net: VariantNetwork) -> str | None:
        raise NotImplementedError

    def expected(self, net: VariantNetwork, context) -> tuple[int, dict]:
        """(the formula's value of the rank, evidence)."""
        raise NotImplementedError

    def point(self, net: VariantNetwork, context) -> Verdict:
        m = model_dimension.measure_variant(net, context.sampler.spawn(0), context.samples)
        formula, evidence = self.expected(net, context)
        evidence = {"architecture": net.arch.describe(), "variant": net.variant.describe(),
                    "fibre_measured_upper_bound": net.parameters - m.rank,
                    "symmetry_orbit_dimension_measured": m.symmetry_rank, **evidence}
        return dimension_verdict(self.formula_name, formula, m, net.arch, context.seed, evidence)

    def check(self, method, params, context):
        if params["d"] is not None:
            return self.point(variant_network(params), context)
        nets = [VariantNetwork(arch, variant) for arch, variant in self.grid]
        parts = [(f"{net.arch.slug}/{net.variant.slug}", self.point(net, context))
                 for net in context.progress(nets, self.id)]
        held = sum(v.status.value != "refuted" for _, v in parts)
        summary = (f"{self.formula_name} = measured rank at {held} of {len(parts)} sweep points "
                   f"({self.grid_text}); a sweep is evidence over its range, not a proof for "
                   "every size")
        verdict = combine(parts, summary=summary if held == len(parts) else None)
        if held < len(parts):
            bad = [name for name, v in parts if v.status.value == "refuted"]
            verdict.summary = (f"{len(bad)} of {len(parts)} sweep points ({self.grid_text}) "
                               f"differ from {self.formula_name}: {', '.join(bad)}; first: "
                               + verdict.summary)
        return verdict

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formula")
        net = variant_network(params)
        if self.violation(net):
            raise BadInput(self.violation(net))
        from attngeom.core.claim import CheckContext
        value, _ = self.expected(net, CheckContext(seed=0))
        return formula_show([(self.formula_name, self.formula_text, value),
                             ("parameters", "sum_i d_(i-1) (H (2a_i + d_i) + [linear] d_i)",
                              net.parameters)], fmt)


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
    """HMK §5: with skip connections the parametrization is generically one-to-one up to
    the symmetries that remain.  Remaining (measured to lie in the kernel): per head GL_a on
    (Q, K) (HMK Lemma 3.1) and the scaling (cA, V/c) (HMK Thm 3.2, which f(X) + X keeps: f
    itself is unchanged), and between layers GL_{d_i} for --skip linear (W_s transforms
    with V); the identity skip removes GL_{d_i} and the layer rescalings of HMK eq 13.
    Expected rank P - s, s = :func:`~attngeom.lightning_alg.models.dimension.symmetry_orbit_dimension`.
    """

    id = "skip-fibre"
    source = "HMK §5 (skip connections)"
    statement = ("With a skip connection the generic fibre is the orbit of the remaining "
                 "symmetries: dim = P - s.")
    formula_name = "P - s (remaining symmetries)"
    formula_text = ("P - sum_i H (2a_i d_(i-1) - 2 alpha_i d_(i-1) + alpha_i^2 + 1) "
                    "- [skip linear] sum_(0<i<l) d_i^2")
    examples = ({"d": [3], "a": [2], "t": 2, "skip": "identity"},
                {"d": [3, 3, 3], "a": [2, 2], "t": 3, "skip": "linear"})
    grid = tuple([(Architecture((d, dp), (a,), t), Variant(1, skip))
                  for skip in ("identity", "linear") for d in (2, 3, 4)
                  for dp in ((d,) if skip == "identity" else (1, d))
                  for a in range(1, d + 2) for t in (2, 3)]
                 + [(Architecture(d, (2,) * (len(d) - 1), t), Variant(1, skip))
                    for skip in ("identity", "linear") for d in ((2, 2, 2), (3, 3, 3), (2, 2, 2, 2))
                    for t in (2, 3)])
    grid_text = ("H = 1, skip identity/linear: one layer d = 2..4, d' in {1, d}, a = 1..d+1, "
                 "t = 2..3; two and three layers d = (2,2,2), (3,3,3), (2,2,2,2), a = 2, t = 2..3")

    def violation(self, net):
        if net.variant.skip == "none":
            return "skip-fibre is about a skip connection: give --skip identity or --skip linear"
        if net.arch.t < 2:
            return f"needs t >= 2; got t={net.arch.t}"
        return None

    def expected(self, net, context):
        s = model_dimension.symmetry_orbit_dimension(net)
        remaining = ["GL_a per head on (Q, K)", "(cA, V/c) per head"]
        if net.variant.skip == "linear" and net.arch.layers > 1:
            remaining.append("GL_d between layers (W_s with V)")
        return net.parameters - s, {"fibre_expected": s, "remaining_symmetries": remaining}


# -- causal mask --------------------------------------------------------------------------------
class CausalDimensionClaim(VariantDimensionClaim):
    """ADM §6 (masked self-attention): the whole-output variety of causal lightning
    attention has the dimension of the unmasked one, HMK eq (7) for one layer and the
    corrected eq (14) (App. A.7) for several.  For one layer: column t of the masked output
    is the unmasked column t, which determines the whole unmasked output."""

    id = "causal-dimension"
    source = "ADM §6 (masked self-attention)"
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
    causal-dimension with --causal, else multihead-join (exact ranks only)."""
    if softmax:
        raise BadInput("--heads, --skip and --causal are for lightning attention, not --softmax")
    if method not in ("auto", "exact"):
        raise BadInput("--heads, --skip and --causal take exact ranks over F_p: --method exact")
    if context.device == "cuda":
        raise BadInput("exact ranks over F_p run on the cpu")
    params = SKIP_FIBRE.resolve(raw)
    claim = SKIP_FIBRE if params["skip"] not in (None, "none") else \
        CAUSAL_DIMENSION if params["causal"] else MULTIHEAD_JOIN
    return claim.verify(raw, "exact", context)


MULTIHEAD_JOIN = MultiHeadJoinClaim()
SKIP_FIBRE = SkipFibreClaim()
CAUSAL_DIMENSION = CausalDimensionClaim()
CLAIMS = [MULTIHEAD_JOIN, SKIP_FIBRE, CAUSAL_DIMENSION]

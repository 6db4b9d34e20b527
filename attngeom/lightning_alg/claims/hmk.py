"""HMK claims about the dimension of the neuromanifold: Cor 3.3 (eq 7), Cor 3.8 (eqs 5, 14,
32), Thm 3.9 and Conjecture 3.10 (eq 16), and the library side of ``attngeom dimension``.

Dimensions are Jacobian ranks (:mod:`attngeom.lightning_alg.hmk.dimension`): exact over F_p for lightning
networks, float64 with the singular-value rule of :func:`attngeom.kernels.jacobian.numerical_rank`
for softmax, each bracketed by the exact upper bound P - dim(symmetry orbit).
"""

from __future__ import annotations

import math

import numpy as np

from attngeom.kernels.backend import get_backend
from attngeom.core.claim import CheckContext, Claim
from attngeom.core.errors import BadInput
from attngeom.kernels.jacobian import jacobian_float, jacobian_mod_p, numerical_rank
from attngeom.kernels.primefield import rank_mod_p
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.verdict import Verdict, combine, consistent, refuted
from attngeom.lightning_alg.claims.hmk_support import (
    LAYERS, NETWORK_PARAMS, PRIME, A, D, DPRIME, T, SingleLayerClaim, dimension_verdict,
    formula_show, require_hypotheses, single_layer_dims)
from attngeom.lightning_alg.hmk.dimension import (
    FORMULA_TEXT, Architecture, architecture, deep_dimension_corrected, deep_dimension_printed,
    eq5_parameters_printed, measure_exact, measure_numeric,
    parameter_space_dimension, single_layer_dimension, softmax_dimension_printed)
from attngeom.lightning_alg.model import attention_matrix, softmax_attention


# -- Cor 3.3 ---------------------------------------------------------------------------------------
SINGLE_LAYER_GRID = tuple((d, dp, a, t) for d in (2, 3, 4) for dp in (1, 2, 3)
                          for a in range(1, d + 2) for t in (2, 3)
                          if (dp >= 2 or a >= 2))


def _method_measure(arch, method, context):
    sampler = context.sampler.spawn(0)
    if method == "exact":
        return measure_exact(arch, sampler, context.samples)
    return measure_numeric(arch, sampler, context.samples, context.backend, context.device)


class SingleLayerDimensionClaim(Claim):
    """HMK Cor 3.3, eq (7): the dimension of the single-layer neuromanifold.

    Measured: the rank of the Jacobian of (Q, K, V) -> phi (Q, K in F^{a x d}, V in
    F^{d' x d}) at random weights and inputs, exactly over F_p (``exact``) or float64
    (``numeric``), bracketed by P - dim(symmetry orbit).  Without --d: the grid
    d in {2,3,4}, d' in {1,2,3}, a in {1..d+1}, t in {2,3} under the hypothesis.
    """

    id = "dimension-single-layer"
    source = "HMK Cor 3.3, eq (7)"
    statement = ("For t >= 2 and d, d' >= 2 or d, a >= 2: dim M = 2ad + dd' - a^2 - 1 if a <= d, "
                 "else d^2 + dd' - 1.")
    params = (LAYERS, D, DPRIME, A, T)
    methods = ("exact", "numeric")
    examples = ({"d": [2], "dprime": 1, "a": [2], "t": 2}, {"d": [3, 2], "a": [5], "t": 2})

    def validate(self, params):
        if params["d"] is not None:
            single_layer_dims(params, with_a=True)
            if params["t"] is None:
                raise BadInput("--t is required")

    def hypothesis_violation(self, params):
        if params["d"] is None:
            return None
        d, dp, a = single_layer_dims(params, with_a=True)
        if params["t"] < 2:
            return f"HMK Cor 3.3 needs t >= 2; got t={params['t']}"
        if not (d >= 2 and (dp >= 2 or a >= 2)):
            return f"HMK Cor 3.3 needs d, d' >= 2 or d, a >= 2; got d={d}, d'={dp}, a={a}"
        return None

    def _point(self, d, dp, a, t, method, context) -> Verdict:
        arch = Architecture((d, dp), (a,), t)
        m = _method_measure(arch, method, context)
        return dimension_verdict("eq (7)", single_layer_dimension(d, dp, a), m, arch,
                                  context.seed, {"architecture": arch.describe()})

    def check(self, method, params, context):
        if params["d"] is not None:
            d, dp, a = single_layer_dims(params, with_a=True)
            return self._point(d, dp, a, params["t"], method, context)
        parts = [(Architecture((d, dp), (a,), t).slug, self._point(d, dp, a, t, method, context))
                 for d, dp, a, t in context.progress(SINGLE_LAYER_GRID, "Cor 3.3 grid")]
        return combine(parts, summary=f"eq (7) = measured rank at all {len(parts)} grid points "
                                      "(d <= 4, d' <= 3, a <= d + 1, t <= 3)")

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formula")
        d, dp, a = single_layer_dims(params, with_a=True)
        return formula_show([("eq (7)", FORMULA_TEXT["eq7"], single_layer_dimension(d, dp, a)),
                              ("parameters", "2ad + dd'", 2 * a * d + d * dp)], fmt)


# -- Cor 3.8, eqs 5, 14, 32 -----------------------------------------------------------------------------
DEEP_GRID = (((3, 3), (2,)), ((4, 3), (2,)), ((3, 3, 3), (2, 2)), ((4, 2, 3), (2, 2)),
             ((3, 2, 4), (3, 2)), ((3, 2, 2, 3), (2, 2, 2)), ((2, 2, 2, 2), (2, 2, 2)),
             ((2, 2, 2, 2, 2), (2, 2, 2, 2)), ((3, 2, 2, 2, 3), (2, 2, 2, 2)))


def _cor38_violation(arch: Architecture) -> str | None:
    if arch.t < 3:
        return f"HMK Cor 3.8 needs t >= 3; got t={arch.t}"
    if min(arch.a) < 2:
        return f"HMK Cor 3.8 needs a_i >= 2; got a={list(arch.a)}"
    violation = arch.bottleneck_violation()
    if violation:
        return f"HMK Cor 3.8: {violation}"
    if arch.delta < 2:
        return f"HMK Cor 3.8 needs delta >= 2; got delta={arch.delta}"
    return None


def parameter_space_rank(arch: Architecture, context: CheckContext) -> int:
    """Rank over F_p of the Jacobian of (Q, K, V) -> (A_1, V_1, ..., A_l, V_l): the dimension
    of the parameter space (A, V) with rank A_i <= a_i (HMK eq 32)."""
    weights = [context.sampler.spawn(7).prime_field(s, PRIME) for s in arch.weight_shapes()]

    def to_attention(w, X, be):
        return [m for i in range(0, len(w), 3) for m in (attention_matrix(w[i], w[i + 1]), w[i + 2])]

    return rank_mod_p(jacobian_mod_p(to_attention, weights, None, PRIME), PRIME)


class DeepDimensionClaim(Claim):
    """HMK Cor 3.8, eq (14), with eq (5) (parameter count) and eq (32) (App. A.7).

    Measured exactly over F_p (or float64 with --method numeric): the rank of the Jacobian of
    (Q, K, V) -> phi, bracketed by P - dim(symmetry orbit); the rank of (Q, K, V) -> (A, V)
    for eq (32); the parameter count for eq (5).  eq (14) as printed counts the first layer's
    attention matrix twice (its sum runs over 1 <= i <= l; App. A.7 derives it as eq (32)
    - (l-1) delta^2 - l, i.e. the sum over 1 < i <= l): the check reports ``refuted`` with the
    corrected value.  eq (5) as printed uses Q_i, K_i in R^{a_i x d_i}; it is wrong whenever
    sum_i a_i (d_i - d_{i-1}) != 0.  Without --d: a grid of l = 1..4.
    """

    id = "dimension-deep"
    source = "HMK Cor 3.8, eqs (5), (14), (32)"
    statement = ("For t >= 3, a_i >= 2 and a bottleneck d_i = delta >= 2 (0 < i < l), d_0, d_l >= delta: "
                 "dim M = eq (14).")
    params = NETWORK_PARAMS
    methods = ("exact", "numeric")
    # HMK Figure 3's lightning sweep (l = 2, t = 3, a_i = 2, d_i = delta = 3..10) and two more
    examples = tuple({"d": [delta] * 3, "a": [2, 2], "t": 3} for delta in range(3, 11)) + (
        {"d": [4, 2, 3], "a": [2, 2], "t": 3}, {"d": [3, 2, 2, 3], "a": [2], "t": 3},
        {})                                                  # the grid of l = 1..4

    def validate(self, params):
        if params["d"] is not None:
            architecture(params)

    def hypothesis_violation(self, params):
        return None if params["d"] is None else _cor38_violation(architecture(params))

    def _point(self, arch, method, context) -> Verdict:
        delta = arch.delta
        m = _method_measure(arch, method, context)
        problems = []
        printed_P = eq5_parameters_printed(arch)
        if printed_P != arch.parameters:
            problems.append({"formula": "eq (5)", "value": printed_P, "measured": arch.parameters,
                             "why": "Q_i, K_i must be a_i x d_(i-1): P = sum d_(i-1)(2a_i + d_i)"})
        eq32 = parameter_space_dimension(arch, delta)
        space = parameter_space_rank(arch, context)
        if eq32 != space:
            problems.append({"formula": "eq (32)", "value": eq32, "measured": space,
                             "why": "rank of (Q, K, V) -> (A, V) over F_p"})
        evidence = {"architecture": arch.describe(), "delta": delta,
                    "parameters_eq5_printed": printed_P, "eq32": eq32,
                    "parameter_space_dimension_measured": space}
        return dimension_verdict("eq (14)", deep_dimension_printed(arch, delta), m, arch,
                                  context.seed, evidence, deep_dimension_corrected(arch, delta),
                                  tuple(problems), (FORMULA_TEXT["eq14"], FORMULA_TEXT["eq14-corrected"]
                                                    + " (the sum over 1 < i <= l, as App. A.7 derives "
                                                    "it from eq (32))"),
                                  other_errata=(Erratum(
                                      ErrorKind.MISPRINTED_FORMULA, "HMK eq (5)",
                                      f"P = {FORMULA_TEXT['eq5']}", "P = Σ_i d_{i-1} (2a_i + d_i) "
                                      "(Q_i, K_i in R^{a_i x d_{i-1}}, V_i in R^{d_i x d_{i-1}})",
                                      "the count of the weights' entries"),) if printed_P != arch.parameters else ())

    def check(self, method, params, context):
        if params["d"] is not None:
            return self._point(architecture(params), method, context)
        grid = [Architecture(d, a, 3) for d, a in DEEP_GRID]
        require_hypotheses(self.id, [(arch.slug, _cor38_violation(arch)) for arch in grid])
        parts = [(arch.slug, self._point(arch, method, context))
                 for arch in context.progress(grid, "Cor 3.8 grid")]
        return combine(parts, summary=f"eq (14) = measured rank at all {len(parts)} grid points")

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formulas")
        arch = architecture(params)
        delta = arch.delta or 0
        return formula_show([("eq (5) (printed)", FORMULA_TEXT["eq5"], eq5_parameters_printed(arch)),
                              ("parameters", "Σ_i d_{i-1}(2a_i + d_i)", arch.parameters),
                              ("eq (32)", FORMULA_TEXT["eq32"], parameter_space_dimension(arch, delta)),
                              ("eq (14) (printed)", FORMULA_TEXT["eq14"], deep_dimension_printed(arch, delta)),
                              ("eq (14) corrected", FORMULA_TEXT["eq14-corrected"],
                               deep_dimension_corrected(arch, delta))], fmt)


# -- Thm 3.9, Conjecture 3.10 --------------------------------------------------------------------------
class SoftmaxInjectiveClaim(SingleLayerClaim):
    """HMK Thm 3.9 (t >= 2): the softmax parametrization (A, V) -> phi (eq 15, S = exp) is
    generically one-to-one.

    float64 at N random inputs (default 250): (1) the Jacobian of (A, V) -> phi has full
    rank d^2 + dd' with a clear singular-value gap (:func:`attngeom.kernels.jacobian.numerical_rank`)
    — a proof that the rank is full, up to the stated rounding bound, since nothing is
    dropped; (2) the proof's first step: for identical tokens phi = V x; (3) phi = 0 when
    V = 0 and phi != 0 otherwise.
    """

    id = "softmax-injective"
    source = "HMK Thm 3.9"
    statement = "For t >= 2: phi_W = 0 iff V = 0, and otherwise the fibre of phi_W is {W}."
    methods = ("numeric",)
    examples = ({"d": [2], "dprime": 2, "t": 2}, {"d": [3], "dprime": 2, "t": 3})

    def check_numeric(self, params, context):
        d, dp, _ = single_layer_dims(params)
        t = params["t"]
        s = context.sampler
        A_ = s.spawn(1).floats((d, d), 1 / math.sqrt(d))
        V = s.spawn(2).floats((dp, d), 1 / math.sqrt(d))
        count = context.samples or 250
        X = s.spawn(3).floats((count, d, t))
        be = get_backend(context.backend, context.device)
        func = lambda w, X, backend: softmax_attention(X, w[0], w[1], backend)
        J = jacobian_float(func, [A_, V], X, be)
        rank = numerical_rank(J, be)
        rank.require_clear("Thm 3.9 Jacobian")
        P = d * d + dp * d
        x = s.spawn(4).floats((d, 1))
        same = np.repeat(x, t, axis=1)
        tokens = softmax_attention(same, A_, V, get_backend("numpy"))
        token_residual = float(np.abs(tokens - V @ same).max() / np.abs(V @ same).max())
        zero = softmax_attention(X[0], A_, np.zeros_like(V), get_backend("numpy"))
        nonzero = softmax_attention(X[0], A_, V, get_backend("numpy"))
        evidence = {"parameters": P, "samples": count, "identical_tokens_residual": token_residual,
                    "phi_zero_when_V_zero": bool(not zero.any()),
                    "phi_nonzero_otherwise": bool(nonzero.any()), **rank.evidence()}
        tolerance = 1e-13
        if rank.rank != P or token_residual > tolerance or zero.any() or not nonzero.any():
            return refuted(method="numeric", evidence=evidence, backend=be.name, device=be.device,
                           summary=(f"Thm 3.9: Jacobian rank {rank.rank} (full: {P}), identical "
                                    f"tokens residual {token_residual:.1e}"),
                           counterexample={"A": A_.tolist(), "V": V.tolist(), "seed": context.seed,
                                           "rank": rank.rank, "parameters": P})
        return consistent(checked=3, max_residual=max(rank.dropped_max, token_residual),
                          tolerance=max(rank.tolerance, tolerance), backend=be.name, device=be.device,
                          evidence=evidence, summary=(
                              f"Thm 3.9: the Jacobian of (A, V) -> phi at {count} inputs has full "
                              f"rank {P} (smallest sigma/sigma_1 = {rank.kept_min:.3g}, rounding "
                              f"bound {rank.tolerance:.1e}); phi = Vx for identical tokens; "
                              "phi = 0 iff V = 0"))

    def show(self, params, fmt="text", limit=None):
        d, dp, _ = single_layer_dims(params)
        return formula_show([("generic fibre", "{W}", None),
                              ("dimension", "d^2 + dd'", d * d + d * dp)], fmt)


FIGURE3_GRID = tuple(((delta,) * 3, (2, 2)) for delta in range(3, 11))


class SoftmaxDimensionClaim(Claim):
    """HMK Conjecture 3.10, eq (16): the dimension of the softmax neuromanifold.

    float64 Jacobian rank of (Q, K, V) -> phi (softmax layers, eq 15) at N = 250 inputs
    (HMK §3.4), with the singular-value rule of :func:`attngeom.kernels.jacobian.numerical_rank` and
    the exact upper bound P - dim(GL_{a_i} and GL_delta orbits): ``consistent`` only when the
    gap is clear and the rank equals eq (16).  Without --d: HMK Figure 3 (l = 2, t = 3,
    a_i = 2, delta = 3..10).
    """

    id = "softmax-dimension"
    source = "HMK Conjecture 3.10, eq (16)"
    statement = ("Normalized deep attention: generic fibres over (M, L) are singletons, so dim M = "
                 "eq (16) = eq (14) + l.")
    params = NETWORK_PARAMS
    methods = ("numeric",)
    # HMK Figure 3's softmax sweep (l = 2, t = 3, a_i = 2, d_i = delta = 3..10)
    examples = tuple({"d": [delta] * 3, "a": [2, 2], "t": 3} for delta in range(3, 11))

    def validate(self, params):
        if params["d"] is not None:
            architecture(params, softmax=True)

    def hypothesis_violation(self, params):
        if params["d"] is None:
            return None
        arch = architecture(params, softmax=True)
        if arch.t < 2:
            return f"HMK Thm 3.9 / Conjecture 3.10 need t >= 2; got t={arch.t}"
        violation = arch.bottleneck_violation()
        return f"HMK eq (16): {violation}" if violation else None

    def _point(self, arch, context) -> Verdict:
        m = _method_measure(arch, "numeric", context)
        delta = arch.delta
        return dimension_verdict("eq (16)", softmax_dimension_printed(arch, delta), m, arch,
                                  context.seed, {"architecture": arch.describe(), "delta": delta})

    def check_numeric(self, params, context):
        if params["d"] is not None:
            return self._point(architecture(params, softmax=True), context)
        grid = [Architecture(d, a, 3, softmax=True) for d, a in FIGURE3_GRID]
        parts = [(arch.slug, self._point(arch, context))
                 for arch in context.progress(grid, "Figure 3")]
        return combine(parts, summary="eq (16) = numerical rank at HMK Figure 3's delta = 3..10")

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formula")
        arch = architecture(params, softmax=True)
        return formula_show([("eq (16)", FORMULA_TEXT["eq16"],
                               softmax_dimension_printed(arch, arch.delta or 0))], fmt)


# -- `attngeom dimension` -------------------------------------------------------------------------
SINGLE_LAYER_DIMENSION = SingleLayerDimensionClaim()
DEEP_DIMENSION = DeepDimensionClaim()
SOFTMAX_DIMENSION = SoftmaxDimensionClaim()


def run_dimension(raw: dict, softmax: bool, method: str, context: CheckContext) -> Verdict:
    """The check behind ``attngeom dimension``: softmax-dimension (eq 16) with --softmax,
    else dimension-single-layer (eq 7) for one layer and dimension-deep (eq 14) for more.
    ``auto`` is exact over F_p for lightning on the numpy backend, float64 otherwise."""
    if raw.get("d") is None:
        raise BadInput("--d is required (or --figure3)")
    if any(raw.get(name) not in (None, False) for name in ("heads", "skip", "causal")):
        from attngeom.lightning_alg.claims.beyond import run_variant_dimension
        return run_variant_dimension(raw, softmax, method, context)
    raw = {k: v for k, v in raw.items() if k not in ("heads", "skip", "causal")}
    if softmax:
        claim = SOFTMAX_DIMENSION
    else:
        layers = architecture(DEEP_DIMENSION.resolve(raw)).layers
        claim = SINGLE_LAYER_DIMENSION if layers == 1 else DEEP_DIMENSION
    if method == "auto":
        lightning_exact = not softmax and context.backend == "numpy" and context.device == "cpu"
        method = "exact" if lightning_exact else "numeric"
    if context.device == "cuda" and method == "exact":
        raise BadInput("exact ranks over F_p run on the cpu; use --method numeric on cuda")
    return claim.verify(raw, method, context)


def dimension_report(verdict: Verdict) -> dict:
    """The fields `attngeom dimension` prints (and its --json): parameters, formula,
    measured_rank, status, and the evidence behind them."""
    ev = verdict.evidence
    report = {"claim": verdict.claim, "source": verdict.source, "status": verdict.status.value,
              "method": verdict.method, "architecture": ev.get("architecture"),
              "parameters": ev.get("parameters"), "formula_name": ev.get("formula_name"),
              "formula": ev.get("formula"), "measured_rank": ev.get("measured_rank"),
              "variant": ev.get("variant"),
              "corrected_formula": ev.get("corrected_formula"),
              "upper_bound_from_symmetries": ev.get("upper_bound_from_symmetries"),
              "certified": ev.get("certified"), "samples": ev.get("samples"),
              "summary": verdict.summary, "seconds": verdict.seconds}
    for key in ("parameters_eq5_printed", "eq32", "parameter_space_dimension_measured", "prime"):
        if key in ev:
            report[key] = ev[key]
    if "numerical_rank" in ev:
        kept, dropped = ev["sigma_kept_min_relative"], ev["sigma_dropped_max_relative"]
        report.update(gap=kept / dropped if dropped else None, sigma_kept_min_relative=kept,
                      sigma_dropped_max_relative=dropped, tolerance=ev["tolerance_relative"],
                      backend=verdict.backend, device=verdict.device)
    if verdict.counterexample:
        report["problems"] = verdict.counterexample.get("problems")
    report["verdict"] = verdict.to_json()
    return report


def dimension_lines(report: dict) -> list[str]:
    """``attngeom dimension``'s text output."""
    arch = report["architecture"]
    kind = "softmax" if arch["softmax"] else "lightning"
    lines = [f"{report['status']}  {report['claim']}  [{report['source']}]",
             f"  network        l={arch['layers']}  d={','.join(map(str, arch['d']))}  "
             f"a={','.join(map(str, arch['a']))}  t={arch['t']}  {kind}" + (
                 "  heads={heads} skip={skip} causal={causal}".format(**report["variant"])
                 if report.get("variant") else ""),
             f"  parameters     {report['parameters']}" + (
                 f"  (eq (5) as printed: {report['parameters_eq5_printed']})"
                 if "parameters_eq5_printed" in report else ""),
             f"  formula        {report['formula_name']} = {report['formula']}"]
    if report["method"] == "exact":
        how = f"exact rank over F_{report['prime']}, {report['samples']} inputs"
    else:
        how = (f"float64 SVD ({report['backend']}-{report['device']}), {report['samples']} inputs; "
               f"smallest kept sigma/sigma_1 {report['sigma_kept_min_relative']:.2e}, largest "
               f"dropped {report['sigma_dropped_max_relative']:.2e}, gap "
               + (f"{report['gap']:.1e}" if report["gap"] else "inf")
               + f", tolerance {report['tolerance']:.1e}")
    lines.append(f"  measured rank  {report['measured_rank']}  ({how})")
    bound = report["upper_bound_from_symmetries"]
    lines.append(f"  upper bound    {bound}  (P - dim of the symmetry orbits; "
                 f"{'meets the rank: certified' if report['certified'] else 'not met'})")
    if report.get("corrected_formula") is not None:
        lines.append(f"  corrected      {report['corrected_formula']}  (eq (14) with the sum over "
                     "1 < i <= l, as derived in HMK App. A.7)")
    if "eq32" in report:
        lines.append(f"  eq (32)        {report['eq32']}  (measured dimension of the (A, V) "
                     f"space: {report['parameter_space_dimension_measured']})")
    for problem in report.get("problems") or []:
        lines.append(f"  DOES NOT HOLD  {problem['formula']} as printed gives {problem['value']}, "
                     f"the mathematics gives {problem['measured']}")
    lines.append(f"  verdict        {report['status']}: {report['summary']}")
    return lines


CLAIMS = [SINGLE_LAYER_DIMENSION, DEEP_DIMENSION, SoftmaxInjectiveClaim(), SOFTMAX_DIMENSION]

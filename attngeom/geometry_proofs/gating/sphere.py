"""GEC Lemma 3.5, Thm 3.6, Cor 3.7 and Cor 3.8: the second derivative of a gated output,
and the gate that turns a flat attention output into the unit sphere (K = 1)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import context_backend, format_value, render_items
from attngeom.geometry_proofs.gating import attention, gates
from attngeom.geometry_proofs.gating.common import (
    AMBIENT, DOMAIN_DIM, GECClaim, SPHERE_TOLERANCE, named_immersion, sample_count,
    sampled_affine, uniform_points, zero_differences)
from attngeom.geometry_proofs.ops import SymbolicOps
from attngeom.geometry_proofs.riemann import (
    components, coordinates, gaussian_curvature, metric_to_christoffel_2nd)
from attngeom.core.claim import CheckContext, Param
from attngeom.kernels.curvature import immersion_curvature_from_jet
from attngeom.core.errors import BadInput
from attngeom.core.verdict import consistent, proved, refuted

# --------------------------------------------------------------------------------------
# GEC Lemma 3.5
# --------------------------------------------------------------------------------------

class GatingSecondDerivativeClaim(GECClaim):
    """GEC Lemma 3.5 (proof A.1.3): for Y = a + B phi (rank B = d) and g in C^2(U, R^D),
    d_ij (Y ⊙ g) = B_i ⊙ d_j g + B_j ⊙ d_i g + Y ⊙ d_ij g; the set A of gates with Y ⊙ g
    affine is the kernel of the linear map T(g) = D^2(Y ⊙ g), and it is proper.

    ``symbolic``: with generic a, B (symbols) and g_m = g_m(phi) undefined functions, both
    sides expand to the same expression for every i, j, m; T is linear (T(x g + y h) -
    x T(g) - y T(h) expands to 0); the proof's witness g = e_m psi, psi = (phi_1 - p_1)^2/2
    at a seeded rational point p has (T g)_{11,m}(p) = Y_m(p) != 0.  ``numeric``: random
    smooth gates (a tanh / sigmoid network) on a backend, autodiff Hessian against the formula.
    """

    id = "gating-second-derivative"
    source = "GEC Lemma 3.5"
    statement = ("d_ij (Y ⊙ g) = B_i ⊙ d_j g + B_j ⊙ d_i g + Y ⊙ d_ij g for Y = a + B phi; gates "
                 "making Y ⊙ g affine form a proper closed subspace.")
    params = (DOMAIN_DIM, AMBIENT)
    methods = ("symbolic", "numeric")
    limits = {"domain_dim": 32, "ambient": 256}
    examples = ({"domain_dim": 2, "ambient": 3},
                {"domain_dim": 2, "ambient": 4, "method": "numeric", "samples": 30})

    def hypothesis_violation(self, params):
        if params["domain_dim"] > params["ambient"]:
            return (f"Lemma 3.5 needs rank(B) = d for B in R^(D x d), so d <= D; got "
                    f"d={params['domain_dim']}, D={params['ambient']}")
        return None

    def check_symbolic(self, params, context):
        d, D = params["domain_dim"], params["ambient"]
        if d > 4 or D > 8:
            raise BadInput("the symbolic check is limited to d <= 4, D <= 8; use --method numeric")
        phi = coordinates(d)
        a = np.array(sympy.symbols(f"a_1:{D + 1}", real=True), dtype=object)
        B = np.array([[sympy.Symbol(f"b_{m + 1}_{i + 1}", real=True) for i in range(d)]
                      for m in range(D)], dtype=object)
        Y = a + B @ np.array(phi, dtype=object)
        g = np.array([sympy.Function(f"g_{m + 1}")(*phi) for m in range(D)], dtype=object)
        mu = Y * g
        d1 = lambda f, i: np.array([sympy.diff(x, phi[i]) for x in f], dtype=object)
        checked, wrong = 0, []
        for i in range(d):
            for j in range(i, d):
                formula = gates.hadamard_second_derivative(B[:, i], B[:, j], Y, d1(g, i), d1(g, j),
                                                           d1(d1(g, i), j))
                for m in range(D):
                    residual = sympy.expand(sympy.diff(mu[m], phi[i], phi[j]) - formula[m])
                    checked += 1
                    if residual != 0:
                        wrong.append({"i": i + 1, "j": j + 1, "m": m + 1, "residual": str(residual)})
        if wrong:
            return refuted(method="symbolic", checked=checked, counterexample=wrong[0], summary=(
                f"Lemma 3.5's formula differs from d_ij (Y ⊙ g) at {len(wrong)} of {checked} "
                f"components; first at (i, j, m) = ({wrong[0]['i']}, {wrong[0]['j']}, "
                f"{wrong[0]['m']})"))
        h = np.array([sympy.Function(f"h_{m + 1}")(*phi) for m in range(D)], dtype=object)
        x, y = sympy.symbols("x y")
        T = lambda f: [sympy.diff(Y[m] * f[m], phi[i], phi[j]) for m in range(D)
                       for i in range(d) for j in range(d)]
        linear = all(sympy.expand(u - x * s - y * t) == 0
                     for u, s, t in zip(T(x * g + y * h), T(g), T(h)))
        offset, slope = sampled_affine(context.sampler, D, d)
        point = [Fraction(k, 3) for k in context.sampler.spawn(1).integers(d, 1, 3)]
        Y0 = offset + slope @ np.array(point, dtype=object)
        m = int(np.argmax([abs(v) for v in Y0]))
        psi = (phi[0] - sympy.Rational(point[0])) ** 2 / 2
        Y_exact = [int(o) + sum(int(s) * p for s, p in zip(row, phi)) for o, row in zip(offset, slope)]
        T11 = sympy.diff(Y_exact[m] * psi, phi[0], phi[0]).subs(dict(zip(phi, map(sympy.Rational, point))))
        if not linear or T11 == 0:
            return refuted(method="symbolic", summary="T is not linear, or the witness gate gives "
                           "an affine mu", counterexample={"linear": linear, "T11": str(T11)})
        return proved(checked=checked + 2, summary=(
            f"d_ij (Y ⊙ g) equals Lemma 3.5's formula for all {checked} (i <= j, m) with generic a, "
            f"B, g (d={d}, D={D}); T(g) = D^2(Y ⊙ g) is linear; the witness g = e_{m + 1} psi has "
            f"(Tg)_(11,{m + 1}) = Y_{m + 1}(p) = {T11} != 0, so A is proper"),
            evidence={"witness_point": [str(p) for p in point], "a": offset.tolist(),
                      "B": slope.tolist(), "T11": str(T11)})

    def check_numeric(self, params, context):
        be = context_backend(context)
        d, D = params["domain_dim"], params["ambient"]
        sampler = context.sampler
        offset, slope = (x.astype(float) for x in sampled_affine(sampler, D, d))
        count = sample_count(context, 100)
        points = uniform_points(sampler.spawn(1), count, -1.0, 1.0, d)
        gate = gates.random_gate(sampler.spawn(2), d, D)
        mu = lambda p, o: gates.affine_output(p, offset, slope, o) * gate(p, o)
        g_values, g_jac, g_hess = (be.to_numpy(x) for x in named_immersion("g", gate, d).jet(points, be))
        _, _, mu_hess = (be.to_numpy(x) for x in named_immersion("mu", mu, d).jet(points, be))
        Y = offset + points @ slope.T
        worst = 0.0
        for i in range(d):
            for j in range(d):
                formula = gates.hadamard_second_derivative(slope[:, i], slope[:, j], Y, g_jac[:, :, i],
                                                           g_jac[:, :, j], g_hess[:, :, i, j])
                scale = np.abs(slope[:, i] * g_jac[:, :, j]) + np.abs(slope[:, j] * g_jac[:, :, i]) \
                    + np.abs(Y * g_hess[:, :, i, j]) + 1e-300
                worst = max(worst, float(np.max(np.abs(mu_hess[:, :, i, j] - formula) / scale)))
        tolerance = 1e-10
        if worst > tolerance:
            return refuted(method="numeric", backend=be.name, device=be.device, max_residual=worst,
                           summary="the autodiff Hessian of Y ⊙ g differs from Lemma 3.5's formula",
                           counterexample={"relative_residual": worst, "a": offset.tolist(),
                                           "B": slope.tolist()})
        return consistent(checked=count * d * d * D, max_residual=worst, tolerance=tolerance,
                          backend=be.name, device=be.device, summary=(
                              f"autodiff d_ij (Y ⊙ g) matches Lemma 3.5's formula at {count} points "
                              f"for a random smooth gate (d={d}, D={D})"),
                          evidence={"tolerance_reason": "float64 rounding relative to the sizes "
                                                        "of the three terms"})

    def show(self, params, fmt="text", limit=None):
        return render_items([("d_ij mu", "B_i ⊙ d_j g + B_j ⊙ d_i g + Y ⊙ d_ij g"),
                        ("Y", "a + B phi"), ("A", "ker(T), T(g) = D^2(Y ⊙ g)")], fmt)


# --------------------------------------------------------------------------------------
# GEC Thm 3.6, Cor 3.7, Cor 3.8
# --------------------------------------------------------------------------------------

def _sphere_values(points: np.ndarray, tail) -> np.ndarray:
    p1, p2 = points[:, 0], points[:, 1]
    columns = [np.cos(p1) * np.cos(p2), np.cos(p1) * np.sin(p2), np.sin(p1)]
    return np.stack(columns + [np.full_like(p1, float(c)) for c in tail], axis=1)


class GatedSphereClaim(GECClaim):
    """GEC Thm 3.6 (proof A.1.4), Cor 3.7, Cor 3.8: inside one single-head attention layer
    with W_Q = W_K = 0, rank-D value/output maps and inputs X(phi) realizing U_1 = n(a + B phi),
    the ungated output is a + B phi (K = 0) and the gated output
    Y ⊙ sigma(X_g W_theta), W_theta of rank D with left inverse W_theta^dagger and
    X_g = t(phi)^T W_theta^dagger, t = sigma^{-1}(s~ / (a + B phi)), is the unit-sphere patch
    s~(phi) = (s(phi), 1/2, ..., 1/2) with K = 1 on U = (0, pi/4)^2 (D = 3: Thm 3.6; D > 3:
    Cor 3.8); a constant gate (W_theta = 0) gives Y/2, flat (Cor 3.7).

    The layer is :class:`attngeom.geometry_proofs.gating.attention.SphereWitness` (seeded integer weights):
    the softmax is computed, not assumed uniform.  ``symbolic``: uniform weights 1/n, the
    ungated output minus a + B phi and the gated output minus s~ cancel exactly, the ungated
    Christoffel symbols vanish, K_gat = 1, rank W_theta = D, W_theta^dagger W_theta = I,
    0 < s~/(a + B phi) < 1 on the closure of U (corner bound), and W_theta = 0 gives Y/2 with
    K = 0.  ``numeric``: at N points of U (default 1000) the same on a backend through the
    actual layer, |K_gat - 1| <= 1e-10.
    """

    id = "gated-sphere"
    source = "GEC Thm 3.6, Cor 3.7, Cor 3.8"
    statement = ("One gated attention layer (W_Q = W_K = 0) realizes an affine ungated output "
                 "(K = 0) and a unit-sphere gated output (K = 1 on U), for every D >= 3.")
    params = (AMBIENT, Param("values", "number n of tokens / value vectors", default=3))
    methods = ("symbolic", "numeric")
    limits = {"ambient": 64, "values": 256}
    examples = ({"ambient": 3, "values": 1}, {"ambient": 5, "values": 4},
                {"ambient": 3, "values": 3, "method": "numeric"})

    def hypothesis_violation(self, params):
        if params["ambient"] < 3:
            return f"Thm 3.6 and Cor 3.8 need a decoder dimension D >= 3; got D={params['ambient']}"
        return None

    def witness(self, params, context) -> attention.SphereWitness:
        return attention.build_sphere_witness(params["values"], params["ambient"], context.seed)

    def check_symbolic(self, params, context):
        w = self.witness(params, context)
        n, D = params["values"], params["ambient"]
        if D > 8:
            raise BadInput(f"the symbolic check is limited to D <= 8 (got {D}); use --method numeric")
        ops = SymbolicOps()
        phi = np.array(coordinates(2), dtype=object)
        X = w.tokens(phi, ops)
        W_Q = ops.const(w.W_Q)
        weights = ops.softmax((X @ W_Q) @ (X @ W_Q).T)
        failures = {}
        if any(sympy.simplify(x - sympy.Rational(1, n)) != 0 for x in weights.ravel()):
            failures["softmax weights"] = str(weights[-1].tolist())
        bad = zero_differences(w.ungated(phi, ops), w.affine(phi, ops))
        if bad:
            failures["ungated output - (a + B phi)"] = bad
        ungated = named_immersion("ungated", w.ungated)
        gamma = components(metric_to_christoffel_2nd(ungated.metric(), ungated.coords))
        if any(x != 0 for x in gamma):
            failures["ungated Christoffel symbols"] = str(gamma)
        theta, left = sympy.Matrix(w.W_theta.tolist()), sympy.Matrix(w.gate_left_inverse.tolist())
        if theta.rank() != D or left * theta != sympy.eye(D):
            failures["W_theta rank / left inverse"] = str(left * theta)
        corners = [(x, y) for x in (0, sympy.pi / 4) for y in (0, sympy.pi / 4)]
        lowest = min(sympy.Rational(w.offset[k]) + sum(sympy.Rational(w.slope[k][i]) * c[i]
                                                       for i in range(2))
                     for k in range(D) for c in corners)
        if not lowest > 1:
            failures["0 < s~/(a + B phi) < 1"] = f"min (a + B phi) over the corners = {lowest}"
        bad = zero_differences(w.gated(phi, ops), w.sphere(phi, ops))
        gated = named_immersion("gated", w.gated)
        if bad:
            # the output is not s~: its curvature is not the claim's (and is costly to expand)
            failures["gated output - s~"] = bad
            K_gated = None
        else:
            K_gated = gaussian_curvature(gated.metric(), gated.coords)
            if K_gated != 1:
                failures["K_gat"] = str(K_gated)
        constant = w.with_gate_strength(0)
        bad = zero_differences(constant.gated(phi, ops), w.affine(phi, ops) / 2)
        if bad:
            failures["constant gate output - Y/2"] = bad
        if failures:
            name = next(iter(failures))
            return refuted(method="symbolic", summary=f"the witness fails at: {name}",
                           counterexample={k: str(v) for k, v in failures.items()})
        return proved(checked=8, summary=(
            f"in the layer (n={n}, D={D}, m={w.token_dim}): softmax weights = 1/{n}; ungated output "
            f"= a + B phi with zero Christoffel symbols (K_ung = 0); rank W_theta = {D} with "
            f"W_theta^dagger W_theta = I; min (a + B phi) on the closure of U = {lowest} > 1 >= s~ > 0; "
            f"gated output = s~(phi) with K_gat = 1; W_theta = 0 gives Y/2 (Cor 3.7)"),
            evidence={"a": [str(x) for x in w.offset], "B": [[str(x) for x in r] for r in w.slope],
                      "W_V": w.W_V.tolist(), "W_O": w.W_O.tolist(), "W_theta": w.W_theta.tolist(),
                      "metric_gated": str(gated.metric()), "K_gated": str(K_gated)})

    def check_numeric(self, params, context):
        be = context_backend(context)
        w = self.witness(params, context)
        count = sample_count(context, 1000)
        points = uniform_points(context.sampler, count, *attention.SPHERE_SAMPLING_BOX)
        results = {}
        for name, function in (("gated", w.gated), ("ungated", w.ungated),
                               ("constant gate", w.with_gate_strength(0).gated)):
            values, jac, hess = named_immersion(name, function).jet(points, be)
            curv = immersion_curvature_from_jet(jac, hess, be)
            results[name] = (be.to_numpy(values), be.to_numpy(curv.gaussian),
                             be.to_numpy(curv.metric_eigenvalues())[:, 0])
        target = _sphere_values(points, w.tail)
        affine = np.asarray(w.offset, dtype=float) + points @ np.asarray(w.slope, dtype=float).T
        ratio = target / affine
        deviations = {
            "|K_gat - 1|": np.abs(results["gated"][1] - 1),
            "|K_ung|": np.abs(results["ungated"][1]),
            "|K| with W_theta = 0": np.abs(results["constant gate"][1]),
            "|Y' - s~|": np.abs(results["gated"][0] - target).max(axis=1),
            "|Y - (a + B phi)|": np.abs(results["ungated"][0] - affine).max(axis=1),
        }
        worst_name = max(deviations, key=lambda k: float(deviations[k].max()))
        worst = float(deviations[worst_name].max())
        inside = bool(np.all((ratio > 0) & (ratio < 1)))
        immersed = float(results["gated"][2].min())
        evidence = {name: float(value.max()) for name, value in deviations.items()}
        evidence.update({"ratio_in_(0,1)": inside, "min_metric_eigenvalue_gated": immersed,
                         "K_gat_range": [float(results["gated"][1].min()),
                                         float(results["gated"][1].max())]})
        if worst > SPHERE_TOLERANCE or not inside or not immersed > 0:
            b = int(np.argmax(deviations[worst_name]))
            return refuted(method="numeric", backend=be.name, device=be.device, checked=count,
                           max_residual=worst, evidence=evidence, summary=(
                               f"the witness layer misses at {worst_name} = {format_value(worst)}"),
                           counterexample={"phi": points[b].tolist(), worst_name:
                                           float(deviations[worst_name][b])})
        return consistent(checked=count, max_residual=worst, tolerance=SPHERE_TOLERANCE,
                          backend=be.name, device=be.device, evidence=evidence, summary=(
                              f"through the attention layer (n={params['values']}, "
                              f"D={params['ambient']}) at {count} points of [pi/32, 7pi/32]^2 in U: "
                              f"K_gat = 1, K_ung = 0 "
                              f"and K = 0 for W_theta = 0, all within {SPHERE_TOLERANCE:g}; "
                              f"s~/(a + B phi) in (0, 1)"))

    def show(self, params, fmt="text", limit=None):
        w = self.witness(params, CheckContext())
        return render_items([("a", list(w.offset)), ("B", w.slope.tolist()), ("W_Q = W_K", 0),
                        ("W_V", w.W_V.tolist()), ("W_O", w.W_O.tolist()),
                        ("W_theta", w.W_theta.tolist()),
                        ("W_theta^dagger", w.gate_left_inverse.tolist()),
                        ("X_1(phi)", "[n (a + B phi)^T (W_V W_O)_top^{-1}, 0]"),
                        ("X_g(phi) = X_n(phi)", "t(phi)^T W_theta^dagger, "
                                                "t = logit(s~(phi) / (a + B phi))"),
                        ("s~(phi)", "(cos p1 cos p2, cos p1 sin p2, sin p1"
                                    + ", 1/2" * (params["ambient"] - 3) + ")"),
                        ("U", "(0, pi/4)^2")], fmt)

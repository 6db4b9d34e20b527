"""GEC Thm 3.18-3.21 with Lemmas 3.19-3.20: robustness of the gated curvature under
perturbation of the gate, and genericity of nonflat gated outputs."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import context_backend, render_items, residual_verdict
from attngeom.geometry_proofs.gating import attention, gates
from attngeom.geometry_proofs.gating.common import (
    AMBIENT, DOMAIN_DIM, GECClaim, NONZERO_MARGIN, SPHERE_TOLERANCE, VARIANT,
    named_immersion, sample_count, sampled_affine, symbolic_vector, uniform_points,
    zero_differences)
from attngeom.geometry_proofs.riemann import (
    Immersion, cancel_trig, coordinates, immersion_to_riemann_lowered_at)
from attngeom.core.claim import Param
from attngeom.kernels.curvature import immersion_curvature_from_jet
from attngeom.core.errors import BadInput
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.verdict import Status, Verdict, combine, consistent, proved, refuted, with_erratum

# --------------------------------------------------------------------------------------
# GEC Thm 3.18, Lemma 3.19, Lemma 3.20
# --------------------------------------------------------------------------------------

#: The compact set of Thm 3.18 (iii): a 5 x 5 grid of [pi/16, 3 pi/16]^2 inside U.
ROBUSTNESS_GRID = np.array([(x, y) for x in np.linspace(np.pi / 16, 3 * np.pi / 16, 5)
                            for y in np.linspace(np.pi / 16, 3 * np.pi / 16, 5)])
#: Radii (Frobenius norm of W - W*) probed for the neighbourhood O of Lemma 3.20.
ROBUSTNESS_RADII = tuple(2.0 ** -k for k in range(0, 13))


class CurvatureRobustnessClaim(GECClaim):
    """GEC Thm 3.18 (proof A.1.14), Lemma 3.19 (A.1.12), Lemma 3.20 (A.1.13):
    mu_W(phi) = Y(phi) ⊙ sigma(X*(phi) W) with Y = a + B phi (rank 2) and m >= D >= 3:
    (i) a gate identically 1 gives K = 0; (ii) X*(phi) = (sigma^{-1}(z(phi)), 0, ..., 0),
    W* = [I_D; 0] gives K = 1 on U; (iii) K >= c/2 on a compact set for all W near W*.

    The statements (i)-(iii) are checked with the construction that works: z = s~ ⊘ Y (as
    Thm 3.6's Step 2 divides) gives mu_{W*} = s~ and K = 1, so (ii), an existence statement,
    holds.  The proof (A.1.14) prints z = s~ ⊙ Y instead.  Then mu_{W*} = Y ⊙ z =
    s~ ⊙ Y ⊙ Y, not s~, and with the proof's own choice Y > s~ (a = 2) z leaves (0, 1), so
    sigma^{-1}(z) does not exist.  That is a wrong step of the proof, not of the theorem:
    ``--variant printed`` (default) also runs the printed construction and, when it fails,
    attaches a proof-step erratum with the point; the verdict stays the statement's.
    ``--variant corrected`` checks the statement alone.  (i)'s hypothesis "gate identically 1"
    cannot hold for sigma: R -> (0, 1); the check uses the constant gate sigma(0) = 1/2
    (W = 0), which gives mu = Y/2 and K = 0.  (iii) is measured for the corrected
    construction: on the 25-point grid of [pi/16, 3pi/16]^2, along 12 seeded unit directions
    Delta (Frobenius norm), the largest radius r = 2^-k with det g > 0 and K >= 1/2 at every
    point for every radius up to r (Lemma 3.20 with c = 1); continuity (Lemma 3.19) as
    max |K(W* + t Delta) - 1| -> 0 linearly in t.
    """

    id = "curvature-robustness"
    source = "GEC Thm 3.18, Lemma 3.19, Lemma 3.20"
    statement = ("For mu_W = Y ⊙ sigma(X* W): a constant gate gives K = 0, the proof's W* gives "
                 "K = 1 on U, and K >= c/2 on a compact set for every W in a neighbourhood of W*.")
    params = (AMBIENT, Param("gate_dim", "gate input dimension m >= D (GEC Thm 3.18)", default=None),
              VARIANT)
    methods = ("numeric",)
    limits = {"ambient": 32, "gate_dim": 128}
    examples = ({"ambient": 3}, {"ambient": 3, "variant": "corrected"})

    def validate(self, params):
        if params["gate_dim"] is None:
            params["gate_dim"] = params["ambient"]
        super().validate(params)
        if params["variant"] not in ("printed", "corrected"):
            raise BadInput(f"--variant for {self.id} is printed or corrected; got {params['variant']!r}")

    def hypothesis_violation(self, params):
        if params["ambient"] < 3:
            return f"Thm 3.18 needs D >= 3; got D={params['ambient']}"
        if params["gate_dim"] < params["ambient"]:
            return f"Thm 3.18 needs m >= D; got m={params['gate_dim']}, D={params['ambient']}"
        return None

    def check_numeric(self, params, context):
        be = context_backend(context)
        D, m = params["ambient"], params["gate_dim"]
        corrected = gates.build_gate_realization(D, m, printed=False)
        parts = {"constant-gate": self._constant_gate(corrected, be, context)}
        proof = None
        if params["variant"] == "printed":
            proof = self._printed_construction(gates.build_gate_realization(D, m, printed=True))
            if proof.status is not Status.REFUTED:
                parts["printed-construction"] = proof
        parts["realization"] = self._realization(corrected, be, context)
        parts["neighbourhood"] = self._neighbourhood(corrected, be, context)
        verdict = combine(parts, summary=(
            "Thm 3.18 holds with the construction z = s~ ⊘ Y: K = 1 at W*, K >= 1/2 on the "
            "compact grid in a measured neighbourhood of W*; a constant gate gives K = 0"
            + ("; the proof's printed step z = s~ ⊙ Y fails (proof-step erratum)"
               if proof is not None and proof.status is Status.REFUTED else "")))
        if proof is not None and proof.status is Status.REFUTED:
            verdict.evidence["proof step as printed"] = {"summary": proof.summary,
                                                         "counterexample": proof.counterexample}
            with_erratum(verdict, Erratum(
                ErrorKind.PROOF_STEP, "GEC A.1.14 (proof of Thm 3.18 (ii))",
                "z(phi) = s~(phi) ⊙ Y(phi) in (0, 1)^D, l = sigma^{-1}(z)",
                "z = s~ ⊘ Y (Thm 3.6's division): mu_{W*} = s~ and K = 1 on U",
                "part 'realization' with z = s~ ⊘ Y: " + parts["realization"].status.value
                + "; the printed z gives mu_{W*} = s~ ⊙ Y ⊙ Y and leaves (0, 1)"))
        return verdict

    def _constant_gate(self, realization, be, context) -> Verdict:
        zero = np.zeros((realization.gate_dim, realization.ambient), dtype=np.int64).astype(object)
        function = lambda p, o: realization.output(p, o, o.const(zero))
        values, _ = symbolic_vector(function)
        half = [y / 2 for y in symbolic_vector(lambda p, o: gates.affine_output(
            p, realization.offset, realization.slope, o))[0]]
        exact = not zero_differences(values, half)
        curv = named_immersion("mu_0", function).curvature(ROBUSTNESS_GRID, be)
        worst = float(np.max(np.abs(be.to_numpy(curv.gaussian))))
        if not exact or worst > SPHERE_TOLERANCE:
            return refuted(method="numeric", backend=be.name, device=be.device,
                           summary="(i) the constant gate does not give a flat Y/2",
                           counterexample={"mu_0 = Y/2": exact, "max |K|": worst})
        return consistent(checked=len(ROBUSTNESS_GRID), max_residual=worst, tolerance=SPHERE_TOLERANCE,
                          backend=be.name, device=be.device, summary=(
                              "(i) 'gate identically 1' is unattainable for sigma: R -> (0, 1); the "
                              "constant gate sigma(0) = 1/2 (W = 0) gives mu = Y/2 exactly and K = 0"))

    def _printed_construction(self, printed) -> Verdict:
        values, coords = symbolic_vector(printed.output)
        target, _ = symbolic_vector(printed.target)
        residual = [cancel_trig(a - b) for a, b in zip(values, target)]
        point = {coords[0]: sympy.pi / 8, coords[1]: sympy.pi / 8}
        z = [sympy.nsimplify(x.subs(point)) for x in symbolic_vector(printed.z)[0]]
        outside = [k for k, x in enumerate(z) if not 0 < float(x) < 1]
        if not any(r != 0 for r in residual) and not outside:
            return proved(checked=len(values), summary="(ii) as printed, mu_{W*} = s~",
                          evidence={"residual": [str(r) for r in residual]})
        return refuted(method="symbolic", summary=(
            "(ii) as printed fails: z = s~ ⊙ Y gives mu_{W*} = Y ⊙ sigma(sigma^{-1}(z)) = s~ ⊙ Y ⊙ Y, "
            "not s~, and with Y > s~ (a = 2) z leaves (0, 1) where sigma^{-1} is undefined; "
            "z = s~ ⊘ Y (Thm 3.6's division) gives mu_{W*} = s~ and K = 1 (--variant corrected)"),
            counterexample={"a": [str(x) for x in printed.offset],
                            "B": [[str(x) for x in row] for row in printed.slope],
                            "phi": ["pi/8", "pi/8"], "z(phi) = s~ ⊙ Y": [str(x) for x in z],
                            "z outside (0, 1) at coordinates": [k + 1 for k in outside],
                            "mu_W* - s~ where defined": [str(sympy.factor(r)) for r in residual]})

    def _realization(self, realization, be, context) -> Verdict:
        values, _ = symbolic_vector(realization.output)
        target, _ = symbolic_vector(realization.target)
        exact = not zero_differences(values, target)
        count = sample_count(context, 200)
        points = uniform_points(context.sampler, count, *attention.SPHERE_SAMPLING_BOX)
        K = be.to_numpy(named_immersion("mu_W*", realization.output).curvature(points, be).gaussian)
        worst = float(np.max(np.abs(K - 1)))
        return residual_verdict(
            be, worst, SPHERE_TOLERANCE, holds=exact, checked=count,
            failure="(ii) corrected: mu_{W*} is not the sphere patch",
            counterexample={"mu_W* = s~": exact, "max |K - 1|": worst}, summary=(
                f"(ii) with z = s~ ⊘ Y: mu_{{W*}} = s~ exactly and K = 1 at {count} "
                f"points of U (within {SPHERE_TOLERANCE:g})"))

    def _neighbourhood(self, realization, be, context) -> Verdict:
        m, D = realization.gate_dim, realization.ambient
        sampler = context.sampler.spawn(7)
        directions = sampler.floats((12, m * D))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        star = np.asarray(realization.optimal_weights(), dtype=float).reshape(-1)
        scales = list(ROBUSTNESS_RADII) + [1e-2, 1e-3, 1e-4]
        weights = np.array([star + r * delta for r in scales for delta in directions])
        grid = len(ROBUSTNESS_GRID)
        points = np.tile(ROBUSTNESS_GRID, (len(weights), 1))
        parameters = np.repeat(weights, grid, axis=0)
        immersion = Immersion("mu_W", 2, realization.output_with_flat_weights, parameters=m * D)
        curv = immersion.curvature(points, be, parameters)
        with np.errstate(invalid="ignore"):  # a gate input outside (0, 1) gives nan: reported
            K = be.to_numpy(curv.gaussian).reshape(len(scales), len(directions) * grid)
            det = be.to_numpy(be.module.linalg.det(curv.metric)).reshape(len(scales), -1)
        smallest = lambda x: float(x[np.isfinite(x)].min()) if np.isfinite(x).any() else None
        rows = [{"radius": r, "min_K": smallest(K[i]), "min_det_g": smallest(det[i]),
                 "all_finite": bool(np.isfinite(K[i]).all() and np.isfinite(det[i]).all())}
                for i, r in enumerate(scales)]
        good = [row["all_finite"] and row["min_det_g"] > 0 and row["min_K"] >= 0.5
                for row in rows[:len(ROBUSTNESS_RADII)]]
        radius = next((ROBUSTNESS_RADII[i] for i in range(len(good)) if all(good[i:])), None)
        continuity = [float(np.max(np.abs(K[len(ROBUSTNESS_RADII) + k] - 1))) for k in range(3)]
        linear = all(continuity[k + 1] <= continuity[k] / 5 for k in range(2))
        evidence = {"rows": rows[:len(ROBUSTNESS_RADII)], "directions": len(directions),
                    "grid": "5 x 5 on [pi/16, 3pi/16]^2",
                    "max |K - 1| at t = 1e-2, 1e-3, 1e-4": continuity,
                    "tolerance_reason": "Lemma 3.19: |K - 1| at |W - W*|_F = 1e-4 below 1e-2, "
                                        "shrinking at least 5x per decade of t"}
        if radius is None or not linear:
            return refuted(method="numeric", backend=be.name, device=be.device, evidence=evidence,
                           summary="(iii) no radius 2^-k <= 1 keeps K >= 1/2 on the compact grid, or "
                                   "K is not continuous at W*",
                           counterexample={"rows": rows})
        return consistent(checked=len(weights) * grid, max_residual=continuity[-1],
                          tolerance=1e-2, backend=be.name, device=be.device, evidence=evidence,
                          summary=(f"(iii) det g > 0 and K >= c/2 = 1/2 on the compact grid for every "
                                   f"W with |W - W*|_F <= {radius:g} along {len(directions)} directions "
                                   f"(Lemma 3.20); |K - 1| shrinks linearly as W -> W* (Lemma 3.19)"))

    def show(self, params, fmt="text", limit=None):
        D, m = params["ambient"], params["gate_dim"]
        realization = gates.build_gate_realization(D, m, params["variant"] == "printed")
        return render_items([("Y(phi)", f"a + B phi, a = {[str(x) for x in realization.offset]}, "
                                   f"B = {[[str(x) for x in r] for r in realization.slope]}"),
                        ("z(phi)", "s~ ⊙ Y (as printed)" if realization.printed else "s~ ⊘ Y"),
                        ("X*(phi)", "(logit z(phi), 0, ..., 0) in R^m"),
                        ("W*", "[I_D; 0]"), ("compact set", "5 x 5 grid of [pi/16, 3pi/16]^2")], fmt)


# --------------------------------------------------------------------------------------
# GEC Thm 3.21
# --------------------------------------------------------------------------------------

def _normal_in_support(J0: np.ndarray, Y0: np.ndarray, tolerance: float = 1e-9):
    """A unit n in E ∩ T^perp (A.1.15): E = span{e_j : Y_j(phi0) != 0}, T = Im D mu(phi0)."""
    support = [j for j in range(len(Y0)) if abs(Y0[j]) > tolerance]
    basis = np.eye(len(Y0))[:, support]
    # n = E c with J0^T E c = 0
    _, singular, vh = np.linalg.svd(J0.T @ basis)
    c = vh[-1] if len(singular) < basis.shape[1] or singular[-1] < tolerance else None
    if c is None:
        return None, support
    n = basis @ c
    return n / np.linalg.norm(n), support


def _ijij(tensor: np.ndarray, i: int, j: int) -> float:
    return float(tensor[i, j, i, j])


class GenericNonflatClaim(GECClaim):
    """GEC Thm 3.21 (proof A.1.15): for Y = a + B phi (rank d, d >= 2) and phi0 with at least
    d + 1 nonzero coordinates of Y(phi0), the gates g with D mu_g(phi0) of rank d and
    R_g(phi0) != 0 are open and dense among those with D mu_g(phi0) of rank d.

    Checked as the proof argues.  Openness: random smooth gates (tanh / sigmoid networks)
    are immersions with R(phi0) != 0 (relative to |H|^2), and stay so under a 1e-3
    perturbation of their weights.  Density: for the flat gate g = 1/2 and for each random
    gate, a unit n in E ∩ T^perp and the printed perturbation (h_eps)_j = q_eps n_j / Y_j
    (q_eps = eps/2 |phi - phi0|^2) leave D mu(phi0) unchanged and give
    R~_ijij(eps) = R_ijij(0) + eps (B^1_ii + B^1_jj) + eps^2 with B^1_ij = <d_ij mu(phi0), n>
    (the proof's polynomial), so R~ != 0 for small eps != 0.  ``symbolic``: a rational
    instance (D = d + 1 ... , n = (3/5, 4/5, 0, ...)) with g = 1/2 and with a quadratic gate,
    where the engine's intrinsic R~_ijij(eps) equals the polynomial exactly in eps.
    """

    id = "generic-nonflat"
    source = "GEC Thm 3.21"
    statement = ("Gates g with R_g(phi0) != 0 are open and dense among gates with D(Y ⊙ g)(phi0) "
                 "of rank d, when Y(phi0) has >= d + 1 nonzero coordinates.")
    params = (DOMAIN_DIM, AMBIENT)
    methods = ("symbolic", "numeric")
    limits = {"domain_dim": 16, "ambient": 128}
    examples = ({"domain_dim": 2, "ambient": 3},
                {"domain_dim": 2, "ambient": 4, "method": "numeric", "samples": 6})

    def hypothesis_violation(self, params):
        d, D = params["domain_dim"], params["ambient"]
        if d < 2:
            return f"Thm 3.21 needs d >= 2; got d={d}"
        if D < d + 1:
            return f"Thm 3.21 needs d + 1 nonzero coordinates of Y(phi0), so D >= d + 1; got d={d}, D={D}"
        return None

    # -- the rational instance -----------------------------------------------------------
    def _rational_instance(self, d: int, D: int):
        """Y = 1 + B phi with B's columns (4, -3, 0, ...)/5, e_3, ..., e_(d+1), phi0 = 0,
        n = (3/5, 4/5, 0, ...) in E ∩ T^perp (T = Im B for gates with g(0) = 1/2, grad g(0) = 0)."""
        slope = np.zeros((D, d), dtype=object)
        slope[:, :] = Fraction(0)
        slope[0, 0], slope[1, 0] = Fraction(4, 5), Fraction(-3, 5)
        for i in range(1, d):
            slope[i + 1, i] = Fraction(1)
        normal = np.array([Fraction(3, 5), Fraction(4, 5)] + [Fraction(0)] * (D - 2), dtype=object)
        offset = np.array([Fraction(1)] * D, dtype=object)
        return offset, slope, normal

    def check_symbolic(self, params, context):
        d, D = params["domain_dim"], params["ambient"]
        if d > 3 or D > 6:
            raise BadInput("the symbolic check is limited to d <= 3, D <= 6; use --method numeric")
        offset, slope, normal = self._rational_instance(d, D)
        center = np.array([Fraction(0)] * d, dtype=object)
        eps = sympy.Symbol("epsilon", real=True)
        quadratic = np.array([[[Fraction(int(x), 4) for x in row] for row in block] for block in
                              context.sampler.integers((D, d, d), -3, 3)], dtype=object)
        quadratic = (quadratic + quadratic.transpose(0, 2, 1)) / 2
        origin = {x: 0 for x in coordinates(d)}
        results, checked = {}, 0
        for name, gate in (("g = 1/2 (flat)", gates.ConstantGate(D)),
                           ("g = 1/2 + quadratic", gates.QuadraticGate(center, quadratic))):
            mu = lambda p, o, gate=gate: gates.affine_output(p, offset, slope, o) * gate(p, o)
            perturbed = gates.PerturbedGate(gate, offset, slope, center, normal, tuple(range(D)), eps)
            mu_eps = lambda p, o: gates.affine_output(p, offset, slope, o) * perturbed(p, o)
            base, coords = symbolic_vector(mu, d)
            moved, _ = symbolic_vector(mu_eps, d)
            q = eps / 2 * sum(x ** 2 for x in coords)
            shift_ok = not zero_differences(moved, [b + q * sympy.Rational(nj) for b, nj in zip(base, normal)])
            jac = lambda f: sympy.Matrix(f).jacobian(list(coords)).subs(origin)
            same_jacobian = jac(moved) == jac(base)
            R_base = immersion_to_riemann_lowered_at(base, coords, origin)
            R_eps = immersion_to_riemann_lowered_at(moved, coords, origin)
            hess = [[sympy.Matrix(base).diff(coords[i], coords[j]).subs(origin) for j in range(d)]
                    for i in range(d)]
            n = sympy.Matrix([sympy.Rational(x) for x in normal])
            B1 = lambda i, j: (hess[i][j].T * n)[0]
            polynomial_ok = all(
                sympy.expand(R_eps[i, j, i, j] - (R_base[i, j, i, j] + eps * (B1(i, i) + B1(j, j)) + eps ** 2)) == 0
                for i in range(d) for j in range(d) if i != j)
            nonzero = R_eps[0, 1, 0, 1] != 0
            checked += 1
            results[name] = {"mu_eps = mu + q_eps n": shift_ok, "D mu(phi0) unchanged": same_jacobian,
                             "R~_ijij(eps) polynomial": polynomial_ok, "R~_1212(eps)": str(sympy.factor(R_eps[0, 1, 0, 1])),
                             "R_1212(0)": str(R_base[0, 1, 0, 1])}
            if not (shift_ok and same_jacobian and polynomial_ok and nonzero):
                return refuted(method="symbolic", summary=f"the density step fails for {name}",
                               counterexample={"gate": name, **{k: str(v) for k, v in results[name].items()}})
        return proved(checked=checked, evidence={"instances": results, "n": [str(x) for x in normal]},
                      summary=(f"rational instance (d={d}, D={D}, phi0 = 0, n = (3/5, 4/5, 0...)): for "
                               f"g = 1/2 and a quadratic gate, mu_(g+h_eps) = mu_g + q_eps n, D mu(phi0) "
                               f"is unchanged and the intrinsic R~_ijij(eps) = R_ijij(0) + eps (B_ii + "
                               f"B_jj) + eps^2 exactly (flat g: R~_1212 = {results['g = 1/2 (flat)']['R~_1212(eps)']})"))

    # -- numeric -------------------------------------------------------------------------
    def check_numeric(self, params, context):
        be = context_backend(context)
        d, D = params["domain_dim"], params["ambient"]
        sampler = context.sampler
        count = sample_count(context, 12)
        while True:
            offset, slope = (x.astype(float) for x in sampled_affine(sampler, D, d))
            if np.sum(np.abs(offset) > 0.5) >= d + 1:
                break
        center = np.zeros(d)
        family = gates.PerturbedGateFamily(offset, slope, center)
        immersion = Immersion("Y ⊙ (g + h_eps)", d, family, parameters=family.size)
        gate_list = [gates.MLPGate(np.zeros((family.hidden, d)), np.zeros(family.hidden),
                                   np.zeros((D, family.hidden)), np.zeros(D))]
        gate_list += [gates.random_gate(sampler.spawn(10 + k), d, D, family.hidden) for k in range(count)]
        names = ["g = 1/2 (flat)"] + [f"random gate {k + 1}" for k in range(count)]
        nearby = [g.perturbed(sampler.spawn(100 + k), 1e-3) for k, g in enumerate(gate_list)]
        no_normal, full = np.zeros(D), np.ones(D)
        base_rows = [family.pack(g, no_normal, 0.0, full) for g in gate_list + nearby]
        jets = self._jets(immersion, base_rows, center, be)
        epsilons = (0.5, 0.1, 0.01)
        normals, eps_rows = [], []
        for k in range(len(gate_list)):
            n, support = _normal_in_support(jets["jac"][k], offset)
            normals.append((n, support))
            mask = np.array([1.0 if j in support else 0.0 for j in range(D)])
            for eps in epsilons:
                eps_rows.append(family.pack(gate_list[k], n if n is not None else no_normal, eps, mask))
        perturbed = self._jets(immersion, eps_rows, center, be)
        rows, failures, worst = [], [], 0.0
        for k, name in enumerate(names):
            R0, scale = jets["riemann"][k], jets["scale"][k]
            n, _ = normals[k]
            row = {"gate": name, "immersion": bool(jets["eigen"][k] > 1e-9),
                   "relative_R(phi0)": float(np.abs(R0).max() / scale) if scale > 0 else 0.0,
                   "relative_R(phi0), perturbed weights":
                       float(np.abs(jets["riemann"][len(gate_list) + k]).max()
                             / jets["scale"][len(gate_list) + k])}
            if k > 0 and not min(row["relative_R(phi0)"], row["relative_R(phi0), perturbed weights"]) \
                    > NONZERO_MARGIN:
                failures.append(f"{name}: R(phi0) = 0 (openness)")
            if n is None or not row["immersion"]:
                failures.append(f"{name}: no immersion / no normal in E ∩ T^perp")
                rows.append(row)
                continue
            B1 = np.einsum("aij,a->ij", jets["hess"][k], n)
            residual, unchanged, nonzero = 0.0, True, True
            for e, eps in enumerate(epsilons):
                b = k * len(epsilons) + e
                R_eps = perturbed["riemann"][b]
                unchanged &= bool(np.allclose(perturbed["jac"][b], jets["jac"][k], rtol=0, atol=1e-12))
                nonzero &= bool(np.abs(R_eps).max() > NONZERO_MARGIN * eps ** 2)
                for i in range(d):
                    for j in range(d):
                        if i != j:
                            predicted = _ijij(R0, i, j) + eps * (B1[i, i] + B1[j, j]) + eps ** 2
                            size = abs(_ijij(R0, i, j)) + eps * (abs(B1[i, i]) + abs(B1[j, j])) + eps ** 2
                            residual = max(residual, abs(_ijij(R_eps, i, j) - predicted) / size)
            row.update({"D mu unchanged": unchanged, "R~(eps) != 0": nonzero,
                        "polynomial_residual": residual, "n": n.tolist()})
            worst = max(worst, residual)
            if not unchanged or not nonzero:
                failures.append(f"{name}: the density perturbation changes D mu(phi0) or leaves R~ = 0")
            if residual > 1e-8:
                failures.append(f"{name}: R~_ijij(eps) is not R_ijij(0) + eps (B_ii + B_jj) + eps^2")
            rows.append(row)
        evidence = {"gates": rows, "a": offset.tolist(), "B": slope.tolist(), "phi0": center.tolist()}
        if failures:
            return refuted(method="numeric", backend=be.name, device=be.device, max_residual=worst,
                           evidence=evidence, summary=failures[0],
                           counterexample={"failures": failures, "a": offset.tolist(), "B": slope.tolist()})
        return consistent(checked=len(names), max_residual=worst, tolerance=1e-8, backend=be.name,
                          device=be.device, evidence=evidence, summary=(
                              f"{count} random smooth gates (d={d}, D={D}) are immersions with "
                              f"R(phi0) != 0, also after perturbing their weights (open); for them and "
                              f"for the flat g = 1/2 the perturbation h_eps keeps D mu(phi0) and gives "
                              f"R~_ijij(eps) = R_ijij(0) + eps (B_ii + B_jj) + eps^2 != 0 (dense)"))

    @staticmethod
    def _jets(immersion: Immersion, rows: list, center: np.ndarray, be) -> dict:
        parameters = np.array(rows)
        points = np.tile(center, (len(rows), 1))
        _, jac, hess = immersion.jet(points, be, parameters)
        curv = immersion_curvature_from_jet(jac, hess, be)
        return {"jac": be.to_numpy(jac), "hess": be.to_numpy(hess),
                "riemann": be.to_numpy(curv.riemann), "scale": be.to_numpy(curv.scale),
                "eigen": be.to_numpy(curv.metric_eigenvalues())[:, 0]}

    def show(self, params, fmt="text", limit=None):
        return render_items([("mu_g", "(a + B phi) ⊙ g(phi)"),
                        ("h_eps", "(h_eps)_j = chi q_eps n_j / Y_j (j in S), q_eps = eps/2 |phi - phi0|^2"),
                        ("n", "unit vector in E ∩ T^perp, E = span{e_j : Y_j(phi0) != 0}"),
                        ("R~_ijij(eps)", "R_ijij(0) + eps (B^1_ii + B^1_jj) + eps^2")], fmt)

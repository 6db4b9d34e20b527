"""GEC Thm 3.1, Thm 3.2 and Cor 3.3: ungated attention is flat on the flat chart of its
output hull, and the curvature lower bound for ungated blocks (with the witness that
refutes it as printed and the affine-chart variant that holds)."""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import context_backend, format_value, render_items
from attngeom.geometry_proofs.gating import attention, gates
from attngeom.geometry_proofs.gating.common import (
    AFFINE_DIM, AMBIENT, FLAT_TOLERANCE, GECClaim, SPHERE_TOLERANCE, VARIANT,
    named_immersion, sample_count, symbolic_vector, uniform_points)
from attngeom.geometry_proofs.riemann import (
    cancel_trig, components, coordinates, fisher_rao_metric, gaussian_curvature,
    metric_to_christoffel_1st, metric_to_christoffel_2nd, metric_to_riemann_lowered)
from attngeom.core.claim import CheckContext, Param
from attngeom.core.errors import BadInput
from attngeom.core.erratum import Erratum, ErratumSpec, ErrorKind
from attngeom.kernels.sampling import Sampler
from attngeom.core.verdict import Verdict, consistent, not_applicable, proved, refuted

# --------------------------------------------------------------------------------------
# GEC Thm 3.1
# --------------------------------------------------------------------------------------

def _shear(phi, ops):
    """A polynomial diffeomorphism with polynomial inverse (Jacobian determinant 1), the
    composition of two triangular shears: u_i = phi_i + phi_{i+1}^2 (i < k), u_k = phi_k,
    then psi_1 = u_1, psi_i = u_i + u_{i-1}^2 (i > 1).

    One shear alone is too special a chart: at k = 2 its Christoffel symbols are constant
    (Gamma^1_22 = 2 only), so every d Gamma and every Gamma Gamma product vanishes and a
    wrong Riemann formula would still give R = 0.  The composition is not triangular: its
    Christoffel symbols are non-constant and their products do not vanish, for every k >= 2."""
    k = len(phi)
    upper = [phi[i] + phi[i + 1] ** 2 for i in range(k - 1)] + [phi[k - 1]]
    return ops.stack([upper[0]] + [upper[i] + upper[i - 1] ** 2 for i in range(1, k)])


class UngatedFlatClaim(GECClaim):
    """GEC Thm 3.1 (proof A.1.1): mu(phi) = a + B phi with B in R^{D x k} of full column
    rank gives the constant metric C = B^T B, zero Christoffel symbols and R = 0, and any
    reparametrization psi keeps R(psi^* g) = 0.

    ``symbolic``: a and B are D + Dk symbols; the engine finds every d g, every Gamma and
    every R component zero; the reparametrization (two polynomial shears psi of det 1, at
    rational seeded B) is expanded exactly.  ``numeric`` without ``--values``: the same on a
    backend (the reparametrized map has a nonzero Hessian, so R = 0 is a cancellation).

    ``--values n`` measures the theorem's scope: a 2-parameter input family
    x(phi) = x0 + phi_1 v1 + phi_2 v2 queries a softmax attention layer with n fixed value
    vectors (GEC §2.2's M_ung = {N(Y(X))}, X in the family).  For n = 3 the outputs fill
    an open subset of the 2-dimensional hull: flat.  For n >= 4 the outputs form a curved
    surface inside the flat (n-1)-dimensional hull: Thm 3.1 is about the k-dimensional
    affine chart of the whole hull, and does not make the manifold of a lower-dimensional
    input family flat; that reading is ``refuted`` with the measured K.  For n = 2 the hull
    is a segment and no 2-parameter family is immersed (``not-applicable``).
    """

    id = "ungated-flat"
    source = "GEC Thm 3.1"
    statement = ("An affine mean map a + B phi (B of full column rank) gives a constant "
                 "Fisher–Rao metric, zero Christoffel symbols and zero curvature, for any k, "
                 "D and any reparametrization.")
    params = (AFFINE_DIM, AMBIENT,
              Param("values", "number n of fixed value vectors: measure a 2-parameter input "
                    "family through softmax attention (numeric)", default=None))
    methods = ("symbolic", "numeric")
    limits = {"k": 64, "ambient": 1024, "values": 64}
    examples = ({"k": 2, "ambient": 3}, {"k": 3, "ambient": 5},
                {"values": 2, "samples": 100}, {"values": 3, "samples": 100},
                {"values": 4, "samples": 100}, {"values": 5, "samples": 100})

    def auto_method(self, params):
        return "numeric" if params["values"] else "symbolic"

    def hypothesis_violation(self, params):
        if params["values"] is None and params["k"] > params["ambient"]:
            return (f"Thm 3.1 needs B in R^(D x k) of full column rank, so k <= D; "
                    f"got k={params['k']}, D={params['ambient']}")
        return None

    def _affine(self, params, sampler: Sampler):
        D, k = params["ambient"], params["k"]
        while True:
            slope = sampler.integers((D, k), -3, 3)
            if np.linalg.matrix_rank(slope) == k:
                return sampler.integers(D, -3, 3), slope

    def check_symbolic(self, params, context):
        if params["values"]:
            raise BadInput("--values measures softmax attention numerically; use --method numeric")
        D, k = params["ambient"], params["k"]
        if k > 4 or D > 12:
            raise BadInput(f"the symbolic check is limited to k <= 4, D <= 12 (got k={k}, D={D}); "
                           "use --method numeric")
        a = np.array(sympy.symbols(f"a_1:{D + 1}", real=True), dtype=object)
        B = np.array([[sympy.Symbol(f"b_{i + 1}_{j + 1}", real=True) for j in range(k)]
                      for i in range(D)], dtype=object)
        mean, coords = symbolic_vector(lambda p, o: gates.affine_output(p, a, B, o), k)
        metric = fisher_rao_metric(mean, coords, simplify=sympy.expand)
        constant = all(sympy.diff(entry, x) == 0 for entry in metric for x in coords)
        gamma1 = components(metric_to_christoffel_1st(metric, coords, sympy.expand))
        if not constant or any(x != 0 for x in gamma1):
            # the theorem says Gamma = 0; a nonzero symbol refutes it without the Riemann tensor
            return refuted(method="symbolic", summary="the metric of the mean map is not constant: "
                           "nonzero Christoffel symbols", counterexample={
                               "metric": str(metric), "nonzero": str([x for x in gamma1 if x != 0][:3])})
        gamma2 = metric_to_christoffel_2nd(metric, coords, sympy.expand)
        riemann = metric_to_riemann_lowered(metric, coords, sympy.expand)
        generic_zero = [x for x in components(gamma2) + components(riemann) if x != 0]
        offset, slope = self._affine(params, context.sampler)
        shear = lambda phi, ops: gates.affine_output(_shear(phi, ops), offset, slope, ops)
        repar = named_immersion("a + B psi(phi)", shear, k)
        repar_metric = repar.metric(sympy.expand)
        # det psi' = 1 and g constant make det(psi^* g) constant: the inverse metric, the
        # Christoffel symbols and R are polynomials, and sympy.expand decides zero
        repar_riemann = [x for x in components(metric_to_riemann_lowered(
            repar_metric, repar.coords, sympy.expand)) if x != 0]
        repar_gamma = components(metric_to_christoffel_2nd(repar_metric, repar.coords, sympy.expand))
        if generic_zero or repar_riemann:
            return refuted(method="symbolic", summary="an affine mean map gave a nonzero "
                           "metric derivative, Christoffel symbol or curvature component",
                           counterexample={"metric": str(metric), "nonzero": str((generic_zero or
                                                                                  repar_riemann)[:3])})
        return proved(checked=2 * k ** 3 + 2 * k ** 4, summary=(
            f"mu = a + B phi (generic a in R^{D}, B in R^({D}x{k})): g = B^T B is constant, all "
            f"{2 * k ** 3} Christoffel symbols and {k ** 4} Riemann components vanish; after the "
            f"reparametrization psi (two polynomial shears, det 1) all {k ** 4} components of "
            f"R(psi^* g) expand to 0"),
            evidence={"metric": str(metric), "reparametrization": "u_i = phi_i + phi_(i+1)^2, psi_i = u_i + u_(i-1)^2",
                      "reparametrized_metric_entries_nonconstant":
                          sum(1 for e in repar_metric if e.free_symbols),
                      # non-constant Christoffel symbols: d Gamma and Gamma Gamma both enter R
                      "reparametrized_christoffel_nonconstant":
                          sum(1 for x in repar_gamma if x.free_symbols),
                      "B_for_reparametrization": slope.tolist()})

    def check_numeric(self, params, context):
        be = context_backend(context)
        if params["values"]:
            return self._softmax_scope(params["values"], context, be)
        D, k = params["ambient"], params["k"]
        sampler = context.sampler
        offset, slope = self._affine(params, sampler)
        offset, slope = offset.astype(float), slope.astype(float)
        count = sample_count(context, 200)
        points = uniform_points(sampler.spawn(1), count, -1.0, 1.0, k)
        worst = 0.0
        for name, function in (("a + B phi", lambda p, o: gates.affine_output(p, offset, slope, o)),
                               ("a + B psi(phi)",
                                lambda p, o: gates.affine_output(_shear(p, o), offset, slope, o))):
            curv = named_immersion(name, function, k).curvature(points, be)
            riemann = be.to_numpy(curv.riemann).reshape(count, -1)
            scale = be.to_numpy(curv.scale)
            worst = max(worst, float(np.max(np.abs(riemann).max(axis=1) / np.maximum(scale, 1e-300))))
        if worst > FLAT_TOLERANCE:
            return refuted(method="numeric", summary="an affine mean map gave a nonzero curvature",
                           counterexample={"relative_curvature": worst}, backend=be.name,
                           device=be.device)
        return consistent(checked=2 * count, max_residual=worst, tolerance=FLAT_TOLERANCE,
                          backend=be.name, device=be.device, summary=(
                              f"R = 0 for a + B phi and a + B psi(phi) at {count} points each "
                              f"(k={k}, D={D}), relative to |H|^2"),
                          evidence={"tolerance_reason": "float64 rounding of the Gauss equation"})

    def _softmax_scope(self, n: int, context: CheckContext, be) -> Verdict:
        family = attention.build_memory_family(n, context.seed)
        count = sample_count(context, 200)
        points = uniform_points(context.sampler.spawn(1), count, -1.0, 1.0)
        curv = named_immersion(f"softmax family, n={n}", family.output).curvature(points, be)
        eigen = be.to_numpy(curv.metric_eigenvalues())
        ratio = eigen[:, 0] / eigen[:, -1]
        immersed = ratio > 1e-12
        evidence = {"points": count,
                    "min_metric_eigenvalue_ratio": float(ratio.min()),
                    "max_metric_eigenvalue_ratio": float(ratio.max())}
        if not immersed.any():
            verdict = not_applicable(
                f"Thm 3.1 with k = dim aff(U_1..U_{n}) = {n - 1} < 2: no 2-parameter input family "
                f"is immersed (smallest / largest metric eigenvalue below 1e-12 at all {count} "
                f"points), so its curvature is undefined")
            verdict.evidence.update(evidence)
            return verdict
        K = be.to_numpy(curv.gaussian)[immersed]
        relative = np.abs(K) / be.to_numpy(curv.gaussian_scale)[immersed]
        worst = int(np.argmax(relative))
        evidence.update({"immersed_points": int(immersed.sum()),
                         "K_min": float(K.min()), "K_max": float(K.max()),
                         "max_relative_K": float(relative[worst])})
        if relative[worst] <= FLAT_TOLERANCE:
            return consistent(checked=int(immersed.sum()), max_residual=float(relative[worst]),
                              tolerance=FLAT_TOLERANCE, backend=be.name, device=be.device,
                              summary=(f"n={n} values: the outputs of the 2-parameter input family "
                                       f"fill an open subset of the 2-dimensional hull, K = 0 at "
                                       f"{int(immersed.sum())} points (Thm 3.1 applies, k = 2)"),
                              evidence=evidence)
        point = points[immersed][worst]
        return refuted(method="numeric", backend=be.name, device=be.device,
                       checked=int(immersed.sum()), evidence=evidence, summary=(
                           f"scope of Thm 3.1: with n={n} fixed values the hull is "
                           f"{n - 1}-dimensional and flat, but the outputs of a 2-parameter input "
                           f"family through softmax attention form a curved surface (K from "
                           f"{K.min():.3g} to {K.max():.3g}); Thm 3.1 holds for the k-dimensional "
                           f"affine chart of the whole hull (proved by --method symbolic), not "
                           f"for the manifold of an input family of smaller dimension"),
                       erratum=Erratum(
                           ErrorKind.FALSE_STATEMENT,
                           "GEC §3.1 (the reading of Thm 3.1 after it; Remark 3.4, proof of Thm 3.2)",
                           "Theorem 3.1 shows that ungated attention produces intrinsically flat "
                           "representations",
                           "Thm 3.1 holds for the k-dimensional affine chart of the whole value hull "
                           "(proved); the output manifold of a lower-dimensional input family through "
                           "softmax attention is curved"),
                       counterexample={"phi": point.tolist(), "K": float(K[worst]),
                                       "relative_to_scale": float(relative[worst]),
                                       "weights": family.as_json(),
                                       "map": "softmax((C W_K)(x0 + phi_1 v1 + phi_2 v2) W_Q) U"})

    def show(self, params, fmt="text", limit=None):
        D, k = params["ambient"], params["k"]
        coords = coordinates(k)
        B = sympy.Matrix(D, k, lambda i, j: sympy.Symbol(f"b_{i + 1}_{j + 1}", real=True))
        return render_items([("mu(phi)", "a + B phi"), ("g = B^T B", sympy.expand(B.T * B)),
                        ("Gamma^k_ij", 0), ("R", 0), ("coordinates", coords)], fmt)


# --------------------------------------------------------------------------------------
# GEC Thm 3.2, Cor 3.3
# --------------------------------------------------------------------------------------

def _sphere_target(phi, ops):
    return attention.sphere_patch(phi, ops, ())


def _ungated_sphere_realizations() -> dict:
    """Ungated blocks whose output on a 2-parameter input family is the unit-sphere patch:
    softmax attention over fixed values (attention.MemorySphere), and Thm 3.6's own layer
    (W_Q = W_K = 0) whose input map carries U_1 = n s(phi) instead of n (a + B phi)."""
    witness = attention.build_sphere_witness(3, 3)
    return {"softmax attention over 4 fixed values, q(phi) = log alpha(phi)":
                attention.MemorySphere().output,
            "Thm 3.6's layer (W_Q = W_K = 0, uniform weights), X_1(phi) L = 3 s(phi)":
                lambda phi, ops: witness.ungated(phi, ops, carried=_sphere_target(phi, ops))}


def _affine_chart(phi, ops):
    """The affine chart of a 2-dimensional hull (Thm 3.1): a + B phi."""
    return ops.const([2, 1, 0]) + ops.const([[1, 0], [0, 1], [1, -1]]) @ phi


class CurvatureLowerBoundClaim(GECClaim):
    """GEC Thm 3.2 and Cor 3.3: if F* on U subset R^m has K >= kappa_0 > 0, then
    sup |K_ung - K*| >= kappa_0 for every representation F_ung of a single ungated block, so
    no ungated block approximates F* within curvature error eps < kappa_0.

    Target: the unit-sphere patch s(phi) on U = (0, pi/4)^2, K* = 1 = kappa_0.

    ``--variant printed`` tests the statement as printed, with "realized by a single ungated
    attention block" read as Thm 3.6 reads "realized" (an input map phi -> X(phi) into a
    layer with fixed weights).  Two ungated blocks realize s(phi) exactly, so
    sup |K_ung - K*| = 0 < kappa_0: softmax attention with 4 fixed keys e_i and fixed values
    (3e_1, 3e_2, 3e_3, 0) queried by q = log of the barycentric coordinates of s(phi), and
    Thm 3.6's own layer with U_1 = n s(phi).  The proof's step "by Thm 3.1 K_ung = 0" uses
    Thm 3.1 beyond its scope (see ungated-flat --values).  The same witness contradicts
    Thm 3.9 (the gated sphere patch is isometric to an ungated one).

    ``--variant affine-chart`` is what the proof does establish: F_ung = a + B phi, an
    affine chart of a hull of dimension m (values spanning at most m affine dimensions).
    Then K_ung = 0 and sup |0 - K*| = 1 >= kappa_0.
    """

    id = "curvature-lower-bound"
    source = "GEC Thm 3.2, Cor 3.3"
    statement = ("A target with K >= kappa_0 > 0 is at curvature distance >= kappa_0 from every "
                 "single ungated attention block; no ungated block approximates it within "
                 "eps < kappa_0.")
    erratum_spec = ErratumSpec(
        ErrorKind.MISSING_HYPOTHESIS,
        "sup |K_ung - K*| >= kappa_0 for any representation F_ung realized by a single ungated "
        "attention block",
        "holds when F_ung is the affine chart a + B phi of a value hull of dimension m (Thm 3.1's "
        "setting, which the proof's 'by Thm 3.1, K_ung = 0' assumes); two ungated blocks realize "
        "the unit-sphere patch exactly",
        {"variant": "affine-chart"}, location="GEC Thm 3.2, Cor 3.3 (proof A.1.2)")
    params = (VARIANT,)
    methods = ("symbolic", "numeric")
    examples = ({"variant": "printed"}, {"variant": "affine-chart"})

    def validate(self, params):
        super().validate(params)
        if params["variant"] not in ("printed", "affine-chart"):
            raise BadInput(f"--variant for {self.id} is printed or affine-chart; got {params['variant']!r}")

    def _conclude(self, method, differences: dict, backend=None, device=None, checked=None,
                  residual=None) -> Verdict:
        """differences: realization name -> sup |K_ung - K*| (exact or measured)."""
        kappa = 1
        below = {name: gap for name, gap in differences.items() if float(gap) < kappa}
        if below:
            name, gap = next(iter(below.items()))
            return refuted(method=method, backend=backend, device=device, checked=checked,
                           max_residual=residual, summary=(
                               f"refuted as printed: an ungated block realizes the unit-sphere "
                               f"patch (K* = 1 = kappa_0) with sup |K_ung - K*| = {format_value(gap)} < kappa_0 "
                               f"({name}); the bound holds for affine charts of an m-dimensional "
                               f"hull (--variant affine-chart), not for every ungated block; the "
                               f"same witness contradicts Thm 3.9"),
                           counterexample={"target": "s(phi) = (cos p1 cos p2, cos p1 sin p2, "
                                                     "sin p1), U = (0, pi/4)^2, kappa_0 = 1",
                                           "realizations": {k: v if isinstance(v, float) else str(v)
                                                            for k, v in differences.items()},
                                           "keys": "e_1, ..., e_4", "values": "3e_1, 3e_2, 3e_3, 0",
                                           "query": "log(s1/3, s2/3, s3/3, 1 - (s1+s2+s3)/3)"})
        summary = (f"sup |K_ung - K*| >= kappa_0 = 1 for every block tested "
                   f"({', '.join(f'{k}: {format_value(v)}' for k, v in differences.items())})")
        if method == "symbolic":
            return proved(checked=len(differences), summary=summary,
                          evidence={"sup_differences": {k: str(v) for k, v in differences.items()}})
        return consistent(checked=checked, max_residual=residual, tolerance=SPHERE_TOLERANCE,
                          backend=backend, device=device, summary=summary,
                          evidence={"sup_differences": {k: float(v) for k, v in differences.items()}})

    def _blocks(self, params) -> dict:
        if params["variant"] == "affine-chart":
            return {"affine chart a + B phi of a 2-dimensional hull": _affine_chart}
        return _ungated_sphere_realizations()

    def check_symbolic(self, params, context):
        target = named_immersion("s", _sphere_target)
        K_target = gaussian_curvature(target.metric(), target.coords)
        differences = {}
        grid = uniform_points(context.sampler, 64, *attention.SPHERE_DOMAIN)
        for name, function in self._blocks(params).items():
            block = named_immersion(name, function)
            gap = cancel_trig(gaussian_curvature(block.metric(), block.coords) - K_target)
            if gap.free_symbols:
                # not constant on U: its sup over a seeded grid (a lower bound of the sup)
                values = sympy.lambdify(block.coords, gap, "numpy")(*grid.T)
                differences[name] = float(np.max(np.abs(values)))
            else:
                differences[name] = abs(gap)
        return self._conclude("symbolic", differences)

    def check_numeric(self, params, context):
        be = context_backend(context)
        count = sample_count(context, 200)
        points = uniform_points(context.sampler, count, *attention.SPHERE_SAMPLING_BOX)
        K_target = be.to_numpy(named_immersion("s", _sphere_target).curvature(points, be).gaussian)
        differences = {}
        for name, function in self._blocks(params).items():
            K_block = be.to_numpy(named_immersion(name, function).curvature(points, be).gaussian)
            differences[name] = float(np.max(np.abs(K_block - K_target)))
        residual = float(np.max(np.abs(K_target - 1)))
        return self._conclude("numeric", differences, be.name, be.device, count * len(differences),
                              residual)

    def show(self, params, fmt="text", limit=None):
        items = [("target", "s(phi) = (cos p1 cos p2, cos p1 sin p2, sin p1), K* = 1"),
                 ("kappa_0", 1)]
        for name, function in self._blocks(params).items():
            values, _ = symbolic_vector(function)
            items.append((name, [cancel_trig(v) for v in values]))
        return render_items(items, fmt)

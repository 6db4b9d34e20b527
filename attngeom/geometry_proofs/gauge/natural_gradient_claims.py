"""GT eqs (5), (6) (natural gradients) against the Riemannian gradient of F under the
Fisher–Rao metric computed from the Fisher information itself
(:mod:`attngeom.geometry_proofs.gauge.natural_gradient`), and GT eq (7) (the SPD retraction,
:mod:`attngeom.geometry_proofs.gauge.retraction`).
"""

from __future__ import annotations

import numpy as np
import scipy.stats
import sympy

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge import natural_gradient as NG
from attngeom.geometry_proofs.gauge import retraction as RT
from attngeom.geometry_proofs.gauge.autodiff import autodiff_backend, gradient, hessian, relative_error
from attngeom.geometry_proofs.gauge.beliefs import sample_covariances, sigma_points
from attngeom.geometry_proofs.gauge.claim_base import (
    AUTODIFF_TOLERANCE, COVARIANCE, DIM, HEAD_DIM, KAPPA, SIGMA, TOKENS, VARIANT,
    GaugeClaim, parse_sigma, symbolic_identity)
from attngeom.geometry_proofs.gauge.free_energy import free_energy
from attngeom.geometry_proofs.gauge.transport import random_rotation
from attngeom.core.erratum import ErratumSpec, ErrorKind
from attngeom.core.verdict import combine, consistent, refuted
from attngeom.kernels.backend import get_backend


def agent_gradients(be, system, i: int):
    """(grad_theta F for agent i in theta = (mu_i, vech Sigma_i), grad_mu_i F, the symmetric
    matrix gradient grad_Sigma_i F), all by autodiff of F."""
    dim = system.dim
    select = np.zeros((system.tokens, 1))
    select[i] = 1.0
    base_mu, base_S = system.mu * (1 - select), system.Sigma * (1 - select[:, :, None])

    def of_theta(theta):
        mu = be.asarray(base_mu) + be.asarray(select) * theta[:dim][None, :]
        S = be.asarray(base_S) + be.asarray(select[:, :, None]) * NG.unvech(theta[dim:], dim, be)[None]
        return free_energy(mu, S, be.asarray(system.frames), system, be)

    theta = np.concatenate([system.mu[i], NG.vech(system.Sigma[i])])
    grad_theta = gradient(be, of_theta, theta)[0]
    g_mu, g_S = gradient(be, lambda m, S: free_energy(m, S, be.asarray(system.frames), system, be),
                         system.mu, system.Sigma)
    return grad_theta, g_mu[i], g_S[i]


def density_row(mu: np.ndarray, Sigma: np.ndarray, sample: int, agent: int) -> dict:
    """The model both Fisher informations differentiate, log N(x; mu, Sigma)
    (:func:`attngeom.geometry_proofs.gauge.natural_gradient.log_density`), against SciPy's
    multivariate normal log-density at the sigma points (a comparison row)."""
    points, _ = sigma_points(mu, Sigma)
    theta = np.concatenate([mu, NG.vech(Sigma)])
    numpy_be = get_backend("numpy")
    value = np.array([float(NG.log_density(x, theta, mu.shape[0], numpy_be)) for x in points])
    reference = scipy.stats.multivariate_normal(mu, Sigma).logpdf(points)
    return {"sample": sample, "agent": agent, "error": relative_error(value, reference),
            "printed": "log N(x; theta) (log_density)", "reference": "scipy.stats.multivariate_normal.logpdf"}


#: E[score score^T] is also computed (3^K Gauss-Hermite points, first agent of the first
#: sample) up to this K
SCORE_CHECK_MAX_DIM = 4


class NaturalGradientClaim(GaugeClaim):
    """GT eq (5) / (6) against G^{-1} grad_theta F, G the Fisher information of N(mu_i, Sigma_i)
    in theta = (mu, vech Sigma) from -E[Hess log p] (autodiff Hessians, exact sigma-point
    expectation).  Symbolic: K = 2, G from the moments (SymPy), a generic gradient."""

    params = (TOKENS, DIM, HEAD_DIM, KAPPA, COVARIANCE, SIGMA, VARIANT)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 2, "variant": "corrected"}, {"dim": 3}, {"dim": 3, "variant": "corrected"},
                {"dim": 3, "covariance": "diagonal"})
    default_samples = 2
    limits = {"tokens": 8, "dim": 8}
    block = "mean"

    def formula(self, variant):
        if self.block == "mean":
            return NG.natural_gradient_mean_eq5 if variant == "printed" else NG.natural_gradient_mean_corrected
        return NG.natural_gradient_cov_eq6 if variant == "printed" else NG.natural_gradient_cov_corrected

    def check_numeric(self, params, context):
        be = autodiff_backend(context)
        formula = self.formula(params["variant"])
        rows, cosines, chain, scores = [], [], [], []
        for sample, system in enumerate(self.systems(params, context)):
            for i in range(min(system.tokens, 2)):
                grad_theta, g_mu, g_S = agent_gradients(be, system, i)
                fisher = NG.fisher_information(system.mu[i], system.Sigma[i], be, hessian)
                if system.dim <= SCORE_CHECK_MAX_DIM and sample == 0 and i == 0:
                    by_scores = NG.fisher_from_scores(system.mu[i], system.Sigma[i], be, gradient)
                    scores.append({"sample": sample, "agent": i, "error": relative_error(by_scores, fisher),
                                   "printed": "E[score score^T]", "reference": "-E[Hess log p]"})
                    scores.append(density_row(system.mu[i], system.Sigma[i], sample, i))
                v_mu, v_S = NG.riemannian_gradient(fisher, grad_theta, system.dim)
                reference = v_mu if self.block == "mean" else v_S
                value = formula(system.Sigma[i], g_mu if self.block == "mean" else g_S)
                # the chain rule between the two gradients: d F / d Sigma_ab (a < b) = 2 (grad_Sigma F)_ab
                doubled = g_S * (2 - np.eye(system.dim))
                chain.append(relative_error(NG.vech(doubled), grad_theta[system.dim:]))
                cosines.append(float(np.vdot(value, reference) / (np.linalg.norm(value) * np.linalg.norm(reference))))
                rows.append({"sample": sample, "agent": i, "error": relative_error(value, reference),
                             "printed": value, "reference (G^-1 grad)": reference, "Sigma_i": system.Sigma[i],
                             "Fisher condition number": float(np.linalg.cond(fisher))})
        for row in rows:
            row["reference"] = row.pop("reference (G^-1 grad)")
        evidence = {"cosine(printed, G^-1 grad)": [round(c, 6) for c in cosines],
                    "vech chain-rule check (max relative error)": max(chain),
                    "Fisher": "-E[Hess_theta log N(x; theta)], autodiff Hessians at the 2K sigma points (exact)"}
        out = self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                           holds=f"{self.source} ({params['variant']}) equals G^{{-1}} grad F (Fisher from -E[Hess log p])",
                           fails=f"{self.source} ({params['variant']}) is not the Riemannian gradient G^{{-1}} grad F",
                           evidence=evidence)
        if scores:
            agree = self.compare(scores, tolerance=1e-10, backend=be.name, device=be.device, context=context,
                                 holds="the two definitions of the Fisher information agree, and the "
                                       "model's log-density is SciPy's",
                                 fails="E[score score^T] differs from -E[Hess log p], or the model's "
                                       "log-density is not N(mu, Sigma)",
                                 why="both expectations exact (sigma points, Gauss-Hermite); float64 rounding")
            out = combine({"formula": out, "fisher-definitions": agree})
            out.evidence.update(evidence)
        return out

    def check_symbolic(self, params, context):
        fisher, mu, Sigma, theta = NG.symbolic_fisher(2)
        g = sympy.Matrix(sympy.symbols("g1:3", real=True))
        h11, h12, h22 = sympy.symbols("h11 h12 h22", real=True)
        H = sympy.Matrix([[h11, h12], [h12, h22]])
        grad_theta = sympy.Matrix([g[0], g[1], h11, 2 * h12, h22])
        v = fisher.LUsolve(grad_theta)
        printed = params["variant"] == "printed"
        if self.block == "mean":
            value = Sigma.inv() * g if printed else Sigma * g
            differences = [v[a] - value[a] for a in range(2)]
        else:
            value = -Sigma.inv() * H * Sigma.inv() / 2 if printed else 2 * Sigma * H * Sigma
            differences = [v[2] - value[0, 0], v[3] - value[0, 1], v[4] - value[1, 1]]
        point = {mu[0]: 1, mu[1]: -1, Sigma[0, 0]: 2, Sigma[0, 1]: 1, Sigma[1, 1]: 3,
                 g[0]: 1, g[1]: 2, h11: 1, h12: sympy.Rational(1, 2), h22: -1}
        return symbolic_identity(differences, list(point), witness_point=point,
                                 holds=f"{self.source} ({params['variant']}) = G^{{-1}} grad exactly (K = 2, G from moments)",
                                 fails=f"{self.source} ({params['variant']}) is not G^{{-1}} grad (K = 2, G from moments)",
                                 evidence={"dimension": 2, "Fisher": str(fisher.tolist())})


class NaturalGradientMeanClaim(NaturalGradientClaim):
    """GT eq (5): natural gradient of the mean = Sigma^{-1} grad_mu F.  The Fisher block for
    mu is Sigma^{-1} (GT says so), so G^{-1} grad is Sigma grad_mu F: ``refuted`` as printed;
    ``--variant corrected`` checks Sigma grad_mu F."""

    id = "gt-natural-gradient-mean"
    source = "GT eq (5)"
    statement = "The natural gradient of F in mu is Sigma^{-1} grad_mu F."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "natural gradient in mu = Sigma^{-1} grad_mu F",
                               "Sigma grad_mu F (G^{-1} grad with the Fisher block Sigma^{-1} that GT states)",
                               {"variant": "corrected"})
    block = "mean"

    def show(self, params, fmt="text", limit=None):
        return render_items([("printed (5)", "Sigma^{-1} grad_mu F"), ("G^{-1} grad", "Sigma grad_mu F")], fmt)


class NaturalGradientCovarianceClaim(NaturalGradientClaim):
    """GT eq (6): natural gradient of the covariance = -1/2 Sigma^{-1} (grad_Sigma F) Sigma^{-1}.
    The Fisher metric on covariances is g(A, B) = 1/2 tr(Sigma^{-1} A Sigma^{-1} B), so
    G^{-1} grad is 2 Sigma (grad_Sigma F) Sigma: ``refuted`` as printed (inverse instead of
    Sigma, factor -1/4); ``--variant corrected`` checks 2 Sigma grad_Sigma F Sigma."""

    id = "gt-natural-gradient-covariance"
    source = "GT eq (6)"
    statement = "The natural gradient of F in Sigma is -1/2 Sigma^{-1} (grad_Sigma F) Sigma^{-1}."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "natural gradient in Sigma = -1/2 Sigma^{-1} grad_Sigma F Sigma^{-1}",
                               "2 Sigma grad_Sigma F Sigma (G^{-1} grad for the Fisher metric 1/2 tr(Sigma^{-1} A Sigma^{-1} B))",
                               {"variant": "corrected"})
    block = "covariance"

    def show(self, params, fmt="text", limit=None):
        return render_items([("printed (6)", "-1/2 Sigma^{-1} grad_Sigma F Sigma^{-1}"),
                       ("G^{-1} grad", "2 Sigma grad_Sigma F Sigma")], fmt)


#: step sizes for the first-order test and the SPD test
FIRST_ORDER_STEPS = (1e-2, 1e-3, 1e-4)
SPD_STEPS = (1e-2, 0.1, 1.0)
#: measured order of |R(eta) - (Sigma + eta V)| in eta must be >= this (2 for a retraction)
ORDER_THRESHOLD = 1.9
EQUIVARIANCE_TOLERANCE = 1e-10


class RetractionClaim(GaugeClaim):
    """GT eq (7): Sigma_new = Sigma^{1/2} exp(eta Sigma^{-1/2} V Sigma^{-1/2}) Sigma^{1/2}
    (i) is SPD for every sampled Sigma, V and eta in {0.01, 0.1, 1} (|V| = |Sigma|); (ii) agrees to first order
    with the step Sigma + eta V fed to it: |Sigma_new - Sigma - eta V| = O(eta^2), the
    measured order over eta = 1e-2, 1e-3, 1e-4 at least 1.9; (iii) is equivariant:
    R(g Sigma g^T, g V g^T) = g R(Sigma, V) g^T for seeded g in SO(K).  V is the natural
    gradient of eq 6 (as printed) and of the corrected eq 6, at sampled symmetric gradients."""

    id = "gt-spd-retraction"
    source = "GT eq (7)"
    statement = "Sigma^{1/2} exp(eta Sigma^{-1/2} V Sigma^{-1/2}) Sigma^{1/2} stays SPD, is a first-order retraction and gauge-equivariant."
    params = (DIM, COVARIANCE, SIGMA)
    methods = ("numeric",)
    examples = ({"dim": 4}, {"dim": 20, "covariance": "diagonal"})
    limits = {"dim": 64}
    default_samples = 4

    def check_numeric(self, params, context):
        dim = params["dim"]
        spd, orders, equivariance, factor = [], [], [], []
        for sample in range(self.sample_count(context)):
            sampler = context.sampler.spawn(sample)
            Sigma = sample_covariances(sampler.spawn(1), 1, dim, params["covariance"] == "diagonal")[0]
            if params.get("sigma") is not None:
                Sigma = parse_sigma(params["sigma"])
            grad = sampler.spawn(2).floats((dim, dim))
            grad = 0.5 * (grad + grad.T)
            g = random_rotation(sampler.spawn(3), dim)
            for name, V in (("eq 6 printed", NG.natural_gradient_cov_eq6(Sigma, grad)),
                            ("eq 6 corrected", NG.natural_gradient_cov_corrected(Sigma, grad))):
                V = V / np.linalg.norm(V) * np.linalg.norm(Sigma)
                for eta in SPD_STEPS:
                    spd.append((float(np.linalg.eigvalsh(RT.retract_eq7(Sigma, V, eta)).min()), sample, name, eta))
                errors = [np.linalg.norm(RT.retract_eq7(Sigma, V, eta) - Sigma - eta * V) for eta in FIRST_ORDER_STEPS]
                slope = np.polyfit(np.log(FIRST_ORDER_STEPS), np.log(np.maximum(errors, 1e-300)), 1)[0]
                orders.append((float(slope), sample, name, [float(e) for e in errors]))
                left = RT.retract_eq7(g @ Sigma @ g.T, g @ V @ g.T, 1.0)
                right = g @ RT.retract_eq7(Sigma, V, 1.0) @ g.T
                equivariance.append((relative_error(left, right), sample, name))
                cholesky = RT.retract_eq7(Sigma, V, 1.0, root=np.linalg.cholesky(Sigma))
                factor.append(relative_error(cholesky, RT.retract_eq7(Sigma, V, 1.0)))
        worst_spd, worst_order, worst_eq = min(spd), min(orders), max(equivariance)
        parts = {}
        if worst_spd[0] <= 0:
            parts["spd"] = refuted(method="numeric", backend="numpy", device="cpu", summary="(i) eq 7 left the SPD cone",
                                   counterexample={"seed": context.seed, "sample": worst_spd[1], "V": worst_spd[2],
                                                   "eta": worst_spd[3], "smallest eigenvalue": worst_spd[0]})
        else:
            parts["spd"] = consistent(checked=len(spd), max_residual=0.0, tolerance=0.0, backend="numpy", device="cpu",
                                      summary=f"(i) SPD: smallest eigenvalue {worst_spd[0]:.3g} > 0",
                                      evidence={"smallest eigenvalue": worst_spd[0]})
        if worst_order[0] < ORDER_THRESHOLD:
            parts["first-order"] = refuted(
                method="numeric", backend="numpy", device="cpu",
                summary=f"(ii) eq 7 is not first-order: |R - Sigma - eta V| ~ eta^{worst_order[0]:.2f}",
                counterexample={"seed": context.seed, "sample": worst_order[1], "V": worst_order[2],
                                "eta": list(FIRST_ORDER_STEPS), "errors": worst_order[3]})
        else:
            parts["first-order"] = consistent(
                checked=len(orders), max_residual=0.0, tolerance=0.0, backend="numpy", device="cpu",
                summary=f"(ii) |R - Sigma - eta V| ~ eta^{worst_order[0]:.2f} (first order agrees)",
                evidence={"measured orders": [round(o[0], 3) for o in orders]})
        if worst_eq[0] > EQUIVARIANCE_TOLERANCE:
            parts["equivariance"] = refuted(
                method="numeric", backend="numpy", device="cpu",
                summary="(iii) eq 7 is not equivariant under Sigma -> g Sigma g^T",
                counterexample={"seed": context.seed, "sample": worst_eq[1], "V": worst_eq[2],
                                "relative error": worst_eq[0]})
        else:
            parts["equivariance"] = consistent(
                checked=len(equivariance), max_residual=worst_eq[0], tolerance=EQUIVARIANCE_TOLERANCE,
                backend="numpy", device="cpu",
                summary=f"(iii) equivariant under SO({dim}) (within {EQUIVARIANCE_TOLERANCE:g})")
        out = combine(parts)
        out.evidence["Cholesky factor in place of Sigma^{1/2}: largest relative change"] = max(factor)
        return out

    def show(self, params, fmt="text", limit=None):
        return render_items([("eq 7", "Sigma^{1/2} exp(eta Sigma^{-1/2} V Sigma^{-1/2}) Sigma^{1/2}")], fmt)


CLAIMS = [NaturalGradientMeanClaim(), NaturalGradientCovarianceClaim(), RetractionClaim()]

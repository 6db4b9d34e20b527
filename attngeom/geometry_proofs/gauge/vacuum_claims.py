"""GT Appendix B: eq (52), the gauge invariance of the vacuum free energy (B.2), the
stationarity condition eq (53) and its consequence eq (54), against autodiff of eq (51)
including the dependence of beta on mu (:mod:`attngeom.geometry_proofs.gauge.vacuum`).
"""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge import gradients as G
from attngeom.geometry_proofs.gauge import vacuum as V
from attngeom.geometry_proofs.gauge.autodiff import autodiff_backend, gradient, relative_error
from attngeom.geometry_proofs.gauge.beliefs import (kl_by_expectation, symbolic_covariance, symbolic_gaussian_kl,
                                           symbolic_mean)
from attngeom.geometry_proofs.gauge.claim_base import (
    AUTODIFF_TOLERANCE, COVARIANCE, DIM, HEAD_DIM, KAPPA, SIGMA, TOKENS, VARIANT,
    GaugeClaim, symbolic_identity)
from attngeom.geometry_proofs.gauge.free_energy import evaluate, free_energy, pair_arrays
from attngeom.geometry_proofs.gauge.symbolic_free_energy import assembled, decide, scalar_system, stationarity_eq53
from attngeom.geometry_proofs.gauge.transport import random_rotation
from attngeom.kernels.backend import get_backend
from attngeom.core.erratum import ErratumSpec, ErrorKind
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import gaussian_kl

#: |F(g.q) - F(q)| / |F|: float64 rounding of a sum of O(N^2) KL terms of size O(1)
INVARIANCE_TOLERANCE = 1e-11


class VacuumClaim(GaugeClaim):
    params = (TOKENS, DIM, HEAD_DIM, KAPPA, COVARIANCE)

    def vacuum_systems(self, params, context):
        return [V.vacuum_system(context.sampler.spawn(k), params["tokens"], params["dim"], params["head_dim"],
                                params["kappa"], params["covariance"] == "diagonal")
                for k in range(self.sample_count(context))]


class VacuumPriorKLClaim(VacuumClaim):
    """GT eq (52): KL(q_i || N(0, sigma_p^2 I)) = 1/2 [|mu_i|^2/sigma_p^2 + tr Sigma_i/sigma_p^2 - K
    - log(|Sigma_i| / sigma_p^{2K})].  Symbolic: K = 2 against App. C.1's closed form;
    numeric: against the kernel's KL and the exact sigma-point expectation E_q[log q - log p]."""

    id = "gt-vacuum-prior-kl"
    source = "GT eq (52)"
    statement = "KL(q || N(0, s^2 I)) = 1/2 [|mu|^2/s^2 + tr Sigma/s^2 - K - log(|Sigma|/s^{2K})]."
    params = (TOKENS, DIM, COVARIANCE, SIGMA)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 4}, {"dim": 20, "covariance": "diagonal"})
    limits = {"tokens": 12, "dim": 64}

    def check_symbolic(self, params, context):
        mu, S = symbolic_mean("m", 2), symbolic_covariance("s", 2)
        var = sympy.Symbol("sigma_p2", positive=True)
        closed = symbolic_gaussian_kl(mu, S, sympy.zeros(2, 1), var * sympy.eye(2))
        printed = sympy.Rational(1, 2) * ((mu.T * mu)[0, 0] / var + S.trace() / var - 2 - sympy.log(S.det() / var ** 2))
        difference = sympy.expand_log(sympy.logcombine(closed - printed, force=True), force=True)
        return symbolic_identity([sympy.simplify(difference)], list(mu) + [var],
                                 holds="eq (52) equals App. C.1's KL against N(0, sigma_p^2 I) exactly (K = 2)",
                                 fails="eq (52) differs from App. C.1's KL (K = 2)", evidence={"dimension": 2})

    def check_numeric(self, params, context):
        numpy_be = get_backend("numpy")
        rows = []
        for sample, system in enumerate(self.systems(params, context, observed=False)):
            var = 0.5 + sample * 0.75
            for i in range(system.tokens):
                value = V.prior_kl_eq52(system.mu[i], system.Sigma[i], var)
                prior = var * np.eye(system.dim)
                for name, reference in (("kernel closed form", float(gaussian_kl(system.mu[i], system.Sigma[i],
                                                                                np.zeros(system.dim), prior, numpy_be))),
                                        ("E_q[log q - log p]", kl_by_expectation(system.mu[i], system.Sigma[i],
                                                                                 np.zeros(system.dim), prior))):
                    rows.append({"sample": sample, "agent": i, "reference kind": name, "sigma_p^2": var,
                                 "error": relative_error(value, reference), "printed": value, "reference": reference})
        return self.compare(rows, tolerance=1e-10, backend="numpy", device="cpu", context=context,
                            holds="eq (52) equals the closed-form KL and E_q[log q - log p]",
                            fails="eq (52) differs from the KL", why="float64 rounding of K-term sums and log det")

    def show(self, params, fmt="text", limit=None):
        return render_items([("eq 52", "1/2 [|mu|^2/s^2 + tr Sigma/s^2 - K - log(|Sigma| / s^{2K})]")], fmt)


class VacuumGaugeInvarianceClaim(VacuumClaim):
    """GT B.2: F_vac (eq 51) is invariant under a global g in SO(n) acting by mu -> g mu,
    Sigma -> g Sigma g^T and Omega_ij -> g Omega_ij g^{-1} (frames phi -> g phi g^T).
    Measured at seeded g for sampled vacuum systems; the evidence also records how much F
    changes when the frames are not transformed and when observations are present (eq 55,
    the symmetry breaking of B.4)."""

    id = "gt-vacuum-gauge-invariance"
    source = "GT App. B.2, eq (51)"
    statement = "F_vac[g q] = F_vac[q] for g in SO(n) acting on beliefs and (covariantly) on Omega_ij."
    methods = ("numeric",)
    examples = ({"dim": 4}, {"dim": 6, "head_dim": 3}, {"dim": 4, "covariance": "diagonal", "kappa": "0.5"})

    def check_numeric(self, params, context):
        be = get_backend(context.backend, context.device)
        rows, frames_fixed, observed = [], [], []
        for sample, system in enumerate(self.vacuum_systems(params, context)):
            base = evaluate(system, be)["F"]
            for k in range(3):
                g = random_rotation(context.sampler.spawn(200 + 10 * sample + k), system.head_dim)
                moved = evaluate(V.gauge_transform(system, g), be)["F"]
                rows.append({"sample": sample, "rotation": k, "error": abs(moved - base) / abs(base),
                             "printed": moved, "reference": base, "g": g})
                frames_fixed.append(abs(evaluate(V.gauge_transform(system, g, False), be)["F"] - base) / abs(base))
                with_obs = V.gauge_transform(system, g)
                system_obs = V.gauge_transform(system, np.eye(system.head_dim))
                system_obs.observations = with_obs.observations = np.arange(system.tokens) % system.dim
                observed.append(abs(evaluate(with_obs, be)["F"] - evaluate(system_obs, be)["F"]) / abs(base))
        evidence = {"frames not transformed: largest relative change of F": max(frames_fixed),
                    "with observations (eq 55): largest relative change of F": max(observed)}
        return self.compare(rows, tolerance=INVARIANCE_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds="F_vac is invariant under global g in SO(n) (frames transformed covariantly)",
                            fails="F_vac changes under a global gauge transformation", evidence=evidence,
                            why="float64 rounding of a sum of O(N^2) KL terms of size O(1)")

    def show(self, params, fmt="text", limit=None):
        return render_items([("transformation", "mu -> g mu, Sigma -> g Sigma g^T, phi -> g phi g^T"),
                       ("F_vac", "sum_i KL(q_i || p_i) + sum_ij beta_ij KL(q_i || Omega_ij q_j)")], fmt)


class VacuumStationarityClaim(VacuumClaim):
    """GT eq (53): dF_vac/dmu_i = mu_i / sigma_p^2 + sum_j beta_ij Sigma_j^{-1} (mu_i - Omega_ij mu_j).

    Against autodiff of eq 51 (beta depends on mu).  As printed it uses Sigma_j^{-1} where the
    derivative has (Omega_ij Sigma_j Omega_ij^T)^{-1}, and drops the terms of the other
    agents aligning to i and every derivative of beta.  ``--variant corrected``:
    mu_i/sigma_p^2 + sum_j [beta_ij - beta_ij/kappa (K_ij - <K>_i)] (Omega_ij Sigma_j Omega_ij^T)^{-1}(mu_i - Omega_ij mu_j)
    + sum_{k != i} [beta_ki - beta_ki/kappa (K_ki - <K>_k)] Sigma_i^{-1} (mu_i - Omega_ik mu_k),
    <K>_k = sum_j beta_kj K_kj."""

    id = "gt-vacuum-stationarity"
    source = "GT eq (53)"
    statement = "dF_vac/dmu_i = mu_i/sigma_p^2 + sum_j beta_ij Sigma_j^{-1} (mu_i - Omega_ij mu_j)."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "dF_vac/dmu_i = mu_i/sigma_p^2 + sum_j beta_ij Sigma_j^{-1} (mu_i - Omega_ij mu_j)",
                               "mu_i/sigma_p^2 + sum_j [beta_ij - beta_ij/kappa (K_ij - <K>_i)] (Omega Sigma_j Omega^T)^{-1}(mu_i - Omega_ij mu_j) "
                               "+ sum_{k != i} [beta_ki - beta_ki/kappa (K_ki - <K>_k)] Sigma_i^{-1}(mu_i - Omega_ik mu_k)",
                               {"variant": "corrected"})
    params = VacuumClaim.params + (VARIANT,)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 2, "variant": "corrected"}, {"dim": 4}, {"dim": 4, "variant": "corrected"},
                {"dim": 4, "covariance": "diagonal", "variant": "corrected"})
    default_samples = 2

    def auto_method(self, params):
        return "symbolic" if params["dim"] <= 2 else "numeric"

    def check_symbolic(self, params, context):
        """K = 1, N = 2 scalar agents with priors N(0, sigma_p^2) in closed form: dF_vac/dm_1
        minus eq 53 (printed) or minus the corrected formula."""
        system = scalar_system(2, vacuum=True)
        formula = (stationarity_eq53(system) if params["variant"] == "printed"
                   else assembled(system, "mean", corrected=True))
        return decide(sympy.diff(system.F, system.m[0]) - formula, system.point(),
                      holds=f"eq (53) ({params['variant']}) is the exact derivative of eq (51) (K = 1, N = 2)",
                      fails=f"eq (53) ({params['variant']}) is not the derivative of eq (51) (K = 1, N = 2)",
                      evidence={"dimension": 1, "agents": 2, "beta": "depends on mu"})

    def check_numeric(self, params, context):
        be = autodiff_backend(context)
        numpy_be = get_backend("numpy")
        rows, stages = [], {"printed": [], "with (Omega Sigma_j Omega^T)^{-1}": [], "+ others aligning to i": []}
        for sample, system in enumerate(self.vacuum_systems(params, context)):
            var = system.extra["prior_var"]
            reference = gradient(be, lambda m: free_energy(m, be.asarray(system.Sigma), be.asarray(system.frames),
                                                           system, be), system.mu)[0]
            values = evaluate(system, numpy_be)
            omega = pair_arrays(system, numpy_be)["omega"]
            N = system.tokens
            row, col = np.zeros((N, N, system.dim)), np.zeros((N, N, system.dim))
            for i in range(N):
                for j in range(N):
                    if i != j:
                        row[i, j] = G.grad_mu_query(system.mu[i], system.mu[j], system.Sigma[j], omega[i, j])
                        col[i, j] = G.grad_mu_key(system.mu[j], system.mu[i], system.Sigma[i], omega[j, i])
            floor = 1e-3 * np.linalg.norm(reference)
            for i in range(N):
                printed = G.vacuum_stationarity_eq53(i, system.mu, system.Sigma, omega, values["beta"], var)
                own = system.mu[i] / var
                direct = own + values["beta"][i] @ row[i]
                plus_columns = direct + values["beta"][:, i] @ col[i]
                corrected = G.assembled_corrected(i, values["kl"], values["beta"], system.kappa, row[i], col[i],
                                                  own, 0.0)
                for name, v in (("printed", printed), ("with (Omega Sigma_j Omega^T)^{-1}", direct),
                                ("+ others aligning to i", plus_columns)):
                    stages[name].append(relative_error(v, reference[i], floor))
                value = printed if params["variant"] == "printed" else corrected
                rows.append({"sample": sample, "agent": i, "error": relative_error(value, reference[i], floor),
                             "printed": value, "reference": reference[i], "sigma_p^2": var})
        evidence = {f"relative error, {name}": max(errors) for name, errors in stages.items()}
        return self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds=f"eq (53) ({params['variant']}) equals autodiff of eq (51) (beta depending on mu)",
                            fails=f"eq (53) ({params['variant']}) is not dF_vac/dmu_i (autodiff of eq 51, beta depending on mu)",
                            evidence=evidence)

    def show(self, params, fmt="text", limit=None):
        return render_items([("printed (53)", "mu_i/s^2 + sum_j beta_ij Sigma_j^{-1} (mu_i - Omega_ij mu_j)"),
                       ("corrected", "mu_i/s^2 + sum_j [beta_ij - beta_ij/kappa (K_ij - <K>_i)] (Omega Sigma_j Omega^T)^{-1}"
                                     "(mu_i - Omega_ij mu_j) + sum_k [beta_ki - beta_ki/kappa (K_ki - <K>_k)] "
                                     "Sigma_i^{-1}(mu_i - Omega_ik mu_k)")], fmt)


class VacuumGroundStateClaim(VacuumClaim):
    """GT eq (54): in the symmetric phase (mu_i = mu*, Omega_ij = I) stationarity gives mu* = 0.

    Against autodiff of eq 51 with beta depending on mu: at mu_i = m for all i and equal
    frames, dF_vac/dmu_i = m / sigma_p^2 for every i and every sampled m (the alignment
    terms and the derivatives of beta vanish because every mu_i - Omega_ij mu_j = 0), so the
    gradient vanishes exactly when m = 0; at m = 0 it is 0 (stationary)."""

    id = "gt-vacuum-ground-state"
    source = "GT eq (54)"
    statement = "In the symmetric phase mu_i = mu*, Omega_ij = I, the stationarity condition gives mu* = 0."
    methods = ("numeric",)
    examples = ({"dim": 4}, {"dim": 6, "head_dim": 3, "covariance": "diagonal"})

    def check_numeric(self, params, context):
        be = autodiff_backend(context)
        rows = []
        for sample, system in enumerate(self.vacuum_systems(params, context)):
            var = system.extra["prior_var"]
            for label, mean in (("m sampled", context.sampler.spawn(300 + sample).floats((system.dim,))),
                                ("m = 0", np.zeros(system.dim))):
                phase = V.symmetric_phase(system, mean)
                reference = gradient(be, lambda m: free_energy(m, be.asarray(phase.Sigma), be.asarray(phase.frames),
                                                               phase, be), phase.mu)[0]
                predicted = V.symmetric_phase_gradient(mean, var)
                scale = max(np.linalg.norm(predicted), 1.0)
                for i in range(system.tokens):
                    rows.append({"sample": sample, "mean": label, "agent": i,
                                 "error": float(np.linalg.norm(predicted - reference[i]) / scale),
                                 "printed": predicted, "reference": reference[i], "m": mean})
        return self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds="dF_vac/dmu_i = mu*/sigma_p^2 in the symmetric phase (autodiff), zero only at mu* = 0",
                            fails="the symmetric-phase gradient is not mu*/sigma_p^2",
                            why="float64 autodiff; errors relative to max(|mu*/sigma_p^2|, 1)")

    def show(self, params, fmt="text", limit=None):
        return render_items([("symmetric phase", "mu_i = mu*, Omega_ij = I"), ("dF/dmu_i", "mu*/sigma_p^2"),
                       ("eq 54", "mu* = 0")], fmt)


CLAIMS = [VacuumPriorKLClaim(), VacuumGaugeInvarianceClaim(), VacuumStationarityClaim(), VacuumGroundStateClaim()]

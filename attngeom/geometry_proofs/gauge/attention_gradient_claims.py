"""GT's gradients through the KL-attention weights: eqs (15), (27), (50) (the softmax
weights) and the assembled free-energy gradients, eqs (14), (16)-(19) (means),
(20)-(23) (covariances) and (28)-(31) (frames).

References: autodiff (torch.func / jax) of beta = softmax(-K / kappa) and of the free
energy F of GT eq 9 (:mod:`attngeom.geometry_proofs.gauge.free_energy`), at seeded sampled
beliefs, priors, frames and observations; central finite differences of F as a second
opinion for the assembled gradients.

Finding (assembled gradients): GT's sums take the product rule for agent i's own row of
weights (eq 17, 21, 28) but for the other agents' rows keep only beta_ki grad K_ki
(eqs 18, 22, 30).  The weights beta_kj of every row k also depend on theta_i through K_ki
(the softmax normalizer), which adds

    -1/kappa sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) grad_{theta_i} K_ki;

without it the printed gradients are ``refuted`` (``--variant corrected`` adds it).
"""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge import gradients as G
from attngeom.geometry_proofs.gauge.autodiff import (autodiff_backend, finite_difference_gradient, gradient, jacobian,
                                            relative_error)
from attngeom.geometry_proofs.gauge.claim_base import (
    AUTODIFF_TOLERANCE, COVARIANCE, DIM, FD_TOLERANCE, HEAD_DIM, KAPPA, TOKENS, VARIANT,
    GaugeClaim, require_interacting_agents, symbolic_identity)
from attngeom.geometry_proofs.gauge.free_energy import attention_weights, evaluate, free_energy, kl_matrix, pair_arrays
from attngeom.geometry_proofs.gauge.symbolic_free_energy import (assembled, decide, generic_alignment, generic_point,
                                                      scalar_system)
from attngeom.kernels.backend import get_backend
from attngeom.core.erratum import ErratumSpec, ErrorKind
from attngeom.core.verdict import combine

ARGUMENTS = {"mu": 0, "Sigma": 1, "frames": 2}


def _state(system):
    return [system.mu, system.Sigma, system.frames]


def kl_jacobian(be, system, argument: str) -> np.ndarray:
    """d K_ij / d theta_l for every pair and agent, shape=[N, N, N, *theta_l.shape]."""
    index = ARGUMENTS[argument]
    state = [be.asarray(x) for x in _state(system)]

    def kl_of(x):
        args = list(state)
        args[index] = x
        return kl_matrix(*args, system, be)

    return jacobian(be, kl_of, _state(system)[index])


# ---------------------------------------------------------------------------------------
# eqs 15, 27, 50: the gradient of the softmax weights


class BetaGradientClaim(GaugeClaim):
    """GT eq (15): grad_theta beta_ij = -1/kappa beta_ij [grad_theta K_ij - sum_k beta_ik grad_theta K_ik],
    checked for theta = mu_i and theta = phi_i (the frame coordinates).

    Symbolic: beta_j = softmax(-K_j(t) / kappa) with K_1..K_3 arbitrary functions of t;
    d beta_j / dt minus the formula cancels.  Numeric: the Jacobian of beta (autodiff)
    against the formula fed with the autodiff Jacobian of K."""

    id = "gt-beta-gradient"
    source = "GT eq (15)"
    statement = "grad beta_ij = -1/kappa beta_ij [grad K_ij - sum_k beta_ik grad K_ik]."
    params = (TOKENS, DIM, HEAD_DIM, KAPPA, COVARIANCE)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 4}, {"dim": 6, "head_dim": 3, "kappa": "0.5"},
                {"dim": 4, "covariance": "diagonal", "kappa": "1.3"})
    arguments = ("mu", "frames")
    default_samples = 2

    def sign(self, params) -> float:
        return G.EQ15_SIGN

    def check_symbolic(self, params, context):
        t, kappa = sympy.Symbol("t", real=True), sympy.Symbol("kappa", positive=True)
        K = [sympy.Function(f"K{j}")(t) for j in range(1, 4)]
        weights = [sympy.exp(-k / kappa) for k in K]
        beta = [w / sum(weights) for w in weights]
        grads = [sympy.diff(k, t) for k in K]
        mean = sum(b * g for b, g in zip(beta, grads))
        sign = self.sign(params)
        differences = [sympy.diff(b, t) - sign / kappa * b * (g - mean) for b, g in zip(beta, grads)]
        point = {kappa: sympy.Rational(7, 10)}
        return symbolic_identity(differences, [t, kappa], witness_point=point,
                                 holds=f"{self.source} is the exact derivative of the softmax (3 weights, K_j(t) arbitrary)",
                                 fails=f"{self.source} is not the derivative of the softmax weights",
                                 evidence={"weights": 3, "K_j": "arbitrary functions of t"})

    def check_numeric(self, params, context):
        require_interacting_agents(self.id, params["tokens"])
        be = autodiff_backend(context)
        sign = self.sign(params)
        rows = []
        for sample, system in enumerate(self.systems(params, context)):
            for argument in self.arguments:
                index = ARGUMENTS[argument]
                state = [be.asarray(x) for x in _state(system)]

                def beta_of(x):
                    args = list(state)
                    args[index] = x
                    return attention_weights(kl_matrix(*args, system, be), system.kappa, be)

                reference = jacobian(be, beta_of, _state(system)[index])
                dK = kl_jacobian(be, system, argument)
                beta = evaluate(system, get_backend("numpy"))["beta"]
                floor = 1e-3 * np.linalg.norm(reference)
                for i in range(system.tokens):
                    value = G.beta_gradient(beta[i], dK[i, :, i], system.kappa, sign)
                    rows.append({"sample": sample, "agent": i, "theta": f"{argument}_{i}",
                                 "error": relative_error(value, reference[i, :, i], floor),
                                 "printed": value, "reference": reference[i, :, i]})
        return self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds=f"{self.source} equals the autodiff Jacobian of beta",
                            fails=f"{self.source} differs from the autodiff Jacobian of beta")

    def show(self, params, fmt="text", limit=None):
        return render_items([("formula", f"grad beta_ij = {'-' if self.sign(params) < 0 else '+'}1/kappa beta_ij "
                                   "[grad K_ij - sum_k beta_ik grad K_ik]")], fmt)


class BetaGradientSigmaClaim(BetaGradientClaim):
    """GT eq (27): grad_{Sigma_i} beta_ij = -beta_ij / kappa [grad_{Sigma_i} KL_ij - <grad_{Sigma_i} KL_ik>_{beta_i}]."""

    id = "gt-beta-gradient-sigma"
    source = "GT eq (27)"
    statement = "grad_{Sigma_i} beta_ij = -beta_ij/kappa [grad_{Sigma_i} K_ij - sum_k beta_ik grad_{Sigma_i} K_ik]."
    arguments = ("Sigma",)
    examples = ({"dim": 2}, {"dim": 4}, {"dim": 4, "covariance": "diagonal", "kappa": "2"})


class BetaGradientMeanClaim(BetaGradientClaim):
    """GT eq (50) (§5.0.7): d beta_ij / d mu_i = +beta_ij / kappa [dK_ij/dmu_i - sum_k beta_ik dK_ik/dmu_i].

    As printed the sign is the opposite of eq (15) and of the derivative of the softmax
    (beta_ij decreases when K_ij grows): ``refuted``.  ``--variant corrected`` checks
    -beta_ij / kappa [...] (eq 15).  The text around eq (50) ("attention to j increases if
    the KL to j decreases faster than the weighted average") matches the corrected sign."""

    id = "gt-beta-gradient-mean"
    source = "GT eq (50)"
    statement = "d beta_ij / d mu_i = beta_ij/kappa [dK_ij/dmu_i - sum_k beta_ik dK_ik/dmu_i]."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "d beta_ij / d mu_i = +beta_ij/kappa [dK_ij/dmu_i - sum_k beta_ik dK_ik/dmu_i]",
                               "-beta_ij/kappa [...] (the sign of GT eq 15; the text around eq 50 reads it so)",
                               {"variant": "corrected"})
    params = BetaGradientClaim.params + (VARIANT,)
    arguments = ("mu",)
    examples = ({"dim": 2}, {"dim": 2, "variant": "corrected"}, {"dim": 4}, {"dim": 4, "variant": "corrected"},
                {"dim": 4, "covariance": "diagonal", "variant": "corrected"})

    def sign(self, params) -> float:
        return G.EQ50_SIGN if params.get("variant", "printed") == "printed" else G.EQ15_SIGN


# ---------------------------------------------------------------------------------------
# eqs 14, 16-23, 28-31: the assembled gradients


class AssembledGradientClaim(GaugeClaim):
    """The gradient of F (GT eq 9) with respect to one parameter of every agent, assembled
    as GT prints it, against autodiff of F (finite differences of F as second opinion).
    Subclasses set ``argument`` and ``components``."""

    params = (TOKENS, DIM, HEAD_DIM, KAPPA, COVARIANCE, VARIANT)
    methods = ("symbolic", "numeric")
    argument = "mu"
    #: K = 1 variable of the symbolic check below ("mean" or "variance"; a subclass without
    #: one overrides check_symbolic)
    scalar_variable: str | None = None

    def auto_method(self, params):
        if params.get("dim", 3) <= 2:
            return "symbolic"
        return "numeric"

    def check_symbolic(self, params, context):
        """K = 1, N = 2 scalar agents (Omega = 1), F in closed form: the exact derivative of F
        minus the assembled formula."""
        system = scalar_system(2)
        corrected = params["variant"] == "corrected"
        formula = assembled(system, self.scalar_variable, corrected, printed_components=not corrected)
        x = (system.m if self.scalar_variable == "mean" else system.s)[0]
        return decide(sympy.diff(system.F, x) - formula, system.point(),
                      holds=f"{self.source} ({params['variant']}) is the exact derivative of F (K = 1, N = 2)",
                      fails=f"{self.source} ({params['variant']}) is not the derivative of F (K = 1, N = 2)",
                      evidence={"dimension": 1, "agents": 2})
    default_samples = 2
    examples = ({"dim": 2}, {"dim": 2, "variant": "corrected"}, {"dim": 4},
                {"dim": 4, "variant": "corrected"}, {"dim": 6, "head_dim": 3, "variant": "corrected"},
                {"dim": 4, "covariance": "diagonal", "variant": "corrected"})

    def components(self, be, system, variant: str, exact: bool = False):
        """(row_grads [N, N, ...], col_grads [N, N, ...], self [N, ...], likelihood [N, ...])
        with row_grads[i, j] = grad_{theta_i} K_ij, col_grads[i, k] = grad_{theta_i} K_ki."""
        raise NotImplementedError

    def assemble(self, system, parts, corrected: bool):
        values = evaluate(system, get_backend("numpy"))
        row, col, own, lik = parts
        formula = G.assembled_corrected if corrected else G.assembled_printed
        return np.stack([formula(i, values["kl"], values["beta"], system.kappa, row[i], col[i], own[i], lik[i])
                         for i in range(system.tokens)])

    def check_numeric(self, params, context):
        be = autodiff_backend(context)
        variant = params["variant"]
        index = ARGUMENTS[self.argument]
        rows, fd_rows, structure, own_rows = [], [], [], []
        for sample, system in enumerate(self.systems(params, context)):
            reference = gradient(be, lambda m, S, p: free_energy(m, S, p, system, be), *_state(system))[index]
            value = self.assemble(system, self.components(be, system, variant), variant == "corrected")
            floor = 1e-3 * np.linalg.norm(reference)
            for i in range(system.tokens):
                rows.append({"sample": sample, "agent": i, "error": relative_error(value[i], reference[i], floor),
                             "printed": value[i], "reference": reference[i]})
            exact_parts = self.components(be, system, "corrected")
            structure.append(relative_error(self.assemble(system, exact_parts, False), reference))
            own_rows += self.own_row_rows(be, system, exact_parts, sample)
            if sample == 0:
                numpy_be = get_backend("numpy")

                def f_numpy(x):
                    args = _state(system)
                    args[index] = x
                    return float(free_energy(*args, system, numpy_be))

                fd = finite_difference_gradient(f_numpy, _state(system)[index])
                fd_rows.append({"sample": sample, "error": relative_error(reference, fd),
                                "printed": "autodiff of F", "reference": "finite differences of F"})
        evidence = {"printed assembly with exact components: largest relative error": round(max(structure), 6),
                    "missing term": "-1/kappa sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) grad K_ki"}
        main = self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds=f"{self.source} ({variant}) equals autodiff of F at every agent",
                            fails=f"{self.source} ({variant}) differs from autodiff of F", evidence=evidence)
        second = self.compare(fd_rows, tolerance=FD_TOLERANCE, backend=be.name, device=be.device, context=context,
                              holds="autodiff of F agrees with finite differences",
                              fails="autodiff of F disagrees with finite differences",
                              why="GT §2.4.4's threshold; central differences with h = 1e-5")
        own = self.compare(own_rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                           holds="eq (14)'s product rule with eq (15) is exact for agent i's own row (eq 17/21/28)",
                           fails="eq (14) with eq (15) differs from autodiff of agent i's own row")
        out = combine({"formula": main, "own-row": own, "finite-differences": second})
        out.evidence.update(evidence)
        return out

    def own_row_rows(self, be, system, parts, sample: int) -> list[dict]:
        """Eq (14) + (15) for agent i's own row: sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij]
        against autodiff of sum_j beta_ij K_ij alone (the other rows held as they are)."""
        index = ARGUMENTS[self.argument]
        values = evaluate(system, get_backend("numpy"))
        row, _, own, _ = parts
        zero = np.zeros_like(own[0])
        out = []
        for i in range(system.tokens):
            def row_sum(*args, i=i):
                kl = kl_matrix(*args, system, be)
                beta = attention_weights(kl, system.kappa, be)
                return be.sum(beta[i] * kl[i], 0)

            reference = gradient(be, row_sum, *_state(system))[index][i]
            value = G.assembled_printed(i, values["kl"], values["beta"], system.kappa, row[i], np.zeros_like(row[i]),
                                        zero, zero)
            out.append({"sample": sample, "agent": i, "error": relative_error(value, reference),
                        "printed": value, "reference": reference})
        return out

    #: which printed components the corrected assembly replaces (none: they are exact)
    corrected_components = ""

    def show(self, params, fmt="text", limit=None):
        base = f"printed{self.corrected_components}" if self.corrected_components else "printed"
        return render_items([("printed", self.printed_text),
                       ("corrected", f"{base} + (-1/kappa) sum_{{k != i}} beta_ki (K_ki - sum_j "
                                     "beta_kj K_kj) grad_{theta_i} K_ki")], fmt)


def _pair_tables(tokens: int, shape: tuple, entry) -> tuple[np.ndarray, np.ndarray]:
    """The components of agent i's row and column sums, [N, N, *shape] each:
    ``entry(i, j)`` gives (grad_i K_ij, grad_i K_ji) for j != i; 0 on the diagonal."""
    row, col = np.zeros((tokens, tokens) + shape), np.zeros((tokens, tokens) + shape)
    for i in range(tokens):
        for j in range(tokens):
            if i != j:
                row[i, j], col[i, j] = entry(i, j)
    return row, col


class AssembledMeanGradientClaim(AssembledGradientClaim):
    """GT eqs (14), (16)-(19): grad_{mu_i} F = eq 11 + sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij]
    + sum_k beta_ki grad KL(q_k || Omega_ki q_i) + eq 57.  Components: eq 11, eq 57 and the
    exact mean gradients of one KL; only the assembly is tested."""

    id = "gt-grad-mu-assembled"
    scalar_variable = "mean"
    source = "GT eqs (14), (16)-(19)"
    statement = "grad_{mu_i} F = (16) + (17) + (18) + (19), with eq (14)'s product rule and eq (15)."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "grad_{mu_i} F = (16) + (17) + (18) + (19)",
                               "(16)-(19) + (-1/kappa) sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) grad_{mu_i} K_ki "
                               "(the softmax of the agents k attending to i also depends on mu_i)", {"variant": "corrected"})
    printed_text = ("Sigma_p^{-1}(mu_i - mu_p) + sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij] "
                    "+ sum_k beta_ki grad KL(q_k || Omega_ki q_i) + softmax(mu_i) - e_{o_i}")
    argument = "mu"

    def components(self, be, system, variant, exact=False):
        N, K = system.tokens, system.dim
        arrays = pair_arrays(system, get_backend("numpy"))
        row, col = _pair_tables(N, (K,), lambda i, j: (
            G.grad_mu_query(system.mu[i], system.mu[j], system.Sigma[j], arrays["omega"][i, j]),
            G.grad_mu_key(system.mu[j], system.mu[i], system.Sigma[i], arrays["omega"][j, i])))
        own = np.stack([G.grad_mu_self(system.mu[i], system.prior_mu[i], system.prior_Sigma[i]) for i in range(N)])
        lik = np.stack([G.grad_likelihood_eq57(system.mu[i], int(system.observations[i])) for i in range(N)])
        return row, col, own, lik


class AssembledCovarianceGradientClaim(AssembledGradientClaim):
    """GT eqs (20)-(23) with the components (24), (25), (26), (27) as printed.  The
    likelihood term (23) is 0: eq 56 evaluates the likelihood at the mean.  ``--variant
    corrected`` uses eq 12 for the self term, the corrected eq 26 and adds the missing
    weight term; the evidence also reports the printed assembly with exact components."""

    id = "gt-grad-sigma-assembled"
    scalar_variable = "variance"
    corrected_components = (" with eq 12 in place of eq 24 (the self term) and the corrected "
                            "eq 26 (gt-grad-sigma-key)")
    source = "GT eqs (20)-(23)"
    statement = "grad_{Sigma_i} F = (20) + (21) + (22) + (23) with eqs (24)-(27)."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "grad_{Sigma_i} F = (20) + (21) + (22) + (23) with eqs (24)-(27)",
                               "eq 12 in place of eq 24, the corrected eq 26 (gt-grad-sigma-key), and "
                               "(-1/kappa) sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) grad_{Sigma_i} K_ki", {"variant": "corrected"})
    printed_text = ("1/2[Sigma_i^{-1} - Sigma_p^{-1}] + sum_j [(grad beta_ij) K_ij + beta_ij 1/2[(Omega Sigma_j "
                    "Omega^T)^{-1} - Sigma_i^{-1}]] + sum_k beta_ki 1/2 R^T (Omega Sigma_i Omega^T)^{-1} R")
    argument = "Sigma"

    def components(self, be, system, variant, exact=False):
        N, K = system.tokens, system.dim
        arrays = pair_arrays(system, get_backend("numpy"))
        printed = variant == "printed"
        omega = arrays["omega"]
        row, col = _pair_tables(N, (K, K), lambda i, j: (
            G.grad_sigma_query_eq25(system.Sigma[i], omega[i, j], system.Sigma[j]),
            G.grad_sigma_key_eq26(system.Sigma[i], omega[j, i]) if printed else
            G.grad_sigma_key_corrected(system.mu[j], system.Sigma[j], system.mu[i], system.Sigma[i],
                                       omega[j, i])))
        self_formula = G.grad_sigma_self_eq24 if printed else G.grad_sigma_self_eq12
        own = np.stack([self_formula(system.Sigma[i], system.prior_Sigma[i]) for i in range(N)])
        return row, col, own, np.zeros_like(own)


class AssembledFrameGradientClaim(AssembledGradientClaim):
    """GT eqs (28)-(31) with gamma = 0 (the model terms are omitted, GT §2.2): grad_{phi_i} F =
    sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij] + sum_k beta_ki grad KL(q_k || Omega_ki q_i),
    in the coordinates of so(n).  Components: the autodiff Jacobian of the KL matrix."""

    id = "gt-grad-frame-assembled"

    def check_symbolic(self, params, context):
        """The assembly for ANY parameter theta_i (here a frame coordinate t): the row K_ij(t)
        and the column K_ki(t) of agent i arbitrary functions, N = 3 agents, other K_kj
        constants (:func:`generic_alignment`); d/dt of sum beta K minus eqs 28 + 30."""
        true, printed, corrected, kappa = generic_alignment(3)
        formula = corrected if params["variant"] == "corrected" else printed
        difference = true - formula
        return decide(difference, generic_point(difference, kappa),
                      holds=f"{self.source} ({params['variant']}) is the exact derivative of the alignment term "
                            "(N = 3, K_ij(t), K_ki(t) arbitrary)",
                      fails=f"{self.source} ({params['variant']}) is not the derivative of the alignment term "
                            "(N = 3, K_ij(t), K_ki(t) arbitrary)",
                      evidence={"agents": 3, "K_ij, K_ki": "arbitrary functions of one coordinate of phi_i"})
    source = "GT eqs (28)-(31)"
    statement = "grad_{phi_i} F = (28) + (29) + (30) + (31) (gamma = 0)."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "grad_{phi_i} F = sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij] + sum_k beta_ki grad KL(q_k || Omega_ki q_i)",
                               "+ (-1/kappa) sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) grad_{phi_i} K_ki", {"variant": "corrected"})
    printed_text = "sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij] + sum_k beta_ki grad KL(q_k || Omega_ki q_i)"
    argument = "frames"

    def check_numeric(self, params, context):
        require_interacting_agents(self.id, params["tokens"])
        return super().check_numeric(params, context)

    def components(self, be, system, variant, exact=False):
        dK = kl_jacobian(be, system, "frames")                  # [N, N, N, m]
        N = system.tokens
        row = np.stack([dK[i, :, i] for i in range(N)])
        col = np.stack([dK[:, i, i] for i in range(N)])
        for i in range(N):
            row[i, i] = col[i, i] = 0.0                           # K_ii = 0 identically
        zero = np.zeros((N, system.frames.shape[1]))
        return row, col, zero, zero


#: in the paper's order: eqs 15, 14/16-19, 20-23, 27, 28-31, 50
CLAIMS = [BetaGradientClaim(), AssembledMeanGradientClaim(), AssembledCovarianceGradientClaim(),
          BetaGradientSigmaClaim(), AssembledFrameGradientClaim(), BetaGradientMeanClaim()]

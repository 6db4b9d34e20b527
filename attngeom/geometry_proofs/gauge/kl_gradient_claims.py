"""GT's single-pair KL gradients: eqs (11), (12), (24), (25), (26) and the likelihood
gradient (57) of eqs (10), (56).

Each claim evaluates the printed formula (:mod:`attngeom.geometry_proofs.gauge.gradients`) for every
pair of sampled agents and compares it with autodiff (torch.func / jax) of the single KL
term it differentiates (:func:`attngeom.geometry_proofs.gauge.free_energy.pair_kl`, one argument
slot at a time), with central finite differences as a second opinion; ``symbolic``
differentiates the closed-form KL (SymPy, K = 2, Omega the exact rotation
[[3/5, -4/5], [4/5, 3/5]]) and cancels the difference.
"""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge import gradients as G
from attngeom.geometry_proofs.gauge.autodiff import (autodiff_backend, finite_difference_gradient, gradient,
                                            relative_error)
from attngeom.geometry_proofs.gauge.beliefs import symbolic_covariance, symbolic_gaussian_kl, symbolic_mean
from attngeom.geometry_proofs.gauge.claim_base import (
    AUTODIFF_TOLERANCE, COVARIANCE, DIM, FD_TOLERANCE, HEAD_DIM, SIGMA, TOKENS, VARIANT,
    GaugeClaim, symbolic_identity)
from attngeom.geometry_proofs.gauge.free_energy import GaugeSystem, pair_arrays, pair_kl
from attngeom.kernels.backend import get_backend
from attngeom.core.erratum import ErratumSpec, ErrorKind
from attngeom.core.verdict import combine

SLOTS = ("mu_query", "S_query", "mu_key", "S_key", "omega")
#: an exact rational rotation for the symbolic checks
ROTATION = sympy.Matrix([[sympy.Rational(3, 5), -sympy.Rational(4, 5)], [sympy.Rational(4, 5), sympy.Rational(3, 5)]])


def self_pairs(system: GaugeSystem) -> dict[str, np.ndarray]:
    """The pairs (q_i, p_i), Omega = I, in the layout of :func:`pair_arrays` (M = N pairs)."""
    return {"mu_query": system.mu, "S_query": system.Sigma, "mu_key": system.prior_mu,
            "S_key": system.prior_Sigma, "omega": np.broadcast_to(np.eye(system.dim), system.Sigma.shape).copy()}


class PairGradientClaim(GaugeClaim):
    """The gradient of KL(q || Omega . p) with respect to one argument slot, printed
    against autodiff.  Subclasses set ``slot``, ``self_term`` and implement ``printed``
    and ``symbolic_parts``."""

    params = (TOKENS, DIM, HEAD_DIM, COVARIANCE, SIGMA)
    methods = ("symbolic", "numeric")
    slot = "mu_query"
    self_term = False
    wrong_as_printed = False
    examples = ({"dim": 2}, {"dim": 4}, {"dim": 20, "tokens": 2}, {"dim": 4, "covariance": "diagonal"})

    def pairs(self, system: GaugeSystem):
        if self.self_term:
            arrays = self_pairs(system)
        else:
            arrays = {k: v.reshape((-1,) + v.shape[2:]) for k, v in pair_arrays(system, get_backend("numpy")).items()}
        return arrays

    def printed(self, arrays: dict, m: int, variant: str) -> np.ndarray:
        raise NotImplementedError

    def symbolic_parts(self, variant: str):
        raise NotImplementedError

    def check_numeric(self, params, context):
        be = autodiff_backend(context)
        variant = params.get("variant", "printed")
        slot = SLOTS.index(self.slot)
        rows, fd_rows = [], []
        for sample, system in enumerate(self.systems(params, context)):
            arrays = self.pairs(system)
            ordered = [arrays[name] for name in SLOTS]

            def total(*args):
                return be.sum(pair_kl(*args, be), 0)

            reference = gradient(be, total, *ordered)[slot]
            floor = 1e-3 * max(np.linalg.norm(r) for r in reference)
            for m in range(reference.shape[0]):
                value = self.printed(arrays, m, variant)
                pair = m if self.self_term else list(divmod(m, system.tokens))
                rows.append({"sample": sample, "pair (i, j)" if not self.self_term else "agent": pair, "error": relative_error(value, reference[m], floor),
                             "printed": value, "reference": reference[m]})
            if sample:
                continue                                 # finite differences: first sample only
            numpy_be = get_backend("numpy")

            def total_numpy(x):
                args = list(ordered)
                args[slot] = x
                return float(np.sum(pair_kl(*args, numpy_be)))

            fd = finite_difference_gradient(total_numpy, ordered[slot])
            fd_rows.append({"sample": sample, "error": relative_error(reference, fd),
                            "printed": "autodiff", "reference": "finite differences"})
        main = self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device,
                            context=context, holds=f"{self.source} ({variant}) equals autodiff at every sampled pair",
                            fails=f"{self.source} ({variant}) differs from autodiff of the KL term")
        second = self.compare(fd_rows, tolerance=FD_TOLERANCE, backend=be.name, device=be.device,
                              context=context, holds="autodiff agrees with central finite differences",
                              fails="autodiff disagrees with finite differences",
                              why="GT §2.4.4's threshold; central differences with h = 1e-5")
        return combine({"formula": main, "finite-differences": second})

    def check_symbolic(self, params, context):
        variant = params.get("variant", "printed")
        differences, symbols, point = self.symbolic_parts(variant)
        return symbolic_identity(differences, symbols, witness_point=point,
                                 holds=f"{self.source} ({variant}) is the exact gradient of the closed-form KL (K = 2)",
                                 fails=f"{self.source} ({variant}) is not the gradient of the closed-form KL (K = 2)",
                                 evidence={"dimension": 2, "entries": len(differences),
                                           "Omega": str(ROTATION.tolist())})

    def show(self, params, fmt="text", limit=None):
        return render_items([("formula", self.formula_text), ("source", self.source)], fmt)


def _symbolic_pair():
    mu_q, S_q = symbolic_mean("m", 2), symbolic_covariance("s", 2)
    mu_p, S_p = symbolic_mean("n", 2), symbolic_covariance("t", 2)
    point = {**dict(zip(mu_q, (1, -2))), **dict(zip(mu_p, (sympy.Rational(1, 2), 3))),
             S_q[0, 0]: 2, S_q[0, 1]: 1, S_q[1, 1]: 3, S_p[0, 0]: 1, S_p[0, 1]: sympy.Rational(-1, 2), S_p[1, 1]: 2}
    symbols = list(mu_q) + list(mu_p) + [S_q[0, 0], S_q[0, 1], S_q[1, 1], S_p[0, 0], S_p[0, 1], S_p[1, 1]]
    return mu_q, S_q, mu_p, S_p, point, symbols


class GradMuSelfClaim(PairGradientClaim):
    """GT eq (11): grad_{mu_i} KL(q_i || p_i) = (Sigma_p^i)^{-1} (mu_q^i - mu_p^i)."""

    id = "gt-grad-mu-self"
    source = "GT eq (11)"
    statement = "grad_mu KL(q_i || p_i) = Sigma_p^{-1} (mu_q - mu_p)."
    formula_text = "grad_{mu_i} KL(q_i || p_i) = Sigma_p^{-1} (mu_q - mu_p)"
    slot, self_term = "mu_query", True

    def printed(self, arrays, m, variant):
        return G.grad_mu_self(arrays["mu_query"][m], arrays["mu_key"][m], arrays["S_key"][m])

    def symbolic_parts(self, variant):
        mu_q, S_q, mu_p, S_p, point, symbols = _symbolic_pair()
        kl = symbolic_gaussian_kl(mu_q, S_q, mu_p, S_p)
        printed = S_p.inv() * (mu_q - mu_p)
        return [sympy.diff(kl, mu_q[a]) - printed[a] for a in range(2)], symbols, point


class GradSigmaSelfClaim(PairGradientClaim):
    """GT eq (12): grad_{Sigma_i} KL(q_i || p_i) = 1/2 [(Sigma_p)^{-1} - (Sigma_q)^{-1}]."""

    id = "gt-grad-sigma-self"
    source = "GT eq (12)"
    statement = "grad_Sigma KL(q_i || p_i) = 1/2 [Sigma_p^{-1} - Sigma_q^{-1}]."
    formula_text = "grad_{Sigma_i} KL(q_i || p_i) = 1/2 [Sigma_p^{-1} - Sigma_q^{-1}]"
    slot, self_term = "S_query", True

    def printed(self, arrays, m, variant):
        return G.grad_sigma_self_eq12(arrays["S_query"][m], arrays["S_key"][m])

    def symbolic_parts(self, variant):
        mu_q, S_q, mu_p, S_p, point, symbols = _symbolic_pair()
        kl = symbolic_gaussian_kl(mu_q, S_q, mu_p, S_p)
        diff = G.symbolic_matrix_gradient(kl, S_q) - (S_p.inv() - S_q.inv()) / 2
        return list(diff), symbols, point


class GradSigmaPriorClaim(PairGradientClaim):
    """GT eq (24): grad_{Sigma_i} KL(q_i || p_i) = 1/2 [Sigma_i^{-1} - Sigma_{p_i}^{-1}].

    As printed the sign is the opposite of eq (12) and of the derivative (refuted; the
    witness is the sampled pair); ``--variant corrected`` checks
    1/2 [Sigma_{p_i}^{-1} - Sigma_i^{-1}]."""

    id = "gt-grad-sigma-prior"
    source = "GT eq (24)"
    statement = "grad_{Sigma_i} KL(q_i || p_i) = 1/2 [Sigma_i^{-1} - Sigma_{p_i}^{-1}]."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "grad_{Sigma_i} KL(q_i || p_i) = 1/2 [Sigma_i^{-1} - Sigma_p^{-1}]",
                               "1/2 [Sigma_p^{-1} - Sigma_i^{-1}] (the sign of GT eq 12)", {"variant": "corrected"})
    formula_text = ("printed: 1/2 [Sigma_i^{-1} - Sigma_p^{-1}]; corrected: 1/2 [Sigma_p^{-1} - Sigma_i^{-1}] "
                    "(= eq 12)")
    params = PairGradientClaim.params + (VARIANT,)
    examples = ({"dim": 2}, {"dim": 2, "variant": "corrected"}, {"dim": 4}, {"dim": 4, "variant": "corrected"},
                {"dim": 4, "covariance": "diagonal", "variant": "corrected"})
    slot, self_term = "S_query", True

    def printed(self, arrays, m, variant):
        formula = G.grad_sigma_self_eq24 if variant == "printed" else G.grad_sigma_self_eq12
        return formula(arrays["S_query"][m], arrays["S_key"][m])

    def symbolic_parts(self, variant):
        mu_q, S_q, mu_p, S_p, point, symbols = _symbolic_pair()
        kl = symbolic_gaussian_kl(mu_q, S_q, mu_p, S_p)
        sign = 1 if variant == "printed" else -1
        diff = G.symbolic_matrix_gradient(kl, S_q) - sign * (S_q.inv() - S_p.inv()) / 2
        return list(diff), symbols, point


class GradSigmaQueryClaim(PairGradientClaim):
    """GT eq (25): grad_{Sigma_i} KL(q_i || Omega_ij[q_j]) = 1/2 [(Omega_ij[Sigma_j])^{-1} - Sigma_i^{-1}]."""

    id = "gt-grad-sigma-query"
    source = "GT eq (25)"
    statement = "grad_{Sigma_i} KL(q_i || Omega_ij q_j) = 1/2 [(Omega Sigma_j Omega^T)^{-1} - Sigma_i^{-1}]."
    formula_text = "grad_{Sigma_i} KL(q_i || Omega_ij q_j) = 1/2 [(Omega_ij Sigma_j Omega_ij^T)^{-1} - Sigma_i^{-1}]"
    slot = "S_query"

    def printed(self, arrays, m, variant):
        return G.grad_sigma_query_eq25(arrays["S_query"][m], arrays["omega"][m], arrays["S_key"][m])

    def symbolic_parts(self, variant):
        mu_q, S_q, mu_p, S_p, point, symbols = _symbolic_pair()
        moved = ROTATION * S_p * ROTATION.T
        kl = symbolic_gaussian_kl(mu_q, S_q, ROTATION * mu_p, moved)
        diff = G.symbolic_matrix_gradient(kl, S_q) - (moved.inv() - S_q.inv()) / 2
        return list(diff), symbols, point


class GradSigmaKeyClaim(PairGradientClaim):
    """GT eq (26): grad_{Sigma_i} KL(q_k || Omega_ki[q_i]) = 1/2 R_ki^T Omega_ki[Sigma_i]^{-1} R_ki.

    As printed only the log-det part survives; the derivative of the trace and Mahalanobis
    terms is missing.  Corrected (``--variant corrected``), with d = mu_k - Omega_ki mu_i:
    1/2 [Sigma_i^{-1} - Sigma_i^{-1} Omega_ki^T (Sigma_k + d d^T) Omega_ki Sigma_i^{-1}]."""

    id = "gt-grad-sigma-key"
    source = "GT eq (26)"
    statement = "grad_{Sigma_i} KL(q_k || Omega_ki q_i) = 1/2 R^T (Omega Sigma_i Omega^T)^{-1} R, R = Omega_ki."
    erratum_spec = ErratumSpec(ErrorKind.MISPRINTED_FORMULA, "grad_{Sigma_i} KL(q_k || Omega_ki q_i) = 1/2 R^T (Omega Sigma_i Omega^T)^{-1} R",
                               "1/2 [Sigma_i^{-1} - Sigma_i^{-1} Omega^T (Sigma_k + d d^T) Omega Sigma_i^{-1}], d = mu_k - Omega mu_i",
                               {"variant": "corrected"})
    formula_text = ("printed: 1/2 R^T (Omega Sigma_i Omega^T)^{-1} R; corrected: 1/2 [Sigma_i^{-1} - Sigma_i^{-1} "
                    "Omega^T (Sigma_k + d d^T) Omega Sigma_i^{-1}], d = mu_k - Omega mu_i")
    params = PairGradientClaim.params + (VARIANT,)
    examples = ({"dim": 2}, {"dim": 2, "variant": "corrected"}, {"dim": 4}, {"dim": 4, "variant": "corrected"},
                {"dim": 20, "tokens": 2, "variant": "corrected"}, {"dim": 4, "covariance": "diagonal", "variant": "corrected"})
    slot = "S_key"

    def printed(self, arrays, m, variant):
        if variant == "printed":
            return G.grad_sigma_key_eq26(arrays["S_key"][m], arrays["omega"][m])
        return G.grad_sigma_key_corrected(arrays["mu_query"][m], arrays["S_query"][m], arrays["mu_key"][m],
                                          arrays["S_key"][m], arrays["omega"][m])

    def symbolic_parts(self, variant):
        mu_k, S_k, mu_i, S_i, point, symbols = _symbolic_pair()
        kl = symbolic_gaussian_kl(mu_k, S_k, ROTATION * mu_i, ROTATION * S_i * ROTATION.T)
        if variant == "printed":
            formula = ROTATION.T * (ROTATION * S_i * ROTATION.T).inv() * ROTATION / 2
        else:
            P, d = S_i.inv(), mu_k - ROTATION * mu_i
            formula = (P - P * ROTATION.T * (S_k + d * d.T) * ROTATION * P) / 2
        return list(G.symbolic_matrix_gradient(kl, S_i) - formula), symbols, point


class LikelihoodGradientClaim(GaugeClaim):
    """GT eqs (10), (56), (57): d/dmu [-log softmax(mu)_o] = softmax(mu) - e_o.

    Symbolic: K = 3, the derivative of -mu_o + log sum_k e^{mu_k} minus the printed
    vector cancels exactly.  Numeric: at every sampled agent against autodiff of the
    likelihood term of F (eq 56, the cross-entropy of eq 10)."""

    id = "gt-likelihood-gradient"
    source = "GT eqs (10), (56), (57)"
    statement = "grad_mu [-log softmax(mu)_{o}] = softmax(mu) - e_{o}."
    params = (TOKENS, DIM)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 4}, {"dim": 20, "tokens": 4})

    def check_symbolic(self, params, context):
        mu = symbolic_mean("m", 3)
        differences = []
        for o in range(3):
            loss = -mu[o] + sympy.log(sum(sympy.exp(m) for m in mu))
            softmax = [sympy.exp(m) / sum(sympy.exp(x) for x in mu) for m in mu]
            differences += [sympy.diff(loss, mu[a]) - (softmax[a] - (1 if a == o else 0)) for a in range(3)]
        return symbolic_identity(differences, list(mu), holds="eq (57) is the exact gradient of eq (56) (K = 3)",
                                 fails="eq (57) is not the gradient of eq (56)", evidence={"dimension": 3})

    def check_numeric(self, params, context):
        from attngeom.geometry_proofs.gauge.free_energy import likelihood_term
        be = autodiff_backend(context)
        rows = []
        for sample, system in enumerate(self.systems(params, context)):
            reference = gradient(be, lambda m: likelihood_term(m, system, be), system.mu)[0]
            for i in range(system.tokens):
                value = G.grad_likelihood_eq57(system.mu[i], int(system.observations[i]))
                rows.append({"sample": sample, "agent": i, "error": relative_error(value, reference[i]),
                             "printed": value, "reference": reference[i]})
        return self.compare(rows, tolerance=AUTODIFF_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds="eq (57) equals autodiff of the likelihood term (eq 56) at every agent",
                            fails="eq (57) differs from autodiff of eq (56)")

    def show(self, params, fmt="text", limit=None):
        return render_items([("loss (56)", "-mu_o + log sum_k exp(mu_k)"), ("gradient (57)", "softmax(mu) - e_o")], fmt)


#: in the paper's order: eqs 10/56/57, 11, 12, 24, 25, 26
CLAIMS = [LikelihoodGradientClaim(), GradMuSelfClaim(), GradSigmaSelfClaim(), GradSigmaPriorClaim(),
          GradSigmaQueryClaim(), GradSigmaKeyClaim()]

"""GT eqs (1), (13), (58): KL attention beta_ij = softmax_j(-K_ij / kappa), K_ij =
KL(q_i || Omega_ij q_j), as the free energy of :mod:`attngeom.geometry_proofs.gauge.free_energy`
computes it, against the KL-attention kernel of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention` (both of its
forms), and two consequences of the definition: every row of beta is a probability vector
and, since K_ii = KL(q_i || q_i) = 0 <= K_ij, beta_ii is the largest weight of its row.
"""

from __future__ import annotations

import numpy as np

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge.claim_base import COVARIANCE, DIM, KAPPA, TOKENS, GaugeClaim
from attngeom.geometry_proofs.gauge.free_energy import evaluate
from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import (check_attention_inputs, kl_attention_direct,
                                                                 kl_attention_structured, skew)

#: the two implementations are different float64 computations of the same numbers
ATTENTION_TOLERANCE = 1e-10


class KLAttentionClaim(GaugeClaim):
    """GT eqs (1), (13), (58) with one head (K = n; with H > 1 heads GT's eq 13 on the whole
    K-dimensional belief and the kernel's per-head weights are different definitions).
    Measured: |beta - beta_kernel| and |K - K_kernel| relative, for the kernel's direct
    (Omega_ij for every pair) and structured (rotate once) forms; |sum_j beta_ij - 1|;
    K_ii = 0 and beta_ii >= beta_ij."""

    id = "gt-kl-attention"
    source = "GT eqs (1), (13), (58)"
    statement = "beta_ij = softmax_j(-KL(q_i || Omega_ij q_j) / kappa): rows sum to 1 and beta_ii is each row's largest weight."
    params = (TOKENS, DIM, KAPPA, COVARIANCE)
    methods = ("numeric",)
    examples = ({"dim": 4}, {"dim": 20, "tokens": 6, "covariance": "diagonal"})

    def check_numeric(self, params, context):
        be = get_backend(context.backend, context.device)
        rows = []
        for sample, system in enumerate(self.systems(params, context, observed=False)):
            ours = evaluate(system, be)
            phis = skew(be.asarray(system.frames), system.dim, be)
            # diagonal covariances go to the kernel as their variances (its diagonal_sigma form)
            diagonal = params["covariance"] == "diagonal"
            covariance = np.diagonal(system.Sigma, axis1=-2, axis2=-1).copy() if diagonal else system.Sigma
            args = (be.asarray(system.mu[None]), be.asarray(covariance[None]), phis[None], system.kappa, be)
            # the sampled system is inside the kernel's hypotheses (BadInput otherwise)
            check_attention_inputs(system.mu[None], covariance[None], be.to_numpy(phis)[None], system.kappa,
                                   diagonal_sigma=diagonal)
            scale = max(np.abs(ours["kl"]).max(), 1.0)
            for name, kernel in (("kernel direct", kl_attention_direct), ("kernel structured", kl_attention_structured)):
                result = kernel(*args, diagonal_sigma=diagonal)
                kl, beta = be.to_numpy(result.kl)[0], be.to_numpy(result.beta)[0]
                rows.append({"sample": sample, "quantity": f"K vs {name}", "error": float(np.abs(kl - ours["kl"]).max() / scale),
                             "printed": ours["kl"], "reference": kl})
                rows.append({"sample": sample, "quantity": f"beta vs {name}", "error": float(np.abs(beta - ours["beta"]).max()),
                             "printed": ours["beta"], "reference": beta})
            beta = ours["beta"]
            rows.append({"sample": sample, "quantity": "|sum_j beta_ij - 1|", "error": float(np.abs(beta.sum(1) - 1).max()),
                         "printed": beta.sum(1), "reference": 1.0})
            rows.append({"sample": sample, "quantity": "|K_ii| / max K", "error": float(np.abs(np.diag(ours["kl"])).max() / scale),
                         "printed": np.diag(ours["kl"]), "reference": 0.0})
            excess = float(max(0.0, (beta - np.diag(beta)[:, None]).max()))
            rows.append({"sample": sample, "quantity": "max_j beta_ij - beta_ii (> 0 would contradict)", "error": excess,
                         "printed": beta, "reference": "beta_ii = max_j beta_ij"})
        return self.compare(rows, tolerance=ATTENTION_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds=("K and beta equal the kernel's (direct and structured); rows sum to 1; K_ii = 0 and "
                                   "beta_ii is the largest weight of its row"),
                            fails="KL attention disagrees with its definition or the kernel",
                            why="two float64 computations of the same closed form (Cholesky vs rotated statistics)")

    def show(self, params, fmt="text", limit=None):
        return render_items([("beta_ij", "softmax_j(-K_ij / kappa)"), ("K_ij", "KL(q_i || Omega_ij q_j)"),
                       ("Omega_ij", "exp(phi_i) exp(-phi_j)")], fmt)


CLAIMS = [KLAttentionClaim()]

"""GT App. C.1: the closed-form KL divergence of two Gaussians, against its definition
E_q[log q - log p] (exact by moments, symbolically, and by sigma points, numerically)."""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge.autodiff import relative_error
from attngeom.geometry_proofs.gauge.beliefs import (kl_by_expectation, symbolic_covariance, symbolic_gaussian_kl,
                                           symbolic_kl_by_moments, symbolic_mean)
from attngeom.geometry_proofs.gauge.claim_base import (
    COVARIANCE, DIM, SIGMA, TOKENS, GaugeClaim, symbolic_identity)
from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import gaussian_kl, gaussian_kl_diagonal

#: closed form vs sigma-point expectation: float64 rounding of sums of K^2 terms
KL_TOLERANCE = 1e-10


class GaussianKLClaim(GaugeClaim):
    """GT App. C.1: KL(N(mu_1, S_1) || N(mu_2, S_2)) = 1/2 [tr(S_2^{-1} S_1) + (mu_2 - mu_1)^T
    S_2^{-1} (mu_2 - mu_1) - K + log |S_2| / |S_1|].

    Symbolic (K = 2): E_q[log q - log p] expanded with E[x] = mu_1, E[x x^T] = S_1 + mu_1 mu_1^T
    equals the closed form.  Numeric: :func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.gaussian_kl` (and
    ``gaussian_kl_diagonal`` for diagonal covariances) at every sampled pair (q_i, p_j)
    against the sigma-point expectation (exact for the quadratic log-ratio) on the
    requested backend."""

    id = "gt-gaussian-kl"
    source = "GT App. C.1"
    statement = "KL(N1 || N2) = 1/2 [tr(S2^{-1} S1) + (mu2 - mu1)^T S2^{-1} (mu2 - mu1) - K + log |S2|/|S1|]."
    params = (TOKENS, DIM, COVARIANCE, SIGMA)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 4}, {"dim": 20, "covariance": "diagonal"})
    limits = {"tokens": 12, "dim": 64}

    def check_symbolic(self, params, context):
        mu_q, S_q = symbolic_mean("m", 2), symbolic_covariance("s", 2)
        mu_p, S_p = symbolic_mean("n", 2), symbolic_covariance("t", 2)
        difference = symbolic_gaussian_kl(mu_q, S_q, mu_p, S_p) - symbolic_kl_by_moments(mu_q, S_q, mu_p, S_p)
        difference = sympy.expand_log(difference, force=True)
        return symbolic_identity([difference], sorted(difference.free_symbols, key=str),
                                 holds="App. C.1's closed form equals E_q[log q - log p] exactly (K = 2)",
                                 fails="App. C.1's closed form differs from E_q[log q - log p] (K = 2)",
                                 evidence={"dimension": 2, "expectation": "moments E[x], E[x x^T]"})

    def check_numeric(self, params, context):
        be = get_backend(context.backend, context.device)
        diagonal = params["covariance"] == "diagonal"
        rows = []
        for sample, system in enumerate(self.systems(params, context, observed=False)):
            for i in range(system.tokens):
                for j in range(system.tokens):
                    args = (system.mu[i], system.Sigma[i], system.prior_mu[j], system.prior_Sigma[j])
                    if diagonal:
                        value = gaussian_kl_diagonal(*(be.asarray(a if a.ndim == 1 else np.diag(a)) for a in args), be)
                    else:
                        value = gaussian_kl(*(be.asarray(a) for a in args), be)
                    reference = kl_by_expectation(*args)
                    rows.append({"sample": sample, "pair": [i, j], "error": relative_error(float(be.to_numpy(value)), reference),
                                 "printed": float(be.to_numpy(value)), "reference": reference})
        return self.compare(rows, tolerance=KL_TOLERANCE, backend=be.name, device=be.device, context=context,
                            holds="the closed form equals E_q[log q - log p] at every sampled pair",
                            fails="the closed-form KL differs from E_q[log q - log p]",
                            why="float64 rounding of sums of K^2 terms and log det")

    def show(self, params, fmt="text", limit=None):
        return render_items([("KL", "1/2 [tr(S2^{-1} S1) + (mu2 - mu1)^T S2^{-1} (mu2 - mu1) - K + log |S2|/|S1|]")], fmt)


CLAIMS = [GaussianKLClaim()]

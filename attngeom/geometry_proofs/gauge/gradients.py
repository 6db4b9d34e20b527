"""GT's gradient formulas, implemented AS PRINTED, and their corrections (numpy).

Each function states the printed formula and its equation; ``*_corrected`` functions are
the formulas the checks derive where the printed one disagrees with autodiff of the free
energy (:mod:`attngeom.geometry_proofs.gauge.free_energy`).  Matrix gradients use the symmetric
convention: dF = <G, dSigma>_F for symmetric dSigma (the convention of GT eq 12).

Notation: q_i = N(mu_i, S_i), p_i = N(m_i, P_i), Omega = Omega_ij (orthogonal),
K_ij = KL(q_i || Omega_ij q_j), beta = softmax_j(-K / kappa).
"""

from __future__ import annotations

import numpy as np
import sympy

inv = np.linalg.inv


# ---------------------------------------------------------------------------------------
# single-pair KL gradients


def grad_mu_self(mu_q, mu_p, S_p):
    """GT eq (11): grad_{mu_q} KL(q || p) = P^{-1} (mu_q - m), shape=[K]."""
    return inv(S_p) @ (mu_q - mu_p)


def grad_sigma_self_eq12(S_q, S_p):
    """GT eq (12): grad_{S_q} KL(q || p) = 1/2 [P^{-1} - S_q^{-1}], shape=[K, K]."""
    return 0.5 * (inv(S_p) - inv(S_q))


def grad_sigma_self_eq24(S_q, S_p):
    """GT eq (24) as printed: grad_{S_i} KL(q_i || p_i) = 1/2 [S_i^{-1} - P_i^{-1}]."""
    return 0.5 * (inv(S_q) - inv(S_p))


def grad_sigma_query_eq25(S_i, omega, S_j):
    """GT eq (25): grad_{S_i} KL(q_i || Omega q_j) = 1/2 [(Omega S_j Omega^T)^{-1} - S_i^{-1}]."""
    return 0.5 * (inv(omega @ S_j @ omega.T) - inv(S_i))


def grad_sigma_key_eq26(S_i, omega):
    """GT eq (26) as printed: grad_{S_i} KL(q_k || Omega_ki q_i) = 1/2 R^T (Omega S_i Omega^T)^{-1} R,
    R = Omega_ki."""
    return 0.5 * omega.T @ inv(omega @ S_i @ omega.T) @ omega


def grad_sigma_key_corrected(mu_k, S_k, mu_i, S_i, omega):
    """grad_{S_i} KL(q_k || Omega q_i) = 1/2 [S_i^{-1} - S_i^{-1} Omega^T (S_k + d d^T) Omega S_i^{-1}],
    d = mu_k - Omega mu_i (chain rule through S = Omega S_i Omega^T, Omega orthogonal)."""
    P = inv(S_i)
    d = mu_k - omega @ mu_i
    return 0.5 * (P - P @ omega.T @ (S_k + np.outer(d, d)) @ omega @ P)


def grad_mu_query(mu_i, mu_j, S_j, omega):
    """grad_{mu_i} KL(q_i || Omega q_j) = (Omega S_j Omega^T)^{-1} (mu_i - Omega mu_j) (eq 11's
    formula with p = Omega q_j; not printed separately in GT)."""
    return inv(omega @ S_j @ omega.T) @ (mu_i - omega @ mu_j)


def grad_mu_key(mu_k, mu_i, S_i, omega):
    """grad_{mu_i} KL(q_k || Omega q_i) = S_i^{-1} (mu_i - Omega^T mu_k) (Omega = Omega_ki)."""
    return inv(S_i) @ (mu_i - omega.T @ mu_k)


def grad_likelihood_eq57(mu, observation: int):
    """GT eq (57): grad_mu [-log softmax(mu)_o] = softmax(mu) - e_o, shape=[K]."""
    weights = np.exp(mu - mu.max())
    weights /= weights.sum()
    return weights - np.eye(mu.shape[0])[observation]


# ---------------------------------------------------------------------------------------
# softmax weights (eqs 15, 27, 50)


def beta_gradient(beta_row, kl_grads, kappa: float, sign: float = -1.0):
    """GT eqs (15), (27): grad beta_ij = -1/kappa beta_ij [grad K_ij - sum_k beta_ik grad K_ik],
    ``sign = -1``; GT eq (50) prints the same with ``sign = +1``.
    beta_row shape=[N], kl_grads shape=[N, ...] -> shape=[N, ...]."""
    beta_row = np.asarray(beta_row)
    shape = (-1,) + (1,) * (kl_grads.ndim - 1)
    mean = np.tensordot(beta_row, kl_grads, axes=1)
    return sign / kappa * beta_row.reshape(shape) * (kl_grads - mean)


#: eq 50's sign (the tests monkeypatch these to mutate the formulas)
EQ15_SIGN, EQ50_SIGN = -1.0, +1.0


# ---------------------------------------------------------------------------------------
# assembled gradients (eqs 14, 16-23, 28-31)


def assembled_printed(i: int, kl, beta, kappa: float, row_grads, col_grads, self_grad, likelihood_grad):
    """GT eqs (16)-(19) / (20)-(23) / (28)-(31) with gamma = 0: the gradient of F with
    respect to a parameter theta_i of agent i,

        self + sum_j [(grad beta_ij) K_ij + beta_ij grad K_ij] + sum_k beta_ki grad K_ki + lik,

    grad beta_ij by eq (15).  ``row_grads[j]`` = grad_{theta_i} K_ij, ``col_grads[k]`` =
    grad_{theta_i} K_ki (the entries for j = i, k = i are 0: K_ii = 0 identically)."""
    dbeta = beta_gradient(beta[i], row_grads, kappa, EQ15_SIGN)
    weights = (slice(None),) + (None,) * (row_grads.ndim - 1)
    term17 = (dbeta * kl[i][weights]).sum(0) + (beta[i][weights] * row_grads).sum(0)
    term18 = (beta[:, i][weights] * col_grads).sum(0)
    return self_grad + term17 + term18 + likelihood_grad


def assembled_missing_term(i: int, kl, beta, kappa: float, col_grads):
    """The term GT's assembled gradients leave out: for every other agent k the weights
    beta_kj of row k depend on theta_i through K_ki, giving

        sum_{k != i} sum_j (grad_{theta_i} beta_kj) K_kj
            = -1/kappa sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) grad_{theta_i} K_ki."""
    spread = kl[:, i] - (beta * kl).sum(1)
    coefficient = -beta[:, i] * spread / kappa
    coefficient[i] = 0.0
    weights = (slice(None),) + (None,) * (col_grads.ndim - 1)
    return (coefficient[weights] * col_grads).sum(0)


def assembled_corrected(i: int, kl, beta, kappa: float, row_grads, col_grads, self_grad, likelihood_grad):
    """The printed assembly plus :func:`assembled_missing_term`: the gradient of F."""
    return (assembled_printed(i, kl, beta, kappa, row_grads, col_grads, self_grad, likelihood_grad)
            + assembled_missing_term(i, kl, beta, kappa, col_grads))


def vacuum_stationarity_eq53(i: int, mu, Sigma, omega, beta, prior_var: float):
    """GT eq (53) as printed: mu_i / sigma_p^2 + sum_j beta_ij Sigma_j^{-1} (mu_i - Omega_ij mu_j)."""
    out = mu[i] / prior_var
    for j in range(mu.shape[0]):
        out = out + beta[i, j] * inv(Sigma[j]) @ (mu[i] - omega[i, j] @ mu[j])
    return out


# ---------------------------------------------------------------------------------------
# frame derivatives of transported statistics (eqs 32-33)


def transport_mean_derivative_eq32(dexp_i, rotation_j, mu):
    """GT eq (32): d/dt Omega_ij(phi_i + t xi) mu = [d e^{phi_i} . xi] e^{-phi_j} mu."""
    return dexp_i @ rotation_j.T @ mu


def transport_cov_derivative_eq33(dexp_i, rotation_i, rotation_j, Sigma):
    """GT eq (33) as printed: [d e^{phi_i} . xi] R Sigma R^T + transpose, R = e^{-phi_j}."""
    R = rotation_j.T
    half = dexp_i @ R @ Sigma @ R.T
    return half + half.T


def transport_cov_derivative_corrected(dexp_i, rotation_i, rotation_j, Sigma):
    """d/dt Omega Sigma Omega^T = [d e^{phi_i} . xi] R Sigma R^T e^{phi_i}^T + transpose."""
    R = rotation_j.T
    half = dexp_i @ R @ Sigma @ R.T @ rotation_i.T
    return half + half.T


# ---------------------------------------------------------------------------------------
# symbolic helpers


def symbolic_matrix_gradient(expr: sympy.Expr, S: sympy.Matrix) -> sympy.Matrix:
    """The symmetric matrix gradient of ``expr`` in the symmetric symbol matrix ``S``:
    G_aa = d expr / d s_aa, G_ab = 1/2 d expr / d s_ab (a != b; s_ab = s_ba is one symbol)."""
    dim = S.shape[0]
    return sympy.Matrix(dim, dim, lambda a, b: sympy.diff(expr, S[a, b]) * (1 if a == b else sympy.Rational(1, 2)))

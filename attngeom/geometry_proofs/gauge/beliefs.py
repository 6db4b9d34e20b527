"""Gaussian beliefs N(mu, Sigma) of GT and their closed-form KL divergence (GT App. C.1).

Numeric KL comes from :func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.gaussian_kl` (one copy of the formula
in the code base, written by the kernel and reused here); this module adds what the gauge
claims need around it: validation of covariances (SPD, full or diagonal), the symmetric
part used to differentiate with respect to a covariance, seeded SPD samples, the
symbolic KL (SymPy, small K) and its independent reference E_q[log q - log p].

    KL(N(mu_q, S_q) || N(mu_p, S_p)) = 1/2 [ tr(S_p^{-1} S_q) + (mu_p - mu_q)^T S_p^{-1} (mu_p - mu_q)
                                             - K + log det S_p - log det S_q ]        (GT App. C.1)
"""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler


def validate_covariance(Sigma, name: str = "Sigma") -> np.ndarray:
    """Return ``Sigma`` as a float64 array, or raise BadInput (one line) unless it is a
    symmetric positive-definite matrix, shape=[..., K, K], or a positive diagonal given
    as variances, shape=[..., K] (``ndim == 1`` or a trailing axis that is not square)."""
    Sigma = np.asarray(Sigma, dtype=float)
    if Sigma.ndim >= 2 and Sigma.shape[-1] == Sigma.shape[-2]:
        if not np.all(np.isfinite(Sigma)):
            raise BadInput(f"{name} must be finite")
        if not np.allclose(Sigma, np.swapaxes(Sigma, -1, -2), rtol=1e-12, atol=1e-12):
            raise BadInput(f"{name} must be symmetric positive definite; it is not symmetric")
        if np.min(np.linalg.eigvalsh(Sigma)) <= 0:
            raise BadInput(f"{name} must be symmetric positive definite; it has an eigenvalue <= 0")
        return Sigma
    if not np.all(Sigma > 0):
        raise BadInput(f"diagonal {name} must have positive variances")
    return Sigma


def dense_covariance(Sigma) -> np.ndarray:
    """A validated covariance as a full matrix: variances shape=[..., K] become
    diag(variances) shape=[..., K, K]; full matrices pass through."""
    Sigma = validate_covariance(Sigma)
    if Sigma.ndim >= 2 and Sigma.shape[-1] == Sigma.shape[-2]:
        return Sigma
    return Sigma[..., :, None] * np.eye(Sigma.shape[-1])


def symmetric_part(Sigma):
    """(Sigma + Sigma^T) / 2, shape=[..., K, K], on any backend.

    The free energy reads covariances through this map, so the autodiff gradient with
    respect to the K^2 entries is the symmetric matrix gradient that GT's printed
    formulas (eqs 12, 24-26) are written in: dF = <grad, dSigma>_F for symmetric dSigma.
    """
    return 0.5 * (Sigma + Sigma.swapaxes(-1, -2))


def sample_covariances(sampler: Sampler, count: int, dim: int, diagonal: bool = False) -> np.ndarray:
    """``count`` seeded SPD matrices, shape=[count, K, K]: A A^T / K + I / 2 (full, condition
    number of order 10) or diag of variances uniform in [0.5, 1.5] (diagonal, as GT's
    initialization Sigma = 0.1 I is diagonal)."""
    if diagonal:
        variances = 0.5 + np.abs(np.tanh(sampler.floats((count, dim))))
        return variances[..., :, None] * np.eye(dim)
    factor = sampler.floats((count, dim, dim))
    return factor @ np.swapaxes(factor, -1, -2) / dim + 0.5 * np.eye(dim)


def sigma_points(mu: np.ndarray, Sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2K points mu +- sqrt(K) L e_k (Sigma = L L^T) with weights 1/(2K): their mean is
    mu and their covariance Sigma, so the weighted sum is E_{N(mu, Sigma)}[f] EXACTLY for
    every polynomial f of degree <= 3 in x (odd central moments cancel by symmetry).
    Returns points shape=[2K, K] and weights shape=[2K]."""
    dim = mu.shape[-1]
    lower = np.linalg.cholesky(Sigma)
    offsets = np.sqrt(dim) * lower.T                      # rows: sqrt(K) L e_k
    points = np.concatenate([mu + offsets, mu - offsets])
    return points, np.full(2 * dim, 1.0 / (2 * dim))


def gaussian_log_density(x: np.ndarray, mu: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    """log N(x; mu, Sigma), x shape=[..., K] -> shape=[...]."""
    dim = mu.shape[-1]
    delta = x - mu
    quad = np.einsum("...a,ab,...b->...", delta, np.linalg.inv(Sigma), delta)
    return -0.5 * (quad + np.linalg.slogdet(Sigma)[1] + dim * np.log(2 * np.pi))


def kl_by_expectation(mu_q, Sigma_q, mu_p, Sigma_p) -> float:
    """KL(q || p) = E_q[log q(x) - log p(x)], the expectation taken with the sigma points
    of q: log q - log p is quadratic in x, so this is exact (no closed form used)."""
    points, weights = sigma_points(mu_q, Sigma_q)
    log_ratio = gaussian_log_density(points, mu_q, Sigma_q) - gaussian_log_density(points, mu_p, Sigma_p)
    return float(weights @ log_ratio)


# ---------------------------------------------------------------------------------------
# symbolic (SymPy), small K


def symbolic_mean(name: str, dim: int) -> sympy.Matrix:
    """The column (name_1, ..., name_K) of real symbols."""
    return sympy.Matrix(sympy.symbols(f"{name}1:{dim + 1}", real=True))


def symbolic_covariance(name: str, dim: int) -> sympy.Matrix:
    """A symmetric K x K matrix of real symbols name_ab (a <= b)."""
    entries = {}
    for a in range(dim):
        for b in range(a, dim):
            entries[a, b] = entries[b, a] = sympy.Symbol(f"{name}{a + 1}{b + 1}", real=True)
    return sympy.Matrix(dim, dim, lambda a, b: entries[a, b])


def symbolic_gaussian_kl(mu_q, Sigma_q, mu_p, Sigma_p) -> sympy.Expr:
    """The closed form of GT App. C.1 as a SymPy expression (log det kept as log of the
    determinant polynomial)."""
    dim = mu_q.shape[0]
    precision = Sigma_p.inv()
    delta = mu_p - mu_q
    return sympy.Rational(1, 2) * ((precision * Sigma_q).trace() + (delta.T * precision * delta)[0, 0]
                                   - dim + sympy.log(Sigma_p.det()) - sympy.log(Sigma_q.det()))


def symbolic_kl_by_moments(mu_q, Sigma_q, mu_p, Sigma_p) -> sympy.Expr:
    """E_q[log q(x) - log p(x)] computed symbolically from the moments of q:
    E[x_a] = mu_a, E[x_a x_b] = Sigma_ab + mu_a mu_b (the integrand is quadratic in x)."""
    dim = mu_q.shape[0]
    x = symbolic_mean("x", dim)

    def log_density(mu, Sigma):
        delta = x - mu
        return -sympy.Rational(1, 2) * ((delta.T * Sigma.inv() * delta)[0, 0] + sympy.log(Sigma.det()))

    return symbolic_expectation(log_density(mu_q, Sigma_q) - log_density(mu_p, Sigma_p), x, mu_q, Sigma_q)


def symbolic_expectation(expr: sympy.Expr, x: sympy.Matrix, mu: sympy.Matrix, Sigma: sympy.Matrix) -> sympy.Expr:
    """E[expr] for x ~ N(mu, Sigma), ``expr`` a polynomial of degree <= 2 in the symbols x
    (coefficients arbitrary): E[x_a] = mu_a, E[x_a x_b] = Sigma_ab + mu_a mu_b."""
    poly = sympy.Poly(sympy.expand(expr), *x)
    if poly.total_degree() > 2:
        raise ValueError("symbolic_expectation handles degree <= 2 in x")
    total = sympy.Integer(0)
    for monomial, coefficient in poly.terms():
        powers = [i for i, e in enumerate(monomial) for _ in range(e)]
        if not powers:
            moment = 1
        elif len(powers) == 1:
            moment = mu[powers[0]]
        else:
            a, b = powers
            moment = Sigma[a, b] + mu[a] * mu[b]
        total += coefficient * moment
    return total

"""Natural gradients of GT (eqs 5-6) and the Fisher–Rao metric of N(mu, Sigma) computed
from the Fisher information itself.

Parametrization theta = (mu, vech Sigma): mu in R^K and the K(K+1)/2 entries Sigma_ab,
a <= b (each off-diagonal entry one coordinate for both Sigma_ab and Sigma_ba).  The
Fisher information is

    G(theta) = -E_{x ~ N(mu, Sigma)} [ Hess_theta log N(x; mu, Sigma) ],

the Hessian by autodiff (torch.func / jax) and the expectation EXACT by the sigma points
of :func:`attngeom.geometry_proofs.gauge.beliefs.sigma_points` (the Hessian is a polynomial of
degree 2 in x); symbolically (SymPy, small K) by the moments E[x], E[x x^T].  No closed
form of G is used.  The Riemannian (natural) gradient is G^{-1} grad_theta F, read back as
a mean vector and a symmetric matrix.

Printed (GT eqs 5, 6):  Sigma^{-1} grad_mu F  and  -1/2 Sigma^{-1} (grad_Sigma F) Sigma^{-1}.
What G^{-1} grad gives:  Sigma grad_mu F      and  2 Sigma (grad_Sigma F) Sigma
(grad_Sigma F the symmetric matrix gradient).
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy

from attngeom.geometry_proofs.gauge.beliefs import sigma_points, symbolic_expectation, symbolic_mean
from attngeom.kernels.backend import Backend


def vech_pairs(dim: int) -> list[tuple[int, int]]:
    """The (a, b), a <= b, of the covariance coordinates, row-major."""
    return [(a, b) for a in range(dim) for b in range(a, dim)]


def vech(Sigma: np.ndarray) -> np.ndarray:
    """The coordinates Sigma_ab, a <= b, shape=[K, K] -> [K(K+1)/2]."""
    rows, cols = np.triu_indices(Sigma.shape[-1])
    return Sigma[..., rows, cols]


def unvech_index(dim: int) -> np.ndarray:
    """index[a, b] = position of (min(a, b), max(a, b)) in :func:`vech_pairs`, shape=[K, K]."""
    position = {pair: k for k, pair in enumerate(vech_pairs(dim))}
    return np.array([[position[min(a, b), max(a, b)] for b in range(dim)] for a in range(dim)])


def unvech(v, dim: int, be: Backend | None = None):
    """The symmetric matrix with coordinates ``v`` (any backend), shape=[K(K+1)/2] -> [K, K]."""
    index = unvech_index(dim)
    return v[index if be is None else be.asarray(index, dtype="int64")]


def log_density(x, theta, dim: int, be: Backend):
    """log N(x; mu, Sigma) at theta = (mu, vech Sigma), on any backend (x numpy)."""
    mu = theta[:dim]
    Sigma = unvech(theta[dim:], dim, be)
    delta = be.asarray(x) - mu
    quad = delta @ be.module.linalg.solve(Sigma, delta)
    return -0.5 * (quad + be.module.linalg.slogdet(Sigma)[1] + dim * np.log(2 * np.pi))


def fisher_information(mu: np.ndarray, Sigma: np.ndarray, be: Backend, hessian) -> np.ndarray:
    """G = -E[Hess_theta log p(x; theta)], shape=[d, d], d = K + K(K+1)/2, by autodiff
    Hessians (``hessian(be, f, point)``) averaged over the sigma points (exact)."""
    dim = mu.shape[0]
    theta = np.concatenate([mu, vech(Sigma)])
    points, weights = sigma_points(mu, Sigma)
    return -sum(w * hessian(be, lambda t, x=x: log_density(x, t, dim, be), theta) for x, w in zip(points, weights))


def gauss_hermite_points(mu: np.ndarray, Sigma: np.ndarray, nodes: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The tensor-product Gauss–Hermite rule for N(mu, Sigma): ``nodes``^K points
    mu + L z (Sigma = L L^T) and weights summing to 1, exact for every polynomial whose degree
    in each whitened coordinate is <= 2 nodes - 1 (with 3 nodes: all polynomials of total
    degree <= 5, so E[score score^T], of degree 4 in x, exactly)."""
    dim = mu.shape[0]
    z1, w1 = np.polynomial.hermite_e.hermegauss(nodes)
    w1 = w1 / np.sqrt(2 * np.pi)
    grid = np.array(list(itertools.product(range(nodes), repeat=dim)))
    z, w = z1[grid], np.prod(w1[grid], axis=1)
    return mu + z @ np.linalg.cholesky(Sigma).T, w


def fisher_from_scores(mu: np.ndarray, Sigma: np.ndarray, be: Backend, gradient) -> np.ndarray:
    """G = E[s s^T], s = grad_theta log p(x; theta) by autodiff (``gradient(be, f, point)``),
    the expectation by :func:`gauss_hermite_points` (exact): the second, independent
    definition of the Fisher information."""
    dim = mu.shape[0]
    theta = np.concatenate([mu, vech(Sigma)])
    points, weights = gauss_hermite_points(mu, Sigma)
    total = np.zeros((theta.size, theta.size))
    for x, w in zip(points, weights):
        score = gradient(be, lambda t, x=x: log_density(x, t, dim, be), theta)[0]
        total += w * np.outer(score, score)
    return total


def riemannian_gradient(fisher: np.ndarray, grad_theta: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """G^{-1} grad_theta F as (mean part shape=[K], covariance part symmetric shape=[K, K])."""
    v = np.linalg.solve(fisher, grad_theta)
    return v[:dim], unvech(v[dim:], dim)


def natural_gradient_mean_eq5(Sigma, grad_mu):
    """GT eq (5) as printed: Sigma^{-1} grad_mu F."""
    return np.linalg.solve(Sigma, grad_mu)


def natural_gradient_cov_eq6(Sigma, grad_Sigma):
    """GT eq (6) as printed: -1/2 Sigma^{-1} grad_Sigma F Sigma^{-1}."""
    P = np.linalg.inv(Sigma)
    return -0.5 * P @ grad_Sigma @ P


def natural_gradient_mean_corrected(Sigma, grad_mu):
    """G^{-1} grad for the mean block (G_mumu = Sigma^{-1}): Sigma grad_mu F."""
    return Sigma @ grad_mu


def natural_gradient_cov_corrected(Sigma, grad_Sigma):
    """G^{-1} grad for the covariance block: 2 Sigma grad_Sigma F Sigma."""
    return 2.0 * Sigma @ grad_Sigma @ Sigma


# ---------------------------------------------------------------------------------------
# symbolic, small K


def symbolic_fisher(dim: int):
    """(G, mu, Sigma, theta): the Fisher information of N(mu, Sigma) in theta = (mu, vech Sigma)
    from -E[Hess_theta log p] with the expectation by moments (SymPy)."""
    mu = symbolic_mean("m", dim)
    entries = {pair: sympy.Symbol(f"s{pair[0] + 1}{pair[1] + 1}", real=True) for pair in vech_pairs(dim)}
    Sigma = sympy.Matrix(dim, dim, lambda a, b: entries[min(a, b), max(a, b)])
    theta = list(mu) + [entries[pair] for pair in vech_pairs(dim)]
    x = symbolic_mean("x", dim)
    delta = x - mu
    logp = -sympy.Rational(1, 2) * ((delta.T * Sigma.adjugate() * delta)[0, 0] / Sigma.det() + sympy.log(Sigma.det()))
    size = len(theta)
    fisher = sympy.zeros(size, size)
    for a in range(size):
        first = sympy.diff(logp, theta[a])
        for b in range(a, size):
            second = sympy.together(sympy.diff(first, theta[b]))
            numerator, denominator = sympy.fraction(second)
            value = -symbolic_expectation(numerator, x, mu, Sigma) / denominator
            fisher[a, b] = fisher[b, a] = sympy.cancel(value)
    return fisher, mu, Sigma, theta

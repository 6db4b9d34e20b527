"""Frames phi in so(n), parallel transport Omega_ij = exp(phi_i) exp(-phi_j) (GT eq 3) in the
representation rho = H x fund (GT eqs 36-37, 45-46), and the derivative of the matrix
exponential (GT eqs 34-35).

The single-pair pieces (the basis of so(n), vector -> skew matrix, exp, block-diagonal
assembly) are those of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention`; this module builds on them what the
free energy and the gradient claims need: all pairs Omega_ij of N tokens, skew -> vector,
and three independent evaluations of d/dt exp(phi + t xi).

Conventions: a frame is the coordinate vector c in the basis G_(ab) = E_ab - E_ba (a < b)
of so(n), shape=[..., n(n-1)/2]; phi = sum_k c_k G_k.  As in GT §3.2 one frame per token
acts on all H copies of the fundamental representation, so the transport on R^K, K = H n,
is rho(Omega) = diag(Omega, ..., Omega) (GT eqs 37, 46).
"""

from __future__ import annotations

import numpy as np

from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import block_diagonal, matrix_exp, skew, so_basis, so_dimension


def head_size(dim: int, head_dim: int | None) -> tuple[int, int]:
    """(H, n) for belief dimension K = ``dim`` and fundamental dimension n = ``head_dim``
    (default K, one head); BadInput unless n divides K (GT eq 37: K = 5 x 20)."""
    n = dim if head_dim is None else head_dim
    if n < 1 or dim < 1:
        raise BadInput(f"need K >= 1 and head size n >= 1; got K={dim}, n={n}")
    if dim % n:
        raise BadInput(f"K = {dim} is not a multiple of the head size n = {n} (rho = H x fund needs K = H n)")
    return dim // n, n


def skew_to_vector(phi: np.ndarray) -> np.ndarray:
    """The coordinates of skew matrices in :func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.so_basis`,
    shape=[..., n, n] -> [..., n(n-1)/2] (inverse of :func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.skew`)."""
    n = phi.shape[-1]
    rows, cols = np.triu_indices(n, k=1)
    return phi[..., rows, cols]


def representation(omega, heads: int, be: Backend):
    """rho(Omega) = diag(Omega, ..., Omega) (H copies, GT eqs 36-37, 46),
    shape=[..., n, n] -> [..., H n, H n]."""
    if heads == 1:
        return omega
    return block_diagonal(omega[..., None, :, :] * be.asarray(np.ones((heads, 1, 1))), be)


def frame_rotations(phi, be: Backend):
    """exp(phi) for skew matrices shape=[N, n, n] (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.matrix_exp`)."""
    return matrix_exp(phi, be)


def pairwise_transport(frames, n: int, heads: int, be: Backend):
    """All Omega_ij = rho(exp(phi_i) exp(-phi_j)) of N tokens (GT eqs 3, 45),
    frame coordinates shape=[N, n(n-1)/2] -> shape=[N, N, K, K]."""
    rotation = frame_rotations(skew(frames, n, be), be)         # exp(phi_i), [N, n, n]
    omega = rotation[:, None] @ rotation[None, :].swapaxes(-1, -2)
    return representation(omega, heads, be)


def transport_belief(omega, mu, Sigma):
    """Omega . (mu, Sigma) = (Omega mu, Omega Sigma Omega^T) (GT eqs 2-3), any backend,
    omega shape=[..., K, K], mu shape=[..., K], Sigma shape=[..., K, K]."""
    return (omega @ mu[..., None])[..., 0], omega @ Sigma @ omega.swapaxes(-1, -2)


def random_rotation(sampler, dim: int) -> np.ndarray:
    """A seeded g in SO(K): the orthogonal factor of a Gaussian matrix, det fixed to +1."""
    q, r = np.linalg.qr(sampler.floats((dim, dim)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


# ---------------------------------------------------------------------------------------
# the derivative of the matrix exponential (GT eqs 34-35), numpy


def dexp_integral(phi: np.ndarray, xi: np.ndarray, nodes: int = 24) -> np.ndarray:
    """GT eq (34): d/dt exp(phi + t xi)|_0 = int_0^1 e^{t phi} xi e^{(1-t) phi} dt, by
    Gauss–Legendre quadrature with ``nodes`` nodes (the integrand is entire in t; 24 nodes
    reach float64 rounding for |phi| up to a few units)."""
    import scipy.linalg

    t, w = np.polynomial.legendre.leggauss(nodes)
    t, w = 0.5 * (t + 1.0), 0.5 * w
    return sum(wk * scipy.linalg.expm(tk * phi) @ xi @ scipy.linalg.expm((1 - tk) * phi)
               for tk, wk in zip(t, w))


def dexp_adjoint_series(phi: np.ndarray, xi: np.ndarray, terms: int = 60) -> np.ndarray:
    """dexp_phi(xi) = sum_k (-1)^k ad_phi^k(xi) / (k+1)! = ((1 - e^{-ad_phi}) / ad_phi)(xi),
    the left-trivialized differential, so that d/dt exp(phi + t xi)|_0 = e^phi dexp_phi(xi)
    (GT eq 35 with this definition of dexp)."""
    out = np.zeros_like(xi)
    term = xi.copy()
    factorial = 1.0
    for k in range(terms):
        factorial *= k + 1
        out = out + term / factorial * (-1) ** k
        term = phi @ term - term @ phi
    return out


def dexp_block(phi: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """d/dt exp(phi + t xi)|_0 as the upper-right block of exp([[phi, xi], [0, phi]])
    (Van Loan's block identity): an evaluation independent of eqs 34-35 and of autodiff."""
    import scipy.linalg

    n = phi.shape[-1]
    block = np.zeros((2 * n, 2 * n))
    block[:n, :n], block[:n, n:], block[n:, n:] = phi, xi, phi
    return scipy.linalg.expm(block)[:n, n:]


__all__ = ["head_size", "skew_to_vector", "representation", "pairwise_transport",
           "transport_belief", "random_rotation", "dexp_integral", "dexp_adjoint_series",
           "dexp_block", "so_basis", "so_dimension", "skew", "matrix_exp"]

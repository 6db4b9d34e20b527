"""The Dirac limit of GT's KL attention (GT §5.0.4, App. D, eqs 47-49, 58-67).

For isotropic beliefs q_i = N(mu_i, sigma^2 I) and orthogonal transport Omega_ij, the
transported belief is N(Omega_ij mu_j, sigma^2 I) (Omega sigma^2 I Omega^T = sigma^2 I), so

    KL(q_i || Omega_ij q_j) = |mu_i - Omega_ij mu_j|^2 / (2 sigma^2)          (GT eq 47 / 59)

exactly, and along the coupled path sigma^2 -> 0, tau = c / sigma^2 (GT eq 48 / 60) the
logit -KL / tau = -|mu_i - Omega_ij mu_j|^2 / (2c) does not depend on sigma at all.
Expanding (GT eq 62) and dropping the query term |mu_i|^2 (constant in j):

    beta_ij -> softmax_j( (mu_i^T Omega_ij mu_j - |Omega_ij mu_j|^2 / 2) / c )   (the limit)

GT (§5.0.4, eqs 48-49, 65-66) states softmax_j(mu_i^T Omega mu_j / c): that drops the key
term -|Omega_ij mu_j|^2 / (2c) = -|mu_j|^2 / (2c), which is constant in j only when all
keys have equal norm.

Arrays: mu shape=[N, n], frames (so(n) coordinates) shape=[N, n(n-1)/2], beta shape=[N, N].
"""

from __future__ import annotations

import numpy as np

from attngeom.kernels.backend import Backend, get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import frame_exp, kl_attention_direct, skew, so_dimension, softmax_last

#: the sigma^2 of the coupled path sigma^2 -> 0, sigma^2 tau = c
SIGMA2_PATH = (1.0, 1e-1, 1e-2, 1e-4, 1e-6)


def isotropic_kl_eq47(mu_i, mu_j, omega, sigma2: float):
    """GT eq 47 / 59: |mu_i - Omega mu_j|^2 / (2 sigma^2), shape=[...] from
    mu_i, mu_j shape=[..., n] and omega shape=[..., n, n]."""
    delta = mu_i - (omega @ mu_j[..., None])[..., 0]
    return (delta * delta).sum(-1) / (2.0 * sigma2)


def isotropic_kl_eq47_symbolic(mu_i, mu_j, omega, sigma2):
    """GT eq 47 / 59 in SymPy: |mu_i - Omega mu_j|^2 / (2 sigma^2), column matrices mu."""
    delta = mu_i - omega * mu_j
    return (delta.T * delta)[0, 0] / (2 * sigma2)


def rotations(frames, n: int, be: Backend):
    """R_i = exp(phi_i) from so(n) coordinates, shape=[N, n(n-1)/2] -> [N, n, n]."""
    return frame_exp(skew(frames, n, be), be)


def beta_on_path(mu, frames, sigma2: float, c: float, be: Backend):
    """beta_ij = softmax_j(-KL(q_i || Omega_ij q_j) / tau) with q_i = N(mu_i, sigma^2 I),
    tau = c / sigma^2 (GT eqs 58, 60), from the Gaussian KL itself (the direct kernel of
    :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention`, no closed form), shape=[N, N]."""
    length, n = mu.shape
    sigma = sigma2 * be.asarray(np.broadcast_to(np.eye(n), (1, length, n, n)).copy())
    skew_frames = skew(frames, n, be)[None]
    result = kl_attention_direct(mu[None], sigma, skew_frames, c / sigma2, be)
    return result.beta[0]


def bilinear_logits(mu, frames, n: int, be: Backend):
    """mu_i^T Omega_ij mu_j = (R_i^T mu_i) . (R_j^T mu_j), shape=[N, N]."""
    rotated = (mu[:, None, :] @ rotations(frames, n, be))[:, 0, :]
    return rotated @ rotated.T


def printed_limit(mu, frames, c: float, be: Backend):
    """GT's stated limit (§5.0.4, eqs 48-49, 65-66): softmax_j(mu_i^T Omega_ij mu_j / c)."""
    return softmax_last(bilinear_logits(mu, frames, mu.shape[-1], be) / c, be)


def corrected_limit(mu, frames, c: float, be: Backend):
    """The limit as derived from eq 47: softmax_j((mu_i^T Omega_ij mu_j - |Omega_ij mu_j|^2 / 2) / c),
    with |Omega_ij mu_j| = |mu_j| for orthogonal Omega_ij."""
    key_norms = be.sum(mu * mu, -1)
    return softmax_last((bilinear_logits(mu, frames, mu.shape[-1], be) - 0.5 * key_norms[None, :]) / c, be)


def sample_dirac_system(sampler, tokens: int, n: int, equal_key_norms: bool) -> tuple[np.ndarray, np.ndarray]:
    """Seeded means (shape=[N, n]) and frames (shape=[N, n(n-1)/2], coordinates N(0, 0.5^2)).
    With ``equal_key_norms`` every mean is rescaled to norm 1.5; otherwise the norms are
    spread over [0.5, 2.5] (so they differ)."""
    mu = sampler.spawn(0).floats((tokens, n))
    mu /= np.linalg.norm(mu, axis=-1, keepdims=True)
    if equal_key_norms:
        mu *= 1.5
    else:
        mu *= np.linspace(0.5, 2.5, tokens)[:, None] if tokens > 1 else 0.5
    frames = sampler.spawn(1).floats((tokens, so_dimension(n)), 0.5)
    return mu, frames


def key_norm_effect(sampler, tokens: int, n: int, be: Backend) -> float:
    """Mean total-variation distance between GT's printed limit and the derived one over
    the *other* tokens (j != i; the self term |mu_i|^2 / c dominates both at large n) for
    standard Gaussian means mu_j ~ N(0, I_n) at c = sqrt(n), the 1/sqrt(d_k) scaling GT
    App. D.4 identifies with the coupled limit.  GT App. D.2 says the key term
    |Omega mu_j|^2 "approximately cancels due to high-dimensional concentration"; if it did,
    this distance would shrink as n grows.  (|mu_j|^2 / (2 sqrt n) has standard deviation
    1/sqrt 2 at every n, the order of the bilinear logit's.)"""
    mu = sampler.spawn(0).floats((tokens, n))
    frames = sampler.spawn(1).floats((tokens, so_dimension(n)), 0.5 / np.sqrt(n))
    c = float(np.sqrt(n))
    bilinear = be.to_numpy(bilinear_logits(be.asarray(mu), be.asarray(frames), n, be)) / c
    others = np.where(np.eye(tokens, dtype=bool), -np.inf, 0.0)
    key_term = 0.5 * np.sum(mu * mu, axis=-1)[None, :] / c
    numpy = get_backend("numpy")
    printed = softmax_last(bilinear + others, numpy)
    derived = softmax_last(bilinear - key_term + others, numpy)
    return float(0.5 * np.abs(printed - derived).sum(axis=1).mean())

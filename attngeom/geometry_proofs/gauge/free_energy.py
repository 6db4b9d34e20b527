"""GT's KL attention and variational free energy, written once for numpy / torch / jax.

    K_ij    = KL(q_i || Omega_ij q_j)                                   (GT eq 13)
    beta_ij = softmax_j(-K_ij / kappa)                                  (GT eqs 1, 13, 58)
    F       = sum_i KL(q_i || p_i) + sum_ij beta_ij K_ij - sum_i log softmax(mu_i)_{o_i}
                                                                        (GT eqs 4, 9, 55, 56)

with beta a function of the beliefs and frames (GT's gradients, eqs 14-31, differentiate
through it), the model terms (2), (4) of eq 4 omitted as in GT §2.2, the sum over all
pairs (i, j) including j = i (K_ii = 0), and the likelihood term of eq 56: the cross-entropy
of softmax(mu_i) against the observed class o_i (eq 10) -- GT's "≈" replaces E_q by the
value at the mean, so it depends on mu only.  Without observations F is the vacuum free
energy of eq 51.

Because the same code runs on torch and jax, autodiff of F (``torch.func`` / ``jax``) is the
independent reference for every printed gradient (:mod:`attngeom.geometry_proofs.gauge.autodiff`).

Shapes: mu shape=[N, K]; Sigma shape=[N, K, K] (read through its symmetric part, see
:func:`attngeom.geometry_proofs.gauge.beliefs.symmetric_part`); frames shape=[N, n(n-1)/2]
(coordinates in so(n), one frame per token acting on the H = K / n heads).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attngeom.geometry_proofs.gauge.beliefs import dense_covariance, sample_covariances, symmetric_part
from attngeom.geometry_proofs.gauge.transport import head_size, pairwise_transport, transport_belief
from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import gaussian_kl, so_dimension, softmax_last
from attngeom.kernels.sampling import Sampler


@dataclass
class GaugeSystem:
    """N agents with beliefs, priors, frames, observations and the temperature (numpy).

    Attributes
    ----------
    mu : belief means, shape=[N, K]
    Sigma : belief covariances (SPD), shape=[N, K, K]
    frames : frame coordinates in so(n), shape=[N, n(n-1)/2]
    prior_mu, prior_Sigma : priors p_i, shape=[N, K] and [N, K, K]
    kappa : attention temperature kappa > 0 (GT eq 13)
    head_dim : n, the fundamental dimension; K = H n
    observations : class o_i in {0..K-1} per agent (GT eqs 10, 56), or None (vacuum)
    """

    mu: np.ndarray
    Sigma: np.ndarray
    frames: np.ndarray
    prior_mu: np.ndarray
    prior_Sigma: np.ndarray
    kappa: float
    head_dim: int
    observations: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.kappa > 0:
            raise BadInput(f"the temperature kappa must be > 0; got {self.kappa}")
        if self.mu.ndim != 2 or self.mu.shape[0] < 1:
            raise BadInput(f"need N >= 1 agents with means shape [N, K]; got {self.mu.shape}")
        self.Sigma = dense_covariance(self.Sigma)
        self.prior_Sigma = dense_covariance(self.prior_Sigma)
        heads, n = head_size(self.dim, self.head_dim)
        if self.frames.shape != (self.tokens, so_dimension(n)):
            raise BadInput(f"frames must have shape [N, n(n-1)/2] = [{self.tokens}, {so_dimension(n)}]")

    @property
    def tokens(self) -> int:
        return self.mu.shape[0]

    @property
    def dim(self) -> int:
        return self.mu.shape[1]

    @property
    def heads(self) -> int:
        return self.dim // self.head_dim

    def onehot(self) -> np.ndarray | None:
        if self.observations is None:
            return None
        return np.eye(self.dim)[self.observations]


def sample_system(sampler: Sampler, tokens: int, dim: int, head_dim: int | None = None,
                  kappa: float = 1.0, diagonal: bool = False, observed: bool = True,
                  frame_scale: float = 0.7) -> GaugeSystem:
    """A seeded system: means N(0, 1), covariances from
    :func:`attngeom.geometry_proofs.gauge.beliefs.sample_covariances` (full or diagonal), frame
    coordinates N(0, frame_scale^2) (larger than GT's 0.1 so that Omega_ij is far from I),
    priors likewise, observations uniform in {0..K-1}."""
    if tokens < 1:
        raise BadInput(f"need N >= 1 agents; got N={tokens}")
    heads, n = head_size(dim, head_dim)
    return GaugeSystem(
        mu=sampler.spawn(1).floats((tokens, dim)),
        Sigma=sample_covariances(sampler.spawn(2), tokens, dim, diagonal),
        frames=sampler.spawn(3).floats((tokens, so_dimension(n)), scale=frame_scale),
        prior_mu=sampler.spawn(4).floats((tokens, dim)),
        prior_Sigma=sample_covariances(sampler.spawn(5), tokens, dim, diagonal),
        kappa=kappa, head_dim=n,
        observations=sampler.spawn(6).integers((tokens,), 0, dim - 1) if observed else None)


def _expand(x, shape, be: Backend):
    if be.name == "torch":
        return x.expand(shape)
    return be.module.broadcast_to(x, shape)


def kl_matrix(mu, Sigma, frames, system: GaugeSystem, be: Backend):
    """K_ij = KL(q_i || Omega_ij q_j) for all pairs (GT eq 13), shape=[N, N]."""
    N, K = mu.shape[0], mu.shape[1]
    S = symmetric_part(Sigma)
    omega = pairwise_transport(frames, system.head_dim, system.heads, be)
    moved_mu, moved_S = transport_belief(omega, mu[None, :, :], S[None, :, :, :])
    query_mu = _expand(mu[:, None, :], (N, N, K), be)
    query_S = _expand(S[:, None, :, :], (N, N, K, K), be)
    return gaussian_kl(query_mu, query_S, moved_mu, moved_S, be)


def attention_weights(kl, kappa: float, be: Backend):
    """beta_ij = softmax_j(-K_ij / kappa) (GT eqs 13, 58), shape=[N, N]."""
    return softmax_last(-kl / kappa, be)


def prior_term(mu, Sigma, system: GaugeSystem, be: Backend):
    """sum_i KL(q_i || p_i) (term (1) of GT eq 4)."""
    prior_mu, prior_S = be.asarray(system.prior_mu), be.asarray(system.prior_Sigma)
    return be.sum(gaussian_kl(mu, symmetric_part(Sigma), prior_mu, prior_S, be), 0)


def likelihood_term(mu, system: GaugeSystem, be: Backend):
    """sum_i -log softmax(mu_i)_{o_i} (GT eqs 10, 56); 0 without observations."""
    onehot = system.onehot()
    if onehot is None:
        return 0.0 * be.sum(be.sum(mu, 1), 0)
    log_softmax = be.module.log(softmax_last(mu, be))
    return -be.sum(be.sum(be.asarray(onehot) * log_softmax, 1), 0)


def free_energy(mu, Sigma, frames, system: GaugeSystem, be: Backend, *, likelihood: bool = True):
    """F of GT eqs 9 / 55 (eq 51 with ``likelihood=False`` or no observations): a scalar
    on the backend of ``mu`` (differentiable on torch and jax)."""
    kl = kl_matrix(mu, Sigma, frames, system, be)
    beta = attention_weights(kl, system.kappa, be)
    total = prior_term(mu, Sigma, system, be) + be.sum(be.sum(beta * kl, 1), 0)
    if likelihood:
        total = total + likelihood_term(mu, system, be)
    return total


def evaluate(system: GaugeSystem, be: Backend) -> dict[str, np.ndarray]:
    """K, beta and F at the system's point, as numpy arrays (for the printed formulas)."""
    args = [be.asarray(x) for x in (system.mu, system.Sigma, system.frames)]
    kl = kl_matrix(*args, system, be)
    return {"kl": be.to_numpy(kl), "beta": be.to_numpy(attention_weights(kl, system.kappa, be)),
            "F": float(be.to_numpy(free_energy(*args, system, be)))}


def pair_kl(mu_query, S_query, mu_key, S_key, omega, be: Backend):
    """KL(N(mu_q, S_q) || Omega . N(mu_k, S_k)) for a batch of pairs, each argument its own
    array (so autodiff can differentiate one slot of one pair): shapes [..., K] and
    [..., K, K], covariances read through their symmetric part, shape=[...]."""
    moved_mu, moved_S = transport_belief(omega, mu_key, symmetric_part(S_key))
    return gaussian_kl(mu_query, symmetric_part(S_query), moved_mu, moved_S, be)


def pair_arrays(system: GaugeSystem, be: Backend) -> dict[str, np.ndarray]:
    """The N x N pairs (query i, key j) of a system as numpy arrays: mu_query [N, N, K],
    S_query [N, N, K, K], mu_key, S_key and omega [N, N, K, K] (Omega_ij)."""
    N, K = system.tokens, system.dim
    omega = be.to_numpy(pairwise_transport(be.asarray(system.frames), system.head_dim, system.heads, be))
    return {"mu_query": np.broadcast_to(system.mu[:, None], (N, N, K)).copy(),
            "S_query": np.broadcast_to(system.Sigma[:, None], (N, N, K, K)).copy(),
            "mu_key": np.broadcast_to(system.mu[None, :], (N, N, K)).copy(),
            "S_key": np.broadcast_to(system.Sigma[None, :], (N, N, K, K)).copy(),
            "omega": omega}

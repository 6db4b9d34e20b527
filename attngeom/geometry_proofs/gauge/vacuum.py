"""GT Appendix B: the vacuum free energy (eq 51) with shared isotropic priors
p_i = N(0, sigma_p^2 I) (eq 52), global gauge transformations (B.2) and the symmetric
phase (eqs 53-54).

    F_vac = sum_i KL(q_i || p_i) + sum_ij beta_ij KL(q_i || Omega_ij q_j)          (eq 51)
    KL(q_i || p_i) = 1/2 [ |mu_i|^2 / sigma_p^2 + tr Sigma_i / sigma_p^2 - K
                           - log(|Sigma_i| / sigma_p^{2K}) ]                        (eq 52)

A global g in SO(n) acts through rho = H x fund: mu_i -> rho(g) mu_i,
Sigma_i -> rho(g) Sigma_i rho(g)^T, phi_i -> g phi_i g^T (so Omega_ij -> rho(g) Omega_ij rho(g)^{-1},
the covariant transformation B.2 names).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from attngeom.geometry_proofs.gauge.free_energy import GaugeSystem, sample_system
from attngeom.geometry_proofs.gauge.transport import skew_to_vector
from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import skew
from attngeom.kernels.sampling import Sampler


def vacuum_system(sampler: Sampler, tokens: int, dim: int, head_dim: int | None, kappa: float,
                  diagonal: bool = False) -> GaugeSystem:
    """A sampled system with priors N(0, sigma_p^2 I), sigma_p^2 uniform in [0.5, 2], and no
    observations (GT eq 51); sigma_p^2 is stored in ``system.extra['prior_var']``."""
    system = sample_system(sampler, tokens, dim, head_dim, kappa, diagonal, observed=False)
    prior_var = 0.5 + 1.5 * float(abs(np.tanh(sampler.spawn(9).floats(()))))
    system.prior_mu = np.zeros_like(system.mu)
    system.prior_Sigma = np.broadcast_to(prior_var * np.eye(dim), system.Sigma.shape).copy()
    system.extra["prior_var"] = prior_var
    return system


def prior_kl_eq52(mu: np.ndarray, Sigma: np.ndarray, prior_var: float) -> float:
    """GT eq (52) as printed, mu shape=[K], Sigma shape=[K, K]."""
    dim = mu.shape[0]
    logdet = np.linalg.slogdet(Sigma)[1]
    return 0.5 * (mu @ mu / prior_var + np.trace(Sigma) / prior_var - dim - (logdet - dim * np.log(prior_var)))


def gauge_transform(system: GaugeSystem, g: np.ndarray, transform_frames: bool = True) -> GaugeSystem:
    """The system after the global gauge transformation g in SO(n) (B.2); with
    ``transform_frames=False`` only the beliefs move (Omega_ij kept)."""
    rho = scipy.linalg.block_diag(*[g] * system.heads)
    frames = system.frames
    if transform_frames:
        phis = skew(system.frames, system.head_dim, get_backend("numpy"))
        frames = skew_to_vector(g @ phis @ g.T)
    return GaugeSystem(mu=system.mu @ rho.T, Sigma=rho @ system.Sigma @ rho.T, frames=frames,
                       prior_mu=system.prior_mu @ rho.T, prior_Sigma=rho @ system.prior_Sigma @ rho.T,
                       kappa=system.kappa, head_dim=system.head_dim, observations=system.observations,
                       extra=dict(system.extra))


def symmetric_phase(system: GaugeSystem, mean: np.ndarray) -> GaugeSystem:
    """The configuration of GT eq 54's premise: every mu_i = ``mean`` and every frame equal
    (Omega_ij = I); covariances, priors and temperature kept."""
    return GaugeSystem(mu=np.broadcast_to(mean, system.mu.shape).copy(), Sigma=system.Sigma,
                       frames=np.broadcast_to(system.frames[0], system.frames.shape).copy(),
                       prior_mu=system.prior_mu, prior_Sigma=system.prior_Sigma, kappa=system.kappa,
                       head_dim=system.head_dim, observations=None, extra=dict(system.extra))


def symmetric_phase_gradient(mean: np.ndarray, prior_var: float) -> np.ndarray:
    """What eqs 53-54 predict for dF_vac/dmu_i in the symmetric phase: mean / sigma_p^2 (every
    alignment term has mu_i - Omega_ij mu_j = 0), so stationarity forces mean = 0."""
    return mean / prior_var

"""The invariant curvature beside GEC's proxy: the Gaussian curvature of the learned surface

    c -> m(c) = E_eps[ mean_i Y'_i(X(c)) ] in R^64,   X(c)_i = c + eps_i,

a 2-parameter family (c in R^2 the latent centre of GEC §4), with the Fisher metric of the
GEC setting (§2.1): the outputs parametrise N(m, Sigma), so g = J^T Sigma^{-1} J with
Sigma = I (isotropic) or Sigma^{-1} = diag(p) the precisions of :mod:`proxy`
(A.5.5), and K from the Gauss equation (:func:`attngeom.kernels.curvature.immersion_curvature_from_jet`,
torch autodiff jets, float64).  The expectation over the observation noise is taken over
``NOISE_DRAWS`` fixed seeded draws of the 8 x 2 noise (std 0.20), the same for every run,
so every model is measured on the same surface definition.  Beside it the noise-free
surface X(c)_i = c: there all tokens are equal, the softmax is uniform and the ungated
output is affine in c, so GEC Thm 3.1 predicts K = 0 exactly for the ungated model (a check
on trained weights); and the Fisher-Rao square-root embedding c -> 2 sqrt(softmax(m(c)))
with the Euclidean metric (the categorical Fisher metric).  With GEC's 2-dimensional
inputs the ungated noisy surface is flat as well: sum_i alpha_i(c) (c + eps_i) W_in W_V W_O
(+ const) lies in the 2-plane im(W_in W_V W_O) + const, and a surface in a plane has K = 0.

Unlike the proxy, K is invariant under reparametrisations of c and under isometries of
the output space; it does change with the precision matrix, which changes the metric.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attngeom.geometry_proofs.gating.experiment.data import NOISE_STD, SEQUENCE_LENGTH
from attngeom.geometry_proofs.gating.experiment.model import Variant, attention_output_mean
from attngeom.geometry_proofs.gating.experiment.proxy import CONDITIONS, precision_diagonal, sqrt_embedding
from attngeom.kernels.backend import Backend
from attngeom.kernels.curvature import autodiff_jet, immersion_curvature_from_jet
from attngeom.kernels.sampling import Sampler

NOISE_DRAWS = 4
#: The seed of the fixed noise draws that define the surface (the same for every run).
SURFACE_SEED = 2026
#: Points whose metric has eigenvalue ratio below this are not immersed (K undefined).
DEGENERATE_RATIO = 1e-12
#: Centres per autodiff jet call.
CHUNK = 32


def surface_noise(draws: int = NOISE_DRAWS) -> np.ndarray:
    """The fixed noise draws of the surface, shape=[draws, 8, 2]."""
    return Sampler(SURFACE_SEED).floats((draws, SEQUENCE_LENGTH, 2), NOISE_STD)


def surface(params: dict, variant: Variant, noise, torch: Any):
    """c -> m(c) = mean_r mean_i Y'_i(c + noise_r): shape=[2] -> shape=[64]."""
    return lambda centre: attention_output_mean(params, centre + noise, variant, torch).mean(dim=0)


def gaussian_curvatures(params: dict, variant: Variant, centres, backend: Backend,
                        conditions=CONDITIONS) -> dict[str, np.ndarray]:
    """Gaussian curvature at every centre, shape=[N] each (NumPy; nan where the surface is
    not immersed): "iso" and "aniso_<cond>" on the noise-averaged surface, "sqrt" its
    square-root embedding, "noisefree" the isotropic K of the noise-free surface,
    "iso_scale" the scale |H|^2 / det g of the isotropic K (rounding level ~1e-16 of it).
    ``params`` float64 tensors, ``centres`` shape=[N, 2] on ``backend``.

    One jet of the three stacked maps c -> (m(c), 2 sqrt(softmax(m(c))), m_0(c)) in R^192
    (forward-mode cost grows with the 2 inputs, not the outputs), then the Gauss equation
    on each block with its precision."""
    torch = backend.module
    mean_map = surface(params, variant, backend.asarray(surface_noise()), torch)
    flat = surface(params, variant, backend.asarray(np.zeros((1, SEQUENCE_LENGTH, 2))), torch)

    def stacked(centre):
        value = mean_map(centre)
        return torch.cat([value, sqrt_embedding(value, torch), flat(centre)])

    # chunks keep the vmapped jets in cache (256 centres at once: 3x slower on a CPU)
    jets = [autodiff_jet(stacked, centres[start:start + CHUNK], backend)[1:]
            for start in range(0, centres.shape[0], CHUNK)]
    jac = torch.cat([j for j, _ in jets])
    hess = torch.cat([h for _, h in jets])
    dim = jac.shape[1] // 3
    blocks = {"mean": slice(0, dim), "sqrt": slice(dim, 2 * dim), "noisefree": slice(2 * dim, 3 * dim)}
    precisions = {"iso": None, **{f"aniso_{c}": backend.asarray(np.diag(precision_diagonal(c, dim)))
                                  for c in conditions}}
    block = lambda name: (jac[:, blocks[name]], hess[:, blocks[name]])
    out = {name: _screened(immersion_curvature_from_jet(*block("mean"), backend, precision), backend)
           for name, precision in precisions.items()}
    # the size of the terms that cancel in K (|H|^2 / det g): |K| / scale ~ 1e-16 is flat
    out["iso_scale"] = backend.to_numpy(immersion_curvature_from_jet(*block("mean"), backend)
                                        .gaussian_scale)
    out["sqrt"] = _screened(immersion_curvature_from_jet(*block("sqrt"), backend), backend)
    out["noisefree"] = _screened(immersion_curvature_from_jet(*block("noisefree"), backend), backend)
    return out


def _screened(curvature, backend: Backend) -> np.ndarray:
    """K, with nan where the metric is (numerically) degenerate."""
    eig = backend.to_numpy(curvature.metric_eigenvalues())
    K = backend.to_numpy(curvature.gaussian)
    ratio = eig[:, 0] / np.maximum(eig[:, -1], 1e-300)
    return np.where(ratio > DEGENERATE_RATIO, K, np.nan)

"""Gaussian KL divergences, SO(n) transport and the KL-attention kernel of GT, on any backend.

GT (Dennis, *Gauge-theoretic transformers*) replaces dot-product attention by

    K_ij    = KL(q_i || Omega_ij q_j),  Omega_ij = exp(phi_i) exp(-phi_j)     (GT eqs 3, 13)
    beta_ij = softmax_j(-K_ij / kappa)                                        (GT eqs 13, 58)
    out_i   = sum_j beta_ij Omega_ij mu_j      (the transported value means)

with Gaussian beliefs q_i = N(mu_i, Sigma_i) and frames phi_i in so(n), one head per copy
of the fundamental representation (GT eqs 36-37, 45-46: K = 5 x 20, SO(20)).

Two implementations of the same numbers:

* :func:`kl_attention_direct` -- as the paper and its public code compute it: Omega_ij is
  formed for every pair, then Omega_ij Sigma_j Omega_ij^T, its Cholesky factor and the KL:
  O(N^2 n^3) per head.
* :func:`kl_attention_structured` -- uses the gauge structure.  KL is invariant under one
  orthogonal change of frame applied to both arguments, and Omega_ij = R_i R_j^T with
  R_i = exp(phi_i), so K_ij = KL(R_i^T q_i || R_j^T q_j).  Rotate every belief once
  (O(N n^3)): nu_i = R_i^T mu_i, M_i = R_i^T (Sigma_i + mu_i mu_i^T) R_i,
  P_j = R_j^T Sigma_j^{-1} R_j.  Then

      2 K_ij = <M_i, P_j>_F - 2 nu_i . (P_j nu_j) + nu_j^T P_j nu_j
               + logdet Sigma_j - logdet Sigma_i - n,

  one matrix product of [N, n(n+1)/2 + n] by [n(n+1)/2 + n, N] per head (the Frobenius
  product of symmetric matrices over the upper triangle): O(N^2 n^2).  The
  transported values are R_i sum_j beta_ij nu_j.  For diagonal Sigma the transported
  covariance R_i R_j^T D_j R_j R_i^T is full, so the pairwise term is still an inner
  product of two symmetric n x n matrices (O(N^2 n^2)); only the Cholesky factorizations
  disappear.

All functions take a :class:`attngeom.kernels.backend.Backend` ``be`` and work unchanged on numpy,
torch and jax (cpu or cuda), in float64 or float32 (they follow the inputs' dtype).  The structured kernel is differentiable (torch
autograd / torch.func, jax transforms); on jax it has no data-dependent control flow
(``jax.jit`` applies).

Layout: beliefs per head, ``mu`` shape=[..., H, N, n], ``Sigma`` shape=[..., H, N, n, n]
(full) or shape=[..., H, N, n] (diagonal variances), ``frames`` skew matrices
shape=[..., H or 1, N, n, n] (1: one frame per token shared by all heads, as in GT §3.2
where phi in so(20) acts on all five copies).
:func:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives.split_heads` turns [..., N, K] into [..., H, N, K/H].

The kernel is layered, each module importing only modules above it in this list (all in
``attngeom.geometry_proofs.gauge.accelerated``):

* :mod:`.kl_primitives`: the backend linear algebra, the frame exponential and its Taylor
  plan, the Gaussian KL and the frames in so(n);
* :mod:`.kl_pairwise`: the structured kernel's per-token statistics as library calls and
  the pairwise operands;
* the compiled statistics :mod:`.kl_statistics_cpu` (C), :mod:`.kl_statistics_cuda` (CUDA C)
  and :mod:`.kl_statistics_triton` (Triton, and the choice between it and CUDA C);
* :mod:`.kl_structured`: the choice among those statistics (:func:`.kl_structured.rotated_statistics`)
  and the eager structured path;
* :mod:`.kl_attention_graphs`: that path replayed from CUDA graphs or through
  ``torch.compile``;
* this module: the entry points :func:`kl_attention_direct` and
  :func:`kl_attention_structured` (which dispatches to the graphs module, to
  ``torch.compile`` or to the eager path), the baseline :func:`dot_product_attention` and
  :func:`check_attention_inputs`.  The public names of the modules above stay importable
  from here.
"""

from __future__ import annotations

import numpy as np

from attngeom.geometry_proofs.gauge.accelerated.kl_pairwise import (CONGRUENCE_CHUNK_BYTES,
                                                                   diagonal_congruence, pairwise_operands,
                                                                   pairwise_product)
from attngeom.geometry_proofs.gauge.accelerated.kl_primitives import (
    _broadcast_pair, _constant, _transposed, block_diagonal, cholesky, diagonal, dtype_name, exp_plan, frame_exp,
    gaussian_kl, gaussian_kl_diagonal, matrix_exp, multihead_transport, skew, so_basis, so_dimension,
    softmax_last, solve_lower, solve_lower_right, split_heads, taylor_threshold, transport)
from attngeom.geometry_proofs.gauge.accelerated.kl_structured import (
    KLAttention, _causal_logits, full_float32_matmuls, kl_attention_eager, rotated_statistics)
from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput

#: the public names, as before the split (those defined in the modules above re-exported)
__all__ = ["CONGRUENCE_CHUNK_BYTES", "KLAttention", "block_diagonal", "check_attention_inputs", "cholesky",
           "diagonal", "diagonal_congruence", "dot_product_attention", "dtype_name", "einsum", "exp_plan",
           "frame_exp", "full_float32_matmuls", "gaussian_kl", "gaussian_kl_diagonal", "kl_attention_direct",
           "kl_attention_structured", "matrix_exp", "multihead_transport", "pairwise_operands",
           "pairwise_product", "rotated_statistics", "skew", "so_basis", "so_dimension", "softmax_last",
           "solve_lower", "solve_lower_right", "split_heads", "taylor_threshold", "transport"]

# ---------------------------------------------------------------------------------------
# the kernel


def _dense_covariance(Sigma, diagonal_sigma: bool, be: Backend):
    if not diagonal_sigma:
        return Sigma
    n = Sigma.shape[-1]
    return Sigma[..., :, None] * _constant(np.eye(n), Sigma, be)


def kl_attention_direct(mu, Sigma, frames, kappa: float, be: Backend, *,
                        diagonal_sigma: bool = False, causal: bool = False,
                        chunk: int | None = None) -> KLAttention:
    """KL attention as GT computes it (eqs 3, 13, 58): Omega_ij formed for every pair,
    O(N^2 n^3) per head.

    Parameters
    ----------
    mu : shape=[..., H, N, n]
    Sigma : shape=[..., H, N, n, n], or variances shape=[..., H, N, n] if ``diagonal_sigma``
    frames : skew matrices, shape=[..., H or 1, N, n, n]
    kappa : the temperature, > 0
    chunk : rows i processed at once (bounds the memory of the [.., chunk, N, n, n] pair
        tensors); by default about 16 MB of pairs.

    Returns
    -------
    KLAttention
    """
    Sigma = _dense_covariance(Sigma, diagonal_sigma, be)
    rotation = frame_exp(frames, be)                       # R_i = exp(phi_i)
    inverse_rotation = _transposed(rotation, be)            # exp(-phi_j) = R_j^T
    length, n = mu.shape[-2], mu.shape[-1]
    pairs_per_row = int(np.prod(mu.shape[:-2])) * length * n * n
    chunk = chunk or max(1, int(2_000_000 // max(pairs_per_row, 1)))
    rows_kl, rows_values = [], []
    for start in range(0, length, chunk):
        rows = slice(start, min(start + chunk, length))
        # Omega_ij for i in rows, all j: shape [..., h, r, N, n, n]
        omega = rotation[..., rows, None, :, :] @ inverse_rotation[..., None, :, :, :]
        transported_mu = (omega @ mu[..., None, :, :, None])[..., 0]
        transported_sigma = omega @ Sigma[..., None, :, :, :] @ _transposed(omega, be)
        query_mu = mu[..., rows, None, :]
        query_sigma = Sigma[..., rows, None, :, :]
        query_mu, transported_mu = _broadcast_pair(query_mu, transported_mu, be)
        query_sigma, transported_sigma = _broadcast_pair(query_sigma, transported_sigma, be)
        rows_kl.append(gaussian_kl(query_mu, query_sigma, transported_mu, transported_sigma, be))
        rows_values.append(transported_mu)
    kl = be.concat(rows_kl, -2)
    beta = softmax_last(_causal_logits(kl, kappa, causal, be), be)
    transported = be.concat(rows_values, -3)               # [..., H, N, N, n]
    values = be.sum(beta[..., None] * transported, -2)
    return KLAttention(kl=kl, beta=beta, values=values)


def einsum(spec: str, *operands, be: Backend):
    """``einsum`` on any backend (NumPy with ``optimize=True`` so that it reaches BLAS)."""
    if be.name == "numpy":
        return np.einsum(spec, *operands, optimize=True)
    return be.module.einsum(spec, *operands)


def kl_attention_structured(mu, Sigma, frames, kappa: float, be: Backend, *,
                            diagonal_sigma: bool = False, causal: bool = False,
                            graphs: bool = False, static_outputs: bool = False,
                            compiled: bool = False) -> KLAttention:
    """KL attention using the gauge structure: every belief rotated once into the common
    frame (O(N n^3)), all pairwise KLs from one matrix product (O(N^2 n^2)) per head.

    K_ij = KL(q_i || Omega_ij q_j) = KL(R_i^T q_i || R_j^T q_j) since Omega_ij = R_i R_j^T
    and KL is invariant under one orthogonal change of frame of both arguments, so

        2 K_ij = <M_i, P_j>_F - 2 nu_i . (P_j nu_j) + [nu_j^T P_j nu_j + logdet Sigma_j]
                 - logdet Sigma_i - n

    (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics`;
    <M_i, P_j>_F over the n(n+1)/2 entries of the upper triangle: one product of
    [N, n(n+1)/2 + n + 2] by [n(n+1)/2 + n + 2, N] per head whose operands carry the per-row
    and per-column terms and the 1/2,
    :func:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise.pairwise_operands`,
    :func:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise.pairwise_product`), beta = softmax_j(-K / kappa) (GT eqs 13,
    58), and the transported values sum_j beta_ij Omega_ij mu_j = R_i sum_j beta_ij nu_j.

    Parameters and returns as :func:`kl_attention_direct`; ``graphs=True``: on torch-cuda,
    replayed from CUDA graphs (forward only; :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention_graphs`,
    the same numbers; it returns clones of the graph's K and beta, which at N >= 2048 cost
    more than the launches saved: on an H100 graphed 6.15 against eager 6.05 ms at N = 2048,
    17.5 against 15.4 at 4096, full Sigma); elsewhere ignored (the eager kernel,
    :func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.kl_attention_eager`; JAX compiles already).
    ``static_outputs=True`` (with ``graphs=True``, opt-in): the graph's own K, beta and
    values instead of clones, overwritten by the next call that replays the same graph
    (the same shapes, settings and Taylor plan), as ``torch.compile``'s "reduce-overhead"
    mode returns its outputs; consume (or clone) them before that call.  The clones cost
    0.18 ms of 2.38 at N = 1024 on an H100 (full Sigma,
    ``tests/benchmarks/profile_gauge_kernel.py``, ``clone_ab``).
    Ignored where the kernel runs eagerly (fresh arrays).
    ``compiled=True``: on torch, everything after the frame exponentials through
    ``torch.compile`` (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention_graphs.kl_attention_compiled`;
    for CUDA: on the CPU it is slower than the eager kernel); elsewhere ignored.
    """
    if compiled and be.name == "torch":
        from attngeom.geometry_proofs.gauge.accelerated.kl_attention_graphs import kl_attention_compiled
        return kl_attention_compiled(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma, causal=causal)
    if graphs and be.name == "torch":
        from attngeom.geometry_proofs.gauge.accelerated.kl_attention_graphs import kl_attention_graphed
        return kl_attention_graphed(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma, causal=causal,
                                    clone=not static_outputs)
    return kl_attention_eager(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma, causal=causal)


def dot_product_attention(query, key, value, be: Backend, *, causal: bool = False):
    """Standard attention softmax(Q K^T / sqrt(d)) V, shape=[..., H, N, d] each -> [..., H, N, d]
    (the baseline of the benchmark)."""
    d = query.shape[-1]
    scores = (query @ _transposed(key, be)) / np.sqrt(d)
    if causal:
        scores = _causal_logits(-scores, 1.0, True, be)
    return softmax_last(scores, be) @ value


def check_attention_inputs(mu, Sigma, frames, kappa: float, *, diagonal_sigma: bool = False) -> None:
    """Raise BadInput (one line) for inputs outside the kernel's hypotheses: shapes that do
    not match, N < 1, kappa <= 0, frames that are not skew, Sigma not SPD.  NumPy arrays."""
    mu, Sigma, frames = (np.asarray(x) for x in (mu, Sigma, frames))
    if mu.ndim < 3:
        raise BadInput(f"mu must have shape [..., H, N, n]; got {mu.shape}")
    heads, length, n = mu.shape[-3:]
    if length < 1 or n < 1 or heads < 1:
        raise BadInput(f"need H, N, n >= 1; got H={heads}, N={length}, n={n}")
    if not kappa > 0:
        raise BadInput(f"the temperature kappa must be > 0; got {kappa}")
    want = mu.shape + (() if diagonal_sigma else (n,))
    if Sigma.shape != want:
        raise BadInput(f"Sigma must have shape {want}; got {Sigma.shape}")
    if frames.shape[-2:] != (n, n) or frames.shape[-3] != length or frames.shape[-4] not in (1, heads):
        raise BadInput(f"frames must have shape [..., H or 1, N, n, n] = [..., {heads}|1, {length}, {n}, {n}]; got {frames.shape}")
    if not np.allclose(frames, -np.swapaxes(frames, -1, -2), atol=1e-12):
        raise BadInput("frames must be skew-symmetric (elements of so(n))")
    if diagonal_sigma:
        if not np.all(Sigma > 0):
            raise BadInput("diagonal Sigma must have positive variances")
        return
    if not np.allclose(Sigma, np.swapaxes(Sigma, -1, -2), rtol=1e-12, atol=1e-12):
        raise BadInput("Sigma must be symmetric positive definite; it is not symmetric")
    if np.min(np.linalg.eigvalsh(Sigma)) <= 0:
        raise BadInput("Sigma must be symmetric positive definite; it has an eigenvalue <= 0")

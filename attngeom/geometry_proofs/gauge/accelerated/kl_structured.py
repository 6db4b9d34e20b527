"""The structured path of GT's KL-attention kernel (GT eqs 3, 13, 58), from beliefs and
frames to K, beta and the transported values, without CUDA graphs or ``torch.compile``
(modules below are in ``attngeom.geometry_proofs.gauge.accelerated``).

* :func:`rotated_statistics`: the per-token statistics nu_i, M_i, P_i, P_i nu_i and the
  offsets, from the first that applies of: the CUDA C or the Triton kernel
  (:mod:`.kl_statistics_triton`, which chooses between itself and :mod:`.kl_statistics_cuda`;
  full Sigma on torch-cuda), the C kernel (:mod:`.kl_statistics_cpu`; NumPy and torch's
  CPU), the batched library calls (:mod:`.kl_pairwise`);
* :func:`_structured`: those statistics, the pairwise product K_ij, beta_ij =
  softmax_j(-K_ij / kappa) (:func:`_attention_weights`) and the values
  R_i sum_j beta_ij nu_j.  It is the function JAX compiles (:func:`_compiled_structured`),
  the CUDA graphs capture and ``torch.compile`` compiles (:mod:`.kl_attention_graphs`): so
  the choice among the statistics sits here, below the graphs module, and is captured with
  the rest;
* :func:`kl_attention_eager`: :func:`.kl_attention.kl_attention_structured` without
  ``graphs`` or ``compiled`` (the eager kernel; on JAX the part after the frame
  exponentials compiled), which the graphs module falls back to;
* :class:`KLAttention`, the result of a pass.

It imports :mod:`.kl_primitives`, :mod:`.kl_pairwise` and the compiled statistics; the
graphs module and the entry points (:mod:`.kl_attention`) import it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cpu, kl_statistics_triton
from attngeom.geometry_proofs.gauge.accelerated.kl_pairwise import (_by_frame, _diagonal_statistics,
                                                                   _from_frame, _full_statistics,
                                                                   pairwise_operands, pairwise_product)
from attngeom.geometry_proofs.gauge.accelerated.kl_primitives import (_constant, _frame_spec, _traced,
                                                                     _transposed, _untracked, frame_exp,
                                                                     softmax_last)
from attngeom.kernels import softmax_cpu
from attngeom.kernels.backend import Backend


@dataclass
class KLAttention:
    """The result of one KL-attention pass (arrays of one backend).

    Attributes
    ----------
    kl : K_ij = KL(q_i || Omega_ij q_j), shape=[..., H, N, N]
    beta : softmax_j(-K_ij / kappa), shape=[..., H, N, N]
    values : sum_j beta_ij Omega_ij mu_j, shape=[..., H, N, n]
    """

    kl: Any
    beta: Any
    values: Any


def _causal_logits(kl, kappa: float, causal: bool, be: Backend):
    """-K / kappa (one pass over K: a multiplication by -1/kappa, not a negation and a
    division), with -inf above the diagonal when ``causal``."""
    logits = kl * (-1.0 / kappa)
    if causal:
        length = kl.shape[-1]
        future = _constant(np.triu(np.full((length, length), -np.inf), k=1), kl, be)
        logits = logits + future
    return logits


def rotated_statistics(mu, Sigma, frames, be: Backend, *, diagonal_sigma: bool = False,
                       rotation=None):
    """The per-token statistics of the structured kernel, O(n^3) per token and head.

    With R_i = exp(phi_i), nu_i = R_i^T mu_i, M_i = R_i^T (Sigma_i + mu_i mu_i^T) R_i and
    P_i = R_i^T Sigma_i^{-1} R_i:

    * full Sigma = L L^T (Cholesky): F^T = R^T [L | mu] gives M = F^T F and nu (its last
      column); X = [R^T; mu^T] L^{-T} (one triangular solve,
      :func:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives.solve_lower_right`) gives [P; (P nu)^T] = X X[:n]^T and mu^T Sigma^{-1} mu = |X_n|^2: two triangular
      products, one solve and two Gram products per token and head.
    * diagonal Sigma = diag(v): (R^T diag(s) R)_ab = sum_k s_k R_ka R_kb, so with the
      products R_ka R_kb over a <= b formed once per frame
      (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._pair_products` of R's columns), M - nu nu^T and P of every head sharing that frame are one product
      [2H, n] x [n, n(n+1)/2] (s = v and 1/v), already half-vectorized, and nu, P nu one
      product [2H, n] x [n, n] (rows mu and mu / v)
      (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._diagonal_statistics`).

    * ``rotation``  R_i,                                     shape=[..., H or 1, N, n, n]
    * ``nu``        nu_i,                                    shape=[..., H, N, n]
    * ``second``    M_i half-vectorized, weighted by w / 2,  shape=[..., H, N, n(n+1)/2]
    * ``precision`` P_i half-vectorized,                     shape=[..., H, N, n(n+1)/2]
    * ``precision_nu`` P_i nu_i = R_i^T Sigma_i^{-1} mu_i,   shape=[..., H, N, n]
    * ``offset``    nu_i^T P_i nu_i + logdet Sigma_i,         shape=[..., H, N]
    * ``logdet``    logdet Sigma_i,                           shape=[..., H, N]
    * ``operands``  (diagonal Sigma on NumPy and torch's CPU; full Sigma from the CUDA C
      kernel (the default) or the Triton kernel of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton`,
      torch-cuda outside autograd;
      full and diagonal Sigma from the C kernel of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cpu`,
      NumPy and torch's CPU outside autograd) the result of
      :func:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise.pairwise_operands` with offsets, built in place; ``second`` is a view of its query rows (on NumPy and from the compiled kernels
      ``precision`` and ``precision_nu`` are views of its key rows too)

    so that second_i . precision_j = <M_i, P_j>_F / 2
    (w: :func:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise._half_vectorization`).  ``rotation``: exp of the frames (as
    :func:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives._frame_spec` arranges them) when the caller has it already.
    """
    head, skew_frames = _frame_spec(frames)
    rotation = frame_exp(skew_frames, be) if rotation is None else rotation
    library = _diagonal_statistics if diagonal_sigma else _full_statistics

    def library_calls():
        return library(mu, Sigma, rotation, head, be)
    if not diagonal_sigma and kl_statistics_triton.unavailable(be, mu, Sigma, rotation) is None:
        return kl_statistics_triton.full_statistics(mu, Sigma, rotation, head, be, library_calls)
    if kl_statistics_cpu.unavailable(be, mu, Sigma, rotation) is None:
        return kl_statistics_cpu.statistics(mu, Sigma, rotation, head, be, library_calls, diagonal=diagonal_sigma)
    return library_calls()


def kl_attention_eager(mu, Sigma, frames, kappa: float, be: Backend, *,
                       diagonal_sigma: bool = False, causal: bool = False) -> KLAttention:
    """:func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured`
    with ``graphs`` and ``compiled`` off: the eager kernel (on JAX with concrete frames the
    part after the frame exponentials compiled, under an outer transformation plain traced
    code)."""
    if be.name == "jax" and not _traced(frames, be):
        # JAX: exp(phi) eagerly (frame_exp reads its norm on the host), the rest compiled
        # once per shape (jax-cpu at GT's size: 41-69 ms op by op, 15-22 ms compiled;
        # docs/gauge-attention.md)
        with full_float32_matmuls(be):
            rotation = frame_exp(_frame_spec(frames)[1], be)
            compiled = _compiled_structured(be, diagonal_sigma, causal)
            return KLAttention(*compiled(mu, Sigma, frames, rotation, kappa))
    return KLAttention(*_structured(mu, Sigma, frames, None, kappa, be, diagonal_sigma, causal))


def full_float32_matmuls(be: Backend):
    """A context in which JAX computes float32 matrix products in full float32.  Its default
    on GPUs is reduced (TF32 / bfloat16 passes): the kernel's float32 K was 7.2e-4 relative
    from float64 on an H200 that way, against 3-5e-7 on torch-cuda.  A no-op elsewhere
    (and for float64, which JAX never reduces); JAX keys its compilations on this setting."""
    if be.name != "jax":
        return contextlib.nullcontext()
    return be.library.default_matmul_precision("float32")


def _structured(mu, Sigma, frames, rotation, kappa, be: Backend, diagonal_sigma: bool, causal: bool):
    """(kl, beta, values) of :func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured`,
    given the frames' exponentials ``rotation`` or None (computed here)."""
    stats = rotated_statistics(mu, Sigma, frames, be, diagonal_sigma=diagonal_sigma, rotation=rotation)
    query, key = pairwise_operands(stats, be, offsets=True)
    kl = pairwise_product(query, key, be)
    beta = _attention_weights(kl, kappa, causal, be)
    pooled = beta @ stats["nu"]                                          # sum_j beta_ij nu_j
    head = stats["head"]       # R_i pooled_i for every head sharing R_i: one product per frame
    values = _from_frame(_by_frame(pooled, head) @ _transposed(stats["rotation"], be), head)
    return kl, beta, values


def _attention_weights(kl, kappa: float, causal: bool, be: Backend):
    """beta_ij = softmax_j(-K_ij / kappa) (GT eqs 13, 58).  Without a mask, on NumPy and on
    torch's CPU outside autograd, in one buffer: exp((min_j K_ij - K_ij) / kappa) normalized
    in place, four passes over the N x N array instead of seven and one allocation instead
    of four (the same numbers: the row minimum of K is the row maximum of the logits; on
    torch's CPU weights below e times the smallest normal number are raised to it, see
    below; where :mod:`attngeom.kernels.softmax_cpu` runs, NumPy and torch's CPU use its
    vector exp, and weights below the smallest normal number are 0).  There torch's fused
    softmax is slower (float64 at [15, 512, 512]: 48.7 against 18.4 ms CPU time); on CUDA it
    is the faster form
    (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives.softmax_last`)."""
    if causal or not (be.name == "numpy" or (_untracked(kl, be) and kl.device.type == "cpu")):
        # the mask, autograd and CUDA: softmax_last (torch.softmax on torch: fused, exact)
        return softmax_last(_causal_logits(kl, kappa, causal, be), be)
    if be.name == "numpy":
        if softmax_cpu.applies(kl):
            # glibc's vector exp: exp((K - min) (-1/kappa)) = exp((min - K) / kappa), the same
            # exponents (softmax_cpu)
            return softmax_cpu.softmax(kl, -(1.0 / kappa))
        beta = np.subtract(kl.min(-1, keepdims=True), kl)
        beta *= 1.0 / kappa
        np.exp(beta, out=beta)
        beta /= beta.sum(-1, keepdims=True)
        return beta
    if kl.device.type == "cpu" and softmax_cpu.applies(kl.detach().numpy()):
        # the same vector exp on torch's CPU tensors (a NumPy view; fresh weights): float32 at
        # GT's size 0.33 against 0.89 ms for the in-place chain below (CPU time, one thread)
        return be.module.from_numpy(softmax_cpu.softmax(kl.detach().numpy(), -(1.0 / kappa)))
    return _weights_in_place(kl, kappa, be)


def _weights_in_place(kl, kappa: float, be: Backend):
    """:func:`_attention_weights`' torch form outside autograd (torch's CPU): one buffer,
    min, subtract, scale, clamp, exp, sum and divide in place.  On CUDA the kernel uses the
    fused softmax instead; there this is the form it used before (no clamp), kept callable
    for the A/B of ``tests/benchmarks/profile_gauge_kernel.py``."""
    beta = be.module.sub(kl.amin(-1, keepdim=True), kl)
    beta.mul_(1.0 / kappa)
    if beta.device.type == "cpu":
        # exponents below 1 + log(smallest normal) raised to it: torch's CPU exp takes a slow
        # path for results that underflow or come near it (float32 at GT's size, where 98%
        # of the exponents do: 3.6 against 0.3 ms; at exactly log(tiny) still 10 ms), so
        # such a weight becomes e times the smallest normal number (3.2e-38 in float32,
        # 6e-308 in float64) instead of a subnormal or 0: far below the dtype's precision
        beta.clamp_(min=1.0 + float(np.log(be.module.finfo(beta.dtype).tiny)))
    beta.exp_()
    return beta.div_(beta.sum(-1, keepdim=True))


_COMPILED: dict[tuple, Any] = {}


def _compiled_structured(be: Backend, diagonal_sigma: bool, causal: bool):
    """``jax.jit`` of :func:`_structured` for one backend and setting (JAX caches the
    compilations per shape)."""
    key = (be.label, diagonal_sigma, causal)
    if key not in _COMPILED:
        def run(mu, Sigma, frames, rotation, kappa):
            return _structured(mu, Sigma, frames, rotation, kappa, be, diagonal_sigma, causal)
        _COMPILED[key] = be.library.jit(run)
    return _COMPILED[key]

"""The GT structured kernel replayed from CUDA graphs: ``kl_attention_structured(...,
graphs=True)`` on torch-cuda (issue 26: on an H200 the eager kernel is launch-bound,
2.6-3.6 ms whatever N <= 1024).

:func:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives.frame_exp` reads a norm bound on the host to choose its
Taylor plan (q, s), which a capture does not allow.  So a call is two graphs
(:mod:`attngeom.kernels.cuda_graphs`):

1. ``frame-powers`` (one per shape): the frames copied in, phi^2, phi^3, phi^4 and
   max ||phi^4||_1 on the device; the bound read on the host (one sync) and the plan
   chosen by :func:`~attngeom.geometry_proofs.gauge.accelerated.kl_primitives.exp_plan`, as ``frame_exp`` does;
2. ``structured`` (one per plan, shape and setting): mu and Sigma copied in; the
   Paterson-Stockmeyer evaluation with that plan
   (:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_primitives._taylor_exp`, reading graph 1's powers in place)
   and everything after it (:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_structured._structured`, the path the
   JAX backend compiles).

The operations are the eager kernel's, in the same order, so the numbers are the eager
ones (float64: equal to 1e-12, ``tests/test_gauge_attention.py``).  Forward only (inputs
that require grad run eagerly, recorded).  Other backends: the eager kernel (numpy, torch
on the cpu; JAX already compiles everything after the exponentials).

:func:`kl_attention_compiled` (``kl_attention_structured(..., compiled=True)``) splits the
call for ``torch.compile`` (:mod:`attngeom.kernels.torch_compile`; "reduce-overhead" on
CUDA: compiled and replayed from CUDA graphs): ``frame_exp`` eagerly (its host read), then
everything after it compiled, one compiled function per setting, with the Cholesky
factorization's info check deferred as in a capture (``cholesky_ex``; a failed one reruns
the eager kernel, which raises).  On the CPU it is measured slower than the eager kernel (docs/gauge-attention.md):
it is there for CUDA, where the eager kernel is launch-bound.

It imports the frame exponential's two halves from
:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives`, the structured path and the
eager kernel it falls back to
(:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_structured.kl_attention_eager`) from
:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_structured`, and the statistics' setting
(a key of the graph cache) from
:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton`; never
:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention`, which dispatches here.
"""

from __future__ import annotations

from attngeom.kernels import cuda_graphs, torch_compile

from attngeom.geometry_proofs.gauge.accelerated import kl_primitives, kl_statistics_triton, kl_structured
from attngeom.kernels.backend import Backend


def _frame_powers(frames, be: Backend):
    """(frames, phi^2, phi^3, phi^4, max ||phi^4||_1) -- the first half of ``frame_exp``
    (the frames returned so that the second graph reads graph 1's static copy in place)."""
    phi = kl_primitives._frame_spec(frames)[1]
    a2, a3, a4 = kl_primitives._powers(phi)
    return frames, a2, a3, a4, be.module.max(be.sum(be.abs(a4), -2))


def _taylor_plan(bound, frames) -> tuple[int, int]:
    """The plan (q, s) of :func:`~attngeom.geometry_proofs.gauge.accelerated.kl_primitives.frame_exp` from the device's
    max ||phi^4||_1 (one host read), as ``_spectral_bound`` and ``exp_plan`` choose it."""
    float32 = kl_primitives.dtype_name(frames) == "float32"
    tolerance = kl_primitives._UNIT_ROUNDOFF_32 if float32 else kl_primitives._UNIT_ROUNDOFF
    return kl_primitives.exp_plan(float(bound) ** 0.25, tolerance)


def _exponentials_and_structured(mu, Sigma, frames, a2, a3, a4, blocks: int, squarings: int,
                                 kappa: float, diagonal_sigma: bool, causal: bool, be: Backend):
    """exp(phi) by the plan (``blocks``, ``squarings``), then (kl, beta, values)."""
    rotation = kl_primitives._taylor_exp(kl_primitives._frame_spec(frames)[1], blocks, squarings, be,
                                         (a2, a3, a4))
    return tuple(kl_structured._structured(mu, Sigma, frames, rotation, kappa, be, diagonal_sigma, causal))


def decomposed(mu, Sigma, frames, kappa: float, be: Backend, *, diagonal_sigma: bool = False,
               causal: bool = False, clone: bool = True) -> tuple:
    """(kl, beta, values) as two :func:`attngeom.kernels.cuda_graphs.run` calls around the
    host read of the bound (on a backend without graphs: the same two functions called
    directly, which is how the CPU tests check the split against the eager kernel)."""
    frames, a2, a3, a4, bound = cuda_graphs.run(_frame_powers, (frames,), be, key="gt-frame-powers",
                                                clone=False)
    blocks, squarings = _taylor_plan(bound, frames)
    return cuda_graphs.run(_exponentials_and_structured,
                           (mu, Sigma, frames, a2, a3, a4, blocks, squarings, float(kappa),
                            bool(diagonal_sigma), bool(causal)),
                           be, key=("gt-structured",) + kl_statistics_triton.setting(), clone=clone)


def kl_attention_graphed(mu, Sigma, frames, kappa: float, be: Backend, *, diagonal_sigma: bool = False,
                         causal: bool = False, clone: bool = True) -> kl_structured.KLAttention:
    """:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured` from CUDA graphs on
    torch-cuda; the eager kernel elsewhere (counted in ``cuda_graphs.STATS["eager"]``).
    ``clone=False``: the returned arrays are the graph's own, overwritten by the next call
    with the same shapes and plan."""
    eager = not cuda_graphs.applicable(be)
    if not eager and 0 in tuple(frames.shape):
        cuda_graphs.record_fallback("empty input (frame_exp's matrix_exp path)")
        eager = True
    if eager:
        if not cuda_graphs.applicable(be):
            cuda_graphs.STATS["eager"] += 1
        return kl_structured.kl_attention_eager(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma,
                                                causal=causal)
    return kl_structured.KLAttention(*decomposed(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma,
                                                 causal=causal, clone=clone))


def kl_attention_compiled(mu, Sigma, frames, kappa: float, be: Backend, *, diagonal_sigma: bool = False,
                          causal: bool = False) -> kl_structured.KLAttention:
    """:func:`~attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured` with everything after
    the frame exponentials through ``torch.compile`` (torch; one compiled function per
    setting, key (kappa, Sigma's form, causal)); the eager kernel where that does not apply
    (recorded in ``torch_compile.STATS["fallbacks"]``).

    The exponentials stay eager on purpose: compiled too (the powers and bound, the host
    read, then the Taylor evaluation and the rest, as :func:`decomposed` splits them), the
    kernel was slower than the eager one on an H100 (eager / compiled 0.71-0.98 at N = 128
    and 1024, against 0.96-1.53 for this form; docs/gauge-attention.md, fifth GPU session)."""
    if torch_compile.unavailable(be) is not None or 0 in tuple(frames.shape):
        torch_compile.record_fallback(torch_compile.unavailable(be) or "empty input (frame_exp's matrix_exp path)")
        return kl_structured.kl_attention_eager(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma,
                                                causal=causal)
    rotation = kl_primitives.frame_exp(kl_primitives._frame_spec(frames)[1], be)
    settings = (float(kappa), bool(diagonal_sigma), bool(causal))
    inner = _COMPILED_BACKENDS.setdefault(be.label, cuda_graphs.graph_backend(be))

    def structured(mu, Sigma, frames, rotation):
        return tuple(kl_structured._structured(mu, Sigma, frames, rotation, settings[0], inner, settings[1],
                                               settings[2]))
    return kl_structured.KLAttention(*torch_compile.run(structured, (mu, Sigma, frames, rotation), be,
                                                        key=("gt-structured", be.label) + settings))


#: the backend the compiled kernel runs with (:func:`~attngeom.kernels.cuda_graphs.graph_backend`:
#: its ``linalg.cholesky`` defers the info check while checks are deferred), one per device.
_COMPILED_BACKENDS: dict = {}

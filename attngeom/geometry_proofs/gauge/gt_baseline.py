"""GT's public code as a baseline for the KL-attention kernels (issue 26, ask 4).

GT (Dennis, *Gauge-theoretic transformers*, ``shared/seeds/002_b70b40093652efcf.txt``,
eqs 3, 13, 58; code at github.com/cdenn016/Gauge-Transformer, §4.2) computes, per head of
dimension n, in ``transformer/core/attention.py`` (``compute_attention_weights``, called
by ``IrrepMultiHeadAttention.forward`` once per head with ``compute_transport_operators``'s
cached Omega):

    K_ij    = KL(N(mu_i, Sigma_i + eps I) || N(Omega_ij mu_j, Omega_ij Sigma_j Omega_ij^T + eps I)),
    beta_ij = max(softmax_j(-clamp(K_ij, 0, max(100, 5 n)) / (kappa sqrt(n))), 1e-8),

with Omega_ij = exp(phi_i . G) exp(-phi_j . G) (float64 ``matrix_exp``, one Newton-Schulz
step), eps = 1e-6 (their ``_compute_kl_matrix_torch``; it also adds eps to the Cholesky
diagonals inside the log-determinants) and phi_i the so(n) coordinates of the frame in
their basis G (``math_utils.generators.generate_soN_generators``).  Their *diagonal mode*
(``diagonal_covariance=True``, the configuration GT trains with, App. A) replaces the
transported covariance Omega_ij D_j Omega_ij^T by its diagonal,
diag(Omega D Omega^T)_k = sum_l Omega_kl^2 d_l, and uses the diagonal-Gaussian KL.  That is
not KL(q_i || Omega_ij q_j): the exact KL (ours, :func:`kl_attention_structured` with
``diagonal_sigma=True``) transports the full covariance.

:func:`run_gt_baseline` imports their code (:mod:`.gt_code`; never copied into attngeom),
feeds it the benchmark's seeded inputs (:func:`sample_inputs`) converted to their layout
(mu [B, N, n] per head, Sigma [B, N, n, n] or variances [B, N, n], phi [B, N, n(n-1)/2]),
times their weights and our structured kernel (float64, one thread) and reports

* ``full``: beta agreement with our kernel at the same temperature kappa sqrt(n), on our
  inputs as given and with their regularizer applied to them (Sigma + eps I, which also
  covers the transported side: Omega (Sigma + eps I) Omega^T = Omega Sigma Omega^T + eps I);
* ``diagonal``: their KL against the KL of N(mu_i, D_i) || N(Omega mu_j, diag(Omega D_j Omega^T))
  recomputed here (:func:`diagonal_transport_kl`: the check that their mode keeps only the
  diagonal) and against the exact KL, the relative KL error and the beta difference.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, replace

import numpy as np

from attngeom.geometry_proofs.gauge.attention_benchmark import (BenchmarkConfig, MEMORY_SHARE,
                                                                 _median_seconds, physical_memory_bytes,
                                                                 sample_inputs)
from attngeom.core.errors import BadInput

#: GT's regularizer (``eps = 1e-6`` in their ``_compute_kl_matrix_torch`` and
#: ``_compute_kl_matrix_diagonal``) added to both covariances of the full-Sigma KL.
GT_REGULARIZER = 1e-6

#: their ``epsilon`` (``compute_attention_weights``'s default): beta is clamped below at it.
GT_BETA_FLOOR = 1e-8


def gt_kl_ceiling(n: int) -> float:
    """Their clamp of K_ij from above, ``max(100, 5 n)`` (``kl_ceil`` in attention.py)."""
    return max(100.0, 5.0 * n)


def gt_temperature(kappa: float, n: int) -> float:
    """Our temperature for the same beta as theirs: their logits are -K / (kappa sqrt(n))."""
    return kappa * math.sqrt(n)


def frame_coordinates(frames: np.ndarray, generators: np.ndarray) -> tuple[np.ndarray, float]:
    """Coordinates c of skew matrices in a basis G (sum_a c_a G_a = frames) by least
    squares, and the largest reconstruction error; frames [..., n, n], G [g, n, n]."""
    g, n = generators.shape[0], generators.shape[-1]
    flat = frames.reshape(-1, n * n).T
    coords, *_ = np.linalg.lstsq(generators.reshape(g, n * n).T, flat, rcond=None)
    residual = float(np.max(np.abs(generators.reshape(g, n * n).T @ coords - flat), initial=0.0))
    return coords.T.reshape(frames.shape[:-2] + (g,)), residual


def gt_layout(inputs: dict, n: int, generators: np.ndarray) -> dict:
    """Our seeded inputs in GT's per-head layout: mu [H][B, N, n], Sigma [H][B, N, n, n] or
    variances [H][B, N, n] (our [B, H, N, ...] split along H), phi [B, N, n(n-1)/2] (one
    frame per token shared by the heads, their SO(N) mode) in the basis ``generators``."""
    from attngeom.geometry_proofs.gauge.accelerated.kl_attention import skew
    from attngeom.kernels.backend import get_backend
    frames = skew(inputs["frame_coordinates"], n, get_backend("numpy"))[:, 0]
    phi, residual = frame_coordinates(frames, generators)
    heads = inputs["mu"].shape[1]
    return {"mu": [inputs["mu"][:, h] for h in range(heads)],
            "Sigma": [inputs["Sigma"][:, h] for h in range(heads)],
            "phi": phi, "basis_residual": residual}


def gt_weights(code, layout: dict, generators, kappa: float, diagonal: bool) -> tuple:
    """Their weights and KLs (numpy [B, H, N, N]) the way ``IrrepMultiHeadAttention.forward``
    gets them: per head ``compute_transport_operators`` then ``compute_attention_weights``
    (their vectorized PyTorch path, ``use_numba=False``: what runs on CUDA, and on the CPU
    without Numba), float64."""
    import torch
    attention = code.attention
    phi = torch.as_tensor(layout["phi"], dtype=torch.float64)
    gen = torch.as_tensor(generators, dtype=torch.float64)
    betas, kls = [], []
    for mu, sigma in zip(layout["mu"], layout["Sigma"]):
        transport = attention.compute_transport_operators(phi, gen)
        beta, kl = attention.compute_attention_weights(
            torch.as_tensor(mu), torch.as_tensor(sigma), phi, gen, kappa, GT_BETA_FLOOR, None,
            use_numba=False, return_kl=True, diagonal_covariance=diagonal, cached_transport=transport)
        betas.append(beta.numpy())
        kls.append(kl.numpy())
    return np.stack(betas, 1), np.stack(kls, 1)


def gt_forward_weights(code, inputs: dict, kappa: float) -> np.ndarray:
    """Their attention weights [B, H, N, N] from ``IrrepMultiHeadAttention.forward`` itself
    (SO(N) mode, H copies of the fundamental, full Sigma block-diagonal), to check that
    :func:`gt_weights` follows it.  Prints of theirs are suppressed."""
    import contextlib
    import io
    import torch
    mu, sigma = inputs["mu"], inputs["Sigma"]
    b, heads, t, n = mu.shape
    generators = np.asarray(code.generate_son_generators(n), dtype=np.float64)
    layout = gt_layout(inputs, n, generators)
    block = np.zeros((len(generators), heads * n, heads * n))
    full = np.zeros((b, t, heads * n, heads * n))
    for h in range(heads):
        block[:, h * n:(h + 1) * n, h * n:(h + 1) * n] = generators
        full[:, :, h * n:(h + 1) * n, h * n:(h + 1) * n] = sigma[:, h]
    with contextlib.redirect_stdout(io.StringIO()):
        layer = code.attention.IrrepMultiHeadAttention(
            heads * n, [("fund", heads, n)], kappa, gauge_group="SON", gauge_dim=n,
            global_generators=torch.as_tensor(block))
        _, _, beta, _ = layer.forward(torch.as_tensor(np.swapaxes(mu, 1, 2).reshape(b, t, heads * n)),
                                      torch.as_tensor(full), torch.as_tensor(layout["phi"]),
                                      torch.as_tensor(block), return_attention=True)
    return beta.detach().numpy()


def diagonal_transport_kl(inputs: dict, n: int) -> np.ndarray:
    """KL(N(mu_i, D_i) || N(Omega_ij mu_j, diag(Omega_ij D_j Omega_ij^T))) for all pairs,
    [B, H, N, N]: the KL with the transported covariance cut to its diagonal,
    diag(Omega D Omega^T)_k = sum_l Omega_kl^2 d_l (what their diagonal mode computes,
    recomputed here with our exponentials and our diagonal Gaussian KL)."""
    from attngeom.kernels.backend import get_backend
    from attngeom.geometry_proofs.gauge.accelerated.kl_attention import frame_exp, gaussian_kl_diagonal, skew
    be = get_backend("numpy")
    rotation = frame_exp(skew(inputs["frame_coordinates"], n, be), be)[:, 0]     # [B, N, n, n]
    mu, var = inputs["mu"], inputs["Sigma"]
    out = np.empty(mu.shape[:3] + (mu.shape[2],))
    for b in range(mu.shape[0]):
        omega = np.einsum("ikl,jml->ijkm", rotation[b], rotation[b])             # R_i R_j^T
        for h in range(mu.shape[1]):
            moved = np.einsum("ijkl,jl->ijk", omega, mu[b, h])
            cut = np.einsum("ijkl,jl->ijk", omega * omega, var[b, h])
            out[b, h] = gaussian_kl_diagonal(mu[b, h][:, None], var[b, h][:, None], moved, cut, be)
    return out


def gt_planned_bytes(config: BenchmarkConfig) -> int:
    """An upper estimate of their full-Sigma path's memory for one head: about 12 pair
    arrays [B, N, N, n, n] alive at once (Omega, the transported and expanded covariances,
    their regularized copies, the Cholesky factor and two triangular solves)."""
    n = config.head_dim
    return 8 * 12 * config.batch * config.tokens ** 2 * n * n


def _ours(config: BenchmarkConfig, inputs: dict, regularizer: float = 0.0):
    from attngeom.kernels.backend import get_backend
    from attngeom.geometry_proofs.gauge.accelerated.kl_attention import kl_attention_structured, skew
    be = get_backend(config.backend, config.device)
    n = config.head_dim
    sigma = inputs["Sigma"] + (regularizer if config.diagonal else regularizer * np.eye(n))
    mu, sigma, coords = (be.asarray(x) for x in (inputs["mu"], sigma, inputs["frame_coordinates"]))
    frames = skew(coords, n, be)

    def run():
        return kl_attention_structured(mu, sigma, frames, gt_temperature(config.kappa, n), be,
                                       diagonal_sigma=config.diagonal)
    result = run()
    return run, be, be.to_numpy(result.beta), be.to_numpy(result.kl)


def _compare(config: BenchmarkConfig, code, repeats: int) -> dict:
    """One Sigma mode: their weights (timed, ``repeats`` runs), ours (median of
    ``config.repeats`` after a warm-up), the agreement."""
    n = config.head_dim
    inputs = sample_inputs(config)
    generators = np.asarray(code.generate_son_generators(n), dtype=np.float64)
    layout = gt_layout(inputs, n, generators)
    times, cpu_times = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        beta_gt, kl_gt = gt_weights(code, layout, generators, config.kappa, config.diagonal)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    run, be, beta, kl = _ours(config, inputs)
    ours = _median_seconds(run, config.repeats, lambda result: be.synchronize(result.values))
    below = kl_gt < gt_kl_ceiling(n)                   # pairs their clamp left alone
    gt_s, gt_cpu_s = float(np.median(times)), float(np.median(cpu_times))
    report = {"gt_s": gt_s, "gt_cpu_s": gt_cpu_s, "gt_repeats": repeats, "ours_s": ours["median_s"],
              "ours_cpu_s": ours["cpu_median_s"], "gt_over_ours": gt_s / ours["median_s"],
              "gt_over_ours_cpu_time": gt_cpu_s / ours["cpu_median_s"],
              "basis_residual": layout["basis_residual"],
              "pairs": int(kl_gt.size), "pairs_below_gt_ceiling": int(below.sum()),
              "beta_max_abs_diff": float(np.max(np.abs(beta_gt - beta)))}
    if not config.diagonal:
        _, _, beta_reg, kl_reg = _ours(config, inputs, GT_REGULARIZER)
        report["beta_max_abs_diff_regularized"] = float(np.max(np.abs(beta_gt - beta_reg)))
        report["kl_max_abs_diff_regularized"] = float(np.max(np.abs(kl_gt - kl_reg)[below]))
        report["kl_max_abs_diff"] = float(np.max(np.abs(kl_gt - kl)[below]))
        return report
    cut = diagonal_transport_kl(inputs, n)
    off = below & ~np.eye(config.tokens, dtype=bool)   # i = j: K = 0 in both
    report["kl_max_abs_diff_vs_diagonal_cut"] = float(np.max(np.abs(kl_gt - cut)[below]))
    report["kl_max_abs_diff_diagonal_cut_vs_exact"] = float(np.max(np.abs(cut - kl)[below]))
    report["kl_max_relative_error"] = float(np.max(np.abs(kl_gt - kl)[off] / kl[off]))
    every = ~np.eye(config.tokens, dtype=bool)         # their clamp aside: the cut KL, all pairs
    report["kl_max_relative_error_all_pairs"] = float(np.max(np.abs(cut - kl)[..., every] / kl[..., every]))
    return report


def validate_gt_config(config: BenchmarkConfig, repeats: int = 1) -> None:
    """BadInput (one line) for a setting the baseline does not run: not float64 on the
    cpu, no run, or a size their O(B N^2 n^2) full-Sigma path cannot hold."""
    config.validate()
    if config.dtype != "float64" or config.device != "cpu":
        raise BadInput("the GT baseline runs in float64 on the cpu (their code as timed here)")
    if repeats < 1:
        raise BadInput(f"the GT baseline needs at least 1 run; got {repeats}")
    limit = MEMORY_SHARE * physical_memory_bytes()
    if gt_planned_bytes(config) > limit:
        raise BadInput(f"GT's code at N = {config.tokens}, batch {config.batch} would need about "
                       f"{gt_planned_bytes(config) / 2**30:,.1f} GiB (limit {limit / 2**30:,.1f} GiB); "
                       f"choose a smaller --n or --batch for --gt-code")


def run_gt_baseline(config: BenchmarkConfig, repeats: int = 1) -> dict:
    """GT's code against our structured kernel at ``config`` (GT's size by default), full
    and diagonal Sigma, float64, one thread.  Raises GTCodeUnavailable (one line) without
    their code, BadInput (one line) as :func:`validate_gt_config`."""
    from attngeom.geometry_proofs.gauge.gt_code import load_gt_code
    from attngeom.kernels import threads
    validate_gt_config(config, repeats)
    code = load_gt_code()                          # imports torch (their code needs it)
    with threads.restoring():                      # torch's threads too, on the way out
        threads.apply(threads.ThreadPlan(1, "gt-baseline"))
        modes = {name: _compare(replace(config, diagonal=diagonal), code, repeats)
                 for name, diagonal in (("full", False), ("diagonal", True))}
    return {"config": asdict(config), "gt_source": code.source, "gt_commit": code.commit,
            "notes": code.notes, "threads": 1, "kappa_gt": config.kappa,
            "kappa_ours": gt_temperature(config.kappa, config.head_dim), **modes}


def format_gt_report(report: dict) -> str:
    """The baseline as a few lines of text."""
    lines = [f"GT's code ({report['gt_commit'] or 'commit unknown'}, {report['gt_source']}), "
             f"float64, one thread, kappa {report['kappa_gt']} (ours {report['kappa_ours']:.4g})"]
    lines += [f"  note: {note}" for note in report["notes"]]
    for mode in ("full", "diagonal"):
        r = report[mode]
        lines.append(f"  {mode:<8} GT {r['gt_s'] * 1e3:10.1f} ms  ours {r['ours_s'] * 1e3:8.2f} ms  "
                     f"GT/ours {r['gt_over_ours']:7.1f}x (CPU time {r['gt_over_ours_cpu_time']:.1f}x)  "
                     f"max |beta diff| {r['beta_max_abs_diff']:.2e}")
    full, diag = report["full"], report["diagonal"]
    lines.append(f"  full Sigma + {GT_REGULARIZER:g} I (their regularizer): max |beta diff| "
                 f"{full['beta_max_abs_diff_regularized']:.2e}, max |K diff| "
                 f"{full['kl_max_abs_diff_regularized']:.2e}")
    lines.append(f"  diagonal mode = KL with diag(Omega D Omega^T): max |K diff| "
                 f"{diag['kl_max_abs_diff_vs_diagonal_cut']:.2e}; against the exact KL: max relative "
                 f"error {diag['kl_max_relative_error']:.1%} (pairs below their clamp), "
                 f"{diag['kl_max_relative_error_all_pairs']:.1%} (all pairs)")
    return "\n".join(lines)


def gt_baseline_section(config: BenchmarkConfig) -> tuple[dict, str]:
    """(JSON, text) of the baseline for ``attngeom benchmark gauge-attention --gt-code``:
    the report of :func:`run_gt_baseline`, or ``{"available": False, "reason": ...}`` and
    one line when GT's code is not available here."""
    from attngeom.geometry_proofs.gauge.gt_code import GTCodeUnavailable
    try:
        report = run_gt_baseline(replace(config, diagonal=False))
    except GTCodeUnavailable as missing:
        return {"available": False, "reason": str(missing)}, f"GT baseline: not available ({missing})"
    return {"available": True, **report}, format_gt_report(report)

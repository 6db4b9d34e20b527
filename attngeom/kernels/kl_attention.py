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
where phi in so(20) acts on all five copies).  :func:`split_heads` turns [..., N, K] into
[..., H, N, K/H].
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from attngeom.kernels import kl_statistics_cpu, kl_statistics_triton, softmax_cpu
from attngeom.kernels.backend import Backend
from attngeom.kernels.errors import BadInput

# ---------------------------------------------------------------------------------------
# the few linear-algebra operations whose spelling differs between numpy, torch and jax


def _swap(x):
    """Transpose of the last two axes (``swapaxes`` is spelled alike on all three)."""
    return x.swapaxes(-1, -2)


def _transposed(x, be: Backend):
    """x^T over the last two axes, as an operand of ``@``: NumPy's stacked matmul falls back
    from BLAS to a slow loop on a transposed view (measured 400x slower at [2, 48, 420]),
    so there the transpose is copied."""
    if be.name == "numpy":
        return np.ascontiguousarray(x.swapaxes(-1, -2))
    return x.swapaxes(-1, -2)


def matrix_exp(a, be: Backend):
    """exp(a) for a batch of square matrices, shape=[..., n, n] (the library's own).  On
    numpy the batch is looped: SciPy's batched ``expm`` measured ~20 ms per call against
    ~15 us per 4 x 4 matrix."""
    if be.name == "torch":
        return be.module.linalg.matrix_exp(a.contiguous())
    if be.name == "jax":
        return be.library.scipy.linalg.expm(a)
    import scipy.linalg
    a = np.asarray(a)
    if a.ndim == 2:
        return scipy.linalg.expm(a)
    flat = a.reshape(-1, *a.shape[-2:])
    return np.stack([scipy.linalg.expm(m) for m in flat]).reshape(a.shape) if len(flat) else a


#: the unit roundoff of float64, the truncation tolerance of :func:`frame_exp`.
_UNIT_ROUNDOFF = 2.0 ** -53

#: Paterson-Stockmeyer with the powers I, a, a^2, a^3 and a^4: a Taylor polynomial of degree
#: 4q costs 3 + (q - 1) products.  :func:`frame_exp` tries q = 2 .. 8 (degree 8 .. 32).
_BLOCK = 4
_BLOCK_COUNTS = tuple(range(2, 9))


def _factorial(k: int) -> float:
    return float(np.prod(np.arange(1, k + 1, dtype=float)))


def taylor_threshold(degree: int, tolerance: float = _UNIT_ROUNDOFF) -> float:
    """The largest theta such that the Taylor remainder of exp of degree ``degree`` obeys

        sum_{k > m} theta^k / k!  <=  theta^{m+1} / (m+1)! / (1 - theta / (m+2))  <=  tolerance,

    found by bisection: for ||a|| <= theta (any sub-multiplicative norm) the polynomial is
    exp(a) to ``tolerance`` relative to ||exp(a)|| = 1 (a skew).  E.g. 0.825 at degree 16."""
    low, high = 0.0, float(degree + 1)
    for _ in range(200):
        theta = 0.5 * (low + high)
        remainder = theta ** (degree + 1) / _factorial(degree + 1) / (1.0 - theta / (degree + 2))
        low, high = (theta, high) if remainder <= tolerance else (low, theta)
    return low


#: the unit roundoff of float32: frame_exp's truncation tolerance in float32 mode.
_UNIT_ROUNDOFF_32 = 2.0 ** -24

_THRESHOLDS = {tolerance: {q: taylor_threshold(_BLOCK * q, tolerance) for q in _BLOCK_COUNTS}
               for tolerance in (_UNIT_ROUNDOFF, _UNIT_ROUNDOFF_32)}


def exp_plan(norm: float, tolerance: float = _UNIT_ROUNDOFF) -> tuple[int, int]:
    """(q, s): the Taylor degree 4q and the squarings s of :func:`frame_exp` for a batch whose
    largest 2-norm bound is ``norm``, the cheapest 3 + (q - 1) + s with ||a / 2^s|| <=
    theta_{4q} (:func:`taylor_threshold` at ``tolerance``: the unit roundoff of float64, or
    of float32 for float32 frames)."""
    thresholds = _THRESHOLDS[tolerance]

    def squarings(q):
        return max(0, int(np.ceil(np.log2(norm / thresholds[q])))) if norm > thresholds[q] else 0
    return min(((q, squarings(q)) for q in _BLOCK_COUNTS), key=lambda plan: (plan[0] + plan[1], plan[0]))


def _spectral_bound(a4, be: Backend) -> float:
    """max over the batch of ||a4||_1^{1/4} >= ||a||_2 for normal a (skew a: ||a||_2^4 =
    ||a^4||_2 = rho(a^4) <= ||a^4||_1), read on the host."""
    if be.name == "torch":      # .item(), not .numpy(): the latter fails under torch.func
        return float(be.sum(be.abs(a4.detach()), -2).amax()) ** 0.25
    return float(np.max(np.sum(np.abs(be.to_numpy(a4)), axis=-2))) ** 0.25


def dtype_name(x) -> str:
    """'float32' / 'float64' for a NumPy, torch or JAX array."""
    return str(x.dtype).replace("torch.", "")


def _constant(values, like, be: Backend):
    """A NumPy constant on ``be`` in the dtype of the array ``like`` (float32 inputs stay
    float32: a float64 constant would promote them)."""
    return be.asarray(values, dtype=dtype_name(like))


def _traced(x, be: Backend) -> bool:
    """True for a JAX tracer (inside ``jit`` / ``grad`` / ``vmap``), whose values cannot be
    read on the host."""
    return be.name == "jax" and isinstance(x, be.library.core.Tracer)


def frame_exp(phi, be: Backend):
    """exp(phi) for a batch of frames phi in so(n) (skew), shape=[..., n, n], by scaling and
    squaring of a Taylor polynomial evaluated by Paterson-Stockmeyer.

    The powers a^2, a^3, a^4 of the unscaled batch come first (3 products); since phi is
    normal, ||phi||_2 <= ||phi^4||_1^{1/4}, a far tighter bound than ||phi||_1 (0.93 ..
    1.3 against 2.7 at GT's frames).  One plan (q, s) for the whole batch
    (:func:`exp_plan`): the degree-4q polynomial in a = phi / 2^s (powers rescaled by
    2^{-ks}, no products), q - 1 Horner products in a^4, s squarings; the truncation error
    is below 2^-53 relative (:func:`taylor_threshold`).  At GT's frames that is 7 products
    in a few large batched calls (torch's and SciPy's per-matrix degree selection cost
    more than the products at n = 20).  Under a JAX transformation (``jit``, ``grad``: a
    host-side norm cannot be read from a tracer) it is JAX's own ``expm``.  Not for
    non-normal matrices (the norm bound needs phi normal; use :func:`matrix_exp`).
    """
    if 0 in tuple(phi.shape) or _traced(phi, be):
        return matrix_exp(phi, be)
    tolerance = _UNIT_ROUNDOFF_32 if dtype_name(phi) == "float32" else _UNIT_ROUNDOFF
    if be.name == "jax":
        # the bound read on the host, the polynomial compiled once per plan and shape (op by
        # op, JAX's dispatch dominated: 6.8 ms of the kernel's 7.6 ms at GT's size on an H200)
        bound = float(_jax_compiled(be, "bound", _fourth_power_bound)(phi)) ** 0.25
        plan = exp_plan(bound, tolerance)
        return _jax_compiled(be, ("taylor",) + plan, _taylor_exp, plan)(phi)
    a2, a3, a4 = _powers(phi)
    return _taylor_exp(phi, *exp_plan(_spectral_bound(a4, be), tolerance), be, (a2, a3, a4))


def _powers(phi):
    a2 = phi @ phi
    return a2, a2 @ phi, a2 @ a2


def _fourth_power_bound(phi, be: Backend):
    """max over the batch of ||phi^4||_1 (on the device; :func:`_spectral_bound` reads it)."""
    a4 = _powers(phi)[2]
    return be.module.max(be.sum(be.abs(a4), -2))


def _taylor_exp(phi, blocks: int, squarings: int, be: Backend, powers=None):
    """The Paterson-Stockmeyer evaluation of :func:`frame_exp` for the plan (q, s) =
    (``blocks``, ``squarings``), given phi^2, phi^3, phi^4 or computing them."""
    a2, a3, a4 = powers if powers is not None else _powers(phi)
    scale = 0.5 ** squarings
    n = phi.shape[-1]
    stacked = be.module.stack([_broadcast_pair(a2, _constant(np.eye(n), phi, be), be)[1],
                               phi * scale, a2 * scale ** 2, a3 * scale ** 3])
    a4 = a4 * scale ** 4
    degree = _BLOCK * blocks
    coefficients = np.array([[1.0 / _factorial(_BLOCK * j + r) for r in range(_BLOCK)]
                             for j in range(blocks)])
    block = be.module.tensordot(_constant(coefficients, phi, be), stacked, 1)   # [q, ..., n, n]
    result = block[blocks - 1] + a4 * (1.0 / _factorial(degree))
    for j in range(blocks - 2, -1, -1):
        result = block[j] + a4 @ result
    for _ in range(squarings):
        result = result @ result
    return result


_JAX_COMPILED: dict[tuple, Any] = {}


def _jax_compiled(be: Backend, name, function, arguments: tuple = ()):
    """``jax.jit`` of ``function(x, *arguments, be)`` for one backend (JAX caches the
    compilations per shape and dtype)."""
    key = (be.label, name)
    if key not in _JAX_COMPILED:
        _JAX_COMPILED[key] = be.library.jit(lambda x: function(x, *arguments, be))
    return _JAX_COMPILED[key]


def cholesky(a, be: Backend):
    """Lower Cholesky factor L (a = L L^T), shape=[..., n, n]."""
    return be.module.linalg.cholesky(a)


def solve_lower(lower, b, be: Backend):
    """L^{-1} b for lower-triangular L, shape=[..., n, n] and [..., n, m]."""
    if be.name == "torch":
        return be.module.linalg.solve_triangular(lower, b, upper=False)
    if be.name == "jax":
        return be.library.lax.linalg.triangular_solve(lower, b, left_side=True, lower=True)
    return _forward_substitution(lower, np.broadcast_to(b, np.broadcast_shapes(lower.shape[:-1], b.shape[:-1]) + b.shape[-1:]))


def _forward_substitution(lower: np.ndarray, b: np.ndarray) -> np.ndarray:
    """L^{-1} b by forward substitution, vectorized over the batch (n steps of array
    operations): NumPy has no batched triangular solve, and its batched LU ``solve``
    costs one LAPACK call per matrix (measured 1.6x slower at 1920 matrices of 20 x 20)."""
    n = lower.shape[-1]
    out = np.empty(b.shape, dtype=np.result_type(lower, b))
    for i in range(n):
        row = b[..., i, :] - np.einsum("...k,...kj->...j", lower[..., i, :i], out[..., :i, :]) if i else b[..., 0, :]
        out[..., i, :] = row / lower[..., i, i, None]
    return out


def diagonal(a, be: Backend):
    """The diagonals of a batch of matrices, shape=[..., n, n] -> [..., n]."""
    if be.name == "torch":
        return be.module.diagonal(a, dim1=-2, dim2=-1)
    return be.module.diagonal(a, axis1=-2, axis2=-1)


def softmax_last(x, be: Backend):
    """softmax over the last axis, stabilized by the row maximum (-inf entries give 0).

    On torch's CPU ``torch.softmax``: the same function, exact (no clamp, -inf gives exactly
    0, autograd's own exact backward), one fused kernel.  ``exp(x - max)`` by ``torch.exp``
    takes a slow path where results underflow or come near it (below log(smallest normal):
    98% of GT's float32 exponents; in float64 below -708), and the backward multiplies by the
    subnormal weights: at GT's size, float32, diagonal Sigma, this softmax took 3.8 ms
    forward, 5.5 forward + backward and 2.8 with the causal mask, against 0.7, 1.1 and 0.8
    fused (CPU time, docs/gauge-attention.md, third pass).  Near underflow the fused kernel
    slows about 2x (0.33 to 0.72 ms on [1920, 128] float32), torch.exp 20-30x (0.5 to 11-17
    ms).  The mask-free kernel outside autograd
    clamps in place instead (:func:`_attention_weights`).

    On torch's CUDA ``torch.softmax`` too: one fused kernel (a read and a write of the [N, N]
    rows) where the formula below is five passes (max, subtract, exp, sum, divide: at N =
    1024 each ~50-90 us on an H100, about a fifth of the GT kernel's graphed time there;
    timed in the fifth GPU session, on the kernel's K in one process: 0.044 against 0.078
    ms at N = 128, 0.287 against 0.476 ms at N = 1024, docs/gauge-attention.md).  NumPy and JAX keep the
    formula (XLA fuses it); NumPy with glibc's vector exp where it runs
    (:mod:`attngeom.kernels.softmax_cpu`: NumPy's float64 exp is scalar without AVX-512)."""
    if be.name == "torch":
        return be.module.softmax(x, dim=-1)
    if be.name == "numpy" and softmax_cpu.applies(x):       # a vectorized exp
        return softmax_cpu.softmax(x, 1.0)
    peak = be.module.max(x, axis=-1, keepdims=True)
    weights = be.module.exp(x - peak)
    return weights / be.sum(weights, -1)[..., None]


def _logdet_from_cholesky(lower, be: Backend):
    return 2.0 * be.sum(be.module.log(diagonal(lower, be)), -1)


# ---------------------------------------------------------------------------------------
# Gaussian KL divergence (GT App. C.1)


def gaussian_kl(mu_q, Sigma_q, mu_p, Sigma_p, be: Backend):
    """KL(N(mu_q, Sigma_q) || N(mu_p, Sigma_p)), batched (GT App. C.1):

        KL = 1/2 [ tr(Sigma_p^{-1} Sigma_q) + (mu_p - mu_q)^T Sigma_p^{-1} (mu_p - mu_q)
                   - n + log det Sigma_p - log det Sigma_q ]

    computed through Cholesky factors (no inverse): with Sigma_p = L L^T,
    tr = |L^{-1} L_q|_F^2 and the Mahalanobis term is |L^{-1}(mu_p - mu_q)|^2.

    Parameters
    ----------
    mu_q, mu_p : shape=[..., n]
    Sigma_q, Sigma_p : SPD, shape=[..., n, n]

    Returns
    -------
    shape=[...]
    """
    lower_p = cholesky(Sigma_p, be)
    lower_q = cholesky(Sigma_q, be)
    n = mu_q.shape[-1]
    whitened = solve_lower(lower_p, lower_q, be)
    delta = solve_lower(lower_p, (mu_p - mu_q)[..., None], be)[..., 0]
    trace = be.sum(be.sum(whitened * whitened, -1), -1)
    mahalanobis = be.sum(delta * delta, -1)
    return 0.5 * (trace + mahalanobis - n + _logdet_from_cholesky(lower_p, be)
                  - _logdet_from_cholesky(lower_q, be))


def gaussian_kl_diagonal(mu_q, var_q, mu_p, var_p, be: Backend):
    """KL(N(mu_q, diag var_q) || N(mu_p, diag var_p)), batched (GT App. C.1, diagonal):

        KL = 1/2 sum_a [ var_q/var_p + (mu_p - mu_q)^2/var_p - 1 + log var_p - log var_q ]

    Parameters
    ----------
    mu_q, var_q, mu_p, var_p : shape=[..., n] (variances positive)

    Returns
    -------
    shape=[...]
    """
    ratio = var_q / var_p
    return 0.5 * be.sum(ratio + (mu_p - mu_q) ** 2 / var_p - 1.0 - be.module.log(ratio), -1)


# ---------------------------------------------------------------------------------------
# frames in so(n) and transport (GT eqs 3, 36-37, 45-46)


def so_dimension(n: int) -> int:
    """dim so(n) = n (n - 1) / 2 (GT §2.5.1: 190 for SO(20))."""
    return n * (n - 1) // 2


def so_basis(n: int) -> np.ndarray:
    """The standard basis G_(ab) = E_ab - E_ba (a < b) of so(n), shape=[n(n-1)/2, n, n],
    in row-major order of the pairs (a, b)."""
    rows, cols = np.triu_indices(n, k=1)
    basis = np.zeros((len(rows), n, n))
    index = np.arange(len(rows))
    basis[index, rows, cols] = 1.0
    basis[index, cols, rows] = -1.0
    return basis


def skew(coordinates, n: int, be: Backend):
    """The skew matrix phi = sum_k c_k G_k of so(n) from its coordinates in
    :func:`so_basis`, shape=[..., n(n-1)/2] -> [..., n, n]."""
    if coordinates.shape[-1] != so_dimension(n):
        raise BadInput(f"so({n}) has dimension {so_dimension(n)}; got {coordinates.shape[-1]} coordinates")
    # a gather from [c, 0] with signs (O(n^2) memory; the dense basis would be O(n^4))
    rows, cols = np.triu_indices(n, k=1)
    index = np.full((n, n), len(rows))
    index[rows, cols] = index[cols, rows] = np.arange(len(rows))
    sign = np.zeros((n, n))
    sign[rows, cols], sign[cols, rows] = 1.0, -1.0
    padded = be.concat([coordinates, 0.0 * be.sum(coordinates, -1)[..., None]], -1)
    gathered = padded[..., be.asarray(index.ravel(), dtype="int64")]
    return gathered.reshape(tuple(coordinates.shape[:-1]) + (n, n)) * _constant(sign, coordinates, be)


def transport(phi_i, phi_j, be: Backend):
    """Omega_ij = exp(phi_i) exp(-phi_j) (GT eq 3), shape=[..., n, n] from two skew
    matrices shape=[..., n, n] (broadcasting)."""
    return matrix_exp(phi_i, be) @ matrix_exp(-phi_j, be)


def block_diagonal(blocks, be: Backend):
    """diag(B_1, ..., B_H) from blocks shape=[..., H, n, n] -> [..., H n, H n]: the
    representation 5 x fund of GT eqs 36-37, 46."""
    heads, n = blocks.shape[-3], blocks.shape[-1]
    eye = _constant(np.eye(heads), blocks, be)
    # out[..., h, a, g, b] = delta_hg blocks[..., h, a, b]
    out = eye[:, None, :, None] * blocks[..., :, :, None, :]
    return out.reshape(tuple(blocks.shape[:-3]) + (heads * n, heads * n))


def multihead_transport(phi_i, phi_j, be: Backend):
    """The block-diagonal transport of GT eqs 45-46: Omega_ij = diag_h exp(phi_i^h) exp(-phi_j^h),
    frames shape=[..., H, n, n] -> shape=[..., H n, H n]."""
    return block_diagonal(transport(phi_i, phi_j, be), be)


def split_heads(x, heads: int):
    """[..., N, K] -> [..., H, N, K/H]: the H copies of the fundamental representation
    (GT eq 37) as heads; BadInput unless H divides K."""
    *lead, length, dim = x.shape
    if dim % heads:
        raise BadInput(f"K = {dim} is not a multiple of the number of heads {heads}")
    return _move_heads(x.reshape(tuple(lead) + (length, heads, dim // heads)))


def _move_heads(x):
    # [..., N, H, n] -> [..., H, N, n]
    return x.swapaxes(-2, -3)


# ---------------------------------------------------------------------------------------
# the kernel


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


def _broadcast_pair(a, b, be: Backend):
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if be.name == "torch":
        return a.expand(shape), b.expand(shape)
    return be.module.broadcast_to(a, shape), be.module.broadcast_to(b, shape)


def einsum(spec: str, *operands, be: Backend):
    """``einsum`` on any backend (NumPy with ``optimize=True`` so that it reaches BLAS)."""
    if be.name == "numpy":
        return np.einsum(spec, *operands, optimize=True)
    return be.module.einsum(spec, *operands)


def _frame_spec(frames) -> tuple[str, Any]:
    """The einsum letter of the head axis of the frames ('' when one frame per token is
    shared by all heads) and the frames with that axis dropped in the shared case."""
    if frames.shape[-4] == 1:
        return "", frames[..., 0, :, :, :]
    return "h", frames


def _flatten_matrices(a):
    return a.reshape(tuple(a.shape[:-2]) + (a.shape[-1] * a.shape[-2],))


def _half_vectorization(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The flat indices a n + b of the upper triangle a <= b of an n x n matrix in the order of
    :func:`_upper_triangle` (:func:`_triangle_pairs`) and the weights (1 on the diagonal, 2
    off it) with <X, Y>_F = sum_t w_t X_t Y_t for symmetric X, Y: n(n+1)/2 numbers instead
    of n^2.  The diagonal comes first, so the weights are n ones, then twos (the same for
    the order of :func:`_pairs`)."""
    rows, cols = _triangle_pairs(n)
    return rows * n + cols, np.where(rows == cols, 1.0, 2.0)


def _triangle_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (a, b), a <= b < n, of :func:`_upper_triangle`: the diagonal, then the
    strict upper triangle row by row ((0, 1), ..., (0, n-1), (1, 2), ...): one strided
    slice and n - 1 contiguous row slices of a matrix (torch: 1.0 against 1.8 ms for the n
    diagonals at [1920, 20, 20])."""
    upper = np.triu_indices(n, 1)
    return np.concatenate([np.arange(n), upper[0]]), np.concatenate([np.arange(n), upper[1]])


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (a, b), a <= b < n, of :func:`_pair_products`, diagonal by diagonal: (0, 0),
    ..., (n-1, n-1), (0, 1), ..., (n-2, n-1), ..., (0, n-1).  Diagonal d is the product of
    the slices [0, n - d) and [d, n), so pair products are n elementwise products of
    contiguous slices (row by row, one factor is broadcast: 1.3x slower on NumPy).  Each
    kernel path pairs like with like (the diagonal-Sigma products with each other, the
    full-Sigma triangles with each other); both orders start with the diagonal
    (:func:`_half_weighted`)."""
    offsets = np.concatenate([np.full(n - d, d) for d in range(n)])
    rows = np.concatenate([np.arange(n - d) for d in range(n)])
    return rows, rows + offsets


def _take_last(x, index: np.ndarray, be: Backend):
    """x[..., index] with a NumPy integer index on any backend (``np.take`` on NumPy: fancy
    indexing measured 3.1 ms against 0.8 ms at [3840, 400] -> [3840, 210])."""
    if be.name == "numpy":
        return np.take(x, index, axis=-1)
    if be.name == "torch":   # index_select: advanced indexing measured 12 ms at [1920, 400] -> 210
        return be.module.index_select(x, -1, be.asarray(index, dtype="int64"))
    return be.module.take(x, be.asarray(index, dtype="int64"), axis=-1)


def solve_lower_right(lower, b, be: Backend):
    """b L^{-T} for lower-triangular L, shape=[..., n, n] and [..., m, n]: the transpose
    of L^{-1} b^T, laid out so that its Gram matrix X X^T is a product with a transposed
    *second* operand (BLAS reads it in place; a transposed first operand costs a copy)."""
    if be.name == "torch":
        return be.module.linalg.solve_triangular(_transposed(lower, be), b, upper=True, left=False)
    if be.name == "jax":
        return be.library.lax.linalg.triangular_solve(lower, b, left_side=False, lower=True,
                                                      transpose_a=True)
    return _solve_lower_right_lapack(np.asarray(lower), np.asarray(b))


def _solve_lower_right_lapack(lower: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b L^{-T} on NumPy: LAPACK's triangular solve (``?trtrs``) once per matrix, in place.
    NumPy has no batched triangular solve; at the per-token batch of the structured kernel
    (1920 matrices 20 x 21 at GT's size) this loop measured 6.1 ms against 21 ms for the
    row-by-row forward substitution vectorized over the batch and 16 ms for the batched LU
    ``numpy.linalg.solve``.  In Fortran order the C-contiguous ``out[i]`` (b, [m, n]) is
    b^T and ``lower[i].T`` is L^T (upper): ``trans=1`` solves L Y = b^T in place, so
    ``out[i]`` becomes (L^{-1} b^T)^T = b L^{-T}."""
    import scipy.linalg.lapack
    shape = np.broadcast_shapes(lower.shape[:-2], b.shape[:-2])
    n, m = lower.shape[-1], b.shape[-2]
    dtype = np.result_type(lower, b)
    out = np.array(np.broadcast_to(b, shape + (m, n)), dtype=dtype, order="C")
    factors = np.ascontiguousarray(np.broadcast_to(lower, shape + (n, n)), dtype=dtype)
    solve = scipy.linalg.lapack.get_lapack_funcs("trtrs", (out,))
    targets = out.reshape(-1, m, n).swapaxes(-1, -2)
    for factor, target in zip(factors.reshape(-1, n, n).swapaxes(-1, -2), targets):
        result, info = solve(factor, target, lower=0, trans=1, overwrite_b=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"triangular factor is singular (?trtrs info {info})")
        if result is not target and not np.shares_memory(result, target):
            target[...] = result
    return out


def _gram_rows(x, rows: int, be: Backend):
    """x x[..., :rows, :]^T, shape=[..., m, k] -> [..., m, rows]: the Gram matrix of the
    first ``rows`` rows and their products with the others, one product."""
    return x @ _swap(x[..., :rows, :])


def _pair_products(x, be: Backend, axis: int = -1):
    """x_a x_b over the pairs a <= b of the axis ``axis`` (-1 or -2; in the order of
    :func:`_pairs`), shape=[..., n] -> [..., n(n+1)/2] (or [..., n, k] -> [..., n(n+1)/2, k]).
    For the columns of R (``axis=-2`` on R^T) these give R^T diag(s) R half-vectorized as
    s . (products) (one product)."""
    n = x.shape[axis]
    if be.name == "torch" and x.device.type != "cpu":
        return _gathered_pair_products(x, be, axis)
    x = _contiguous(x, be)       # of a transposed view: torch 5.2 against 3.1 ms at GT's size
    if be.name == "numpy" or _untracked(x, be):
        # slices into one buffer (two gathers measured 1.5x slower on NumPy; torch: 1.8-2.3
        # against 2.9-3.2 ms for slices and a concatenation at [384, 20, 20] -> 210)
        shape = list(x.shape)
        shape[axis] = n * (n + 1) // 2
        return _pair_products_into(x, _empty(tuple(shape), x, be), axis, be)
    if be.name == "torch":   # autograd: slices (torch's gathers measured 12 ms at [1920, 400] -> 210)
        return be.concat([x[_along(axis, 0, n - d)] * x[_along(axis, d, n)] for d in range(n)], axis)
    first, second = (be.asarray(i, dtype="int64") for i in _pairs(n))
    return be.module.take(x, first, axis=axis) * be.module.take(x, second, axis=axis)


def _along(axis: int, start: int, stop: int) -> tuple:
    """The index of entries start ... stop - 1 along the (negative) axis ``axis``."""
    return (Ellipsis, slice(start, stop)) + (slice(None),) * (-axis - 1)


def _pair_products_into(x, out, axis: int, be: Backend):
    """:func:`_pair_products` of x along the (negative) axis ``axis`` written into ``out``
    (NumPy, or torch outside autograd), one slice product per diagonal d = b - a: n
    products whatever the other axes, each over every entry of them (long runs in memory
    when ``axis`` is the slowest-varying one, :func:`_congruence_rows`).  Returns ``out``."""
    n, start = x.shape[axis], 0
    for d in range(n):
        be.module.multiply(x[_along(axis, 0, n - d)], x[_along(axis, d, n)],
                           out=out[_along(axis, start, start + n - d)])
        start += n - d
    return out


_PAIR_INDEX: dict[tuple, tuple] = {}


def _gathered_pair_products(x, be: Backend, axis: int = -1):
    """:func:`_pair_products` on torch's CUDA: two ``index_select`` gathers (the pairs of
    :func:`_pairs`) and one product, three kernels whatever n (the slices take n, and at
    N <= 1024 the kernel's CUDA time is launches: 74-104 a call, docs/gauge-attention.md).
    The index tensors are made once per (n, device) and kept; autograd differentiates the
    gathers.  On the CPU the slices stay (torch's gathers measured 12 ms at [1920, 400] ->
    210 there)."""
    n = x.shape[axis]
    key = (n, str(x.device))
    if key not in _PAIR_INDEX:
        _PAIR_INDEX[key] = tuple(be.module.as_tensor(i, dtype=be.module.int64, device=x.device)
                                 for i in _pairs(n))
    first, second = _PAIR_INDEX[key]
    return be.module.index_select(x, axis, first) * be.module.index_select(x, axis, second)


def _row_pair_products(x, be: Backend):
    """:func:`_pair_products` over the last axis of many short rows, [..., n] -> [..., n(n+1)/2],
    computed with the rows last (n slices of all rows at once; slices of each row's n numbers
    cost 2.1 against 1.3 ms with the following add on NumPy at GT's size, 2.1 against 1.2 on
    torch).  On NumPy and torch the result is a transposed view."""
    if be.name not in ("numpy", "torch") or (be.name == "torch" and x.device.type != "cpu"):
        return _pair_products(x, be)          # JAX, torch's CUDA: gathers over the last axis
    n = x.shape[-1]
    rows_last = _contiguous(x.reshape(-1, n).T, be)
    return _swap(_pair_products(rows_last, be, axis=-2)).reshape(tuple(x.shape[:-1]) + (n * (n + 1) // 2,))


def _contiguous(x, be: Backend):
    """x in row-major order (a copy of a strided view; JAX arrays are always)."""
    if be.name == "numpy":
        return np.ascontiguousarray(x)
    return x.contiguous() if be.name == "torch" else x


def _empty(shape: tuple, like, be: Backend):
    """An uninitialized NumPy array or torch tensor of ``like``'s dtype (and device)."""
    return like.new_empty(shape) if be.name == "torch" else np.empty(shape, dtype=like.dtype)


def _upper_triangle(x, be: Backend):
    """The entries a <= b of a batch of matrices, shape=[..., n, n] -> [..., n(n+1)/2] (in
    the order of :func:`_triangle_pairs`: the diagonal, then the rows above it)."""
    if be.name == "torch":
        n = x.shape[-1]
        return be.concat([be.module.diagonal(x, 0, -2, -1)] + [x[..., a, a + 1:] for a in range(n - 1)], -1)
    return _take_last(_flatten_matrices(x), _half_vectorization(x.shape[-1])[0], be)


def _by_frame(x, head: str):
    """[..., H, N, n] -> the rows that share a frame together: [..., N, H, n] when the
    heads share one frame per token (``head`` = ''), [..., H, N, 1, n] with a frame per
    head."""
    return x.swapaxes(-2, -3) if not head else x[..., None, :]


def _from_frame(x, head: str):
    """The inverse of :func:`_by_frame`: [..., N, H, k] or [..., H, N, 1, k] -> [..., H, N, k]."""
    return x.swapaxes(-2, -3) if not head else x[..., 0, :]


def rotated_statistics(mu, Sigma, frames, be: Backend, *, diagonal_sigma: bool = False,
                       rotation=None):
    """The per-token statistics of the structured kernel, O(n^3) per token and head.

    With R_i = exp(phi_i), nu_i = R_i^T mu_i, M_i = R_i^T (Sigma_i + mu_i mu_i^T) R_i and
    P_i = R_i^T Sigma_i^{-1} R_i:

    * full Sigma = L L^T (Cholesky): F^T = R^T [L | mu] gives M = F^T F and nu (its last
      column); X = [R^T; mu^T] L^{-T} (one triangular solve, :func:`solve_lower_right`)
      gives [P; (P nu)^T] = X X[:n]^T and mu^T Sigma^{-1} mu = |X_n|^2: two triangular
      products, one solve and two Gram products per token and head.
    * diagonal Sigma = diag(v): (R^T diag(s) R)_ab = sum_k s_k R_ka R_kb, so with the
      products R_ka R_kb over a <= b formed once per frame (:func:`_pair_products` of R's
      columns), M - nu nu^T and P of every head sharing that frame are one product
      [2H, n] x [n, n(n+1)/2] (s = v and 1/v), already half-vectorized, and nu, P nu one
      product [2H, n] x [n, n] (rows mu and mu / v) (:func:`_diagonal_statistics`).

    * ``rotation``  R_i,                                     shape=[..., H or 1, N, n, n]
    * ``nu``        nu_i,                                    shape=[..., H, N, n]
    * ``second``    M_i half-vectorized, weighted by w / 2,  shape=[..., H, N, n(n+1)/2]
    * ``precision`` P_i half-vectorized,                     shape=[..., H, N, n(n+1)/2]
    * ``precision_nu`` P_i nu_i = R_i^T Sigma_i^{-1} mu_i,   shape=[..., H, N, n]
    * ``offset``    nu_i^T P_i nu_i + logdet Sigma_i,         shape=[..., H, N]
    * ``logdet``    logdet Sigma_i,                           shape=[..., H, N]
    * ``operands``  (diagonal Sigma on NumPy and torch's CPU; full Sigma from the CUDA C
      kernel (the default) or the Triton kernel of :mod:`attngeom.kernels.kl_statistics_triton`,
      torch-cuda outside autograd;
      full and diagonal Sigma from the C kernel of :mod:`attngeom.kernels.kl_statistics_cpu`,
      NumPy and torch's CPU outside autograd) the result of :func:`pairwise_operands` with offsets, built in
      place; ``second`` is a view of its query rows (on NumPy and from the compiled kernels
      ``precision`` and ``precision_nu`` are views of its key rows too)

    so that second_i . precision_j = <M_i, P_j>_F / 2 (w: :func:`_half_vectorization`).
    ``rotation``: exp of the frames (as :func:`_frame_spec` arranges them) when the caller
    has it already.
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


def _full_statistics(mu, Sigma, rotation, head: str, be: Backend) -> dict:
    """:func:`rotated_statistics` for full Sigma as batched library calls (differentiable;
    outside autograd :mod:`attngeom.kernels.kl_statistics_triton` (CUDA C or Triton) on torch-cuda and
    :mod:`attngeom.kernels.kl_statistics_cpu` on the CPU compute the same numbers in one
    kernel)."""
    n = mu.shape[-1]
    per_head = rotation if head else rotation[..., None, :, :, :]       # [..., H or 1, N, n, n]
    lower = cholesky(Sigma, be)
    logdet = _logdet_from_cholesky(lower, be)
    turned = _broadcast_pair(lower, _transposed(per_head, be), be)[1]      # R^T per head
    factor = turned @ be.concat([lower, mu[..., None]], -1)           # F^T, [..., n, n+1]
    nu = factor[..., n]
    half = solve_lower_right(lower, be.concat([turned, mu[..., None, :]], -2), be)
    projected = _gram_rows(half, n, be)                                 # [P; (P nu)^T]
    second = _half_weighted(_upper_triangle(_gram_rows(factor, n, be), be), n, be)
    return {"rotation": rotation, "nu": nu, "second": second,
            "precision": _upper_triangle(projected[..., :n, :], be),
            "precision_nu": projected[..., n, :],
            "offset": be.sum(half[..., n, :] * half[..., n, :], -1) + logdet,  # rotation invariant
            "logdet": logdet, "head": head}


def _half_weighted(x, n: int, be: Backend):
    """x * w / 2 (:func:`_half_vectorization`'s weights, halved), x half-vectorized,
    shape=[..., n(n+1)/2]: the first n entries (the diagonal) halved, the others kept.  On the
    query side it makes query . key = K_ij, the 1/2 of 2 K_ij folded in.  In place on NumPy
    and on torch outside autograd (one pass over n columns instead of all n(n+1)/2)."""
    if be.name == "numpy" or _untracked(x, be):
        x[..., :n] *= 0.5
        return x
    return x * _constant(0.5 * _half_vectorization(n)[1], x, be)


def _grouped(rows, head: str, be: Backend):
    """The rows of the heads that share a frame stacked, in the order of ``rows``:
    [..., H, N, n] each -> [..., N, k H, n] (shared frames) or [..., H, N, k, n]."""
    stacked = be.module.stack([_by_frame(x, head) for x in rows], -3)   # [..., k, g, n]
    return stacked.reshape(tuple(stacked.shape[:-3]) + (stacked.shape[-3] * stacked.shape[-2], stacked.shape[-1]))


def _diagonal_statistics(mu, Sigma, rotation, head: str, be: Backend) -> dict:
    """:func:`rotated_statistics` for diagonal Sigma = diag(v): per frame, the pair products
    of R's columns (:func:`_pair_products`) against the rows (v, 1/v) of the g heads that
    share it give M - nu nu^T and P ([2g, n] x [n, n(n+1)/2]); the rows (mu, mu / v) against
    R give nu and P nu ([2g, n] x [n, n]).

    On NumPy both products write into one table [..., 2g, n(n+1)/2 + n + 2] laid out as the
    operands of :func:`pairwise_operands` (the first g rows the queries, the others the
    keys), finished in place (``operands``): no concatenation and two passes fewer over the
    N x n(n+1)/2 arrays; the pair products of R and of nu are formed a chunk of frames at a
    time (:func:`_congruence_rows`).  On torch's CPU outside autograd the query rows are
    written in place and the keys concatenated; elsewhere both are concatenated (the same
    numbers).
    """
    n = mu.shape[-1]
    size = n * (n + 1) // 2
    logdet = be.sum(be.module.log(Sigma), -1)
    inverse = 1.0 / Sigma
    whitened = mu * inverse                                              # Sigma^{-1} mu
    offset = be.sum(whitened * mu, -1) + logdet
    scales, vector_rows = _grouped((Sigma, inverse), head, be), _grouped((mu, whitened), head, be)
    group = scales.shape[-2] // 2
    # NumPy: into one table whose views are the operands.  Not torch: it reads such strided
    # operands slowly (the pairwise product 7.4 against 4.2 ms at GT's size)
    in_place = be.name == "numpy"
    torch_cpu = (be.name == "torch" and Sigma.device.type == "cpu"
                 and all(_untracked(x, be) for x in (mu, Sigma, rotation)))
    if in_place:
        table = np.empty(tuple(scales.shape[:-1]) + (size + n + 2,), dtype=scales.dtype)
        vectors = np.matmul(vector_rows, rotation, out=table[..., size:size + n])
        congruent = _congruence_rows(scales, rotation, table, be, nu_rows=group)[..., :size]
    else:
        congruent, vectors = diagonal_congruence(scales, rotation, be), vector_rows @ rotation
    nu, precision_nu = (_from_frame(vectors[..., k * group:(k + 1) * group, :], head) for k in (0, 1))
    covariance, precision = (_from_frame(congruent[..., k * group:(k + 1) * group, :], head) for k in (0, 1))
    stats = {"rotation": rotation, "precision": precision, "precision_nu": precision_nu,
             "offset": offset, "logdet": logdet, "head": head}
    key = None
    if in_place:
        nu = nu.copy()                     # the table's columns become -nu below
        query, key = (_from_frame(table[..., k * group:(k + 1) * group, :], head) for k in (0, 1))
    elif torch_cpu:
        # the query rows written where they go, the keys concatenated (one pass fewer than
        # concatenating both; on CUDA the concatenations launch fewer kernels).  nu too must
        # be untracked: with only mu requiring grad, add(out=) refused to run
        query = _empty(tuple(covariance.shape[:-1]) + (size + n + 2,), covariance, be)
        be.module.add(covariance, _row_pair_products(nu, be), out=query[..., :size])
    else:
        return dict(stats, nu=nu, second=_half_weighted(covariance + _row_pair_products(nu, be), n, be))
    second = _half_weighted(query[..., :size], n, be)
    query[..., size:size + n] = -nu
    query[..., size + n] = 0.5
    query[..., size + n + 1] = -0.5 * (logdet + n)
    if key is None:
        key = be.concat([precision, precision_nu, offset[..., None], 1.0 + 0.0 * offset[..., None]], -1)
    else:
        key[..., size + n] = offset
        key[..., size + n + 1] = 1.0
    return dict(stats, nu=nu, second=second, operands=(query, key))


#: bytes of pair products per chunk of frames in :func:`_congruence_rows`: the chunk's
#: products stay in the cache while the product reads them.  At GT's size (384 frames, n =
#: 20, five heads, float64: 42 kB of products a frame) three chunks of 128 frames measured
#: 5.0 ms for the statistics against 5.8 for 64 frames and 5.9-6.1 for one chunk of 384
CONGRUENCE_CHUNK_BYTES = 6 << 20


def diagonal_congruence(scales, rotation, be: Backend):
    """R^T diag(s) R half-vectorized for every row s of ``scales`` [..., rows, n] and frame R
    of ``rotation`` [..., n, n]: [..., rows, n(n+1)/2], the product of ``scales`` with the
    pair products of R's columns (:func:`_pair_products`); on NumPy laid out and chunked as
    :func:`_congruence_rows` does it, elsewhere one product over all frames."""
    if be.name != "numpy":
        return scales @ _swap(_pair_products(_transposed(rotation, be), be, axis=-2))
    n = rotation.shape[-1]
    lead = np.broadcast_shapes(scales.shape[:-2], rotation.shape[:-2])
    out = np.empty(lead + (scales.shape[-2], n * (n + 1) // 2), dtype=np.result_type(scales, rotation))
    return _congruence_rows(scales, rotation, out, be)


def _congruence_rows(scales: np.ndarray, rotation: np.ndarray, out: np.ndarray, be: Backend, *,
                     nu_rows: int = 0) -> np.ndarray:
    """out[..., :T] (T = n(n+1)/2) = R^T diag(s) R half-vectorized for every row s of
    ``scales`` and frame R of ``rotation``, plus nu nu^T half-vectorized on the first
    ``nu_rows`` = g rows, whose nu out[..., :g, T:T + n] already holds: NumPy, ``scales``
    [..., rows, n], ``rotation`` [..., n, n], ``out`` [..., rows, >= T], contiguous, their
    leading shapes broadcasting to out's.

    (R^T diag(s) R)_ab + nu_a nu_b = sum_j w_j C_aj C_bj over the n + g columns C = [R^T |
    nu_1 ... nu_g] with weights w = [s | e_h] (e_h: one for the row's own nu, zero for the
    others and for rows past g): one product of the weights [rows, n + g] with the pair
    products of C's rows ([n(n+1)/2, n + g], :func:`_pair_products_into`) per frame.  C is
    laid out [n, frames, n + g], so each of the n slice products runs over a whole chunk of
    frames in one stretch of memory, and a frame's products are a strided matrix BLAS reads
    in place.  ``CONGRUENCE_CHUNK_BYTES`` of products a chunk.  At GT's size this measured
    5.0 ms against 7.8 for the pair products of R^T frame by frame ([frames, T, n], 20 slice
    products of short runs), their product and the nu products added after (2.2 + 1.9 + 1.1
    ms).  Returns ``out``."""
    n = rotation.shape[-1]
    size = n * (n + 1) // 2
    lead, rows = out.shape[:-2], out.shape[-2]
    frames = int(np.prod(lead, dtype=np.int64))
    flat = out.reshape(frames, rows, out.shape[-1])
    assert np.shares_memory(flat, out), "out must be contiguous"
    width = n + nu_rows
    columns = np.empty((n, frames, width), dtype=out.dtype)             # C[a, frame, j]
    columns.reshape((n,) + lead + (width,))[..., :n] = np.moveaxis(rotation, -1, 0)
    if nu_rows:
        columns[..., n:] = flat[:, :nu_rows, size:size + n].transpose(2, 0, 1)
    weights = np.zeros((frames, rows, width), dtype=out.dtype)
    weights.reshape(lead + (rows, width))[..., :n] = scales
    weights[:, np.arange(nu_rows), n + np.arange(nu_rows)] = 1.0
    pieces = max(1, -(-frames * size * width * out.itemsize // CONGRUENCE_CHUNK_BYTES))
    chunk = max(1, -(-frames // pieces))                                 # balanced chunks
    pairs = np.empty((size, chunk, width), dtype=out.dtype)
    for first in range(0, frames, chunk):
        count = min(chunk, frames - first)
        block = _pair_products_into(columns[:, first:first + count], pairs[:, :count], -3, be)
        np.matmul(weights[first:first + count], block.transpose(1, 2, 0), out=flat[first:first + count, :, :size])
    return out


def pairwise_operands(stats: dict, be: Backend, *, offsets: bool = False):
    """(query, key), shape=[..., H, N, n(n+1)/2 + n] each, from :func:`rotated_statistics`:
    query_i . key_j = <M_i, P_j>_F / 2 - nu_i . (P_j nu_j), the pair-dependent part of K_ij.
    With ``offsets`` two more columns, [1/2, -(logdet Sigma_i + n) / 2] and [offset_j, 1],
    so that query_i . key_j = K_ij exactly (the per-row and per-column terms ride in the
    product instead of two more passes over the N x N array).  Views of ``operands`` when
    :func:`rotated_statistics` built them in place."""
    if "operands" in stats:
        query, key = stats["operands"]
        width = query.shape[-1] - (0 if offsets else 2)
        return query[..., :width], key[..., :width]
    query = [stats["second"], -stats["nu"]]
    key = [stats["precision"], stats["precision_nu"]]
    if offsets:
        n = stats["nu"].shape[-1]
        ones = 1.0 + 0.0 * stats["logdet"][..., None]
        query += [0.5 * ones, -0.5 * (stats["logdet"][..., None] + n)]
        key += [stats["offset"][..., None], ones]
    return be.concat(query, -1), be.concat(key, -1)


def pairwise_product(query, key, be: Backend):
    """query_i . key_j for every pair, shape=[..., N, k] each -> [..., N, N]: one batched
    matrix product (NumPy's ``matmul`` reads strided operands in place: 3.6 ms against 4.6
    for ``einsum`` at GT's size)."""
    return query @ _swap(key)


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

    (:func:`rotated_statistics`; <M_i, P_j>_F over the n(n+1)/2 entries of the upper
    triangle: one product of [N, n(n+1)/2 + n + 2] by [n(n+1)/2 + n + 2, N] per head whose
    operands carry the per-row and per-column terms and the 1/2, :func:`pairwise_operands`,
    :func:`pairwise_product`), beta = softmax_j(-K / kappa) (GT eqs 13, 58), and the
    transported values sum_j beta_ij Omega_ij mu_j = R_i sum_j beta_ij nu_j.

    Parameters and returns as :func:`kl_attention_direct`; ``graphs=True``: on torch-cuda,
    replayed from CUDA graphs (forward only; :mod:`attngeom.kernels.kl_attention_graphs`,
    the same numbers; it returns clones of the graph's K and beta, which at N >= 2048 cost
    more than the launches saved: on an H100 graphed 6.15 against eager 6.05 ms at N = 2048,
    17.5 against 15.4 at 4096, full Sigma); elsewhere ignored (the eager kernel; JAX
    compiles already).
    ``static_outputs=True`` (with ``graphs=True``, opt-in): the graph's own K, beta and
    values instead of clones, overwritten by the next call that replays the same graph
    (the same shapes, settings and Taylor plan), as ``torch.compile``'s "reduce-overhead"
    mode returns its outputs; consume (or clone) them before that call.  The clones cost
    0.18 ms of 2.38 at N = 1024 on an H100 (full Sigma,
    ``tests/benchmarks/profile_gauge_kernel.py``, ``clone_ab``).
    Ignored where the kernel runs eagerly (fresh arrays).
    ``compiled=True``: on torch, everything after the frame exponentials through
    ``torch.compile`` (:func:`attngeom.kernels.kl_attention_graphs.kl_attention_compiled`;
    for CUDA: on the CPU it is slower than the eager kernel); elsewhere ignored.
    """
    if compiled and be.name == "torch":
        from attngeom.kernels.kl_attention_graphs import kl_attention_compiled
        return kl_attention_compiled(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma, causal=causal)
    if graphs and be.name == "torch":
        from attngeom.kernels.kl_attention_graphs import kl_attention_graphed
        return kl_attention_graphed(mu, Sigma, frames, kappa, be, diagonal_sigma=diagonal_sigma, causal=causal,
                                    clone=not static_outputs)
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
    """(kl, beta, values) of :func:`kl_attention_structured`, given the frames'
    exponentials ``rotation`` or None (computed here)."""
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
    is the faster form (:func:`softmax_last`)."""
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


def _untracked(x, be: Backend) -> bool:
    """A torch tensor that autograd does not record (in-place passes are safe on it)."""
    return be.name == "torch" and not (x.requires_grad and be.module.is_grad_enabled())


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

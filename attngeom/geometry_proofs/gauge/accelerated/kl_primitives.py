"""The building blocks of GT's KL-attention kernel, on any backend: the frame exponential,
the closed-form Gaussian KL and the frames in so(n).

GT (Dennis, *Gauge-theoretic transformers*) scores a pair by K_ij = KL(q_i || Omega_ij q_j)
with Omega_ij = exp(phi_i) exp(-phi_j) (GT eqs 3, 13).  This module holds what every path of
the kernel (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention`) and its
statistics build on:

* the few linear-algebra operations whose spelling differs between numpy, torch and jax
  (:func:`matrix_exp`, :func:`cholesky`, :func:`solve_lower`, :func:`solve_lower_right`,
  :func:`diagonal`, :func:`softmax_last`);
* :func:`frame_exp`: R_i = exp(phi_i) for frames phi_i in so(n), by scaling and squaring of a
  Taylor polynomial evaluated by Paterson-Stockmeyer, with one plan (q, s) per batch
  (:func:`exp_plan`, :func:`taylor_threshold`) chosen from a norm bound read on the host.
  The CUDA graphs (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention_graphs`)
  split it at that read (:func:`_powers`, then :func:`_taylor_exp`);
* the Gaussian KL of GT App. C.1 (:func:`gaussian_kl`, :func:`gaussian_kl_diagonal`);
* frames in so(n) and transport (GT eqs 3, 36-37, 45-46: :func:`so_basis`, :func:`skew`,
  :func:`transport`, :func:`block_diagonal`, :func:`multihead_transport`,
  :func:`split_heads`) and the layout of the frames' head axis (:func:`_frame_spec`).

All functions take a :class:`attngeom.kernels.backend.Backend` ``be`` and work unchanged on
numpy, torch and jax (cpu or cuda), in float64 or float32 (they follow the inputs' dtype).

It imports no other module of the kernel.  The library-call statistics
(:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_pairwise`), the compiled ones
(:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cpu`,
:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton`), the structured path
(:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_structured`), the CUDA graphs and the
entry points build on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attngeom.kernels import softmax_cpu
from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput

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


def _broadcast_pair(a, b, be: Backend):
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if be.name == "torch":
        return a.expand(shape), b.expand(shape)
    return be.module.broadcast_to(a, shape), be.module.broadcast_to(b, shape)


def _untracked(x, be: Backend) -> bool:
    """A torch tensor that autograd does not record (in-place passes are safe on it)."""
    return be.name == "torch" and not (x.requires_grad and be.module.is_grad_enabled())


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
    clamps in place instead
    (:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured._attention_weights`).

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


def _frame_spec(frames) -> tuple[str, Any]:
    """The einsum letter of the head axis of the frames ('' when one frame per token is
    shared by all heads) and the frames with that axis dropped in the shared case."""
    if frames.shape[-4] == 1:
        return "", frames[..., 0, :, :, :]
    return "h", frames

"""The per-token statistics of GT's structured KL-attention kernel as batched library calls,
and the pairwise operands whose product gives every K_ij.

GT's K_ij = KL(q_i || Omega_ij q_j) (eqs 3, 13) equals KL(R_i^T q_i || R_j^T q_j) with
R_i = exp(phi_i), since Omega_ij = R_i R_j^T and KL is invariant under one orthogonal change
of frame of both arguments
(:func:`attngeom.geometry_proofs.gauge.accelerated.kl_attention.kl_attention_structured`).
With nu_i = R_i^T mu_i, M_i = R_i^T (Sigma_i + mu_i mu_i^T) R_i and
P_j = R_j^T Sigma_j^{-1} R_j

    2 K_ij = <M_i, P_j>_F - 2 nu_i . (P_j nu_j) + nu_j^T P_j nu_j
             + logdet Sigma_j - logdet Sigma_i - n.

This module holds

* :func:`_full_statistics` and :func:`_diagonal_statistics`: those statistics per token and
  head (O(n^3) each) as batched library calls, differentiable.  They are what
  :func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics` runs
  where no compiled kernel applies, what the compiled kernels
  (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cpu`,
  :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton`,
  :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cuda`) fall back to, and the
  numbers the tests compare those kernels with;
* the half-vectorization of symmetric matrices over the upper triangle (n(n+1)/2 entries:
  :func:`_triangle_pairs`, :func:`_pairs`, :func:`_half_vectorization`; the compiled kernels
  write their rows in these orders) and the pair products behind R^T diag(s) R
  (:func:`_pair_products`, :func:`diagonal_congruence`);
* :func:`pairwise_operands` and :func:`pairwise_product`: the query and key rows
  [N, n(n+1)/2 + n (+ 2)] whose product is K_ij, one matrix product per head (O(N^2 n^2)).

Of the kernel's modules it imports only
:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_primitives`.
"""

from __future__ import annotations

import numpy as np

from attngeom.kernels.backend import Backend
from attngeom.geometry_proofs.gauge.accelerated.kl_primitives import (_broadcast_pair, _constant,
                                                                     _logdet_from_cholesky, _swap,
                                                                     _transposed, _untracked, cholesky,
                                                                     solve_lower_right)


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


def _full_statistics(mu, Sigma, rotation, head: str, be: Backend) -> dict:
    """:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics`
    for full Sigma as batched library calls (differentiable;
    outside autograd :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton` (CUDA C or Triton) on torch-cuda and
    :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cpu` on the CPU compute the same numbers in one
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
    """:func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics`
    for diagonal Sigma = diag(v): per frame, the pair products
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
    """(query, key), shape=[..., H, N, n(n+1)/2 + n] each, from
    :func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics`:
    query_i . key_j = <M_i, P_j>_F / 2 - nu_i . (P_j nu_j), the pair-dependent part of K_ij.
    With ``offsets`` two more columns, [1/2, -(logdet Sigma_i + n) / 2] and [offset_j, 1],
    so that query_i . key_j = K_ij exactly (the per-row and per-column terms ride in the
    product instead of two more passes over the N x N array).  Views of ``operands`` when
    :func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured.rotated_statistics`
    built them in place."""
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

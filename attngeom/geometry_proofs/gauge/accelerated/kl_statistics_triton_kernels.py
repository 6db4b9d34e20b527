"""The Triton kernels of :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton` (imported by it at the
first launch only: this module imports Triton).  One program per matrix m (batch, head,
token); n x n matrices on a TILE x TILE tile, TILE the power of two >= n + 1.  The formulas
are :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton`'s.

Two ways to form the products, by the constexpr STREAM:

* STREAM = 0: tile products (``tl.dot``) of the register tiles Sigma, R^T and X.  Measured
  register-bound on an H100 (236-255 registers a thread; Triton lowers float64 products to
  FMAs over operands held in registers);
* STREAM = 1: no tile products.  M = R^T Sigma R as sum_k R[k, :]^T (Sigma R)[k, :], each row
  (Sigma R)[k, :] = sum_l Sigma_kl R[l, :] accumulated from rows of R read from memory (L1),
  nu = sum_k mu_k R[k, :] likewise, and G = X X^T as sum_k X[:, k] X[:, k]^T: accumulated
  in the factorization's loop (the fused kernel) or read column by column from the
  library's X (the products kernel).  Rank-one updates of one accumulator tile, operands
  loaded where they are needed as [TILE, 1] or [1, TILE] tiles: no reductions and no
  operand tiles in registers.  Timed on an H200 (seventh GPU session,
  ``tests/benchmarks/profile_gauge_kernel.py``): slower in every setting, the statistics at
  N = 1024 1.31-2.72 ms against 1.16 for tile products, so STREAM = 0 stays the default.
"""

import triton
import triton.language as tl


@triton.jit
def _locate(m, rotation_ptr, heads, tokens, stride_b, stride_h, stride_t):
    """The address of R_m (the frames may be shared by the heads: stride_h = 0)."""
    t = m % tokens
    h = (m // tokens) % heads
    b = m // (tokens * heads)
    return rotation_ptr + b * stride_b + h * stride_h + t * stride_t


@triton.jit
def tiles(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, n: tl.constexpr, TILE: tl.constexpr):
    """Sigma_m and R_m^T on a TILE x TILE tile (zero outside n x n), mu_m on TILE."""
    index = tl.arange(0, TILE)
    rows = index[:, None]
    cols = index[None, :]
    square = (rows < n) & (cols < n)
    sigma = tl.load(sigma_ptr + m * (n * n) + rows * n + cols, mask=square, other=0.0)
    mu = tl.load(mu_ptr + m * n + index, mask=index < n, other=0.0)
    turned = tl.load(rotation + cols * stride_r + rows * stride_c, mask=square, other=0.0)   # R^T[a, k] = R[k, a]
    return sigma, mu, turned


@triton.jit
def tile_products(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, x, n: tl.constexpr, TILE: tl.constexpr):
    """(M, nu as [1, TILE], G) from tile products: M = R^T Sigma R + nu nu^T, G = X X^T."""
    sigma, mu, turned = tiles(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, n, TILE)
    nu = tl.sum(turned * mu[None, :], axis=1)                            # R^T mu
    second = tl.dot(tl.dot(turned, sigma, input_precision="ieee"), tl.trans(turned),
                    input_precision="ieee") + nu[:, None] * nu[None, :]
    gram = tl.dot(x, tl.trans(x), input_precision="ieee")
    return second, nu[None, :], gram


@triton.jit
def streamed_second(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, n: tl.constexpr, TILE: tl.constexpr):
    """(M, nu as [1, TILE]) by rank-one updates, operands read from memory (STREAM = 1)."""
    index = tl.arange(0, TILE)
    across = index[None, :]
    down = index[:, None]
    second = tl.zeros([TILE, TILE], dtype=sigma_ptr.dtype.element_ty)
    nu_down = tl.zeros([TILE, 1], dtype=sigma_ptr.dtype.element_ty)
    nu_across = tl.zeros([1, TILE], dtype=sigma_ptr.dtype.element_ty)
    for k in tl.range(0, n):
        r_down = tl.load(rotation + k * stride_r + down * stride_c, mask=down < n, other=0.0)       # R[k, a]
        r_across = tl.load(rotation + k * stride_r + across * stride_c, mask=across < n, other=0.0)
        mu_k = tl.load(mu_ptr + m * n + k)
        nu_down += mu_k * r_down
        nu_across += mu_k * r_across
        row = tl.zeros([1, TILE], dtype=sigma_ptr.dtype.element_ty)                               # (Sigma R)[k, :]
        for l in tl.range(0, n):
            row += tl.load(sigma_ptr + m * (n * n) + k * n + l) * tl.load(
                rotation + l * stride_r + across * stride_c, mask=across < n, other=0.0)
        second += r_down * row
    return second + nu_down * nu_across, nu_across


@triton.jit
def store_rows(m, second, nu, gram, logdet, query_ptr, key_ptr, nu_ptr, logdet_ptr,
               n: tl.constexpr, TILE: tl.constexpr):
    """The query and key rows from M, nu ([1, TILE]), G = [P, P nu; ., |X_n|^2] and
    logdet Sigma; nu and logdet stored too."""
    index = tl.arange(0, TILE)
    rows = index[:, None]
    cols = index[None, :]
    precision_nu = tl.sum(tl.where(rows == n, gram, 0.0), axis=0, keep_dims=True)   # [1, TILE]
    quadratic = tl.sum(tl.sum(tl.where((rows == n) & (cols == n), gram, 0.0), axis=1), axis=0)
    upper = (rows <= cols) & (cols < n)
    position = tl.where(rows == cols, rows, n + rows * (n - 1) - (rows * (rows - 1)) // 2 + cols - rows - 1)
    size = n * (n + 1) // 2
    query = query_ptr + m * (size + n + 2)
    key = key_ptr + m * (size + n + 2)
    tl.store(query + position, tl.where(rows == cols, 0.5 * second, second), mask=upper)
    tl.store(key + position, gram, mask=upper)
    tl.store(query + size + cols, -nu, mask=cols < n)
    tl.store(key + size + cols, precision_nu, mask=cols < n)
    tl.store(query + size + n, 0.5)
    tl.store(query + size + n + 1, -0.5 * (logdet + n))
    tl.store(key + size + n, quadratic + logdet)
    tl.store(key + size + n + 1, 1.0)
    tl.store(nu_ptr + m * n + cols, nu, mask=cols < n)
    tl.store(logdet_ptr + m, logdet)


@triton.jit
def step(k, a, x, gram, logdet, ok, n: tl.constexpr, TILE: tl.constexpr, STREAM: tl.constexpr):
    """Step k of the right-looking Cholesky factorization of the trailing matrix ``a`` and of
    the column-by-column solve X L^T = B: column k of L from the pivot a_kk > 0, the rank-one
    update of ``a``, column k of X final (X[:, k] /= L_kk, X[:, j] -= X[:, k] L_jk, j > k);
    with STREAM, G += X[:, k] X[:, k]^T."""
    index = tl.arange(0, TILE)
    cols = index[None, :]
    column = tl.sum(tl.where(cols == k, a, 0.0), axis=1)        # Sigma^(k)[:, k]
    pivot = tl.sum(tl.where(index == k, column, 0.0), axis=0)
    scale = 1.0 / tl.sqrt(pivot)
    l_k = tl.where(index >= k, column * scale, 0.0)             # L[:, k]
    a = a - l_k[:, None] * l_k[None, :]
    x_k = tl.sum(tl.where(cols == k, x, 0.0), axis=1) * scale    # X[:, k] / L_kk
    x = tl.where(cols == k, x_k[:, None], x - x_k[:, None] * tl.where(index > k, l_k, 0.0)[None, :])
    if STREAM:
        gram = gram + x_k[:, None] * x_k[None, :]
    return a, x, gram, logdet + tl.log(pivot), ok & (pivot > 0.0)


@triton.jit
def fused(sigma_ptr, mu_ptr, rotation_ptr, query_ptr, key_ptr, nu_ptr, logdet_ptr, ok_ptr,
          heads, tokens, stride_b, stride_h, stride_t, stride_r, stride_c,
          n: tl.constexpr, TILE: tl.constexpr, UNROLL: tl.constexpr, STREAM: tl.constexpr):
    """Everything in one program per matrix: the factorization and the solve in n steps
    (unrolled when compiled if UNROLL = 0, else a loop with that unroll factor), then the
    products and the rows."""
    m = tl.program_id(0).to(tl.int64)
    rotation = _locate(m, rotation_ptr, heads, tokens, stride_b, stride_h, stride_t)
    a, mu, turned = tiles(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, n, TILE)
    index = tl.arange(0, TILE)
    x = tl.where(index[:, None] == n, mu[None, :], turned)          # B = [R^T; mu^T]
    gram = tl.zeros([TILE, TILE], dtype=a.dtype)
    logdet = tl.sum(tl.zeros([TILE], dtype=a.dtype), axis=0)
    ok = logdet == 0.0
    if UNROLL == 0:
        for k in tl.static_range(n):
            a, x, gram, logdet, ok = step(k, a, x, gram, logdet, ok, n, TILE, STREAM)
    else:
        for k in tl.range(0, n, loop_unroll_factor=UNROLL):
            a, x, gram, logdet, ok = step(k, a, x, gram, logdet, ok, n, TILE, STREAM)
    if STREAM:
        second, nu = streamed_second(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, n, TILE)
    else:
        second, nu, gram = tile_products(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, x, n, TILE)
    store_rows(m, second, nu, gram, logdet, query_ptr, key_ptr, nu_ptr, logdet_ptr, n, TILE)
    tl.store(ok_ptr + m, ok.to(tl.int8))


@triton.jit
def products(sigma_ptr, mu_ptr, rotation_ptr, lower_ptr, solved_ptr, query_ptr, key_ptr, nu_ptr,
             logdet_ptr, heads, tokens, stride_b, stride_h, stride_t, stride_r, stride_c,
             lower_stride, diagonal_stride, n: tl.constexpr, TILE: tl.constexpr, STREAM: tl.constexpr):
    """The products and the rows only, from the library's L and X = [R^T; mu^T] L^{-T}
    ([n + 1, n] row-major per matrix)."""
    m = tl.program_id(0).to(tl.int64)
    rotation = _locate(m, rotation_ptr, heads, tokens, stride_b, stride_h, stride_t)
    index = tl.arange(0, TILE)
    rows = index[:, None]
    cols = index[None, :]
    solved = solved_ptr + m * ((n + 1) * n)
    logdet = 2.0 * tl.sum(tl.log(tl.load(lower_ptr + m * lower_stride + index * diagonal_stride,
                                         mask=index < n, other=1.0)), axis=0)
    if STREAM:
        second, nu = streamed_second(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, n, TILE)
        gram = tl.zeros([TILE, TILE], dtype=second.dtype)
        for k in tl.range(0, n):
            gram += (tl.load(solved + rows * n + k, mask=rows <= n, other=0.0)
                     * tl.load(solved + cols * n + k, mask=cols <= n, other=0.0))
    else:
        x = tl.load(solved + rows * n + cols, mask=(rows <= n) & (cols < n), other=0.0)
        second, nu, gram = tile_products(m, sigma_ptr, mu_ptr, rotation, stride_r, stride_c, x, n, TILE)
    store_rows(m, second, nu, gram, logdet, query_ptr, key_ptr, nu_ptr, logdet_ptr, n, TILE)


KERNELS = {"fused": fused, "products": products}

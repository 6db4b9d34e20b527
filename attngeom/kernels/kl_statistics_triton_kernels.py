"""The Triton kernels of :mod:`attngeom.kernels.kl_statistics_triton` (imported by it at the
first launch only: this module imports Triton).  One program per matrix m (batch, head,
token); n x n matrices on a TILE x TILE tile, TILE the power of two >= n + 1.  The formulas
are :mod:`attngeom.kernels.kl_statistics_triton`'s."""

import triton
import triton.language as tl


@triton.jit
def tiles(m, sigma_ptr, mu_ptr, rotation_ptr, heads, tokens, stride_b, stride_h, stride_t, stride_r,
          stride_c, n: tl.constexpr, TILE: tl.constexpr):
    """Sigma_m and R_m^T on a TILE x TILE tile (zero outside n x n), mu_m on TILE."""
    t = m % tokens
    h = (m // tokens) % heads
    b = m // (tokens * heads)
    index = tl.arange(0, TILE)
    rows = index[:, None]
    cols = index[None, :]
    square = (rows < n) & (cols < n)
    sigma = tl.load(sigma_ptr + m * (n * n) + rows * n + cols, mask=square, other=0.0)
    mu = tl.load(mu_ptr + m * n + index, mask=index < n, other=0.0)
    turned = tl.load(rotation_ptr + b * stride_b + h * stride_h + t * stride_t
                     + cols * stride_r + rows * stride_c, mask=square, other=0.0)   # R^T[a, k] = R[k, a]
    return sigma, mu, turned


@triton.jit
def write_rows(m, sigma, mu, turned, x, logdet, query_ptr, key_ptr, nu_ptr, logdet_ptr,
               n: tl.constexpr, TILE: tl.constexpr):
    """From X = [R^T; mu^T] L^{-T} and logdet Sigma: M = R^T Sigma R + nu nu^T (two tile
    products), G = X X^T, and the query and key rows, nu and logdet stored."""
    index = tl.arange(0, TILE)
    rows = index[:, None]
    cols = index[None, :]
    nu = tl.sum(turned * mu[None, :], axis=1)                            # R^T mu
    second = tl.dot(tl.dot(turned, sigma, input_precision="ieee"), tl.trans(turned),
                    input_precision="ieee") + nu[:, None] * nu[None, :]  # M
    gram = tl.dot(x, tl.trans(x), input_precision="ieee")               # [P, P nu; ., |X_n|^2]
    precision_nu = tl.sum(tl.where(rows == n, gram, 0.0), axis=0)
    quadratic = tl.sum(tl.where(index == n, precision_nu, 0.0), axis=0)
    upper = (rows <= cols) & (cols < n)
    position = tl.where(rows == cols, rows, n + rows * (n - 1) - (rows * (rows - 1)) // 2 + cols - rows - 1)
    size = n * (n + 1) // 2
    query = query_ptr + m * (size + n + 2)
    key = key_ptr + m * (size + n + 2)
    tl.store(query + position, tl.where(rows == cols, 0.5 * second, second), mask=upper)
    tl.store(key + position, gram, mask=upper)
    tl.store(query + size + index, -nu, mask=index < n)
    tl.store(key + size + index, precision_nu, mask=index < n)
    tl.store(query + size + n, 0.5)
    tl.store(query + size + n + 1, -0.5 * (logdet + n))
    tl.store(key + size + n, quadratic + logdet)
    tl.store(key + size + n + 1, 1.0)
    tl.store(nu_ptr + m * n + index, nu, mask=index < n)
    tl.store(logdet_ptr + m, logdet)


@triton.jit
def step(k, a, x, logdet, ok, n: tl.constexpr, TILE: tl.constexpr):
    """Step k of the right-looking Cholesky factorization of the trailing matrix ``a`` and of
    the column-by-column solve X L^T = B: column k of L from the pivot a_kk > 0, the rank-one
    update of ``a``, column k of X final (X[:, k] /= L_kk, X[:, j] -= X[:, k] L_jk, j > k)."""
    index = tl.arange(0, TILE)
    cols = index[None, :]
    column = tl.sum(tl.where(cols == k, a, 0.0), axis=1)        # Sigma^(k)[:, k]
    pivot = tl.sum(tl.where(index == k, column, 0.0), axis=0)
    scale = 1.0 / tl.sqrt(pivot)
    l_k = tl.where(index >= k, column * scale, 0.0)             # L[:, k]
    a = a - l_k[:, None] * l_k[None, :]
    x_k = tl.sum(tl.where(cols == k, x, 0.0), axis=1) * scale    # X[:, k] / L_kk
    x = tl.where(cols == k, x_k[:, None], x - x_k[:, None] * tl.where(index > k, l_k, 0.0)[None, :])
    return a, x, logdet + tl.log(pivot), ok & (pivot > 0.0)


@triton.jit
def fused(sigma_ptr, mu_ptr, rotation_ptr, query_ptr, key_ptr, nu_ptr, logdet_ptr, ok_ptr,
          heads, tokens, stride_b, stride_h, stride_t, stride_r, stride_c,
          n: tl.constexpr, TILE: tl.constexpr, UNROLL: tl.constexpr):
    """Everything in one program per matrix: the factorization and the solve in n steps
    (unrolled when compiled if UNROLL = 0, else a loop with that unroll factor), then the
    products and the rows."""
    m = tl.program_id(0).to(tl.int64)
    a, mu, turned = tiles(m, sigma_ptr, mu_ptr, rotation_ptr, heads, tokens, stride_b, stride_h,
                          stride_t, stride_r, stride_c, n, TILE)
    index = tl.arange(0, TILE)
    x = tl.where(index[:, None] == n, mu[None, :], turned)          # B = [R^T; mu^T]
    logdet = tl.sum(tl.zeros([TILE], dtype=a.dtype), axis=0)
    ok = logdet == 0.0
    if UNROLL == 0:
        for k in tl.static_range(n):
            a, x, logdet, ok = step(k, a, x, logdet, ok, n, TILE)
    else:
        for k in tl.range(0, n, loop_unroll_factor=UNROLL):
            a, x, logdet, ok = step(k, a, x, logdet, ok, n, TILE)
    sigma, mu, turned = tiles(m, sigma_ptr, mu_ptr, rotation_ptr, heads, tokens, stride_b, stride_h,
                              stride_t, stride_r, stride_c, n, TILE)
    write_rows(m, sigma, mu, turned, x, logdet, query_ptr, key_ptr, nu_ptr, logdet_ptr, n, TILE)
    tl.store(ok_ptr + m, ok.to(tl.int8))


@triton.jit
def products(sigma_ptr, mu_ptr, rotation_ptr, lower_ptr, solved_ptr, query_ptr, key_ptr, nu_ptr,
             logdet_ptr, heads, tokens, stride_b, stride_h, stride_t, stride_r, stride_c,
             lower_stride, diagonal_stride, n: tl.constexpr, TILE: tl.constexpr):
    """The products and the rows only, from the library's L and X = [R^T; mu^T] L^{-T}."""
    m = tl.program_id(0).to(tl.int64)
    sigma, mu, turned = tiles(m, sigma_ptr, mu_ptr, rotation_ptr, heads, tokens, stride_b, stride_h,
                              stride_t, stride_r, stride_c, n, TILE)
    index = tl.arange(0, TILE)
    rows = index[:, None]
    cols = index[None, :]
    x = tl.load(solved_ptr + m * ((n + 1) * n) + rows * n + cols, mask=(rows <= n) & (cols < n), other=0.0)
    logdet = 2.0 * tl.sum(tl.log(tl.load(lower_ptr + m * lower_stride + index * diagonal_stride,
                                         mask=index < n, other=1.0)), axis=0)
    write_rows(m, sigma, mu, turned, x, logdet, query_ptr, key_ptr, nu_ptr, logdet_ptr, n, TILE)


KERNELS = {"fused": fused, "products": products}

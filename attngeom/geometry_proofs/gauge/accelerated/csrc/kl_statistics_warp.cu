// The full-Sigma per-token statistics of the GT structured kernel, one warp per matrix
// (issue 26; attngeom/geometry_proofs/gauge/accelerated/kl_statistics_cuda.py compiles this with NVRTC, prefixed by
//  #define NN <n> and #define T <double | float>, and for float #define SQRT sqrtf, LOG logf).
//
// For every batch, head and token m: Sigma_m (n x n), mu_m, the frame R_m (rows at
// stride_r, columns at stride_c; shared by the heads when stride_h = 0).  Lane i of the
// warp holds index i; n + 1 <= 32.
//
//  1. Cholesky Sigma = L L^T, right-looking: lane r holds row r of the trailing matrix
//     (a[0..n-1]); at step k the pivot a_kk comes from lane k, lane r >= k forms
//     L_rk = a_rk / sqrt(a_kk), and the trailing update a_rj -= L_rk L_jk takes L_jk from
//     lane j.  logdet Sigma = sum_k log(pivot_k).
//  2. In the same steps Y = L^{-1} [R, mu] by forward substitution: lane c holds column c of
//     [R, mu] (c < n: R[:, c]; c = n: mu); at step k, y_k /= L_kk and y_j -= L_jk y_k (j > k),
//     with the L_jk that step 1 just shuffled.
//  3. G = Y^T Y = [R, mu]^T Sigma^{-1} [R, mu]: lane c forms row c, G_cd = sum_i y_i(c) y_i(d),
//     y_i(d) from lane d.  G[:n, :n] = R^T Sigma^{-1} R = P, G[:n, n] = R^T Sigma^{-1} mu = P nu
//     (R orthogonal, nu = R^T mu), G[n, n] = mu^T Sigma^{-1} mu = nu^T P nu.
//  4. M = R^T Sigma R + nu nu^T: lane c forms u = Sigma R[:, c] and nu_c = R[:, c] . mu from
//     broadcast loads, then M_cd = u . R[:, d] + nu_c nu_d.
//
// It writes the rows of the pairwise product in the order of _triangle_pairs (the diagonal,
// then the upper triangle row by row: position(r, c) = n + r (n - 1) - r (r - 1) / 2 + c - r - 1
// for r < c):
//     query = [M (diagonal halved), -nu, 1/2, -(logdet + n) / 2]
//     key   = [P, P nu, nu^T P nu + logdet, 1]
// and nu, logdet, ok (every pivot > 0; a NaN pivot is not).  Lanes >= n + 1 compute copies of
// lane n - 1's row and write nothing.  All shuffles are in uniform control flow.

#define FULL_MASK 0xffffffffu
#ifndef SQRT                                     // the C names for T (NVRTC: sqrtf / logf for float)
#define SQRT sqrt
#define LOG log
#endif

__device__ __forceinline__ int position(int r, int c) {
    return r == c ? r : NN + r * (NN - 1) - (r * (r - 1)) / 2 + c - r - 1;
}

extern "C" __global__ void kl_statistics_warp(
        const T* __restrict__ sigma, const T* __restrict__ mu, const T* __restrict__ rotation,
        T* __restrict__ query, T* __restrict__ key, T* __restrict__ nu_out, T* __restrict__ logdet_out,
        signed char* __restrict__ ok_out, int count, int heads, int tokens,
        int stride_b, int stride_h, int stride_t, int stride_r, int stride_c) {
    const int lane = threadIdx.x & 31;
    const long long m = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (m >= count) return;                      // the whole warp: m is uniform in it
    const long long t = m % tokens, h = (m / tokens) % heads, b = m / ((long long)tokens * heads);
    const T* S = sigma + m * (NN * NN);
    const T* U = mu + m * NN;
    const T* R = rotation + b * stride_b + h * stride_h + t * stride_t;
    const int r = lane < NN ? lane : NN - 1;     // the row this lane factors

    T a[NN], y[NN];
#pragma unroll
    for (int j = 0; j < NN; ++j) a[j] = S[r * NN + j];
#pragma unroll
    for (int i = 0; i < NN; ++i)
        y[i] = lane < NN ? R[i * stride_r + lane * stride_c] : (lane == NN ? U[i] : (T)0);

    bool good = true;
    T own_pivot = (T)1;                          // lane k keeps pivot k (for logdet)
#pragma unroll
    for (int k = 0; k < NN; ++k) {
        const T pivot = __shfl_sync(FULL_MASK, a[k], k);
        good = good && pivot > (T)0;
        if (lane == k) own_pivot = pivot;
        const T inverse = (T)1 / SQRT(pivot);
        const T l = a[k] * inverse;              // L[r][k] on lanes r >= k
        y[k] *= inverse;
#pragma unroll
        for (int j = k + 1; j < NN; ++j) {
            const T l_jk = __shfl_sync(FULL_MASK, l, j);
            a[j] -= l * l_jk;
            y[j] -= l_jk * y[k];
        }
    }
    T logdet = lane < NN ? LOG(own_pivot) : (T)0;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) logdet += __shfl_xor_sync(FULL_MASK, logdet, offset);

    const int width = NN * (NN + 1) / 2 + NN + 2;
    const int size = NN * (NN + 1) / 2;
    T* Q = query + m * width;
    T* K = key + m * width;

    // 3. G = Y^T Y, row `lane`
#pragma unroll
    for (int d = 0; d <= NN; ++d) {
        T g = (T)0;
#pragma unroll
        for (int i = 0; i < NN; ++i) g += y[i] * __shfl_sync(FULL_MASK, y[i], d);
        if (d < NN) {
            if (lane <= d) K[position(lane, d)] = g;
        } else if (lane < NN) {
            K[size + lane] = g;                  // (P nu)_lane
        } else if (lane == NN) {
            K[size + NN] = g + logdet;           // nu^T P nu + logdet
            K[size + NN + 1] = (T)1;
        }
    }

    // 4. M = R^T Sigma R + nu nu^T, row `lane`
    T column[NN], u[NN];                         // R[:, c] (c = r) and Sigma R[:, c]
    T nu = (T)0;
#pragma unroll
    for (int i = 0; i < NN; ++i) column[i] = R[i * stride_r + r * stride_c];
#pragma unroll
    for (int i = 0; i < NN; ++i) {
        T s = (T)0;
#pragma unroll
        for (int j = 0; j < NN; ++j) s += S[i * NN + j] * column[j];
        u[i] = s;
        nu += column[i] * U[i];
    }
#pragma unroll
    for (int d = 0; d < NN; ++d) {
        T s = (T)0;
#pragma unroll
        for (int i = 0; i < NN; ++i) s += u[i] * R[i * stride_r + d * stride_c];
        const T nu_d = __shfl_sync(FULL_MASK, nu, d);
        s += nu * nu_d;
        if (lane < d) Q[position(lane, d)] = s;
        else if (lane == d) Q[lane] = (T)0.5 * s;
    }
    if (lane < NN) {
        Q[size + lane] = -nu;
        nu_out[m * NN + lane] = nu;
    } else if (lane == NN) {
        Q[size + NN] = (T)0.5;
        Q[size + NN + 1] = (T)(-0.5) * (logdet + (T)NN);
        logdet_out[m] = logdet;
        ok_out[m] = good ? 1 : 0;
    }
}

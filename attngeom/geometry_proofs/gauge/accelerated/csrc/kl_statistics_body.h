/* The kernel of kl_statistics_cpu.c for one floating type and one instruction set, included
 * once per (REAL, LANES, SUFFIX, TARGET).
 *
 * Every step acts on a vector V of LANES independent (batch, head, token) items: item l of a
 * group sits in lane l of every vector, so the n steps of the Cholesky factorization and of
 * the forward substitution (divisions, square roots, short dependent loops on one n x n
 * matrix) run as wide as the products.  The products are sums over k of a_k b_k^T for two
 * rows of A and four consecutive columns of B at a time (panel_2x4: eight accumulators in
 * registers, six loads for eight fused multiply-adds); the arrays carry zero padding so that
 * every panel is whole (the strides below). */

typedef REAL CAT(vector_, SUFFIX) __attribute__((vector_size(sizeof(REAL) * LANES)));
typedef INDEX CAT(index_, SUFFIX) __attribute__((vector_size(sizeof(REAL) * LANES)));
#define V CAT(vector_, SUFFIX)
#if defined(__clang__)
#define SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUFFLE(a, b, ...) __builtin_shuffle(a, b, (CAT(index_, SUFFIX)){__VA_ARGS__})
#endif

/* x[0 .. LANES) as a LANES x LANES matrix (vector i: row i) transposed in registers: at the
 * stage of distance d the rows i and i + d (bit d of i clear) swap their off-diagonal d x d
 * blocks (new_i[j] = x_{i+d}[j-d] where bit d of j is set, else x_i[j]; new_{i+d}[j] =
 * x_i[j+d] where it is clear, else x_{i+d}[j]) */
TARGET static inline void CAT(transpose_, SUFFIX)(V *x)
{
#if LANES == 4
    const V t0 = SHUFFLE(x[0], x[1], 0, 4, 2, 6), t1 = SHUFFLE(x[0], x[1], 1, 5, 3, 7);
    const V t2 = SHUFFLE(x[2], x[3], 0, 4, 2, 6), t3 = SHUFFLE(x[2], x[3], 1, 5, 3, 7);
    x[0] = SHUFFLE(t0, t2, 0, 1, 4, 5);
    x[2] = SHUFFLE(t0, t2, 2, 3, 6, 7);
    x[1] = SHUFFLE(t1, t3, 0, 1, 4, 5);
    x[3] = SHUFFLE(t1, t3, 2, 3, 6, 7);
#elif LANES == 8
    V t[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = SHUFFLE(x[i], x[i + 1], 0, 8, 2, 10, 4, 12, 6, 14);
        t[i + 1] = SHUFFLE(x[i], x[i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int k = i; k < i + 2; k++) {
            x[k] = SHUFFLE(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            x[k + 2] = SHUFFLE(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int k = 0; k < 4; k++) {
        t[k] = SHUFFLE(x[k], x[k + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        t[k + 4] = SHUFFLE(x[k], x[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
    for (int k = 0; k < 8; k++) x[k] = t[k];
#else
#error "LANES must be 4 or 8"
#endif
}

/* p[l][offset + j] = x[j][l] for j, l < LANES (x is transposed in place) */
TARGET static inline void CAT(store_block_, SUFFIX)(REAL *const *p, Py_ssize_t offset, V *x)
{
    CAT(transpose_, SUFFIX)(x);
    for (int l = 0; l < LANES; l++) memcpy(p[l] + offset, &x[l], sizeof(V));
}

/* *out = (p[0][offset], ..., p[LANES-1][offset]) */
TARGET static inline void CAT(lanes_, SUFFIX)(V *out, const REAL *const *p, Py_ssize_t offset)
{
    V v = {0};
    for (int l = 0; l < LANES; l++) v[l] = p[l][offset];
    *out = v;
}
#define STORE_BLOCK CAT(store_block_, SUFFIX)
#define LANES_OF CAT(lanes_, SUFFIX)

/* out[j] = sum_k x0[k sx] y[k sy + j], out[4 + j] = sum_k x1[k sx] y[k sy + j], j < 4,
 * k < count */
TARGET static inline void CAT(panel_2x4_, SUFFIX)(const V *x0, const V *x1, Py_ssize_t sx,
                                                   const V *y, Py_ssize_t sy, int count, V *out)
{
    V s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, t0 = {0}, t1 = {0}, t2 = {0}, t3 = {0};
    for (int k = 0; k < count; k++) {
        const V a = x0[k * sx], b = x1[k * sx];
        const V *row = y + k * sy;
        const V y0 = row[0], y1 = row[1], y2 = row[2], y3 = row[3];
        s0 += a * y0; s1 += a * y1; s2 += a * y2; s3 += a * y3;
        t0 += b * y0; t1 += b * y1; t2 += b * y2; t3 += b * y3;
    }
    out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3;
    out[4] = t0; out[5] = t1; out[6] = t2; out[7] = t3;
}
#define PANEL CAT(panel_2x4_, SUFFIX)

/* the panel out[0 .. 8) into rows a and a + 1 of y (row stride sy) from column b */
TARGET static inline void CAT(put_panel_, SUFFIX)(V *y, Py_ssize_t sy, int a, int b, const V *out)
{
    for (int j = 0; j < 4; j++) {
        y[a * sy + b + j] = out[j];
        y[(a + 1) * sy + b + j] = out[4 + j];
    }
}
#define PUT_PANEL CAT(put_panel_, SUFFIX)

/* the upper triangle of X^T X (and the entries below it that whole panels reach) into y (row
 * stride sy), X with ``rows`` rows of ``columns`` vectors (row stride sx) */
TARGET static void CAT(gram_upper_, SUFFIX)(V *y, Py_ssize_t sy, const V *x, Py_ssize_t sx, int columns, int rows)
{
    V out[8];
    for (int a = 0; a < columns; a += 2)
        for (int b = a; b < columns; b += 4) {
            PANEL(x + a, x + a + 1, sx, x + b, sx, rows, out);
            PUT_PANEL(y, sy, a, b, out);
        }
}

TARGET static Py_ssize_t CAT(statistics_, SUFFIX)(
    const REAL *sigma, const REAL *mu, const REAL *rotation, const int64_t *frame, const int32_t *pairs,
    const int64_t *order, Py_ssize_t groups, REAL *query, REAL *key, REAL *nu_out, REAL *logdet_out,
    int n, int diagonal, V *work)
{
    const int m = n + 1;                                      /* columns of [R | mu] */
    const Py_ssize_t nn = (Py_ssize_t)n * n, half = (Py_ssize_t)n * (n + 1) / 2, width = half + n + 2;
    const Py_ssize_t ls = LOWER_STRIDE(n), ys = SOLVED_STRIDE(n), fs = FRAME_STRIDE(n);
    V *S = work;                    /* (n + 1) x ls: [L | mu | 0], Sigma's lower triangle before */
    V *R = S + (n + 1) * ls;        /* n x fs: the frame R */
    V *Y = R + n * fs;              /* (n + 1) x ys: L^{-1} [R | mu] ([R | mu] before) */
    V *F = Y + (n + 1) * ys;        /* (m + 1) x fs: [L | mu]^T R = [L^T R; nu^T] */
    V *G = F + (m + 1) * fs;        /* (m + 1) x ys: Y^T Y (upper) */
    V *M = G + (m + 1) * ys;        /* (n + 1) x fs: F^T F (upper) */
    V *inverse = M + (n + 1) * fs;  /* n: 1 / L_kk */
    V out[8];
    Py_ssize_t failed = 0;
    int64_t previous[LANES];                 /* the frames in R (none yet) */
    for (int l = 0; l < LANES; l++) previous[l] = -1;
    for (Py_ssize_t group = 0; group < groups; group++) {
        Py_ssize_t item[LANES];
        int bad[LANES], valid[LANES], whole = 1, same = 1;
        for (int l = 0; l < LANES; l++) {     /* lane 0 always holds an item: it fills the others */
            const int64_t it = order[group * LANES + l];
            valid[l] = it >= 0;
            whole &= valid[l];
            item[l] = valid[l] ? it : order[group * LANES];
            bad[l] = 0;
            same &= frame[item[l]] == previous[l];
            previous[l] = frame[item[l]];
        }
        /* gather the group's inputs: Sigma's lower triangle (or the variances), R and mu,
         * a vector at a time (lane by lane stores into memory that is then read as vectors
         * stall the loads).  Loading LANES numbers of each item and transposing them in
         * registers, as the scatter does in float32, measured no faster (float64 4.9-5.3
         * against 4.2-4.9 ms at GT's size, float32 the same).  R only when the lanes' frames
         * changed: with the heads sharing frames the order puts a group of tokens through
         * every head in turn (kl_statistics_cpu.py), and R is gathered once for them */
        const REAL *s[LANES], *r[LANES], *x[LANES];
        for (int l = 0; l < LANES; l++) {
            s[l] = sigma + item[l] * (diagonal ? n : nn);
            r[l] = rotation + frame[item[l]] * nn;
            x[l] = mu + item[l] * n;
        }
        for (int a = 0; a < n; a++) {
            for (int b = 0; b <= a && !diagonal; b++) LANES_OF(&S[a * ls + b], s, a * n + b);
            for (int b = 0; b < n; b++) {
                if (!same) LANES_OF(&R[a * fs + b], r, a * n + b);
                Y[a * ys + b] = R[a * fs + b];
            }
            LANES_OF(&S[a * ls + n], x, a);
            Y[a * ys + n] = S[a * ls + n];
            if (diagonal) LANES_OF(&S[a * ls + a], s, a);
        }
        /* Sigma = L L^T, right-looking: column k of L from the pivot, then the rank-one
         * update of the trailing lower triangle; logdet Sigma = sum_k log(pivot_k) */
        V logdet = {0};
        for (int k = 0; k < n; k++) {
            V pivot = S[k * ls + k], root;
            for (int l = 0; l < LANES; l++) {
                if (!(pivot[l] > 0)) {                         /* not positive definite (or NaN) */
                    bad[l] = 1;
                    pivot[l] = 1;
                }
                root[l] = SQRT(pivot[l]);
                logdet[l] += LOG(pivot[l]);
            }
            const V scale = 1 / root;
            S[k * ls + k] = root;
            inverse[k] = scale;
            if (diagonal) continue;                            /* L = diag(sqrt(v)) */
            for (int i = k + 1; i < n; i++) S[i * ls + k] *= scale;
            for (int i = k + 1; i < n; i++) {
                const V lik = S[i * ls + k];
                for (int j = k + 1; j <= i; j++) S[i * ls + j] -= lik * S[j * ls + k];
            }
        }
        /* Y = L^{-1} [R | mu] in place, two rows at a time: the sums over the rows k < i
         * already solved (one panel), then row i, then row i + 1's term in row i (diagonal
         * Sigma: row i scaled by 1 / sqrt(v_i)) */
        for (int i = 0; i < n && diagonal; i++)
            for (int c = 0; c < m; c++) Y[i * ys + c] *= inverse[i];
        for (int i = 0; i < n && !diagonal; i += 2) {
            const int pair = i + 1 < n;
            for (int b = 0; b < m; b += 4) {
                PANEL(S + i * ls, S + (i + 1) * ls, 1, Y + b, ys, i, out);
                V *y0 = Y + i * ys + b, *y1 = Y + (i + 1) * ys + b;
                const V lower = S[(i + 1) * ls + i];
                for (int j = 0; j < 4; j++) {
                    y0[j] = (y0[j] - out[j]) * inverse[i];
                    if (pair) y1[j] = (y1[j] - out[4 + j] - lower * y0[j]) * inverse[i + 1];
                }
            }
        }
        /* G = Y^T Y (upper): [P, P nu; ., mu^T Sigma^{-1} mu] with P = R^T Sigma^{-1} R */
        CAT(gram_upper_, SUFFIX)(G, ys, Y, ys, m, n);
        /* F = [L | mu]^T R (row c: sum over a >= c of L_ac R_a, row n: nu^T), then
         * M = F^T F = R^T (Sigma + mu mu^T) R (upper) */
        if (diagonal) {                          /* rows sqrt(v_c) R_c, then nu^T = mu^T R */
            for (int c = 0; c < n; c++) {
                const V root = S[c * ls + c];
                for (int b = 0; b < n; b++) F[c * fs + b] = root * R[c * fs + b];
            }
            for (int b = 0; b < n; b++) F[n * fs + b] = S[n] * R[b];
            for (int a = 1; a < n; a++) {
                const V ua = S[a * ls + n];
                for (int b = 0; b < n; b++) F[n * fs + b] += ua * R[a * fs + b];
            }
        }
        for (int c = 0; c < m && !diagonal; c += 2) {
            const int start = c + 1 < n ? c : 0;
            for (int b = 0; b < n; b += 4) {
                PANEL(S + start * ls + c, S + start * ls + c + 1, ls, R + start * fs + b, fs, n - start, out);
                PUT_PANEL(F, fs, c, b, out);
            }
        }
        CAT(gram_upper_, SUFFIX)(M, fs, F, fs, n, m);
        /* scatter: query = [M (diagonal halved), -nu, 1/2, -(logdet + n)/2],
         *          key   = [P, P nu, nu^T P nu + logdet, 1], the entries (a, b) of M and P in
         *          the order of the table pairs (rows a, then columns b).  In float32 (8
         *          lanes) a whole group's LANES consecutive entries of every item at a time,
         *          transposed in registers: 2.5-3.9 against 2.7-4.4 ms at GT's size (full
         *          Sigma; diagonal 1.4-2.4 against 1.8-2.9); in float64 (4 lanes) it measured
         *          no faster, and the lanes are stored one by one */
        Py_ssize_t t = 0, b = 0;
        if (LANES == 8 && whole) {
            REAL *q[LANES], *k[LANES], *u[LANES];
            for (int l = 0; l < LANES; l++) {
                q[l] = query + item[l] * width;
                k[l] = key + item[l] * width;
                u[l] = nu_out + item[l] * n;
            }
            V block[LANES], other[LANES];
            for (; t + LANES <= half; t += LANES) {
                for (int j = 0; j < LANES; j++) {
                    const int a = pairs[t + j], c = pairs[half + t + j];
                    block[j] = (a == c ? (REAL)0.5 : (REAL)1) * M[a * fs + c];
                    other[j] = G[a * ys + c];
                }
                STORE_BLOCK(q, t, block);
                STORE_BLOCK(k, t, other);
            }
            for (; b + LANES <= n; b += LANES) {
                for (int j = 0; j < LANES; j++) other[j] = G[(b + j) * ys + n];
                STORE_BLOCK(k, half + b, other);
                for (int j = 0; j < LANES; j++) block[j] = F[n * fs + b + j];
                STORE_BLOCK(u, b, block);
                for (int j = 0; j < LANES; j++) block[j] = -F[n * fs + b + j];
                STORE_BLOCK(q, half + b, block);
            }
        }
        for (int l = 0; l < LANES; l++) {                           /* the rest, lane by lane */
            if (!valid[l]) continue;
            const Py_ssize_t it = item[l];
            REAL *q = query + it * width, *k = key + it * width;
            for (Py_ssize_t e = t; e < half; e++) {
                const int a = pairs[e], c = pairs[half + e];
                q[e] = (a == c ? (REAL)0.5 : (REAL)1) * M[a * fs + c][l];
                k[e] = G[a * ys + c][l];
            }
            for (Py_ssize_t e = b; e < n; e++) {
                const REAL nu = F[n * fs + e][l];
                q[half + e] = -nu;
                k[half + e] = G[e * ys + n][l];
                nu_out[it * n + e] = nu;
            }
            q[half + n] = (REAL)0.5;
            q[half + n + 1] = (REAL)-0.5 * (logdet[l] + (REAL)n);
            k[half + n] = G[n * ys + n][l] + logdet[l];
            k[half + n + 1] = 1;
            logdet_out[it] = logdet[l];
            failed += bad[l];
        }
    }
    return failed;
}

#undef V
#undef PANEL
#undef PUT_PANEL
#undef SHUFFLE
#undef STORE_BLOCK
#undef LANES_OF

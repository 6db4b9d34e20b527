/* The row routine of softmax_cpu.c for one floating type, included once per (REAL, LANES,
 * VEC and the AVX2 intrinsics' names, SUFFIX). */

__attribute__((target("avx2,fma"))) static REAL CAT(lane_sum_, SUFFIX)(VEC v)
{
    REAL lanes[LANES], sum = 0;
    STORE(lanes, v);
    for (int l = 0; l < LANES; l++) sum += lanes[l];
    return sum;
}

__attribute__((target("avx2,fma"))) static REAL CAT(exp_one_, SUFFIX)(REAL x)
{
    REAL lanes[LANES];
    STORE(lanes, EXP(SET1(x)));
    return lanes[0];
}

__attribute__((target("avx2,fma"))) static void CAT(softmax_rows_, SUFFIX)(const REAL *x, REAL *out, Py_ssize_t rows,
                                                                     Py_ssize_t count, REAL scale)
{
    const int largest = scale > 0;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const REAL *row = x + r * count;
        REAL *o = out + r * count;
        /* the reference: the row's maximum (scale > 0) or minimum, NaN if the row has one */
        VEC best = SET1(row[0]), unordered = ZERO();
        Py_ssize_t j = 0;
        for (; j + LANES <= count; j += LANES) {
            const VEC v = LOAD(row + j);
            best = largest ? MAX(best, v) : MIN(best, v);
            unordered = OR(unordered, UNORDERED(v));
        }
        REAL lanes[LANES], reference;
        STORE(lanes, best);
        reference = lanes[0];
        for (int l = 1; l < LANES; l++) reference = largest ? FMAX(reference, lanes[l]) : FMIN(reference, lanes[l]);
        int nan = MOVEMASK(unordered) != 0;
        for (; j < count; j++) {
            nan |= isnan(row[j]);
            reference = largest ? FMAX(reference, row[j]) : FMIN(reference, row[j]);
        }
        if (nan) reference = (REAL)NAN;
        /* exp(scale (x - reference)) and their sum, then the division.  Exponents below
         * log(smallest normal) give 0: their exponentials are subnormal or 0, below the
         * smallest normal number where the row's largest weight is at least 1 / count, and
         * libmvec computes such lanes one by one (float32 at GT's size, where 98% of the
         * exponents are below it: 2.9 against 0.26 ms) */
        const VEC shift = SET1(reference), factor = SET1(scale), lowest = SET1(LOG_TINY);
        VEC total = ZERO();
        REAL tail = 0;
        for (j = 0; j + LANES <= count; j += LANES) {
            const VEC t = MUL(SUB(LOAD(row + j), shift), factor);
            const VEC e = ANDNOT(LESS(t, lowest), EXP(MAX(lowest, t)));   /* NaN stays NaN */
            STORE(o + j, e);
            total = ADD(total, e);
        }
        for (; j < count; j++) {
            const REAL t = (row[j] - reference) * scale;
            o[j] = t < LOG_TINY ? 0 : CAT(exp_one_, SUFFIX)(t);
            tail += o[j];
        }
        const REAL sum = CAT(lane_sum_, SUFFIX)(total) + tail;
        const VEC divisor = SET1(sum);
        for (j = 0; j + LANES <= count; j += LANES) STORE(o + j, DIV(LOAD(o + j), divisor));
        for (; j < count; j++) o[j] /= sum;
    }
}

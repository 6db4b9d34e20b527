/* attngeom.geometry_proofs.gauge.accelerated._kl_statistics_cpu: the per-token statistics of the GT structured kernel
 * (full or diagonal Sigma) on the CPU, compiled (issue 26).  See attngeom/geometry_proofs/gauge/accelerated/kl_statistics_cpu.py
 * for what it computes and why; the arithmetic is in kl_statistics_body.h.
 *
 * One function, statistics(sigma, mu, rotation, frame, pairs, order, query, key, nu, logdet,
 * n, itemsize[, diagonal, path]), on C-contiguous buffers (float64 when itemsize is 8,
 * float32 when 4):
 *   sigma     count x n x n (diagonal: count x n, the variances)
 *   mu        count x n
 *   rotation  frames x n x n
 *   frame     int64 count: each item's frame
 *   pairs     int32 2 x n(n+1)/2: the pairs (a, b), a <= b, of the rows' first n(n+1)/2
 *             entries (rows, then columns)
 *   order     int64 groups x lanes (LANES_FLOAT64 = 4, LANES_FLOAT32 = 8): the items in the
 *             order they are computed, a group of lanes at a time; -1 an empty lane, never
 *             the first of a group; every item once
 *   query, key  count x width, width = n(n+1)/2 + n + 2 (written)
 *   nu        count x n, logdet  count (written)
 * Returns the number of items whose Sigma was not positive definite (a pivot <= 0 or NaN;
 * their rows are then meaningless).  path: -1 (default) AVX2 + FMA where the CPU has them,
 * 0 the baseline code, 1 AVX2 + FMA if available.  The GIL is released while it runs. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* the row strides of the work arrays (kl_statistics_body.h), in vectors: whole panels of two
 * rows and four columns read only zero padding past the data */
#define LOWER_STRIDE(n) ((Py_ssize_t)(n) + 2)
#define SOLVED_STRIDE(n) ((Py_ssize_t)(n) + 4)
#define FRAME_STRIDE(n) ((Py_ssize_t)(n) + 3)

/* the work space of one group, in vectors */
static Py_ssize_t work_vectors(int n)
{
    const Py_ssize_t m = n + 1;
    return (n + 1) * LOWER_STRIDE(n) + n * FRAME_STRIDE(n) + (n + 1) * SOLVED_STRIDE(n)
           + (m + 1) * FRAME_STRIDE(n) + (m + 1) * SOLVED_STRIDE(n) + (n + 1) * FRAME_STRIDE(n) + n;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DISPATCH 1
#else
#define DISPATCH 0
#endif

/* float64: four lanes (one AVX2 register), float32: eight (kl_statistics_variants.h) */
#define REAL double
#define INDEX int64_t
#define LANES 4
#define SQRT sqrt
#define LOG log
#define NAME f64
#include "kl_statistics_variants.h"

#define REAL float
#define INDEX int32_t
#define LANES 8
#define SQRT sqrtf
#define LOG logf
#define NAME f32
#include "kl_statistics_variants.h"

static int wide(void)
{
#if DISPATCH
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

/* a work space aligned to 64 bytes (the vectors' loads need their own alignment) */
static void *aligned(size_t bytes, void **block)
{
    *block = malloc(bytes + 64);
    if (*block == NULL) return NULL;
    return (void *)(((uintptr_t)*block + 63) & ~(uintptr_t)63);
}

static PyObject *statistics(PyObject *self, PyObject *args)
{
    Py_buffer sigma, mu, rotation, frame, pairs, order, query, key, nu, logdet;
    int n, itemsize, diagonal = 0, path = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*w*w*w*ii|pi", &sigma, &mu, &rotation, &frame, &pairs,
                          &order, &query, &key, &nu, &logdet, &n, &itemsize, &diagonal, &path))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t failed = 0, count = 0, frames = 0, width = 0, groups = 0;
    const int lanes = itemsize == 8 ? 4 : 8;
    unsigned char *seen = NULL;
    int ok = 0;
    if (n < 1 || n > 1024 || (itemsize != 8 && itemsize != 4)) {
        PyErr_SetString(PyExc_ValueError, "n must be in 1 .. 1024 and itemsize 8 or 4");
        goto done;
    }
    count = mu.len / ((Py_ssize_t)n * itemsize);
    frames = rotation.len / ((Py_ssize_t)n * n * itemsize);
    width = (Py_ssize_t)n * (n + 1) / 2 + n + 2;
    if (count < 1 || mu.len != count * n * itemsize || sigma.len != count * n * (diagonal ? 1 : n) * itemsize
        || rotation.len != frames * n * n * itemsize || frame.len != count * 8
        || pairs.len != (Py_ssize_t)n * (n + 1) * 4 || order.len % (8 * lanes) != 0
        || query.len != count * width * itemsize || key.len != count * width * itemsize
        || nu.len != count * n * itemsize || logdet.len != count * itemsize) {
        PyErr_SetString(PyExc_ValueError, "buffer sizes do not match count, n and itemsize");
        goto done;
    }
    const int64_t *index = (const int64_t *)frame.buf;
    for (Py_ssize_t i = 0; i < count; i++)
        if (index[i] < 0 || index[i] >= frames) {
            PyErr_SetString(PyExc_ValueError, "frame index out of range");
            goto done;
        }
    /* the order: groups of LANES items, -1 for an empty lane (never lane 0), every item once */
    const int64_t *sequence = (const int64_t *)order.buf;
    groups = order.len / (8 * lanes);
    seen = calloc((size_t)count, 1);
    if (seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t placed = 0;
    for (Py_ssize_t i = 0; i < groups * lanes; i++) {
        const int64_t it = sequence[i];
        if (it < -1 || it >= count || (it == -1 && i % lanes == 0) || (it >= 0 && seen[it]++)) {
            PyErr_SetString(PyExc_ValueError, "order must hold every item once, in groups of lanes whose "
                                              "first lane is not empty");
            goto done;
        }
        placed += it >= 0;
    }
    if (placed != count) {
        PyErr_SetString(PyExc_ValueError, "order must hold every item once, in groups of lanes whose "
                                          "first lane is not empty");
        goto done;
    }
    const int32_t *table = (const int32_t *)pairs.buf;
    const Py_ssize_t half = (Py_ssize_t)n * (n + 1) / 2;
    for (Py_ssize_t t = 0; t < half; t++)
        if (table[t] < 0 || table[t] > table[half + t] || table[half + t] >= n) {
            PyErr_SetString(PyExc_ValueError, "pairs must be (a, b) with 0 <= a <= b < n");
            goto done;
        }
    const size_t bytes = (size_t)work_vectors(n) * 32;
    void *block;
    void *work = aligned(bytes, &block);
    if (work == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(work, 0, bytes);            /* the padding stays zero */
    const int use_wide = path < 0 ? wide() : path > 0 && wide();
#define RUN(kernel, real)                                                                          \
    kernel((const real *)sigma.buf, (const real *)mu.buf, (const real *)rotation.buf, index, table,  \
           sequence, groups, query.buf, key.buf, nu.buf, logdet.buf, n, diagonal, work)
    Py_BEGIN_ALLOW_THREADS
#if DISPATCH
    if (itemsize == 8)
        failed = use_wide ? RUN(statistics_f64_avx2, double) : RUN(statistics_f64, double);
    else
        failed = use_wide ? RUN(statistics_f32_avx2, float) : RUN(statistics_f32, float);
#else
    failed = itemsize == 8 ? RUN(statistics_f64, double) : RUN(statistics_f32, float);
#endif
    Py_END_ALLOW_THREADS
#undef RUN
    (void)use_wide;
    free(block);
    ok = 1;
done:
    free(seen);
    if (ok) result = PyLong_FromSsize_t(failed);
    PyBuffer_Release(&sigma);
    PyBuffer_Release(&mu);
    PyBuffer_Release(&rotation);
    PyBuffer_Release(&frame);
    PyBuffer_Release(&pairs);
    PyBuffer_Release(&order);
    PyBuffer_Release(&query);
    PyBuffer_Release(&key);
    PyBuffer_Release(&nu);
    PyBuffer_Release(&logdet);
    return result;
}

static PyObject *instruction_set(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyUnicode_FromString(wide() ? "avx2+fma" : "baseline");
}

static PyMethodDef methods[] = {
    {"statistics", statistics, METH_VARARGS,
     "statistics(sigma, mu, rotation, frame, pairs, order, query, key, nu, logdet, n, itemsize[, diagonal, path]) -> failures"},
    {"instruction_set", instruction_set, METH_NOARGS, "the instruction set the kernel runs with"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kl_statistics_cpu",
                                    "Full-Sigma statistics of the GT structured kernel (C).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kl_statistics_cpu(void)
{
    PyObject *created = PyModule_Create(&module);
    if (created == NULL) return NULL;
    if (PyModule_AddIntConstant(created, "LANES_FLOAT64", 4) < 0
        || PyModule_AddIntConstant(created, "LANES_FLOAT32", 8) < 0) {
        Py_DECREF(created);
        return NULL;
    }
    return created;
}

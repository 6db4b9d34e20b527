/* attngeom.kernels._softmax_cpu: softmax by rows with glibc's vector exp (libmvec, AVX2), for
 * NumPy, whose float64 exp is scalar on CPUs without AVX-512 (9.5 ns an element on the
 * development machine against 2.2 in float32; issue 26).  See attngeom/kernels/softmax_cpu.py.
 *
 * rows(x, out, scale, count[, itemsize]): x and out C-contiguous buffers of rows of count
 * numbers, float64 (itemsize 8, the default) or float32 (4);
 *     out_ij = exp(scale (x_ij - r_i)) / sum_j exp(scale (x_ij - r_i)),
 * r_i the row's maximum when scale > 0 and its minimum when scale < 0 (the largest exponent
 * is 0).  scale (x - r) is the number NumPy's formulas exponentiate: x - max for scale 1, and
 * (min - K) / kappa as (K - min) (-1/kappa) (IEEE subtraction and negation are exact mirror
 * images).  A row with a NaN gives NaNs; exponents below log(smallest normal) give 0 (exp's
 * subnormal results: below the smallest normal number, where the row's largest weight is at
 * least 1 / count).  available() says whether the CPU has AVX2 and FMA (libmvec's AVX2 exp
 * needs them); rows() raises RuntimeError where it does not.  The GIL is released while it
 * runs. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <immintrin.h>
#include <math.h>

/* libmvec (glibc >= 2.22): exp of four doubles and of eight floats, AVX2 (float64 within 3
 * ulp of NumPy's exp, float32 within 2.8 ulp of the exact one: tests/test_softmax_cpu.py) */
extern __m256d _ZGVdN4v_exp(__m256d);
extern __m256 _ZGVdN8v_expf(__m256);

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

static int available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* the row routine for float64 (four lanes) and float32 (eight), softmax_body.h */
#define REAL double
#define LANES 4
#define VEC __m256d
#define SUFFIX f64
#define LOAD _mm256_loadu_pd
#define STORE _mm256_storeu_pd
#define SET1 _mm256_set1_pd
#define ZERO _mm256_setzero_pd
#define MAX _mm256_max_pd
#define MIN _mm256_min_pd
#define SUB _mm256_sub_pd
#define MUL _mm256_mul_pd
#define ADD _mm256_add_pd
#define DIV _mm256_div_pd
#define OR _mm256_or_pd
#define UNORDERED(v) _mm256_cmp_pd(v, v, _CMP_UNORD_Q)
#define MOVEMASK _mm256_movemask_pd
#define EXP _ZGVdN4v_exp
#define LESS(a, b) _mm256_cmp_pd(a, b, _CMP_LT_OQ)
#define ANDNOT _mm256_andnot_pd
#define LOG_TINY (-708.39641853226408)   /* log(DBL_MIN), rounded up */
#define FMAX fmax
#define FMIN fmin
#include "softmax_body.h"
#undef REAL
#undef LANES
#undef VEC
#undef SUFFIX
#undef LOAD
#undef STORE
#undef SET1
#undef ZERO
#undef MAX
#undef MIN
#undef SUB
#undef MUL
#undef ADD
#undef DIV
#undef OR
#undef UNORDERED
#undef MOVEMASK
#undef EXP
#undef LESS
#undef ANDNOT
#undef LOG_TINY
#undef FMAX
#undef FMIN

#define REAL float
#define LANES 8
#define VEC __m256
#define SUFFIX f32
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#define SET1 _mm256_set1_ps
#define ZERO _mm256_setzero_ps
#define MAX _mm256_max_ps
#define MIN _mm256_min_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps
#define ADD _mm256_add_ps
#define DIV _mm256_div_ps
#define OR _mm256_or_ps
#define UNORDERED(v) _mm256_cmp_ps(v, v, _CMP_UNORD_Q)
#define MOVEMASK _mm256_movemask_ps
#define EXP _ZGVdN8v_expf
#define LESS(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define ANDNOT _mm256_andnot_ps
#define LOG_TINY (-87.3365402f)           /* log(FLT_MIN), rounded up */
#define FMAX fmaxf
#define FMIN fminf
#include "softmax_body.h"

static PyObject *rows(PyObject *self, PyObject *args)
{
    Py_buffer x, out;
    double scale;
    Py_ssize_t count;
    int itemsize = 8;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*dn|i", &x, &out, &scale, &count, &itemsize)) return NULL;
    PyObject *result = NULL;
    if (!available()) {
        PyErr_SetString(PyExc_RuntimeError, "this CPU lacks AVX2 or FMA (libmvec's AVX2 exp)");
    } else if (count < 1 || (itemsize != 8 && itemsize != 4) || x.len != out.len || x.len % (count * itemsize) != 0
               || !(scale != 0) || !isfinite(scale) || (itemsize == 4 && !isfinite((float)scale))) {
        PyErr_SetString(PyExc_ValueError, "x and out must hold rows of count float64 (itemsize 8) or float32 "
                                          "(itemsize 4) numbers; scale finite, not 0");
    } else {
        const Py_ssize_t total = x.len / (count * itemsize);
        Py_BEGIN_ALLOW_THREADS
        if (itemsize == 8)
            softmax_rows_f64((const double *)x.buf, (double *)out.buf, total, count, scale);
        else
            softmax_rows_f32((const float *)x.buf, (float *)out.buf, total, count, (float)scale);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

static PyObject *is_available(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyBool_FromLong(available());
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS, "rows(x, out, scale, count[, itemsize]): softmax of scale * x by rows of count"},
    {"available", is_available, METH_NOARGS, "whether this CPU has AVX2 and FMA"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_softmax_cpu",
                                    "Softmax by rows with glibc's vector exp (float64, float32).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__softmax_cpu(void) { return PyModule_Create(&module); }

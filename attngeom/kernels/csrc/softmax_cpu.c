/* attngeom.kernels._softmax_cpu: softmax by rows in float64 with glibc's vector exp (libmvec,
 * four lanes of AVX2), for NumPy, whose float64 exp is scalar on CPUs without AVX-512 (9.5 ns
 * an element on the development machine against 2.2 in float32; issue 26).  See
 * attngeom/kernels/softmax_cpu.py.
 *
 * rows(x, out, scale, count): x and out C-contiguous float64 buffers of rows of count numbers;
 * out_ij = exp(scale (x_ij - r_i)) / sum_j exp(scale (x_ij - r_i)), with r_i the row's
 * maximum when scale > 0 and its minimum when scale < 0 (the largest exponent is 0); a row
 * with a NaN gives NaNs.  scale (x - r) is the number NumPy's formulas exponentiate: x - max
 * for scale 1, and (min - K) / kappa as (K - min) (-1/kappa) (IEEE subtraction and negation
 * are exact mirror images).  available() says whether the CPU has AVX2 and FMA (libmvec's
 * four-lane exp needs them); rows() raises RuntimeError where it does not.  The GIL is
 * released while it runs. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <immintrin.h>
#include <math.h>

/* libmvec (glibc >= 2.22): exp of four doubles, AVX2; within 3 ulp of NumPy's exp over
 * [-745, 709] in tests/test_softmax_cpu.py */
extern __m256d _ZGVdN4v_exp(__m256d);

static int available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

__attribute__((target("avx2,fma"))) static double lane_sum(__m256d v)
{
    double lanes[4];
    _mm256_storeu_pd(lanes, v);
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

__attribute__((target("avx2,fma"))) static double exp_one(double x)
{
    double lanes[4];
    _mm256_storeu_pd(lanes, _ZGVdN4v_exp(_mm256_set1_pd(x)));
    return lanes[0];
}

__attribute__((target("avx2,fma"))) static void softmax_rows(const double *x, double *out, Py_ssize_t rows,
                                                             Py_ssize_t count, double scale)
{
    const int largest = scale > 0;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const double *row = x + r * count;
        double *o = out + r * count;
        /* the reference: the row's maximum (scale > 0) or minimum, NaN if the row has one */
        __m256d best = _mm256_set1_pd(row[0]), unordered = _mm256_setzero_pd();
        Py_ssize_t j = 0;
        for (; j + 4 <= count; j += 4) {
            const __m256d v = _mm256_loadu_pd(row + j);
            best = largest ? _mm256_max_pd(best, v) : _mm256_min_pd(best, v);
            unordered = _mm256_or_pd(unordered, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
        }
        double lanes[4], reference;
        _mm256_storeu_pd(lanes, best);
        reference = lanes[0];
        for (int l = 1; l < 4; l++) reference = largest ? fmax(reference, lanes[l]) : fmin(reference, lanes[l]);
        int nan = _mm256_movemask_pd(unordered) != 0;
        for (; j < count; j++) {
            nan |= isnan(row[j]);
            reference = largest ? fmax(reference, row[j]) : fmin(reference, row[j]);
        }
        if (nan) reference = NAN;
        /* exp(scale (x - reference)) and their sum, then the division */
        const __m256d shift = _mm256_set1_pd(reference), factor = _mm256_set1_pd(scale);
        __m256d total = _mm256_setzero_pd();
        double tail = 0.0;
        for (j = 0; j + 4 <= count; j += 4) {
            const __m256d e = _ZGVdN4v_exp(_mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(row + j), shift), factor));
            _mm256_storeu_pd(o + j, e);
            total = _mm256_add_pd(total, e);
        }
        for (; j < count; j++) {
            o[j] = exp_one((row[j] - reference) * scale);
            tail += o[j];
        }
        const double sum = lane_sum(total) + tail;
        const __m256d divisor = _mm256_set1_pd(sum);
        for (j = 0; j + 4 <= count; j += 4) _mm256_storeu_pd(o + j, _mm256_div_pd(_mm256_loadu_pd(o + j), divisor));
        for (; j < count; j++) o[j] /= sum;
    }
}

static PyObject *rows(PyObject *self, PyObject *args)
{
    Py_buffer x, out;
    double scale;
    Py_ssize_t count;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*dn", &x, &out, &scale, &count)) return NULL;
    PyObject *result = NULL;
    if (!available()) {
        PyErr_SetString(PyExc_RuntimeError, "this CPU lacks AVX2 or FMA (libmvec's four-lane exp)");
    } else if (count < 1 || x.len != out.len || x.len % (count * 8) != 0 || !(scale != 0) || !isfinite(scale)) {
        PyErr_SetString(PyExc_ValueError, "x and out must hold rows of count float64 numbers; scale finite, not 0");
    } else {
        const Py_ssize_t total = x.len / (count * 8);
        Py_BEGIN_ALLOW_THREADS
        softmax_rows((const double *)x.buf, (double *)out.buf, total, count, scale);
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
    {"rows", rows, METH_VARARGS, "rows(x, out, scale, count): softmax of scale * x by rows of count"},
    {"available", is_available, METH_NOARGS, "whether this CPU has AVX2 and FMA"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_softmax_cpu",
                                    "Softmax by rows with glibc's vector exp (float64).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__softmax_cpu(void) { return PyModule_Create(&module); }

"""Softmax by rows for NumPy with glibc's vector exp, float64 and float32 (issue 26).

NumPy's float64 ``exp`` is scalar on CPUs without AVX-512: 9.5 ns an element on the
development machine (AMD EPYC, AVX2), against 2.2 ns for its float32 ``exp``.  At GT's size
the softmax of the structured kernel exponentiates 15 x 128 x 128 numbers: 2.2-2.3 ms of
(b)'s 19, where the floor (frame exponentials + pairwise product) is 9.6.  The C extension
``attngeom.kernels._softmax_cpu`` (``attngeom/kernels/csrc/softmax_cpu.c``) computes

    out_ij = exp(scale (x_ij - r_i)) / sum_j exp(scale (x_ij - r_i)),

r_i the row's maximum (scale > 0) or minimum (scale < 0), with libmvec's four-lane AVX2 exp
(0.55 against 2.34 ms for those 245,760 exponentials), and in float32 with its eight-lane
expf (NumPy's own float32 exp is vectorized, but the softmax's five passes took 1.0-1.1 ms
there against 0.53 for float64 with the vector exp): the same exponents as NumPy's formulas
(x - max; (min - K) / kappa, :func:`attngeom.geometry_proofs.gauge.accelerated.kl_structured._attention_weights`), their
exponentials within 3 ulp of NumPy's in float64 and 2.8 ulp of the exact ones in float32
(NumPy's float32 exp: 2.3), the sums in another order
(``tests/test_softmax_cpu.py``).  -inf entries give 0, a row with a NaN NaNs, as NumPy does;
exponents below log(smallest normal) give 0 instead of a subnormal number (below 1.2e-38 in
float32, 2.2e-308 in float64, where the row's largest weight is at least 1 / N): libmvec
computes such lanes one by one, and in float32 at GT's size 98% of the exponents are there
(a softmax of exponents in [-200, 0] took 2.9 ms that way against 0.26).

It applies (:func:`applies`) to float64 and float32 NumPy arrays where the extension was
built (Linux on x86-64 with glibc's libmvec; ``setup.py``) and the CPU has AVX2 and FMA;
elsewhere the callers keep NumPy's ``exp``.
"""

from __future__ import annotations

import functools

import numpy as np

from attngeom.kernels.switch import Switch

#: on, or off inside ``disabled()`` (the callers then use NumPy's exp: the tests' and
#: benchmarks' A/B)
SWITCH = Switch()
disabled = SWITCH.disabled


@functools.lru_cache(maxsize=1)
def _extension():
    """The compiled module where it was built and this CPU runs it, else None."""
    try:
        from attngeom.kernels import _softmax_cpu
    except ImportError:
        return None
    return _softmax_cpu if _softmax_cpu.available() else None


def available() -> bool:
    """Whether the vector-exp softmax runs here (built, AVX2 and FMA)."""
    return _extension() is not None


def applies(x) -> bool:
    """True for a non-empty float64 or float32 NumPy array where :func:`available` and not
    disabled."""
    return (SWITCH.enabled() and isinstance(x, np.ndarray) and x.dtype in (np.float64, np.float32)
            and x.ndim >= 1 and x.size > 0 and available())


def softmax(x: np.ndarray, scale: float) -> np.ndarray:
    """softmax_j(scale x_ij) over the last axis, stabilized by the row's largest exponent
    (a new array of x's dtype; ``scale`` finite and not 0, rounded to float32 for float32
    as NumPy rounds a Python float against a float32 array)."""
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    _extension().rows(x, out, float(scale), x.shape[-1], x.itemsize)
    return out

"""The elementary operations the maps of geometry_proofs are written in, exact or numeric.

A witness (an attention layer, a surface) is written once as ``f(phi, ops)`` and runs

* exactly with :class:`SymbolicOps`: arrays are NumPy object arrays of SymPy expressions,
  constants are exact rationals, so ``f`` gives the formula the claims expand and
  differentiate;
* numerically with :class:`ArrayOps` on a :class:`attngeom.kernels.backend.Backend`: arrays are
  NumPy, PyTorch or JAX arrays, so torch and jax can differentiate ``f`` by autodiff.

Both support ``@``, ``+``, ``*`` (elementwise), indexing and ``.sum(axis=...)`` through the
array types themselves; what differs is spelled here.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput
from attngeom.core.expressions import parse_sympy


#: The elementwise functions of both kinds of ops, one method each (``ops.exp(x)``, ...):
#: SymPy and the array libraries use the same names.
ELEMENTWISE = ("exp", "log", "sin", "cos", "sqrt", "tanh", "sinh", "cosh")


class _Ops:
    """Operations defined through ``exp`` and ``log``, shared by both kinds, and the
    methods of :data:`ELEMENTWISE` (added below), each calling ``_elementwise(name, x)``
    of the kind."""

    def sigmoid(self, x):
        """sigma(x) = 1 / (1 + e^{-x}), the gate nonlinearity of GEC §2.2."""
        return 1 / (1 + self.exp(-x))

    def logit(self, z):
        """sigma^{-1}(z) = log(z / (1 - z)) on (0, 1)."""
        return self.log(z / (1 - z))


def _elementwise_method(name: str):
    def method(self, x):
        return self._elementwise(name, x)
    method.__name__, method.__qualname__ = name, f"_Ops.{name}"
    method.__doc__ = f"{name} of each entry of x (an array) or of x (a scalar)."
    return method


for _name in ELEMENTWISE:
    setattr(_Ops, _name, _elementwise_method(_name))


class SymbolicOps(_Ops):
    """SymPy arithmetic on NumPy object arrays.  Exact by default: float constants are
    refused, so nothing proved can hide a rounding; ``allow_floats=True`` admits them as
    SymPy Floats (for formulas that are only lambdified for the NumPy backend)."""

    pi = sympy.pi

    def __init__(self, allow_floats: bool = False):
        self.allow_floats = allow_floats

    def const(self, values):
        """An array of SymPy numbers from ints, Fractions, SymPy numbers (and floats if allowed)."""
        array = np.asarray(values, dtype=object)
        out = np.empty(array.shape, dtype=object)
        for index in np.ndindex(array.shape):
            out[index] = self.scalar(array[index])
        return out

    def scalar(self, value):
        if self.allow_floats and isinstance(value, (float, np.floating)):
            return sympy.Float(float(value))
        return _exact(value)

    def stack(self, items, axis: int = 0):
        return np.stack([np.asarray(item, dtype=object) for item in items], axis=axis)

    def concat(self, items):
        return np.concatenate([np.asarray(item, dtype=object) for item in items])

    def _apply(self, function, x):
        if isinstance(x, np.ndarray):
            return np.vectorize(function, otypes=[object])(x)
        return function(x)

    def _elementwise(self, name: str, x):
        """sympy.<name> of each entry (exp, log, sin, ...: see ELEMENTWISE)."""
        return self._apply(getattr(sympy, name), x)

    def softmax(self, x):
        """Softmax along the last axis as 1 / sum_j exp(x_j - x_i): SymPy then cancels
        exp(s) exp(-s) and exp(log a - log b) on its own."""
        differences = x[..., None, :] - x[..., :, None]
        return 1 / self.exp(differences).sum(axis=-1)


def _exact(value):
    if isinstance(value, (float, np.floating)):
        raise BadInput(f"symbolic evaluation needs exact constants; got the float {value!r}")
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return sympy.sympify(value, strict=True)


class ArrayOps(_Ops):
    """Floating point on one backend (float64); differentiable by torch / jax autodiff."""

    pi = float(np.pi)

    def __init__(self, backend: Backend):
        self.backend = backend
        self.xp = backend.module

    def const(self, values):
        return self.backend.asarray(np.asarray(values, dtype=float))

    def _array(self, x):
        # a Python or NumPy number (a constant term of an expression) becomes a 0-d array
        return self.const(x) if isinstance(x, (int, float, np.number)) else x

    def scalar(self, value):
        """A Python float (ints, Fractions, SymPy numbers converted)."""
        return float(value)

    def stack(self, items, axis: int = 0):
        return self.xp.stack(list(items), axis)

    def concat(self, items):
        return self.backend.concat(list(items), 0)

    def _elementwise(self, name: str, x):
        """The backend's <name> (numpy / torch / jax.numpy spell them alike)."""
        return getattr(self.xp, name)(self._array(x))

    def softmax(self, x):
        """Softmax along the last axis (shifted by the maximum for stability)."""
        e = self.exp(x - self.xp.amax(x, axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


#: The SymPy function types a parsed expression can hold, by the name of the ops method
#: that evaluates them (sqrt is not among them: SymPy writes it as a power).
_FUNCTIONS = {getattr(sympy, name): name for name in ELEMENTWISE if name != "sqrt"}


def parse_expression(text: str, names: tuple[str, ...]) -> sympy.Expr:
    """A SymPy expression in the variables ``names`` (e.g. ``psi`` of GEC Lemma 3.11),
    or BadInput naming what is wrong with it.

    Read by the grammar of :mod:`attngeom.core.expressions` (never by ``sympify``): numbers,
    the variables, ``pi``, ``+ - * / ^ **``, parentheses and the functions of
    :data:`ELEMENTWISE`; rational constant exponents within its limits."""
    symbols = {name: sympy.Symbol(name, real=True) for name in names}
    shown = ascii(text if len(text) <= 60 else text[:57] + "...")
    return parse_sympy(text, symbols, {name: getattr(sympy, name) for name in ELEMENTWISE},
                       {"pi": sympy.pi}, f"the expression {shown}",
                       hint=f"write it in {', '.join(names)}, e.g. 1/2 + u**2/8")


def evaluate_expression(expr: sympy.Expr, values: dict, ops):
    """Evaluate a parsed expression with ``ops`` (exact or on a backend, differentiably),
    ``values`` mapping each symbol name to a scalar of that kind."""
    if isinstance(ops, SymbolicOps):
        return expr.subs({sympy.Symbol(k, real=True): v for k, v in values.items()})
    if expr.is_Symbol:
        return values[expr.name]
    if not expr.free_symbols:
        return float(expr)
    args = [evaluate_expression(arg, values, ops) for arg in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for arg in args[1:]:
            out = out * arg
        return out
    if expr.is_Pow:
        return args[0] ** args[1]
    return getattr(ops, _FUNCTIONS[type(expr)])(args[0])

"""The elementary operations the maps of geometry_proofs are written in, exact or numeric.

A witness (an attention layer, a surface) is written once as ``f(phi, ops)`` and runs

* exactly with :class:`SymbolicOps`: arrays are NumPy object arrays of SymPy expressions,
  constants are exact rationals, so ``f`` gives the formula the claims expand and
  differentiate;
* numerically with :class:`ArrayOps` on a :class:`kernels.backend.Backend`: arrays are
  NumPy, PyTorch or JAX arrays, so torch and jax can differentiate ``f`` by autodiff.

Both support ``@``, ``+``, ``*`` (elementwise), indexing and ``.sum(axis=...)`` through the
array types themselves; what differs is spelled here.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from kernels.backend import Backend
from kernels.errors import BadInput


class _Ops:
    """Operations defined through ``exp`` and ``log``, shared by both kinds."""

    def sigmoid(self, x):
        """sigma(x) = 1 / (1 + e^{-x}), the gate nonlinearity of GEC §2.2."""
        return 1 / (1 + self.exp(-x))

    def logit(self, z):
        """sigma^{-1}(z) = log(z / (1 - z)) on (0, 1)."""
        return self.log(z / (1 - z))

    def softmax(self, x):
        """Softmax along the last axis."""
        e = self.exp(self._shift(x))
        return e / e.sum(axis=-1, keepdims=True)


class SymbolicOps(_Ops):
    """Exact arithmetic: NumPy object arrays of SymPy expressions."""

    pi = sympy.pi

    def const(self, values):
        """An exact array from ints, Fractions or SymPy numbers (floats are refused)."""
        array = np.asarray(values, dtype=object)
        out = np.empty(array.shape, dtype=object)
        for index in np.ndindex(array.shape):
            out[index] = _exact(array[index])
        return out

    def stack(self, items, axis: int = 0):
        return np.stack([np.asarray(item, dtype=object) for item in items], axis=axis)

    def concat(self, items):
        return np.concatenate([np.asarray(item, dtype=object) for item in items])

    def _apply(self, function, x):
        if isinstance(x, np.ndarray):
            return np.vectorize(function, otypes=[object])(x)
        return function(x)

    def exp(self, x):
        return self._apply(sympy.exp, x)

    def log(self, x):
        return self._apply(sympy.log, x)

    def sin(self, x):
        return self._apply(sympy.sin, x)

    def cos(self, x):
        return self._apply(sympy.cos, x)

    def sqrt(self, x):
        return self._apply(sympy.sqrt, x)

    def tanh(self, x):
        return self._apply(sympy.tanh, x)

    def sinh(self, x):
        return self._apply(sympy.sinh, x)

    def cosh(self, x):
        return self._apply(sympy.cosh, x)

    def _shift(self, x):
        # exact arithmetic needs no max-subtraction for stability
        return x


def _exact(value):
    if isinstance(value, (float, np.floating)):
        raise BadInput(f"symbolic evaluation needs exact constants; got the float {value!r}")
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return sympy.sympify(value)


class ArrayOps(_Ops):
    """Floating point on one backend (float64); differentiable by torch / jax autodiff."""

    pi = float(np.pi)

    def __init__(self, backend: Backend):
        self.backend = backend
        self.xp = backend.module

    def const(self, values):
        return self.backend.asarray(np.asarray(values, dtype=float))

    def stack(self, items, axis: int = 0):
        return self.xp.stack(list(items), axis)

    def concat(self, items):
        return self.backend.concat(list(items), 0)

    def exp(self, x):
        return self.xp.exp(x)

    def log(self, x):
        return self.xp.log(x)

    def sin(self, x):
        return self.xp.sin(x)

    def cos(self, x):
        return self.xp.cos(x)

    def sqrt(self, x):
        return self.xp.sqrt(x)

    def tanh(self, x):
        return self.xp.tanh(x)

    def sinh(self, x):
        return self.xp.sinh(x)

    def cosh(self, x):
        return self.xp.cosh(x)

    def _shift(self, x):
        return x - self.xp.amax(x, axis=-1, keepdims=True)


#: SymPy functions a user expression may use, by the name of the ops method.
_FUNCTIONS = {sympy.exp: "exp", sympy.log: "log", sympy.sin: "sin", sympy.cos: "cos",
              sympy.tanh: "tanh", sympy.sinh: "sinh", sympy.cosh: "cosh"}


def parse_expression(text: str, names: tuple[str, ...]) -> sympy.Expr:
    """A SymPy expression in the variables ``names`` (e.g. ``psi`` of GEC Lemma 3.11),
    or BadInput naming what is wrong with it."""
    symbols = {name: sympy.Symbol(name, real=True) for name in names}
    try:
        expr = sympy.sympify(text, locals=symbols)
    except (sympy.SympifyError, SyntaxError, TypeError) as error:
        raise BadInput(f"cannot parse the expression {text!r}: {str(error).splitlines()[0]}") from None
    if not isinstance(expr, sympy.Expr):
        raise BadInput(f"{text!r} is not an expression")
    extra = expr.free_symbols - set(symbols.values())
    if extra:
        raise BadInput(f"{text!r} uses {', '.join(sorted(map(str, extra)))}; "
                       f"only {', '.join(names)} are allowed")
    unsupported = {type(f).__name__ for f in expr.atoms(sympy.Function)
                   if type(f) not in _FUNCTIONS}
    if unsupported:
        raise BadInput(f"{text!r} uses {', '.join(sorted(unsupported))}; allowed functions: "
                       + ", ".join(sorted(_FUNCTIONS.values())))
    return expr


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

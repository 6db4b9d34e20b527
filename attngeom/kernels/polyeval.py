"""Batched evaluation of polynomial families: compile once, evaluate on B points at a time.

A family of P polynomials in N variables is compiled to

* a monomial table ``monomials`` of shape (M, D): row m lists the variable indices of the
  m-th distinct monomial with repetition (y_3^2 y_7 -> [3, 3, 7]), padded with the index N
  that points at a constant column of ones;
* exact coefficients as sparse triplets (monomial, polynomial, rational).

Evaluation builds the (B, M) monomial values by D gathers and products, then one matrix
product with the (M, P) coefficient matrix: the same code exact (int64 residues mod p,
no overflow) and in floating point on any backend.  No per-point Python loop, no
``lambdify``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy

from attngeom.kernels.backend import Backend, get_backend
from attngeom.kernels.primefield import matmul_mod_p, residue


@dataclass(frozen=True)
class CompiledFamily:
    """P polynomials over Q in N variables, ready for batched evaluation.

    Attributes
    ----------
    n_variables : int, N
    monomials : int64 array, shape=[M, D]
    entries : tuple of (monomial index, polynomial index, Fraction)
    degrees : tuple of int, the total degree of each polynomial
    """

    n_variables: int
    monomials: np.ndarray
    entries: tuple
    degrees: tuple

    @property
    def n_polynomials(self) -> int:
        return len(self.degrees)

    @property
    def n_monomials(self) -> int:
        return self.monomials.shape[0]

    def coefficient_matrix_mod_p(self, prime: int) -> np.ndarray:
        out = np.zeros((self.n_monomials, self.n_polynomials), dtype=np.int64)
        for m, j, c in self.entries:
            out[m, j] = (out[m, j] + residue(c, prime)) % prime
        return out

    def coefficient_matrix_float(self) -> np.ndarray:
        out = np.zeros((self.n_monomials, self.n_polynomials), dtype=np.float64)
        for m, j, c in self.entries:
            out[m, j] += float(c)
        return out

    # -- evaluation --------------------------------------------------------------------
    #: Rows of a batch evaluated at once: keeps the (rows, M) monomial table near 256 MB.
    TABLE_ENTRIES = 2**25

    def _on(self, backend: Backend, prime: int | None):
        """(monomial index, coefficients, |coefficients|) on ``backend``, built once each."""
        cache = self.__dict__.setdefault("_backend_cache", {})
        key = (backend.label, prime)
        if key not in cache:
            index = backend.asarray(self.monomials, dtype="int64")
            if prime:
                cache[key] = (index, backend.asarray(self.coefficient_matrix_mod_p(prime), "int64"), None)
            else:
                coeffs = self.coefficient_matrix_float()
                cache[key] = (index, backend.asarray(coeffs), backend.asarray(np.abs(coeffs)))
        return cache[key]

    def _monomial_values(self, points, backend: Backend, prime: int | None, index):
        """(B, M) monomial values; ``points`` has shape (B, N) on ``backend``."""
        batch = points.shape[0]
        ones = backend.asarray(np.ones((batch, 1)), dtype="int64" if prime else "float64")
        padded = backend.concat([points, ones], axis=1)
        table = padded[:, index[:, 0]]
        for k in range(1, self.monomials.shape[1]):
            table = table * padded[:, index[:, k]]
            if prime:
                table = backend.remainder(table, prime)
        return table

    def _row_chunks(self, batch: int):
        rows = max(1, self.TABLE_ENTRIES // max(self.n_monomials, 1))
        return [slice(start, min(start + rows, batch)) for start in range(0, batch, rows)] or [slice(0, 0)]

    def evaluate_mod_p(self, points, prime: int, backend: Backend | None = None):
        """Values mod p, shape=[B, P], for int64 residues ``points`` of shape [B, N]."""
        backend = backend or get_backend("numpy")
        index, coeffs, _ = self._on(backend, prime)
        parts = [matmul_mod_p(self._monomial_values(points[rows], backend, prime, index), coeffs, prime)
                 for rows in self._row_chunks(points.shape[0])]
        return parts[0] if len(parts) == 1 else backend.concat(parts, axis=0)

    def evaluate_float(self, points, backend: Backend | None = None):
        """(values, scales), each shape=[B, P]: the polynomial values and sum |coefficient x monomial|.

        ``scales`` is the natural size of each value: a relative residual |value| / scale
        near machine precision means the terms cancelled to rounding error.
        """
        backend = backend or get_backend("numpy")
        index, coeffs, magnitudes = self._on(backend, None)
        values, scales = [], []
        for rows in self._row_chunks(points.shape[0]):
            table = self._monomial_values(points[rows], backend, None, index)
            values.append(table @ coeffs)
            scales.append(backend.abs(table) @ magnitudes)
        if len(values) == 1:
            return values[0], scales[0]
        return backend.concat(values, axis=0), backend.concat(scales, axis=0)


def compile_polynomials(polynomials, variable_index: dict) -> CompiledFamily:
    """Compile SymPy polynomials in the symbols of ``variable_index`` (symbol -> column).

    Raises KeyError naming a symbol that is not a variable.
    """
    n_vars = len(variable_index)
    monomial_ids: dict[tuple, int] = {}
    entries = []
    degrees = []
    for j, poly in enumerate(polynomials):
        expr = sympy.sympify(poly, strict=True)
        gens = sorted(expr.free_symbols, key=lambda s: variable_index[s])
        if not gens:
            terms = [((), expr)] if expr != 0 else []
        else:
            terms = sympy.Poly(expr, *gens).terms()
        degree = 0
        for exps, coeff in terms:
            key = tuple(sorted(v for g, e in zip(gens, exps) for v in [variable_index[g]] * e))
            degree = max(degree, len(key))
            m = monomial_ids.setdefault(key, len(monomial_ids))
            entries.append((m, j, Fraction(int(coeff.p), int(coeff.q))))
        degrees.append(degree)
    width = max([len(k) for k in monomial_ids] + [1])
    table = np.full((len(monomial_ids), width), n_vars, dtype=np.int64)
    for key, m in monomial_ids.items():
        table[m, :len(key)] = key
    return CompiledFamily(n_vars, table, tuple(entries), tuple(degrees))

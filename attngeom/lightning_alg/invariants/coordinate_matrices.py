"""Matrices whose entries are coefficient coordinates, and families of their minors
(ADM §5 and Appendix A).

The determinantal families of ADM §5 and Appendix A are minors of matrices of y-coordinates:

* the slices M_{n,j}^{(k)} of the scaled cross-column tensor (ADM Prop 24),
  M^{(k)}[k1, k2] = T~_{(k1,n),(k2,n),(k,j)} = y_{n,j}({k1,k2}, k), a symmetric d x d matrix;
* the unbalanced flattening F_{n,j} (ADM Thm 25, Thm 27), of size C(d+1,2) x d, rows
  indexed by the multisets {k1 <= k2} in lexicographic order and columns by k3:
  F[{k1,k2}, k3] = y_{n,j}({k1,k2}, k3);
* the cross-row matrix C_S (ADM Prop 44), d' x |S|, entry (i, s) = y^{[i]}_s.

A :class:`CoordinateMatrix` holds such a matrix as coordinate indices of a view.  A
:class:`MinorCombinationFamily` is a family whose members are integer combinations of
minors of coordinate matrices, sum_k c_k det(Y[entries_k]); it is a
:class:`~attngeom.lightning_alg.invariants.structured.StructuredFamily`, so its members are
evaluated as determinants (exactly over QQ[weights], mod p, or in float64 with error
scales) by :func:`~attngeom.lightning_alg.invariants.structured.check_vanishing`, never expanded
unless printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations, islice
from math import factorial
from typing import Callable

import numpy as np

from attngeom.kernels.monomials import sum_terms_mod_p
from attngeom.kernels.primefield import to_nmod_mat
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariant import format_polynomial
from attngeom.lightning_alg.invariants.determinantal import m2_matrix
from attngeom.lightning_alg.invariants.structured import (
    StructuredFamily, chunk_bounds, permutation_signs)
from attngeom.lightning_alg.labels import Label, multisets


@dataclass(frozen=True)
class CoordinateMatrix:
    """A matrix of coordinates of a view.

    Attributes
    ----------
    index : int64 array, shape=[rows, cols]: the coordinate index of each entry
    row_names, col_names : how ADM indexes the rows and columns
    coords : the coordinate view
    """

    index: np.ndarray
    row_names: tuple
    col_names: tuple
    coords: CoordinateSystem

    def __post_init__(self):
        """One name per row and per column: the names are how ADM indexes the matrix, and a
        name list of another length would label (and, shown, drop) the wrong rows."""
        rows = self.index.shape[0]
        cols = self.index.shape[1] if self.index.ndim == 2 else len(self.col_names)
        if (len(self.row_names), len(self.col_names)) != (rows, cols):
            raise ValueError(f"a {rows} x {cols} coordinate matrix with {len(self.row_names)} "
                             f"row names and {len(self.col_names)} column names")

    @classmethod
    def of_labels(cls, coords: CoordinateSystem, labels, row_names, col_names) -> "CoordinateMatrix":
        """The matrix with entry (r, c) = the coordinate ``labels[r][c]``."""
        for row in labels:  # one readable BadInput for a label outside the view
            for label in row:
                coords.symbol(label)
        index = np.array([[coords.index[lab] for lab in row] for row in labels], dtype=np.int64)
        return cls(index, tuple(row_names), tuple(col_names), coords)

    @property
    def shape(self) -> tuple[int, int]:
        return self.index.shape

    def at(self, y, backend=None):
        """The matrix at B points y (shape=[B, N]; NumPy, or an array of ``backend``):
        shape=[B, rows, cols]."""
        return y[:, self.index if backend is None else backend.asarray(self.index, "int64")]

    def evaluate_ring(self, values) -> list[list]:
        """The matrix with coordinate k replaced by ``values[k]`` (ring elements, numbers),
        as :meth:`~attngeom.lightning_alg.invariants.determinantal.LinearMatrix.evaluate_ring`."""
        return [[values[k] for k in row] for row in self.index]

    def labels(self) -> list[list[Label]]:
        return [[self.coords.labels[k] for k in row] for row in self.index]

    def render(self, fmt: str) -> str:
        """text (one row per line, led by its name), latex (pmatrix), m2 or json."""
        style = {"text": "text", "latex": "latex"}.get(fmt, "m2")
        shown = [[format_polynomial(self.coords.symbols[k], self.coords, style) for k in row]
                 for row in self.index]
        if fmt == "json":
            return json.dumps({"rows": [str(r) for r in self.row_names],
                               "cols": [str(c) for c in self.col_names], "entries": shown}, indent=1)
        if fmt == "m2":
            return m2_matrix(shown)
        if fmt == "latex":
            return ("\\begin{pmatrix}\n" + " \\\\\n".join(" & ".join(row) for row in shown)
                    + "\n\\end{pmatrix}")
        width = max(len(str(name)) for name in self.row_names)
        return "\n".join(f"{str(name):>{width}}  " + "  ".join(row)
                         for name, row in zip(self.row_names, shown))


def cross_column_label(row: int, col: int, context: int, k1: int, k2: int, k3: int) -> Label:
    """T~_{(k1,n),(k2,n),(k3,j)} = y^{[i]}_{n,j}({k1,k2}, k3) (symmetric in k1, k2)."""
    return Label(row, col, context, (min(k1, k2), max(k1, k2), k3))


def cross_column_slice(coords: CoordinateSystem, row: int, col: int, context: int,
                       k: int) -> CoordinateMatrix:
    """ADM Prop 24: the symmetric slice M_{n,j}^{(k)} = (T~_{(k1,n),(k2,n),(k,j)})_{k1,k2}."""
    d = coords.d
    labels = [[cross_column_label(row, col, context, k1, k2, k) for k2 in range(1, d + 1)]
              for k1 in range(1, d + 1)]
    return CoordinateMatrix.of_labels(coords, labels, range(1, d + 1), range(1, d + 1))


def cross_column_flattening(coords: CoordinateSystem, row: int, col: int,
                            context: int) -> CoordinateMatrix:
    """ADM Thm 25: F_{n,j}, C(d+1,2) x d, F[{k1,k2}, k3] = T~_{(k1,n),(k2,n),(k3,j)}."""
    d = coords.d
    pairs = multisets(d, 2)
    labels = [[cross_column_label(row, col, context, k1, k2, k3) for k3 in range(1, d + 1)]
              for k1, k2 in pairs]
    return CoordinateMatrix.of_labels(coords, labels, ["{%d,%d}" % p for p in pairs],
                                      range(1, d + 1))


# -- families of minors --------------------------------------------------------------------

class MinorCombinationFamily(StructuredFamily):
    """Members sum_k c_k det(y[entries[m, k]]): integer combinations of r x r minors.

    Parameters
    ----------
    name : what the members are, with the source
    coords : the coordinate view
    entries : int64 array, shape=[P, K, r, r], coordinate indices; the padding index N
        (a zero coordinate of every point, see :class:`~attngeom.lightning_alg.invariants.structured.Point`)
        fills unused terms, whose determinant is then 0
    coefficients : int64 array, shape=[P, K]
    keys : one description per member (JSON-ready dicts)
    """

    def __init__(self, name: str, coords: CoordinateSystem, entries: np.ndarray,
                 coefficients: np.ndarray, keys: list[dict]):
        self.name = name
        self.coords = coords
        self.entries = np.asarray(entries, dtype=np.int64)
        self.coefficients = np.asarray(coefficients, dtype=np.int64)
        self.keys = keys

    @classmethod
    def of_minors(cls, name: str, matrix: CoordinateMatrix, terms, keys) -> "MinorCombinationFamily":
        """``terms[m]`` lists (coefficient, rows, cols) of member m, 0-based rows/cols of
        ``matrix`` in the order the determinant takes them."""
        terms = [list(t) for t in terms]
        width = max((len(t) for t in terms), default=1)
        size = len(terms[0][0][1]) if terms and terms[0] else 1
        pad = len(matrix.coords)
        entries = np.full((len(terms), width, size, size), pad, dtype=np.int64)
        coefficients = np.zeros((len(terms), width), dtype=np.int64)
        for m, member in enumerate(terms):
            for k, (coefficient, rows, cols) in enumerate(member):
                entries[m, k] = matrix.index[np.ix_(rows, cols)]
                coefficients[m, k] = coefficient
        return cls(name, matrix.coords, entries, coefficients, list(keys))

    @property
    def size(self) -> int:
        return self.entries.shape[0]

    @property
    def degree(self) -> int:
        return self.entries.shape[-1]

    def chunks(self, point, arith):
        _, width, r, _ = self.entries.shape
        for start, stop in chunk_bounds(self.size, point.batch * width * r * r):
            dets = arith.det(arith.take(point.y, self.entries[start:stop]))    # [B, k, K]
            yield start, arith.sum(arith.scale(dets, self.coefficients[start:stop]), axis=2)

    def describe(self, index: int) -> dict:
        return self.keys[index]

    def restrict(self, index: int) -> "MinorCombinationFamily":
        return self.subfamily([index])

    def subfamily(self, indices) -> "MinorCombinationFamily":
        indices = list(indices)
        return MinorCombinationFamily(self.name, self.coords, self.entries[indices],
                                      self.coefficients[indices], [self.keys[i] for i in indices])

    def variables(self) -> list[int]:
        used = np.unique(self.entries)
        return [int(k) for k in used if k < len(self.coords)]

    def printable_terms(self, index: int) -> int:
        return int(np.count_nonzero(self.coefficients[index])) * factorial(self.degree)

    def expand_mod_p(self, coords: CoordinateSystem, prime: int) -> dict[int, tuple]:
        """:meth:`StructuredFamily.expand_mod_p` without ring arithmetic: each minor by the
        Leibniz formula, sum_pi sign(pi) prod_i y[entries[i, pi(i)]], all members at once."""
        size, width, r, _ = self.entries.shape
        pad = len(self.coords)
        member, rows, coeffs = [], [], []
        for perm, sign in permutation_signs(r):
            picked = self.entries[:, :, np.arange(r), list(perm)].reshape(size * width, r)
            value = (self.coefficients.ravel() * sign) % prime
            keep = (value != 0) & (picked < pad).all(axis=1)
            member.append(np.repeat(np.arange(size), width)[keep])
            rows.append(np.sort(picked[keep], axis=1))
            coeffs.append(value[keep])
        return {r: sum_terms_mod_p(np.concatenate(member), np.concatenate(rows),
                                   np.concatenate(coeffs), prime)}


# -- index sets ----------------------------------------------------------------------------

def minor_index_sets(n_rows: int, n_cols: int, size: int):
    """Every (rows, cols) of a size x size minor, 0-based; row subsets outermost, both lex."""
    for rows in combinations(range(n_rows), size):
        for cols in combinations(range(n_cols), size):
            yield rows, cols


def random_subset(sampler, n: int, size: int) -> tuple[int, ...]:
    """A uniform random size-subset of range(n), sorted (seeded)."""
    return tuple(sorted(int(x) for x in np.argsort(sampler.floats(n))[:size]))


def take(iterable, limit: int | None) -> list:
    """The first ``limit`` items (all when limit is None)."""
    return list(iterable if limit is None else islice(iterable, limit))


def sampled_indices(all_indices: Callable, count: int, limit: int,
                    draw: Callable[[], tuple]) -> tuple[list, bool]:
    """(index sets, sampled?): all of them when count <= limit, else ``limit`` distinct
    draws of the seeded ``draw()`` in the order drawn."""
    if count <= limit:
        return list(all_indices()), False
    seen: dict = {}
    while len(seen) < limit:
        seen.setdefault(draw(), None)
    return list(seen), True


# -- witnesses mod p -----------------------------------------------------------------------

def pivot_columns_mod_p(matrix: np.ndarray, prime: int) -> list[int]:
    """The pivot columns of the reduced row echelon form over F_p (leftmost independent)."""
    reduced, rank = to_nmod_mat(matrix, prime).rref()
    return [next(c for c in range(reduced.ncols()) if int(reduced[r, c]) != 0) for r in range(rank)]


def nonsingular_submatrix_mod_p(matrix: np.ndarray, size: int, prime: int) -> tuple[tuple, tuple]:
    """0-based (rows, cols) of a size x size submatrix that is invertible over F_p.

    Needs rank(matrix) >= size over F_p: the first ``size`` pivot columns are independent,
    and the pivot rows of that column block then give an invertible square.
    """
    cols = pivot_columns_mod_p(matrix, prime)[:size]
    rows = pivot_columns_mod_p(np.ascontiguousarray(matrix[:, cols].T), prime)[:size]
    return tuple(rows), tuple(cols)

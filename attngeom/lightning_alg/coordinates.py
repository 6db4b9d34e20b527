"""Coefficient coordinates of lightning self-attention and their counts (ADM §2.2).

Two views (ADM Remark 4 and Remark 11):

* one output coordinate (row i, column j), as ADM's Macaulay2 code works: the
  C(d+2,3) single-column labels and the (t-1) d C(d+1,2) cross-column labels of every
  context column n != j (the default);
* the whole coefficient array of phi_W (``all_outputs``): every row i in [d'] and every
  column j in [t], where the sequence-copy relations across target columns live.

Counts (ADM Prop 5): one coordinate has C(d+2,3) + (t-1) C(d+1,2) d monomials; the
whole output has N_phi(d,t) = d t (d+1)(3dt - 2d + 2) / 6 distinct monomials (per row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from math import comb

import sympy

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.labels import Label, multisets

#: Largest number of coordinates attngeom will enumerate (about 1 GB of label objects
#: and float64 point batches); beyond it the input is refused with exit code 2.
MAX_COORDINATES = 2_000_000


def single_column_count(d: int) -> int:
    """|Mult_3([d])| = C(d+2, 3)."""
    return comb(d + 2, 3)


def cross_column_count(d: int, t: int) -> int:
    """(t-1) C(d+1, 2) d cross-column monomials in one output coordinate."""
    return (t - 1) * comb(d + 1, 2) * d


def per_coordinate_count(d: int, t: int) -> int:
    """|M_{i,j}| = C(d+2,3) + (t-1) C(d+1,2) d, counted from its two parts (ADM Prop 5 proof)."""
    return single_column_count(d) + cross_column_count(d, t)


def prop5_total_formula(d: int, t: int) -> sympy.Rational:
    """N_phi(d,t) = d t (d+1)(3dt - 2d + 2) / 6 exactly as printed in ADM Prop 5."""
    return sympy.Rational(d * t * (d + 1) * (3 * d * t - 2 * d + 2), 6)


def prop5_per_coordinate_formula(d: int, t: int) -> sympy.Rational:
    """N_phi(d,t)/t = d (d+1)(3dt - 2d + 2) / 6 exactly as printed in ADM Prop 5."""
    return sympy.Rational(d * (d + 1) * (3 * d * t - 2 * d + 2), 6)


def coordinate_labels(d: int, t: int, row: int, col: int) -> list[Label]:
    """The labels of output coordinate (row, col): single-column first, then by context n."""
    labels = [Label(row, col, 0, k) for k in multisets(d, 3)]
    for n in range(1, t + 1):
        if n != col:
            labels.extend(Label(row, col, n, (a1, a2, b))
                          for (a1, a2) in multisets(d, 2) for b in range(1, d + 1))
    return labels


@dataclass(frozen=True)
class CoordinateSystem:
    """The ordered coefficient coordinates of one view of phi_W.

    Parameters
    ----------
    d, t, dprime : embedding dimension, sequence length, output dimension d'
    row, col : the output coordinate (i, j) of the single-coordinate view (1-based)
    all_outputs : use every (i, j) instead
    """

    d: int
    t: int
    dprime: int = 1
    row: int = 1
    col: int = 1
    all_outputs: bool = False
    labels: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for name in ("d", "t", "dprime", "row", "col"):
            if getattr(self, name) < 1:
                raise BadInput(f"--{name} must be a positive integer; got {getattr(self, name)}")
        if self.row > self.dprime:
            raise BadInput(f"--row {self.row} is not an output row: d' = {self.dprime}")
        if self.col > self.t:
            raise BadInput(f"--col {self.col} is not an output column: t = {self.t}")
        size = self.size_of(self.d, self.t, self.dprime, self.all_outputs)
        if size > MAX_COORDINATES:
            raise BadInput(
                f"d={self.d}, t={self.t}, d'={self.dprime} has {size:.3g} coefficient coordinates "
                f"(about {size * 200 / 2**30:.3g} GiB to enumerate); the limit is {MAX_COORDINATES:,}")
        if self.all_outputs:
            labels = [lab for i in range(1, self.dprime + 1) for j in range(1, self.t + 1)
                      for lab in coordinate_labels(self.d, self.t, i, j)]
        else:
            labels = coordinate_labels(self.d, self.t, self.row, self.col)
        object.__setattr__(self, "labels", tuple(labels))

    @staticmethod
    def size_of(d: int, t: int, dprime: int = 1, all_outputs: bool = False) -> int:
        per = per_coordinate_count(d, t)
        return per * dprime * t if all_outputs else per

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def with_row(self) -> bool:
        """Whether labels carry the output row (only when d' > 1)."""
        return self.dprime > 1

    @property
    def outputs(self) -> list[tuple[int, int]]:
        if self.all_outputs:
            return [(i, j) for i in range(1, self.dprime + 1) for j in range(1, self.t + 1)]
        return [(self.row, self.col)]

    @cached_property
    def index(self) -> dict[Label, int]:
        return {label: k for k, label in enumerate(self.labels)}

    @cached_property
    def symbols(self) -> tuple[sympy.Symbol, ...]:
        """One SymPy symbol per coordinate, named by its text label."""
        return tuple(sympy.Symbol(label.text(self.with_row)) for label in self.labels)

    @cached_property
    def symbol_index(self) -> dict[sympy.Symbol, int]:
        return {s: k for k, s in enumerate(self.symbols)}

    def symbol(self, label: Label) -> sympy.Symbol:
        try:
            return self.symbols[self.index[label]]
        except KeyError:
            where = f"row {label.row}, column {label.target}"
            raise BadInput(f"{label.m2(self.with_row)} (output {where}) is not a coordinate of "
                           f"{self.describe()}") from None

    def describe(self) -> str:
        if self.all_outputs:
            return f"the whole output (d={self.d}, t={self.t}, d'={self.dprime})"
        return f"output coordinate (i,j)=({self.row},{self.col}) with d={self.d}, t={self.t}"

"""Coefficient labels exactly as ADM writes them, and the orbit sizes of eq (3).

ADM §2.2: in output coordinate (i, j) the cubic phi_W(X)[i, j] has

* single-column monomials prod_{u in K} x_{u j}, K in Mult_3([d]), labelled
  ``y_{(k1,j),(k2,j),(k3,j)}`` with k1 <= k2 <= k3;
* cross-column monomials x_{a1 n} x_{a2 n} x_{b j} (n != j, {a1, a2} in Mult_2([d])),
  labelled ``y_{(a1,n),(a2,n),(b,j)}`` with the two context pairs first (a1 <= a2) and the
  target pair last (ADM Remark 11's convention).

A label is a multiset of (input row, input column) pairs, so any order of the pairs names
the same coordinate: ADM's Macaulay2 code sorts the pairs lexicographically
(``y_((1,2),(2,1),(2,2))``) while the paper writes the context pairs first
(``y_((1,2),(2,2),(2,1))``).  :meth:`Label.from_pairs` accepts both; output uses the paper's
order.  With d' > 1 output rows the row i is part of the label (ADM's y^{[i]}), written
``y^{[i]}_{...}`` in text and ``y_(i,(..),(..),(..))`` in Macaulay2.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement, permutations

from attngeom.core.errors import BadInput


def multisets(d: int, size: int) -> list[tuple[int, ...]]:
    """Mult_size([d]) as sorted tuples, in lexicographic order (1-based)."""
    return list(combinations_with_replacement(range(1, d + 1), size))


@lru_cache(maxsize=None)
def orbit_size(multiset: tuple[int, ...]) -> int:
    """|Perm(K)|: the number of distinct orderings of a multiset, r! / prod(mult!)."""
    return math.factorial(len(multiset)) // math.prod(
        math.factorial(m) for m in Counter(multiset).values())


@lru_cache(maxsize=None)
def distinct_permutations(multiset: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Perm(K): the distinct orderings of a multiset, sorted."""
    return tuple(sorted(set(permutations(multiset))))


@dataclass(frozen=True, order=True)
class Label:
    """One scaled coefficient coordinate y of output row ``row`` and target column ``target``.

    ``context`` is the context column n (0 for a single-column label); ``rows`` is the
    sorted K for a single-column label, and (a1, a2, b) with a1 <= a2 for a cross-column
    label (b is the target row index).
    """

    row: int
    target: int
    context: int
    rows: tuple[int, int, int]

    @property
    def is_single(self) -> bool:
        return self.context == 0

    @property
    def multiset(self) -> tuple[int, ...]:
        """K (single-column) or A (cross-column): the multiset that is symmetrized."""
        return self.rows if self.is_single else self.rows[:2]

    @property
    def target_row(self) -> int | None:
        """b of a cross-column label; None for single-column."""
        return None if self.is_single else self.rows[2]

    @property
    def orbit_size(self) -> int:
        """|Perm(K)| or |Perm(A)|, the divisor of eq (3)."""
        return orbit_size(self.multiset)

    def pairs(self) -> tuple[tuple[int, int], ...]:
        """The (input row, input column) pairs in ADM's order."""
        if self.is_single:
            return tuple((k, self.target) for k in self.rows)
        a1, a2, b = self.rows
        return ((a1, self.context), (a2, self.context), (b, self.target))

    def monomial_key(self) -> tuple[tuple[int, int], ...]:
        """The monomial as a sorted tuple of x-variable index pairs (for matching expansions)."""
        return tuple(sorted(self.pairs()))

    def text(self, with_row: bool = False) -> str:
        body = ",".join(f"({r},{c})" for r, c in self.pairs())
        return f"y^{{[{self.row}]}}_{{{body}}}" if with_row else f"y_{{{body}}}"

    def m2(self, with_row: bool = False) -> str:
        body = ",".join(f"({r},{c})" for r, c in self.pairs())
        return f"y_({self.row},{body})" if with_row else f"y_({body})"

    @classmethod
    def from_pairs(cls, pairs, row: int = 1) -> "Label":
        """The label of a cubic monomial given by three (row, column) pairs, in any order."""
        pairs = [tuple(int(v) for v in p) for p in pairs]
        if len(pairs) != 3 or any(len(p) != 2 for p in pairs):
            raise BadInput(f"a coefficient label needs three (row,column) pairs; got {pairs}")
        if any(v < 1 for p in pairs for v in p) or row < 1:
            raise BadInput(f"label indices are 1-based and positive; got {pairs}")
        columns = Counter(c for _, c in pairs)
        if len(columns) == 1:
            (col,) = columns
            return cls(row, col, 0, tuple(sorted(r for r, _ in pairs)))
        if sorted(columns.values()) != [1, 2]:
            raise BadInput(
                f"pairs {pairs} name no lightning coefficient: its columns must be (n, n, j)")
        context = next(c for c, m in columns.items() if m == 2)
        target = next(c for c, m in columns.items() if m == 1)
        a1, a2 = sorted(r for r, c in pairs if c == context)
        b = next(r for r, c in pairs if c == target)
        return cls(row, target, context, (a1, a2, b))

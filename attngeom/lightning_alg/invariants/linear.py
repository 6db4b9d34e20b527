"""Linear invariants: sequence-copy and internal symmetrization relations (ADM §3).

Sequence-copy relations (ADM §3): y_j(K) = y_{j'}(K) and y_{n,j}(A,b) = y_{n',j'}(A,b),
because mu gives values that depend on K, or on (A, b), only.

Internal symmetrization (ADM Prop 9): for an output coordinate (i, j), a context column
n != j and K in Mult_3([d]),

    |Perm K| y_j(K) - sum_{A u {b} = K, |A| = 2} |Perm A| y_{n,j}(A, b)  in J,

the sum over the distinct decompositions of K into a 2-multiset A and a singleton b.
ADM Cor 10: these are C(d+2,3) linearly independent relations per output coordinate.
"""

from __future__ import annotations

from flint import fmpq

from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariant import Invariant
from attngeom.lightning_alg.labels import Label, multisets

SEQUENCE_COPY = "ADM §3 (sequence-copy)"
PROP9 = "ADM Prop 9"


def default_context(col: int) -> int:
    """The context column used when none is given: 2 for target column 1, else 1."""
    return 2 if col == 1 else 1


def decompositions(K: tuple[int, int, int]) -> list[tuple[tuple[int, int], int]]:
    """The distinct (A, b) with A u {b} = K, |A| = 2, A sorted."""
    out = []
    for position in range(3):
        b = K[position]
        A = tuple(sorted(K[:position] + K[position + 1:]))
        if (A, b) not in out:
            out.append((A, b))
    return out


def internal_symmetrization_relations(coords: CoordinateSystem, row: int, col: int,
                                      context: int) -> list[Invariant]:
    """ADM Prop 9 for output (row, col) and context column ``context``; K in reverse
    lexicographic order, as ADM Example 12 lists them."""
    out = []
    for K in reversed(multisets(coords.d, 3)):
        single = Label(row, col, 0, K)
        poly = single.orbit_size * coords.symbol(single)
        for A, b in decompositions(K):
            cross = Label(row, col, context, (A[0], A[1], b))
            poly -= cross.orbit_size * coords.symbol(cross)
        out.append(Invariant(poly, "internal-symmetrization", PROP9,
                             {"row": row, "col": col, "context": context, "K": K}))
    return out


def sequence_copy_relations(coords: CoordinateSystem, context: int) -> list[Invariant]:
    """Differences of coordinates that mu identifies, against one reference copy each.

    Single-coordinate view: y_{n,j}(A,b) - y_{context,j}(A,b) for the other context
    columns n.  Whole-output view, for every row i: y_j(K) - y_{col}(K) for j != col and
    y_{n,j}(A,b) - y_{context,col}(A,b) for every other (n, j).
    """
    out = []
    d = coords.d
    for i, j0 in ([(coords.row, coords.col)] if not coords.all_outputs
                  else [(i, coords.col) for i in range(1, coords.dprime + 1)]):
        if coords.all_outputs:
            for j in range(1, coords.t + 1):
                if j == j0:
                    continue
                for K in multisets(d, 3):
                    poly = coords.symbol(Label(i, j, 0, K)) - coords.symbol(Label(i, j0, 0, K))
                    out.append(Invariant(poly, "sequence-copy", SEQUENCE_COPY,
                                         {"row": i, "K": K, "cols": (j, j0)}))
        targets = range(1, coords.t + 1) if coords.all_outputs else [j0]
        for (a1, a2) in multisets(d, 2):
            for b in range(1, d + 1):
                reference = coords.symbol(Label(i, j0, context, (a1, a2, b)))
                for j in targets:
                    for n in range(1, coords.t + 1):
                        if n == j or (n, j) == (context, j0):
                            continue
                        poly = coords.symbol(Label(i, j, n, (a1, a2, b))) - reference
                        out.append(Invariant(poly, "sequence-copy", SEQUENCE_COPY,
                                             {"row": i, "A": (a1, a2), "b": b,
                                              "columns": (n, j), "reference": (context, j0)}))
    return out


def linear_invariants(coords: CoordinateSystem, context: int) -> list[Invariant]:
    """Prop 9 relations for every output of the view, then the sequence-copy relations."""
    out = []
    for i, j in coords.outputs:
        n = context if j == coords.col else default_context(j)
        out.extend(internal_symmetrization_relations(coords, i, j, n))
    out.extend(sequence_copy_relations(coords, context))
    return out


def coefficient_rows(invariants: list[Invariant], coords: CoordinateSystem) -> list[list]:
    """The linear forms as rows of exact rationals (flint.fmpq), one column per coordinate."""
    rows = []
    for inv in invariants:
        row = [fmpq(0)] * len(coords)
        for symbol, coeff in inv.poly.as_coefficients_dict().items():
            row[coords.symbol_index[symbol]] = fmpq(int(coeff.p), int(coeff.q))
        rows.append(row)
    return rows

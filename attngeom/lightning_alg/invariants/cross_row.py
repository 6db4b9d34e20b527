"""Cross-row determinantal relations (ADM Appendix A, Prop 44).

Every scaled coefficient is linear in one row of V with coefficients depending on A only
(ADM Prop 6): y^{[i]}_s = sum_p v_{ip} m_{p,s}(A).  So for a target column j and a set S of
coordinates of that column, the d' x |S| matrix C_S(W) = (y^{[i]}_s)_{i,s} factors as
V M_S(A) and has rank <= d: its (d+1) x (d+1) minors lie in J (there are some only when
d' >= d+1).

attngeom takes S = every coordinate of column j, the single-column y_j(K) and the
cross-column y_{n,j}(A, b) for every context n != j (in the order of the coordinate view),
because the minors for any smaller S are among the minors for this one.  The rows i run
over all d' outputs, so these polynomials live in the whole-output view (``--all-outputs``).
"""

from __future__ import annotations

from math import comb

from attngeom.lightning_alg.coordinates import CoordinateSystem, coordinate_labels, per_coordinate_count
from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix, MinorCombinationFamily
from attngeom.lightning_alg.labels import Label

SOURCE = "ADM Prop 44"


def column_coordinates(d: int, t: int, col: int) -> list[Label]:
    """S: the coordinates of target column j (output row 1; the row is replaced per i)."""
    return coordinate_labels(d, t, 1, col)


def cross_row_matrix(coords: CoordinateSystem, col: int) -> CoordinateMatrix:
    """C_S for S = all coordinates of column j: entry (i, s) = y^{[i]}_s, i in [d']."""
    columns = column_coordinates(coords.d, coords.t, col)
    labels = [[Label(i, lab.target, lab.context, lab.rows) for lab in columns]
              for i in range(1, coords.dprime + 1)]
    return CoordinateMatrix.of_labels(coords, labels, range(1, coords.dprime + 1),
                                      [lab.m2() for lab in columns])


def cross_row_count(d: int, t: int, dprime: int) -> int:
    """C(d', d+1) C(|S|, d+1), |S| = C(d+2,3) + (t-1) d C(d+1,2) (ADM prints no count)."""
    return comb(dprime, d + 1) * comb(per_coordinate_count(d, t), d + 1)


def cross_row_family(matrix: CoordinateMatrix, col: int, indices) -> MinorCombinationFamily:
    """The (d+1)-minors of C_S for the given (rows, cols) index sets (0-based)."""
    indices = list(indices)
    keys = [{"col": col, "output_rows": [r + 1 for r in rows],
             "coordinates": [matrix.col_names[c] for c in cols]} for rows, cols in indices]
    return MinorCombinationFamily.of_minors(f"(d+1)-minors of C_S ({SOURCE})", matrix,
                                            [[(1, rows, cols)] for rows, cols in indices], keys)


def value_coefficients(values_row_1, v_row_1) -> list[list]:
    """M_S(A): entry (p, s) = d y^{[1]}_s / d v_{1p}, from the symbolic values of row 1
    (SymPy ring elements, linear in v_1 by ADM Prop 6)."""
    return [[value.diff(v) for value in values_row_1] for v in v_row_1]

"""The flattening of the single-column tensor T: rank <= 2a + 1 (new; from the factored
cubic f_T = (v.x)(x^T A x) of ADM Prop 17's proof).

The single-column coordinates y_j(K) are the entries T_K of a symmetric tensor T with
f_T(x) = sum T_{k1 k2 k3} x_k1 x_k2 x_k3 = l(x) q(x), l = v.x, q = x^T S x, S = (A + A^T)/2
(:mod:`.single_column`).  Its flattening Fl(T), d x C(d+1,2), has row k and column {j, l}
(lexicographic) the entry T_{k,j,l} = y_j(sorted(k, j, l)).  Symmetrizing v (x) S,

    T_{k,j,l} = 1/3 (v_k S_{jl} + v_j S_{kl} + v_l S_{kj}),

so row k is the symmetric matrix 1/3 (v_k S + s_k v^T + v s_k^T), s_k the k-th row of S.
With A = sum_{r <= a} k_r q_r^T every s_k lies in span(k_r, q_r : r <= a), so every row lies
in span(S, sym(k_r v^T), sym(q_r v^T) : r <= a): rank Fl(T) <= 2a + 1, and for d >= 2a + 2
the (2a+2)-minors of Fl(T) lie in J.  (Rows of Fl(T) are 1/3 the partials of f_T: the
statement is that the partials of l q span at most 2a + 1 dimensions.)  For a = 1 (ADM
Example 21, f_T = l1 l2 l3) this is the rank <= 3 of a cubic that depends on three linear
forms only, a cone: at d = 4 its 4 x 4 minors are C(10,4) = 210 quartics.
"""

from __future__ import annotations

from math import comb

from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix, MinorCombinationFamily
from attngeom.lightning_alg.labels import Label, multisets

SOURCE = "new; f_T = (v.x)(x^T A x) (ADM Prop 17's proof)"


def rank_bound(a: int) -> int:
    return 2 * a + 1


def tensor_flattening(coords: CoordinateSystem) -> CoordinateMatrix:
    """Fl(T): rows k in [d], columns the pairs {j <= l}, entry y_j(sorted(k, j, l))."""
    d = coords.d
    pairs = multisets(d, 2)
    labels = [[Label(coords.row, coords.col, 0, tuple(sorted((k, j, l)))) for j, l in pairs]
              for k in range(1, d + 1)]
    return CoordinateMatrix.of_labels(coords, labels, range(1, d + 1), ["{%d,%d}" % p for p in pairs])


def minor_count(d: int, a: int) -> int:
    """C(d, 2a+2) C(C(d+1,2), 2a+2)."""
    size = rank_bound(a) + 1
    return comb(d, size) * comb(comb(d + 1, 2), size)


def cone_family(matrix: CoordinateMatrix, row: int, col: int, indices) -> MinorCombinationFamily:
    """The (2a+2)-minors of Fl(T) for the given (rows, cols) index sets (0-based)."""
    indices = list(indices)
    keys = [{"row": row, "col": col, "rows": [r + 1 for r in rows],
             "cols": [matrix.col_names[c] for c in cols]} for rows, cols in indices]
    return MinorCombinationFamily.of_minors(f"(2a+2)-minors of Fl(T) ({SOURCE})", matrix,
                                            [[(1, rows, cols)] for rows, cols in indices], keys)


def tensor_formula(A, v, sixth) -> list[list]:
    """1/3 (v_k S_{jl} + v_j S_{kl} + v_l S_{kj}) with 2 S = A + A^T, as a d x C(d+1,2)
    nested list (``sixth`` = 1/6 in the arithmetic of ``A`` and ``v``)."""
    d = len(v)

    def twice_s(i: int, m: int):
        return A[i - 1][m - 1] + A[m - 1][i - 1]

    return [[(v[k - 1] * twice_s(j, l) + v[j - 1] * twice_s(k, l) + v[l - 1] * twice_s(k, j)) * sixth
             for j, l in multisets(d, 2)] for k in range(1, d + 1)]

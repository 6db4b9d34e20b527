"""Minors of the unbalanced flattening forced by a low-rank attention matrix (ADM Thm 25).

For a < d, A = K^T Q = sum_{r=1}^a u^{(r)} w^{(r)T} (u^{(r)} the r-th row of K, w^{(r)} the
r-th row of Q), and ADM's proof gives

    F_{n,j}(mu(W)) = sum_r s^{(r)} w^{(r)T},   s^{(r)} = vec_{k1<=k2} S^{(r)},
    S^{(r)} = 1/2 (v u^{(r)T} + u^{(r)} v^T),

so rank F_{n,j} <= a and every (a+1) x (a+1) minor of F_{n,j} lies in J:
C(C(d+1,2), a+1) C(d, a+1) minors of degree a+1.  ADM Example 26 prints F_{2,1} for d = 3
(labels with their pairs sorted as Macaulay2 sorts them); it is kept here as printed.
"""

from __future__ import annotations

from math import comb

from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix, MinorCombinationFamily
from attngeom.lightning_alg.labels import Label, multisets

SOURCE = "ADM Thm 25"

#: ADM Example 26 (d = 3, d' = 1, t = 2, a = 1): the 6 x 3 matrix F_{2,1}, as printed.
EXAMPLE_26_FLATTENING = (
    ("(1,1),(1,2),(1,2)", "(1,2),(1,2),(2,1)", "(1,2),(1,2),(3,1)"),
    ("(1,1),(1,2),(2,2)", "(1,2),(2,1),(2,2)", "(1,2),(2,2),(3,1)"),
    ("(1,1),(1,2),(3,2)", "(1,2),(2,1),(3,2)", "(1,2),(3,1),(3,2)"),
    ("(1,1),(2,2),(2,2)", "(2,1),(2,2),(2,2)", "(2,2),(2,2),(3,1)"),
    ("(1,1),(2,2),(3,2)", "(2,1),(2,2),(3,2)", "(2,2),(3,1),(3,2)"),
    ("(1,1),(3,2),(3,2)", "(2,1),(3,2),(3,2)", "(3,1),(3,2),(3,2)"),
)
#: The parameters of ADM Example 26's matrix: d, output row i, target column j, context n.
EXAMPLE_26_PARAMS = {"d": 3, "row": 1, "col": 1, "context": 2}


def example_26_labels() -> list[list[Label]]:
    """EXAMPLE_26_FLATTENING read as coordinate labels."""
    def read(text):
        pairs = [tuple(int(x) for x in p.strip("()").split(",")) for p in text.split("),(")]
        return Label.from_pairs(pairs)
    return [[read(entry) for entry in row] for row in EXAMPLE_26_FLATTENING]


def thm25_count(d: int, a: int) -> int:
    """C(C(d+1,2), a+1) C(d, a+1), as printed in ADM Thm 25."""
    return comb(comb(d + 1, 2), a + 1) * comb(d, a + 1)


def low_rank_family(flattening: CoordinateMatrix, row: int, col: int, context: int,
                    indices) -> MinorCombinationFamily:
    """The (a+1)-minors of F_{n,j} for the given (rows, cols) index sets (0-based)."""
    indices = list(indices)
    keys = [{"row": row, "col": col, "context": context,
             "flattening_rows": [flattening.row_names[r] for r in rows],
             "flattening_cols": [c + 1 for c in cols]} for rows, cols in indices]
    return MinorCombinationFamily.of_minors(
        f"(a+1)-minors of F_{{{context},{col}}} ({SOURCE})", flattening,
        [[(1, rows, cols)] for rows, cols in indices], keys)


def rank_one_factors(K, Q, v, half) -> tuple[list[list], list[list]]:
    """The factors of ADM Thm 25's proof: (s, w) with F(mu(W)) = s w.

    ``s`` is C(d+1,2) x a, column r = s^{(r)} = the entries S^{(r)}[k1, k2], k1 <= k2, of
    S^{(r)} = 1/2 (v u^{(r)T} + u^{(r)} v^T) with u^{(r)} = K[r]; ``w`` is a x d, row r =
    w^{(r)} = Q[r].  Entries are whatever K, Q, v hold (SymPy ring elements or numbers);
    ``half`` is 1/2 in the same arithmetic.
    """
    d = len(v)
    s = [[(v[k1 - 1] * u[k2 - 1] + u[k1 - 1] * v[k2 - 1]) * half for u in K]
         for k1, k2 in multisets(d, 2)]
    return s, [list(w) for w in Q]

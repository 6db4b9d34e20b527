"""Linear relations among the k x k minors of the flattening F_{n,j} (new; generalizes
ADM Thm 27 from the maximal minors, k = d, to every k).

Construction.  On the variety F_{n,j}(mu(W)) = Phi(v) A (ADM Thm 27's proof; Phi(v) is the
C(d+1,2) x d matrix of :mod:`.syzygy`).  For a k-subset R of the D = C(d+1,2) rows and a
k-subset C of the d columns, Cauchy-Binet gives

    det F_{R,C}(mu(W)) = sum_{S, |S| = k} det Phi_{R,S}(v) det A_{S,C},

where det Phi_{R,S}(v) is a form of degree k in v.  Write these forms, for every S, in the
monomial basis of degree-k forms: the coefficient matrix E_k has a row for each (S, monomial)
(C(d,k) C(d+k-1,k) rows) and a column for each R (C(D,k) columns), and does not depend on C.
Every c in ker E_k and every C give the invariant

    g_{c,C} = sum_R c_R det F_{R,C}   in J,

because g_{c,C}(mu(W)) = sum_S det A_{S,C} sum_R c_R det Phi_{R,S}(v) = sum_S det A_{S,C} 0.
For k <= a the k x k minors det A_{S,C} of A (rank <= a) are linearly independent (a linear
relation would be an element of degree k < a + 1 of the ideal of rank <= a matrices), and
they do not involve v, so conversely every linear relation among the k x k minors of F that
holds on the variety is one of these, one column set C at a time: the family is exactly
"the linear relations among the k x k minors of F_{n,j} holding on the variety", and it has
C(d,k) dim ker E_k members (the reduced echelon basis of ker E_k for each C).  At k = d there
is one S and one C, and the family is ADM Thm 27's (claim ``syzygy``).

Geometric meaning (k = 3).  Column c of F is the quadric q_c(z) = z^T M_c z = l(z) m_c(z)
with the common linear factor l = v.z (m_c = a_c.z).  On the line through two points p, q
the binary quadrics s^2 Q_c(p) + 2 s u B_c(p,q) + u^2 Q_c(q) of three columns all contain
the factor s l(p) + u l(q), so they are linearly dependent and
det[Q_c(p), B_c(p,q), Q_c(q)]_{c in C} = 0; by Cauchy-Binet its coefficients in (p, q) are
combinations of the 3 x 3 minors of F_{R,C}.  For k columns the same argument on a
(k-1)-dimensional subspace (where the restricted quadrics lie in the (k-1)-dimensional space
l * (linear forms)) makes the k x k minors of their coefficient matrix vanish.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix, MinorCombinationFamily
from attngeom.lightning_alg.invariants.syzygy import (
    context_pair_matrix, integer_relation, integer_row, kernel_relations, sparse_determinant)
from attngeom.lightning_alg.labels import multisets

SOURCE = "new; generalizes ADM Thm 27"


def row_subsets(d: int, k: int) -> list[tuple[int, ...]]:
    """The row sets R of the k x k minors of F_{n,j} (0-based, lexicographic)."""
    return list(combinations(range(comb(d + 1, 2)), k))


def column_subsets(d: int, k: int) -> list[tuple[int, ...]]:
    """The column sets C (and S) of size k (0-based, lexicographic)."""
    return list(combinations(range(d), k))


def minor_coefficients(d: int, k: int) -> list[dict[int, object]]:
    """E_k by columns: for each R, {row index: coefficient}, the row index of (S, monomial)
    being s * C(d+k-1, k) + (position of the monomial among the degree-k forms in v), S the
    s-th column set; the entry is the coefficient of that monomial in det Phi_{R,S}(v)."""
    phi = context_pair_matrix(d)
    monomial_index = {m: i for i, m in enumerate(multisets(d, k))}
    per_subset = len(monomial_index)
    columns = []
    for R in row_subsets(d, k):
        column = {}
        for s, S in enumerate(column_subsets(d, k)):
            position = {c: i for i, c in enumerate(S)}
            rows = [integer_row([(position[c], var, x) for c, var, x in phi[r] if c in position])
                    for r in R]
            for key, value in sparse_determinant(rows).items():
                column[s * per_subset + monomial_index[tuple(v + 1 for v in key)]] = value
        columns.append(column)
    return columns


def relations(d: int, k: int) -> tuple[list, list[int], int]:
    """(kernel basis of E_k over Q as {R index: coefficient}, pivot columns, rows of E_k)."""
    basis, pivots = kernel_relations(minor_coefficients(d, k))
    return basis, pivots, comb(d, k) * comb(d + k - 1, k)


def relation_family(flattening: CoordinateMatrix, row: int, col: int, context: int, k: int,
                    relation_basis, indices) -> MinorCombinationFamily:
    """g_{c,C} = sum_R c_R det F_{R,C} for each (C, relation number) of ``indices`` (C a
    0-based column tuple), the relation scaled to coprime integers."""
    d = flattening.shape[1]
    subsets = row_subsets(d, k)
    indices = list(indices)
    scaled = {number: integer_relation(relation_basis[number]) for _, number in indices}
    terms = [[(c, subsets[r], C) for r, c in scaled[number].items()] for C, number in indices]
    keys = [{"row": row, "col": col, "context": context, "minor_size": k,
             "columns": [c + 1 for c in C], "relation": number + 1,
             "minors": [[[flattening.row_names[i] for i in subsets[r]], c]
                        for r, c in scaled[number].items()]}
            for C, number in indices]
    return MinorCombinationFamily.of_minors(
        f"relations among the {k} x {k} minors of F_{{{context},{col}}} ({SOURCE})",
        flattening, terms, keys)

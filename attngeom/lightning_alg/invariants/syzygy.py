"""Linear relations among the maximal minors of the flattening (ADM Thm 27, Example 28).

For a >= d, ADM's proof of Thm 27 factors the flattening on the variety as

    F_{n,j}(mu(W)) = Phi(v) A,

where the row {k1, k2} of the C(d+1,2) x d matrix Phi(v) holds v_{k2}/2 in column k1 and
v_{k1}/2 in column k2 when k1 != k2, and v_k in column k when k1 = k2 = k.  Hence every
maximal minor det F_R (R a d-subset of the D = C(d+1,2) rows) equals det Phi_R(v) det A on
the variety, and det Phi_R(v) is a form of degree d in v_1..v_d.  Writing these forms in
the monomial basis of degree-d forms (lexicographic, as Example 28 lists it) gives the
coefficient matrix E (C(2d-1,d) x C(D,d)); every c in ker E gives the invariant

    g_c = sum_R c_R det F_R   in J,

and dim ker E = C(D,d) - rank E >= C(D,d) - C(2d-1,d).  The kernel basis used is the one
of the reduced column echelon form over Q: one relation per minor that is not a pivot,
expressing it through the earlier pivot minors, scaled to coprime integers.

The proof also prints the entries F(mu(W))[{k1,k2}, l] = (1/omega)(a_{k2 l} v_{k1} +
a_{k1 l} v_{k2}) with omega(k, k) = 1 (eq 4), which doubles the rows {k, k}; Phi(v) as
described above is right (claim ``flattening-entries``, docs/cross-column.md).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations
from math import comb

from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix, MinorCombinationFamily
from attngeom.lightning_alg.labels import multisets

SOURCE = "ADM Thm 27"


def thm27_bound(d: int) -> int:
    """C(D,d) - C(2d-1,d), D = C(d+1,2): ADM Thm 27's lower bound on the relations."""
    return comb(comb(d + 1, 2), d) - comb(2 * d - 1, d)


def context_pair_matrix(d: int) -> list[list[tuple[int, int, Fraction]]]:
    """Phi(v) sparsely: for each row {k1 <= k2} (lexicographic), the (column, v index,
    coefficient) of its nonzero entries, 0-based column and v index."""
    rows = []
    for k1, k2 in multisets(d, 2):
        if k1 == k2:
            rows.append([(k1 - 1, k1 - 1, Fraction(1))])
        else:
            rows.append([(k1 - 1, k2 - 1, Fraction(1, 2)), (k2 - 1, k1 - 1, Fraction(1, 2))])
    return rows


def phi_matrix(v, zero, scalar) -> list[list]:
    """Phi(v) as a dense nested list over whatever ``v`` holds; ``zero`` fills the rest and
    ``scalar(p, q)`` is the rational p/q in that arithmetic."""
    d = len(v)
    dense = []
    for entries in context_pair_matrix(d):
        row = [zero] * d
        for column, var, coefficient in entries:
            row[column] = v[var] * scalar(coefficient.numerator, coefficient.denominator)
        dense.append(row)
    return dense


def degree_d_monomials(d: int) -> list[tuple[int, ...]]:
    """The monomials of degree d in v_1..v_d as sorted index tuples, lexicographic
    (v1^3, v1^2 v2, v1^2 v3, v1 v2^2, ... for d = 3, as ADM Example 28 lists them)."""
    return multisets(d, d)


def maximal_minor_subsets(d: int) -> list[tuple[int, ...]]:
    """The row sets R of the maximal minors of F_{n,j} (0-based, lexicographic)."""
    return list(combinations(range(comb(d + 1, 2)), d))


def integer_row(row: list[tuple[int, int, Fraction]]) -> tuple[list[tuple[int, int, int]], int]:
    """A sparse row scaled to integers: ((column, var, integer coefficient) list, scale)."""
    scale = math.lcm(*(c.denominator for _, _, c in row)) if row else 1
    return [(column, var, int(c * scale)) for column, var, c in row], scale


def sparse_determinant(rows) -> dict[tuple, Fraction]:
    """Leibniz expansion of a square matrix of monomial entries c * v_var, given as
    :func:`integer_row` rows.

    Returns {sorted v-index tuple: coefficient}.  Only choices with distinct columns are
    visited, so a matrix with at most two entries per row costs at most 2^k terms, in
    integer arithmetic; the row scales are divided out at the end.
    """
    k = len(rows)
    out: dict[tuple, int] = {}

    def extend(position, used, variables, coefficient):
        if position == k:
            key = tuple(sorted(variables))
            out[key] = out.get(key, 0) + coefficient
            return
        for column, var, c in rows[position][0]:
            if not used >> column & 1:
                # moving past the columns already used to the right of this one flips the sign
                sign = -1 if bin(used >> column).count("1") % 2 else 1
                extend(position + 1, used | 1 << column, variables + (var,), sign * coefficient * c)

    extend(0, 0, (), 1)
    denominator = math.prod(scale for _, scale in rows)
    return {key: Fraction(c, denominator) for key, c in out.items() if c}


def maximal_minor_coefficients(d: int) -> list[dict[int, Fraction]]:
    """E by columns: for each R, {monomial index: coefficient of det Phi_R(v)}."""
    phi = [integer_row(row) for row in context_pair_matrix(d)]
    monomial_index = {m: i for i, m in enumerate(multisets(d, d))}
    columns = []
    for R in maximal_minor_subsets(d):
        expansion = sparse_determinant([phi[r] for r in R])
        columns.append({monomial_index[tuple(v + 1 for v in key)]: c for key, c in expansion.items()})
    return columns


def kernel_relations(columns: list[dict[int, Fraction]]) -> tuple[list[dict[int, Fraction]], list[int]]:
    """(kernel basis, pivot columns) of the matrix with these sparse columns, over Q.

    Column reduction left to right: a column that reduces to zero against the earlier
    pivot columns gives the relation e_f - sum_p g_p e_p; this is the basis of the reduced
    echelon form (one relation per non-pivot column f, supported on f and pivots < f).
    """
    pivots: dict[int, tuple[dict, dict]] = {}
    pivot_columns: list[int] = []
    relations = []
    for f, column in enumerate(columns):
        vector, combination = dict(column), {f: Fraction(1)}
        while vector:
            lead = min(vector)
            if lead not in pivots:
                pivots[lead] = (vector, combination)
                pivot_columns.append(f)
                break
            pivot_vector, pivot_combination = pivots[lead]
            factor = vector[lead] / pivot_vector[lead]
            for key, value in pivot_vector.items():
                vector[key] = vector.get(key, Fraction(0)) - factor * value
                if not vector[key]:
                    del vector[key]
            for key, value in pivot_combination.items():
                combination[key] = combination.get(key, Fraction(0)) - factor * value
                if not combination[key]:
                    del combination[key]
        else:
            relations.append(combination)
    return relations, pivot_columns


def integer_relation(relation: dict[int, Fraction]) -> dict[int, int]:
    """The relation scaled to coprime integers (same invariant up to a nonzero factor)."""
    scale = math.lcm(*(c.denominator for c in relation.values()))
    integers = {r: int(c * scale) for r, c in relation.items()}
    common = math.gcd(*integers.values())
    return {r: c // common for r, c in sorted(integers.items())}


def syzygy_family(flattening: CoordinateMatrix, row: int, col: int, context: int,
                  relations, numbers) -> MinorCombinationFamily:
    """g_c = sum_R c_R det F_R for the given integer relations ({R index: c_R});
    ``numbers`` are their positions in the kernel basis (for the descriptions)."""
    d = flattening.shape[1]
    subsets = maximal_minor_subsets(d)
    columns = tuple(range(d))
    relations = list(relations)
    terms = [[(c, subsets[r], columns) for r, c in relation.items()] for relation in relations]
    keys = [{"row": row, "col": col, "context": context, "relation": number + 1,
             "minors": [[[flattening.row_names[i] for i in subsets[r]], c] for r, c in relation.items()]}
            for number, relation in zip(numbers, relations)]
    return MinorCombinationFamily.of_minors(
        f"syzygies of the maximal minors of F_{{{context},{col}}} ({SOURCE})", flattening, terms, keys)


def omega(k1: int, k2: int) -> int:
    """ADM eq (4): 1 if k1 = k2, else 2."""
    return 1 if k1 == k2 else 2


def printed_entry_formula(A, v, k1: int, k2: int, l: int, scalar):
    """F_{n,j}(mu(W))[{k1,k2}, l] exactly as printed in ADM Thm 27's proof (1-based):
    (1/omega(k1,k2)) (a_{k2 l} v_{k1} + a_{k1 l} v_{k2}); ``scalar(p, q)`` is p/q."""
    return (A[k2 - 1][l - 1] * v[k1 - 1] + A[k1 - 1][l - 1] * v[k2 - 1]) * scalar(1, omega(k1, k2))

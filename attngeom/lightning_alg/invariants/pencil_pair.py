"""Quartics from two members of the pencil of slices: the 4 x 4 minors of [M(u); M(w)]
(new; from the slice formula of ADM Prop 24).

Construction.  On the variety the slices M_b = M_{n,j}^{(b)} (the symmetric coefficient
matrices of the columns of F_{n,j}) are 1/2 (v a_b^T + a_b v^T) (ADM Prop 24), so for
u, w in K^d

    M(u) = sum_b u_b M_b = 1/2 (v (Au)^T + (Au) v^T),

whose rows lie in span(v, Au); the rows of the 2d x d matrix [M(u); M(w)] lie in
span(v, Au, Aw), so it has rank <= 3 and its 4 x 4 minors vanish for all u, w.  (Geometrically:
any two quadrics q_u = l m_u, q_w = l m_w of the span share the singular points on l = m_u =
m_w = 0, since both vertex spaces lie in the hyperplane l = v.z = 0.)

A 4 x 4 minor with three rows from one block is, by Laplace expansion along those rows, a
combination of 3 x 3 minors of one pencil M(u), hence of ADM Prop 24's cubics.  The new ones
take two rows R1 = {r1, r2} from M(u) and two rows R2 = {r3, r4} from M(w), and columns C (a
4-subset of [d]).  Such a minor is a form of bidegree (2, 2) in (u, w); its coefficient of
u^{S1} w^{S2} (S1, S2 multisets of size 2 of [d]) is the mixed minor

    Delta = sum_{(t1,t2) in Perm(S1)} sum_{(t3,t4) in Perm(S2)}
            det( M_{t_a}[r_a, C] )_{a = 1..4}       (row a: row r_a of M_{t_a}),

a quartic in the coordinates.  Exchanging (R1, S1) with (R2, S2) gives the same polynomial
(the two row blocks swap: an even permutation), so the members are the unordered pairs,
without those where every determinant repeats a row (row r of the same M_t) and the
member is 0: C(d,4) (P (P + 1) / 2 - d^2 C(d,2) - d^2 C(d-1,2)) of them, P = C(d,2) C(d+1,2)
(:func:`pair_count`).  Example (highest weight at d = 4):
R1 = R2 = {1, 2}, S1 = {1, 1}, S2 = {2, 2}: the determinant of rows 1, 2 of M_1 on rows 1, 2
of M_2.
"""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement
from math import comb

import numpy as np

from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.coordinate_matrices import MinorCombinationFamily
from attngeom.lightning_alg.invariants.cross_cubic import pencil_float, pencil_mod_p, stacked_slices
from attngeom.lightning_alg.labels import distinct_permutations, multisets

SOURCE = "new; rank [M(u); M(w)] <= 3 from ADM Prop 24's slices"


def row_choices(d: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(R, S): a 2-subset R of the rows of one block and the multiset S of its u-exponents,
    1-based, R outermost, both lexicographic."""
    return [(R, S) for R in combinations(range(1, d + 1), 2) for S in multisets(d, 2)]


def pair_count(d: int) -> int:
    """C(d,4) (P (P + 1) / 2 - d^2 C(d,2) - d^2 C(d-1,2)), P = C(d,2) C(d+1,2): the unordered
    pairs without those whose every term repeats a row (:func:`repeats_a_row`): R1 = R2 with
    S1 = {b, b} and b in S2 (d^2 pairs {S1, S2} for each R), or R1, R2 sharing one row with
    S1 = S2 = {b, b} (d C(d-1,2) pairs {R1, R2}, d values of b)."""
    blocks = comb(d, 2) * comb(d + 1, 2)
    zero = d * d * comb(d, 2) + d * d * comb(d - 1, 2)
    return comb(d, 4) * (blocks * (blocks + 1) // 2 - zero)


def terms(first, second):
    """The row lists ((r_a, t_a))_{a=1..4} of the determinants of one member."""
    (R1, S1), (R2, S2) = first, second
    return [tuple(zip(R1 + R2, t1 + t2))
            for t1 in distinct_permutations(S1) for t2 in distinct_permutations(S2)]


def repeats_a_row(first, second) -> bool:
    """Whether every determinant of the member has two equal rows (row r of the same M_t):
    the member is 0 by construction."""
    return all(len(set(rows)) < 4 for rows in terms(first, second))


def pair_indices(d: int):
    """Every member (C, (R1, S1), (R2, S2)), 1-based: C outermost, then the unordered pairs
    of row choices (the first not after the second), without those that repeat a row."""
    pairs = [(first, second) for first, second in combinations_with_replacement(row_choices(d), 2)
             if not repeats_a_row(first, second)]
    for C in combinations(range(1, d + 1), 4):
        for first, second in pairs:
            yield C, first, second


def pair_minor_family(coords: CoordinateSystem, row: int, col: int, context: int,
                      indices) -> MinorCombinationFamily:
    """The mixed minors Delta for the given (C, (R1, S1), (R2, S2)): for each ordering of S1
    and of S2, the determinant whose row a is row r_a of M^{(t_a)}, on the columns C."""
    d = coords.d
    stacked = stacked_slices(coords, row, col, context)
    indices = list(indices)
    members = []
    for C, first, second in indices:
        members.append([(1, tuple((t - 1) * d + r - 1 for r, t in rows), tuple(c - 1 for c in C))
                        for rows in terms(first, second)])
    keys = [{"row": row, "col": col, "context": context, "C": list(C), "R1": list(R1),
             "S1": list(S1), "R2": list(R2), "S2": list(S2)} for C, (R1, S1), (R2, S2) in indices]
    return MinorCombinationFamily.of_minors(
        f"2+2 minors of [M(u); M(w)] ({SOURCE})", stacked, members, keys)


def pair_mod_p(stacked_values: np.ndarray, u: np.ndarray, w: np.ndarray, prime: int) -> np.ndarray:
    """[M(u); M(w)] mod p at a batch (shape=[B, 2d, d]); ``stacked_values`` as in
    :func:`~attngeom.lightning_alg.invariants.cross_cubic.pencil_mod_p`."""
    return np.concatenate([pencil_mod_p(stacked_values, u, prime),
                           pencil_mod_p(stacked_values, w, prime)], axis=1)


def pair_float(stacked_values, u, w, backend):
    """[M(u); M(w)] in float64 on ``backend``."""
    return backend.concat([pencil_float(stacked_values, u, backend),
                           pencil_float(stacked_values, w, backend)], axis=1)

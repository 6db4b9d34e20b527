"""Cross-column cubics: the rank-two pencil of slices and its mixed minors (ADM Prop 24).

For an output row i, a target column j and a context column n != j, the slices

    M_{n,j}^{(k)} = (T~_{(k1,n),(k2,n),(k,j)})_{k1,k2 in [d]},   k in [d],

equal 1/2 (v a_k^T + a_k v^T) on the variety (v the row i of V, a_k the k-th column of A),
so every pencil M(lambda) = sum_k lambda_k M^{(k)} = 1/2 (v u^T + u v^T), u = A lambda, has
rank <= 2.  The coefficient of lambda_{s1} lambda_{s2} lambda_{s3} in the (R, C) 3 x 3 minor
of M(lambda) is the mixed minor

    Delta_{R,C}^S = sum_{(t1,t2,t3) in Perm(S)} det( T~_{(r_a,n),(c_b,n),(t_a,j)} )_{a,b},

for R, C 3-subsets of [d] and S in Mult_3([d]); ADM counts C(d,3)^2 C(d+2,3) of them.
Because every slice is symmetric, Delta_{R,C}^S = Delta_{C,R}^S as polynomials, so only
C(C(d,3)+1, 2) C(d+2,3) of the indexed polynomials are distinct (see docs/cross-column.md).
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.coordinate_matrices import (
    CoordinateMatrix, MinorCombinationFamily, cross_column_slice)
from attngeom.lightning_alg.labels import distinct_permutations, multisets

SOURCE = "ADM Prop 24"


def prop24_count(d: int) -> int:
    """C(d,3)^2 C(d+2,3), the number of (R, C, S) as printed in ADM Prop 24."""
    return comb(d, 3) ** 2 * comb(d + 2, 3)


def distinct_mixed_minor_count(d: int) -> int:
    """C(C(d,3)+1, 2) C(d+2,3): unordered {R, C} (Delta_{R,C}^S = Delta_{C,R}^S) times S."""
    return comb(comb(d, 3) + 1, 2) * comb(d + 2, 3)


def mixed_minor_indices(d: int):
    """Every (R, C, S) of Prop 24, 1-based: R outermost, then C, then S, each lexicographic."""
    triples = list(combinations(range(1, d + 1), 3))
    for R in triples:
        for C in triples:
            for S in multisets(d, 3):
                yield R, C, S


def stacked_slices(coords: CoordinateSystem, row: int, col: int, context: int) -> CoordinateMatrix:
    """The d slices on top of each other (d^2 x d): row (k-1) d + k1 - 1 is row k1 of M^{(k)}."""
    d = coords.d
    slices = [cross_column_slice(coords, row, col, context, k) for k in range(1, d + 1)]
    return CoordinateMatrix(np.concatenate([m.index for m in slices]),
                            tuple(f"M^({k})[{k1}]" for k in range(1, d + 1) for k1 in range(1, d + 1)),
                            slices[0].col_names, coords)


def mixed_minor_family(coords: CoordinateSystem, row: int, col: int, context: int,
                       indices) -> MinorCombinationFamily:
    """Delta_{R,C}^S for the given (R, C, S): for each distinct ordering (t1,t2,t3) of S,
    the determinant whose row a is row r_a of M^{(t_a)}, restricted to the columns C."""
    d = coords.d
    stacked = stacked_slices(coords, row, col, context)
    indices = list(indices)
    terms = [[(1, tuple((t - 1) * d + r - 1 for r, t in zip(R, ts)), tuple(c - 1 for c in C))
              for ts in distinct_permutations(tuple(S))] for R, C, S in indices]
    keys = [{"row": row, "col": col, "context": context, "R": list(R), "C": list(C), "S": list(S)}
            for R, C, S in indices]
    return MinorCombinationFamily.of_minors(f"mixed minors Delta_{{R,C}}^S ({SOURCE})", stacked,
                                            terms, keys)


def pencil_mod_p(stacked_values: np.ndarray, lam: np.ndarray, prime: int) -> np.ndarray:
    """M(lambda) = sum_k lambda_k M^{(k)} mod p at a batch: ``stacked_values`` is the
    stacked slices at B points (shape=[B, d^2, d]), ``lam`` shape=[B, d]."""
    batch, rows, d = stacked_values.shape
    slices = stacked_values.reshape(batch, d, d, d)
    total = np.zeros((batch, d, d), dtype=np.int64)
    for k in range(d):
        total = (total + lam[:, k, None, None] * slices[:, k] % prime) % prime
    return total


def pencil_float(stacked_values, lam, backend):
    """M(lambda) in float64 on ``backend`` (arrays of it, shapes as in :func:`pencil_mod_p`)."""
    batch, rows, d = stacked_values.shape
    return backend.module.einsum("bk,bkrc->brc", lam, stacked_values.reshape(batch, d, d, d))


def slice_formula(A, v, k: int, half) -> list[list]:
    """1/2 (v a_k^T + a_k v^T) for the k-th column a_k of A (1-based k), as nested lists.

    ``A`` (d x d nested lists) and ``v`` (length d) hold SymPy ring elements or numbers;
    ``half`` is 1/2 in the same arithmetic.
    """
    d = len(v)
    column = [A[m][k - 1] for m in range(d)]
    return [[(v[k1] * column[k2] + column[k1] * v[k2]) * half for k2 in range(d)] for k1 in range(d)]

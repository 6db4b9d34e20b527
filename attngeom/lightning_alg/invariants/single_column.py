"""The single-column slice of one output coordinate: the cubic f_T and the matrix N(j,j,j).

ADM §4 (Prop 17): in output coordinate (i, j) the single-column coordinates
y_j(K) = y_{(k1,j),(k2,j),(k3,j)}, K in Mult_3([d]), are the entries T_K of a symmetric
tensor T, and the associated cubic is

    f_T(x) = sum_{k1,k2,k3} T_{k1 k2 k3} x_k1 x_k2 x_k3 = sum_K |Perm K| y_j(K) x^K
           = (x^T A x)(v_i . x)                               (proof of Prop 17)

so on the attention variety f_T is of split type (2,1).  The specialized coefficient
submatrix is N(j,j,j) = (T_{k,k,k'})_{k,k' in [d]}, and the proof of Prop 17(1) writes

    3 N = diag(v_i) A + diag(v_i) A^T + diag(A) v_i^T.

These coordinates exist for every t >= 1 (for t = 1 they are all the coordinates).
Everything here is indexed by K in lexicographic order (``labels.multisets(d, 3)``),
which is also the order of ADM Example 19's rows x1^3, x1^2x2, ..., xd^3.
"""

from __future__ import annotations

import numpy as np

from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import Sampler
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.determinantal import LinearMatrix
from attngeom.lightning_alg.labels import Label, multisets, orbit_size
from attngeom.lightning_alg.parametrization import Parametrization, WeightBatch, sample_weights_mod_p


#: ADM Example 19's names of the d = 3 single-column coordinates.
EXAMPLE19_LETTERS = {(1, 1, 1): "a", (2, 2, 2): "b", (3, 3, 3): "c", (1, 1, 2): "d",
                     (2, 2, 3): "e", (1, 3, 3): "f", (1, 2, 2): "g", (2, 3, 3): "h",
                     (1, 1, 3): "i", (1, 2, 3): "j"}


def single_column_labels(coords: CoordinateSystem) -> list[Label]:
    """y_j(K) of the coordinate system's output (row, col), K in lexicographic order."""
    return [Label(coords.row, coords.col, 0, K) for K in multisets(coords.d, 3)]


def single_column_indices(coords: CoordinateSystem) -> np.ndarray:
    """Positions of the single-column labels among all coordinates of ``coords``."""
    return np.array([coords.index[label] for label in single_column_labels(coords)],
                    dtype=np.int64)


def single_column_symbols(coords: CoordinateSystem) -> list:
    return [coords.symbol(label) for label in single_column_labels(coords)]


def display_names(coords: CoordinateSystem, fmt: str) -> tuple[list[str], list[str]]:
    """(names, legend) for printing matrices over the single-column coordinates.

    Macaulay2 and JSON get the full labels (``y_((1,1),(1,1),(2,1))``); text and LaTeX get
    ADM Example 19's letters a..j for d = 3, else Example 21's compact y_{k1k2k3}
    (y(k1,k2,k3) when d > 9), with a legend line per coordinate.
    """
    labels = single_column_labels(coords)
    if fmt in ("m2", "json"):
        return [label.m2(coords.with_row) for label in labels], []
    if coords.d == 3:
        names = [EXAMPLE19_LETTERS[label.rows] for label in labels]
    elif coords.d <= 9:
        digits = ["".join(map(str, label.rows)) for label in labels]
        names = [f"y{k}" if fmt == "text" else f"y_{{{k}}}" for k in digits]
    else:
        names = ["y(" + ",".join(map(str, label.rows)) + ")" for label in labels]
    paper = {label: "   (ADM: y" + "".join(map(str, label.rows)) + ")" if coords.d == 3 else ""
             for label in labels}
    legend = sorted(f"{name} = {label.text(coords.with_row)}{paper[label]}"
                    for name, label in zip(names, labels))
    return names, legend


def monomial_name(K: tuple[int, ...]) -> str:
    """x^K as ADM Example 19 writes it: (1,1,2) -> 'x1^2x2' ('*' between factors when d > 9)."""
    parts = []
    for k in sorted(set(K)):
        power = K.count(k)
        parts.append(f"x{k}" + (f"^{power}" if power > 1 else ""))
    return ("*" if max(K) > 9 else "").join(parts)


def cubic_coefficients(values, d: int) -> list:
    """The coefficients c_K = |Perm K| y_j(K) of f_T in the monomial basis x^K."""
    return [orbit_size(K) * y for K, y in zip(multisets(d, 3), values)]


def coefficient_submatrix(d: int) -> LinearMatrix:
    """N(j,j,j) = (T_{k,k,k'})_{k,k'} of ADM Prop 17(1), over the single-column coordinates."""
    index = {K: n for n, K in enumerate(multisets(d, 3))}
    terms = tuple((k - 1, kp - 1, index[tuple(sorted((k, k, kp)))], 1)
                  for k in range(1, d + 1) for kp in range(1, d + 1))
    names = tuple(str(k) for k in range(1, d + 1))
    return LinearMatrix(names, names, len(index), terms)


def submatrix_decomposition(A, v) -> list[list[list]]:
    """The three terms of 3 N in the proof of Prop 17(1): diag(v) A, diag(v) A^T and
    diag(A) v^T (d x d nested lists of ring elements or numbers)."""
    d = len(v)
    return [[[v[k] * A[k][kp] for kp in range(d)] for k in range(d)],
            [[v[k] * A[kp][k] for kp in range(d)] for k in range(d)],
            [[A[k][k] * v[kp] for kp in range(d)] for k in range(d)]]


# -- points of the slice --------------------------------------------------------------
def slice_mod_p(coords: CoordinateSystem, weights: WeightBatch) -> np.ndarray:
    """y_j(K) = mu(W) on the single-column labels, shape=[B, C(d+2,3)], int64 mod p."""
    return Parametrization(coords).evaluate_mod_p(weights)[:, single_column_indices(coords)]


def sample_slice_mod_p(coords: CoordinateSystem, a: int, points: int, sampler: Sampler,
                       prime: int) -> tuple[WeightBatch, np.ndarray]:
    """(weights, y): uniform weights over F_p (rank(A) <= a) and their single-column slice."""
    weights = sample_weights_mod_p(sampler, points, coords.d, coords.dprime, a, prime)
    return weights, slice_mod_p(coords, weights)


def slice_dimension_mod_p(coords: CoordinateSystem, weights: WeightBatch, b: int) -> int:
    """Rank over F_p of the Jacobian of W -> y_j(K) at the b-th weight point: the dimension
    of the slice variety when the point is general.

    mu is bilinear in (A, V), so its derivative along a direction dA (or dV) is
    mu(dA, V) (or mu(A, dV)): exact, no differencing.  With A = K^T Q = sum_r k_r q_r^T
    the directions of q_{r,l} and k_{r,m} are k_r e_l^T and e_m q_r^T.
    """
    p = weights.prime
    A, V = weights.A[b], weights.V[b]
    d, dprime = A.shape[0], V.shape[0]
    unit = np.eye(d, dtype=np.int64)
    if weights.Q is None:
        directions = [np.outer(unit[m], unit[l]) for m in range(d) for l in range(d)]
    else:
        Q, K = weights.Q[b], weights.K[b]
        directions = [np.outer(K[r], unit[l]) % p for r in range(Q.shape[0]) for l in range(d)]
        directions += [np.outer(unit[m], Q[r]) % p for r in range(Q.shape[0]) for m in range(d)]
    along_A = WeightBatch(np.stack(directions), np.broadcast_to(V, (len(directions), dprime, d)),
                          prime=p)
    value_units = np.zeros((dprime * d, dprime, d), dtype=np.int64)
    for n in range(dprime * d):
        value_units[n, n // d, n % d] = 1
    along_V = WeightBatch(np.broadcast_to(A, (dprime * d, d, d)), value_units, prime=p)
    jacobian = np.concatenate([slice_mod_p(coords, along_A), slice_mod_p(coords, along_V)])
    return rank_mod_p(jacobian, p)

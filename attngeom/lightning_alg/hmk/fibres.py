"""Parameter symmetries and fibres of lightning self-attention (HMK §3.1–3.3, App. A).

* HMK Lemma 3.1: GL_a acts on factorizations A = K^T Q by (Q, K) -> (C^{-T} Q, C K); two
  factorizations of a rank-a matrix differ by a unique C (:func:`factor_from_rows`,
  :func:`gauge_between`).
* HMK Thm 3.2: (A, V) and (lambda A, V / lambda) give the same function; for
  A = k (x) q, V = h (x) v the second preimage is W' = (v (x) q, h (x) k)
  (:func:`rank_one_swap`).
* HMK Lemma A.3: at A = k (x) q, V = h (x) k every (p (x) q, -h (x) p) is in the kernel of
  the differential (:func:`critical_kernel_vector`).
* HMK eq (9): inter-layer GL_{d_i} (V_i -> C_i V_i C_{i-1}^{-1},
  A_{i+1} -> C_i^{-T} A_{i+1} C_i^{-1}); eq (13): layer rescalings.

:func:`symmetry_tangents` gives the Lie-algebra tangent vectors of all these group actions at a
point of the (Q, K, V) parameter space.  They lie in the kernel of the Jacobian of
W -> phi_W identically, so their rank s gives the exact upper bound P - s on the dimension of
the neuromanifold that :mod:`attngeom.lightning_alg.hmk.dimension` compares the measured rank with.

Vectors u (x) w are outer products u w^T, as in HMK (A = k (x) q acts as x^T A y =
(x.k)(q.y)).  Arrays mod p are int64 residues.
"""

from __future__ import annotations

import numpy as np
from flint import nmod_mat

from attngeom.core.errors import BadInput
from attngeom.kernels.primefield import matmul_mod_p, pivot_rows, to_nmod_mat

#: More symmetry-tangent entries than this are not formed (no upper bound is certified).
MAX_TANGENT_ENTRIES = 20_000_000


# -- small exact linear algebra over F_p ---------------------------------------------------
def _from_nmod(matrix: nmod_mat) -> np.ndarray:
    return np.array([[int(matrix[i, j]) for j in range(matrix.ncols())]
                     for i in range(matrix.nrows())], dtype=np.int64).reshape(
        matrix.nrows(), matrix.ncols())


def inverse_mod_p(matrix: np.ndarray, prime: int) -> np.ndarray:
    """The inverse over F_p of a square matrix (ZeroDivisionError if singular)."""
    return _from_nmod(to_nmod_mat(matrix, prime).inv())


def outer_mod_p(u: np.ndarray, w: np.ndarray, prime: int) -> np.ndarray:
    """u (x) w = u w^T mod p."""
    return np.outer(u, w) % prime


# -- Lemma 3.1 -------------------------------------------------------------------------------
def gauge_action(Q: np.ndarray, K: np.ndarray, C: np.ndarray, prime: int):
    """(C^{-T} Q, C K), the GL_a action of HMK Lemma 3.1, mod p."""
    inverse_T = inverse_mod_p(C, prime).T.copy()
    return matmul_mod_p(inverse_T, Q, prime), matmul_mod_p(C, K, prime)


def factor_from_rows(A: np.ndarray, prime: int):
    """A factorization A = K'^T Q' read off A alone: Q' = a independent rows of A
    (a = rank A), K'^T = the coordinates of every row of A in that basis.  Returns (Q', K')."""
    rows = pivot_rows(A, prime)
    Q2 = A[rows]
    cols = pivot_rows(Q2.T.copy(), prime)           # columns where Q' is invertible
    K2_T = matmul_mod_p(A[:, cols], inverse_mod_p(Q2[:, cols], prime), prime)
    return Q2, K2_T.T.copy()


def gauge_between(K: np.ndarray, K2: np.ndarray, prime: int) -> np.ndarray:
    """The C of HMK Lemma 3.1 with K2 = C K, from an a x a invertible block of K (rank a)."""
    cols = pivot_rows(K.T.copy(), prime)
    if len(cols) != K.shape[0]:
        raise BadInput("Lemma 3.1 needs rank K = a")
    return matmul_mod_p(K2[:, cols], inverse_mod_p(K[:, cols], prime), prime)


# -- Thm 3.2 and Lemma A.3 ----------------------------------------------------------------
def rank_one_swap(k, q, h, v, prime: int):
    """W = (k (x) q, h (x) v) and HMK Thm 3.2's second preimage W' = (v (x) q, h (x) k)."""
    W = (outer_mod_p(k, q, prime), outer_mod_p(h, v, prime))
    W2 = (outer_mod_p(v, q, prime), outer_mod_p(h, k, prime))
    return W, W2


def critical_kernel_vector(q, h, p, prime: int) -> np.ndarray:
    """(dA, dV) = (p (x) q, -h (x) p) flattened in (A, V) order (HMK Lemma A.3's proof)."""
    dA = outer_mod_p(p, q, prime)
    dV = (-outer_mod_p(h, p, prime)) % prime
    return np.concatenate([dA.ravel(), dV.ravel()])


# -- all symmetry tangents of a (Q, K, V) network ------------------------------------------
def symmetry_tangents(weights, negate, rescaling: bool) -> np.ndarray | None:
    """Tangent vectors of the known symmetries at ``weights`` = [Q_1, K_1, V_1, Q_2, ...],
    as rows in the parameter order of :func:`attngeom.kernels.jacobian.parameter_duals`.

    Per layer i, for each elementary E = e_r e_c^T in gl_{a_i} (HMK Lemma 3.1):
    dK_i = E K_i, dQ_i = -E^T Q_i.  Per layer, if ``rescaling`` (lightning, HMK Thm 3.2 /
    eq 13): dQ_i = Q_i, dV_i = -V_i.  Between layers i and i+1, for each E in gl_{d_i}
    (HMK eq 9): dV_i = E V_i, dV_{i+1} = -V_{i+1} E, dQ_{i+1} = -Q_{i+1} E,
    dK_{i+1} = -K_{i+1} E.  ``negate`` is x -> -x in the arithmetic of the weights.
    Returns None when the matrix would exceed MAX_TANGENT_ENTRIES.
    """
    blocks = [np.asarray(w) for w in weights]
    layers = len(blocks) // 3
    count = sum(blocks[3 * i].shape[0] ** 2 + rescaling for i in range(layers))
    count += sum(blocks[3 * i + 2].shape[0] ** 2 for i in range(layers - 1))
    if count * sum(b.size for b in blocks) > MAX_TANGENT_ENTRIES:
        return None
    rows = []

    def blank():
        return [np.zeros_like(b) for b in blocks]

    def emit(tangent):
        rows.append(np.concatenate([t.ravel() for t in tangent]))

    for i in range(layers):
        Q, K, V = blocks[3 * i:3 * i + 3]
        for r in range(Q.shape[0]):
            for c in range(Q.shape[0]):
                tangent = blank()
                tangent[3 * i + 1][r] = K[c]
                tangent[3 * i][c] = negate(Q[r])
                emit(tangent)
        if rescaling:
            tangent = blank()
            tangent[3 * i], tangent[3 * i + 2] = Q.copy(), negate(V)
            emit(tangent)
    for i in range(1, layers):
        V_in = blocks[3 * (i - 1) + 2]
        Q, K, V = blocks[3 * i:3 * i + 3]
        for r in range(V_in.shape[0]):
            for c in range(V_in.shape[0]):
                tangent = blank()
                tangent[3 * (i - 1) + 2][r] = V_in[c]
                tangent[3 * i + 2][:, c] = negate(V[:, r])
                tangent[3 * i][:, c] = negate(Q[:, r])
                tangent[3 * i + 1][:, c] = negate(K[:, r])
                emit(tangent)
    return np.stack(rows)

"""Mixing the heads: the GL_H symmetry of H lightning heads with a >= d (issue 24; derived
here, not a statement of ADM or HMK).

One layer of H heads computes f(X) = sum_h V_h X (X^T A_h X).  Its coefficients (ADM Prop 6)
are linear in each V_h (x) A_h, so f depends only on the tensor

    T = sum_h V_h (x) A_h  in  F^{d' x d} (x) F^{d x d},

an element of rank <= H.  For G in GL_H the change

    (V_h, A_h) -> (sum_g V_g G_gh, sum_g (G^{-1})_hg A_g)

leaves T, hence f, unchanged.  With a >= d every A_h is reachable (A = K^T Q has no rank
bound), so the variety is the image under a linear map of the rank-<= H tensors of
F^{d'd} (x) F^{d^2}, whose dimension is H (dd' + d^2 - H) for H <= min(dd', d^2): the
expected dimension is min(H (dd' + d^2 - H), span), a defect H (H - 1) against
H dim_1 = H (d^2 + dd' - 1) (HMK eq 7 for a > d), :func:`mixing_expected_dimension`.

Tangent of G = I + eps E_rc (E_rc the matrix unit, r != c): dV_c = V_r, dA_r = -A_c.  In the
network's weights (Q, K, V) the change of A_r is carried by Q_r: dQ_r = -R_r A_c with R_r a
right inverse of K_r^T (K_r^T R_r = I_d, R_r = K_r (K_r^T K_r)^{-1}, which exists for a >= d
and generic K_r), so d(K_r^T Q_r) = K_r^T dQ_r = -A_c.  The diagonal E_hh is the scaling
(cA_h, V_h / c) already among :meth:`VariantNetwork.symmetry_tangents`.
"""

from __future__ import annotations

import numpy as np
from attngeom.kernels.primefield import matmul_mod_p, to_nmod_mat
from attngeom.lightning_alg.models.network import VariantNetwork


def mixing_defect(heads: int) -> int:
    """H (H - 1): the dimension of GL_H beyond the H per-head scalings."""
    return heads * (heads - 1)


def mixing_expected_dimension(heads: int, d: int, dprime: int, span: int) -> int:
    """min(H dim_1 - H (H - 1), span) with dim_1 = d^2 + dd' - 1 (HMK eq 7, a >= d); that
    is min(H (dd' + d^2 - H), span), the dimension of the rank-<= H tensors of
    F^{d'd} (x) F^{d^2} capped by the linear span of the variety."""
    single = d * d + d * dprime - 1
    return min(heads * single - mixing_defect(heads), span)


def rank_h_tensor_dimension(heads: int, d: int, dprime: int) -> int:
    """The dimension of the tensors of rank <= H in F^{d'd} (x) F^{d^2}: H (dd' + d^2 - H) for
    H <= min(dd', d^2), else the whole space, d' d^3.  For every a (not only a >= d) the
    coefficients of H heads are a linear image of sum_h V_h (x) A_h, a tensor of rank <= H:
    an upper bound of the dimension of one layer of H heads."""
    if heads <= min(d * dprime, d * d):
        return heads * (d * dprime + d * d - heads)
    return dprime * d ** 3


def right_inverse_mod_p(K: np.ndarray, prime: int) -> np.ndarray:
    """R = K (K^T K)^{-1} mod p, shape=[a, d], so that K^T R = I_d (K shape=[a, d], a >= d;
    ZeroDivisionError when K^T K is singular mod p)."""
    gram = to_nmod_mat(matmul_mod_p(K.T.copy(), K, prime), prime).inv()
    inverse = np.array([[int(gram[i, j]) for j in range(gram.ncols())]
                        for i in range(gram.nrows())], dtype=np.int64)
    return matmul_mod_p(K, inverse, prime)


def layer_mixing_tangents(blocks: list[np.ndarray], heads: int, prime: int) -> list[list[np.ndarray]]:
    """The tangents of G = I + eps E_rc, r != c (module docstring) of one layer whose blocks
    are [Q_1, K_1, V_1, ..., Q_H, K_H, V_H] (a >= d), each as changes of those blocks, mod p."""
    H = heads
    A = [matmul_mod_p(blocks[3 * h + 1].T.copy(), blocks[3 * h], prime) for h in range(H)]
    inverses = [right_inverse_mod_p(blocks[3 * h + 1], prime) for h in range(H)]
    out = []
    for r in range(H):
        for c in range(H):
            if r == c:
                continue
            tangent = [np.zeros_like(b) for b in blocks]
            tangent[3 * c + 2] = blocks[3 * r + 2].copy()                        # dV_c = V_r
            tangent[3 * r] = (-matmul_mod_p(inverses[r], A[c], prime)) % prime    # dQ_r
            out.append(tangent)
    return out


def head_mixing_tangents(net: VariantNetwork, weights, prime: int) -> np.ndarray:
    """Rows: the tangents of G = I + eps E_rc, r != c (module docstring), of every layer i
    with a_i >= d_(i-1) (GL_H mixes the heads of each such layer on its own: the layer's map,
    hence the network's, is unchanged, whatever the skip), at ``weights``, as vectors over
    the flat weights, mod p."""
    H = net.variant.heads
    blocks = [np.asarray(w, dtype=np.int64) for w in weights]
    rows, start = [], 0
    for i in range(1, net.arch.layers + 1):
        count = len(net.layer_shapes(i))
        if H >= 2 and net.arch.a[i - 1] >= net.arch.d[i - 1]:
            for local in layer_mixing_tangents(blocks[start:start + 3 * H], H, prime):
                tangent = [np.zeros_like(b) for b in blocks]
                tangent[start:start + 3 * H] = local
                rows.append(np.concatenate([t.ravel() for t in tangent]))
        start += count
    return np.stack(rows) if rows else np.zeros((0, net.parameters), dtype=np.int64)

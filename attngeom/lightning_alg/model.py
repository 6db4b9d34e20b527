"""The lightning self-attention map, deep networks of it, and the softmax variant.

All functions take arrays of any backend that supports ``@`` and ``.T``: NumPy and PyTorch
arrays, JAX arrays and SymPy matrices (for exact expansions).  Shapes follow ADM Def 1 and
HMK Def 1: X in R^{d x t} has the tokens as columns, Q, K in R^{a x d}, V in R^{d' x d}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from attngeom.core.errors import BadInput


def attention_matrix(Q, K):
    """A = K^T Q (HMK eq 3), shape=[d, d]."""
    return K.T @ Q


def lightning_attention(X, A, V):
    """phi_W(X) = V X (X^T A X) (ADM §2.1; HMK eq 2), shape=[d', t].

    Column j is sum_n (x_n^T A x_j) V x_n: token j attends bilinearly to every token n.
    """
    return V @ (X @ (X.T @ A @ X))


@dataclass(frozen=True)
class Layer:
    """One lightning layer W_i = (A_i, V_i), A_i in R^{d_{i-1} x d_{i-1}}, V_i in R^{d_i x d_{i-1}}."""

    A: Any
    V: Any


def layer_from_qkv(Q, K, V) -> Layer:
    return Layer(attention_matrix(Q, K), V)


def deep_lightning_attention(X, layers: Sequence[Layer]):
    """phi_W = phi_{W_l} o ... o phi_{W_1} (HMK Def 2), homogeneous of degree 3^l in X.

    HMK Def 2 prints Q_i, K_i in R^{a_i x d_i}; since layer i acts on R^{d_{i-1}}, the
    attention matrix A_i = K_i^T Q_i must be d_{i-1} x d_{i-1}, which is what this
    function requires (and what HMK eq 14's alpha_1 d_0 term uses).
    """
    out = X
    for depth, layer in enumerate(layers, start=1):
        rows = out.shape[0]
        if tuple(layer.A.shape) != (rows, rows) or layer.V.shape[1] != rows:
            raise BadInput(f"layer {depth}: A must be {rows}x{rows} and V must have {rows} "
                           f"columns; got A {tuple(layer.A.shape)}, V {tuple(layer.V.shape)}")
        out = lightning_attention(out, layer.A, layer.V)
    return out


def softmax_attention(X, A, V, backend):
    """Normalized self-attention, HMK eq (15), with S = exp.

    Output column i is (1/zeta_i) sum_j S(x_i^T A x_j) V x_j with
    zeta_i = sum_k S(x_i^T A x_k).  Note the order x_i^T A x_j of eq (15), the transpose of
    the lightning score x_j^T A x_i of HMK eq (1); the maximum score of each column is
    subtracted before exponentiating, which leaves the quotient unchanged.
    """
    scores = X.T @ A @ X  # scores[i, j] = x_i^T A x_j
    shifted = scores - scores.max(1, keepdims=True) if backend.name != "torch" \
        else scores - scores.max(dim=1, keepdim=True).values
    weights = backend.exp(shifted)
    weights = weights / backend.sum(weights, axis=1)[:, None]
    return V @ X @ weights.T

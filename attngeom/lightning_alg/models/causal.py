"""Causal (masked) lightning self-attention (ADM §6: "masked self-attention").

    phi_W(X)_{:, j} = sum_{n <= j} (x_n^T A x_j) V x_n,   i.e.  V X ((X^T A X) o M)

with M the t x t upper-triangular 0/1 matrix M[n, j] = 1 iff n <= j (output column j
attends to the columns 1..j).  Column j is the unmasked output of the first j tokens, so
in ADM's coordinates of output (i, j) the cross-column coordinates of a context n > j are
zero and the others are those of sequence length j.
"""

from __future__ import annotations

import numpy as np


def causal_mask(t: int, dtype=np.int64) -> np.ndarray:
    """M[n, j] = 1 iff n <= j (0-based as 1-based), shape=[t, t]."""
    return np.triu(np.ones((t, t), dtype=dtype))


def elementwise(scores, mask):
    """scores o mask for NumPy / torch / jax arrays, dual numbers and SymPy matrices (whose
    ``*`` is the matrix product)."""
    if hasattr(scores, "multiply_elementwise"):
        import sympy
        return scores.multiply_elementwise(sympy.Matrix(mask.tolist()))
    return scores * mask


def masked_lightning_attention(X, A, V, mask):
    """V X ((X^T A X) o M), shape=[d', t]."""
    return V @ (X @ elementwise(X.T @ A @ X, mask))

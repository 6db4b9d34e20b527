"""Multi-head lightning self-attention (ADM §6, HMK §5).

    phi_W(X) = sum_{h=1..H} V_h X (X^T A_h X),   A_h = K_h^T Q_h (rank A_h <= a)

Each head has its own A_h (or Q_h, K_h) and V_h; the outputs are summed.  Since mu is
linear in the tensor V (x) A, the coefficient vector of H heads is the sum of the H
single-head vectors: the variety is the join of H copies of the single-head variety.
"""

from __future__ import annotations

from typing import Sequence

from attngeom.lightning_alg.model import Layer, lightning_attention
from attngeom.lightning_alg.models.causal import masked_lightning_attention


def multihead_attention(X, heads: Sequence[Layer], mask=None):
    """sum_h V_h X ((X^T A_h X) o M), shape=[d', t]; M the 0/1 mask of
    :func:`attngeom.lightning_alg.models.causal.causal_mask` or None (no mask)."""
    total = None
    for head in heads:
        out = lightning_attention(X, head.A, head.V) if mask is None else \
            masked_lightning_attention(X, head.A, head.V, mask)
        total = out if total is None else total + out
    return total

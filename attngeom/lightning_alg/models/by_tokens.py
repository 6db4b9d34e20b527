"""The variant networks token by token, from their definitions: the reference that the
claims of :mod:`attngeom.lightning_alg.claims.beyond` hold the vectorized network
(:class:`~attngeom.lightning_alg.models.network.VariantNetwork`) to.

Written apart from the network (no shared helper: no ``attention_matrix``, no mask matrix,
no ``with_skip``), in exact integer arithmetic (Python ints):

    column j of head h of layer i:  sum_{n in N(j)} ((K_ih y_n) . (Q_ih y_j)) V_ih y_n,
    N(j) = {1..j} with the causal mask (ADM §6: column j attends to the columns 1..j),
    N(j) = {1..t} without;  y_n^T K^T Q y_j = x_n^T A x_j, A = K^T Q (HMK eq 3);

the heads summed (HMK §5), then + Y (identity skip) or + W_s Y (linear skip).
"""

from __future__ import annotations

import numpy as np


def _split(weights, heads: int, skip: str, layers: int) -> list[tuple[list, object]]:
    """The flat weights [Q, K, V] * H (+ W_s) per layer as (heads, W_s)."""
    out, k = [], 0
    per_layer = 3 * heads + (skip == "linear")
    for _ in range(layers):
        block = list(weights[k:k + per_layer])
        out.append(([tuple(block[3 * h:3 * h + 3]) for h in range(heads)],
                     block[-1] if skip == "linear" else None))
        k += per_layer
    if k != len(weights):
        raise ValueError(f"{len(weights)} weight blocks for {layers} layers of {per_layer}")
    return out


def output_by_tokens(weights, X, heads: int, skip: str, causal: bool, layers: int) -> np.ndarray:
    """The network's output at X, column by column from the module docstring's sum
    (object array of Python ints; weights and X any integer arrays)."""
    Y = [[int(v) for v in column] for column in np.asarray(X).T.tolist()]   # Y[j] = y_j
    for head_weights, S in _split(weights, heads, skip, layers):
        t = len(Y)
        rows = len(np.asarray(head_weights[0][2]))
        new = [[0] * rows for _ in range(t)]
        for Q, K, V in head_weights:
            Q, K, V = (np.asarray(M).astype(object) for M in (Q, K, V))
            keys = [K.dot(y) for y in Y]
            queries = [Q.dot(y) for y in Y]
            values = [V.dot(y) for y in Y]
            for j in range(t):
                for n in range(j + 1 if causal else t):
                    score = int(sum(keys[n][r] * queries[j][r] for r in range(len(keys[n]))))
                    for r in range(rows):
                        new[j][r] += score * int(values[n][r])
        if skip == "identity":
            new = [[new[j][r] + Y[j][r] for r in range(rows)] for j in range(t)]
        elif skip == "linear":
            S = np.asarray(S).astype(object)
            new = [[new[j][r] + int(v) for r, v in enumerate(S.dot(Y[j]))] for j in range(t)]
        Y = new
    return np.array(Y, dtype=object).T

"""A network of variant lightning layers as a map of its weights (HMK Def 2 with §5's
heads and skips, ADM §6's mask).

Layer i (input width d_{i-1}, output width d_i) has H heads (Q_ih, K_ih in F^{a_i x d_{i-1}},
V_ih in F^{d_i x d_{i-1}}) and, for --skip linear, W_s,i in F^{d_i x d_{i-1}}:

    Y_i = sum_h V_ih Y_{i-1} ((Y_{i-1}^T K_ih^T Q_ih Y_{i-1}) o M) + skip_i(Y_{i-1}),  Y_0 = X

with M the causal mask (or all ones) and skip_i = 0, the identity (d_i = d_{i-1}) or W_s,i.
The weights are the flat list [Q_11, K_11, V_11, ..., Q_1H, K_1H, V_1H, (W_s,1), Q_21, ...],
the parameter order of :func:`attngeom.kernels.jacobian.parameter_duals`; P counts them:
P = sum_i d_{i-1} (H (2 a_i + d_i) + [linear] d_i).

Symmetries (:meth:`VariantNetwork.symmetry_tangents`; each leaves phi unchanged):

* per head, GL_{a_i} on the factorization A = K^T Q (HMK Lemma 3.1): dK = E K, dQ = -E^T Q;
* per head, the scaling (A_h, V_h) -> (c A_h, V_h / c) (HMK Thm 3.2): dQ = Q, dV = -V;
* between layers i and i+1, unless --skip identity, GL_{d_i} (HMK eq 9, extended to the
  skip weights): dV_ih = E V_ih, dW_s,i = E W_s,i, and every weight of layer i+1 Z -> -Z E.
  It leaves HMK's virtual weights (M, L) (eq 8) unchanged.  The identity skip Y + f(Y) fixes
  the basis of Y: no GL_{d_i}.  The per-layer rescalings of HMK eq 13 (of M_i and L) are not
  part of GL_{d_i}: they come from the per-head scalings above, which every skip keeps (f
  itself is unchanged by them).

Head mixing (GL_H, a_i >= d_{i-1}) is a further symmetry, its tangents in
:func:`attngeom.lightning_alg.models.mixing.head_mixing_tangents`.

Their orbit dimension s bounds the fibre from below; the Jacobian rank r bounds it from
above by P - r.  When P - r = s the generic fibre is the symmetry orbit (certified).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler
from attngeom.lightning_alg.hmk.dimension import Architecture
from attngeom.lightning_alg.model import Layer, attention_matrix
from attngeom.lightning_alg.models.causal import causal_mask
from attngeom.lightning_alg.models.multihead import multihead_attention
from attngeom.lightning_alg.models.skip import with_skip
from attngeom.lightning_alg.models.variant import Variant


@dataclass(frozen=True)
class VariantNetwork:
    """Lightning layers d = (d_0..d_l), a = (a_1..a_l), sequence length t, of a Variant."""

    arch: Architecture
    variant: Variant

    def __post_init__(self):
        if self.arch.softmax:
            raise BadInput("--heads, --skip and --causal are for lightning attention, not --softmax")
        if self.variant.skip == "identity" and len(set(self.arch.d)) != 1:
            raise BadInput(f"--skip identity (f(X) + X) needs equal widths d_0 = ... = d_l; "
                           f"got d = {list(self.arch.d)}")

    # -- shapes -------------------------------------------------------------------------
    def layer_shapes(self, i: int) -> list[tuple[int, int]]:
        """The weight shapes of layer i (1-based): H x (Q, K, V), then W_s if linear."""
        d_in, d_out, a = self.arch.d[i - 1], self.arch.d[i], self.arch.a[i - 1]
        shapes = [(a, d_in), (a, d_in), (d_out, d_in)] * self.variant.heads
        return shapes + ([(d_out, d_in)] if self.variant.skip == "linear" else [])

    def weight_shapes(self) -> list[tuple[int, int]]:
        return [s for i in range(1, self.arch.layers + 1) for s in self.layer_shapes(i)]

    @property
    def parameters(self) -> int:
        """P = sum_i d_{i-1} (H (2 a_i + d_i) + [linear] d_i)."""
        return sum(r * c for r, c in self.weight_shapes())

    def split(self, weights) -> list[tuple[list[Layer], object, list]]:
        """Per layer: (heads as Layers, W_s or None, the layer's raw weights)."""
        out, k = [], 0
        for i in range(1, self.arch.layers + 1):
            n = len(self.layer_shapes(i))
            raw = list(weights[k:k + n])
            heads = [Layer(attention_matrix(raw[3 * h], raw[3 * h + 1]), raw[3 * h + 2])
                     for h in range(self.variant.heads)]
            out.append((heads, raw[-1] if self.variant.skip == "linear" else None, raw))
            k += n
        return out

    # -- evaluation ---------------------------------------------------------------------
    def mask(self, dtype=np.int64):
        return causal_mask(self.arch.t, dtype) if self.variant.causal else None

    def function(self, dtype=np.int64):
        """func(weights, X, backend) -> phi_W(X) (the signature of
        :func:`attngeom.kernels.jacobian.jacobian_mod_p`); ``dtype`` of the mask: int64 over
        F_p, float64 for floats (SymPy takes either)."""
        mask = self.mask(dtype)

        def phi(weights, X, backend=None):
            out = X
            for heads, S, _ in self.split(weights):
                out = with_skip(multihead_attention(out, heads, mask), out, self.variant.skip, S)
            return out

        return phi

    def sample_weights(self, sampler: Sampler, prime: int | None) -> list[np.ndarray]:
        """Uniform residues mod p, or normal floats with variance 1/d_{i-1}."""
        if prime is not None:
            return [sampler.prime_field(shape, prime) for shape in self.weight_shapes()]
        return [sampler.floats(shape, 1 / math.sqrt(shape[1])) for shape in self.weight_shapes()]

    # -- symmetries ---------------------------------------------------------------------
    def symmetry_tangents(self, weights, negate) -> np.ndarray:
        """Rows: the tangent vectors of the symmetries of the module docstring at
        ``weights`` (``negate`` is x -> -x in their arithmetic)."""
        blocks = [np.asarray(w) for w in weights]
        offsets = np.cumsum([0] + [len(self.layer_shapes(i)) for i in range(1, self.arch.layers + 1)])
        H, rows = self.variant.heads, []

        def emit(changes: dict):
            tangent = [np.zeros_like(b) for b in blocks]
            for k, value in changes.items():
                tangent[k] = value
            rows.append(np.concatenate([t.ravel() for t in tangent]))

        for i in range(self.arch.layers):
            for h in range(H):
                q, k, v = (offsets[i] + 3 * h + j for j in range(3))
                Q, K, V = blocks[q], blocks[k], blocks[v]
                for r in range(Q.shape[0]):
                    for c in range(Q.shape[0]):
                        dK, dQ = np.zeros_like(K), np.zeros_like(Q)
                        dK[r], dQ[c] = K[c], negate(Q[r])
                        emit({k: dK, q: dQ})
                emit({q: Q.copy(), v: negate(V)})
        if self.variant.skip == "identity":
            return np.stack(rows)
        for i in range(self.arch.layers - 1):
            outputs = [offsets[i] + 3 * h + 2 for h in range(H)]
            if self.variant.skip == "linear":
                outputs.append(offsets[i + 1] - 1)
            width = self.arch.d[i + 1]
            for r in range(width):
                for c in range(width):
                    changes = {}
                    for o in outputs:            # E Z: row r of the change is row c of Z
                        dZ = np.zeros_like(blocks[o])
                        dZ[r] = blocks[o][c]
                        changes[o] = dZ
                    for o in range(offsets[i + 1], offsets[i + 2]):  # -Z E: column c <- -column r
                        dZ = np.zeros_like(blocks[o])
                        dZ[:, c] = negate(blocks[o][:, r])
                        changes[o] = dZ
                    emit(changes)
        return np.stack(rows)

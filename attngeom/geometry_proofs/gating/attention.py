"""Attention layers written in :mod:`attngeom.geometry_proofs.ops`, and the constructions of GEC that
live inside them: Thm 3.6's sphere witness, a fixed-memory softmax readout (GEC §2.2 with
fixed value vectors) and Lemma 3.11's gated residual stack.

Every construction is a map ``phi, ops -> output`` written once; wrapped in a
:class:`~attngeom.geometry_proofs.riemann.Immersion`, its curvature is computed exactly (SymPy) or
numerically (torch / jax autodiff, NumPy through the lambdified formula).
Rows of X are token positions (GEC Thm 3.6: Q(X) = X W_Q, U(X) = X W_V W_O).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from attngeom.geometry_proofs.ops import evaluate_expression
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler


def softmax_attention(X, W_Q, W_K, W_V, W_O, ops):
    """Y = softmax((X W_Q)(X W_K)^T) X W_V W_O, shape=[n, D] (GEC Thm 3.6: the softmax of
    Q K^T as printed, rows of the weights alpha_ji sum to 1)."""
    scores = (X @ W_Q) @ (X @ W_K).T
    return ops.softmax(scores) @ (X @ W_V @ W_O)


def gated_attention(X, W_Q, W_K, W_V, W_O, W_theta, ops, strength=1):
    """Y' = Y ⊙ sigma(strength * X_g W_theta) with the gating input X_g = X (each position
    gates its own output, GEC §2.2), shape=[n, D]; strength = 1 is the paper's gate."""
    return softmax_attention(X, W_Q, W_K, W_V, W_O, ops) * ops.sigmoid(strength * (X @ W_theta))


def memory_readout(query, keys, values, ops):
    """y = sum_i softmax(K q)_i U_i: one query attending over n fixed keys and fixed value
    vectors U_i (GEC §2.2 and Thm 3.1's setting), shape=[D]."""
    return ops.softmax(keys @ query) @ values


# --------------------------------------------------------------------------------------
# GEC Thm 3.6 (proof A.1.4): the sphere witness
# --------------------------------------------------------------------------------------

def sphere_patch(phi, ops, tail):
    """s~(phi) = (cos p1 cos p2, cos p1 sin p2, sin p1, c_4, ..., c_D) (Thm 3.6, Cor 3.8)."""
    s = [ops.cos(phi[0]) * ops.cos(phi[1]), ops.cos(phi[0]) * ops.sin(phi[1]), ops.sin(phi[0])]
    return ops.stack(s + [c + 0 * phi[0] for c in ops.const(tail)])


@dataclass(frozen=True)
class SphereWitness:
    """The construction of GEC A.1.4 inside one single-head gated attention layer.

    Tokens X(phi) in R^{n x m}, m = 2D.  W_Q = W_K = 0, so the softmax is uniform;
    L = W_V W_O has rank D (its top D x D block L_top is invertible, its bottom rows are 0);
    W_theta in R^{m x D} has rank D with invertible bottom block W_b, and
    W_theta^dagger = [0 | W_b^{-1}] is a left inverse (W_theta^dagger W_theta = I_D).
    Token 1 carries the value: X_1 = [n (a + B phi)^T L_top^{-1}, .], so U_1 = n (a + B phi)
    and U_i = 0 for i >= 2; the output position j = n gates with
    X_g = X_n = t(phi)^T W_theta^dagger, t = sigma^{-1}(s~ / (a + B phi)) (for n = 1 the
    single token carries both, its second block corrected so that X_1 W_theta = t^T).
    """

    values: int
    ambient: int
    offset: np.ndarray          # a, shape=[D] (Fractions)
    slope: np.ndarray           # B, shape=[D, 2]
    W_V: np.ndarray             # shape=[m, D]
    W_O: np.ndarray             # shape=[D, D]
    W_theta: np.ndarray         # shape=[m, D]
    gate_left_inverse: np.ndarray  # W_theta^dagger, shape=[D, m]
    value_right_inverse: np.ndarray  # L_top^{-1} padded to shape=[D, m]
    tail: tuple = ()            # c_4, ..., c_D
    gate_strength: Any = 1

    @property
    def token_dim(self) -> int:
        return self.W_V.shape[0]

    @property
    def W_Q(self) -> np.ndarray:
        return np.full((self.token_dim, self.token_dim), Fraction(0), dtype=object)

    def affine(self, phi, ops):
        """a + B phi, the ungated output the proof builds (Step 1)."""
        return ops.const(self.offset) + ops.const(self.slope) @ phi

    def sphere(self, phi, ops):
        return sphere_patch(phi, ops, self.tail)

    def gate_preactivation(self, phi, ops):
        """t(phi) = sigma^{-1}(s~(phi) / (a + B phi)) (Step 2)."""
        return ops.logit(self.sphere(phi, ops) / self.affine(phi, ops))

    def tokens(self, phi, ops, carried=None):
        """X(phi), shape=[n, m]; ``carried`` (default a + B phi) is what U_1 / n equals."""
        carried = self.affine(phi, ops) if carried is None else carried
        n = self.values
        value_block = (self.values * carried) @ ops.const(self.value_right_inverse)
        zero = 0 * value_block
        t = self.gate_preactivation(phi, ops)
        rows = [value_block] + [zero] * (n - 1)
        rows[-1] = rows[-1] + (t - rows[-1] @ ops.const(self.W_theta)) @ ops.const(self.gate_left_inverse)
        return ops.stack(rows)

    def ungated(self, phi, ops, carried=None):
        """Y_j(X(phi)) at the output position j = n."""
        W_Q = ops.const(self.W_Q)
        return softmax_attention(self.tokens(phi, ops, carried), W_Q, W_Q, ops.const(self.W_V),
                                 ops.const(self.W_O), ops)[-1]

    def gated(self, phi, ops):
        """Y'_j(X(phi)) = Y_j ⊙ sigma(gate_strength X_g W_theta) at j = n."""
        W_Q = ops.const(self.W_Q)
        return gated_attention(self.tokens(phi, ops), W_Q, W_Q, ops.const(self.W_V),
                               ops.const(self.W_O), ops.const(self.W_theta), ops,
                               ops.scalar(self.gate_strength))[-1]

    def with_gate_strength(self, strength) -> "SphereWitness":
        return replace(self, gate_strength=strength)


#: U = (0, pi/4)^2, the domain of Thm 3.6's proof.
SPHERE_DOMAIN = (0.0, float(np.pi) / 4)
#: The compact box [pi/32, 7pi/32]^2 inside U where numeric checks sample.  Towards the edge
#: of U a coordinate z = s~_k / (a + B phi)_k of the gate tends to 0, t = logit(z) to -inf,
#: and the gate's second derivatives (terms of size |z'|^2 / z^2) are mixed into the other
#: coordinates by the float64 product t^T W_theta^dagger W_theta: at phi_2 = 1.5e-4 the
#: autodiff K is off by 6e-8.  The construction is exact there (``--method symbolic``).
SPHERE_SAMPLING_BOX = (float(np.pi) / 32, 7 * float(np.pi) / 32)


def _invertible_integer_matrix(sampler: Sampler, size: int, bound: int = 3) -> np.ndarray:
    while True:
        matrix = sampler.integers((size, size), -bound, bound)
        if round(abs(np.linalg.det(matrix))) >= 1:
            return matrix


def _exact_inverse(matrix: np.ndarray) -> np.ndarray:
    inverse = sympy.Matrix(matrix.tolist()).inv()
    return np.array([[Fraction(int(x.p), int(x.q)) for x in row] for row in inverse.tolist()],
                    dtype=object)


def build_sphere_witness(values: int = 3, ambient: int = 3, seed: int = 0,
                         gate_strength=1) -> SphereWitness:
    """Thm 3.6's witness with seeded integer weights: a = (2, ..., 2), B with entries in
    {-2..2}/8 of rank 2 (so a + B phi > 1 >= s~ on U), tail constants c_k = 1/2."""
    if values < 1 or ambient < 3:
        raise BadInput(f"the sphere witness needs n >= 1 values and D >= 3; got n={values}, D={ambient}")
    sampler = Sampler(seed)
    D, m = ambient, 2 * ambient
    while True:
        slope = sampler.integers((D, 2), -2, 2)
        if np.linalg.matrix_rank(slope) == 2:
            break
    slope = np.array([[Fraction(int(x), 8) for x in row] for row in slope], dtype=object)
    value_top, W_O = _invertible_integer_matrix(sampler, D), _invertible_integer_matrix(sampler, D)
    W_V = np.zeros((m, D), dtype=np.int64)
    W_V[:D] = value_top
    W_theta = np.vstack([sampler.integers((D, D), -3, 3), _invertible_integer_matrix(sampler, D)])
    left_inverse = np.zeros((D, m), dtype=object)
    left_inverse[:, :] = Fraction(0)
    left_inverse[:, D:] = _exact_inverse(W_theta[D:])
    right_inverse = np.zeros((D, m), dtype=object)
    right_inverse[:, :] = Fraction(0)
    right_inverse[:, :D] = _exact_inverse(value_top @ W_O)
    return SphereWitness(values, D, np.array([Fraction(2)] * D, dtype=object), slope,
                         W_V.astype(object), W_O.astype(object), W_theta.astype(object),
                         left_inverse, right_inverse, tuple([Fraction(1, 2)] * (D - 3)),
                         gate_strength)


# --------------------------------------------------------------------------------------
# A sphere patch realized by ungated softmax attention over fixed values (GEC Thm 3.2)
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemorySphere:
    """Ungated softmax attention with n = 4 fixed keys e_1..e_4 and fixed value vectors
    U = (3 e_1, 3 e_2, 3 e_3, 0), queried by q(phi) = log alpha(phi) with the barycentric
    coordinates alpha = (s/3, 1 - (s_1 + s_2 + s_3)/3) of the unit-sphere patch s(phi):
    the output is s(phi) exactly, so K = 1 without any gate."""

    scale: int = 3

    @property
    def keys(self) -> np.ndarray:
        return np.eye(4, dtype=np.int64).astype(object)

    @property
    def values(self) -> np.ndarray:
        U = np.zeros((4, 3), dtype=np.int64)
        U[:3] = self.scale * np.eye(3, dtype=np.int64)
        return U.astype(object)

    def query(self, phi, ops):
        s = sphere_patch(phi, ops, ())
        weights = [s[0] / self.scale, s[1] / self.scale, s[2] / self.scale,
                   1 - (s[0] + s[1] + s[2]) / self.scale]
        return ops.log(ops.stack(weights))

    def output(self, phi, ops):
        return memory_readout(self.query(phi, ops), ops.const(self.keys), ops.const(self.values), ops)


@dataclass(frozen=True)
class MemoryFamily:
    """A 2-parameter input family through a softmax attention layer with fixed values:
    q(phi) = (x0 + phi_1 v1 + phi_2 v2) W_Q, keys C W_K, value vectors U (n x D)."""

    context: np.ndarray   # C, shape=[n, m]
    W_Q: np.ndarray       # shape=[m, m]
    W_K: np.ndarray       # shape=[m, m]
    values: np.ndarray    # U, shape=[n, D]
    base: np.ndarray      # x0, shape=[m]
    directions: np.ndarray  # (v1, v2), shape=[2, m]

    def output(self, phi, ops):
        x = ops.const(self.base) + phi @ ops.const(self.directions)
        keys = ops.const(self.context) @ ops.const(self.W_K)
        return memory_readout(x @ ops.const(self.W_Q), keys, ops.const(self.values), ops)

    def as_json(self) -> dict:
        return {name: np.asarray(getattr(self, name), dtype=float).round(12).tolist()
                for name in ("context", "W_Q", "W_K", "values", "base", "directions")}


def build_memory_family(values: int, seed: int = 0) -> MemoryFamily:
    """Seeded weights: m = n + 2 token features, D = n, entries N(0, 1/m) so the softmax is
    neither uniform nor saturated."""
    sampler = Sampler(seed)
    m = values + 2
    scale = 1 / np.sqrt(m)
    return MemoryFamily(sampler.floats((values, m)), sampler.floats((m, m), scale),
                        sampler.floats((m, m), scale), sampler.floats((values, values)),
                        sampler.floats(m), sampler.floats((2, m)))


# --------------------------------------------------------------------------------------
# GEC Lemma 3.11 (proof A.1.7): the gated residual stack in normal form
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NormalFormStack:
    """L gated attention layers with residual connections realizing
    (u, v) -> (u, v, sum_l a_l psi(u, v), 0, ..., 0) in R^D (D >= 4), as A.1.7 builds it:
    h^(0) = (u, v, 0, 1, 0, ..., 0); each layer attends over the single token h (softmax
    weight 1), W_V W_O sends the constant 4th coordinate to the 3rd, so Y = e_3; the gate
    input is X_g = logit(a_l psi(u, v)) e_3 with W_theta = I_D, so Y' = a_l psi e_3;
    h^(l) = h^(l-1) + Y'; the output is P h^(L) with P keeping the first three coordinates."""

    amplitudes: tuple   # a_1, ..., a_L (Fractions)
    psi: sympy.Expr     # an expression in u, v
    ambient: int = 4

    @property
    def layers(self) -> int:
        return len(self.amplitudes)

    def value_output_map(self) -> np.ndarray:
        L = np.zeros((self.ambient, self.ambient), dtype=np.int64)
        L[3, 2] = 1
        return L.astype(object)

    def layer(self, h, amplitude, ops):
        D = self.ambient
        X = ops.stack([h])
        identity = ops.const(np.eye(D, dtype=np.int64).astype(object))
        Y = softmax_attention(X, identity, identity, identity, ops.const(self.value_output_map()), ops)
        psi = evaluate_expression(self.psi, {"u": h[0], "v": h[1]}, ops)
        e3 = ops.const([0, 0, 1] + [0] * (D - 3))
        X_g = ops.stack([ops.logit(ops.scalar(amplitude) * psi) * e3])
        # the gate of every coordinate other than the 3rd is sigma(0) = 1/2, acting on Y = e_3
        gated = Y * ops.sigmoid(X_g @ identity)
        return h + gated[0]

    def output(self, phi, ops):
        D = self.ambient
        zero = 0 * phi[0]
        h = ops.stack([phi[0], phi[1], zero, zero + 1] + [zero] * (D - 4))
        for amplitude in self.amplitudes:
            h = self.layer(h, amplitude, ops)
        keep = np.zeros((D, D), dtype=np.int64)
        keep[0, 0] = keep[1, 1] = keep[2, 2] = 1
        return h @ ops.const(keep.astype(object))

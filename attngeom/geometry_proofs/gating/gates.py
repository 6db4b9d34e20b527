"""Gates g(phi) acting on an affine output Y(phi) = a + B phi, mu = Y ⊙ g (GEC Lemma 3.5,
Thm 3.18, Thm 3.21), written in :mod:`attngeom.geometry_proofs.ops` so that the claims can expand
them exactly and differentiate them on any backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attngeom.geometry_proofs.gating.attention import sphere_patch
from attngeom.kernels.sampling import Sampler


def affine_output(phi, offset, slope, ops):
    """Y(phi) = a + B phi."""
    return ops.const(offset) + ops.const(slope) @ phi


def hadamard_second_derivative(B_i, B_j, Y, dg_i, dg_j, ddg_ij):
    """GEC Lemma 3.5 as printed: d_ij (Y ⊙ g) = B_i ⊙ d_j g + B_j ⊙ d_i g + Y ⊙ d_ij g."""
    return B_i * dg_j + B_j * dg_i + Y * ddg_ij


@dataclass(frozen=True)
class MLPGate:
    """A random smooth gate g(phi) = sigma(W2 tanh(W1 phi + b1) + b2) in (0, 1)^D: a generic
    element of C^2(U, R^D) for Lemma 3.5 and Thm 3.21."""

    W1: np.ndarray   # shape=[h, d]
    b1: np.ndarray   # shape=[h]
    W2: np.ndarray   # shape=[D, h]
    b2: np.ndarray   # shape=[D]

    def __call__(self, phi, ops):
        hidden = ops.tanh(ops.const(self.W1) @ phi + ops.const(self.b1))
        return ops.sigmoid(ops.const(self.W2) @ hidden + ops.const(self.b2))

    def perturbed(self, sampler: Sampler, size: float) -> "MLPGate":
        return MLPGate(*(w + sampler.floats(np.shape(w), size) for w in
                         (self.W1, self.b1, self.W2, self.b2)))


def random_gate(sampler: Sampler, domain_dim: int, ambient: int, hidden: int = 8) -> MLPGate:
    return MLPGate(sampler.floats((hidden, domain_dim)), sampler.floats(hidden),
                   sampler.floats((ambient, hidden)), sampler.floats(ambient))


@dataclass(frozen=True)
class ConstantGate:
    """g = value (1/2 = sigma(0), the gate of W_theta = 0): mu = Y / 2 is affine and flat."""

    ambient: int
    value: Fraction = Fraction(1, 2)

    def __call__(self, phi, ops):
        return ops.const([self.value] * self.ambient) + 0 * phi[0]


@dataclass(frozen=True)
class QuadraticGate:
    """g_m(phi) = 1/2 + (phi - phi0)^T C_m (phi - phi0): value 1/2 and zero gradient at phi0,
    so D mu(phi0) = B / 2 and T = Im B, with curvature from C (Thm 3.21's non-flat g)."""

    center: np.ndarray        # phi0, shape=[d]
    quadratic: np.ndarray     # C, shape=[D, d, d] (exact)

    def __call__(self, phi, ops):
        x = phi - ops.const(self.center)
        return ops.scalar(Fraction(1, 2)) + (ops.const(self.quadratic) @ x) @ x


def density_perturbation(phi, center, Y, normal, mask, eps, ops):
    """GEC A.1.15: (h_eps)_j = chi q_eps n_j / Y_j for j in S, 0 otherwise, with
    q_eps = eps/2 |phi - phi0|^2 and ``mask`` the indicator of S (arrays of ``ops``).
    chi = 1 on a neighbourhood of phi0, and everything the theorem uses (D mu, D^2 mu at
    phi0) depends only on the germ there, so chi is omitted."""
    x = phi - center
    q = eps / 2 * (x @ x)
    safe_Y = Y * mask + (1 - mask)
    return q * normal * mask / safe_Y


@dataclass(frozen=True)
class PerturbedGate:
    """g~_eps = g + h_eps (Thm 3.21's density step) for Y = a + B phi, exact constants."""

    gate: object
    offset: np.ndarray
    slope: np.ndarray
    center: np.ndarray
    normal: np.ndarray
    support: tuple
    eps: object

    def __call__(self, phi, ops):
        Y = affine_output(phi, self.offset, self.slope, ops)
        mask = ops.const([1 if j in self.support else 0 for j in range(len(self.normal))])
        return self.gate(phi, ops) + density_perturbation(
            phi, ops.const(self.center), Y, ops.const(self.normal), mask, self.eps, ops)


@dataclass(frozen=True)
class PerturbedGateFamily:
    """mu(phi; theta) = Y(phi) ⊙ (MLP_w(phi) + h_eps(phi)) with the gate weights w, the unit
    normal n, eps and the support mask of S packed into one parameter vector theta, so that
    many gates and perturbations are evaluated (and differentiated in phi) in one batch.
    W2 = b2 = 0 gives the constant gate sigma(0) = 1/2 (flat)."""

    offset: np.ndarray   # a, shape=[D]
    slope: np.ndarray    # B, shape=[D, d]
    center: np.ndarray   # phi0, shape=[d]
    hidden: int = 8

    @property
    def shapes(self) -> tuple:
        D, d = self.slope.shape
        return ((self.hidden, d), (self.hidden,), (D, self.hidden), (D,), (D,), (1,), (D,))

    @property
    def size(self) -> int:
        return int(sum(np.prod(shape) for shape in self.shapes))

    def pack(self, gate: MLPGate, normal, eps: float, mask) -> np.ndarray:
        parts = (gate.W1, gate.b1, gate.W2, gate.b2, normal, [eps], mask)
        return np.concatenate([np.asarray(x, dtype=float).reshape(-1) for x in parts])

    def __call__(self, phi, ops, theta):
        pieces, start = [], 0
        for shape in self.shapes:
            size = int(np.prod(shape))
            pieces.append(theta[start:start + size].reshape(shape))
            start += size
        W1, b1, W2, b2, normal, eps, mask = pieces
        Y = affine_output(phi, self.offset, self.slope, ops)
        gate = ops.sigmoid(W2 @ ops.tanh(W1 @ phi + b1) + b2)
        return Y * (gate + density_perturbation(phi, ops.const(self.center), Y, normal, mask,
                                                eps[0], ops))


@dataclass(frozen=True)
class GateRealization:
    """GEC A.1.14 (ii): mu_W(phi) = Y(phi) ⊙ sigma(X*(phi) W) with X* = (ell, 0, ..., 0) in
    R^m, ell = sigma^{-1}(z), W* = [I_D; 0] and the target s~ = (s, c_4, ..., c_D).

    ``printed`` builds z = s~ ⊙ Y as the proof prints it; otherwise z = s~ ⊘ Y (as Thm 3.6's
    Step 2 divides), which is what makes mu_{W*} = s~.
    """

    offset: np.ndarray
    slope: np.ndarray
    gate_dim: int
    printed: bool
    tail: tuple = ()

    @property
    def ambient(self) -> int:
        return len(self.offset)

    def target(self, phi, ops):
        return sphere_patch(phi, ops, self.tail)

    def z(self, phi, ops):
        Y = affine_output(phi, self.offset, self.slope, ops)
        s = self.target(phi, ops)
        return s * Y if self.printed else s / Y

    def gate_input(self, phi, ops):
        ell = ops.logit(self.z(phi, ops))
        zero = 0 * ell[0]
        return ops.concat([ell, ops.stack([zero] * (self.gate_dim - self.ambient))]) \
            if self.gate_dim > self.ambient else ell

    def optimal_weights(self) -> np.ndarray:
        """W* = [I_D; 0], shape=[m, D]."""
        W = np.zeros((self.gate_dim, self.ambient), dtype=np.int64)
        W[:self.ambient] = np.eye(self.ambient, dtype=np.int64)
        return W.astype(object)

    def output(self, phi, ops, weights=None):
        """mu_W(phi); ``weights`` is an array of ``ops`` (default: W*)."""
        weights = ops.const(self.optimal_weights()) if weights is None else weights
        Y = affine_output(phi, self.offset, self.slope, ops)
        return Y * ops.sigmoid(self.gate_input(phi, ops) @ weights)

    def output_with_flat_weights(self, phi, ops, theta):
        """mu_W(phi) with W given row-major as a vector of length m D (for batched W)."""
        return self.output(phi, ops, theta.reshape(self.gate_dim, self.ambient))


def build_gate_realization(ambient: int, gate_dim: int, printed: bool) -> GateRealization:
    """a = (2, ..., 2), B = [[1, 0], [0, 1], [1, 1], ...] / 4 (rank 2, a + B phi > 1 >= s~ on
    U = (0, pi/4)^2), tail constants 1/2."""
    slope = np.array([[Fraction(1 if i % 3 != 1 else 0, 4), Fraction(1 if i % 3 != 0 else 0, 4)]
                      for i in range(ambient)], dtype=object)
    return GateRealization(np.array([Fraction(2)] * ambient, dtype=object), slope, gate_dim,
                           printed, tuple([Fraction(1, 2)] * (ambient - 3)))

"""The parametrization mu(W): weights -> scaled coefficient coordinates (ADM Def 7, eq 3).

For a label of output row i (ADM Prop 6 and eq 3)

    single-column  y(K)   = (1/|Perm K|) sum_{(p1,p2,p3) in Perm K} a_{p2 p3} v_{i p1}
    cross-column   y(A,b) = (1/|Perm A|) sum_{(p1,p2) in Perm A}    a_{p2 b}  v_{i p1}

with A = K^T Q.  When a >= d every d x d matrix is some K^T Q, so A is taken as a generic
matrix; when a < d the map goes through (Q, K) and has rank(A) <= a built in.

Three evaluations share one table of index arrays: symbolic (SymPy polynomial ring over
QQ), exact mod p (int64 residues) and floating point on any backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sympy import QQ
from sympy.polys.rings import ring

from attngeom.kernels.backend import Backend, get_backend
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.labels import distinct_permutations


@dataclass(frozen=True)
class WeightBatch:
    """B weight points: A (shape=[B, d, d]), V (shape=[B, d', d]) and, when a < d, Q and K
    (shape=[B, a, d]).  Arrays are int64 residues mod ``prime`` or float64 (prime None)."""

    A: np.ndarray
    V: np.ndarray
    Q: np.ndarray | None = None
    K: np.ndarray | None = None
    prime: int | None = None

    def point(self, b: int) -> dict:
        """The b-th point as nested lists of Python numbers (for counterexamples)."""
        out = {"A": self.A[b].tolist(), "V": self.V[b].tolist()}
        if self.Q is not None:
            out.update(Q=self.Q[b].tolist(), K=self.K[b].tolist())
        return out


def uses_query_key(d: int, a: int) -> bool:
    """Whether rank(A) <= a is a real constraint (a < d), so mu must go through (Q, K)."""
    return a < d


def sample_weights_mod_p(sampler: Sampler, batch: int, d: int, dprime: int, a: int,
                         prime: int = DEFAULT_PRIME) -> WeightBatch:
    """Uniform weights over F_p; A = K^T Q mod p when a < d."""
    V = sampler.prime_field((batch, dprime, d), prime)
    if not uses_query_key(d, a):
        return WeightBatch(sampler.prime_field((batch, d, d), prime), V, prime=prime)
    Q = sampler.prime_field((batch, a, d), prime)
    K = sampler.prime_field((batch, a, d), prime)
    A = np.zeros((batch, d, d), dtype=np.int64)
    for r in range(a):  # sum of a rank-one terms, reduced each time: no int64 overflow
        A = (A + K[:, r, :, None] * Q[:, r, None, :] % prime) % prime
    return WeightBatch(A, V, Q, K, prime)


def sample_weights_integer(sampler: Sampler, batch: int, d: int, dprime: int, a: int,
                           bound: int = 3) -> WeightBatch:
    """Small integer weights in [-bound, bound] (for exact, human-readable witnesses)."""
    V = sampler.integers((batch, dprime, d), -bound, bound)
    if not uses_query_key(d, a):
        return WeightBatch(sampler.integers((batch, d, d), -bound, bound), V)
    Q = sampler.integers((batch, a, d), -bound, bound)
    K = sampler.integers((batch, a, d), -bound, bound)
    return WeightBatch(np.einsum("bri,brj->bij", K, Q), V, Q, K)


def sample_weights_float(sampler: Sampler, batch: int, d: int, dprime: int, a: int) -> WeightBatch:
    """Standard normal weights; A = K^T Q when a < d."""
    V = sampler.floats((batch, dprime, d))
    if not uses_query_key(d, a):
        return WeightBatch(sampler.floats((batch, d, d)), V)
    Q = sampler.floats((batch, a, d))
    K = sampler.floats((batch, a, d))
    return WeightBatch(np.einsum("bri,brj->bij", K, Q), V, Q, K)


class Parametrization:
    """mu(W) on the coordinates of a :class:`CoordinateSystem`.

    The unscaled coefficient of coordinate c is sum_k v[row_c, P1[c,k]] a[P2[c,k], P3[c,k]]
    over its at most six distinct orderings k (``mask`` marks the real ones), and
    y_c = coefficient / orbit_c.
    """

    def __init__(self, coords: CoordinateSystem):
        self.coords = coords
        n = len(coords)
        self.p1 = np.zeros((n, 6), dtype=np.int64)
        self.p2 = np.zeros((n, 6), dtype=np.int64)
        self.p3 = np.zeros((n, 6), dtype=np.int64)
        self.mask = np.zeros((n, 6), dtype=np.int64)
        self.out_row = np.zeros(n, dtype=np.int64)
        self.orbit = np.zeros(n, dtype=np.int64)
        for c, label in enumerate(coords.labels):
            self.out_row[c] = label.row - 1
            self.orbit[c] = label.orbit_size
            for k, (p1, p2, p3) in enumerate(self.orderings(label)):
                self.p1[c, k], self.p2[c, k], self.p3[c, k] = p1 - 1, p2 - 1, p3 - 1
                self.mask[c, k] = 1

    @staticmethod
    def orderings(label) -> list[tuple[int, int, int]]:
        """The (p1, p2, p3) of the Prop 6 sum: the term is a_{p2 p3} v_{i p1}."""
        if label.is_single:
            return list(distinct_permutations(label.rows))
        b = label.target_row
        return [(p1, p2, b) for p1, p2 in distinct_permutations(label.multiset)]

    # -- exact and floating evaluation -------------------------------------------------
    def unscaled_mod_p(self, weights: WeightBatch, backend: Backend | None = None):
        """The standard coefficients c (ADM Prop 6) mod p, shape=[B, N], on ``backend``
        (NumPy by default; torch for int64 on a GPU)."""
        be = backend or get_backend("numpy")
        p = weights.prime
        A, V = be.asarray(weights.A, "int64"), be.asarray(weights.V, "int64")
        p1, p2, p3, mask = (be.asarray(x, "int64") for x in (self.p1, self.p2, self.p3, self.mask))
        v = V[:, be.asarray(self.out_row[:, None], "int64"), p1]   # [B, N, 6]
        a = A[:, p2, p3]                                            # [B, N, 6]
        return be.remainder(be.sum(be.remainder(v * a, p) * mask, axis=2), p)

    def evaluate_mod_p(self, weights: WeightBatch, backend: Backend | None = None):
        """y = mu(W) mod p, shape=[B, N], on ``backend`` (NumPy by default)."""
        be = backend or get_backend("numpy")
        p = weights.prime
        inverse = be.asarray([pow(int(o), -1, p) for o in self.orbit], "int64")
        return be.remainder(self.unscaled_mod_p(weights, be) * inverse, p)

    #: Weight points evaluated at once: keeps each [rows, N, 6] intermediate near 256 MB (at
    #: d = 8 and B = 10^6 one unchunked intermediate is 18 GiB, and a GPU holds four of them).
    TERM_ENTRIES = 2**25

    def evaluate_float(self, A, V, backend: Backend | None = None):
        """y = mu(W) in floating point; A, V are arrays of ``backend`` with shapes [B,d,d], [B,d',d]."""
        backend = backend or get_backend("numpy")
        p1, p2, p3 = (backend.asarray(x, "int64") for x in (self.p1, self.p2, self.p3))
        rows = backend.asarray(self.out_row[:, None], "int64")
        weight = backend.asarray(self.mask / self.orbit[:, None])
        step = max(1, self.TERM_ENTRIES // max(self.p1.size, 1))
        parts = [backend.sum(V[s:s + step][:, rows, p1] * A[s:s + step][:, p2, p3] * weight, axis=2)
                 for s in range(0, max(A.shape[0], 1), step)]
        return parts[0] if len(parts) == 1 else backend.concat(parts, axis=0)

    # -- symbolic ----------------------------------------------------------------------
    def symbolic(self, a: int):
        """(R, y): the ring and mu(W) as a list of ring elements, one per coordinate."""
        R, A, V = symbolic_weights(self.coords.d, self.coords.dprime, a)
        values = []
        for c, label in enumerate(self.coords.labels):
            i = label.row - 1
            total = R.zero
            for p1, p2, p3 in self.orderings(label):
                total += A[p2 - 1][p3 - 1] * V[i][p1 - 1]
            values.append(total * QQ(1, int(self.orbit[c])))
        return R, values


def symbolic_weights(d: int, dprime: int, a: int | None):
    """A polynomial ring over QQ with generic weights; A = K^T Q when a is given and a < d.

    Returns (R, A, V) with A a d x d and V a d' x d nested list of ring elements.  Generator
    names: a_m_l (or q_r_l, k_r_m) and v_i_k, 1-based.
    """
    v_names = [f"v_{i}_{k}" for i in range(1, dprime + 1) for k in range(1, d + 1)]
    if a is not None and uses_query_key(d, a):
        q_names = [f"q_{r}_{l}" for r in range(1, a + 1) for l in range(1, d + 1)]
        k_names = [f"k_{r}_{m}" for r in range(1, a + 1) for m in range(1, d + 1)]
        R, *gens = ring(q_names + k_names + v_names, QQ)
        Q = [gens[r * d:(r + 1) * d] for r in range(a)]
        K = [gens[a * d + r * d: a * d + (r + 1) * d] for r in range(a)]
        A = [[sum((K[r][m] * Q[r][l] for r in range(a)), R.zero) for l in range(d)]
             for m in range(d)]
        rest = gens[2 * a * d:]
    else:
        a_names = [f"a_{m}_{l}" for m in range(1, d + 1) for l in range(1, d + 1)]
        R, *gens = ring(a_names + v_names, QQ)
        A = [gens[m * d:(m + 1) * d] for m in range(d)]
        rest = gens[d * d:]
    V = [rest[i * d:(i + 1) * d] for i in range(dprime)]
    return R, A, V


def weight_degree(d: int, a: int) -> int:
    """Degree of each coordinate of mu in the weights: 2 in (A, V), 3 in (Q, K, V)."""
    return 3 if uses_query_key(d, a) else 2

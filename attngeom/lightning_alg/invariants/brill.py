"""Brill's equations for completely reducible cubics, on the single-column cubic f_T
(ADM Example 21, Remark 23: for rank A = 1, f_T = (v.x)(k.x)(q.x), so the single-column
slice is the cone over the Chow variety of products of three linear forms, whose Brill
equations have degree 3 + 1 = 4; Brill, Gordan, in the form of Gelfand-Kapranov-Zelevinsky
Ch. 4 §2.E and Briand).

Construction, for a cubic f(z) = sum_K |Perm K| y(K) z^K in d variables and points x, y, z
of K^d (the points are numbers; the result is a quartic in the coordinates y(K)):

* the polars at x: f(x + s w) = sum_j s^j E_j(w), E_0 = f(x), E_j a form of degree j in w;
* the power sum (Newton): pi_x(w) = E_1(w)^3 - 3 E_0 E_1(w) E_2(w) + 3 E_0^2 E_3(w), which is
  f(x)^3 p_3(r(w)) with p_3 the third power sum of the roots; for f = l_1 l_2 l_3 it is
  sum_i c_i l_i(w)^3 with c_i = (f(x) / l_i(x))^3 (f(x + s w) = f(x) prod_i (1 + s r_i(w)),
  r_i = l_i / l_i(x));
* G(a, b) = f(a y + b z) = sum_k g_k a^{3-k} b^k and H(alpha, beta) = pi_x(alpha z + beta y)
  = sum_k h_k alpha^{3-k} beta^k;
* the Brill quartic  B(x; y, z) = 3 g_0 h_0 - g_1 h_1 + g_2 h_2 - 3 g_3 h_3
  (= 3 sum_k (-1)^k g_k h_k / C(3,k)), of degree 1 in f through G and 3 through pi_x.

Why B vanishes on products of linear forms: with F and Pi the polarizations of f and pi_x,
g_k = C(3,k) F(y^{3-k}, z^k) and h_k = C(3,k) Pi(z^{3-k}, y^k), so
B / 3 = sum_k C(3,k) (-1)^k F(y^{3-k}, z^k) Pi(z^{3-k}, y^k)
      = sum_i c_i sum_k C(3,k) F(y^{3-k}, z^k) (l_i(z))^{3-k} (-l_i(y))^k
      = sum_i c_i f(l_i(z) y - l_i(y) z),
and l_i(l_i(z) y - l_i(y) z) = 0, so the factor l_i of f vanishes at that point: every
term is 0.  The term 3 E_0^2 E_3 of pi_x contributes nothing to B: E_3(alpha z + beta y) =
f(beta y + alpha z) has the coefficients g_{3-k}, and 3 E_0^2 sum_k w_k g_k g_{3-k} = 0 for the
alternating weights w = (3, -1, 1, -3) (so a mutation of that coefficient is equivalent).  (The converse, that the B over all x, y, z cut out the Chow variety, is Brill's
theorem; it is not needed for membership in J.)

Members: B at seeded small integer points (x, y, z), one member per triple.  The span of
B over all (x, y, z) is GL_d-stable (B_{f o g}(x; y, z) = B_f(g x; g y, g z)), hence stable
under the grading torus, so the multihomogeneous components of the members lie in it.
"""

from __future__ import annotations

from math import comb

import numpy as np

from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.single_column import single_column_indices
from attngeom.lightning_alg.invariants.structured import StructuredFamily
from attngeom.lightning_alg.labels import multisets, orbit_size

SOURCE = "Brill's equations (GKZ Ch. 4; ADM Remark 23 cites Briand)"

#: The linear functionals of f each member needs: ("P", i, l) the coefficient of
#: alpha^i beta^l in f(x + alpha z + beta y) (so E_{i+l}(alpha z + beta y)), ("G", i, l)
#: that of a^i b^l in f(a y + b z).
FUNCTIONALS = tuple([("P", j - l, l) for j in range(4) for l in range(j + 1)]
                    + [("G", 3 - k, k) for k in range(4)])
POSITION = {key: n for n, key in enumerate(FUNCTIONALS)}
#: pi_x = E_1^3 + NEWTON[0] E_0 E_1 E_2 + NEWTON[1] E_0^2 E_3 (Newton's p_3 = e1^3 - 3 e1 e2 + 3 e3).
NEWTON = (-3, 3)
#: B = sum_k WEIGHTS[k] g_k h_k (= 3 sum_k (-1)^k g_k h_k / C(3,k)).
WEIGHTS = (3, -1, 1, -3)


def _expand(factors) -> dict[tuple[int, int], int]:
    """prod over factors (c0 + c1 X1 + c2 X2) as {(power of X1, power of X2): coefficient}."""
    out = {(0, 0): 1}
    for c0, c1, c2 in factors:
        nxt: dict = {}
        for (i, l), c in out.items():
            for (di, dl), e in (((0, 0), c0), ((1, 0), c1), ((0, 1), c2)):
                if e:
                    nxt[(i + di, l + dl)] = nxt.get((i + di, l + dl), 0) + c * e
        out = nxt
    return out


def functional_matrix(points: np.ndarray, d: int) -> np.ndarray:
    """int64, shape=[M, len(FUNCTIONALS), C(d+2,3)]: the functionals as rows over the
    single-column coordinates y(K) (|Perm K| folded in), for points shape=[M, 3, d] = (x, y, z)."""
    monomials = multisets(d, 3)
    out = np.zeros((len(points), len(FUNCTIONALS), len(monomials)), dtype=np.int64)
    for m, (x, y, z) in enumerate(points.tolist()):
        for n, K in enumerate(monomials):
            weight = orbit_size(K)
            for (i, l), c in _expand([(x[k - 1], z[k - 1], y[k - 1]) for k in K]).items():
                out[m, POSITION[("P", i, l)], n] += weight * c
            for (i, l), c in _expand([(0, y[k - 1], z[k - 1]) for k in K]).items():
                out[m, POSITION[("G", i, l)], n] += weight * c
    return out


def _product(arith, left: list, right: list) -> list:
    """Coefficient lists of binary forms (by power of beta) multiplied in ``arith``."""
    out = [None] * (len(left) + len(right) - 1)
    for p, a in enumerate(left):
        for q, b in enumerate(right):
            term = arith.mul(a, b)
            out[p + q] = term if out[p + q] is None else arith.add(out[p + q], term)
    return out


class BrillFamily(StructuredFamily):
    """B(x; y, z) at the points ``points`` (int64, shape=[M, 3, d]), one member each (dense:
    about 5,200 terms each at d = 4, so a counterexample names the member and its point)."""

    witness_polynomial = False
    integer_program = True               # sums, products and the integer WEIGHTS / NEWTON only

    def __init__(self, coords: CoordinateSystem, points: np.ndarray):
        self.name = f"Brill quartics B(x; y, z) ({SOURCE})"
        self.coords = coords
        self.points = np.asarray(points, dtype=np.int64)
        self.matrix = functional_matrix(self.points, coords.d)
        self.single = single_column_indices(coords)

    @property
    def size(self) -> int:
        return len(self.points)

    @property
    def degree(self) -> int:
        return 4

    def chunks(self, point, arith):
        members, count, width = self.matrix.shape
        index = np.broadcast_to(self.single, (members * count, width))
        values = arith.sum(arith.scale(arith.take(point.y, index),
                                       self.matrix.reshape(members * count, width)), axis=2)
        f = {key: arith.take(values, np.arange(members) * count + n)
             for n, key in enumerate(FUNCTIONALS)}
        E0 = f[("P", 0, 0)]
        E = [[f[("P", j - l, l)] for l in range(j + 1)] for j in range(4)]
        cube = _product(arith, _product(arith, E[1], E[1]), E[1])
        mixed = _product(arith, E[1], E[2])
        E00 = arith.mul(E0, E0)
        h = [arith.add(arith.add(cube[k], arith.scale(arith.mul(E0, mixed[k]), NEWTON[0])),
                       arith.scale(arith.mul(E00, E[3][k]), NEWTON[1])) for k in range(4)]
        g = [f[("G", 3 - k, k)] for k in range(4)]
        terms = [arith.scale(arith.mul(g[k], h[k]), c) for k, c in enumerate(WEIGHTS)]
        total = terms[0]
        for term in terms[1:]:
            total = arith.add(total, term)
        yield 0, total

    def describe(self, index: int) -> dict:
        x, y, z = self.points[index].tolist()
        return {"x": x, "y": y, "z": z}

    def restrict(self, index: int) -> "BrillFamily":
        return BrillFamily(self.coords, self.points[[index]])

    def variables(self) -> list[int]:
        return [int(k) for k in self.single]

    def printable_terms(self, index: int) -> int:
        return quartic_terms_bound(self.coords)


def quartic_terms_bound(coords: CoordinateSystem) -> int:
    """Terms of a dense quartic in the single-column coordinates: an upper bound on the
    terms of one Brill member expanded (C(N + 3, 4), N single-column coordinates)."""
    return comb(len(single_column_indices(coords)) + 3, 4)


def brill_points(sampler, count: int, d: int, bound: int = 3) -> np.ndarray:
    """``count`` seeded triples (x, y, z) of integers in [-bound, bound]^d, drawn in batches
    and kept in order when x, y, z are linearly independent (otherwise B(x; y, z) = 0: on
    the line or plane they span every binary cubic is a product of linear forms)."""
    kept: list = []
    while len(kept) < count:
        for x, y, z in sampler.integers((2 * count, 3, d), -bound, bound):
            if np.linalg.matrix_rank(np.stack([x, y, z]).astype(float)) == 3:
                kept.append((x, y, z))
    return np.array(kept[:count], dtype=np.int64).reshape(count, 3, d)

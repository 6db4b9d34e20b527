"""Quartics from Sylvester resultants of the slice quadrics (ADM §5.4).

Fix an output row i, a target column j and a context column n != j.

* ADM Def 38 -- the slice quadric of target index s in the context variables z:
      q_s(y; z) = sum_{p <= q} omega(p, q) y_{(p,n),(q,n),(s,j)} z_p z_q      (omega: eq 4)
* ADM Prop 39 -- on the variety q_s(mu(W); z) = l(z) m_s(z) with the common factor
      l(z) = sum_k v_k z_k and m_s(z) = sum_k a_{ks} z_k.
* Restriction to the line L = P(span{xi, zeta}): z = lambda_1 xi + lambda_2 zeta gives the
  binary quadric q_s^L = A_s lambda_1^2 + B_s lambda_1 lambda_2 + C_s lambda_2^2 with
      A_s = sum_{p<=q} omega xi_p xi_q y_pqs,  B_s = sum_{p<=q} omega (xi_p zeta_q + xi_q zeta_p) y_pqs,
      C_s = sum_{p<=q} omega zeta_p zeta_q y_pqs           (linear forms in y, integer coefficients).
* ADM Def 37 -- Res(f, g) = det [[A1,B1,C1,0],[0,A1,B1,C1],[A2,B2,C2,0],[0,A2,B2,C2]].
* ADM Thm 40 -- Res(q_r^L, q_s^L) (r < s) and every coefficient of Res(Q_u^L, Q_w^L),
  Q_u^L = sum_s u_s q_s^L, Q_w^L = sum_s w_s q_s^L, in the auxiliary u, w, are quartics in J.

The resultants are computed once as polynomials in generic binary-quadric coefficients
(A_s, B_s, C_s) by the Sylvester determinant of Def 37 (in QQ[A, B, C, u, w]), and every
member is that generic polynomial composed with the linear forms of the line: it is
evaluated by :mod:`attngeom.kernels.polyeval` at the values of the forms, never expanded in y.

Counts (derived here; checked against the generated lists): C(d,2) pairwise resultants;
Res(Q_u, Q_w) has C(d+1,2)^2 - 2d^2 + d nonzero coefficients (u^a w^b is missing exactly
when a = {x,x} with x in b or b = {x,x} with x in a), it is symmetric under u <-> w, so
(C(d+1,2)^2 - 2d^2 + d + C(d,2)) / 2 distinct coefficients; they span a space of dimension
d^2 (d^2 - 1) / 12 (Res is a quadratic form in the Pluecker coordinates u_r w_s - u_s w_r).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from math import comb

import numpy as np
import sympy
from sympy import QQ
from sympy.polys.rings import ring

from attngeom.core.errors import BadInput
from attngeom.kernels.polyeval import CompiledFamily, compile_polynomials
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.grassmannian import independent, interpolation_lines
from attngeom.lightning_alg.invariants.structured import StructuredFamily, det_leibniz
from attngeom.lightning_alg.invariants.veronese import omega
from attngeom.lightning_alg.labels import Label

DEF37, DEF38, PROP39, THM40 = "ADM Def 37", "ADM Def 38", "ADM Prop 39", "ADM Thm 40"


# -- the line -------------------------------------------------------------------------

#: The default line xi : zeta: the first d entries of these two sequences, repeated with
#: period 6 (xi, zeta independent for every d >= 2: their first two entries are, det = -5).
#: Every entry is nonzero: on a coordinate line e_i : e_j, B_s = omega(i, j) y_ijs is one
#: term, so a wrong B_s (a missing xi_q zeta_p, a dropped p = q term) restricts to the same
#: forms and nothing could refute it.  Until 2026-11-27 the default was ADM Example 41's
#: e_1 : e_2 (:func:`example_41_line`), which the claim still checks on its own.
GENERIC_XI = (1, 2, -1, 3, 1, -2)
GENERIC_ZETA = (2, -1, 3, 1, -2, 1)


def generic_line(d: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The default line (:data:`GENERIC_XI`, :data:`GENERIC_ZETA`) in R^d."""
    return tuple(GENERIC_XI[k % 6] for k in range(d)), tuple(GENERIC_ZETA[k % 6] for k in range(d))


def unit_vector(i: int, d: int) -> tuple[int, ...]:
    """e_(i+1) in Z^d (i counted from 0)."""
    return tuple(int(k == i) for k in range(d))


def example_41_line(d: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """e_1 : e_2, the line of ADM Example 41."""
    return unit_vector(0, d), unit_vector(1, d)


def parse_line(text: str | None, d: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``"1,0,0:0,1,0"`` -> (xi, zeta); the default (None) is :func:`generic_line`."""
    if text is None:
        return generic_line(d)
    parts = text.split(":")
    if len(parts) != 2:
        raise BadInput(f"--line needs two integer vectors separated by ':'; got {text!r}")
    try:
        xi, zeta = (tuple(int(v) for v in part.split(",")) for part in parts)
    except ValueError:
        raise BadInput(f"--line needs integer entries, e.g. 1,0,0:0,1,0; got {text!r}") from None
    return xi, zeta


def line_violation(xi, zeta, d: int) -> str | None:
    """Thm 40's hypothesis on the line: xi, zeta in R^d, linearly independent."""
    if len(xi) != d or len(zeta) != d:
        return f"{THM40} needs line vectors of length d = {d}; got {len(xi)} and {len(zeta)}"
    if not independent(xi, zeta):
        return f"{THM40} needs linearly independent line vectors; got {xi} and {zeta}"
    return None


# -- slice quadrics and their restrictions ----------------------------------------------

def slice_quadric(coords: CoordinateSystem, context: int, s: int) -> list[tuple[int, int, int, Label]]:
    """ADM Def 38: the terms (p, q, omega(p,q), label of y_{(p,n),(q,n),(s,j)}) of q_s, p <= q."""
    return [(p, q, omega(p, q), Label(coords.row, coords.col, context, (p, q, s)))
            for p, q in combinations_with_replacement(range(1, coords.d + 1), 2)]


def restricted_forms(coords: CoordinateSystem, context: int, xi, zeta):
    """The linear forms A_1..A_d, B_1..B_d, C_1..C_d of q_s^L in y, as arrays
    (coordinate index, integer coefficient) of shape [3d, C(d+1,2)]."""
    d = coords.d
    terms = comb(d + 1, 2)
    index = np.zeros((3 * d, terms), dtype=np.int64)
    coeff = np.zeros((3 * d, terms), dtype=np.int64)
    for s in range(1, d + 1):
        for k, (p, q, w, label) in enumerate(slice_quadric(coords, context, s)):
            x, z = (xi[p - 1], xi[q - 1]), (zeta[p - 1], zeta[q - 1])
            for form, c in enumerate((x[0] * x[1], x[0] * z[1] + x[1] * z[0], z[0] * z[1])):
                index[form * d + s - 1, k] = coords.index[label]
                coeff[form * d + s - 1, k] = w * c
    return index, coeff


# -- generic resultants (ADM Def 37, Thm 40) --------------------------------------------

def sylvester_matrix(f, g) -> list[list]:
    """ADM Def 37's Sylvester matrix of f = (A1, B1, C1) and g = (A2, B2, C2)."""
    (a1, b1, c1), (a2, b2, c2) = f, g
    return [[a1, b1, c1, 0], [0, a1, b1, c1], [a2, b2, c2, 0], [0, a2, b2, c2]]


def sylvester_resultant(f, g):
    """Res(f, g) = det of the Sylvester matrix (ADM Def 37), by the Leibniz formula."""
    return det_leibniz(np.array(sylvester_matrix(f, g), dtype=object))


def coefficient_symbols(d: int) -> list[sympy.Symbol]:
    """A_1..A_d, B_1..B_d, C_1..C_d: generic coefficients of the binary quadrics q_s^L."""
    return [sympy.Symbol(f"{x}_{s}") for x in "ABC" for s in range(1, d + 1)]


def monomial_name(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    """u^a w^b for multisets a, b of slice indices, e.g. ((1,1),(2,3)) -> 'u_1^2*w_2*w_3'."""
    parts = []
    for var, multiset in (("u", a), ("w", b)):
        for s in sorted(set(multiset)):
            e = multiset.count(s)
            parts.append(f"{var}_{s}" + (f"^{e}" if e > 1 else ""))
    return "*".join(parts)


@dataclass(frozen=True)
class GenericResultants:
    """ADM Thm 40's quartics as polynomials in the generic coefficients (A, B, C).

    ``polynomials`` lists the C(d,2) pairwise resultants Res(q_r^L, q_s^L), r < s, then the
    distinct coefficients of Res(Q_u^L, Q_w^L): one per nonzero u^a w^b with a <= b (the
    coefficient of u^b w^a is the same when ``symmetric``).
    """

    d: int
    polynomials: tuple
    descriptions: tuple
    nonzero_coefficients: int
    symmetric: bool

    @property
    def pairwise_count(self) -> int:
        return sum(1 for x in self.descriptions if x["kind"] == "pairwise")

    @property
    def coefficient_count(self) -> int:
        return len(self.descriptions) - self.pairwise_count


def _multiset(exponents) -> tuple[int, ...]:
    return tuple(s + 1 for s, e in enumerate(exponents) for _ in range(e))


@lru_cache(maxsize=None)
def generic_resultants(d: int) -> GenericResultants:
    """Expand ADM Def 37's determinant for the pairs (q_r, q_s) and for (Q_u, Q_w) in
    QQ[A, B, C, u, w] and split Res(Q_u, Q_w) by its monomials in u, w."""
    symbols = coefficient_symbols(d)
    R, *gens = ring(symbols + [sympy.Symbol(f"{x}_{s}") for x in "uw" for s in range(1, d + 1)], QQ)
    A, B, C, u, w = (gens[k * d:(k + 1) * d] for k in range(5))
    to_expr = lambda poly: poly.as_expr() if poly else sympy.Integer(0)
    polys, descriptions = [], []
    for r in range(d):
        for s in range(r + 1, d):
            polys.append(to_expr(sylvester_resultant((A[r], B[r], C[r]), (A[s], B[s], C[s]))))
            descriptions.append({"source": THM40, "kind": "pairwise", "slices": [r + 1, s + 1],
                                 "name": f"Res(q_{r + 1}^L, q_{s + 1}^L)"})
    combination = lambda z: tuple(sum((z[s] * X[s] for s in range(d)), R.zero) for X in (A, B, C))
    by_monomial: dict[tuple, dict] = {}
    for monom, coeff in sylvester_resultant(combination(u), combination(w)).terms():
        by_monomial.setdefault(monom[3 * d:], {})[monom[:3 * d] + (0,) * 2 * d] = coeff
    symmetric = all(by_monomial.get(key[d:] + key[:d]) == terms for key, terms in by_monomial.items())
    members = sorted((_multiset(key[:d]), _multiset(key[d:]), key) for key in by_monomial)
    for a, b, key in members:
        if a <= b:
            polys.append(to_expr(R.from_dict(by_monomial[key])))
            descriptions.append({"source": THM40, "kind": "coefficient", "monomial":
                                 monomial_name(a, b), "u": list(a), "w": list(b),
                                 "name": f"[{monomial_name(a, b)}] Res(Q_u^L, Q_w^L)"})
    return GenericResultants(d, tuple(polys), tuple(descriptions), len(by_monomial), symmetric)


def pairwise_count(d: int) -> int:
    return comb(d, 2)


def nonzero_coefficient_count(d: int) -> int:
    """C(d+1,2)^2 - 2d^2 + d monomials u^a w^b with a nonzero coefficient."""
    return comb(d + 1, 2) ** 2 - 2 * d * d + d


def distinct_coefficient_count(d: int) -> int:
    """(C(d+1,2)^2 - 2d^2 + d + C(d,2)) / 2 coefficients up to u <-> w."""
    return (nonzero_coefficient_count(d) + comb(d, 2)) // 2


def span_dimension(d: int) -> int:
    """d^2 (d^2 - 1) / 12: the degree-2 part of the Pluecker coordinate ring of Gr(2, d)."""
    return d * d * (d * d - 1) // 12


@dataclass(frozen=True)
class PairResultants:
    """Res(Q_u^L, Q_w^L) at fixed pairs (u, w), as polynomials in the generic (A, B, C).

    Res(Q_u, Q_w) is a quadratic form in the Pluecker coordinates of (u, w) (it gains
    det(g)^2 under (u, w) -> g (u, w), g in GL_2), so its values at the
    d^2 (d^2 - 1) / 12 pairs of :func:`~attngeom.lightning_alg.invariants.grassmannian.interpolation_lines`
    (degree 2) span the same space as its coefficients in u, w (module doc of
    :mod:`~attngeom.lightning_alg.invariants.grassmannian`); the first C(d, 2) pairs are
    (e_r, e_s), giving the pairwise resultants Res(q_r^L, q_s^L).
    """

    d: int
    pairs: tuple
    polynomials: tuple
    descriptions: tuple


def pair_name(u, w) -> str:
    """Res(q_r^L, q_s^L) for u = e_r, w = e_s, else Res(Q_u^L, Q_w^L) with u, w printed."""
    unit = lambda v: sorted(v) == [0] * (len(v) - 1) + [1]
    if unit(u) and unit(w):
        return f"Res(q_{u.index(1) + 1}^L, q_{w.index(1) + 1}^L)"
    vec = lambda v: "(" + ",".join(map(str, v)) + ")"
    return f"Res(Q_u^L, Q_w^L), u = {vec(u)}, w = {vec(w)}"


@lru_cache(maxsize=None)
def pair_resultants(d: int) -> PairResultants:
    """ADM Def 37's determinant of (Q_u, Q_w) for the interpolation pairs (u, w), in QQ[A, B, C]."""
    R, *gens = ring(coefficient_symbols(d), QQ)
    A, B, C = (gens[k * d:(k + 1) * d] for k in range(3))
    combination = lambda z: tuple(sum((z[s] * X[s] for s in range(d)), R.zero) for X in (A, B, C))
    pairs = interpolation_lines(d, 2)
    polys = tuple(sylvester_resultant(combination(u), combination(w)).as_expr() for u, w in pairs)
    descriptions = tuple({"source": THM40, "kind": "pair", "u": list(u), "w": list(w),
                          "name": pair_name(u, w)} for u, w in pairs)
    return PairResultants(d, pairs, polys, descriptions)


#: The generic member lists a line's family can use: every coefficient of Res(Q_u, Q_w)
#: in u, w (ADM Thm 40, Example 42), or its values at the interpolation pairs.
GENERIC = {"coefficients": generic_resultants, "pairs": pair_resultants}


_COMPILED: dict = {}


def compiled_generic(generic, selection: tuple) -> CompiledFamily:
    """The chosen generic polynomials compiled over the symbols A, B, C, once per generic
    list (the cache holds the list itself, so a recomputed list is compiled afresh)."""
    key = (id(generic), selection)
    cached = _COMPILED.get(key)
    if cached is None or cached[0] is not generic:
        cached = (generic, compile_polynomials([generic.polynomials[k] for k in selection],
                                               {x: k for k, x in enumerate(coefficient_symbols(generic.d))}))
        _COMPILED[key] = cached
    return cached[1]


# -- the families ---------------------------------------------------------------------

class ResultantQuartics(StructuredFamily):
    """ADM Thm 40's quartics for one line: generic resultants composed with the forms.

    ``kind`` "coefficients": the pairwise resultants and every distinct coefficient of
    Res(Q_u^L, Q_w^L) in u, w; "pairs": Res(Q_u^L, Q_w^L) at the pairs of
    :func:`pair_resultants` (same span, d^2 (d^2 - 1) / 12 members)."""

    name = "resultant quartics (ADM Thm 40)"

    def __init__(self, coords: CoordinateSystem, context: int, xi, zeta, selection=None,
                 kind: str = "coefficients"):
        self.coords, self.context, self.xi, self.zeta = coords, context, tuple(xi), tuple(zeta)
        self.kind = kind
        self.generic = GENERIC[kind](coords.d)
        self.selection = list(range(len(self.generic.polynomials))) if selection is None \
            else list(selection)
        self.compiled: CompiledFamily = compiled_generic(self.generic, tuple(self.selection))
        self.form_index, self.form_coeff = restricted_forms(coords, context, xi, zeta)

    @property
    def size(self):
        return len(self.selection)

    @property
    def degree(self):
        return 4

    def variables(self):
        return sorted(set(self.form_index[self.form_coeff != 0].tolist()))

    def forms(self, point, arith):
        """(A_1..A_d, B_1..B_d, C_1..C_d) at the points, shape=[B, 3d]."""
        return arith.sum(arith.scale(arith.take(point.y, self.form_index), self.form_coeff), 2)

    def chunks(self, point, arith):
        yield 0, arith.polynomials(self.compiled, self.forms(point, arith))

    def describe(self, index):
        return dict(self.generic.descriptions[self.selection[index]])

    def restrict(self, index):
        return ResultantQuartics(self.coords, self.context, self.xi, self.zeta,
                                 [self.selection[index]], self.kind)

    def printable_terms(self, index):
        generic_terms = len(sympy.Add.make_args(self.generic.polynomials[self.selection[index]]))
        return generic_terms * int((self.form_coeff != 0).sum(axis=1).max()) ** 4


class CommonFactorIdentity(StructuredFamily):
    """ADM Prop 39 coefficientwise: omega(p,q) y_{(p,n),(q,n),(s,j)} equals the coefficient
    of z_p z_q in l(z) m_s(z), i.e. v_p a_{qs} + v_q a_{ps} (p < q) or v_p a_{ps} (p = q)."""

    uses_weights = True
    name = f"{PROP39} q_s(mu(W); z) = l(z) m_s(z)"

    def __init__(self, coords: CoordinateSystem, context: int):
        self.coords = coords
        d, i = coords.d, coords.row - 1
        rows = [(s, p, q, w, label) for s in range(1, d + 1)
                for p, q, w, label in slice_quadric(coords, context, s)]
        self.rows = rows
        self.y_index = np.array([coords.index[label] for *_, label in rows], dtype=np.int64)
        self.omega = np.array([w for _, _, _, w, _ in rows], dtype=np.int64)
        self.v_p = np.array([i * d + p - 1 for _, p, _, _, _ in rows], dtype=np.int64)
        self.v_q = np.array([i * d + q - 1 for _, _, q, _, _ in rows], dtype=np.int64)
        self.a_qs = np.array([(q - 1) * d + s - 1 for s, _, q, _, _ in rows], dtype=np.int64)
        self.a_ps = np.array([(p - 1) * d + s - 1 for s, p, _, _, _ in rows], dtype=np.int64)
        self.distinct = np.array([int(p != q) for _, p, q, _, _ in rows], dtype=np.int64)

    @property
    def size(self):
        return len(self.rows)

    @property
    def degree(self):
        return 1

    def chunks(self, point, arith):
        lhs = arith.scale(arith.take(point.y, self.y_index), self.omega)
        first = arith.mul(arith.take(point.V, self.v_p), arith.take(point.A, self.a_qs))
        second = arith.scale(arith.mul(arith.take(point.V, self.v_q),
                                       arith.take(point.A, self.a_ps)), self.distinct)
        yield 0, arith.sub(lhs, arith.add(first, second))

    def describe(self, index):
        s, p, q, _, _ = self.rows[index]
        return {"source": PROP39, "slice": s, "z_monomial": [p, q]}

    def restrict(self, index):
        single = CommonFactorIdentity.__new__(CommonFactorIdentity)
        single.coords, single.rows = self.coords, [self.rows[index]]
        for name in ("y_index", "omega", "v_p", "v_q", "a_qs", "a_ps", "distinct"):
            setattr(single, name, getattr(self, name)[index:index + 1])
        return single


# -- ADM Examples 41 and 42 exactly as printed --------------------------------------------

def example41_forms(coords: CoordinateSystem, s: int) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """ADM Example 41 (j = 1, n = 2, L = span{e1, e2}): q_s^L = a_s l1^2 + 2 b_s l1 l2 + c_s l2^2,
    so (A_s, B_s, C_s) = (a_s, 2 b_s, c_s) with a_s = y_{(1,2),(1,2),(s,1)},
    b_s = y_{(1,2),(2,2),(s,1)}, c_s = y_{(2,2),(2,2),(s,1)}."""
    y = lambda *pairs: coords.symbol(Label.from_pairs(pairs, coords.row))
    return y((1, 2), (1, 2), (s, 1)), 2 * y((1, 2), (2, 2), (s, 1)), y((2, 2), (2, 2), (s, 1))


def example41_quartic(coords: CoordinateSystem) -> sympy.Expr:
    """Res(q_1^L, q_2^L) of ADM Example 41, as printed, in a_s, b_s, c_s."""
    y = lambda *pairs: coords.symbol(Label.from_pairs(pairs, coords.row))
    a1, a2 = y((1, 2), (1, 2), (1, 1)), y((1, 2), (1, 2), (2, 1))
    b1, b2 = y((1, 2), (2, 2), (1, 1)), y((1, 2), (2, 2), (2, 1))
    c1, c2 = y((2, 2), (2, 2), (1, 1)), y((2, 2), (2, 2), (2, 1))
    return (a1**2 * c2**2 - 2 * a1 * a2 * c1 * c2 - 4 * a1 * b1 * b2 * c2 + 4 * a1 * b2**2 * c1
            + a2**2 * c1**2 + 4 * a2 * b1**2 * c2 - 4 * a2 * b1 * b2 * c1)


#: ADM Example 42 (d = 3): the six mixed monomials whose coefficients were extracted.
EXAMPLE42_MIXED = ("u_1^2*w_2*w_3", "u_2^2*w_1*w_3", "u_3^2*w_1*w_2",
                   "u_1*u_2*w_3^2", "u_1*u_3*w_2^2", "u_2*u_3*w_1^2")


def swapped(name: str) -> str:
    """The monomial with u and w exchanged ('u_1^2*w_2*w_3' -> 'u_2*u_3*w_1^2')."""
    factors = name.split("*")
    flipped = [("w" if f[0] == "u" else "u") + f[1:] for f in factors]
    return "*".join(sorted(flipped, key=lambda f: (f[0] != "u", f)))

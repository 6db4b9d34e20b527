"""Split types of the single-column cubic: (2,1) and (1,1,1) (ADM Lemma 16, Cor 22, Remark 23).

* Split type (2,1) (ADM Lemma 16, Prop 17(2)): f = l q has a nonzero trace-zero
  annihilator D in sl_d (d >= 3), so M_Lie(f) is rank-deficient.
  :func:`split_annihilator` builds D exactly as the proof does, over any integral domain
  (Q, F_p, or QQ[A, V] for a proof with generic weights).
* Split type (1,1,1) (ADM Cor 22): rank(A) = 1, A = k q^T, gives
  f_T = (v_i . x)(k . x)(q . x); :func:`rank_one_factors` returns the three forms and
  :func:`product_coefficients` the coefficients of their product.
* The ranks of M_Lie that ADM states or that follow from the stabilizers
  (:func:`lie_rank_split_111`, :func:`lie_rank_split_21`) and the dimensions of the two
  Chow cones.

Elements only need +, -, * and comparison with 0, so one code path serves fractions,
``flint.nmod`` residues and SymPy polynomial-ring elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import flint

from attngeom.lightning_alg.labels import distinct_permutations, multisets


@dataclass(frozen=True)
class Annihilator:
    """A trace-zero D = sum_{u,v} m_uv x_u d/dx_v with D(l q) = 0 (ADM Lemma 16's proof).

    Attributes
    ----------
    matrix : d x d nested list (m_uv), 0-based
    case : 1 or 2, the case of the proof that produced it
    pivot : r (0-based) with l_r != 0; the proof's adapted coordinate x_1 = l is taken
        with the basis w_k = l_r e_k - l_k e_r (k != r) of ker(l)
    directions : case 1: (k, k') with d_{w_k} q, d_{w_k'} q independent;
        case 2: the coefficients c' of the dependence sum c'_k d_{w_k} q = 0, by k
    """

    matrix: list
    case: int
    pivot: int
    directions: tuple


def kernel_basis(linear_form) -> tuple[int, list[list]]:
    """(r, [w_k for k != r]) with w_k = l_r e_k - l_k e_r: a basis of {w : l . w = 0}
    over the fraction field, polynomial in l; r is the first index with l_r != 0."""
    d = len(linear_form)
    pivot = next((r for r in range(d) if linear_form[r] != 0), None)
    if pivot is None:
        raise ValueError("the linear factor l is zero: f = 0 has no split type")
    zero = linear_form[0] * 0
    basis = []
    for k in range(d):
        if k == pivot:
            continue
        w = [zero] * d
        w[k] = linear_form[pivot]
        w[pivot] = -linear_form[k]
        basis.append(w)
    return pivot, basis


def split_annihilator(linear_form, symmetric) -> Annihilator:
    """ADM Lemma 16: a nonzero trace-zero D with D(l q) = 0, for d >= 3.

    ``linear_form`` holds the coefficients of l; ``symmetric`` is S = A + A^T for
    q = x^T A x, so the derivative of q along w is the linear form (S w) . x.  In the
    adapted coordinates (x_1 = l, the other coordinates along the kernel basis w_k):

    * Case 1, some d_{w_k} q and d_{w_k'} q independent:
      D = (d_{w_k'} q) d_{w_k} - (d_{w_k} q) d_{w_k'}, i.e. m = (S w_k') w_k^T - (S w_k) w_k'^T;
    * Case 2, they span at most a line: sum_k c'_k d_{w_k} q = 0 with c' != 0, and
      D = l d_w with w = sum_k c'_k w_k, i.e. m = l w^T.

    D(f) = 0 since d_w f = l d_w q for w in ker(l); tr D = w_k^T S w_k' - w_k'^T S w_k = 0
    in case 1 and l . w = 0 in case 2.
    """
    d = len(linear_form)
    if d < 3:
        raise ValueError("ADM Lemma 16 needs d >= 3")
    pivot, basis = kernel_basis(linear_form)
    gradients = [[sum((symmetric[u][v] * w[v] for v in range(d)), linear_form[0] * 0)
                  for u in range(d)] for w in basis]
    for k in range(len(basis)):
        for kp in range(k + 1, len(basis)):
            if _independent(gradients[k], gradients[kp]):
                matrix = [[gradients[kp][u] * basis[k][v] - gradients[k][u] * basis[kp][v]
                           for v in range(d)] for u in range(d)]
                return Annihilator(matrix, 1, pivot, (k, kp))
    dependence = _dependence(gradients)
    zero = linear_form[0] * 0
    w = [sum((c * basis[k][v] for k, c in enumerate(dependence)), zero) for v in range(d)]
    matrix = [[linear_form[u] * w[v] for v in range(d)] for u in range(d)]
    return Annihilator(matrix, 2, pivot, tuple(dependence))


def _independent(g, h) -> bool:
    """Whether two vectors are linearly independent (some 2 x 2 minor is nonzero)."""
    n = len(g)
    return any(g[s] * h[t] - g[t] * h[s] != 0 for s in range(n) for t in range(s + 1, n))


def _dependence(vectors) -> list:
    """A nonzero c with sum_k c_k vectors[k] = 0, for at least two vectors spanning at most
    a line: c = h_s e_j - g_s e_k, where g = vectors[j] is the first nonzero one, s an
    index with g_s != 0 and h = vectors[k] another vector (h = lambda g)."""
    zero = vectors[0][0] * 0
    one = zero + 1
    coefficients = [zero] * len(vectors)
    nonzero = [j for j, g in enumerate(vectors) if any(x != 0 for x in g)]
    if not nonzero:
        coefficients[0] = one
        return coefficients
    j = nonzero[0]
    s = next(i for i, x in enumerate(vectors[j]) if x != 0)
    k = next(k for k in range(len(vectors)) if k != j)
    coefficients[j] = vectors[k][s]
    coefficients[k] = -vectors[j][s]
    return coefficients


def operator_trace(matrix):
    """tr D = sum_u m_uu = sum_v d_v p_v for D = sum_v p_v d_v, p_v = sum_u m_uv x_u."""
    return sum((matrix[u][u] for u in range(1, len(matrix))), matrix[0][0])


def apply_operator(matrix, f, xs):
    """D(f) = sum_{u,v} m_uv x_u df/dx_v for a polynomial ``f`` in the generators ``xs``
    (SymPy expressions or polynomial-ring elements, with ``diff``)."""
    d = len(matrix)
    total = f * 0
    for v in range(d):
        derivative = f.diff(xs[v])
        for u in range(d):
            if matrix[u][v] != 0:
                total = total + matrix[u][v] * xs[u] * derivative
    return total


# -- split type (1,1,1) --------------------------------------------------------------------
def rank_one_factors(key_row, query_row, value_row) -> tuple:
    """ADM Cor 22: for A = k q^T (a = 1, A = K^T Q), x^T A x = (k . x)(q . x), so
    f_T = (v_i . x)(k . x)(q . x).  Returns the coefficient vectors (v_i, k, q)."""
    return list(value_row), list(key_row), list(query_row)


def product_coefficients(first, second, third) -> list:
    """The coefficients of (l1 . x)(l2 . x)(l3 . x) in the monomial basis x^K (K in
    lexicographic order): c_K = sum over the distinct orderings (p1,p2,p3) of K of
    l1[p1] l2[p2] l3[p3]."""
    d = len(first)
    zero = first[0] * 0
    return [sum((first[p1 - 1] * second[p2 - 1] * third[p3 - 1]
                 for p1, p2, p3 in distinct_permutations(K)), zero) for K in multisets(d, 3)]


def factor_cubic(coefficients, d: int) -> tuple[str, list[int]]:
    """Factor sum_K c_K x^K (integer c_K, K in lexicographic order) over Q with FLINT.

    Returns the factorization as text and the degrees of its factors, with multiplicity;
    a product of three linear forms has degrees [1, 1, 1].
    """
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"x{k}" for k in range(1, d + 1)), "lex")
    cubic = ctx.from_dict({tuple(K.count(k) for k in range(1, d + 1)): int(c)
                           for K, c in zip(multisets(d, 3), coefficients) if c})
    content, factors = cubic.factor()
    text = " * ".join([str(content)] + [f"({g})" + (f"^{e}" if e > 1 else "")
                                        for g, e in factors])
    return text, [g.total_degree() for g, e in factors for _ in range(e)]


def lie_rank_split_111(d: int) -> int:
    """ADM Remark 23: rank M_Lie at a general product of three linear forms, 6 for d = 3
    and 3d - 2 for d >= 4 (the sl_d-stabilizer of x1 x2 x3 has dimension d^2 - 3d + 1 for
    d >= 4: E_uv with v > 3, trace-zero diagonals on x1, x2, x3, minus one trace condition)."""
    return 6 if d == 3 else 3 * d - 2


def lie_rank_split_21(d: int) -> int:
    """rank M_Lie at a general f = l q (not stated in ADM; derived in docs/single-column.md):
    the sl_d-stabilizer of x_1 q with q nondegenerate is so(q) restricted to the line of
    x_1, of dimension C(d-1, 2), so the rank is d^2 - 1 - C(d-1, 2)."""
    return d * d - 1 - comb(d - 1, 2)


def cone_dimension_split_111(d: int) -> int:
    """dim of the affine cone over the Chow variety of split type (1,1,1) in S^3 C^d:
    3 (d - 1) + 1 (ADM Example 21: 10 for d = 4)."""
    return 3 * (d - 1) + 1


def cone_dimension_split_21(d: int) -> int:
    """dim of the affine cone over the Chow variety of split type (2,1): dim S^2 + d - 1
    (ADM Example 19: codimension 2 in the 10 coordinates for d = 3)."""
    return comb(d + 1, 2) + d - 1

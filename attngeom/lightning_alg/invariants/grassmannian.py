"""Lines of P^{d-1} through their Pluecker coordinates, and finite sets of lines that
determine every degree-k form on the Grassmannian Gr(2, d) (used for ADM Thm 40 over all
lines, ADM Example 42 and Remark 43).

* Pluecker coordinates of L = P(span{xi, zeta}): p_ij = xi_i zeta_j - xi_j zeta_i, i < j.
* A polynomial F(xi, zeta), homogeneous of degree 2k, with F(g . (xi, zeta)) =
  det(g)^k F(xi, zeta) for g in GL_2 acting on the pair (an SL_2-invariant of the d
  vectors (xi_i, zeta_i) of k^2) is a degree-k polynomial in the p_ij (first fundamental
  theorem for SL_2: the 2 x 2 minors generate the invariants), determined modulo the
  Pluecker relations: an element of R_k, the degree-k part of the homogeneous coordinate
  ring of Gr(2, d).
* dim R_k = C(d+k-1, k) C(d+k-2, k) / (k+1): the number of semistandard tableaux of the
  rectangular shape (k, k) with entries in [d] (hook content formula; R_k is the Schur
  module of that shape).  d = 3: C(k+2, 2) (Gr(2,3) = P^2); k = 2: d^2 (d^2 - 1) / 12.
* Interpolation set: lines L_1..L_N whose Pluecker points impose independent conditions
  on R_k, N = dim R_k.  Then the values F(L_1), ..., F(L_N) of any F in R_k tensor W
  (W any vector space of coefficients) span the same subspace of W as the coefficients of
  F -- as F(L) over all lines does.  Certified by the rank of the evaluation matrix of the
  degree-k Pluecker monomials at the N points: it is at most dim R_k (the rows kill the
  Pluecker relations), so rank mod p = dim R_k proves it over Q.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product
from math import comb

import numpy as np

from attngeom.kernels.primefield import pivot_rows, rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.kernels.monomials import all_monomials, evaluate_monomials

Pair = tuple[tuple[int, ...], tuple[int, ...]]


def coordinate_ring_dimension(d: int, k: int) -> int:
    """dim R_k(Gr(2, d)) = C(d+k-1, k) C(d+k-2, k) / (k+1) (hook content formula)."""
    return comb(d + k - 1, k) * comb(d + k - 2, k) // (k + 1)


def plucker(xi, zeta) -> list[int]:
    """The brackets p_ij = xi_i zeta_j - xi_j zeta_i, i < j, lexicographically."""
    return [xi[i] * zeta[j] - xi[j] * zeta[i] for i, j in combinations(range(len(xi)), 2)]


def independent(xi, zeta) -> bool:
    """xi, zeta linearly independent (some Pluecker coordinate is nonzero)."""
    return any(plucker(xi, zeta))


def plucker_evaluations(pairs, k: int, prime: int = DEFAULT_PRIME) -> np.ndarray:
    """The degree-k Pluecker monomials at the lines, mod p, shape=[lines, C(C(d,2)+k-1, k)]."""
    d = len(pairs[0][0])
    values = np.array([plucker(xi, zeta) for xi, zeta in pairs], dtype=np.int64) % prime
    return evaluate_monomials(values, all_monomials(comb(d, 2), k), prime)


def conditions_imposed(pairs, k: int, prime: int = DEFAULT_PRIME) -> int:
    """How many independent conditions the lines impose on R_k(Gr(2, d)): the rank mod p of
    their degree-k Pluecker monomials (a lower bound on the rank over Q, <= dim R_k)."""
    if not pairs:
        return 0
    return rank_mod_p(plucker_evaluations(pairs, k, prime), prime)


def form_terms(xi, zeta) -> int:
    """Terms of the restricted forms of a slice quadric on P(span{xi, zeta}) for vectors with
    a and b nonzero entries: C(a+1, 2) + a b + C(b+1, 2) (the sparsity that matters when
    the resultant quartics are expanded)."""
    a, b = sum(x != 0 for x in xi), sum(x != 0 for x in zeta)
    return comb(a + 1, 2) + a * b + comb(b + 1, 2)


def candidate_pairs(d: int, max_entry: int) -> list[Pair]:
    """Pairs (xi, zeta) of nonzero vectors with entries in [0, max_entry], cheapest first:
    ordered by :func:`form_terms`, then the largest entry, then the vectors (fewest and
    smallest entries first, so e_1 : e_2, e_1 : e_3, ... lead)."""
    vectors = sorted((v for v in product(range(max_entry + 1), repeat=d) if any(v)),
                     key=lambda v: (sum(x != 0 for x in v), max(v), sum(v), [-x for x in v]))
    top = [max(v) for v in vectors]
    pairs = sorted(combinations(range(len(vectors)), 2),
                   key=lambda ij: (form_terms(vectors[ij[0]], vectors[ij[1]]),
                                   max(top[ij[0]], top[ij[1]]), ij))
    return [(vectors[i], vectors[j]) for i, j in pairs]


@lru_cache(maxsize=None)
def interpolation_lines(d: int, k: int, prime: int = DEFAULT_PRIME) -> tuple[Pair, ...]:
    """dim R_k(Gr(2, d)) lines imposing independent conditions on R_k: the first
    independent ones (greedy: the pivot rows of the evaluation matrix, taken in batches)
    among :func:`candidate_pairs` with entries up to 2, then (if needed) pairs with an
    entry 3, 4, ... -- so the coordinate lines e_i : e_j come first and the chosen lines
    are sparse (few terms in the restricted forms).  Raises if no such set with entries
    <= 2k + 1 is found."""
    target = coordinate_ring_dimension(d, k)
    chosen: list[Pair] = []
    for max_entry in range(2, 2 * k + 2):
        candidates = [c for c in candidate_pairs(d, max_entry)
                      if max_entry == 2 or max_entry in c[0] + c[1]]
        for start in range(0, len(candidates), 2 * target):
            trial = chosen + candidates[start:start + 2 * target]
            chosen = [trial[i] for i in pivot_rows(plucker_evaluations(trial, k, prime), prime)]
            if len(chosen) == target:
                return tuple(chosen)
    raise RuntimeError(f"no {target} lines with small entries impose independent conditions "
                       f"on degree-{k} forms of Gr(2, {d})")

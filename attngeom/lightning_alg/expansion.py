"""The actual expansion of phi_W(X) = V X (X^T A X) as a polynomial in the input X.

This is the ground truth that the coefficient formulas (ADM Prop 2, Prop 6), the orbit
scaling (eq 3) and the monomial counts (Prop 3, Prop 5) are checked against.  It multiplies
the matrices in a SymPy sparse polynomial ring, so the grouping of equal monomials is done
by the ring arithmetic, not by any formula of the paper.  The weights are either generic
(symbols a_m_l, v_i_k over QQ) or random residues over F_p.
"""

from __future__ import annotations

from sympy import GF
from sympy.polys.rings import ring

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.parametrization import symbolic_weights

#: Largest number of ordered terms (d' t^2 d^3) the expansion will multiply out.
MAX_EXPANSION_TERMS = 3_000_000


def expansion_size(d: int, t: int, dprime: int) -> int:
    """Ordered terms a_ml v_ik x_kn x_mn x_lj of the whole output (before grouping)."""
    return dprime * t * t * d ** 3


def expand_output(d: int, t: int, dprime: int, weights=None, prime: int | None = None):
    """Expand every entry of phi_W(X) in the ring of the x variables.

    Parameters
    ----------
    weights : None for generic weights (the coefficients are then elements of the ring
        QQ[a, v] of :func:`attngeom.lightning_alg.parametrization.symbolic_weights`),
        or a pair (A, V) of integer arrays (shape=[d, d], [d', d]) of residues mod ``prime``.

    Returns
    -------
    dict (i, j) -> {x-monomial key: coefficient}, with 1-based (i, j) and the monomial key
    the sorted tuple of (input row, input column) pairs of its three factors.
    """
    size = expansion_size(d, t, dprime)
    if size > MAX_EXPANSION_TERMS:
        raise BadInput(f"expanding phi_W for d={d}, t={t}, d'={dprime} multiplies {size:.3g} "
                       f"terms; the limit is {MAX_EXPANSION_TERMS:,}")
    x_names = [f"x_{k}_{n}" for k in range(1, d + 1) for n in range(1, t + 1)]
    if weights is None:
        coeff_ring, A, V = symbolic_weights(d, dprime, None)
        R, *xg = ring(x_names, coeff_ring.to_domain())
        A = [[R(entry) for entry in row] for row in A]
        V = [[R(entry) for entry in row] for row in V]
    else:
        R, *xg = ring(x_names, GF(prime))
        A = [[R(int(entry)) for entry in row] for row in weights[0]]
        V = [[R(int(entry)) for entry in row] for row in weights[1]]
    X = [[xg[k * t + n] for n in range(t)] for k in range(d)]
    XT = [list(col) for col in zip(*X)]
    scores = _matmul(_matmul(XT, A, R), X, R)          # X^T A X, t x t
    mixed = _matmul(X, scores, R)                       # X (X^T A X), d x t
    output = _matmul(V, mixed, R)                       # V X (X^T A X), d' x t
    result = {}
    for i in range(dprime):
        for j in range(t):
            coefficients = {}
            for exponents, coeff in output[i][j].terms():
                key = tuple(sorted(
                    (k + 1, n + 1) for k in range(d) for n in range(t)
                    for _ in range(exponents[k * t + n])))
                coefficients[key] = coeff
            result[(i + 1, j + 1)] = coefficients
    return result


def _matmul(left, right, R):
    inner = len(right)
    return [[sum((left[r][k] * right[k][c] for k in range(inner)), R.zero)
             for c in range(len(right[0]))] for r in range(len(left))]

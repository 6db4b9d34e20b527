"""The Lie algebra flattening M_Lie(f) of the single-column cubic (ADM Def 15, Example 19).

sl_d acts on cubics by the first-order operators E_uv = x_u d/dx_v; Psi_f : sl_d -> S^3 U*,
D -> D(f).  ADM Def 15 fixes the bases: the trace-zero diagonal H_u = E_uu - E_dd (u < d)
and the off-diagonal E_uv (u != v), here in the order of Example 19 (H_1, ..., H_{d-1},
then E_uv lexicographically); rows are the cubic monomials x^K in lexicographic order.

For f = f_T (see :mod:`attngeom.lightning_alg.invariants.single_column`),
E_uv(f_T) = x_u d_v f_T = 3 x_u sum_{P in Mult_2} |Perm P| y(P + v) x^P, so

    M_Lie[x^m, E_uv] = [u in m] |Perm(m - u)| y(m - u + v),
    M_Lie[x^m, H_u]  = M_Lie[x^m, E_uu] - M_Lie[x^m, E_dd].

This is the matrix of D -> D(f_T)/3, the normalization Example 19 prints (its entry at
(x1^3, H_1) is a = y_111, while H_1(f_T) has coefficient 3 y_111 there); the constant 1/3
changes neither the rank nor the ideal of minors.  A trace-zero D = sum m_uv E_uv has
coordinates (m_11, ..., m_{d-1,d-1}, m_12, m_13, ...) in this basis.
"""

from __future__ import annotations

from functools import lru_cache

from attngeom.lightning_alg.invariants.determinantal import LinearMatrix
from attngeom.lightning_alg.invariants.single_column import monomial_name
from attngeom.lightning_alg.labels import multisets, orbit_size


def lie_flattening_shape(d: int) -> tuple[int, int]:
    """(C(d+2,3), d^2 - 1), without building the matrix."""
    return (d + 2) * (d + 1) * d // 6, d * d - 1


def sl_basis(d: int) -> list[tuple[str, dict]]:
    """[(name, {(u, v): coefficient})]: H_u = E_uu - E_dd for u < d, then E_uv, u != v."""
    sep = "," if d > 9 else ""
    basis = [(f"H{u}", {(u, u): 1, (d, d): -1}) for u in range(1, d)]
    basis += [(f"E{u}{sep}{v}", {(u, v): 1})
              for u in range(1, d + 1) for v in range(1, d + 1) if u != v]
    return basis


def _remove_one(m: tuple[int, ...], u: int) -> tuple[int, ...]:
    rest = list(m)
    rest.remove(u)
    return tuple(rest)


@lru_cache(maxsize=None)
def lie_flattening_matrix(d: int) -> LinearMatrix:
    """M_Lie(f_T) of ADM Def 15: C(d+2,3) x (d^2 - 1), over the single-column coordinates."""
    rows = multisets(d, 3)
    index = {K: n for n, K in enumerate(rows)}
    terms = []
    for c, (_, operator) in enumerate(sl_basis(d)):
        for r, m in enumerate(rows):
            for (u, v), sign in operator.items():
                if u in m:
                    rest = _remove_one(m, u)
                    terms.append((r, c, index[tuple(sorted(rest + (v,)))],
                                  sign * orbit_size(rest)))
    merged: dict = {}
    for r, c, k, coeff in terms:
        merged[(r, c, k)] = merged.get((r, c, k), 0) + coeff
    return LinearMatrix(tuple(monomial_name(K) for K in rows),
                        tuple(name for name, _ in sl_basis(d)), len(rows),
                        tuple((r, c, k, n) for (r, c, k), n in merged.items() if n))


def sl_coordinates(matrix) -> list:
    """The coordinates of a trace-zero D = sum m_uv E_uv (``matrix`` = (m_uv), d x d) in
    the basis of :func:`sl_basis`."""
    d = len(matrix)
    return [matrix[u][u] for u in range(d - 1)] + [
        matrix[u][v] for u in range(d) for v in range(d) if u != v]


def operator_matrix(coordinates, d: int) -> list[list]:
    """The inverse of :func:`sl_coordinates`: (m_uv) with m_dd = -(m_11 + ... + m_{d-1,d-1})."""
    zero = coordinates[0] * 0
    out = [[zero] * d for _ in range(d)]
    for value, (_, operator) in zip(coordinates, sl_basis(d)):
        for (u, v), sign in operator.items():
            out[u - 1][v - 1] = out[u - 1][v - 1] + sign * value
    return out

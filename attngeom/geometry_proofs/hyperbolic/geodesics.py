"""Geodesics and parallel transport of the Poincare metric by numerical integration of the
equations of RGT §4 (eqs 2-4, 7), independent of the closed forms of eqs 10-11.

The Christoffel symbols of metric (8) come from :mod:`attngeom.geometry_proofs.riemann` (symbolic,
lambdified once per dimension); the geodesic equation (3) x'' = -Gamma(x)[x', x'] and the
transport equation (7) V' = -Gamma(x)[x', V] are integrated with scipy's ``solve_ivp``
(DOP853, rtol 1e-12), and the boundary-value problem x(0) = x, x(1) = y by shooting
(Newton on the initial velocity, ``scipy.optimize.root``, continued along the chord from
x to y, with the first-order guess y - x).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy
from scipy.integrate import solve_ivp
from scipy.optimize import root

from attngeom.geometry_proofs import riemann
from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.core.errors import BadInput

#: Largest dimension whose Christoffel symbols are derived symbolically here.
MAX_DIM = 5
RTOL = 1e-12
ATOL = 1e-14


@functools.lru_cache(maxsize=None)
def christoffel_function(d: int):
    """Gamma^k_ij(x; c) of metric (8) as a NumPy function (x shape=[d], c) -> [d, d, d],
    derived by :func:`attngeom.geometry_proofs.riemann.metric_to_christoffel_2nd`."""
    if not 1 <= d <= MAX_DIM:
        raise BadInput(f"the geodesic integration derives Christoffel symbols for d <= {MAX_DIM}; got d={d}")
    coords = riemann.coordinates(d, "x")
    c = sympy.Symbol("c", positive=True)
    gamma = riemann.metric_to_christoffel_2nd(poincare.symbolic_metric(coords, c), coords,
                                              simplify=sympy.cancel)
    table = sympy.lambdify((coords, c), sympy.Array(gamma).tolist(), "numpy")
    return lambda x, cval: np.array(table(list(x), cval), dtype=float)


def _geodesic_rhs(d: int, c: float):
    gamma = christoffel_function(d)

    def rhs(t, state):
        x, v = state[:d], state[d:2 * d]
        g = gamma(x, c)
        acc = -np.einsum("kij,i,j->k", g, v, v)
        lam = 2 / (1 - c * x @ x)
        out = [v, acc, [lam * np.sqrt(v @ v)]]
        if state.size > 2 * d + 1:  # transported vector
            w = state[2 * d + 1:]
            out.append(-np.einsum("kij,i,j->k", g, v, w))
        return np.concatenate(out)
    return rhs


def integrate_geodesic(x, v, c: float, transported=None):
    """Solve eq (3) from x with velocity v for t in [0, 1]: (x(1), length of eq (2),
    transported vector at t = 1 or None).  x, v, transported shape=[d] (NumPy)."""
    x, v = np.asarray(x, float), np.asarray(v, float)
    d = x.size
    state = [x, v, [0.0]] + ([np.asarray(transported, float)] if transported is not None else [])

    def boundary(t, s):  # stop before leaving the ball (a bad shooting guess)
        return 1 - 1e-9 - c * s[:d] @ s[:d]
    boundary.terminal = True
    sol = solve_ivp(_geodesic_rhs(d, c), (0.0, 1.0), np.concatenate(state), method="DOP853",
                    rtol=RTOL, atol=ATOL, events=boundary)
    end = sol.y[:, -1]
    if sol.t[-1] < 1.0:
        end = end.copy()
        end[:d] = np.inf
    return end[:d], float(end[2 * d]), (end[2 * d + 1:] if transported is not None else None)


def shoot(x, y, c: float):
    """The initial velocity v with x(1) = y for the geodesic from x (Newton shooting, start
    y - x) and the length of that geodesic; (v shape=[d], length, endpoint residual)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    velocity = y - x
    # continuation along the chord: targets x + s (y - x), s = 1/4, ..., 1
    for s in (0.25, 0.5, 0.75, 1.0):
        target = x + s * (y - x)
        velocity = root(lambda v: np.nan_to_num(integrate_geodesic(x, v, c)[0] - target, posinf=1e6),
                        velocity * (s / max(s - 0.25, 0.25)) if s > 0.25 else velocity * s,
                        method="hybr", tol=1e-13).x
    end, length, _ = integrate_geodesic(x, velocity, c)
    return velocity, length, float(np.max(np.abs(end - y)))

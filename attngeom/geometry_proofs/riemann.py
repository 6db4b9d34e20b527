"""The Riemannian engine: metric -> Christoffel symbols -> Riemann tensor -> Ricci, scalar,
sectional and Gaussian curvature, symbolic (SymPy) and numeric (``attngeom.kernels.curvature``).

Symbolic functions are named for the object they return, after ``sympy.diffgeom``
(``metric_to_Christoffel_2nd``), and use its index conventions:

* ``metric_to_christoffel_1st``: Gamma_{k,ij} = (d_i g_jk + d_j g_ik - d_k g_ij) / 2, index [k, i, j];
* ``metric_to_christoffel_2nd``: Gamma^k_ij = g^{kl} Gamma_{l,ij}, index [k, i, j];
* ``metric_to_riemann_components``: R^r_smn = d_m Gamma^r_ns - d_n Gamma^r_ms
  + Gamma^r_ml Gamma^l_ns - Gamma^r_nl Gamma^l_ms, index [r, s, m, n] (GEC A.1.1's formula);
* ``metric_to_riemann_lowered``: R_asmn = g_ar R^r_smn, so R_0101 = K det g on a surface;
* ``metric_to_ricci_components``: Ric_sn = R^r_srn; ``metric_to_scalar_curvature``: g^sn Ric_sn.

The metric comes either as a matrix or from an immersion phi -> mu(phi) in R^D with the
Fisher–Rao metric of N(mu, Sigma), Sigma constant: g = J^T Sigma^{-1} J (GEC §2.1).

Numerically, :class:`Immersion` and :class:`MetricField` hold a map written once in
:mod:`attngeom.geometry_proofs.ops`; on torch / jax its jet comes from autodiff, on NumPy from this
engine's symbolic derivatives lambdified once, and ``attngeom.kernels.curvature`` does the rest
(Gauss equation for immersions, Christoffel route for metrics).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import sympy

from attngeom.geometry_proofs.ops import ArrayOps, SymbolicOps
from attngeom.kernels import curvature as numeric
from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput

Simplifier = Callable[[sympy.Expr], sympy.Expr]

_RECIPROCALS = {
    sympy.tan: lambda x: sympy.sin(x) / sympy.cos(x), sympy.cot: lambda x: sympy.cos(x) / sympy.sin(x),
    sympy.sec: lambda x: 1 / sympy.cos(x), sympy.csc: lambda x: 1 / sympy.sin(x),
    sympy.tanh: lambda x: sympy.sinh(x) / sympy.cosh(x),
    sympy.coth: lambda x: sympy.cosh(x) / sympy.sinh(x),
    sympy.sech: lambda x: 1 / sympy.cosh(x), sympy.csch: lambda x: 1 / sympy.sinh(x),
}


def cancel_trig(expr) -> sympy.Expr:
    """A canonical rational form that decides zero for rational functions of the coordinates,
    of exp / log terms, and of sin, cos, sinh, cosh.

    tan, sec, ... become quotients of sin and cos; multiple angles are expanded; then
    sin(x), cos(x) (sinh(x), cosh(x)) become variables s, c and numerator and denominator
    are reduced modulo s^2 + c^2 - 1 (c^2 - s^2 - 1), a Groebner basis (the leading terms
    s^2 are pairwise coprime), so the numerator reduces to 0 exactly when the expression
    vanishes identically (for algebraically independent angles).  ``sympy.simplify`` is
    neither a decision procedure nor fast enough for curvature tensors.
    """
    expr = sympy.sympify(expr, strict=True)
    for function, replacement in _RECIPROCALS.items():
        expr = expr.replace(function, replacement)
    expr = sympy.expand_trig(expr)
    substitutions, relations, generators = {}, [], []
    for sine, cosine, sign in ((sympy.sin, sympy.cos, 1), (sympy.sinh, sympy.cosh, -1)):
        angles = sorted({a.args[0] for a in expr.atoms(sine, cosine)}, key=sympy.default_sort_key)
        for angle in angles:
            s, c = sympy.Dummy("s"), sympy.Dummy("c")
            substitutions[sine(angle)], substitutions[cosine(angle)] = s, c
            relations.append(c ** 2 + sign * s ** 2 - 1)
            generators += [s, c]
    # together() first: products built elementwise by NumPy can carry unevaluated factors
    # (Mul(-1, 1/8, x)) that cancel() alone leaves nested
    numerator, denominator = sympy.fraction(sympy.cancel(sympy.together(expr.xreplace(substitutions))))
    if relations:
        reduce = lambda p: sympy.reduced(sympy.expand(p), relations, *generators, order="lex")[1]
        try:
            numerator, denominator = reduce(numerator), reduce(denominator)
        except sympy.PolynomialError:
            # sin / cos under a fractional power: no canonical form; the caller's zero test
            # then falls back to evaluation (see vanishes_identically)
            return sympy.cancel(sympy.together(expr))
    if numerator == 0:
        return sympy.S.Zero
    back = {v: k for k, v in substitutions.items()}
    return sympy.cancel(numerator / denominator).xreplace(back)


def coordinates(dim: int, name: str = "phi") -> tuple[sympy.Symbol, ...]:
    """Real coordinate symbols phi_1, ..., phi_d."""
    if dim < 1:
        raise BadInput(f"the dimension must be positive; got {dim}")
    return tuple(sympy.Symbol(f"{name}_{i + 1}", real=True) for i in range(dim))


def fisher_rao_metric(mean, coords, covariance=None, simplify: Simplifier = cancel_trig):
    """g_ij = d_i mu^T Sigma^{-1} d_j mu, the Fisher–Rao metric of N(mu(phi), Sigma) for a
    constant covariance Sigma (identity when None), GEC §2.1; a d x d SymPy Matrix.
    ``mean`` is simplified first (a gated output sigma(logit(z)) becomes z)."""
    mean = sympy.Matrix(mean).applyfunc(simplify)
    jac = mean.jacobian(list(coords))
    precision = sympy.eye(mean.rows) if covariance is None else sympy.Matrix(covariance).inv()
    return (jac.T * precision * jac).applyfunc(simplify)


@dataclass(frozen=True, eq=False)
class _Chain:
    """metric -> Christoffel -> Riemann for one metric, each object computed on first use."""

    metric: sympy.ImmutableMatrix
    coords: tuple
    simplify: Simplifier

    @property
    def dim(self) -> int:
        return len(self.coords)

    @functools.cached_property
    def inverse(self) -> sympy.Matrix:
        return self.metric.inv().applyfunc(self.simplify)

    @functools.cached_property
    def _first(self) -> list:
        d, g, x, simplify = self.dim, self.metric, self.coords, self.simplify
        dg = [[[sympy.diff(g[i, j], x[k]) for k in range(d)] for j in range(d)] for i in range(d)]
        return [[[simplify((dg[j][k][i] + dg[i][k][j] - dg[i][j][k]) / 2) for j in range(d)]
                 for i in range(d)] for k in range(d)]

    @functools.cached_property
    def _constant(self) -> bool:
        return all(x == 0 for x in sympy.flatten(self._first))

    @functools.cached_property
    def _second(self) -> list:
        d, first, simplify = self.dim, self._first, self.simplify
        if self._constant:
            # Gamma^k_ij = g^{kl} Gamma_{l,ij} vanishes with Gamma_{l,ij}: no inverse needed
            return [[[sympy.S.Zero] * d for _ in range(d)] for _ in range(d)]
        inverse = self.inverse
        return [[[simplify(sum(inverse[k, l] * first[l][i][j] for l in range(d)))
                  for j in range(d)] for i in range(d)] for k in range(d)]

    @functools.cached_property
    def _upper(self) -> list:
        d, G, x, simplify = self.dim, self._second, self.coords, self.simplify
        if self._constant:
            return [[[[sympy.S.Zero] * d for _ in range(d)] for _ in range(d)] for _ in range(d)]
        return [[[[simplify(sympy.diff(G[r][n][s], x[m]) - sympy.diff(G[r][m][s], x[n])
                            + sum(G[r][m][l] * G[l][n][s] - G[r][n][l] * G[l][m][s] for l in range(d)))
                   for n in range(d)] for m in range(d)] for s in range(d)] for r in range(d)]

    @functools.cached_property
    def christoffel_1st(self) -> sympy.Array:
        return sympy.Array(self._first)

    @functools.cached_property
    def christoffel_2nd(self) -> sympy.Array:
        return sympy.Array(self._second)

    @functools.cached_property
    def riemann(self) -> sympy.Array:
        return sympy.Array(self._upper)

    @functools.cached_property
    def riemann_lowered(self) -> sympy.Array:
        d, g, upper, simplify = self.dim, self.metric, self._upper, self.simplify
        return sympy.Array([[[[simplify(sum(g[a, r] * upper[r][s][m][n] for r in range(d)))
                               for n in range(d)] for m in range(d)] for s in range(d)]
                            for a in range(d)])


@functools.lru_cache(maxsize=64)
def _chain(metric: sympy.ImmutableMatrix, coords: tuple, simplify: Simplifier) -> _Chain:
    d = len(coords)
    if metric.shape != (d, d):
        raise BadInput(f"a metric in {d} coordinates is {d}x{d}; got {metric.shape}")
    if metric != metric.T:
        raise BadInput("the metric must be symmetric")
    return _Chain(metric, coords, simplify)


def components(array) -> list:
    """All components of a SymPy Array (or Matrix), flattened."""
    return list(sympy.flatten(array.tolist()))


def _chain_of(metric, coords, simplify) -> _Chain:
    return _chain(sympy.ImmutableMatrix(metric), tuple(coords), simplify)


def metric_to_christoffel_1st(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Array:
    """Gamma_{k,ij} = (d_i g_jk + d_j g_ik - d_k g_ij) / 2, shape=[d, d, d], index [k, i, j]."""
    return _chain_of(metric, coords, simplify).christoffel_1st


def metric_to_christoffel_2nd(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Array:
    """Gamma^k_ij = g^{kl} Gamma_{l,ij}, shape=[d, d, d], index [k, i, j]."""
    return _chain_of(metric, coords, simplify).christoffel_2nd


def metric_to_riemann_components(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Array:
    """R^r_smn, shape=[d, d, d, d], index [r, s, m, n] (GEC A.1.1, sympy.diffgeom)."""
    return _chain_of(metric, coords, simplify).riemann


def metric_to_riemann_lowered(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Array:
    """R_asmn = g_ar R^r_smn; on a surface R_0101 = K det g."""
    return _chain_of(metric, coords, simplify).riemann_lowered


def metric_to_ricci_components(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Matrix:
    """Ric_sn = R^r_srn (contraction of the upper index with the third)."""
    riemann = metric_to_riemann_components(metric, coords, simplify)
    d = len(coords)
    return sympy.Matrix(d, d, lambda s, n: simplify(sum(riemann[r, s, r, n] for r in range(d))))


def metric_to_scalar_curvature(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Expr:
    """g^{sn} Ric_sn (2K on a surface)."""
    inverse = _chain_of(metric, coords, simplify).inverse
    ricci = metric_to_ricci_components(metric, coords, simplify)
    d = len(coords)
    return simplify(sum(inverse[s, n] * ricci[s, n] for s in range(d) for n in range(d)))


def sectional_curvature(metric, coords, X, Y, simplify: Simplifier = cancel_trig) -> sympy.Expr:
    """K(X, Y) = R_abcd X^a Y^b X^c Y^d / (g(X,X) g(Y,Y) - g(X,Y)^2) for the plane span{X, Y}."""
    lowered = metric_to_riemann_lowered(metric, coords, simplify)
    d = len(coords)
    g = sympy.Matrix(metric)
    X, Y = sympy.Matrix(X), sympy.Matrix(Y)
    numerator = sum(lowered[a, b, c, e] * X[a] * Y[b] * X[c] * Y[e]
                    for a in range(d) for b in range(d) for c in range(d) for e in range(d))
    area = (X.T * g * X)[0] * (Y.T * g * Y)[0] - (X.T * g * Y)[0] ** 2
    return simplify(numerator / area)


def gaussian_curvature(metric, coords, simplify: Simplifier = cancel_trig) -> sympy.Expr:
    """K = R_0101 / det g for a surface (d = 2)."""
    if len(coords) != 2:
        raise BadInput(f"Gaussian curvature needs a surface (2 coordinates); got {len(coords)}")
    lowered = metric_to_riemann_lowered(metric, coords, simplify)
    return simplify(lowered[0, 1, 0, 1] / sympy.Matrix(metric).det())


def _riemann_from_metric_jet(g, dg, ddg, simplify: Simplifier) -> sympy.Array:
    """R_asmn from g, dg[i][j][k] = d_k g_ij and ddg[i][j][k][l] = d_k d_l g_ij at one point:
    Gamma_{k,ij} and d_m Gamma_{k,ij} from the jet, d_m g^{-1} = -g^{-1} (d_m g) g^{-1}, then
    the formula of ``metric_to_riemann_components``."""
    d = g.rows
    inverse = g.inv().applyfunc(simplify)
    first = [[[(dg[j][k][i] + dg[i][k][j] - dg[i][j][k]) / 2 for j in range(d)] for i in range(d)]
             for k in range(d)]
    d_first = [[[[(ddg[j][k][i][m] + ddg[i][k][j][m] - ddg[i][j][k][m]) / 2 for m in range(d)]
                 for j in range(d)] for i in range(d)] for k in range(d)]
    second = [[[sum(inverse[r, k] * first[k][i][j] for k in range(d)) for j in range(d)]
               for i in range(d)] for r in range(d)]
    d_inverse = [-inverse * sympy.Matrix(d, d, lambda a, b: dg[a][b][m]) * inverse for m in range(d)]
    d_second = [[[[sum(d_inverse[m][r, k] * first[k][i][j] + inverse[r, k] * d_first[k][i][j][m]
                       for k in range(d)) for m in range(d)] for j in range(d)] for i in range(d)]
                for r in range(d)]
    upper = [[[[d_second[r][n][s][m] - d_second[r][m][s][n]
                + sum(second[r][m][l] * second[l][n][s] - second[r][n][l] * second[l][m][s]
                      for l in range(d))
                for n in range(d)] for m in range(d)] for s in range(d)] for r in range(d)]
    return sympy.Array([[[[simplify(sum(g[a, r] * upper[r][s][m][n] for r in range(d)))
                           for n in range(d)] for m in range(d)] for s in range(d)] for a in range(d)])


def metric_to_riemann_lowered_at(metric, coords, point: dict,
                                 simplify: Simplifier = cancel_trig) -> sympy.Array:
    """R_asmn at one point, from the 2-jet of g there (substituted before the algebra, so
    metrics with many symbolic coefficients stay small).  ``point``: coordinate -> value."""
    d = len(coords)
    metric = sympy.Matrix(metric)
    at = lambda e: simplify(sympy.sympify(e, strict=True).subs(point))
    dg = [[[at(sympy.diff(metric[i, j], coords[k])) for k in range(d)] for j in range(d)]
          for i in range(d)]
    ddg = [[[[at(sympy.diff(metric[i, j], coords[k], coords[l])) for l in range(d)]
             for k in range(d)] for j in range(d)] for i in range(d)]
    return _riemann_from_metric_jet(metric.applyfunc(at), dg, ddg, simplify)


def immersion_to_riemann_lowered_at(mean, coords, point: dict, covariance=None,
                                    simplify: Simplifier = cancel_trig) -> sympy.Array:
    """R_asmn at one point of phi -> mu(phi) with g = J^T P J (P = Sigma^{-1}), from the 3-jet
    of mu there: d_k g_ij = H_ik P J_j + J_i P H_jk and
    d_k d_l g_ij = T_ikl P J_j + H_ik P H_jl + H_il P H_jk + J_i P T_jkl (intrinsic: the
    Gauss equation is not used)."""
    d = len(coords)
    mean = sympy.Matrix(mean)
    P = sympy.eye(mean.rows) if covariance is None else sympy.Matrix(covariance).inv()
    at = lambda e: sympy.Matrix(e).applyfunc(lambda x: simplify(x.subs(point)))
    J = [at(mean.diff(coords[i])) for i in range(d)]
    H = [[at(mean.diff(coords[i], coords[k])) for k in range(d)] for i in range(d)]
    T = [[[at(mean.diff(coords[i], coords[k], coords[l])) for l in range(d)] for k in range(d)]
         for i in range(d)]
    dot = lambda x, y: simplify((x.T * P * y)[0])
    g = sympy.Matrix(d, d, lambda i, j: dot(J[i], J[j]))
    dg = [[[dot(H[i][k], J[j]) + dot(J[i], H[j][k]) for k in range(d)] for j in range(d)]
          for i in range(d)]
    ddg = [[[[dot(T[i][k][l], J[j]) + dot(H[i][k], H[j][l]) + dot(H[i][l], H[j][k])
              + dot(J[i], T[j][k][l]) for l in range(d)] for k in range(d)] for j in range(d)]
           for i in range(d)]
    return _riemann_from_metric_jet(g, dg, ddg, simplify)


def gaussian_curvature_at(metric, coords, point: dict, simplify: Simplifier = cancel_trig) -> sympy.Expr:
    """K = R_0101 / det g at one point of a surface given by its metric."""
    if len(coords) != 2:
        raise BadInput(f"Gaussian curvature needs a surface (2 coordinates); got {len(coords)}")
    lowered = metric_to_riemann_lowered_at(metric, coords, point, simplify)
    return simplify(lowered[0, 1, 0, 1] / sympy.Matrix(metric).subs(point).det())


def immersion_gaussian_curvature_at(mean, coords, point: dict, covariance=None,
                                    simplify: Simplifier = cancel_trig) -> sympy.Expr:
    """K = R_0101 / det g at one point of a surface phi -> mu(phi)."""
    if len(coords) != 2:
        raise BadInput(f"Gaussian curvature needs a surface (2 coordinates); got {len(coords)}")
    mean = sympy.Matrix(mean)
    lowered = immersion_to_riemann_lowered_at(mean, coords, point, covariance, simplify)
    J = mean.jacobian(list(coords)).subs(point)
    P = sympy.eye(mean.rows) if covariance is None else sympy.Matrix(covariance).inv()
    return simplify(lowered[0, 1, 0, 1] / (J.T * P * J).det())


def vanishes_identically(expr, coords, trials: int = 3) -> bool:
    """True when ``expr`` cancels to 0 (``cancel_trig``); False when it is nonzero at a seeded
    point (evaluated with 30 digits, so the witness is not rounding).  An expression that
    does not cancel but evaluates to 0 at every trial point is undecided: RuntimeError,
    never a guess."""
    reduced = cancel_trig(expr)
    if reduced == 0:
        return True
    rng = np.random.default_rng(0)
    for _ in range(trials):
        point = {x: sympy.Rational(int(rng.integers(1, 97)), 128) for x in coords}
        value = sympy.N(reduced.subs(point), 30)
        if value.is_number and abs(complex(value)) > 1e-20:
            return False
    raise RuntimeError(f"cannot decide whether {str(reduced)[:200]} vanishes identically")


def _lambdify_batched(expressions: list, coords: tuple) -> Callable[[np.ndarray], np.ndarray]:
    """points [B, d] -> values [B, len(expressions)], lambdified once (constants broadcast)."""
    compiled = sympy.lambdify(coords, expressions, modules="numpy")

    def evaluate(points: np.ndarray) -> np.ndarray:
        # outside a map's domain (log of a negative number) NumPy gives nan, which the
        # callers report; its warning would print the whole generated source
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            columns = compiled(*np.moveaxis(np.asarray(points, dtype=float), -1, 0))
        batch = points.shape[:-1]
        return np.stack([np.broadcast_to(np.asarray(c, dtype=float), batch) for c in columns],
                        axis=-1)

    return evaluate


def _points_on(points, backend: Backend):
    points = np.asarray(points, dtype=float)
    if points.ndim != 2:
        raise BadInput(f"points must have shape [B, d]; got {points.shape}")
    return backend.asarray(points)


@dataclass(frozen=True, eq=False)
class Immersion:
    """phi -> mu(phi) in R^D, written once as ``function(phi, ops)`` (see attngeom.geometry_proofs.ops),
    with the Fisher–Rao metric of N(mu, Sigma) for a constant ``covariance`` (None: I_D).

    With ``parameters = P > 0`` the map is ``function(phi, ops, theta)`` for a parameter
    vector theta in R^P (weights), and numeric evaluation takes one theta per point.
    """

    name: str
    dim: int
    function: Callable[..., Any]
    covariance: Any = None
    parameters: int = 0

    @functools.cached_property
    def coords(self) -> tuple[sympy.Symbol, ...]:
        return coordinates(self.dim)

    @functools.cached_property
    def parameter_symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(sympy.Symbol(f"theta_{i + 1}", real=True) for i in range(self.parameters))

    @functools.cached_property
    def mean(self) -> sympy.Matrix:
        """mu(phi) as a SymPy column (exact constants only; theta symbolic)."""
        return self._mean(SymbolicOps())

    def _call(self, phi, ops, theta=None):
        return self.function(phi, ops) if not self.parameters else self.function(phi, ops, theta)

    def _mean(self, ops: SymbolicOps) -> sympy.Matrix:
        phi = np.array(self.coords, dtype=object)
        theta = np.array(self.parameter_symbols, dtype=object)
        return sympy.Matrix(list(np.asarray(self._call(phi, ops, theta)).reshape(-1)))

    def metric(self, simplify: Simplifier = cancel_trig) -> sympy.Matrix:
        covariance = None if self.covariance is None else SymbolicOps().const(self.covariance)
        return fisher_rao_metric(self.mean, self.coords,
                                 None if covariance is None else sympy.Matrix(covariance), simplify)

    @functools.cached_property
    def _numpy_jet(self):
        mean = self._mean(SymbolicOps(allow_floats=True))
        jac = mean.jacobian(list(self.coords))
        hess = [sympy.diff(jac[a, i], x) for a in range(jac.rows) for i in range(self.dim)
                for x in self.coords]
        arguments = self.coords + self.parameter_symbols
        return (_lambdify_batched(list(mean), arguments), _lambdify_batched(list(jac), arguments),
                _lambdify_batched(hess, arguments), jac.rows)

    def jet(self, points, backend: Backend, parameters=None):
        """(values [B, D], jac [B, D, d], hess [B, D, d, d]) on ``backend``; ``parameters``
        (shape=[B, P]) when the map has parameters."""
        pts = _points_on(points, backend)
        if pts.shape[-1] != self.dim:
            raise BadInput(f"{self.name} takes points with {self.dim} coordinates; got {pts.shape[-1]}")
        if bool(self.parameters) != (parameters is not None):
            raise BadInput(f"{self.name} takes {self.parameters} parameters per point")
        if backend.name != "numpy":
            jet = self._autodiff_jet(backend)
            return jet(pts) if parameters is None else jet(pts, _points_on(parameters, backend))
        values, jac, hess, rows = self._numpy_jet
        batch, d = pts.shape
        arguments = pts if parameters is None else np.hstack([pts, np.asarray(parameters, dtype=float)])
        return (values(arguments), jac(arguments).reshape(batch, rows, d),
                hess(arguments).reshape(batch, rows, d, d))

    @functools.cached_property
    def _compiled_jets(self) -> dict:
        return {}

    def _autodiff_jet(self, backend: Backend):
        """The compiled batched jet on ``backend``, built once per immersion (jax compiles it)."""
        if backend not in self._compiled_jets:
            ops = ArrayOps(backend)
            if not self.parameters:
                jet = numeric.jet_function(lambda p: self.function(p, ops).reshape(-1), backend)
            else:
                jet = numeric.jet_function(lambda p, q: self.function(p, ops, q).reshape(-1),
                                           backend, True)
            self._compiled_jets[backend] = jet
        return self._compiled_jets[backend]

    def precision(self, backend: Backend):
        if self.covariance is None:
            return None
        return backend.asarray(np.linalg.inv(np.asarray(self.covariance, dtype=float)))

    def curvature(self, points, backend: Backend, parameters=None) -> numeric.Curvature:
        """Numeric curvature at the rows of ``points`` (Gauss equation, attngeom.kernels.curvature)."""
        _, jac, hess = self.jet(points, backend, parameters)
        return numeric.immersion_curvature_from_jet(jac, hess, backend, self.precision(backend))


@dataclass(frozen=True, eq=False)
class MetricField:
    """phi -> g(phi), written once as ``function(phi, ops)`` returning a d x d array."""

    name: str
    dim: int
    function: Callable[[Any, Any], Any]

    @functools.cached_property
    def coords(self) -> tuple[sympy.Symbol, ...]:
        return coordinates(self.dim)

    def metric(self, simplify: Simplifier = cancel_trig, ops: SymbolicOps | None = None) -> sympy.Matrix:
        phi = np.array(self.coords, dtype=object)
        return sympy.Matrix(np.asarray(self.function(phi, ops or SymbolicOps()))).applyfunc(simplify)

    @functools.cached_property
    def _numpy_jet(self):
        g = self.metric(lambda e: e, SymbolicOps(allow_floats=True))
        flat = list(g)
        first = [sympy.diff(e, x) for e in flat for x in self.coords]
        second = [sympy.diff(e, x, y) for e in flat for x in self.coords for y in self.coords]
        return tuple(_lambdify_batched(exprs, self.coords) for exprs in (flat, first, second))

    def curvature(self, points, backend: Backend) -> numeric.Curvature:
        """Numeric curvature at the rows of ``points`` (Christoffel route, attngeom.kernels.curvature)."""
        pts = _points_on(points, backend)
        d = self.dim
        if backend.name != "numpy":
            ops = ArrayOps(backend)
            return numeric.metric_curvature(lambda p: self.function(p, ops), pts, backend)
        g, dg, ddg = (f(pts) for f in self._numpy_jet)
        batch = pts.shape[0]
        return numeric.metric_curvature_from_jet(g.reshape(batch, d, d), dg.reshape(batch, d, d, d),
                                                 ddg.reshape(batch, d, d, d, d), backend)

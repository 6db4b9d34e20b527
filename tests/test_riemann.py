"""The Riemannian engine: known answers symbolically and on numpy / torch / jax, cross-checks
against galgebra and sympy.diffgeom, and the numeric kernels (issue 8, part 1)."""

from fractions import Fraction

import numpy as np
import pytest
import sympy

from attngeom.geometry_proofs import surfaces
from attngeom.geometry_proofs.ops import ArrayOps, SymbolicOps, evaluate_expression, parse_expression
from attngeom.geometry_proofs.riemann import (
    Immersion, MetricField, cancel_trig, components, coordinates, fisher_rao_metric,
    gaussian_curvature, gaussian_curvature_at, immersion_gaussian_curvature_at,
    metric_to_christoffel_1st, metric_to_christoffel_2nd, metric_to_ricci_components,
    metric_to_riemann_components, metric_to_riemann_lowered, metric_to_riemann_lowered_at,
    metric_to_scalar_curvature, sectional_curvature, vanishes_identically)
from attngeom.kernels.backend import get_backend
from attngeom.kernels.curvature import autodiff_jet, immersion_curvature_from_jet
from attngeom.core.errors import BadInput, BackendUnavailable

BACKENDS = ("numpy", "torch", "jax")


def _points(low, high, count=6, dim=2, seed=1):
    return np.random.default_rng(seed).uniform(low, high, (count, dim))


# -- symbolic known answers ------------------------------------------------------------

@pytest.mark.parametrize("surface,expected", [
    (surfaces.sphere(2), sympy.Rational(1, 4)),
    (surfaces.sphere(1), 1),
    (surfaces.pseudosphere(), -1),
    (surfaces.polar_plane(), 0),
    (surfaces.parabolic_plane(), 0),
    (surfaces.elliptic_plane(), 0),
    (surfaces.cylinder_in_anisotropic_gaussian(), 0),
])
def test_symbolic_gaussian_curvature_known_answers(surface, expected):
    assert gaussian_curvature(surface.metric(), surface.coords) == expected


def test_symbolic_sphere_of_symbolic_radius():
    R = sympy.Symbol("R", positive=True)
    sphere = surfaces.sphere(R)
    g = sphere.metric()
    assert gaussian_curvature(g, sphere.coords) == 1 / R ** 2
    assert metric_to_scalar_curvature(g, sphere.coords) == 2 / R ** 2
    assert sympy.simplify(metric_to_ricci_components(g, sphere.coords) - g / R ** 2) == sympy.zeros(2, 2)


def test_symbolic_torus():
    torus = surfaces.torus(2, 1)
    a = torus.coords[0]
    K = gaussian_curvature(torus.metric(), torus.coords)
    assert cancel_trig(K - sympy.cos(a) / (2 + sympy.cos(a))) == 0


@pytest.mark.parametrize("field", [surfaces.poincare_half_plane(), surfaces.poincare_disk()])
def test_symbolic_hyperbolic_plane(field):
    g = field.metric()
    assert gaussian_curvature(g, field.coords) == -1
    assert metric_to_scalar_curvature(g, field.coords) == -2


def test_flat_space_in_spherical_coordinates_has_zero_riemann_tensor():
    space = surfaces.spherical_space()
    riemann = metric_to_riemann_components(space.metric(), space.coords)
    assert set(components(riemann)) == {0}
    assert set(components(metric_to_christoffel_2nd(space.metric(), space.coords))) != {0}


def test_sectional_curvature_of_sphere_times_line():
    a, b, z = coordinates(3)
    g = sympy.diag(1, sympy.cos(a) ** 2, 1)           # S^2 x R
    assert sectional_curvature(g, (a, b, z), [1, 0, 0], [0, 1, 0]) == 1
    assert sectional_curvature(g, (a, b, z), [1, 0, 0], [0, 0, 1]) == 0
    mixed = sectional_curvature(g, (a, b, z), [1, 0, 0], [0, 1, 1])
    assert cancel_trig(mixed - sympy.cos(a) ** 2 / (sympy.cos(a) ** 2 + 1)) == 0


def test_fisher_rao_metric_with_covariance_is_whitened_pullback():
    u, v = coordinates(2)
    mean = [u, v, u * v]
    Sigma = sympy.diag(1, 4, 9)
    J = sympy.Matrix(mean).jacobian([u, v])
    assert fisher_rao_metric(mean, (u, v), Sigma) == sympy.expand(J.T * Sigma.inv() * J)


def test_cancel_trig_decides_identities():
    x, y = sympy.symbols("x y", real=True)
    assert cancel_trig(sympy.sin(2 * x) * sympy.tan(x) + 2 * sympy.cos(2 * x) - 2 * sympy.cos(x) ** 2) == 0
    assert cancel_trig(sympy.cosh(y) ** 2 - sympy.sinh(y) ** 2 - 1) == 0
    assert cancel_trig(sympy.sin(x) ** 2 + sympy.cos(x) ** 2 - sympy.cos(y)) != 0


def test_vanishes_identically_decides_or_refuses():
    x = sympy.Symbol("x", real=True)
    assert vanishes_identically(sympy.sin(2 * x) - 2 * sympy.sin(x) * sympy.cos(x), (x,))
    assert not vanishes_identically((sympy.sin(x) ** 2 + 1) ** sympy.Rational(1, 5) - 1, (x,))
    with pytest.raises(RuntimeError, match="cannot decide"):
        vanishes_identically((sympy.sin(x) ** 2 + sympy.cos(x) ** 2) ** sympy.Rational(1, 5) - 1, (x,))


def test_pointwise_engine_matches_full_engine():
    torus = surfaces.torus(3, 1)
    point = {torus.coords[0]: sympy.Rational(1, 3), torus.coords[1]: 2}
    full = gaussian_curvature(torus.metric(), torus.coords).subs(point)
    assert cancel_trig(gaussian_curvature_at(torus.metric(), torus.coords, point) - full) == 0
    assert cancel_trig(immersion_gaussian_curvature_at(torus.mean, torus.coords, point) - full) == 0
    lowered = metric_to_riemann_lowered(torus.metric(), torus.coords)
    at = metric_to_riemann_lowered_at(torus.metric(), torus.coords, point)
    assert all(cancel_trig(x.subs(point) - y) == 0 for x, y in zip(components(lowered), components(at)))


def test_graph_surface_matches_lemma_3_12_formula():
    u, v = sympy.symbols("u v", real=True)
    f = u ** 2 * v - v ** 3 / 3 + u * v
    graph = surfaces.graph_surface(f)
    printed = (f.diff(u, u) * f.diff(v, v) - f.diff(u, v) ** 2) / (1 + f.diff(u) ** 2 + f.diff(v) ** 2) ** 2
    K = gaussian_curvature(graph.metric(), graph.coords)
    assert sympy.cancel(K - printed.subs({u: graph.coords[0], v: graph.coords[1]})) == 0


# -- cross-checks against galgebra and sympy.diffgeom --------------------------------------

CROSS_CHECK = [surfaces.sphere(2), surfaces.torus(2, 1), surfaces.polar_plane(),
               surfaces.poincare_half_plane(), surfaces.poincare_disk()]


@pytest.mark.parametrize("surface", CROSS_CHECK, ids=lambda s: s.name)
def test_christoffel_symbols_agree_with_galgebra(surface):
    from galgebra.ga import Ga
    g, coords = surface.metric(), surface.coords
    ga = Ga("e", g=g, coords=coords)
    first, second = ga.Christoffel_symbols(mode=1), ga.Christoffel_symbols(mode=2)
    ours1, ours2 = metric_to_christoffel_1st(g, coords), metric_to_christoffel_2nd(g, coords)
    d = len(coords)
    for i in range(d):
        for j in range(d):
            for k in range(d):
                # galgebra: dG[i][j][k] = Gamma_{ij,k}, Gamma2[i][j][k] = Gamma^k_ij
                assert cancel_trig(first[i][j][k] - ours1[k, i, j]) == 0
                assert cancel_trig(second[i][j][k] - ours2[k, i, j]) == 0


@pytest.mark.parametrize("surface", [surfaces.sphere(2), surfaces.torus(2, 1)], ids=lambda s: s.name)
def test_riemann_and_ricci_agree_with_sympy_diffgeom(surface):
    from sympy.diffgeom import CoordSystem, Manifold, Patch, TensorProduct, metric_to_Ricci_components
    from sympy.diffgeom import metric_to_Riemann_components
    g, coords = surface.metric(), surface.coords
    system = CoordSystem("c", Patch("P", Manifold("M", 2)), sympy.symbols("x0 x1", real=True))
    x, dx = system.base_scalars(), system.base_oneforms()
    as_form = lambda e: e.subs(dict(zip(coords, x)))
    form = sum(as_form(g[i, j]) * TensorProduct(dx[i], dx[j]) for i in range(2) for j in range(2))
    theirs = metric_to_Riemann_components(form)
    ours = metric_to_riemann_components(g, coords)
    back = dict(zip(x, coords))
    assert all(cancel_trig(a - b.subs(back)) == 0 for a, b in zip(components(ours), components(theirs)))
    ricci = metric_to_Ricci_components(form)
    ours_ricci = metric_to_ricci_components(g, coords)
    assert all(cancel_trig(ours_ricci[i, j] - ricci[i, j].subs(back)) == 0 for i in range(2) for j in range(2))


# -- numeric, on all three backends ------------------------------------------------------

KNOWN_NUMERIC = [
    (surfaces.sphere(2), (-1.2, 1.2), lambda p: np.full(len(p), 0.25)),
    (surfaces.torus(2, 1), (-3, 3), lambda p: np.cos(p[:, 0]) / (2 + np.cos(p[:, 0]))),
    (surfaces.pseudosphere(), (0.3, 2.0), lambda p: -np.ones(len(p))),
    (surfaces.polar_plane(), (0.5, 2.0), lambda p: np.zeros(len(p))),
    (surfaces.parabolic_plane(), (0.5, 2.0), lambda p: np.zeros(len(p))),
    (surfaces.elliptic_plane(), (0.3, 1.5), lambda p: np.zeros(len(p))),
    (surfaces.poincare_half_plane(), (0.5, 2.0), lambda p: -np.ones(len(p))),
    (surfaces.poincare_disk(), (-0.5, 0.5), lambda p: -np.ones(len(p))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("surface,box,expected", KNOWN_NUMERIC, ids=lambda x: getattr(x, "name", ""))
def test_numeric_gaussian_curvature_known_answers(backend, surface, box, expected):
    be = get_backend(backend)
    points = _points(*box)
    curv = surface.curvature(points, be)
    K = be.to_numpy(curv.gaussian)
    assert np.allclose(K, expected(points), rtol=0, atol=1e-10)
    assert np.allclose(be.to_numpy(curv.scalar), 2 * K, rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_numeric_ellipsoid_from_anisotropic_covariance(backend):
    be = get_backend(backend)
    ellipsoid = surfaces.ellipsoid_patch_in_anisotropic_gaussian()
    points = _points(-1.0, 1.0)
    a, b, c = 1.5, 1.0, 0.5
    X = np.cos(points[:, 0]) * np.cos(points[:, 1]) * a
    Y = np.cos(points[:, 0]) * np.sin(points[:, 1]) * b
    Z = np.sin(points[:, 0]) * c
    expected = 1 / (a * b * c * (X ** 2 / a ** 4 + Y ** 2 / b ** 4 + Z ** 2 / c ** 4)) ** 2
    assert np.allclose(be.to_numpy(ellipsoid.curvature(points, be).gaussian), expected, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_numeric_flat_space_in_spherical_coordinates(backend):
    be = get_backend(backend)
    curv = surfaces.spherical_space().curvature(_points(0.5, 1.5, dim=3), be)
    assert np.abs(be.to_numpy(curv.riemann)).max() < 1e-12
    assert np.abs(be.to_numpy(curv.christoffel_2nd)).max() > 0.1


@pytest.mark.parametrize("backend", BACKENDS)
def test_numeric_christoffel_symbols_match_symbolic(backend):
    be = get_backend(backend)
    torus = surfaces.torus(2, 1)
    points = _points(-1, 1, count=3)
    numeric = be.to_numpy(torus.curvature(points, be).christoffel_2nd)
    exact = metric_to_christoffel_2nd(torus.metric(), torus.coords)
    values = np.array([[[[float(exact[k, i, j].subs(dict(zip(torus.coords, p)))) for j in range(2)]
                         for i in range(2)] for k in range(2)] for p in points])
    assert np.allclose(numeric, values, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_numeric_sectional_curvature(backend):
    be = get_backend(backend)
    product = Immersion("S^2 x R", 3, lambda p, o: o.stack(
        [o.cos(p[0]) * o.cos(p[1]), o.cos(p[0]) * o.sin(p[1]), o.sin(p[0]), p[2]]))
    points = _points(-1, 1, count=4, dim=3)
    curv = product.curvature(points, be)
    e = lambda *v: be.asarray(np.tile(v, (4, 1)))
    assert np.allclose(be.to_numpy(curv.sectional(e(1, 0, 0), e(0, 1, 0))), 1, atol=1e-12)
    assert np.allclose(be.to_numpy(curv.sectional(e(1, 0, 0), e(0, 0, 1))), 0, atol=1e-12)
    c2 = np.cos(points[:, 0]) ** 2
    assert np.allclose(be.to_numpy(curv.sectional(e(1, 0, 0), e(0, 1, 1))), c2 / (c2 + 1), atol=1e-12)


def test_numeric_backends_agree_on_a_graph_surface():
    u, v = sympy.symbols("u v", real=True)
    graph = surfaces.graph_surface(u ** 2 * v - v ** 3 / 3 + u * v, ambient=5)
    points = _points(-1, 1)
    K = [get_backend(b).to_numpy(graph.curvature(points, get_backend(b)).gaussian) for b in BACKENDS]
    fu, fv = 2 * points[:, 0] * points[:, 1] + points[:, 1], points[:, 0] ** 2 - points[:, 1] ** 2 + points[:, 0]
    fuu, fuv, fvv = 2 * points[:, 1], 2 * points[:, 0] + 1, -2 * points[:, 1]
    printed = (fuu * fvv - fuv ** 2) / (1 + fu ** 2 + fv ** 2) ** 2
    for values in K:
        assert np.allclose(values, printed, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_second_fundamental_form_of_a_sphere(backend):
    be = get_backend(backend)
    points = _points(-1, 1, count=4)
    curv = surfaces.sphere(3).curvature(points, be)
    normal_part = be.to_numpy(curv.second_fundamental_form)
    metric = be.to_numpy(curv.metric)
    # II_ij = -(g_ij / R) N for the unit normal N: |II_ij| = |g_ij| / 3
    assert np.allclose(np.linalg.norm(normal_part, axis=1), np.abs(metric) / 3, atol=1e-12)


def test_gauss_equation_kernel_detects_curvature_and_flatness():
    be = get_backend("numpy")
    jac = np.array([[[1.0, 0], [0, 1], [0, 0]]])
    flat = np.zeros((1, 3, 2, 2))
    bowl = flat.copy()
    bowl[0, 2] = np.eye(2)
    assert immersion_curvature_from_jet(jac, flat, be).gaussian[0] == 0
    assert immersion_curvature_from_jet(jac, bowl, be).gaussian[0] == pytest.approx(1)
    saddle = flat.copy()
    saddle[0, 2] = np.diag([1.0, -1.0])
    assert immersion_curvature_from_jet(jac, saddle, be).gaussian[0] == pytest.approx(-1)


@pytest.mark.parametrize("backend", ("torch", "jax"))
def test_autodiff_with_parameters_matches_one_call_per_parameter(backend):
    be = get_backend(backend)
    family = Immersion("scaled sphere", 2, lambda p, o, q: q[0] * surfaces.sphere(1).function(p, o),
                       parameters=1)
    points = _points(-1, 1, count=3)
    radii = np.array([[1.0], [2.0], [0.5]])
    K = be.to_numpy(family.curvature(points, be, radii).gaussian)
    assert np.allclose(K, 1 / radii[:, 0] ** 2, atol=1e-12)
    K_numpy = family.curvature(points, get_backend("numpy"), radii).gaussian
    assert np.allclose(K_numpy, K, atol=1e-12)


def test_numpy_has_no_autodiff_and_cuda_fails_clearly():
    with pytest.raises(BadInput, match="no autodiff"):
        autodiff_jet(lambda p: p, np.zeros((1, 2)), get_backend("numpy"))
    for name in ("torch", "jax"):
        with pytest.raises(BackendUnavailable):
            get_backend(name, "cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ("torch", "jax"))
def test_numeric_sphere_on_cuda(backend):
    be = get_backend(backend, "cuda")
    K = be.to_numpy(surfaces.sphere(2).curvature(_points(-1, 1, count=1000), be).gaussian)
    assert np.abs(K - 0.25).max() < 1e-10


# -- the operations the maps are written in ------------------------------------------------

def test_symbolic_ops_refuse_floats_unless_allowed():
    with pytest.raises(BadInput, match="exact constants"):
        SymbolicOps().const([0.5])
    assert SymbolicOps().const([Fraction(1, 2)])[0] == sympy.Rational(1, 2)
    assert SymbolicOps(allow_floats=True).const([0.5])[0] == sympy.Float(0.5)


@pytest.mark.parametrize("text", ["u+", "w**2", "besselj(0, u)", "[u, v]"])
def test_parse_expression_rejects_bad_input(text):
    with pytest.raises(BadInput):
        parse_expression(text, ("u", "v"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_evaluate_expression_on_each_backend(backend):
    expr = parse_expression("1/2 + u**2/8 + exp(v) * sin(u) - pi", ("u", "v"))
    value = evaluate_expression(expr, {"u": 0.3, "v": -0.2}, ArrayOps(get_backend(backend)))
    u, v = sympy.symbols("u v", real=True)
    assert float(value) == pytest.approx(float(expr.subs({u: 0.3, v: -0.2})), abs=1e-14)


def test_immersion_rejects_bad_points_and_metric_field_shapes():
    with pytest.raises(BadInput):
        surfaces.sphere(1).curvature(np.zeros(3), get_backend("numpy"))
    with pytest.raises(BadInput):
        surfaces.sphere(1).curvature(np.zeros((2, 3)), get_backend("numpy"))
    with pytest.raises(BadInput):
        coordinates(0)
    bad = MetricField("not symmetric", 2, lambda p, o: o.stack([o.stack([1 + 0 * p[0], p[0]]),
                                                                 o.stack([0 * p[0], 1 + 0 * p[0]])]))
    with pytest.raises(BadInput, match="symmetric"):
        gaussian_curvature(bad.metric(), bad.coords)

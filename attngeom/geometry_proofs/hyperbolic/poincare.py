"""The Poincare ball B_c^d = {x in R^d : c |x|^2 < 1} of curvature -c (RGT §4.4.1).

Formulas (RGT eqs 8-11, 21-22, 28; Ganea et al. 2018 for the log map and transport):

* metric (8): g_x = lambda_x^2 I_d, conformal factor lambda_x = 2 / (1 - c |x|^2);
* Mobius addition (9): x (+) y = ((1 + 2c<x,y> + c|y|^2) x + (1 - c|x|^2) y)
  / (1 + 2c<x,y> + c^2 |x|^2 |y|^2);
* distance (10): d_c(x, y) = 2/sqrt(c) artanh(sqrt(c) |(-x) (+) y|);
* exp map (11): exp_x(v) = x (+) tanh(sqrt(c) lambda_x |v| / 2) v / (sqrt(c) |v|), and its
  inverse log_x(y) = 2/(sqrt(c) lambda_x) artanh(sqrt(c) |u|) u / |u|, u = (-x) (+) y;
* gyration gyr[u, v] w = -(u (+) v) (+) (u (+) (v (+) w)) in Ungar's closed form;
* parallel transport along the geodesic x -> y: P(v) = lambda_x / lambda_y gyr[y, -x] v;
* projection (28): |x| <= 1/sqrt(c) - eps (eps = 1e-5 as printed);
* Riemannian gradient (22, 36): g^{-1} grad = grad / lambda_x^2; RSGD step (21):
  x <- exp_x(-lr g^{-1} grad).

Arrays: every function takes points and tangent vectors of ``shape=[..., d]`` (batched, the
last axis the coordinates, broadcasting as the array library does) and works unchanged on
NumPy, PyTorch and JAX arrays (float64 expected).  The array namespace is found from the
argument's type (:func:`namespace`, which asks :func:`attngeom.kernels.backend.get_backend` for the
module, so torch / jax are imported only there); constants stay Python floats.  This keeps
the signatures those of geoopt / geomstats (no backend argument) and lets torch / jax
autodiff pass through.

Bad input: ``c <= 0`` and points with ``c |x|^2 >= 1`` raise
:class:`attngeom.core.errors.BadInput` with one line (the check is skipped inside jax
transformations, where values are abstract).
"""

from __future__ import annotations

import math

import numpy as np

from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput

#: The clipping margin of RGT eq (28).
PAPER_EPS = 1e-5


class OperationCount:
    """Counts of the Riemannian primitives evaluated while active (one per point or pair of
    the batch): ``mobius`` (eq 9, inside distances, exp and log maps) and ``origin`` (exp_0 /
    log_0, which need no Mobius addition).  Deterministic, unlike timings (RGT Prop 9.3)."""

    active: "OperationCount | None" = None

    def __init__(self):
        self.mobius = 0
        self.origin = 0

    def __enter__(self):
        OperationCount.active = self
        return self

    def __exit__(self, *exc):
        OperationCount.active = None


def _count(kind: str, array) -> None:
    counter = OperationCount.active
    if counter is not None:
        setattr(counter, kind, getattr(counter, kind) + int(np.prod(array.shape[:-1])))


#: array type -> its module (the kernels ask at every step: a dictionary lookup then)
_NAMESPACES: dict[type, object] = {}


def namespace(x):
    """The array module of ``x``: numpy, torch or jax.numpy (for lists: numpy)."""
    kind = type(x)
    found = _NAMESPACES.get(kind)
    if found is None:
        module = kind.__module__
        if module.startswith("torch"):
            found = get_backend("torch").module
        elif module.startswith("jax"):
            found = get_backend("jax").module
        else:
            found = np
        _NAMESPACES[kind] = found
    return found


def _abstract(x) -> bool:
    """True inside jax transformations (values unknown, no Python bools)."""
    return "Tracer" in type(x).__name__


def check_curvature(c) -> float:
    """c as a float, or BadInput unless c > 0 (the ball B_c^d needs positive c)."""
    try:
        value = float(c)
    except (TypeError, ValueError):
        raise BadInput(f"the curvature parameter c must be a number; got {c!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise BadInput(f"the Poincare ball needs c > 0 (curvature -c); got c={c!r}")
    return value


def check_in_ball(x, c, name: str = "x", sq=None):
    """BadInput unless every point of ``x`` (shape=[..., d]) satisfies c |x|^2 < 1
    (``sq``: |x|^2, shape=[..., 1], when the caller has it)."""
    c = check_curvature(c)
    if _abstract(x):
        return x
    sq = _sqnorm(x) if sq is None else sq
    if 0 in tuple(sq.shape):
        return x
    top = sq.detach().max() if hasattr(sq, "detach") else sq.max()     # torch: outside autograd
    worst = float(top) * c              # one reduction and one read (NaN fails the test too)
    if not worst < 1.0:
        raise BadInput(f"{name} is not in the Poincare ball of c={c:g}: "
                       f"sqrt(c)|{name}| = {math.sqrt(worst):.6g} >= 1")
    return x


def _sqnorm(x):
    return (x * x).sum(-1, keepdims=True)


def checked_sqnorm(x, c, name: str = "x"):
    """|x|^2 (shape=[..., 1]) after :func:`check_in_ball` on it: one reduction for both
    (the check is looked up at each call, so that :mod:`.graphs` can defer it)."""
    sq = _sqnorm(x)
    check_in_ball(x, c, name, sq=sq)
    return sq


def _dot(x, y):
    return (x * y).sum(-1, keepdims=True)


def _norm(x):
    return namespace(x).sqrt(_sqnorm(x))


def _safe(norm):
    """``norm`` with zeros replaced by 1 (the callers take the limit there)."""
    return namespace(norm).where(norm > 0, norm, 1.0)


def conformal_factor(x, c, keepdims: bool = False):
    """lambda_x = 2 / (1 - c |x|^2), RGT eq (8) / (11); shape=[...] (or [..., 1])."""
    c = check_curvature(c)
    check_in_ball(x, c)
    lam = 2.0 / (1.0 - c * _sqnorm(x))
    return lam if keepdims else lam[..., 0]


def metric_matrix(x, c):
    """g_x = lambda_x^2 I_d, RGT eq (8); shape=[..., d, d]."""
    xp = namespace(x)
    lam = conformal_factor(x, c)
    eye = xp.eye(x.shape[-1], dtype=x.dtype)
    return (lam ** 2)[..., None, None] * eye


def metric_field(phi, ops, c):
    """g = (2 / (1 - c|phi|^2))^2 I_d, RGT eq (8), written once for
    :mod:`attngeom.geometry_proofs.ops` (exact with SymbolicOps, on a backend with ArrayOps);
    phi shape=[d] -> shape=[d, d]."""
    return (2 / (1 - c * (phi * phi).sum())) ** 2 * ops.const(np.eye(phi.shape[-1], dtype=int))


def symbolic_metric(coords, c):
    """Metric (8) as a SymPy matrix in ``coords`` and the symbol (or number) ``c``."""
    import sympy
    from attngeom.geometry_proofs.ops import SymbolicOps
    return sympy.Matrix(metric_field(np.array(coords, dtype=object), SymbolicOps(), c))


def mobius_add(x, y, c):
    """x (+)_c y, RGT eq (9); shape=[..., d]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    check_in_ball(y, c, "y")
    return _mobius_add(x, y, c)


def _mobius_add(x, y, c):
    """Eq (9) with no checks: also on NumPy object arrays of exact field elements."""
    xy, x2, y2 = _dot(x, y), _sqnorm(x), _sqnorm(y)
    num = (1 + 2 * c * xy + c * y2) * x + (1 - c * x2) * y
    out = num / (1 + 2 * c * xy + c * c * x2 * y2)
    _count("mobius", out)
    return out


def mobius_neg(x, c=1.0):
    """The gyrogroup inverse (-)x = -x (RGT A.2, 'Inverse'); shape=[..., d]."""
    check_in_ball(x, c)
    return -x


def gyration(u, v, w, c):
    """gyr[u, v] w = -(u (+) v) (+) (u (+) (v (+) w)) in Ungar's closed form
    w + 2 (A u + B v) / D with A = -c^2 <u,w>|v|^2 + c<v,w> + 2c^2 <u,v><v,w>,
    B = -c^2 <v,w>|u|^2 - c<u,w>, D = 1 + 2c<u,v> + c^2 |u|^2 |v|^2; shape=[..., d]
    (``w`` any vector: gyrations are linear isometries of R^d)."""
    c = check_curvature(c)
    check_in_ball(u, c, "u")
    check_in_ball(v, c, "v")
    return _gyration(u, v, w, c)


def _gyration(u, v, w, c):
    uw, vw, uv, u2, v2 = _dot(u, w), _dot(v, w), _dot(u, v), _sqnorm(u), _sqnorm(v)
    a = -c * c * uw * v2 + c * vw + 2 * c * c * uv * vw
    b = -c * c * vw * u2 - c * uw
    d = 1 + 2 * c * uv + c * c * u2 * v2
    return w + 2 * (a * u + b * v) / d


def distance(x, y, c):
    """d_c(x, y) = 2/sqrt(c) artanh(sqrt(c) |(-x) (+) y|), RGT eq (10); shape=[...]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    check_in_ball(y, c, "y")
    xp, sc = namespace(x), math.sqrt(c)
    return (2 / sc) * xp.arctanh(xp.clip(sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]


def exp_map(x, v, c):
    """exp_x(v) = x (+) tanh(sqrt(c) lambda_x |v| / 2) v / (sqrt(c) |v|), RGT eq (11);
    x, v shape=[..., d] -> shape=[..., d]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    xp, sc = namespace(v), math.sqrt(c)
    lam = 2.0 / (1.0 - c * _sqnorm(x))
    n = _norm(v)
    safe = _safe(n)
    scale = xp.where(n > 0, xp.tanh(sc * lam * safe / 2) / (sc * safe), lam / 2)
    return _mobius_add(x, scale * v, c)


def log_map(x, y, c):
    """log_x(y) = 2/(sqrt(c) lambda_x) artanh(sqrt(c)|u|) u/|u|, u = (-x) (+) y: the inverse
    of eq (11); shape=[..., d]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    check_in_ball(y, c, "y")
    xp, sc = namespace(x), math.sqrt(c)
    lam = 2.0 / (1.0 - c * _sqnorm(x))
    u = _mobius_add(-x, y, c)
    n = _norm(u)
    safe = _safe(n)
    scale = xp.where(n > 0, xp.arctanh(xp.clip(sc * safe, 0, 1 - 1e-16)) / (sc * safe), 1.0)
    return (2 / lam) * scale * u


def exp_map0(v, c):
    """exp_0(v) = tanh(sqrt(c)|v|) v / (sqrt(c)|v|) (eq 11 at x = 0, eq 13); shape=[..., d]."""
    c = check_curvature(c)
    _count("origin", v)
    scaled = _scaled_norm(v, c)
    return namespace(v).tanh(scaled) / scaled * v


def _scaled_norm(v, c: float):
    """sqrt(c)|v| + 1e-300, shape=[..., 1]: f(s) / s at it is f's limit at 0 for the maps
    of the origin (tanh(s) / s, artanh(s) / s -> 1) and f(s) / s to the last bit for
    |v| > 1e-280, with no branch."""
    return namespace(v).sqrt(_sqnorm(v) * c) + 1e-300


def log_map0(y, c, sq=None):
    """log_0(y) = artanh(sqrt(c)|y|) y / (sqrt(c)|y|) (eq 18's log_o); shape=[..., d]
    (``sq``: |y|^2, shape=[..., 1], from a caller that has checked y)."""
    c = check_curvature(c)
    xp = namespace(y)
    _count("origin", y)
    sq = checked_sqnorm(y, c, "y") if sq is None else sq
    scaled = xp.sqrt(sq * c) + 1e-300     # _scaled_norm's
    return xp.arctanh(xp.clip(scaled, 0, 1 - 1e-16)) / scaled * y


def parallel_transport(x, y, v, c):
    """Levi-Civita transport of v in T_x along the geodesic to y (RGT eq 7):
    P_{x->y}(v) = lambda_x / lambda_y gyr[y, -x] v; shape=[..., d]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    check_in_ball(y, c, "y")
    ratio = (1.0 - c * _sqnorm(y)) / (1.0 - c * _sqnorm(x))
    return ratio * gyration(y, -x, v, c)


def metric_norm(x, v, c):
    """|v|_{g_x} = lambda_x |v|, the norm of eq (8) on T_x; shape=[...]."""
    return conformal_factor(x, c) * _norm(v)[..., 0]


def project(x, c, eps: float = PAPER_EPS):
    """Clip to |x| <= 1/sqrt(c) - eps (RGT eq 28); points inside are unchanged;
    shape=[..., d].  Any finite x is accepted (that is the point of clipping)."""
    c = check_curvature(c)
    radius = 1 / math.sqrt(c) - eps
    if not radius > 0:
        raise BadInput(f"eq (28) clipping needs eps < 1/sqrt(c); got eps={eps:g}, c={c:g}")
    xp = namespace(x)
    n = _norm(x)
    return xp.where(n > radius, x * (radius / _safe(n)), x)


def riemannian_gradient(x, euclidean_grad, c):
    """g^{-1} grad = (1 - c|x|^2)^2 / 4 grad, RGT eqs (22) / (36); shape=[..., d]."""
    c = check_curvature(c)
    check_in_ball(x, c)
    return ((1.0 - c * _sqnorm(x)) ** 2 / 4) * euclidean_grad


def rsgd_step(x, euclidean_grad, lr, c, eps: float = PAPER_EPS):
    """One Riemannian SGD step x <- exp_x(-lr g^{-1} grad) (RGT eq 21), then the clipping of
    eq (28) so rounding cannot leave the ball; shape=[..., d]."""
    return project(exp_map(x, -lr * riemannian_gradient(x, euclidean_grad, c), c), c, eps)


def random_points(sampler, shape, c, radius: float):
    """Seeded points of B_c^d at geodesic distance <= ``radius`` from the origin (direction
    uniform, distance uniform in [0, radius]); shape=[*shape] as NumPy float64."""
    c = check_curvature(c)
    gauss = sampler.floats(shape)
    direction = gauss / np.linalg.norm(gauss, axis=-1, keepdims=True)
    rho = np.abs(sampler.floats(tuple(shape[:-1]) + (1,)))
    rho = radius * (1 - np.exp(-rho))  # in [0, radius)
    return np.tanh(math.sqrt(c) * rho / 2) / math.sqrt(c) * direction

"""Matrix-product (Gram) forms of the Poincare-ball attention kernels (RGT eqs 9-11, 14-16,
Algorithm 1, Algorithm 3, §8.2), as an expert would write them for Prop 9.3 / Table 1.

Every pairwise quantity of the ball is a function of one number per pair,
t_ij = c|x_i - y_j|^2 / ((1 - c|x_i|^2)(1 - c|y_j|^2)) = sinh^2(sqrt(c) d_c(x_i, y_j) / 2)
(RGT eq 10: cosh(sqrt(c) d) = 1 + 2t), and t is ONE matrix product of factors augmented by
rank-one columns, [-2 a_i x_i, a_i |x_i|^2, a_i] . [beta_j y_j, beta_j, beta_j |y_j|^2] with
a_i = c / (1 - c|x_i|^2), beta_j = 1 / (1 - c|y_j|^2) (:func:`_ball_right`): no pass over an
[n, m] array to assemble it.  From t:

* distance (10) and eq (14)'s scores: sqrt(c) d = arcosh(1 + 2t), one root and one log;
* Mobius addition (9), w_ij = (-x_i) (+) y_j = -a_ij x_i + b_ij y_j, and the log map (inverse
  of eq 11), log_{x_i}(y_j) = -A_ij x_i + B_ij y_j: with phi = asinh(sqrt t) / sqrt(t (1 + t))
  (= artanh(r) / r / (1 + t), r = sqrt(c)|w|), B_ij = (1 - c|x_i|^2) beta_j phi_ij and
  A_ij = (1 - c|x_i|^2)(1 + t_ij) phi_ij + c|y_j|^2 B_ij (:func:`log_coefficients`);
* one Algorithm 1 step for all rows, u_i = sum_j alpha_ij log_{p_i}(v_j) and the step-size
  bound L_i: one product (alpha phi) @ [beta v, beta, beta |v|^2, 1] and O(n d) work
  (:func:`_step_terms`), no [n, m, d] array and no per-pair A, B.

The Lorentz model (issue 26): the distance is one Minkowski product, arcosh(-c <x_i, y_j>_L)
/ sqrt(c) with <x, y>_L a plain matrix product once the sign of a coordinate is folded into
one factor; the Einstein midpoint is the weighted sum of the hyperboloid points projected
back onto L_c^d.

On the CPU (issue 26's timings): arcosh and artanh go through ``log`` (NumPy's arctanh and
arccosh, and torch's arccosh, cost 3-6x an exp), log1p through Goldberg's form with ``log``
(:func:`_asinh_ratio_`), torch's square roots through its correctly rounded ``rsqrt``
(:func:`_root_`); the softmax numerators exp(S - max S) are never normalized over [n, m]:
the row sums come out of the matrix product that uses them and divide O(n d) results; the
passes over [n, m] arrays run in place (NumPy; torch outside autograd, which keeps its
differentiable out-of-place form) and the scratch arrays of one call are reused
(:func:`_scratch`).

The kernels here give the same numbers as the element-wise ones of
:mod:`attngeom.geometry_proofs.hyperbolic.attention` (to 1e-12 in float64, ``tests/test_hyperbolic.py``)
with O(n m d) work in matrix products, O(n m) scalar work per pair (a fixed number of
transcendental functions of three numbers) and O(n d) vector work per query (exp maps).
:class:`GramCount` counts the three while active (deterministic, unlike timings).

Shapes as in :mod:`.attention`; NumPy, PyTorch or JAX arrays (the namespace follows the
argument, :func:`attngeom.geometry_proofs.hyperbolic.poincare.namespace`, i.e. the
:mod:`attngeom.kernels.backend` switch).
"""

from __future__ import annotations

import math

import numpy as np

from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.geometry_proofs.hyperbolic.poincare import _sqnorm, check_curvature, namespace
from attngeom.kernels import torch_compile


class GramCount:
    """Work counted while active: ``gemm`` multiply-adds of matrix products, ``pair`` scalar
    entries of per-pair coefficient arrays ([..., n, m], a fixed number of flops each) and
    ``vector`` entries of per-token vector maps ([..., n, d]).  Riemannian primitives over
    d-vectors (Mobius additions inside exp / log maps) are counted by
    :class:`attngeom.geometry_proofs.hyperbolic.poincare.OperationCount` as usual."""

    active: "GramCount | None" = None

    def __init__(self):
        self.gemm = 0
        self.pair = 0
        self.vector = 0

    def __enter__(self):
        GramCount.active = self
        return self

    def __exit__(self, *exc):
        GramCount.active = None

    def as_dict(self) -> dict[str, int]:
        return {"gemm": self.gemm, "pair": self.pair, "vector": self.vector}


def _size(shape) -> int:
    out = 1
    for s in shape:
        out *= int(s)
    return out


def _add(kind: str, amount: int) -> None:
    counter = GramCount.active
    if counter is not None:
        setattr(counter, kind, getattr(counter, kind) + int(amount))


def _tally(kind: str, shape, times: int = 1) -> None:
    """``times`` entries of an array of ``shape`` added to ``kind`` while a
    :class:`GramCount` is active (nothing computed otherwise: these kernels run hundreds of
    small steps at N = 128)."""
    if GramCount.active is not None:
        _add(kind, times * _size(shape))


def matmul(a, b, extra_inner: int = 0, extra_cols: int = 0, out=None):
    """a @ b (``a`` shape=[..., n, k], ``b`` [..., k, m]), its multiply-adds counted: those
    of the last ``extra_inner`` of the k terms and of the last ``extra_cols`` of the m
    output columns (augmented factors: rank-one terms and row sums, each standing for a
    pass over an [..., n, k] or [..., n, m] array) as pair work, the others as gemm.
    ``out``: an array of the result's shape to write it into (NumPy, torch), or None."""
    out = a @ b if out is None else namespace(a).matmul(a, b, out=out)
    if GramCount.active is not None:
        rows, k, m = _size(out.shape) // out.shape[-1], a.shape[-1], out.shape[-1]
        _add("gemm", rows * (k - extra_inner) * (m - extra_cols))
        _add("pair", rows * (k * m - (k - extra_inner) * (m - extra_cols)))
    return out


def _t(x):
    return x.swapaxes(-1, -2) if namespace(x).__name__ != "torch" else x.transpose(-1, -2)


def _row(x):
    """|x_i|^2 as a column, shape=[..., n, 1]."""
    return _sqnorm(x)


# --------------------------------------------------------------------------------------
# In-place element-wise work on [..., n, m] pair arrays (NumPy; torch outside autograd):
# each step is one pass over the array, with no temporary
# --------------------------------------------------------------------------------------

def _owned(x) -> bool:
    """True where a pair array this module computed may be overwritten: NumPy arrays and
    torch tensors that autograd does not track (jax arrays are immutable; under jit XLA
    fuses the passes itself)."""
    if isinstance(x, np.ndarray):
        return True
    xp = namespace(x)
    return xp.__name__ == "torch" and not (x.requires_grad and xp.is_grad_enabled())


_IN_PLACE = {name: name + "_" for name in
             ("add", "subtract", "multiply", "divide", "sqrt", "log", "log1p", "exp")}


def _apply(name: str, x, *args):
    """xp.<name>(x, *args) (add, subtract, multiply, divide, sqrt, log, log1p, exp), written
    into ``x`` where :func:`_owned` (torch: the in-place method ``x.<name>_``); one pass,
    counted as pair work."""
    if GramCount.active is not None:
        _tally("pair", x.shape)
    if isinstance(x, np.ndarray):
        return getattr(np, name)(x, *args, out=x)
    if not _owned(x):
        return getattr(namespace(x), name)(x, *args)
    return getattr(x, _IN_PLACE[name])(*args)


def _clip_below(x, low: float):
    """max(x, low), in place where :func:`_owned`."""
    _tally("pair", x.shape)
    if isinstance(x, np.ndarray):
        return np.maximum(x, low, out=x)
    if _owned(x):
        return x.clamp_(min=low)
    return x.clamp(min=low) if namespace(x).__name__ == "torch" else namespace(x).maximum(x, low)


def _row_extreme(x, largest: bool):
    """max_j (or min_j) x_ij as a column, shape=[..., n, 1] (one read pass)."""
    if namespace(x).__name__ == "torch":
        return x.amax(-1, keepdim=True) if largest else x.amin(-1, keepdim=True)
    return x.max(-1, keepdims=True) if largest else x.min(-1, keepdims=True)


# --------------------------------------------------------------------------------------
# The pairwise quantity of the ball as one matrix product
# --------------------------------------------------------------------------------------

def _ball_left(x, c, check: str | None = None, sq=None):
    """(L, |x_i|^2, a_i): the row factor L = [-4 a_i x_i, 2 a_i |x_i|^2, 2 a_i] of
    :func:`_ball_right`, a_i = c / (1 - c|x_i|^2) = 1 / (1/c - |x_i|^2) (= c lambda_{x_i} / 2);
    shape=[..., n, d + 2] and [..., n, 1] twice.  ``check``: the name under which points
    outside the ball are refused (:func:`_checked_sqnorm`); ``sq``: |x_i|^2 when the caller
    has it (then no check)."""
    if sq is None:
        sq = _checked_sqnorm(x, c, check)
    a = _recip(1.0 / c - sq)
    two_a = a + a
    return _cat([(-2.0 * two_a) * x, two_a * sq, two_a], -1), sq, a


def _checked_sqnorm(x, c, check: str | None):
    """|x_i|^2 (shape=[..., n, 1]), the points checked to lie in the ball under the name
    ``check`` unless None (:func:`.poincare.check_in_ball`, the hook that
    :mod:`.graphs` defers inside a CUDA-graph capture; one reduction for both)."""
    return _row(x) if check is None else poincare.checked_sqnorm(x, c, check)


def _ball_right(y, c, check: str | None = None, sq=None):
    """[beta_j y_j, beta_j, beta_j |y_j|^2, 1] with beta_j = 1 / (1 - c|y_j|^2), shape=
    [..., m, d + 3]: with :func:`_ball_left` and the last column left out, (L R^T)_ij =
    2 t_ij, where t_ij = c|x_i - y_j|^2 / ((1 - c|x_i|^2)(1 - c|y_j|^2)) =
    sinh^2(sqrt(c) d_c(x_i, y_j) / 2) (RGT eq 10: cosh(sqrt(c) d) = 1 + 2t), one matrix
    product for all pairs (its cancellation for close pairs is the Gram matrix's);
    ``check`` and ``sq`` as in :func:`_ball_left`."""
    if sq is None:
        sq = _checked_sqnorm(y, c, check)
    beta = _recip(1.0 - c * sq)
    _tally("vector", y.shape, 4)
    return _cat([beta * y, beta, beta * sq, namespace(y).ones_like(sq)], -1)


#: the floor of tau = 2t = cosh(sqrt(c) d) - 1: above it tau + sqrt(tau (tau + 2)) > 2^-52,
#: so 1 + that > 1 (:func:`_asinh_ratio_`); d moves by < 1e-15 there (coincident points).
_TAU_FLOOR = 1e-31


def _scratch(work, key: str, like):
    """An array of ``like``'s shape and dtype kept in ``work`` (a dict of scratch arrays of
    one call, or None) under ``key``, to be overwritten, or None (a new array then).  New
    [..., n, m] arrays cost page faults (25-35% of the CPU time of these kernels in NumPy and
    torch here: the allocator hands large blocks back to the system), so the passes of
    Algorithm 1's steps reuse the arrays of the first."""
    if work is None or not _owned(like):
        return None
    buf = work.get(key)
    if buf is None or buf.shape != like.shape or buf.dtype != like.dtype:
        buf = work[key] = namespace(like).empty_like(like)
    return buf


def _into(out, name: str, *args):
    """xp.<name>(*args) (the namespace of ``args[0]``) written into ``out`` where
    :func:`_owned` (None, or a jax array: a new array); one pass."""
    _tally("pair", args[0].shape)
    if out is None or not _owned(out):
        return getattr(namespace(args[0]), name)(*args)
    if isinstance(out, np.ndarray):
        return getattr(np, name)(*args, out=out)
    return getattr(namespace(out), name)(*args, out=out)


def _root_(w, work=None):
    """(sqrt(w), 1 / sqrt(w) or None) for w > 0, the root in w's place.  Torch's float64
    sqrt is unvectorized on the CPU (3.6 ns an entry on this machine against 1.2 for its
    rsqrt, which is correctly rounded), so there w rsqrt(w) (error < 2 ulp) and the
    reciprocal are kept; NumPy's and JAX's sqrt are fast."""
    if not isinstance(w, np.ndarray) and _owned(w):
        inv = _into(_scratch(work, "inv", w), "rsqrt", w)
        return _apply("multiply", w, inv), inv
    return _apply("sqrt", w), None


def _acosh_root(tau, work=None):
    """(tau + y, y, 1 / y or None) with y = sqrt(tau (tau + 2)) = sinh(arcosh(1 + tau)),
    tau floored at :data:`_TAU_FLOOR`; tau + y in tau's place, so that
    arcosh(1 + tau) = log(1 + tau + y)."""
    tau = _clip_below(tau, _TAU_FLOOR)
    y, inv = _root_(_apply("multiply", _into(_scratch(work, "y", tau), "add", tau, 2.0), tau), work)
    return _apply("add", tau, y), y, inv


def _arcosh_(tau, work=None):
    """arcosh(1 + tau) = log(1 + tau + sqrt(tau (tau + 2))) for tau >= 0, in tau's place:
    one root and one log per entry (NumPy's and torch's arccosh cost 3-6x an exp); absolute
    error a few ulp, enough for scores -d^2 (their absolute error is what the softmax sees)."""
    return _apply("log", _apply("add", _acosh_root(tau, work)[0], 1.0))


def _asinh_ratio_(tau, work=None):
    """phi = asinh(sqrt(t)) / sqrt(t (1 + t)) for tau = 2t >= 0 (1 at t = 0), tau
    overwritten: with y = sqrt(tau (tau + 2)) and x = tau + y, 2 asinh(sqrt t) =
    arcosh(1 + tau) = log1p(x) and phi = log1p(x) / y.  log1p(x) = log(u) x / (u - 1),
    u = fl(1 + x) (Goldberg 1991, "What every computer scientist should know about
    floating-point arithmetic", Thm 4: a few ulp; u > 1 above the floor of tau) keeps phi to
    1e-16 relative for close pairs with one log and cheap passes (NumPy's log1p costs 2x its
    log on this machine, torch's 1.7x), in the arrays of tau and y (and torch's 1 / y):
    u - 1 is exact for 1 <= u < 2^53, so (u - 1) + 1 gives u back."""
    x, y, inv = _acosh_root(tau, work)
    if inv is None:       # two arrays: x / y in y's, then u, u - 1 (exact) and u again in x's
        ratio = _into(y, "divide", x, y)
        d = _apply("subtract", _apply("add", x, 1.0), 1.0)
        ratio = _apply("divide", ratio, d)
        return _apply("multiply", ratio, _apply("log", _apply("add", d, 1.0)))
    u = _into(y, "add", x, 1.0)   # torch: y's array takes u, 1 / y's takes u - 1
    x = _apply("multiply", x, inv)
    d = _into(inv, "subtract", u, 1.0)
    return _apply("multiply", _apply("divide", x, d), _apply("log", u))


def _tau(x, right, c):
    """tau_ij = 2 t_ij = cosh(sqrt(c) d_c(x_i, y_j)) - 1 (:func:`_ball_right`, ``right`` its
    factor of the points y_j) by one matrix product; shape=[..., n, m]."""
    return _tau_terms(x, right, c)[0]


def _tau_terms(x, right, c, out=None, check: str | None = None, sq=None):
    """(tau, |x_i|^2, a_i) of :func:`_tau` and :func:`_ball_left` (tau into ``out`` when
    given, an array of its shape; ``check`` and ``sq`` as in :func:`_ball_left`)."""
    left, sq, a = _ball_left(x, c, check, sq)
    return matmul(left, _t(right[..., :-1]), extra_inner=2, out=out), sq, a


def distance(x, y, c):
    """All-pairs d_c(x_i, y_j) = 2/sqrt(c) artanh(sqrt(c)|(-x_i) (+) y_j|) = arcosh(1 + 2t_ij)
    / sqrt(c), eq (10), by one matrix product (:func:`_ball_right`; absolute error a few
    ulp beyond the Gram matrix's cancellation for close pairs); shape=[..., n, m]."""
    return _apply("multiply", _arcosh_(_checked_tau(x, y, c)[0]), 1 / math.sqrt(check_curvature(c)))


def geodesic_scores(q, k, c):
    """S_ij = -d_c(q_i, k_j)^2 c / sqrt(d_k), eq (14), by one matrix product:
    cosh(sqrt(c) d) = 1 + 2c |q_i - k_j|^2 / ((1 - c|q_i|^2)(1 - c|k_j|^2)) (:func:`_ball_right`),
    so S_ij = -arcosh(.)^2 / sqrt(d_k) (one sqrt and one log per pair; the Gram matrix's
    cancellation for close pairs is harmless here: d^2 ~ 2 (cosh - 1) keeps its absolute
    error); shape=[..., n, m]."""
    ell = _arcosh_(_checked_tau(q, k, c)[0])
    return _apply("multiply", _apply("multiply", ell, ell), -1 / math.sqrt(q.shape[-1]))


def _checked_tau(x, y, c):
    """(tau, |x_i|^2): tau of :func:`_tau` for the points x and y, both checked to lie in
    the ball."""
    c = check_curvature(c)
    tau, sq, _ = _tau_terms(x, _ball_right(y, c, "y"), c, check="x")
    return tau, sq


def _weights_(ell, dk: int):
    """exp(S_ij - max_j S_ij) for S = -ell^2 / sqrt(d_k) (ell = sqrt(c) d >= 0), in ell's
    place: eq (15)'s weights up to a factor per row (max_j S_ij = -(min_j ell_ij)^2)."""
    low = _row_extreme(ell, largest=False)
    scale = 1 / math.sqrt(dk)
    if _owned(ell) and namespace(ell).__name__ == "torch":     # one pass for (low^2 - ell^2) / sqrt(d_k)
        _tally("pair", ell.shape, 4)       # counted as the four passes it stands for
        return namespace(ell).addcmul(low * low * scale, ell, ell, value=-scale, out=ell).exp_()
    sq = _apply("multiply", ell, ell)
    return _apply("exp", _apply("multiply", _apply("subtract", sq, low * low), -scale))


def _geodesic_weights(q, k, c, work=None):
    """Eq (14)-(15)'s weights up to a factor per row (:func:`_weights_`; ``work`` as in
    :func:`frechet_steps`); shape=[..., n, m]."""
    return _weights_(_arcosh_(_checked_tau(q, k, c)[0], work), q.shape[-1])


def log_coefficients(x, y, c):
    """(A, B), shape=[..., n, m] each, with log_{x_i}(y_j) = -A_ij x_i + B_ij y_j: with
    phi_ij = :func:`_asinh_ratio_` (t_ij) and beta_j = 1 / (1 - c|y_j|^2),
    B_ij = (1 - c|x_i|^2) beta_j phi_ij and A_ij = (1 - c|x_i|^2)(1 + t_ij) phi_ij + c|y_j|^2 B_ij
    (RGT eq 9's Mobius addition w = -a x + b y and eq 11's log map, rewritten in t)."""
    right = _ball_right(y, c)
    tau = _tau(x, right, c)
    phi = _asinh_ratio_(tau * 1.0) * (1.0 - c * _row(x))
    big_b = phi * _t(right[..., -3:-2])
    big_a = (tau * 0.5 + 1.0) * phi + big_b * (c * _t(_row(y)))
    _tally("pair", tau.shape, 7)
    return big_a, big_b


def _step_terms(p, right, weights, c, inv_total=None, work=None, sq=None):
    """(u, L, |p_i|^2, a_i) of Algorithm 1 at base points p (shape=[..., n, d]) for the
    points y_j with factor ``right`` (:func:`_ball_right`) and weights w_ij (times
    ``inv_total`` per row when given): u_i = sum_j w_ij log_{p_i}(y_j), L_i = sum_j w_ij
    s_ij coth(s_ij) (s = sqrt(c) d), a_i = c / (1 - c|p_i|^2).  With phi of
    :func:`log_coefficients` and (M_i, Sb_i, Sby_i, S_i) = ((w phi) @ right)_i (one matrix
    product; M_i = sum_j w phi beta_j y_j), sum_j w phi t = a_i (|p_i|^2 Sb_i + Sby_i
    - 2 <p_i, M_i>) =: T_i, u_i = (c / a_i)(M_i - (S_i + T_i + c Sby_i) p_i) and
    L_i = S_i + 2 T_i (s coth s = phi (1 + 2t)); shape=[..., n, d] and [..., n, 1]
    (``sq``: |p_i|^2 when the caller has it)."""
    out = _scratch(work, "tau", weights) if _tau_shaped(weights, p, right) else None
    tau, sq, a = _tau_terms(p, right, c, out, sq=sq)
    sums = matmul(_apply("multiply", _asinh_ratio_(tau, work), weights), right, extra_cols=3)
    if inv_total is not None:
        sums = sums * inv_total
    d = p.shape[-1]
    mean, sb, sby, total = sums[..., :d], sums[..., d:d + 1], sums[..., d + 1:d + 2], sums[..., d + 2:]
    t_sum = a * _axpy(_fma(sby, sq, sb), (p * mean).sum(-1, keepdims=True), -2.0)
    u = _fma(mean, _axpy(total, sby, c) + t_sum, p, -1.0) * (c / a)
    _tally("vector", p.shape, 6)
    return u, _axpy(total, t_sum, 2.0), sq, a


def _tau_shaped(weights, p, right) -> bool:
    """True when ``weights`` has the shape of tau(p, right) (so that its scratch array can
    take tau): the common case, one batch shape for all three, without NumPy's shape
    broadcasting (6 us a call)."""
    batch = tuple(weights.shape[:-2])
    if tuple(weights.shape[-2:]) != (p.shape[-2], right.shape[-2]):
        return False
    if batch == tuple(p.shape[:-2]) == tuple(right.shape[:-2]):
        return True
    return batch == np.broadcast_shapes(p.shape[:-2], right.shape[:-2])


def _exp_step(p, u, eta, sq, a, c):
    """exp_{p_i}(eta_i u_i), RGT eq (11), from the row scalars of :func:`_step_terms`
    (|p_i|^2 and a_i = c lambda_{p_i} / 2): w_i = h_i u_i with x_i = a_i eta_i |u_i| / sqrt(c)
    and h_i = tanh(x_i) / x_i a_i eta_i / c (tanh(x) / x at x + 1e-300: 1 at x = 0), then
    p_i (+) w_i by eq (9) from <p_i, u_i> and |u_i|^2 -- the same map as
    :func:`.poincare.exp_map` in a third of its array operations: with lead_i =
    1 + 2c <p_i, w_i> and D_i = lead_i + c^2 |p_i|^2 |w_i|^2, the new point is
    ((lead_i + c|w_i|^2) / D_i) p_i + (eta_i tanh(x_i) / x_i / D_i) u_i (two products by row
    scalars; h_i c / a_i = eta_i tanh(x_i) / x_i); shape=[..., n, d]."""
    xp = namespace(p)
    norm2, pu = _row(u), (p * u).sum(-1, keepdims=True)
    if isinstance(eta, (int, float)):         # a number: folded into the constants below
        g, scale = a, float(eta)
    else:
        g, scale = a * eta, 1.0
    x = _apply("add", xp.sqrt(norm2) * g * (scale / math.sqrt(c)), 1e-300)
    ratio = xp.tanh(x) / x
    h = ratio * g * (scale / c)
    w2 = h * h * norm2
    lead = h * pu * (2.0 * c) + 1.0
    inv = _recip(_fma(lead, sq, w2, c * c))
    new = _fma(_axpy(lead, w2, c) * inv * p, ratio * eta * inv, u)
    poincare._count("mobius", new)
    _tally("vector", p.shape, 5)
    return new


def _fma(x, y, z, value: float = 1.0):
    """x + value y z (torch: one ``addcmul``; the others as written)."""
    xp = namespace(y)
    if xp.__name__ == "torch":
        return xp.addcmul(x, y, z, value=value)
    return x + value * y * z if value != 1.0 else x + y * z


def _recip(x):
    """1 / x (torch: one ``reciprocal``, where ``1.0 / x`` takes two operators)."""
    return namespace(x).reciprocal(x)


def _axpy(x, y, alpha: float):
    """x + alpha y (torch: one ``add``; the others as written)."""
    xp = namespace(x)
    if xp.__name__ == "torch":
        return xp.add(x, y, alpha=alpha)
    return x + alpha * y


def tangent_mean(p, points, weights, c):
    """u_i = sum_j alpha_ij log_{p_i}(v_j) (Algorithm 1, lines 3-4) for a base point per row:
    p shape=[..., n, d], points [..., m, d], weights [..., n, m] -> shape=[..., n, d]."""
    return _step_terms(p, _ball_right(points, c), weights, c)[0]


def hessian_bound(p, points, weights, c):
    """L_i = sum_j alpha_ij s_ij coth(s_ij), s_ij = sqrt(c) d_c(p_i, v_j), as
    :func:`attngeom.geometry_proofs.hyperbolic.frechet.hessian_bound` (an upper bound on the
    eigenvalues of Hess(F_i/2) at p_i), from the Gram matrix: with t = sinh^2(s / 2),
    s coth s = phi(t) (1 + 2t) (:func:`_step_terms`); shape=[..., n, 1]."""
    return _step_terms(p, _ball_right(points, c), weights, c)[1]


#: ``eta`` of :func:`frechet_steps` that selects the step-size rule.
STEP_RULE = "bound"


def frechet_steps(points, weights, c, init, steps: int, eta: float | str = 1.0,
                  tol: float | None = None, max_steps: int = 200, inv_total=None, work=None,
                  right=None):
    """``steps`` iterations of Algorithm 1, p_i <- exp_{p_i}(eta u_i), from ``init``
    (shape=[..., n, d]), values ``points`` [..., m, d] shared by the n rows, weights
    [..., n, m] (``inv_total``, shape=[..., n, 1]: a factor per row applied to u and L, so
    that unnormalized softmax numerators can be passed with 1 / their row sums; ``work``:
    the scratch arrays of :func:`_scratch`, one dict per call; ``right``: the points'
    :func:`_ball_right` factor when the caller has it); shape=[..., n, d].  With ``tol``: until the largest residual
    |u_i|_{g_{p_i}} = lambda_{p_i} |u_i| over the batch is <= ``tol`` (at most ``max_steps``
    steps; the stopping rule of the element-wise :func:`.frechet.frechet_mean`, one host
    read per step, so not under ``jax.jit``).

    ``eta="bound"`` (:data:`STEP_RULE`) takes the step eta_i = 2 / (1 + L_i) per row, L_i
    the comparison bound :func:`hessian_bound` at the current iterate (from the same Gram
    pass as u_i: no extra matrix product).  The eigenvalues of Hess(F_i/2) lie in
    [1, L] on H^d(-c), so this is the best-rate step for that interval and satisfies
    Algorithm 1's convergence condition eta < 2 / lambda_max (``frechet-algorithm-1``) at
    every spread, where the printed eta = 1 fails once lambda_max >= 2.

    A row whose step would leave the ball (eta = 1 on values near the boundary: tanh
    saturates and the Mobius addition rounds outside) keeps its last iterate; the other rows
    go on (the element-wise :func:`.frechet.frechet_mean` stops the whole batch there)."""
    p, sq = init, None
    right = _ball_right(points, c) if right is None else right
    work = {} if work is None else work
    for _ in range(steps if tol is None else max_steps):
        u, bound, sq, a = _step_terms(p, right, weights, c, inv_total, work, sq)
        if tol is not None and float(poincare.metric_norm(p, u, c).max()) <= tol:
            break
        new = _exp_step(p, u, 2.0 / (bound + 1.0) if eta == STEP_RULE else eta, sq, a, c)
        p, sq = _kept_inside(new, p, sq, c)
    return p


def _kept_inside(new, old, old_sq, c):
    """(p, |p_i|^2): each row of ``new`` where it lies in the ball (c|new_i|^2 < 1), else
    that row of ``old`` (|old_i|^2 = ``old_sq``).  On NumPy and torch's CPU, when every row
    is inside (the rule), ``new`` as it is: no selection pass (a host read there is free;
    on CUDA and under jax it would be a sync, so those select always)."""
    new_sq = _row(new)
    inside = new_sq * c < 1.0
    _tally("vector", new.shape, 3)
    if _on_host(inside) and bool(inside.all()):
        return new, new_sq
    xp = namespace(new)
    return xp.where(inside, new, old), xp.where(inside, new_sq, old_sq)


def _on_host(x) -> bool:
    """A NumPy array or a torch CPU tensor (reading its values costs no device sync), not
    while ``torch.compile`` traces (a read there is a graph break)."""
    if isinstance(x, np.ndarray):
        return True
    return type(x).__module__.startswith("torch") and x.device.type == "cpu" and not torch_compile.compiling()


def softmax(scores):
    """Softmax along the last axis, eq (15)."""
    e = _exp_shifted(scores)
    return e / e.sum(-1, keepdims=True)


def _exp_shifted(scores):
    """exp(S - max_j S): eq (15)'s weights up to a factor per row (enough for the Einstein
    midpoints, which are invariant under scaling a row of weights)."""
    xp = namespace(scores)
    top = scores.amax(-1, keepdim=True) if xp.__name__ == "torch" else scores.max(-1, keepdims=True)
    _tally("pair", scores.shape, 3)
    return xp.exp(scores - top)


def geodesic_attention(q, k, v, c, steps: int = 3, eta: float | str = 1.0,
                       tol: float | None = None):
    """Gyro-attention, eqs (14)-(16) with ``steps`` iterations of Algorithm 1 started at the
    tangent mean at the origin (or to ``tol``, as :func:`.attention.geodesic_attention`), in
    Gram form; ``eta="bound"`` the step-size rule of :func:`frechet_steps`.  The softmax
    numerators e_ij = exp(S_ij - max_j S_ij) are never normalized: the row sums Z_i come
    from the matrix product of the start, init_i = exp_0((e @ log_0 v)_i / Z_i), and every
    Algorithm 1 step divides its O(n d) sums by Z_i; shape=[..., n, d]."""
    work = {}
    weights = _geodesic_weights(q, k, c, work)
    sq = poincare.checked_sqnorm(v, c, "v")        # one reduction for log_0 v and the factor
    both = matmul(weights, _with_ones(poincare.log_map0(v, c, sq)), extra_cols=1)
    total = both[..., -1:]
    init = _exp_map0_normalized(both[..., :-1], total, c)
    _add("vector", 2 * _size(v.shape) + 3 * _size(q.shape))
    return frechet_steps(v, weights, c, init, steps, eta, tol, inv_total=_recip(total), work=work,
                         right=_ball_right(v, c, sq=sq))


def _with_ones(x):
    """[x, 1], shape=[..., m, d + 1]: a matrix product by it also gives the row sums."""
    return _cat([x, namespace(x).ones_like(x[..., :1])], -1)


def tangent_attention_printed(q, k, v, c, w_v=None):
    """Algorithm 3 as printed, s_ij = <log_{q_i} k_j, W_v log_{q_i} v_j> (W_v the identity
    when None, shape=[d, d]), out_i = exp_{q_i}(sum_j alpha_ij log_{q_i} v_j), in Gram form:
    with log_{q_i}(k_j) = -A_ij q_i + B_ij k_j and log_{q_i}(v_j) = -A'_ij q_i + B'_ij v_j,
    s_ij = A A' <q_i, W q_i> - A B' <q_i, W v_j> - B A' <k_j, W q_i> + B B' <k_j, W v_j>;
    shape=[..., n, d]."""
    ka, kb = log_coefficients(q, k, c)
    va, vb = log_coefficients(q, v, c)
    wq = q if w_v is None else matmul(q, _t(w_v))
    wv = v if w_v is None else matmul(v, _t(w_v))
    qwq = (q * wq).sum(-1, keepdims=True)              # [n, 1]
    qwv = matmul(q, _t(wv))                            # <q_i, W v_j>
    kwq = matmul(wq, _t(k))                            # <k_j, W q_i>
    kwv = _t((k * wv).sum(-1, keepdims=True))          # [1, m]: <k_j, W v_j>
    _add("vector", 2 * _size(q.shape) + _size(k.shape))
    scores = ka * va * qwq - ka * vb * qwv - kb * va * kwq + kb * vb * kwv
    _tally("pair", scores.shape, 11)
    alpha = softmax(scores)
    u = -(alpha * va).sum(-1, keepdims=True) * q + matmul(alpha * vb, v)
    _tally("vector", q.shape, 2)
    return poincare.exp_map(q, u, c)


def tangent_attention_query(q, k, v, c):
    """Algorithm 3 with the query-dependent score s_ij = -|log_{q_i} k_j|_g^2 c / sqrt(d_k),
    as :func:`.attention.tangent_attention_query`: |log_{q_i} k_j|_g = d_c(q_i, k_j), so the
    scores are eq (14)'s (one Gram matrix) and only the aggregation is in T_{q_i}:
    out_i = exp_{q_i}(sum_j alpha_ij log_{q_i} v_j), the tangent mean of Algorithm 1 at
    p = q (:func:`_step_terms`, the softmax normalized by 1 / Z_i per row); shape=[..., n, d]."""
    tau, sq = _checked_tau(q, k, c)
    weights = _weights_(_arcosh_(tau), q.shape[-1])
    right = _ball_right(v, c)
    inv_total = _recip(weights.sum(-1, keepdims=True))
    _tally("pair", weights.shape)
    u, _, sq, a = _step_terms(q, right, weights, c, inv_total, sq=sq)
    return _exp_step(q, u, 1.0, sq, a, c)


def einstein_midpoint(weights, points, c):
    """Einstein midpoints (§5.2.2), one per row of ``weights`` (shape=[..., n, m]) of
    ``points`` (shape=[..., m, d]), as :func:`.frechet.einstein_midpoint` row by row: in
    the Klein model k_j = 2 v_j / (1 + c|v_j|^2) with gamma_j = (1 + c|v_j|^2) / (1 - c|v_j|^2),
    m_i = (alpha (gamma k))_i / (alpha gamma)_i (one matrix product of [n, m] by
    [m, d + 1]), mapped back to the ball; shape=[..., n, d]."""
    c = check_curvature(c)
    poincare.check_in_ball(points, c, "points")
    xp = namespace(points)
    sq = _row(points)
    gamma = (1 + c * sq) / (1 - c * sq)
    both = matmul(weights, _cat([gamma * (2 * points / (1 + c * sq)), gamma], -1), extra_cols=1)
    _add("vector", 4 * _size(points.shape) + 3 * _size(both.shape))
    klein = both[..., :-1] / both[..., -1:]
    return klein / (1 + xp.sqrt(1 - c * _row(klein)))


def einstein_attention(q, k, v, c):
    """Eq (14)-(15) weights aggregated by the Einstein midpoint (§5.2.2's one-step shortcut
    of eq 16) on the Poincare ball; shape=[..., n, d]."""
    return einstein_midpoint(_geodesic_weights(q, k, c), v, c)


def _cat(parts, axis):
    xp = namespace(parts[0])
    return xp.cat(parts, dim=axis) if xp.__name__ == "torch" else xp.concatenate(parts, axis=axis)


# --------------------------------------------------------------------------------------
# The Lorentz model L_c^d (points shape=[..., d+1], coordinate 0 time-like; RGT eq 12)
# --------------------------------------------------------------------------------------

def _lorentz_left(x, c: float):
    """c x with the space coordinates' sign flipped: (L y^T)_ij = -c <x_i, y_j>_L, the
    Minkowski product as one plain matrix product; shape=[..., n, d+1].  NumPy and torch
    negate the time column of -c x in place (a fresh array; autograd records it)."""
    left = x * (-c)
    if isinstance(left, np.ndarray):
        np.negative(left[..., :1], out=left[..., :1])
        return left
    if namespace(x).__name__ == "torch":
        left[..., :1].neg_()
        return left
    return _cat([-left[..., :1], left[..., 1:]], -1)


def minkowski_gram(x, y):
    """<x_i, y_j>_L = -x_i0 y_j0 + sum_k x_ik y_jk for all pairs: one matrix product with
    the time coordinate of x negated; shape=[..., n, m]."""
    return matmul(_lorentz_left(x, -1.0), _t(y))


def _tau_lorentz(x, y, c):
    """tau_ij = -c <x_i, y_j>_L - 1 = cosh(sqrt(c) d(x_i, y_j)) - 1 (RGT eq 12): one matrix
    product and one pass; shape=[..., n, m]."""
    return _apply("subtract", matmul(_lorentz_left(x, c), _t(y)), 1.0)


def lorentz_distance(x, y, c):
    """All-pairs d(x_i, y_j) = arcosh(-c <x_i, y_j>_L) / sqrt(c) (as
    :func:`.lorentz.distance`, the argument clipped at 1); shape=[..., n, m]."""
    c = check_curvature(c)
    return _apply("multiply", _arcosh_(_tau_lorentz(x, y, c)), 1 / math.sqrt(c))


def lorentz_scores(q, k, c):
    """S_ij = -d(q_i, k_j)^2 c / sqrt(d_k) = -arcosh(-c <q_i, k_j>_L)^2 / sqrt(d_k), eq (14)
    on L_c^d (d_k = d, the manifold's dimension: the last axis has d + 1 coordinates); the
    factor -c and the time coordinate's sign folded into the queries before the one matrix
    product; shape=[..., n, m]."""
    ell = _arcosh_(_tau_lorentz(q, k, check_curvature(c)))
    return _apply("multiply", _apply("multiply", ell, ell), -1 / math.sqrt(q.shape[-1] - 1))


def lorentz_midpoint(weights, points, c):
    """Einstein midpoints on L_c^d: the Klein midpoint with gamma_j = sqrt(c) v_j0 is the
    projection of the weighted sum, m_i = S_i / (sqrt(c) sqrt(-<S_i, S_i>_L)) with
    S = weights @ points (one matrix product; invariant under a factor per row of
    ``weights``); weights shape=[..., n, m], points [..., m, d+1] -> shape=[..., n, d+1]."""
    c = check_curvature(c)
    xp = namespace(points)
    s = matmul(weights, points)
    time = s[..., :1]
    _tally("vector", s.shape, 3)       # -c <S, S>_L = -c (|S|^2 - 2 S_0^2)
    return s / xp.sqrt(_fma(_row(s), time, time, -2.0) * (-c))


def lorentz_attention(q, k, v, c):
    """Attention on the Lorentz model: eq (14)-(15) weights from one Minkowski Gram matrix
    (softmax numerators, :func:`_weights_`: the midpoint needs no normalization), the
    Einstein midpoint of the values (one more matrix product); q [..., n, d+1], k, v
    [..., m, d+1] on L_c^d -> shape=[..., n, d+1]."""
    ell = _arcosh_(_tau_lorentz(q, k, check_curvature(c)))
    return lorentz_midpoint(_weights_(ell, q.shape[-1] - 1), v, c)


def tangent_attention_origin(q, k, v, c):
    """Tangent attention in T_0 (the GEMM form of §8.2.2 / Table 1's "optimized" column):
    s_ij = -4|log_0 q_i - log_0 k_j|^2 c / sqrt(d_k), out_i = exp_0(sum_j alpha_ij log_0 v_j),
    as :func:`.attention.tangent_attention_origin`; shape=[..., n, d].  The softmax ignores
    the term -4c|log_0 q_i|^2 / sqrt(d_k), constant in j, so the scores up to it are one
    matrix product log_0 q_i . (8c/sqrt(d_k) log_0 k_j) less 4c|log_0 k_j|^2 / sqrt(d_k);
    the numerators exp(s - max_j s) are normalized after the product with log_0 v (one
    division per row)."""
    qt, kt, vt = _log_map0_all((q, k, v), c)
    scale = 4.0 * c / math.sqrt(q.shape[-1])
    _add("vector", 2 * (_size(q.shape) + _size(k.shape) + _size(v.shape)))
    scores = _apply("subtract", matmul(qt, _t((2 * scale) * kt)), _t(scale * _row(kt)))
    weights = _apply("exp", _apply("subtract", scores, _row_extreme(scores, largest=True)))
    _tally("pair", weights.shape)
    _tally("vector", q.shape, 3)
    return _exp_map0_normalized(matmul(weights, vt), weights.sum(-1, keepdims=True), c)


def _exp_map0_normalized(mean, total, c):
    """exp_0(m_i / Z_i) = tanh(sqrt(c)|m_i| / Z_i) m_i / (sqrt(c)|m_i|) (eq 11 at 0) for
    m = ``mean`` (shape=[..., n, d]) and Z = ``total`` ([..., n, 1]), without forming m / Z."""
    scaled = poincare._scaled_norm(mean, c)
    poincare._count("origin", mean)
    return namespace(mean).tanh(scaled / total) / scaled * mean


def _log_map0_all(points, c):
    """log_0 x of each array x of ``points`` (eq 18's log_o); a tuple.  On torch by one call
    over their concatenation along the token axis where the leading axes agree (at N = 128
    eager torch is bound by its ~5 us per operator call); on NumPy one call each (the
    concatenation's arrays cross glibc's 128 KiB mmap threshold at N = 128, d = 64 and cost
    ~110 page faults a call)."""
    if namespace(points[0]).__name__ != "torch" or len({x.shape[:-2] + x.shape[-1:] for x in points}) > 1:
        return tuple(poincare.log_map0(x, c) for x in points)
    both = poincare.log_map0(_cat(list(points), -2), c)
    # sizes as Python ints: a NumPy integer as a slice bound costs torch ~10 us a slice
    return tuple(both.split([int(x.shape[-2]) for x in points], -2))


def euclidean_attention(q, k, v):
    """softmax(q k^T / sqrt(d)) v, the baseline of Table 1; shape=[..., n, d]."""
    scores = matmul(q, _t(k)) / math.sqrt(q.shape[-1])
    _tally("pair", scores.shape)
    return matmul(softmax(scores), v)

"""RGT eqs 17-19, 21-22 (35-36) and Algorithm 2: geodesic residual connections, Riemannian
normalization and Riemannian SGD on the Poincare ball."""

from __future__ import annotations

import numpy as np

from attngeom.geometry_proofs.claim_support import context_backend, render_items, residual_verdict
from attngeom.geometry_proofs.hyperbolic import frechet, layers, poincare
from attngeom.geometry_proofs.hyperbolic.common import (
    BALL_DIM, CURVATURE, RADIUS, TOKENS, RGTClaim, as_list, fmt, parse_curvature, parse_real)
from attngeom.core.errors import BadInput
from attngeom.core.verdict import refuted


def _points(context, params, count, key):
    c = parse_curvature(params["curvature"])
    return poincare.random_points(context.sampler.spawn(key), (count, params["d"]), c,
                                  parse_real(params["radius"], "radius"))


class GeodesicResidualClaim(RGTClaim):
    """RGT eq (17) and Algorithm 2 (lines 10, 16): a residual connection is a geodesic step.

    ``numeric``: (i) eq (17) with F a tangent vector at x_prev (the reading in which
    P_{x_prev -> x_curr} is defined; as printed F(x_curr) already lies in T_{x_curr}, see the
    docs): d(x_curr, x_next) = step |F|_{g_{x_prev}} (transport is an isometry, exp moves by
    the metric length); (ii) line 10, y = exp_x(l log_x a) lies on the geodesic x -> a:
    d(x, y) = l d(x, a) and d(y, a) = (1 - l) d(x, a) for l in [0, 1]; l = 1 gives a.
    """

    id = "geodesic-residual"
    source = "RGT eq (17), Algorithm 2"
    statement = ("The geodesic residual exp_x(l P(F)) moves by l |F|_g along a geodesic; "
                 "exp_x(l log_x a) is the point at fraction l of the geodesic x -> a.")
    params = (BALL_DIM, CURVATURE, RADIUS)
    methods = ("numeric",)
    limits = {"d": 1024}
    examples = ({"d": 2, "curvature": "3/2", "radius": "2"}, {"d": 8, "curvature": "1/2", "radius": "3"})

    def check_numeric(self, params, context):
        be = context_backend(context)
        c = parse_curvature(params["curvature"])
        count = context.samples or 200
        prev, curr, target = (_points(context, params, count, k) for k in (1, 2, 3))
        step = np.abs(context.sampler.spawn(4).floats((count, 1))).clip(0, 1)
        lam_prev = np.asarray(poincare.conformal_factor(prev, c, keepdims=True))
        direction = context.sampler.spawn(5).floats(prev.shape) / lam_prev  # |F|_g ~ 1
        B = lambda a: be.asarray(a)
        n = be.to_numpy
        nxt = n(layers.geodesic_residual(B(prev), B(curr), B(direction), B(step), c))
        moved = n(poincare.distance(B(curr), B(nxt), c))
        expected = step[:, 0] * lam_prev[:, 0] * np.linalg.norm(direction, axis=-1)
        y = n(layers.residual_toward(B(curr), B(target), B(step), c))
        full = n(poincare.distance(B(curr), B(target), c))
        errs = {"eq17 step length": np.abs(moved - expected) / (1 + expected),
                "line 10 d(x, y)": np.abs(n(poincare.distance(B(curr), B(y), c)) - step[:, 0] * full) / (1 + full),
                "line 10 d(y, a)": np.abs(n(poincare.distance(B(y), B(target), c)) - (1 - step[:, 0]) * full) / (1 + full)}
        name = max(errs, key=lambda k: float(np.max(errs[k])))
        k = int(np.argmax(errs[name]))
        worst = float(errs[name][k])
        return residual_verdict(be, worst, 1e-9, checked=3 * count, summary=(
            f"at {count} seeded points (d={params['d']}, c={fmt(c)}) the eq (17) step moves by "
            f"l |F|_g and exp_x(l log_x a) divides the geodesic x -> a in the ratio l : 1 - l"),
            failure=f"the residual check '{name}' fails",
            counterexample={"check": name, "x_prev": as_list(prev[k]), "x_curr": as_list(curr[k]),
                            "target": as_list(target[k]), "step": float(step[k, 0]), "c": c})

    def show(self, params, fmt="text", limit=None):
        return render_items([("eq (17)", "x_next = exp_{x_curr}(l P_{x_prev -> x_curr}(F))"),
                             ("line 10", "y = exp_x(l log_x(attn))")], fmt)


class RiemannianNormClaim(RGTClaim):
    """RGT eq (19): RiemannianNorm(x_i) = exp_mu(log_mu(x_i) / sigma) with mu the Frechet
    mean of the batch and sigma its dispersion centres and scales the batch.

    ``numeric``: for a seeded batch (--tokens points within --radius) the outputs z_i have
    Frechet mean mu (|sum_i log_mu z_i|_g = 0: mu is the unique critical point on H^d) and
    dispersion sqrt(mean_i d(mu, z_i)^2) = 1.
    """

    id = "riemannian-norm"
    source = "RGT eq (19)"
    statement = "Riemannian normalization keeps the Frechet mean mu and gives unit dispersion."
    params = (BALL_DIM, CURVATURE, RADIUS, TOKENS)
    methods = ("numeric",)
    limits = {"d": 256, "tokens": 1024}
    examples = ({"d": 2, "curvature": "3/2", "radius": "2", "tokens": 16},
                {"d": 8, "curvature": "2", "radius": "3/4", "tokens": 32})

    def check_numeric(self, params, context):
        c = parse_curvature(params["curvature"])
        batch = _points(context, params, params["tokens"], 1)
        mu = layers.batch_mean(batch, c)
        out = layers.riemannian_norm(batch, c)
        weights = np.full(len(batch), 1 / len(batch))
        grad = float(poincare.conformal_factor(mu, c) * np.linalg.norm(frechet.tangent_mean(mu, out, weights, c)))
        spread = float(np.sqrt(np.mean(poincare.distance(mu[None, :], out, c) ** 2)))
        errs = {"mean": grad, "dispersion": abs(spread - 1)}
        worst = max(errs.values())
        return residual_verdict(None, worst, 1e-9, checked=2, summary=(
            f"eq (19) on {len(batch)} seeded points (d={params['d']}, c={fmt(c)}): the outputs have "
            f"Frechet mean mu and dispersion 1"),
            failure="eq (19)'s output is not centred at mu with unit dispersion",
            counterexample={"errors": {k: round(v, 12) for k, v in errs.items()}, "mu": as_list(mu),
                            "batch": as_list(batch[:4]), "c": c})

    def show(self, params, fmt="text", limit=None):
        return render_items([("RiemannianNorm(x)", "exp_mu(log_mu(x) / sigma)"),
                             ("sigma", "sqrt(mean_i d(mu, x_i)^2)")], fmt)


def _euclidean_gradient(loss, x, be, h: float = 1e-6):
    """grad of ``loss`` (array -> [batch]) at x (NumPy [batch, d]): autodiff on torch / jax,
    central differences on NumPy with steps h (1 - c|x|^2) / 2 = h / lambda_x, i.e. h in the
    metric (so the error does not grow toward the boundary)."""
    if be.name == "torch":
        t = be.asarray(x).requires_grad_(True)
        loss(t).sum().backward()
        return t.grad.detach().cpu().numpy()
    if be.name == "jax":
        return np.asarray(be.library.grad(lambda a: loss(a).sum())(be.asarray(x)))
    grad = np.zeros_like(x)
    step = h * (1 - np.sum(x * x, -1, keepdims=True) * _CURVATURE[0]) / 2
    for i in range(x.shape[-1]):
        e = np.zeros_like(x)
        e[:, i:i + 1] = step
        grad[:, i] = (loss(x + e) - loss(x - e)) / (2 * step[:, 0])
    return grad


_CURVATURE = [1.0]  # the c of the running check, for the metric-scaled difference steps


def _directional_derivative(loss, x, v, c, be, h: float = 1e-5):
    """d/ds L(exp_x(s v)) at s = 0 (NumPy [batch]): forward-mode autodiff through the exp
    map on torch / jax, central differences (h in the metric, |v|_g = 1) on NumPy."""
    along = lambda s: loss(poincare.exp_map(be.asarray(x), s * be.asarray(v), c))
    zeros, ones = be.asarray(np.zeros((len(x), 1))), be.asarray(np.ones((len(x), 1)))
    if be.name == "torch":
        return be.to_numpy(be.module.func.jvp(along, (zeros,), (ones,))[1])
    if be.name == "jax":
        return np.asarray(be.library.jvp(along, (zeros,), (ones,))[1])
    return (along(h) - along(-h)) / (2 * h)


#: Largest --radius at which NumPy's central differences resolve the gradients (float64).
NUMPY_RADIUS = 3.0


class RiemannianSGDClaim(RGTClaim):
    """RGT eqs (21)-(22), (35)-(36): grad_B L = g^{-1} grad L = (1 - c|x|^2)^2 / 4 grad L and
    the step theta <- exp_theta(-eta grad_B L).

    ``numeric``: for L(x) = d(x, t)^2 (t seeded), the Euclidean gradient by autodiff (torch /
    jax) or central differences (NumPy); (i) the Riemannian gradient of eq (36) is the metric
    dual of dL: d/ds L(exp_x(s v)) at 0 equals g_x(grad_B L, v); (ii) since grad_B L =
    -2 log_x(t), one step with eta = 1/2 lands on t; (iii) with eta = 0.1 the loss decreases
    at every step of 20.
    """

    id = "riemannian-sgd"
    source = "RGT eqs (21)-(22), (35)-(36)"
    statement = ("The Riemannian gradient on the ball is (1 - c|x|^2)^2/4 grad L and the "
                 "exp-map step exp_x(-eta grad_B L) descends.")
    params = (BALL_DIM, CURVATURE, RADIUS)
    methods = ("numeric",)
    limits = {"d": 256}
    examples = ({"d": 2, "curvature": "3/2", "radius": "2"}, {"d": 5, "curvature": "1/2", "radius": "3"})

    def check_numeric(self, params, context):
        be = context_backend(context)
        c = parse_curvature(params["curvature"])
        if be.name == "numpy" and parse_real(params["radius"], "radius") > NUMPY_RADIUS:
            raise BadInput(f"with --backend numpy the gradients are central differences, accurate for "
                           f"--radius <= {NUMPY_RADIUS:g}; use --backend torch or jax (autodiff)")
        count = context.samples or 50
        _CURVATURE[0] = c
        x, t = _points(context, params, count, 1), _points(context, params, count, 2)
        lam = np.asarray(poincare.conformal_factor(x, c))
        gauss = context.sampler.spawn(3).floats((count, params["d"]))
        v = gauss / np.linalg.norm(gauss, axis=-1, keepdims=True) / lam[:, None]  # |v|_g = 1
        t_be = be.asarray(t)
        loss = lambda a: poincare.distance(a, t_be if not isinstance(a, np.ndarray) else t, c) ** 2
        egrad = _euclidean_gradient(loss, x, be)
        rgrad = np.asarray(poincare.riemannian_gradient(x, egrad, c))
        directional = _directional_derivative(loss, x, v, c, be)
        dual = lam ** 2 * np.sum(rgrad * v, -1)
        landed = poincare.rsgd_step(x, egrad, 0.5, c)
        scale = 1 + np.abs(dual)
        errs = {"metric dual": np.abs(directional - dual) / scale,
                "one step lands on t": np.max(np.abs(landed - t), -1) / (1 - c * np.sum(t ** 2, -1))}
        losses, p = [np.asarray(loss(x))], x.copy()
        for _ in range(20):
            p = poincare.rsgd_step(p, _euclidean_gradient(loss, p, be), 0.1, c)
            losses.append(np.asarray(loss(p)))
        increases = int(np.sum(np.diff(np.stack(losses), axis=0) > 1e-12))
        name = max(errs, key=lambda k: float(np.max(errs[k])))
        k = int(np.argmax(errs[name]))
        worst = float(errs[name][k])
        tolerance = 1e-8 if be.name != "numpy" else 1e-5
        if increases:
            return refuted(method="numeric", backend=be.name, device=be.device, summary=(
                f"the RSGD step increased the loss {increases} times in 20 steps"),
                counterexample={"x": as_list(x[0]), "t": as_list(t[0]), "c": c, "losses": as_list(np.stack(losses)[:, 0])})
        return residual_verdict(be, worst, tolerance, checked=2 * count + 20 * count, summary=(
            f"eq (36)'s (1 - c|x|^2)^2/4 grad L is the metric dual of dL, one step with eta = 1/2 "
            f"on d(x, t)^2 lands on t, and eta = 0.1 decreases the loss at every step "
            f"({count} seeded pairs, d={params['d']}, c={fmt(c)}, final loss/initial <= "
            f"{fmt(float(np.max(losses[-1] / losses[0])))})"),
            failure=f"the Riemannian gradient check '{name}' fails",
            counterexample={"check": name, "x": as_list(x[k]), "t": as_list(t[k]), "c": c},
            evidence={"gradient": "autodiff" if be.name != "numpy" else "central differences, h=1e-6"})

    def show(self, params, fmt="text", limit=None):
        return render_items([("grad_B L", "(1 - c|x|^2)^2 / 4 grad L"),
                             ("step", "x <- exp_x(-eta grad_B L)")], fmt)


CLAIMS = [GeodesicResidualClaim(), RiemannianNormClaim(), RiemannianSGDClaim()]

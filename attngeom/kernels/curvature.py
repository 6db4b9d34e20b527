"""Numeric Riemannian curvature on any array backend, batched over points.

Two routes, both written once against :class:`attngeom.kernels.backend.Backend` (``einsum``,
``linalg.pinv``, ``linalg.det``, ``linalg.eigvalsh`` have the same spelling in NumPy,
PyTorch and JAX):

* **immersion** phi -> mu(phi) in R^D with the Fisher–Rao metric of N(mu, Sigma) for a
  constant Sigma (GEC §2.1): from the Jacobian J and the Hessian H of mu,

      g_ij      = J_i^T P J_j                          (P = Sigma^{-1}, the precision)
      Gamma_k,ij = J_k^T P H_ij,  Gamma^k_ij = g^kl Gamma_l,ij
      II_ij     = H_ij - J g^{-1} J^T P H_ij           (second fundamental form, normal part)
      R_abcd    = <II_ac, II_bd>_P - <II_ad, II_bc>_P   (Gauss equation)

* **metric** phi -> g(phi): from g, dg and ddg the Christoffel symbols and
  R^r_smn = d_m Gamma^r_ns - d_n Gamma^r_ms + Gamma^r_ml Gamma^l_ns - Gamma^r_nl Gamma^l_ms
  (GEC A.1.1's formula, SymPy's ``metric_to_Riemann_components`` convention).

The jets (values, Jacobian, Hessian) come from autodiff for a map written in torch or jax
(:func:`autodiff_jet`: ``vmap`` of ``jacfwd``); on NumPy the caller supplies them (the
symbolic engine of ``attngeom.geometry_proofs.riemann`` lambdified once).

Shapes: points [B, d]; values [B, N]; jac [B, N, d] (jac[b, a, i] = d_i mu^a);
hess [B, N, d, d].  Index conventions follow ``sympy.diffgeom``:
christoffel_1st[b, k, i, j] = Gamma_{k,ij} = (d_i g_jk + d_j g_ik - d_k g_ij) / 2,
christoffel_2nd[b, k, i, j] = Gamma^k_ij, riemann[b, a, s, m, n] = R_{asmn} = g_ar R^r_smn,
so that on a surface R_{0101} = K det g (the unit sphere has K = +1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from attngeom.kernels.backend import Backend
from attngeom.core.errors import BadInput


@dataclass
class Curvature:
    """Curvature of a d-dimensional Riemannian manifold at B points (arrays of one backend).

    Attributes
    ----------
    metric : shape=[B, d, d]
    christoffel_1st, christoffel_2nd : shape=[B, d, d, d]
    riemann : R_{asmn}, shape=[B, d, d, d, d]
    ricci : Ric_{sn} = g^{am} R_{asmn}, shape=[B, d, d]
    scalar : g^{sn} Ric_{sn}, shape=[B]
    scale : the size of the terms that cancel in R (|H|_P^2 for an immersion, the
        ``Gamma Gamma`` and ``d Gamma`` terms for a metric), shape=[B]; residuals are
        relative to ``scale / det g``.
    second_fundamental_form : shape=[B, D, d, d], for the immersion route
    backend : the backend the arrays live on
    """

    metric: Any
    christoffel_1st: Any
    christoffel_2nd: Any
    riemann: Any
    ricci: Any
    scalar: Any
    scale: Any
    backend: Backend
    second_fundamental_form: Any = None

    @property
    def dim(self) -> int:
        return int(self.metric.shape[-1])

    @property
    def gaussian(self):
        """K = R_{0101} / det g, shape=[B]; only for surfaces (d = 2)."""
        if self.dim != 2:
            raise BadInput(f"Gaussian curvature is defined for surfaces (d = 2); got d = {self.dim}")
        return self.riemann[:, 0, 1, 0, 1] / self.backend.module.linalg.det(self.metric)

    @property
    def gaussian_scale(self):
        """The scale of K: ``scale / det g``, shape=[B]."""
        return self.scale / self.backend.module.linalg.det(self.metric)

    def sectional(self, X, Y):
        """K(X, Y) = R_abcd X^a Y^b X^c Y^d / (g(X,X) g(Y,Y) - g(X,Y)^2), X, Y shape=[B, d]."""
        return sectional_curvature(self.riemann, self.metric, X, Y, self.backend)

    def metric_eigenvalues(self):
        """Eigenvalues of g (squared singular values of the whitened Jacobian), shape=[B, d]."""
        return self.backend.module.linalg.eigvalsh(self.metric)


def jet_function(function: Callable, backend: Backend, with_parameters: bool = False) -> Callable:
    """A batched jet: ``points [B, d] (, parameters [B, P]) -> (values, jac, hess)`` by
    forward-mode autodiff (``vmap`` of ``jacfwd``; compiled with ``jax.jit`` on jax, so keep
    the returned function to reuse the compilation).

    ``function`` maps one point, shape=[d], to a vector, shape=[N], written in the backend's
    own operations (torch or jax).  With parameters it is called as
    ``function(point, parameter_row)`` and differentiated in the point only, so one call
    covers B (point, parameter) pairs.
    """
    if backend.name == "numpy":
        raise BadInput("the numpy backend has no autodiff: give the map symbolically "
                       "(attngeom.geometry_proofs.riemann lambdifies it) or use --backend torch or jax")
    lib = backend.library
    if backend.name == "torch":
        vmap, jacfwd = lib.func.vmap, lib.func.jacfwd
        compile_ = lambda f: f
    else:
        vmap, jacfwd = lib.vmap, lib.jacfwd
        compile_ = lib.jit  # eager jax re-dispatches every primitive; one trace is far cheaper
    if not with_parameters:
        return compile_(vmap(lambda p: (function(p), jacfwd(function)(p), jacfwd(jacfwd(function))(p))))
    first = jacfwd(function, argnums=0)
    return compile_(vmap(lambda p, q: (function(p, q), first(p, q), jacfwd(first, argnums=0)(p, q))))


def autodiff_jet(function: Callable, points, backend: Backend, parameters=None):
    """(values, jac, hess) of ``function`` at every row of ``points`` (see :func:`jet_function`)."""
    if parameters is None:
        return jet_function(function, backend)(points)
    return jet_function(function, backend, True)(points, parameters)


def _inverse(backend: Backend, metric):
    """g^{-1}; the pseudo-inverse, so that a point where phi -> mu(phi) is not an immersion
    gives meaningless numbers (to be screened with ``metric_eigenvalues``) instead of an
    exception that would discard the whole batch.  A non-finite metric (a map evaluated
    outside its domain) is inverted as the identity: its nan / inf still reach every
    result through the jet, and the other points are unaffected."""
    xp = backend.module
    finite = xp.isfinite(metric.sum(-1).sum(-1))[..., None, None]
    identity = xp.zeros_like(metric) + backend.asarray(np.eye(metric.shape[-1]))
    return xp.linalg.pinv(xp.where(finite, metric, identity))


def _precision(precision, ambient: int, backend: Backend):
    if precision is None:
        return backend.asarray(np.eye(ambient))
    return precision


def fisher_rao_metric(jac, backend: Backend, precision=None):
    """g_ij = J_i^T Sigma^{-1} J_j (GEC §2.1), shape=[B, d, d]."""
    P = _precision(precision, jac.shape[-2], backend)
    return backend.module.einsum("bai,ac,bcj->bij", jac, P, jac)


def second_fundamental_form(jac, hess, backend: Backend, precision=None):
    """II_ij = H_ij - J g^{-1} J^T P H_ij, the P-normal part of the Hessian, shape=[B, D, d, d]."""
    xp = backend.module
    P = _precision(precision, jac.shape[-2], backend)
    g_inv = _inverse(backend, fisher_rao_metric(jac, backend, P))
    tangential = xp.einsum("bai,bik,bck,cd,bdmn->bamn", jac, g_inv, jac, P, hess)
    return hess - tangential


def immersion_curvature_from_jet(jac, hess, backend: Backend, precision=None) -> Curvature:
    """Curvature of phi -> mu(phi) from its Jacobian and Hessian (Gauss equation).

    R_abcd = <II_ac, II_bd>_P - <II_ad, II_bc>_P; Gamma_k,ij = <d_k mu, d_ij mu>_P.
    """
    xp = backend.module
    P = _precision(precision, jac.shape[-2], backend)
    metric = fisher_rao_metric(jac, backend, P)
    first = xp.einsum("zak,ac,zcij->zkij", jac, P, hess)
    second = xp.einsum("zkl,zlij->zkij", _inverse(backend, metric), first)
    normal = second_fundamental_form(jac, hess, backend, P)
    products = xp.einsum("zaij,ac,zckl->zijkl", normal, P, normal)
    riemann = xp.einsum("zacbd->zabcd", products) - xp.einsum("zadbc->zabcd", products)
    scale = xp.einsum("zaij,ac,zcij->z", hess, P, hess)
    return _finish(metric, first, second, riemann, scale, backend, normal)


def metric_curvature_from_jet(metric, dmetric, ddmetric, backend: Backend) -> Curvature:
    """Curvature of a metric field from g, dg and ddg.

    dmetric[z, i, j, k] = d_k g_ij, ddmetric[z, i, j, k, l] = d_k d_l g_ij.  Christoffel
    symbols of both kinds, their derivatives (d_m g^{-1} = -g^{-1} (d_m g) g^{-1}) and
    R^r_smn = d_m Gamma^r_ns - d_n Gamma^r_ms + Gamma^r_ml Gamma^l_ns - Gamma^r_nl Gamma^l_ms.
    """
    xp = backend.module
    g_inv = _inverse(backend, metric)
    first = 0.5 * (xp.einsum("zjki->zkij", dmetric) + xp.einsum("zikj->zkij", dmetric)
                   - xp.einsum("zijk->zkij", dmetric))
    d_first = 0.5 * (xp.einsum("zjkim->zkijm", ddmetric) + xp.einsum("zikjm->zkijm", ddmetric)
                     - xp.einsum("zijkm->zkijm", ddmetric))
    second = xp.einsum("zrk,zkij->zrij", g_inv, first)
    d_g_inv = -xp.einsum("zra,zabm,zbk->zrkm", g_inv, dmetric, g_inv)
    d_second = (xp.einsum("zrkm,zkij->zrijm", d_g_inv, first)
                + xp.einsum("zrk,zkijm->zrijm", g_inv, d_first))
    derivative_terms = xp.einsum("zrnsm->zrsmn", d_second) - xp.einsum("zrmsn->zrsmn", d_second)
    product_terms = (xp.einsum("zrml,zlns->zrsmn", second, second)
                     - xp.einsum("zrnl,zlms->zrsmn", second, second))
    upper = derivative_terms + product_terms
    riemann = xp.einsum("zar,zrsmn->zasmn", metric, upper)
    size = lambda t: backend.sum(t.reshape(t.shape[0], -1) ** 2, 1) ** 0.5
    scale = size(metric) * (size(derivative_terms) + size(product_terms))
    return _finish(metric, first, second, riemann, scale, backend)


def _finish(metric, first, second, riemann, scale, backend: Backend, normal=None) -> Curvature:
    xp = backend.module
    g_inv = _inverse(backend, metric)
    ricci = xp.einsum("zam,zasmn->zsn", g_inv, riemann)
    scalar = xp.einsum("zsn,zsn->z", g_inv, ricci)
    return Curvature(metric, first, second, riemann, ricci, scalar, scale, backend, normal)


def sectional_curvature(riemann, metric, X, Y, backend: Backend):
    """K(X, Y) = R_abcd X^a Y^b X^c Y^d / (g(X,X) g(Y,Y) - g(X,Y)^2), X, Y shape=[B, d]."""
    xp = backend.module
    numerator = xp.einsum("zabcd,za,zb,zc,zd->z", riemann, X, Y, X, Y)
    gxx = xp.einsum("zab,za,zb->z", metric, X, X)
    gyy = xp.einsum("zab,za,zb->z", metric, Y, Y)
    gxy = xp.einsum("zab,za,zb->z", metric, X, Y)
    return numerator / (gxx * gyy - gxy ** 2)


def immersion_curvature(function: Callable, points, backend: Backend, precision=None) -> Curvature:
    """Curvature of phi -> mu(phi) (written in torch or jax) at every row of ``points``."""
    _, jac, hess = autodiff_jet(function, points, backend)
    return immersion_curvature_from_jet(jac, hess, backend, precision)


def metric_curvature(function: Callable, points, backend: Backend) -> Curvature:
    """Curvature of the metric field phi -> g(phi) (written in torch or jax, returning the
    d x d matrix) at every row of ``points``."""
    d = points.shape[-1]
    flat = lambda p: function(p).reshape(d * d)
    values, jac, hess = autodiff_jet(flat, points, backend)
    batch = points.shape[0]
    return metric_curvature_from_jet(values.reshape(batch, d, d), jac.reshape(batch, d, d, d),
                                     hess.reshape(batch, d, d, d, d), backend)

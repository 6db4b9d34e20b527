"""The independent references of the gauge claims: autodiff (torch.func / jax) and central
finite differences of functions written once against :class:`attngeom.kernels.backend.Backend`.

Every printed gradient of GT is compared with ``gradient`` of the free energy
(:mod:`attngeom.geometry_proofs.gauge.free_energy`); finite differences are the second opinion
(GT §2.4.4 claims relative error < 1e-6 against them).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from attngeom.kernels.backend import Backend, get_backend
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BackendUnavailable


def autodiff_backend(context: CheckContext) -> Backend:
    """The backend that differentiates: the requested one if it is torch or jax, else
    torch (jax when torch is missing) on the requested device."""
    if context.backend in ("torch", "jax"):
        return get_backend(context.backend, context.device)
    errors = []
    for name in ("torch", "jax"):
        try:
            return get_backend(name, context.device)
        except BackendUnavailable as error:
            errors.append(str(error))
    raise BackendUnavailable(f"the gauge gradient claims differentiate with torch or jax: {errors[0]}")


def gradient(be: Backend, function: Callable, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The gradients of the scalar ``function(*arrays)`` with respect to every argument,
    as numpy arrays (torch.func.grad / jax.grad, float64)."""
    argnums = tuple(range(len(arrays)))
    inputs = [be.asarray(a) for a in arrays]
    if be.name == "torch":
        grads = be.library.func.grad(function, argnums=argnums)(*inputs)
    else:
        grads = be.library.grad(function, argnums=argnums)(*inputs)
    return tuple(be.to_numpy(g) for g in grads)


def directional_derivative(be: Backend, function: Callable, point: np.ndarray,
                           tangent: np.ndarray) -> np.ndarray:
    """d/dt function(point + t tangent) at t = 0 (forward-mode jvp), as a numpy array."""
    primal, direction = be.asarray(point), be.asarray(tangent)
    if be.name == "torch":
        _, out = be.library.func.jvp(function, (primal,), (direction,))
    else:
        _, out = be.library.jvp(function, (primal,), (direction,))
    return be.to_numpy(out)


def hessian(be: Backend, function: Callable, point: np.ndarray) -> np.ndarray:
    """The Hessian of a scalar function of one vector, shape=[d, d]."""
    x = be.asarray(point)
    if be.name == "torch":
        return be.to_numpy(be.library.func.hessian(function)(x))
    return be.to_numpy(be.library.hessian(function)(x))


def finite_difference_gradient(function: Callable[[np.ndarray], float], point: np.ndarray,
                               step: float = 1e-5) -> np.ndarray:
    """Central differences (f(x + h e) - f(x - h e)) / 2h for every entry of ``point``
    (truncation error O(h^2 |f'''|), rounding O(eps |f| / h): about 1e-10 relative here)."""
    point = np.asarray(point, dtype=float)
    out = np.zeros_like(point)
    for index in np.ndindex(point.shape):
        shifted = point.copy()
        shifted[index] += step
        upper = function(shifted)
        shifted[index] -= 2 * step
        out[index] = (upper - function(shifted)) / (2 * step)
    return out


def relative_error(value: np.ndarray, reference: np.ndarray, floor: float = 1e-300) -> float:
    """|value - reference| / max(|reference|, floor) (Frobenius norms).  ``floor`` is the
    scale below which a reference counts as zero (a gradient that vanishes identically,
    e.g. of K_ii = 0): callers pass 1e-3 times the largest reference of the check."""
    return float(np.linalg.norm(np.asarray(value) - reference) / max(np.linalg.norm(reference), floor))


def jacobian(be: Backend, function: Callable, point: np.ndarray) -> np.ndarray:
    """The Jacobian of ``function`` (array -> array) at ``point``, shape=out.shape + point.shape
    (reverse mode: torch.func.jacrev / jax.jacrev)."""
    x = be.asarray(point)
    if be.name == "torch":
        return be.to_numpy(be.library.func.jacrev(function)(x))
    return be.to_numpy(be.library.jacrev(function)(x))

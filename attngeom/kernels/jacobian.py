"""Jacobians of maps W -> f(W, X) at a batch of inputs X, and their ranks.

Two routes to the Jacobian, one interface (:func:`jacobian_mod_p`, :func:`jacobian_float`):

* **Forward-mode dual numbers** (:class:`Dual`).  Every intermediate matrix carries its
  value and its derivative along each of the P parameter directions (a leading axis of
  size P).  The same code runs exactly over F_p (int64 residues in the arithmetic of
  :class:`attngeom.kernels.primefield.PrimeField`; products through
  :func:`attngeom.kernels.primefield.matmul_mod_p`) for polynomial maps, and in float64 NumPy for
  maps built from ``@ + - * /``, ``exp``, ``max`` and ``sum`` (softmax attention).
* **Automatic differentiation of the backend** for ``--backend torch`` / ``jax`` on cpu
  or cuda: forward mode (``jvp``), ``vmap`` over a chunk of parameter directions and over
  the inputs, chunk after chunk so that memory stays bounded (through
  :attr:`attngeom.kernels.backend.Backend.library`; nothing here imports torch or jax).

The map is written for *one* input X (a d x t matrix), exactly as in
``attngeom.lightning_alg.model``: ``func(weights, X, backend)``.  A :class:`Dual` holding a batch
reports the shape of one sample and counts axes within a sample (``.T``, ``sum(axis=1)``,
``x[:, None]``), so the model code runs unchanged on the whole batch at once.

Ranks.  Exact: the rank over F_p of the Jacobian at a random point is at most the rank over
Q of the generic Jacobian (every larger minor is the zero polynomial over Z, hence zero
mod p), and equal to it unless the point is a zero of a nonzero minor (Schwartz–Zippel).
Floating point: :func:`numerical_rank` (SVD, tolerance and gap reported; never a bare
``matrix_rank``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from attngeom.kernels.backend import Backend, get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.primefield import PrimeField, rank_mod_p
from attngeom.kernels.threads import for_work, svd_work

#: Refuse Jacobians with more entries than this (BadInput, exit 2) on the cpu.
MAX_ENTRIES = 60_000_000
#: On a CUDA device the Jacobian may take up to 1 / DEVICE_SHARE of the device's memory (the
#: SVD of :func:`numerical_rank` needs room for a copy and its workspace beside it).
DEVICE_SHARE = 4
#: Autodiff: one chunk of directions may hold DEVICE_CHUNK_SHARE^-1 of the device memory in
#: its output; intermediates of the map take a small multiple of that.
DEVICE_CHUNK_SHARE = 32


# -- arithmetic of the dual numbers -----------------------------------------------------
# Exact: attngeom.kernels.primefield.PrimeField (int64 residues mod p); floating point: FloatField.
class FloatField:
    """float64 NumPy arithmetic."""

    prime = None

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def mul(a, b):
        return a * b

    @staticmethod
    def matmul(a, b):
        return a @ b

    @staticmethod
    def constant(value):
        return np.asarray(value, dtype=np.float64)


def _lift(tangent, value_ndim: int, result_ndim: int):
    """Insert axes after the direction axis so that the tangent of a value with fewer batch
    axes broadcasts against a result with more (weights meeting a batch of inputs)."""
    extra = result_ndim - value_ndim
    if tangent is None or extra <= 0:
        return tangent
    return tangent.reshape(tangent.shape[:1] + (1,) * extra + tangent.shape[1:])


class Dual:
    """A value (a batch of matrices) and its derivatives along P parameter directions.

    ``value`` has shape ``batch + core`` (``batch_ndim`` leading sample axes), ``tangent``
    shape ``(P,) + value.shape``, or is None for a constant.  ``shape``, ``.T``, axis
    arguments and indices refer to the core (one sample), as in the model code.
    """

    __array_ufunc__ = None  # ndarray (op) Dual defers to the reflected operators below

    def __init__(self, value, tangent, field, batch_ndim: int = 0):
        self.value, self.tangent, self.field, self.batch_ndim = value, tangent, field, batch_ndim

    # -- construction ------------------------------------------------------------------
    def _wrap(self, other) -> "Dual":
        if isinstance(other, Dual):
            return other
        value = self.field.constant(other)
        # a constant array is taken to have this Dual's core shape after its batch axes
        return Dual(value, None, self.field, max(value.ndim - len(self.shape), 0))

    def _result(self, value, terms, other: "Dual") -> "Dual":
        terms = [t for t in terms if t is not None]
        tangent = None
        for term in terms:
            tangent = term if tangent is None else self.field.add(tangent, term)
        batch = max(self.batch_ndim, other.batch_ndim)
        if tangent is not None:
            tangent = np.broadcast_to(tangent, tangent.shape[:1] + value.shape)
        return Dual(value, tangent, self.field, batch)

    # -- shape -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.value.shape[self.batch_ndim:]

    @property
    def T(self) -> "Dual":
        swap = (lambda x: None if x is None else np.swapaxes(x, -1, -2))
        return Dual(swap(self.value), swap(self.tangent), self.field, self.batch_ndim)

    def __getitem__(self, index) -> "Dual":
        index = index if isinstance(index, tuple) else (index,)
        if not all(i is None or isinstance(i, slice) for i in index):
            raise TypeError("a Dual takes only slices and None as indices")
        full = (slice(None),) * self.batch_ndim + index
        tangent = None if self.tangent is None else self.tangent[(slice(None),) + full]
        return Dual(self.value[full], tangent, self.field, self.batch_ndim)

    def _axis(self, axis: int) -> int:
        return self.batch_ndim + axis if axis >= 0 else self.value.ndim + axis

    # -- ring operations (exact over F_p and in floating point) ---------------------------
    def _product(self, other, product) -> "Dual":
        """A bilinear ``product`` of the field (``mul`` or ``matmul``), by the Leibniz rule
        d(x y) = dx y + x dy."""
        other = self._wrap(other)
        value = product(self.value, other.value)
        nd = value.ndim
        terms = [None if self.tangent is None
                 else product(_lift(self.tangent, self.value.ndim, nd), other.value),
                 None if other.tangent is None
                 else product(self.value, _lift(other.tangent, other.value.ndim, nd))]
        return self._result(value, terms, other)

    def __matmul__(self, other) -> "Dual":
        return self._product(other, self.field.matmul)

    def __rmatmul__(self, other) -> "Dual":
        return self._wrap(other) @ self

    def __add__(self, other) -> "Dual":
        other = self._wrap(other)
        value = self.field.add(self.value, other.value)
        nd = value.ndim
        return self._result(value, [_lift(self.tangent, self.value.ndim, nd),
                                    _lift(other.tangent, other.value.ndim, nd)], other)

    __radd__ = __add__

    def __neg__(self) -> "Dual":
        return self * -1

    def __sub__(self, other) -> "Dual":
        return self + (-self._wrap(other))

    def __rsub__(self, other) -> "Dual":
        return self._wrap(other) - self

    def __mul__(self, other) -> "Dual":
        return self._product(other, self.field.mul)

    __rmul__ = __mul__

    # -- floating-point operations (softmax) ---------------------------------------------
    def _float_only(self, what: str) -> None:
        if self.field.prime is not None:
            raise TypeError(f"{what} is not a polynomial operation; no exact Jacobian over F_p")

    def __truediv__(self, other) -> "Dual":
        self._float_only("division")
        other = self._wrap(other)
        value = self.value / other.value
        nd = value.ndim
        terms = [None if self.tangent is None
                 else _lift(self.tangent, self.value.ndim, nd) / other.value,
                 None if other.tangent is None
                 else -_lift(other.tangent, other.value.ndim, nd) * (value / other.value)]
        return self._result(value, terms, other)

    def exp(self) -> "Dual":
        self._float_only("exp")
        value = np.exp(self.value)
        tangent = None if self.tangent is None else self.tangent * value
        return Dual(value, tangent, self.field, self.batch_ndim)

    def sum(self, axis: int, keepdims: bool = False) -> "Dual":
        ax = self._axis(axis)
        tangent = None if self.tangent is None else self.tangent.sum(ax + 1, keepdims=keepdims)
        return Dual(self.value.sum(ax, keepdims=keepdims), tangent, self.field, self.batch_ndim)

    def max(self, axis: int, keepdims: bool = False) -> "Dual":
        """The maximum along ``axis``; its derivative is that of the maximal entry (the
        derivative almost everywhere)."""
        self._float_only("max")
        ax = self._axis(axis)
        where = np.expand_dims(np.argmax(self.value, axis=ax), ax)
        value = np.take_along_axis(self.value, where, ax)
        tangent = None
        if self.tangent is not None:
            tangent = np.take_along_axis(self.tangent, where[None], ax + 1)
        if not keepdims:
            value = value.squeeze(ax)
            tangent = None if tangent is None else tangent.squeeze(ax + 1)
        return Dual(value, tangent, self.field, self.batch_ndim)


def residues(array, prime: int, batch_ndim: int = 0) -> Dual:
    """Exact matrices mod p (a constant Dual): ``@``, ``+``, ``-``, ``*`` and ``.T`` reduce
    mod p without int64 overflow, so model code evaluates exactly over F_p."""
    return Dual(PrimeField(prime).constant(array), None, PrimeField(prime), batch_ndim)


class _DualMath:
    """The ``module`` of :data:`DUAL_BACKEND`: the elementwise functions of a Backend."""

    @staticmethod
    def exp(x: Dual) -> Dual:
        return x.exp()

    @staticmethod
    def abs(x: Dual):
        raise TypeError("abs is not differentiable at 0; not used by the models")


#: A Backend whose operations act on :class:`Dual` numbers (NumPy spelling: ``.max(axis,
#: keepdims=True)``, ``.sum(axis=...)``), to pass to model functions that take a backend.
DUAL_BACKEND = Backend("numpy", "cpu", _DualMath)


# -- Jacobians ---------------------------------------------------------------------------
Func = Callable[[list, object, Backend], object]

#: Budget (entries) of one dual-number intermediate; parameter directions are processed in
#: chunks that keep P_chunk x N x (per-sample matrix size) below it.
CHUNK_ENTRIES = 20_000_000


def max_entries(backend: Backend | None = None) -> int:
    """The largest Jacobian (entries) accepted on ``backend``: MAX_ENTRIES on the cpu, a
    share of the device memory (float64) on CUDA."""
    memory = backend.memory_bytes if backend is not None else None
    return MAX_ENTRIES if not memory else max(MAX_ENTRIES, memory // (8 * DEVICE_SHARE))


def check_size(rows: int, n_params: int, backend: Backend | None = None) -> None:
    """BadInput (one line) when a rows x n_params Jacobian would exceed :func:`max_entries`;
    callers that know the size in advance check it before any work."""
    limit = max_entries(backend)
    if rows * n_params > limit:
        raise BadInput(f"the Jacobian would have about {rows:,} x {n_params:,} entries (limit "
                       f"{limit:,}); choose smaller dimensions or fewer --samples")


def parameter_duals(weights: Sequence[np.ndarray], field, directions: range | None = None
                    ) -> list[Dual]:
    """Each weight matrix as a Dual whose tangent is its block of the identity.

    The parameters are the entries of all weights, in order, each matrix row-major; only
    the parameter indices in ``directions`` (default: all) get a tangent axis.
    """
    sizes = [int(np.prod(np.shape(w))) for w in weights]
    directions = directions if directions is not None else range(sum(sizes))
    out, offset = [], 0
    for w, size in zip(weights, sizes):
        w = np.asarray(w)
        tangent = np.zeros((len(directions), size), dtype=w.dtype)
        mine = [k for k, p in enumerate(directions) if offset <= p < offset + size]
        tangent[mine, [directions[k] - offset for k in mine]] = 1
        out.append(Dual(field.constant(w), tangent.reshape((len(directions),) + w.shape), field))
        offset += size
    return out


def _dual_jacobian(func: Func, weights, inputs, field, backend: Backend) -> np.ndarray:
    n_params = sum(int(np.prod(np.shape(w))) for w in weights)
    if inputs is None:
        X, chunk = None, n_params
    else:
        X = Dual(field.constant(inputs), None, field, batch_ndim=1)
        per_sample = max(int(np.prod(inputs.shape[1:])), inputs.shape[-1] ** 2)
        chunk = max(1, CHUNK_ENTRIES // (inputs.shape[0] * per_sample))
    columns = []
    for start in range(0, n_params, chunk):
        directions = range(start, min(start + chunk, n_params))
        out = func(parameter_duals(weights, field, directions), X, backend)
        outs = out if isinstance(out, (list, tuple)) else [out]
        check_size(sum(o.value.size for o in outs), n_params)
        columns.append(np.concatenate(
            [np.zeros((o.value.size, len(directions)), dtype=o.value.dtype) if o.tangent is None
             else o.tangent.reshape(len(directions), -1).T for o in outs], axis=0))
    return np.ascontiguousarray(np.concatenate(columns, axis=1))


def jacobian_mod_p(func: Func, weights: Sequence[np.ndarray], inputs: np.ndarray | None,
                   prime: int) -> np.ndarray:
    """The Jacobian over F_p of W -> (func(W, X_1), ..., func(W, X_N)), int64 residues.

    ``weights``: int64 residue matrices (the point W); ``inputs``: shape=[N, d, t], or None
    for a map of the weights alone (``func`` then gets X = None).  ``func`` may return one
    Dual or a list (their entries are stacked).  Returns shape=[N * output size, P], rows
    sample-major, columns in the order of :func:`parameter_duals`.  ``func`` must be
    polynomial (``@``, ``+``, ``-``, ``*``).
    """
    inputs = None if inputs is None else np.asarray(inputs, dtype=np.int64)
    return _dual_jacobian(func, [np.asarray(w, dtype=np.int64) for w in weights], inputs,
                          PrimeField(prime), DUAL_BACKEND)


def jacobian_float(func: Func, weights: Sequence[np.ndarray], inputs: np.ndarray,
                   backend: Backend | None = None) -> np.ndarray:
    """The float64 Jacobian of W -> (func(W, X_1), ..., func(W, X_N)), as a NumPy array.

    numpy: forward-mode dual numbers.  torch / jax: ``jvp`` of the map along a chunk of
    parameter directions at a time (``vmap`` over the chunk and over the inputs), on the
    backend's device; a chunk's output holds at most CHUNK_ENTRIES entries on the cpu and
    1 / DEVICE_CHUNK_SHARE of the device memory on CUDA.  Layout as in
    :func:`jacobian_mod_p`.
    """
    backend = backend or get_backend("numpy")
    weights = [np.asarray(w, dtype=np.float64) for w in weights]
    inputs = np.asarray(inputs, dtype=np.float64)
    if backend.name == "numpy":
        return _dual_jacobian(func, weights, inputs, FloatField, DUAL_BACKEND)
    # rows estimated from the input size (outputs have d_l x t entries per sample)
    n_params = sum(w.size for w in weights)
    check_size(inputs.size, n_params, backend)
    shapes = [w.shape for w in weights]
    sizes = [w.size for w in weights]
    flat = backend.asarray(np.concatenate([w.ravel() for w in weights]))
    X = backend.asarray(inputs)
    lib = backend.library
    transforms = lib.func if backend.name == "torch" else lib

    def unflatten(vector):
        blocks, offset = [], 0
        for shape, size in zip(shapes, sizes):
            blocks.append(vector[offset:offset + size].reshape(shape))
            offset += size
        return blocks

    def outputs(vector):
        blocks = unflatten(vector)
        return transforms.vmap(lambda x: func(blocks, x, backend))(X)

    def directional(direction):
        return transforms.jvp(outputs, (flat,), (direction,))[1]

    memory = backend.memory_bytes
    budget = CHUNK_ENTRIES if not memory else max(CHUNK_ENTRIES, memory // (8 * DEVICE_CHUNK_SHARE))
    per_direction = max(int(np.prod(inputs.shape[1:])), inputs.shape[-1] ** 2) * inputs.shape[0]
    chunk = max(1, budget // per_direction)
    columns, start = [], 0
    while start < n_params:
        basis = np.zeros((min(chunk, n_params - start), n_params))
        basis[np.arange(basis.shape[0]), start + np.arange(basis.shape[0])] = 1.0
        try:
            block = transforms.vmap(directional)(backend.asarray(basis))
            backend.synchronize(block)
        except Exception as error:
            # The chunk bounds the output; a model's intermediates (batched weight products
            # under vmap) can be larger still.  Halve the chunk on an out-of-memory error.
            if chunk == 1 or not backend.is_out_of_memory(error):
                raise
            block = None
            backend.release_memory()
            chunk //= 2
            continue
        columns.append(backend.to_numpy(block).reshape(basis.shape[0], -1).T)
        start += basis.shape[0]
    return np.ascontiguousarray(np.concatenate(columns, axis=1))


def exact_rank(jacobian: np.ndarray, prime: int) -> int:
    """Rank over F_p (python-flint nmod_mat)."""
    return rank_mod_p(jacobian, prime)


# -- numerical rank ------------------------------------------------------------------------
#: Assumed bound on the entrywise relative rounding error of a float64 Jacobian, in units of
#: the machine epsilon (forward-mode products, exp and quotients of softmax attention).
ROUNDING_UNITS = 256
#: A singular value must exceed the rounding bound by this factor to count as clearly
#: nonzero; values between the bound and this multiple make the rank unclear.
CLEAR_MARGIN = 1e3


class UnclearRank(BadInput):
    """Floating-point evidence that decides nothing: a singular value in the grey zone."""


@dataclass(frozen=True)
class NumericalRank:
    """The rank of a float64 matrix read off its singular values.

    ``relative``: sigma_k / sigma_1, descending.  ``tolerance``: the rounding bound tau /
    sigma_1.  ``rank``: the number of sigma_k > tau.  ``clear``: no singular value lies in
    the grey zone (tau, CLEAR_MARGIN * tau].  ``gap``: sigma_rank / sigma_(rank+1) (inf when
    nothing was dropped).
    """

    rank: int
    relative: tuple
    tolerance: float
    clear: bool
    shape: tuple

    @property
    def kept_min(self) -> float:
        return self.relative[self.rank - 1] if self.rank else 0.0

    @property
    def dropped_max(self) -> float:
        return self.relative[self.rank] if self.rank < len(self.relative) else 0.0

    @property
    def gap(self) -> float:
        return self.kept_min / self.dropped_max if self.dropped_max > 0 else math.inf

    def require_clear(self, what: str) -> None:
        """Raise UnclearRank unless the gap separates the rank clearly."""
        if not self.clear:
            grey = [x for x in self.relative if self.tolerance < x <= CLEAR_MARGIN * self.tolerance]
            raise UnclearRank(
                f"{what}: no clear singular-value gap ({len(grey)} value(s) sigma/sigma_1 in "
                f"({self.tolerance:.1e}, {CLEAR_MARGIN * self.tolerance:.1e}]); the float64 "
                "evidence decides nothing: change --seed or --samples")

    def evidence(self) -> dict:
        """Fields that are reproducible across machines (noise-level values are below 1e-12)."""
        return {"matrix_shape": list(self.shape), "numerical_rank": self.rank,
                "tolerance_relative": self.tolerance,
                "sigma_kept_min_relative": self.kept_min,
                "sigma_dropped_max_relative": self.dropped_max,
                "grey_zone": [self.tolerance, self.tolerance * CLEAR_MARGIN],
                "gap_clear": self.clear}


def singular_values(matrix, backend: Backend | None = None) -> np.ndarray:
    """Singular values, descending, computed on ``backend`` (its device) in float64.

    On torch / jax a matrix with more than twice as many rows as columns is first reduced to
    the triangular factor R of its QR decomposition (same singular values; Householder QR
    is backward stable), as LAPACK's driver does on the cpu: the SVD then works on a
    P x P matrix instead of N d t x P.  Threads: :func:`attngeom.kernels.threads.for_work` (more
    than one only for a large matrix, on the cores free now).
    """
    backend = backend or get_backend("numpy")
    with for_work(svd_work(np.shape(matrix))):
        return _singular_values(matrix, backend)


def _singular_values(matrix, backend: Backend) -> np.ndarray:
    if backend.name == "numpy":
        return np.linalg.svd(np.asarray(matrix, dtype=np.float64), compute_uv=False)
    array = backend.asarray(matrix)
    if array.shape[0] > 2 * array.shape[1]:
        array = backend.module.linalg.qr(array, mode="r")
        array = array.R if backend.name == "torch" else array
    if backend.name == "torch":
        values = backend.module.linalg.svdvals(array)
    else:
        values = backend.module.linalg.svd(array, compute_uv=False)
    backend.synchronize()
    return backend.to_numpy(values)


def numerical_rank(matrix, backend: Backend | None = None) -> NumericalRank:
    """The numerical rank of a float64 matrix with an explicit, sound decision rule.

    If every entry carries a relative rounding error of at most u = ROUNDING_UNITS * eps,
    the perturbation E satisfies ||E||_2 <= ||E||_F <= u ||J||_F <= u sqrt(n) sigma_1 with
    n = min(rows, columns); by Weyl's inequality each computed singular value is within
    ||E||_2 of the exact one.  So with tau = u sqrt(n) sigma_1: a computed sigma_k > tau
    proves sigma_k(exact) > 0, and the values <= tau are what exact zeros look like after
    rounding.  The rank is called clear only if nothing lies in (tau, 1e3 tau], which leaves
    three orders of magnitude for the error bound itself to be optimistic.  That the small
    values are exact zeros (rather than tiny) is not decided here: callers compare the rank
    with an exact upper bound (e.g. the dimension of a symmetry orbit).
    """
    shape = tuple(np.shape(matrix))
    sigma = singular_values(matrix, backend)
    n = min(shape) if shape else 0
    if n == 0 or sigma[0] == 0:
        return NumericalRank(0, tuple(np.zeros(n)), 0.0, True, shape)
    relative = sigma / sigma[0]
    tolerance = ROUNDING_UNITS * np.finfo(np.float64).eps * math.sqrt(n)
    rank = int(np.sum(relative > tolerance))
    grey = (relative > tolerance) & (relative <= CLEAR_MARGIN * tolerance)
    return NumericalRank(rank, tuple(float(x) for x in relative), float(tolerance),
                         not bool(grey.any()), shape)

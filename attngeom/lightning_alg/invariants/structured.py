"""Families of polynomials evaluated as programs, never expanded (ADM §5.3–5.4).

The Veronese-type invariants of ADM Thm 30 are products of r x r determinants of the
coordinates (degree 2r, up to 2 (r!)^2 terms), and the resultant quartics of ADM Thm 40
are compositions of a fixed polynomial with linear forms in the coordinates.  Expanding
them is pointless for checking: a member is evaluated the way it is defined, with one of
three arithmetics that share one interface (``take``, ``mul``, ``sub``, ``det``, ...):

* :class:`ObjectArithmetic` -- exact Python objects in NumPy object arrays: elements of a
  SymPy polynomial ring (symbolic proofs, and the expanded polynomials that ``show``
  prints, obtained by evaluating at the ring's generators) or rationals (witnesses);
* :class:`ModPArithmetic` -- int64 residues mod p < 2^31 (exact verification): the
  arithmetic of :class:`attngeom.kernels.primefield.PrimeField` (also that of the exact Jacobians),
  with batched determinants by Gaussian elimination (:func:`attngeom.kernels.primefield.det_mod_p`);
* :class:`FloatArithmetic` -- float64 on any backend, every value carrying an error scale
  (a bound on the sizes that rounding errors are relative to; see the class docstring).

Shapes: a batch of B points has coordinates ``y`` of shape [B, N + 1] (column N is the
constant 0, used to pad matrices), weights ``A`` [B, d*d] and ``V`` [B, d'*d], flattened
row-major.  A family yields its member values in chunks of shape [B, P_chunk].

:func:`check_vanishing` decides "every member vanishes on mu(W)" (or "the identity holds")
and :func:`check_nontrivial` decides "no member is the zero polynomial", with the
verdict constructors of :mod:`attngeom.core.verdict`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from itertools import permutations
from typing import Any, Iterator, NamedTuple

import numpy as np
from sympy import QQ
from sympy.polys.rings import ring

from attngeom.kernels.backend import Backend, get_backend
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.kernels.monomials import sum_terms_mod_p
from attngeom.kernels.polyeval import CompiledFamily
from attngeom.kernels.primefield import PrimeField
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, consistent, proved, refuted, verified
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariant import format_polynomial
from attngeom.lightning_alg.parametrization import (
    Parametrization, WeightBatch, sample_weights_float, sample_weights_integer,
    sample_weights_mod_p, symbolic_weights, uses_query_key, weight_degree)

DEFAULT_EXACT_POINTS = 6
DEFAULT_NUMERIC_POINTS = 16
#: Random points of F_p^N (off the variety) at which every member must be nonzero once.
NONTRIVIAL_POINTS = 3
#: Members evaluated at once, times the batch size (bounds the memory of one chunk).
CHUNK_ENTRIES = 1 << 21

#: Relative residual |value| / scale accepted in float64.  A determinant of order r <= 6
#: computed by LU with partial pivoting is exact for a matrix perturbed by about
#: r * growth * eps relative to its entries (growth <= 2^(r-1)), so its absolute error is
#: below ~ 6 * 32 * 2.2e-16 ~ 4e-14 times the Hadamard bound of the entry scales; a
#: member combines at most a few dozen such products, so honest residuals stay below
#: ~1e-12.  1e-9 leaves three orders of margin; members off the variety sit near 1e-3 .. 1.
NUMERIC_TOLERANCE = 1e-9


# -- determinants ---------------------------------------------------------------------

def permutation_signs(r: int):
    """(permutation of range(r), its sign +-1), every permutation in lexicographic order."""
    for perm in permutations(range(r)):
        inversions = sum(perm[i] > perm[k] for i in range(r) for k in range(i + 1, r))
        yield perm, -1 if inversions % 2 else 1


def det_leibniz(matrices: np.ndarray) -> np.ndarray:
    """Determinants of object matrices (ring elements, rationals), shape=[..., r, r],
    by the Leibniz formula (r! signed products; used for r <= 6)."""
    total = None
    for perm, sign in permutation_signs(matrices.shape[-1]):
        term = matrices[..., 0, perm[0]]
        for i in range(1, len(perm)):
            term = term * matrices[..., i, perm[i]]
        if total is None:
            total = term if sign > 0 else -term
        else:
            total = total + term if sign > 0 else total - term
    return total


# -- the three arithmetics ------------------------------------------------------------

class _NumpyBatch:
    """``take`` and ``concat`` of NumPy batches (axis 0 the points, axis 1 the members)."""

    def take(self, x, index):
        return x[:, index]

    def concat(self, parts):
        return np.concatenate(parts, axis=1)


class ObjectArithmetic(_NumpyBatch):
    """Exact arithmetic on object arrays of ring elements or rationals."""

    name = "exact"

    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b

    def scale(self, a, constants):
        return a * np.asarray(constants, dtype=np.int64).astype(object)

    def sum(self, x, axis: int):
        return x.sum(axis=axis)

    def det(self, matrices):
        return det_leibniz(matrices)

    def polynomials(self, compiled: CompiledFamily, points):
        """Values of compiled polynomials at object points, shape=[B, P]."""
        batch = points.shape[0]
        padded = np.concatenate([points, np.ones((batch, 1), dtype=np.int64).astype(object)], axis=1)
        monomials = padded[:, compiled.monomials[:, 0]]
        for k in range(1, compiled.monomials.shape[1]):
            monomials = monomials * padded[:, compiled.monomials[:, k]]
        out = np.zeros((batch, compiled.n_polynomials), dtype=object)
        for m, j, c in compiled.entries:
            out[:, j] = out[:, j] + monomials[:, m] * (c if c.denominator != 1 else c.numerator)
        return out

    def nonzero(self, values) -> np.ndarray:
        return np.vectorize(bool, otypes=[bool])(values) if values.size else np.zeros(values.shape, bool)


class ModPArithmetic(_NumpyBatch, PrimeField):
    """int64 residues mod a prime p < 2^31: every product of two residues fits in int64.

    The elementwise arithmetic and the batched determinants are those of
    :class:`attngeom.kernels.primefield.PrimeField`; this adds the batch operations of the families.
    """

    name = "mod p"

    def polynomials(self, compiled: CompiledFamily, points):
        return compiled.evaluate_mod_p(points, self.prime)

    def nonzero(self, values) -> np.ndarray:
        return values != 0


class FloatValue(NamedTuple):
    """A float64 value and its error scale (same shape, on the same backend)."""

    value: Any
    scale: Any


class FloatArithmetic:
    """float64 values with error scales, on any backend.

    The scale of an input is the sum of the absolute values of the terms it was computed
    from; sums add scales, products multiply them, and a determinant gets the Hadamard
    bound prod_rows ||row of scales||_2 (which bounds |det| and the rounding error of LU
    relative to the entries).  |value| / scale is the relative residual of
    :data:`NUMERIC_TOLERANCE`.
    """

    name = "float64"

    def __init__(self, backend: Backend):
        self.backend = backend

    def take(self, x: FloatValue, index):
        index = self.backend.asarray(index, "int64")
        return FloatValue(x.value[:, index], x.scale[:, index])

    def add(self, a, b):
        return FloatValue(a.value + b.value, a.scale + b.scale)

    def sub(self, a, b):
        return FloatValue(a.value - b.value, a.scale + b.scale)

    def mul(self, a, b):
        return FloatValue(a.value * b.value, a.scale * b.scale)

    def scale(self, a, constants):
        c = self.backend.asarray(constants)
        return FloatValue(a.value * c, a.scale * self.backend.abs(c))

    def sum(self, x, axis: int):
        return FloatValue(self.backend.sum(x.value, axis), self.backend.sum(x.scale, axis))

    def concat(self, parts):
        return FloatValue(self.backend.concat([p.value for p in parts], 1),
                          self.backend.concat([p.scale for p in parts], 1))

    def det(self, matrices: FloatValue):
        be = self.backend
        row_norms = be.module.sqrt(be.sum(matrices.scale * matrices.scale, -1))
        bound = row_norms[..., 0]
        for k in range(1, row_norms.shape[-1]):
            bound = bound * row_norms[..., k]
        return FloatValue(be.module.linalg.det(matrices.value), bound)

    def polynomials(self, compiled: CompiledFamily, points: FloatValue):
        values, _ = compiled.evaluate_float(points.value, self.backend)
        _, scales = compiled.evaluate_float(points.scale, self.backend)
        return FloatValue(values, scales)

    def relative(self, x: FloatValue) -> np.ndarray:
        value, scale = self.backend.to_numpy(x.value), self.backend.to_numpy(x.scale)
        return np.abs(value) / np.maximum(scale, np.finfo(float).tiny)


# -- points ---------------------------------------------------------------------------

@dataclass
class Point:
    """A batch of points in one arithmetic: coordinates y (zero-padded) and weights A, V."""

    y: Any
    A: Any = None
    V: Any = None

    @property
    def batch(self) -> int:
        return (self.y.value if isinstance(self.y, FloatValue) else self.y).shape[0]


def padded(y: np.ndarray) -> np.ndarray:
    """Coordinates y (shape=[B, N], NumPy) with the zero column N appended, in y's dtype:
    the ``y`` of a :class:`Point` (index N is the padding of matrices and unused terms)."""
    return np.concatenate([y, np.zeros((y.shape[0], 1), dtype=y.dtype)], axis=1)


def symbolic_point(coords: CoordinateSystem, a: int) -> Point:
    """mu(W) with generic weights: elements of QQ[A, V] (or QQ[Q, K, V] when a < d)."""
    _, y = Parametrization(coords).symbolic(a)
    _, A, V = symbolic_weights(coords.d, coords.dprime, a)
    row = lambda nested: np.array([[x for line in nested for x in line]], dtype=object)
    return Point(padded(np.array([y], dtype=object)), row(A), row(V))


def generic_point(coords: CoordinateSystem, indices) -> tuple[Any, Point]:
    """(ring, point) with y the generators of QQ[y_c : c in indices] and 0 elsewhere:
    evaluating a family there gives its members as polynomials in the coordinates."""
    indices = sorted(set(int(c) for c in indices))
    R, *gens = ring([coords.symbols[c] for c in indices], QQ)
    y = np.zeros((1, len(coords) + 1), dtype=object)
    for c, g in zip(indices, gens):
        y[0, c] = g
    return R, Point(y)


def modular_generic_point(coords: CoordinateSystem, indices, prime: int) -> Point | None:
    """The point of :func:`generic_point` with y the generators of F_p[y_c : c in indices]
    (python-flint's nmod_mpoly, in the order of ``indices``), or None where this python-flint
    has no multivariate polynomials over F_p (before 0.7)."""
    try:
        from flint import nmod_mpoly_ctx
        context = nmod_mpoly_ctx.get(tuple(f"y{c}" for c in indices), modulus=prime)
    except (ImportError, AttributeError, TypeError):
        return None
    y = np.zeros((1, len(coords) + 1), dtype=object)
    for c, g in zip(indices, context.gens()):
        y[0, c] = g
    return Point(y)


def _terms_mod_p(value, prime: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(exponents [T, n], coefficients mod p [T]) of a nonzero polynomial over QQ (SymPy) or
    F_p (nmod_mpoly), or None for zero and for constants that are not ring elements."""
    if hasattr(value, "monoms") and not hasattr(value, "items"):   # nmod_mpoly (SymPy's
        coeffs = [int(c) for c in value.coeffs()]                    # elements are dicts)
        if not coeffs:
            return None
        exponents = np.array(value.monoms(), dtype=np.int64).reshape(len(coeffs), -1)
        return exponents, np.array(coeffs, dtype=np.int64)
    if not hasattr(value, "items") or not value:
        return None
    exponents = np.array(list(value.keys()), dtype=np.int64).reshape(len(value), -1)
    return exponents, np.array([int(c.numerator) * pow(int(c.denominator), -1, prime) % prime
                                for c in value.values()], dtype=np.int64)


def modular_point(coords: CoordinateSystem, weights: WeightBatch) -> Point:
    y = Parametrization(coords).evaluate_mod_p(weights)
    batch = weights.A.shape[0]
    return Point(padded(y), weights.A.reshape(batch, -1), weights.V.reshape(batch, -1))


def rational_point(coords: CoordinateSystem, weights: WeightBatch, a: int) -> Point:
    """mu(W) over Q at integer weights (one point), evaluated from the symbolic mu."""
    _, y = Parametrization(coords).symbolic(a)
    flat = (weights.Q[0].ravel().tolist() + weights.K[0].ravel().tolist()
            if uses_query_key(coords.d, a) else weights.A[0].ravel().tolist())
    flat = [int(x) for x in flat + weights.V[0].ravel().tolist()]
    values = np.array([[Fraction(str(c(*flat))) for c in y]], dtype=object)
    as_objects = lambda arr: np.asarray(arr[0], dtype=np.int64).ravel().astype(object)[None, :]
    return Point(padded(values), as_objects(weights.A), as_objects(weights.V))


def float_point(coords: CoordinateSystem, weights: WeightBatch, backend: Backend) -> Point:
    """mu(W) in float64 with scales mu(|A|, |V|) (the sums of absolute terms)."""
    param = Parametrization(coords)
    abs_A = (np.einsum("bri,brj->bij", np.abs(weights.K), np.abs(weights.Q))
             if weights.Q is not None else np.abs(weights.A))
    be = backend
    y = param.evaluate_float(be.asarray(weights.A), be.asarray(weights.V), be)
    y_scale = param.evaluate_float(be.asarray(abs_A), be.asarray(np.abs(weights.V)), be)
    batch = weights.A.shape[0]
    zero = be.asarray(np.zeros((batch, 1)))
    flat = lambda x: be.asarray(x.reshape(batch, -1))
    return Point(FloatValue(be.concat([y, zero], 1), be.concat([y_scale, zero], 1)),
                 FloatValue(flat(weights.A), flat(abs_A)),
                 FloatValue(flat(weights.V), flat(np.abs(weights.V))))


# -- families -------------------------------------------------------------------------

class StructuredFamily(ABC):
    """P polynomials (in y, or identities in y and the weights) given by a program.

    Subclasses evaluate all members in any arithmetic (``chunks``), describe a member,
    and restrict the family to one member (for witnesses and printing).
    """

    #: what the members are, e.g. "catalecticant 2x2 minors (ADM Thm 30)"
    name: str = ""
    #: whether members are polynomials in y only (invariants) or identities in the weights
    uses_weights: bool = False
    #: whether a counterexample prints the member expanded (off for dense members, whose
    #: printing through SymPy takes far longer than the check)
    witness_polynomial: bool = True
    #: whether ``chunks`` uses ring operations and integer constants only (no rationals), so
    #: that :meth:`expand_mod_p` may evaluate it over F_p[y] (python-flint's nmod_mpoly)
    #: instead of QQ[y] (SymPy) and reduce: the same residues, several times faster
    integer_program: bool = False

    @property
    @abstractmethod
    def size(self) -> int:
        """Number of members P."""

    @property
    @abstractmethod
    def degree(self) -> int:
        """Largest degree of a member in y."""

    @abstractmethod
    def chunks(self, point: Point, arith) -> Iterator[tuple[int, Any]]:
        """Yield (offset, values of members offset .. offset + k - 1, shape=[B, k])."""

    @abstractmethod
    def describe(self, index: int) -> dict:
        """What picks member ``index`` out of the family (JSON-ready)."""

    @abstractmethod
    def restrict(self, index: int) -> "StructuredFamily":
        """The family whose only member is member ``index``."""

    def variables(self) -> list[int]:
        """Coordinate indices the members involve (for :meth:`expand`)."""
        raise NotImplementedError

    def expand(self, coords: CoordinateSystem) -> list:
        """Every member as a SymPy expression in the coordinate symbols."""
        _, point = generic_point(coords, self.variables())
        out = []
        for _, values in self.chunks(point, ObjectArithmetic()):
            out.extend(v.as_expr() if hasattr(v, "as_expr") else v for v in values[0])
        return out

    def printable_terms(self, index: int) -> int:
        """An upper bound on the number of terms of member ``index`` when expanded."""
        return 0

    def expand_mod_p(self, coords: CoordinateSystem, prime: int) -> dict[int, tuple]:
        """Every member expanded over F_p, by degree: degree -> (member, rows, coefficients),
        one entry per term, ``rows`` the sorted coordinate indices of the term's monomial
        (shape=[T, degree]), coefficients nonzero residues.  Evaluated at the generators of
        F_p[y] (python-flint) where the family is an :attr:`integer_program`, else of QQ[y]
        like :meth:`expand` and reduced mod p; the ring elements read term by term (no SymPy
        expressions).  BadInput when a member is not homogeneous."""
        indices = sorted(set(int(c) for c in self.variables()))
        point = modular_generic_point(coords, indices, prime) if self.integer_program else None
        if point is None:
            _, point = generic_point(coords, indices)
        generators = np.array(indices, dtype=np.int64)
        terms: dict[int, tuple[list, list, list]] = {}
        for offset, values in self.chunks(point, ObjectArithmetic()):
            for j, value in enumerate(values[0]):
                read = _terms_mod_p(value, prime)
                if read is None:
                    continue
                exponents, coeffs = read
                degrees = exponents.sum(axis=1)
                if np.any(degrees != degrees[0]):
                    raise BadInput(f"{self.name}: member {offset + j + 1} is not homogeneous "
                                   f"(degrees {sorted(set(degrees.tolist()))})")
                degree = int(degrees[0])
                rows = np.repeat(np.tile(generators, len(exponents)),
                                 exponents.ravel()).reshape(len(exponents), degree)
                member, row_list, coeff_list = terms.setdefault(degree, ([], [], []))
                member.append(np.full(len(rows), offset + j, dtype=np.int64))
                row_list.append(rows)
                coeff_list.append(coeffs)
        return {degree: sum_terms_mod_p(np.concatenate(member), np.concatenate(rows),
                                        np.concatenate(coeffs), prime)
                for degree, (member, rows, coeffs) in sorted(terms.items())}


def chunk_length(batch: int) -> int:
    """Members per chunk, so that one chunk holds about CHUNK_ENTRIES values."""
    return max(1, CHUNK_ENTRIES // max(batch, 1))


def chunk_bounds(count: int, batch: int) -> Iterator[tuple[int, int]]:
    """[start, stop) ranges of ``count`` members in chunks of :func:`chunk_length`."""
    step = chunk_length(batch)
    for start in range(0, count, step):
        yield start, min(count, start + step)


# -- decisions ------------------------------------------------------------------------

#: Members whose expansion is at most this many terms are printed in counterexamples.
WITNESS_TERMS = 20_000


def _witness(family: StructuredFamily, index: int, coords, a, context, extra: dict) -> dict:
    out = {"member": family.describe(index)}
    single = family.restrict(index)
    if (not family.uses_weights and family.witness_polynomial
            and family.printable_terms(index) <= WITNESS_TERMS):
        out["polynomial"] = format_polynomial(single.expand(coords)[0], coords, "m2")
    sampler = context.sampler.spawn(7)
    for _ in range(20):
        weights = sample_weights_integer(sampler, 1, coords.d, coords.dprime, a)
        _, values = next(single.chunks(rational_point(coords, weights, a), ObjectArithmetic()))
        if values[0, 0] != 0:
            out.update(field="Q", weights=weights.point(0), value=str(values[0, 0]))
            return out
    out.update(extra)
    return out


def _first_nonzero(mask: np.ndarray):
    """(point, member) of the first True in a [B, k] mask, member-major; None if none."""
    hits = np.nonzero(mask.any(axis=0))[0]
    if not hits.size:
        return None
    j = int(hits[0])
    return int(np.nonzero(mask[:, j])[0][0]), j


def check_vanishing(family: StructuredFamily, coords: CoordinateSystem, a: int, method: str,
                    context: CheckContext, prime: int = DEFAULT_PRIME) -> Verdict:
    """Decide whether every member vanishes at mu(W) (invariants) or holds (identities).

    symbolic: exact evaluation in QQ[weights] at generic weights -> ``proved``;
    exact: N random weight points over F_p -> ``verified`` with the Schwartz–Zippel bound
    P (deg/p)^N, deg = degree in y x (2 in (A, V), 3 in (Q, K, V));
    numeric: float64 relative residuals below :data:`NUMERIC_TOLERANCE` -> ``consistent``.
    """
    what = "identities hold" if family.uses_weights else "members vanish on mu(W)"
    if method == "symbolic":
        arith = ObjectArithmetic()
        weights_ring = "QQ[Q, K, V]" if uses_query_key(coords.d, a) else "QQ[A, V]"
        for offset, values in family.chunks(symbolic_point(coords, a), arith):
            hit = _first_nonzero(arith.nonzero(values))
            if hit:
                j = offset + hit[1]
                residual = values[hit]
                return refuted(method="symbolic", checked=family.size, summary=(
                    f"{family.name}: member {j + 1} is not zero in {weights_ring}: "
                    f"{len(residual)} terms remain"),
                    counterexample=_witness(family, j, coords, a, context, {
                        "field": "Q", "residual": str(residual.as_expr())[:2000]}))
        return proved(checked=family.size, summary=(
            f"{family.name}: all {family.size} {what} in {weights_ring} (exact evaluation "
            f"at generic weights)"),
            evidence={"ring": weights_ring, "members": family.size})
    if method == "exact":
        points = context.samples or DEFAULT_EXACT_POINTS
        weights = sample_weights_mod_p(context.sampler, points, coords.d, coords.dprime, a, prime)
        arith = ModPArithmetic(prime)
        for offset, values in family.chunks(modular_point(coords, weights), arith):
            hit = _first_nonzero(arith.nonzero(values))
            if hit:
                b, j = hit[0], offset + hit[1]
                return refuted(method="exact", checked=family.size, summary=(
                    f"{family.name}: member {j + 1} is nonzero at a random point over F_{prime}"),
                    counterexample=_witness(family, j, coords, a, context, {
                        "field": f"F_{prime}", "prime": prime, "weights": weights.point(b),
                        "value_mod_p": int(values[hit])}))
        degree = family.degree * weight_degree(coords.d, a)
        return verified(checked=family.size, degree=degree, prime=prime, points=points,
                        members=max(family.size, 1), summary=(
                            f"{family.name}: all {family.size} {what} at {points} random "
                            f"points over F_{prime}"),
                        evidence={"note": "bound for the reduction mod p (union bound over "
                                  "members); all coefficients are integers",
                                  "weights_mod_p": [weights.point(b) for b in range(points)]})
    backend = get_backend(context.backend, context.device)
    arith = FloatArithmetic(backend)
    points = context.samples or DEFAULT_NUMERIC_POINTS
    weights = sample_weights_float(context.sampler, points, coords.d, coords.dprime, a)
    worst, where = 0.0, None
    for offset, values in family.chunks(float_point(coords, weights, backend), arith):
        relative = arith.relative(values)
        if relative.size and relative.max() > worst:
            b, j = np.unravel_index(np.argmax(relative), relative.shape)
            worst, where = float(relative.max()), (int(b), offset + int(j))
    evidence = {"points": points, "tolerance_reason": "LU rounding bound relative to the "
                "Hadamard scale, see invariants.structured.NUMERIC_TOLERANCE"}
    if worst > NUMERIC_TOLERANCE:
        b, j = where
        return refuted(method="numeric", checked=family.size, max_residual=worst,
                       backend=backend.name, device=backend.device, evidence=evidence,
                       summary=f"{family.name}: member {j + 1} has relative residual "
                               f"{worst:.3g} > {NUMERIC_TOLERANCE:g}",
                       counterexample=_witness(family, j, coords, a, context, {
                           "field": "float64", "weights": weights.point(b),
                           "relative_residual": worst}))
    if not family.uses_weights:
        evidence["control_min_relative"] = _float_control(family, coords, backend, context, points)
    return consistent(checked=family.size, max_residual=worst, tolerance=NUMERIC_TOLERANCE,
                      backend=backend.name, device=backend.device, evidence=evidence,
                      summary=f"{family.name}: largest relative residual {worst:.2e} over "
                              f"{points} float64 points")


def _float_control(family, coords, backend, context, points: int) -> float:
    """Smallest relative value of the members at random y off the variety (separation).

    The batch has the size of the main one, so shape-compiling backends (jax) reuse
    their kernels."""
    arith = FloatArithmetic(backend)
    y = context.sampler.spawn(13).floats((points, len(coords)))
    y = padded(y)
    point = Point(FloatValue(backend.asarray(y), backend.asarray(np.abs(y))))
    smallest = np.inf
    for _, values in family.chunks(point, arith):
        relative = arith.relative(values)
        if relative.size:
            smallest = min(smallest, float(relative.max(axis=0).min()))
    return smallest


def check_nontrivial(family: StructuredFamily, coords: CoordinateSystem, context: CheckContext,
                     prime: int = DEFAULT_PRIME) -> Verdict:
    """Every member is a nonzero polynomial: each is nonzero at some random point of F_p^N.

    A nonzero value mod p at one point proves the integer polynomial nonzero, so this
    is exact (``proved``); a member zero at all points is reported ``refuted``, since a
    family of degree-k invariants must not contain the zero polynomial.
    """
    arith = ModPArithmetic(prime)
    y = context.sampler.spawn(17).prime_field((NONTRIVIAL_POINTS, len(coords)), prime)
    point = Point(padded(y))
    seen = 0
    for offset, values in family.chunks(point, arith):
        alive = arith.nonzero(values).any(axis=0)
        seen += int(alive.sum())
        dead = np.nonzero(~alive)[0]
        if dead.size:
            j = offset + int(dead[0])
            return refuted(method="exact", checked=family.size, summary=(
                f"{family.name}: member {j + 1} vanishes at {NONTRIVIAL_POINTS} random points "
                f"of F_{prime}^{len(coords)}: it is (almost surely) the zero polynomial"),
                counterexample={"member": family.describe(j), "field": f"F_{prime}",
                                "points": y.tolist()})
    if seen != family.size:
        raise RuntimeError(f"{family.name}: the chunks gave values of {seen} members, the "
                           f"family has {family.size}")
    return proved(method="exact", checked=family.size, summary=(
        f"{family.name}: all {family.size} members are nonzero polynomials (each is nonzero "
        f"at one of {NONTRIVIAL_POINTS} random points of F_p^N)"),
        evidence={"prime": prime, "points": NONTRIVIAL_POINTS})

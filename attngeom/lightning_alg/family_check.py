"""Does a family of polynomials vanish on the attention variety?  Three ways to decide.

* :func:`prove_family` -- substitute mu(W) symbolically (SymPy sparse polynomials over QQ
  in the weights) and expand: zero for every member is a proof (``proved``).
* :func:`verify_family_exact` -- evaluate at N uniform random weight points over F_p
  (p = 2^31 - 1): zero everywhere is ``verified`` with the Schwartz–Zippel bound
  P (D/p)^N, D = deg_y x (2 in (A, V) or 3 in (Q, K, V)).
* :func:`check_family_numeric` -- float64 on numpy / torch / jax: every relative residual
  |f(mu(W))| / sum_terms |c m(mu(W))| below the tolerance is ``consistent``.

A member that does not vanish gives ``refuted`` with a re-checkable witness: small
integer weights and the exact rational value where one is found, else the F_p point.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from attngeom.kernels.backend import get_backend
from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.kernels.polyeval import CompiledFamily, compile_polynomials
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, consistent, proved, refuted, verified
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariant import format_polynomial
from attngeom.lightning_alg.parametrization import (
    Parametrization, sample_weights_float, sample_weights_integer, sample_weights_mod_p,
    uses_query_key, weight_degree)

#: Relative residual accepted in float64.  Each term c m(mu(W)) of a member of degree
#: k <= 8 is a product of at most k coordinates, each a sum of at most six products,
#: so it carries a relative error below ~ (6 + k) eps; cancellation across T <= 10^4
#: terms leaves an absolute error below ~ T (6 + k) eps * scale ~ 3e-11 * scale in the
#: worst case and about sqrt(T) times less in practice.  1e-9 stays above that bound,
#: while a non-invariant (the controls) sits at relative size 1e-3 .. 1.
NUMERIC_TOLERANCE = 1e-9

#: Most terms (an upper bound, before cancellation) the symbolic check of a polynomial
#: the user typed may multiply out: a few seconds to a minute of ring arithmetic.
MAX_SUBSTITUTED_TERMS = 2_000_000

DEFAULT_EXACT_POINTS = 6
DEFAULT_NUMERIC_POINTS = 64


def _polys(members) -> list:
    return [getattr(m, "poly", m) for m in members]


def compile_family(members, coords: CoordinateSystem) -> CompiledFamily:
    return compile_polynomials(_polys(members), coords.symbol_index)


def _rational_values(compiled: CompiledFamily, point: list[Fraction]) -> list[Fraction]:
    """Exact values of every member at one point of Q^N (tiny families or witnesses)."""
    values = [Fraction(0)] * compiled.n_polynomials
    monomial_values = []
    for row in compiled.monomials:
        prod = Fraction(1)
        for var in row:
            if var < compiled.n_variables:
                prod *= point[var]
        monomial_values.append(prod)
    for m, j, c in compiled.entries:
        values[j] += c * monomial_values[m]
    return values


def _integer_witness(compiled: CompiledFamily, member: int, coords: CoordinateSystem, a: int,
                     context: CheckContext, tries: int = 40) -> dict | None:
    """Small integer weights at which ``member`` is nonzero, with its exact value."""
    param = Parametrization(coords)
    sampler = context.sampler.spawn(7)
    for _ in range(tries):
        w = sample_weights_integer(sampler, 1, coords.d, coords.dprime, a)
        v = w.V[0][param.out_row[:, None], param.p1]
        c = (v * w.A[0][param.p2, param.p3] * param.mask).sum(axis=1)
        point = [Fraction(int(ci), int(o)) for ci, o in zip(c, param.orbit)]
        value = _rational_values(compiled, point)[member]
        if value != 0:
            return {"field": "Q", "weights": w.point(0), "value": str(value)}
    return None


def _witness(compiled, member, members, coords, a, context, fallback: dict) -> dict:
    found = _integer_witness(compiled, member, coords, a, context)
    out = {"polynomial": format_polynomial(_polys(members)[member], coords, "m2")}
    out.update(found or fallback)
    return out


def prove_family(members, coords: CoordinateSystem, a: int, context: CheckContext) -> Verdict:
    """Expand every member with mu(W) substituted, in QQ[A, V] (or QQ[Q, K, V] if a < d)."""
    compiled = compile_family(members, coords)
    ring, y = Parametrization(coords).symbolic(a)
    one = ring.one
    monomial_values = []
    terms_before = 0
    for row in context.progress(compiled.monomials, "expanding monomials"):
        prod = one
        for var in row:
            if var < compiled.n_variables:
                prod = prod * y[var]
        monomial_values.append(prod)
    results = [ring.zero] * compiled.n_polynomials
    for m, j, c in compiled.entries:
        term = monomial_values[m] * ring.domain.convert(c.numerator) / ring.domain.convert(c.denominator)
        terms_before += len(term)
        results[j] += term
    weights = "QQ[Q, K, V]" if uses_query_key(coords.d, a) else "QQ[A, V]"
    for j, residual in enumerate(results):
        if residual:
            shown = str(residual.as_expr())
            return refuted(method="symbolic", checked=j + 1, summary=(
                f"member {j + 1} does not vanish on mu(W): its expansion in {weights} has "
                f"{len(residual)} terms"),
                counterexample=_witness(compiled, j, members, coords, a, context, {
                    "field": "Q", "residual": shown[:2000], "residual_terms": len(residual)}))
    return proved(checked=compiled.n_polynomials, summary=(
        f"all {compiled.n_polynomials} polynomials expand to 0 in {weights} after substituting mu(W)"),
        evidence={"ring": weights, "terms_before_cancellation": terms_before,
                  "terms_after": 0, "coordinates": len(coords)})


def substituted_terms_bound(members, coords: CoordinateSystem, a: int) -> int:
    """An upper bound on the terms :func:`prove_family` multiplies out: for each monomial
    y_1 ... y_k, the least of prod |mu(y_i)| and the number of monomials of its degree k w
    in the n weights (w = 2 in (A, V), 3 in (Q, K, V)), C(n + k w - 1, k w); summed, and
    counted only up to just past MAX_SUBSTITUTED_TERMS."""
    compiled = compile_family(members, coords)
    ring, y = Parametrization(coords).symbolic(a)
    lengths, w = [len(value) for value in y], weight_degree(coords.d, a)
    total = 0
    for row in compiled.monomials:
        factors = [var for var in row if var < compiled.n_variables]
        k = len(factors) * w
        total += min(math.prod(lengths[var] for var in factors), math.comb(ring.ngens + k - 1, k))
        if total > MAX_SUBSTITUTED_TERMS:
            break
    return total


def exact_backend(context: CheckContext):
    """Exact int64 evaluation runs on NumPy (cpu) or torch (cpu or cuda)."""
    if context.backend == "jax":
        raise BadInput("exact mod-p evaluation runs on --backend numpy or torch; "
                       "jax is for --method numeric")
    return get_backend(context.backend, context.device)


def verify_family_exact(members, coords: CoordinateSystem, a: int, context: CheckContext,
                        prime: int = DEFAULT_PRIME) -> Verdict:
    """Evaluate every member at N random points of F_p^{weights}.

    The points come from NumPy's seeded sampler and are moved to the backend, so the same
    seed gives the same points, and the same verdict, on numpy and torch.
    """
    backend = exact_backend(context)
    compiled = compile_family(members, coords)
    points = context.samples or DEFAULT_EXACT_POINTS
    weights = sample_weights_mod_p(context.sampler, points, coords.d, coords.dprime, a, prime)
    y = Parametrization(coords).evaluate_mod_p(weights, backend)
    values = backend.to_numpy(compiled.evaluate_mod_p(y, prime, backend))
    degree = max(compiled.degrees, default=0) * weight_degree(coords.d, a)
    bad = np.argwhere(values != 0)
    if bad.size:
        b, j = (int(x) for x in bad[0])
        return refuted(method="exact", checked=compiled.n_polynomials, summary=(
            f"member {j + 1} is nonzero at a random point over F_{prime}"),
            counterexample=_witness(compiled, j, members, coords, a, context, {
                "field": f"F_{prime}", "prime": prime, "weights": weights.point(b),
                "value_mod_p": int(values[b, j])}))
    return verified(checked=compiled.n_polynomials, degree=degree, prime=prime, points=points,
                    members=compiled.n_polynomials, summary=(
                        f"all {compiled.n_polynomials} polynomials vanish at {points} random "
                        f"points over F_{prime}"),
                    evidence={"note": "bound for the reduction mod p of each f o mu (union bound "
                              "over members); p divides no coefficient denominator",
                              "weights_mod_p": [weights.point(b) for b in range(points)]})


def check_family_numeric(members, coords: CoordinateSystem, a: int, context: CheckContext) -> Verdict:
    """float64 evaluation on the requested backend, with controls for the separation.

    Each member's control is the member with the coefficient of its first term doubled: a
    polynomial of the same degree that does not vanish on the variety.  The smallest
    relative value of the controls is reported beside the largest residual.
    """
    backend = get_backend(context.backend, context.device)
    compiled = compile_family(members, coords)
    controls = CompiledFamily(compiled.n_variables, compiled.monomials,
                              _double_first_terms(compiled.entries), compiled.degrees)
    points = context.samples or DEFAULT_NUMERIC_POINTS
    w = sample_weights_float(context.sampler, points, coords.d, coords.dprime, a)
    y = Parametrization(coords).evaluate_float(backend.asarray(w.A), backend.asarray(w.V), backend)
    relative = []
    for family in (compiled, controls):
        values, scales = family.evaluate_float(y, backend)
        values, scales = backend.to_numpy(values), backend.to_numpy(scales)
        relative.append(np.abs(values) / np.maximum(scales, np.finfo(float).tiny))
    residual, control = relative
    worst = float(residual.max()) if residual.size else 0.0
    control_min = float(control.min()) if control.size else None
    evidence = {"points": points, "control_min_relative": control_min,
                "tolerance_reason": "float64 rounding bound, see family_check.NUMERIC_TOLERANCE"}
    if worst > NUMERIC_TOLERANCE:
        b, j = (int(x) for x in np.unravel_index(np.argmax(residual), residual.shape))
        return refuted(method="numeric", checked=compiled.n_polynomials, max_residual=worst,
                       backend=backend.name, device=backend.device, evidence=evidence,
                       summary=f"member {j + 1} has relative residual {worst:.3g} > {NUMERIC_TOLERANCE:g}",
                       counterexample=_witness(compiled, j, members, coords, a, context, {
                           "field": "float64", "weights": w.point(b), "relative_residual": worst}))
    return consistent(checked=compiled.n_polynomials, max_residual=worst,
                      tolerance=NUMERIC_TOLERANCE, backend=backend.name, device=backend.device,
                      evidence=evidence, summary=(
                          f"largest relative residual {worst:.2e} over {points} float64 points "
                          f"(controls >= {control_min:.2e})" if control_min is not None else
                          f"largest relative residual {worst:.2e} over {points} float64 points"))


def _double_first_terms(entries) -> tuple:
    seen = set()
    out = []
    for m, j, c in entries:
        out.append((m, j, 2 * c if j not in seen else c))
        seen.add(j)
    return tuple(out)


def check_family(members, coords: CoordinateSystem, a: int, method: str,
                 context: CheckContext) -> Verdict:
    """Dispatch to the symbolic, exact or numeric decision."""
    return {"symbolic": prove_family, "exact": verify_family_exact,
            "numeric": check_family_numeric}[method](members, coords, a, context)

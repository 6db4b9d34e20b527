"""Local completeness of the invariant families: is the attention variety an irreducible
component of the families' common zero set?  (The set-theoretic part of ADM §6's first
open problem; a column of ``attngeom atlas``.)

Let V be the variety (ADM Def 8, of codimension c in the N coordinates) and F a set of
polynomials in J(V), e.g. the members of degree <= K of some families.  At a point y of V
every gradient grad f(y), f in F, is normal to V, so rank J_F(y) <= c.  If
rank J_F(y) = c at a smooth point y, then the tangent space of Z(F) at y has dimension
N - c = dim V, so Z(F) is smooth of dimension dim V at y and the only component of Z(F)
through y is V: **V is an irreducible component of Z(F)**.

Computed over F_p (p = 2^31 - 1): y = mu(W) at random weights W (ADM Prop 6), checked
smooth by the rank of the Jacobian of mu there (= dim V, :mod:`.variety`); every family's
members (all that the attribution collected, or
:func:`~attngeom.lightning_alg.ideal.attribution.collect_families` with the same budget when
it did not run; never a sample: the gradients cost one pass over the terms already
expanded) are differentiated term by term,
d/dy_i (coeff * y_m1 ... y_mk) = coeff * sum_{j: m_j = i} prod_{l != j} y_ml.
An observed rank c is exact: some c x c minor of J_F o mu is a polynomial in W over Q
that is nonzero mod p at W, hence nonzero.  An observed rank below c may be bad luck:
with probability <= c (K - 1) w / p (Schwartz-Zippel on that minor, w = 2 in (A, V),
3 in (Q, K, V)), reported as ``failure_probability``.

``sufficient_sets``: the smallest sets of families (by number) whose members together reach
rank c, found by enumerating subsets by size (at most :data:`MAX_SUBSETS` rank
computations, each on the families' row bases, at most N rows each).
"""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np

from attngeom.kernels.primefield import rank_mod_p
from attngeom.core.verdict import schwartz_zippel_bound
from attngeom.lightning_alg.ideal.attribution import (
    AttributionBudget, SparseMembers, collect_families, echelon_rows)
from attngeom.lightning_alg.ideal.variety import mu_jacobian_mod_p
from attngeom.lightning_alg.parametrization import sample_weights_mod_p

#: The random stream of the points (beside the ideal's STREAM_* 1..6).
STREAM_COMPLETENESS = 11
#: Points tried until one is smooth (rank of d mu = dim V).
MAX_POINT_TRIES = 4
#: Subsets of families whose rank is computed when searching the smallest sufficient sets.
MAX_SUBSETS = 4096


def member_gradients(members: SparseMembers, point: np.ndarray, prime: int) -> np.ndarray:
    """The gradients of ``members`` at ``point`` (y mod p, shape=[N]), mod p:
    shape=[members, N]; row m is grad f_m(y) by the product rule, term by term."""
    n = len(point)
    out = np.zeros((members.count, n), dtype=np.int64)
    if not len(members.coeff):
        return out
    monomials = members.monomials
    k = monomials.shape[1]
    values = point[monomials] % prime                              # [T, k]
    # prod_{l != j} y_ml from prefix and suffix products
    prefix = np.ones_like(values)
    suffix = np.ones_like(values)
    for j in range(1, k):
        prefix[:, j] = prefix[:, j - 1] * values[:, j - 1] % prime
        suffix[:, k - 1 - j] = suffix[:, k - j] * values[:, k - j] % prime
    coeff = members.coeff[:, None] % prime
    contribution = prefix * suffix % prime * coeff % prime        # [T, k]
    np.add.at(out, (np.repeat(members.member, k), monomials.ravel()), contribution.ravel())
    return out % prime


def smooth_point(ideal, dimension: int, sampler) -> tuple[np.ndarray, int]:
    """A random point y = mu(W) of the variety mod p where rank d mu = ``dimension``
    (a smooth point of the image), and how many points were tried."""
    coords = ideal.coords
    for tries in range(1, MAX_POINT_TRIES + 1):
        weights = sample_weights_mod_p(sampler, 1, coords.d, coords.dprime, ideal.a, ideal.prime)
        if rank_mod_p(mu_jacobian_mod_p(ideal.param, weights, 0), ideal.prime) == dimension:
            return ideal.param.evaluate_mod_p(weights)[0], tries
    raise ValueError(f"no smooth point in {MAX_POINT_TRIES} random points")


def local_completeness(ideal, claims, max_degree: int, dimension: int,
                       budget_factor: float | None = 1.0) -> dict:
    """The local-completeness column of one atlas point (see the module doc): codimension,
    each family's Jacobian rank at a smooth point, the rank of all together, whether they
    reach the codimension (``complete``), the smallest sufficient sets of families, and
    the families skipped (over the budget: ``budget_factor`` x the ideal's own work, as in
    the attribution) and those outside their hypotheses (``not_applicable``)."""
    start = time.perf_counter()
    coords, prime = ideal.coords, ideal.prime
    codimension = len(coords) - dimension
    sampler = ideal.stream(STREAM_COMPLETENESS)
    point, tries = smooth_point(ideal, dimension, sampler)
    sources = getattr(ideal, "family_sources", None)     # the attribution's, when it ran
    if sources is None:
        values = {"d": ideal.d, "t": ideal.t, "a": ideal.a, "dprime": coords.dprime,
                  "col": coords.col}
        sources = collect_families(claims, values, coords, max_degree, sampler, prime,
                                   budget=AttributionBudget(ideal.work, budget_factor))
    bases, ranks, skipped, outside = {}, {}, [], []
    for source in sources:
        if source.skipped and source.skipped.startswith("not-applicable"):
            outside.append(source.id)
            continue
        if source.skipped:
            skipped.append({"id": source.id, "reason": source.skipped})
            continue
        rows = [member_gradients(m, point, prime) for m in source.members.values()]
        basis = echelon_rows(np.vstack(rows), prime)
        bases[source.id], ranks[source.id] = basis, len(basis)
    useful = [name for name in bases if ranks[name]]
    total = _rank(bases, useful, prime)
    sets, searched = _smallest_sufficient_sets(bases, useful, codimension, prime) \
        if total == codimension else ([], 0)
    weight = ideal.weight_degree
    return {
        "codimension": codimension, "rank": total, "complete": total == codimension,
        "family_ranks": ranks, "sufficient_sets": sets, "subsets_searched": searched,
        "max_member_degree": max_degree, "skipped": skipped, "not_applicable": outside,
        "points_tried": tries, "prime": prime,
        "failure_probability": 0.0 if total == codimension else schwartz_zippel_bound(
            codimension * max(max_degree - 1, 1) * weight, prime, 1),
        "seconds": round(time.perf_counter() - start, 4)}


def _rank(bases: dict, names, prime: int) -> int:
    rows = [bases[name] for name in names if len(bases[name])]
    return rank_mod_p(np.vstack(rows), prime) if rows else 0


def _smallest_sufficient_sets(bases: dict, names: list, target: int,
                              prime: int) -> tuple[list[list[str]], int]:
    """Every set of ``names`` of the smallest size whose rows reach rank ``target``, and
    the number of subsets whose rank was computed (at most :data:`MAX_SUBSETS`; the search
    stops there and returns what it found, possibly nothing)."""
    if target == 0:
        return [[]], 0                        # the variety fills its space: nothing needed
    searched = 0
    for size in range(1, len(names) + 1):
        found = []
        for subset in combinations(names, size):
            if searched >= MAX_SUBSETS:
                return found, searched
            searched += 1
            if sum(len(bases[n]) for n in subset) >= target and \
                    _rank(bases, subset, prime) == target:
                found.append(list(subset))
        if found:
            return found, searched
    return [], searched

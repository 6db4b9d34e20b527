"""Claim ``chow-111`` on the single-column slice (ADM §4): the Chow / Lie-algebra minors of
the (1,1,1) part and their factorizations (see :mod:`.single_column`)."""

from __future__ import annotations

import json

import numpy as np

from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import Verdict, combine, consistent, proved, refuted, verified
from attngeom.lightning_alg.claims.base import COL, D, DPRIME, ROW, render_invariants
from attngeom.lightning_alg.claims.single_column import (
    A_ONE, SingleColumnClaim, SingleColumnRankClaim, T, generic_cubics_mod_p, nmod_rows,
    numeric_points, ring_slice, submatrix_size, lemma16_hypothesis, minor_invariants,
    slice_coordinates)
from attngeom.lightning_alg.family_check import DEFAULT_EXACT_POINTS, NUMERIC_TOLERANCE
from attngeom.lightning_alg.invariant import Invariant
from attngeom.lightning_alg.invariants.chow import (
    cone_dimension_split_111, factor_cubic, lie_rank_split_111, lie_rank_split_21,
    product_coefficients, rank_one_factors)
from attngeom.lightning_alg.invariants.determinantal import (
    MAX_MINOR_TERMS, generic_rank_exact, generic_rank_witness, rank_bound_numeric)
from attngeom.lightning_alg.invariants.lie_flattening import lie_flattening_matrix
from attngeom.lightning_alg.invariants.single_column import (
    cubic_coefficients, sample_slice_mod_p, slice_dimension_mod_p, slice_mod_p)
from attngeom.lightning_alg.labels import multisets
from attngeom.lightning_alg.parametrization import WeightBatch, sample_weights_integer, weight_degree


def _rank_one_weights(R, coords):
    """The rows k, q (A = k q^T) and v_i of the generic weights in R (a = 1), by name."""
    gens = dict(zip(map(str, R.symbols), R.gens))
    d = coords.d
    return ([gens[f"k_1_{m}"] for m in range(1, d + 1)],
            [gens[f"q_1_{l}"] for l in range(1, d + 1)],
            [gens[f"v_{coords.row}_{k}"] for k in range(1, d + 1)])


def _integer_factorizations(coords, context, points: int = 3, prime: int = DEFAULT_PRIME):
    """f_T factored over Q from its coordinates alone, at small integer weights with a = 1:
    [(factorization, factor degrees, weights)] (f_T = 0 skipped).  The coordinates are
    computed mod p and lifted: |c_K| <= 6 * 3^3 for weights in [-3, 3]."""
    weights = sample_weights_integer(context.sampler.spawn(41), points, coords.d, coords.dprime, 1)
    residues = WeightBatch(weights.A % prime, weights.V % prime, prime=prime)
    out = []
    for b, y in enumerate(slice_mod_p(coords, residues)):
        coefficients = [int(c) % prime for c in cubic_coefficients([int(v) for v in y], coords.d)]
        signed = [c - prime if c > prime // 2 else c for c in coefficients]
        if any(signed):
            out.append(factor_cubic(signed, coords.d) + (weights.point(b),))
    return out


class Chow111Claim(SingleColumnClaim):
    """ADM Cor 22, Remark 23, Example 21: the rank-one regime (a = 1, A = k q^T).

    * Cor 22: f_T = (v_i . x)(k . x)(q . x), a product of three linear forms; the factors
      come from :func:`attngeom.lightning_alg.invariants.chow.rank_one_factors` and the product is
      compared with f_T's coefficients (symbolic in QQ[Q, K, V]; mod p; float64).  The exact
      method also factors f_T over Q from the coordinates alone, at integer weights.
    * Remark 23: rank M_Lie(f_T) = 6 (d = 3), 3d - 2 (d >= 4) at a general point of the
      rank-one slice -- exact ranks over F_p (every method but numeric, which uses singular
      values), so every (r+1)-minor of M_Lie lies in J.
    * Example 21: for a general cubic M_Lie has rank d^2 - 1 (15 for d = 4; this is also the
      nontriviality of the (r+1)-minors), the slice is a cone of dimension 3d - 2 (10 for
      d = 4) measured as a Jacobian rank, on the general (2,1) locus M_Lie has larger rank
      than on the (1,1,1) locus, and for d >= 4 the 4-minors of N (det N for d = 4) lie
      in J (the ``single-column-rank`` check with a = 1).
    """

    id = "chow-111"
    source = "ADM Cor 22, Remark 23, Ex 21"
    statement = ("For rank(A) = 1 the single-column cubic is a product of three linear forms, "
                 "M_Lie(f_T) has rank 6 (d = 3) or 3d - 2 (d >= 4), and det N vanishes (d = 4).")
    params = (D, T, A_ONE, DPRIME, ROW, COL)
    examples = ({"d": 3}, {"d": 4},                          # Remark 23; ADM Example 21
                {"d": 5, "method": "exact"}, {"d": 8, "method": "exact"})

    def hypothesis_violation(self, params):
        found = lemma16_hypothesis(params, "Remark 23's Lie flattening ranks")
        if found:
            return found
        if params["a"] != 1:
            return f"ADM Cor 22 needs rank(A) = 1, i.e. --a 1; got a={params['a']}"
        return None

    # -- the parts ---------------------------------------------------------------------
    def _factor_symbolic(self, coords) -> Verdict:
        R, _, _, y = ring_slice(coords, 1)
        key, query, value = _rank_one_weights(R, coords)
        product = product_coefficients(*rank_one_factors(key, query, value))
        cubic = cubic_coefficients(y, coords.d)
        wrong = [K for K, c, p in zip(multisets(coords.d, 3), cubic, product) if c != p]
        if wrong:
            K = wrong[0]
            return refuted(method="symbolic", summary=(
                f"Cor 22: f_T is not (v.x)(k.x)(q.x): the coefficients of x^{K} differ"),
                counterexample={"monomial": list(K), "ring": "QQ[Q, K, V]", "residual": str(
                    (cubic[multisets(coords.d, 3).index(K)] -
                     product[multisets(coords.d, 3).index(K)]).as_expr())[:2000]})
        return proved(checked=len(cubic), evidence={"ring": "QQ[Q, K, V]",
                                                    "coefficients": len(cubic)}, summary=(
            f"Cor 22: f_T = (v_{coords.row} . x)(k . x)(q . x) coefficient by coefficient "
            f"({len(cubic)} monomials) in QQ[Q, K, V]"))

    def _factor_exact(self, coords, context, prime=DEFAULT_PRIME) -> dict[str, Verdict]:
        """Cor 22 at random points over F_p (``cor22``) and, read off the coordinates at
        integer points, over Q (``cor22-over-Q``)."""
        points = context.samples or DEFAULT_EXACT_POINTS
        weights, y = sample_slice_mod_p(coords, 1, points, context.sampler.spawn(43), prime)
        for b in range(points):
            factors = rank_one_factors(*(nmod_rows([row], prime)[0] for row in (
                weights.K[b][0], weights.Q[b][0], weights.V[b][coords.row - 1])))
            product = [int(c) for c in product_coefficients(*factors)]
            cubic = [int(c) % prime for c in cubic_coefficients([int(v) for v in y[b]], coords.d)]
            if product != cubic:
                return {"cor22": refuted(method="exact", summary=(
                    "Cor 22: (v.x)(k.x)(q.x) differs from f_T at a point over F_p"),
                    counterexample={"field": f"F_{prime}", "weights": weights.point(b),
                                    "f_T": cubic, "product": product})}
        found = _integer_factorizations(coords, context)
        bad = [f for f in found if any(deg != 1 for deg in f[1])]
        if bad:
            text, degrees, point = bad[0]
            return {"cor22": refuted(method="exact", summary=(
                f"Cor 22: f_T read off the coordinates factors over Q with factor degrees "
                f"{degrees}, not as three linear forms"),
                counterexample={"field": "Q", "weights": point, "factorization": text})}
        parts = {"cor22": verified(checked=points, degree=3, prime=prime, points=points, summary=(
            f"Cor 22: f_T = (v.x)(k.x)(q.x) at {points} random points over F_p"),
            evidence={"coefficients": len(multisets(coords.d, 3))})}
        if found:
            parts["cor22-over-Q"] = proved(checked=len(found), method="exact", evidence={
                "factorizations": [f[0] for f in found]}, summary=(
                f"Cor 22: f_T, read off the coordinates at {len(found)} integer weight points, "
                f"factors over Q into linear forms"))
        return parts

    def _remark23_exact(self, coords, context, prime=DEFAULT_PRIME) -> Verdict:
        d = coords.d
        points = context.samples or DEFAULT_EXACT_POINTS
        weights, y = sample_slice_mod_p(coords, 1, points, context.sampler.spawn(47), prime)
        expected = lie_rank_split_111(d)
        return generic_rank_exact(lie_flattening_matrix(d).evaluate_mod_p(y, prime), expected,
                                  prime=prime, degree=(expected + 1) * weight_degree(d, 1),
                                  what="Remark 23: M_Lie(f_T) with rank(A) = 1",
                                  point=weights.point)

    def _example21(self, coords, context, prime=DEFAULT_PRIME) -> dict[str, Verdict]:
        """Generic-cubic rank (``nontrivial``), the (2,1) comparison and the cone dimension
        (``example21``), exact."""
        d = coords.d
        lm = lie_flattening_matrix(d)
        expected = lie_rank_split_111(d)
        generic = lm.evaluate_mod_p(generic_cubics_mod_p(context, d, 1, prime), prime)[0]
        witness = generic_rank_witness(generic, d * d - 1, prime=prime,
                                       what="M_Lie (Example 21: a general cubic)")
        weights, _ = sample_slice_mod_p(coords, 1, 1, context.sampler.spawn(53), prime)
        dimension = slice_dimension_mod_p(coords, weights, 0)
        _, y21 = sample_slice_mod_p(coords, d, 2, context.sampler.spawn(59), prime)
        rank21 = max(rank_mod_p(m, prime) for m in lm.evaluate_mod_p(y21, prime))
        evidence = {"cone_dimension_measured": dimension,
                    "cone_dimension_stated": cone_dimension_split_111(d),
                    "rank_on_split_21": rank21, "rank_on_split_21_derived": lie_rank_split_21(d),
                    "rank_on_split_111": expected}
        problems = []
        if dimension != cone_dimension_split_111(d):
            problems.append(f"the rank-one slice has dimension {dimension}, not "
                            f"3 (d - 1) + 1 = {cone_dimension_split_111(d)}")
        if rank21 <= expected:
            problems.append(f"M_Lie has rank {rank21} on the (2,1) locus, not more than the "
                            f"{expected} of the (1,1,1) locus")
        if problems:
            found = refuted(method="exact", summary="Example 21 / Remark 23: " + "; ".join(problems),
                            counterexample=evidence, evidence=evidence)
        else:
            found = proved(checked=2, method="exact", evidence=evidence, summary=(
                f"Example 21: the rank-one slice has dimension {dimension} (Jacobian rank over "
                f"F_p) and M_Lie has rank {rank21} > {expected} on the general (2,1) locus"))
        return {"nontrivial": witness, "example21": found}

    def _det_n(self, params, method, context) -> dict[str, Verdict]:
        """Prop 17(1)'s det N = 0 for d >= 4 (the part ``single-column-rank``)."""
        if params["d"] < 4:
            return {}
        return {"single-column-rank": getattr(SingleColumnRankClaim(), f"check_{method}")(
            params, context)}

    # -- methods -----------------------------------------------------------------------
    def check_symbolic(self, params, context):
        coords = slice_coordinates(params)
        return combine({"cor22": self._factor_symbolic(coords),
                        "remark23": self._remark23_exact(coords, context),
                        **self._det_n(params, "symbolic", context),
                        **self._example21(coords, context)})

    def check_exact(self, params, context):
        coords = slice_coordinates(params)
        return combine({**self._factor_exact(coords, context),
                        "remark23": self._remark23_exact(coords, context),
                        **self._det_n(params, "exact", context),
                        **self._example21(coords, context)})

    def check_numeric(self, params, context):
        coords = slice_coordinates(params)
        d = coords.d
        backend, w, y, generic = numeric_points(coords, 1, context)
        cubic = np.array(cubic_coefficients(list(backend.to_numpy(y).T), d)).T       # [B, n]
        factors = [rank_one_factors(w.K[b][0], w.Q[b][0], w.V[b][coords.row - 1])
                   for b in range(len(cubic))]
        product = np.array([product_coefficients(*f) for f in factors])
        scale = np.array([product_coefficients(*(np.abs(x) for x in f)) for f in factors])
        residual = np.abs(cubic - product) / np.maximum(scale, np.finfo(float).tiny)
        worst = float(residual.max())
        if worst > NUMERIC_TOLERANCE:
            b = int(np.argmax(residual.max(axis=1)))
            factor = refuted(method="numeric", max_residual=worst, backend=backend.name,
                             device=backend.device, summary=(
                                 f"Cor 22: f_T - (v.x)(k.x)(q.x) has relative residual {worst:.3g}"),
                             counterexample={"field": "float64", "weights": w.point(b)})
        else:
            factor = consistent(checked=len(cubic), max_residual=worst, tolerance=NUMERIC_TOLERANCE,
                                backend=backend.name, device=backend.device, summary=(
                                    f"Cor 22: f_T = (v.x)(k.x)(q.x) to relative {worst:.2e} at "
                                    f"{len(cubic)} float64 points"))
        lm = lie_flattening_matrix(d)
        rank = rank_bound_numeric(lm.evaluate_float(y, backend), lm.evaluate_float(generic, backend),
                                  lie_rank_split_111(d), backend=backend, point=w.point,
                                  what="Remark 23: M_Lie(f_T) with rank(A) = 1", attained=True)
        return combine({"cor22": factor, "remark23": rank, **self._det_n(params, "numeric", context),
                        **self._example21(coords, context)})

    # -- show --------------------------------------------------------------------------
    def show(self, params, fmt="text", limit=None):
        coords = slice_coordinates(params)
        d = coords.d
        if limit is not None:
            return render_invariants(self.members(params, coords, limit), coords, fmt)
        names = {"value": [(coords.row, k) for k in range(1, d + 1)],
                 "key": [(1, m) for m in range(1, d + 1)],
                 "query": [(1, l) for l in range(1, d + 1)]}
        letter = {"value": "v", "key": "k", "query": "q"}
        if fmt == "json":
            return json.dumps({"cubic": "f_T", "factors": {
                role: [f"{letter[role]}_{i}_{k}" for i, k in pairs] for role, pairs in names.items()},
                "lie_rank_rank_one": lie_rank_split_111(d), "lie_rank_generic_cubic": d * d - 1,
                "source": self.source}, indent=1)
        factors = []
        for role, pairs in names.items():
            if fmt == "m2":
                terms = [f"{letter[role]}_({i},{k})*x_{k}" for i, k in pairs]
            elif fmt == "latex":
                terms = [f"{letter[role]}_{{{i}{k}}} x_{{{k}}}" for i, k in pairs]
            else:
                terms = [f"{letter[role]}_{i}_{k} x{k}" for i, k in pairs]
            factors.append("(" + " + ".join(terms) + ")")
        if fmt == "m2":
            return "*".join(factors)
        product = (" " if fmt == "latex" else " * ").join(factors)
        if fmt == "latex":
            return f"f_T(x) = {product}"
        return "\n".join([
            f"f_T(x) = {product}",
            "  (ADM Cor 22: A = K^T Q = k q^T, so x^T A x = (k.x)(q.x))",
            f"rank M_Lie(f_T) = {lie_rank_split_111(d)} at general weights (Remark 23); "
            f"{d * d - 1} at a general cubic",
            "show --limit N prints the vanishing minors (of N, then of M_Lie) one per line"])

    def lowest_member_degree(self, params) -> int:
        """The degree of the lowest members: the (2a+2)-minors of N when 2a + 2 <= d, else the
        (r+1)-minors of M_Lie (degree 7 at d = 3), so ``attngeom ideal`` below that degree
        does not build them."""
        size = submatrix_size(params)
        return size if size <= params["d"] else lie_rank_split_111(params["d"]) + 1

    def members(self, params, coords, limit=None) -> list[Invariant]:
        """The 4-minors of N (d >= 4; Example 21's det N for d = 4), then the
        (r+1)-minors of M_Lie (Remark 23) when they can be expanded (d = 3)."""
        out = SingleColumnRankClaim().members(params, coords, limit)
        lm = lie_flattening_matrix(coords.d)
        size = lie_rank_split_111(coords.d) + 1
        left = None if limit is None else limit - len(out)
        if (left is None or left > 0) and lm.minor_term_bound(size) <= MAX_MINOR_TERMS:
            out += minor_invariants(lm, size, coords, left, "lie-flattening rank-one minor",
                                    "ADM Remark 23")
        return out


CLAIMS = [Chow111Claim()]

"""Claims ``monomial-count`` (ADM Prop 3, Prop 5) and ``coefficients`` (ADM Prop 2, Prop 6,
eq 3), both checked against the actual expansion of phi_W(X) = V X (X^T A X)."""

from __future__ import annotations

import json

import numpy as np

from attngeom.core.claim import CheckContext, Claim
from attngeom.kernels.primefield import matmul_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import proved, refuted, verified
from attngeom.lightning_alg.claims.base import D, DPRIME, T, require
from attngeom.lightning_alg.coordinates import (
    CoordinateSystem, per_coordinate_count, prop5_per_coordinate_formula, prop5_total_formula)
from attngeom.lightning_alg.expansion import expand_output
from attngeom.lightning_alg.labels import distinct_permutations
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p

EXPANSION_PARAMS = (D, T, DPRIME)
DEFAULT_SUPPORT_POINTS = 3
DEFAULT_IDENTITY_POINTS = 6


class ExpansionClaim(Claim):
    """A claim checked against the expansion of phi_W: symbolic while it is small, then
    exact (``symbolic_limit`` = the largest (d, t) expanded with generic weights by auto)."""

    params = EXPANSION_PARAMS
    methods = ("symbolic", "exact")
    symbolic_limit = (4, 3)

    def validate(self, params):
        require(params, "d", "t")

    def auto_method(self, params):
        d_max, t_max = self.symbolic_limit
        return "symbolic" if params["d"] <= d_max and params["t"] <= t_max else "exact"


def _support(d: int, t: int, dprime: int, method: str, context: CheckContext):
    """(support per output (i, j), number of expansions, the F_p weights used): the
    x-monomials with a nonzero coefficient.  Symbolic: one expansion with generic weights.
    Exact: the union over N expansions at random weights mod p."""
    if method == "symbolic":
        expansion = expand_output(d, t, dprime)
        return {key: set(coeffs) for key, coeffs in expansion.items()}, 1, None
    points = context.samples or DEFAULT_SUPPORT_POINTS
    weights = sample_weights_mod_p(context.sampler, points, d, dprime, d, DEFAULT_PRIME)
    support: dict = {}
    for b in context.progress(range(points), "expanding phi_W mod p"):
        expansion = expand_output(d, t, dprime, (weights.A[b], weights.V[b]), DEFAULT_PRIME)
        for key, coeffs in expansion.items():
            support.setdefault(key, set()).update(m for m, c in coeffs.items() if c)
    return support, points, [weights.point(b) for b in range(points)]


class MonomialCountClaim(ExpansionClaim):
    """ADM Prop 3 and Prop 5.

    Prop 3: the monomial support M_{i,j} of phi_W(X)[i,j] is the same for every row i and
    disjoint for different columns j.  Prop 5: |M_{i,j}| = d(d+1)(3dt-2d+2)/6 and the whole
    output has N_phi(d,t) = dt(d+1)(3dt-2d+2)/6 distinct monomials.  The supports are read
    off the expansion of V X (X^T A X) (generic weights: ``symbolic``; the union over
    random F_p weights: ``exact``, which can only miss a monomial whose degree-2
    coefficient vanishes at every point, probability <= M (2/p)^N), and also compared with
    the coordinate labels of :mod:`attngeom.lightning_alg.coordinates`.
    """

    id = "monomial-count"
    source = "ADM Prop 3, Prop 5"
    statement = ("Supports agree across output rows and are disjoint across columns; one output "
                 "coordinate has d(d+1)(3dt-2d+2)/6 monomials and the whole output "
                 "N_phi(d,t) = dt(d+1)(3dt-2d+2)/6.")
    examples = ({"d": 2, "t": 2}, {"d": 3, "t": 2, "dprime": 2},
                {"d": 6, "t": 4, "method": "exact"})
    symbolic_limit = (6, 4)

    def check(self, method, params, context):
        d, t, dprime = params["d"], params["t"], params["dprime"]
        support, points, weights_used = _support(d, t, dprime, method, context)
        problems = []
        for (i, j), monomials in support.items():
            if monomials != support[(1, j)]:
                problems.append({"prop": "Prop 3 (rows)", "output": [i, j],
                                 "differs_from": [1, j]})
        for j in range(1, t + 1):
            for j2 in range(j + 1, t + 1):
                common = support[(1, j)] & support[(1, j2)]
                if common:
                    problems.append({"prop": "Prop 3 (columns)", "columns": [j, j2],
                                     "shared_monomial": [list(p) for p in sorted(common)[0]]})
        per_formula = prop5_per_coordinate_formula(d, t)
        total_formula = prop5_total_formula(d, t)
        total = len(set().union(*(support[(1, j)] for j in range(1, t + 1))))
        for j in range(1, t + 1):
            count = len(support[(1, j)])
            if count != per_formula:
                problems.append({"prop": "Prop 5 (per coordinate)", "output": [1, j],
                                 "counted": count, "formula": str(per_formula)})
            labels = {lab.monomial_key() for lab in CoordinateSystem(d, t, 1, 1, j).labels}
            if labels != support[(1, j)]:
                problems.append({"prop": "coordinate labels", "output": [1, j],
                                 "labels_not_in_expansion": len(labels - support[(1, j)]),
                                 "expansion_not_in_labels": len(support[(1, j)] - labels)})
        if total != total_formula:
            problems.append({"prop": "Prop 5 (total)", "counted": total,
                             "formula": str(total_formula)})
        evidence = {"per_coordinate": len(support[(1, 1)]),
                    "per_coordinate_formula": str(per_formula),
                    "per_coordinate_from_parts": per_coordinate_count(d, t),
                    "total": total, "total_formula": str(total_formula),
                    "outputs_expanded": len(support)}
        if problems:
            return refuted(method=method, evidence=evidence, counterexample={
                "d": d, "t": t, "dprime": dprime, "problems": problems[:10]},
                summary=f"{len(problems)} count(s) disagree with the expansion; first: "
                        f"{problems[0]['prop']}")
        summary = (f"expansion of V X (X^T A X): {evidence['per_coordinate']} monomials per "
                   f"coordinate, {total} in all, supports equal across rows and disjoint "
                   "across columns")
        if method == "symbolic":
            return proved(checked=len(support), evidence=evidence, summary=summary)
        evidence["weights_mod_p"] = weights_used
        return verified(checked=len(support), degree=2, prime=DEFAULT_PRIME, points=points,
                        members=total * dprime, evidence=evidence, summary=summary)


    def show(self, params, fmt="text", limit=None):
        d, t = params["d"], params["t"]
        data = {"d": d, "t": t, "per_coordinate": str(prop5_per_coordinate_formula(d, t)),
                "single_column": per_coordinate_count(d, 1),
                "cross_column": per_coordinate_count(d, t) - per_coordinate_count(d, 1),
                "N_phi": str(prop5_total_formula(d, t))}
        if fmt == "json":
            return json.dumps(data)
        if fmt == "latex":
            return (f"|\\mathcal{{M}}_{{i,j}}| = \\binom{{{d}+2}}{{3}} + ({t}-1)\\binom{{{d}+1}}{{2}}{d}"
                    f" = {data['per_coordinate']}, \\quad N_\\varphi({d},{t}) = {data['N_phi']}")
        if fmt == "m2":
            return f"-- |M_(i,j)| = {data['per_coordinate']}; N_phi({d},{t}) = {data['N_phi']}"
        return (f"one output coordinate: {data['single_column']} single-column + "
                f"{data['cross_column']} cross-column = {data['per_coordinate']} monomials\n"
                f"whole output: N_phi({d},{t}) = {data['N_phi']}")


class CoefficientsClaim(ExpansionClaim):
    """ADM Prop 2 and Prop 6 with the scaling of eq (3).

    Prop 6: c_j(K) = sum_{(p1,p2,p3) in Perm K} a_{p2p3} v_{ip1} and
    c_{n,j}(A,b) = sum_{(p1,p2) in Perm A} a_{p2 b} v_{ip1}; eq (3): y = c / |Perm|.

    ``symbolic``: expand V X (X^T A X) with generic weights; for every monomial check that
    its coefficient equals |Perm| * mu(W) at its label, and that |Perm| = r!/prod(mult!)
    equals the number of terms of that coefficient (the Macaulay2 code's definition of the
    scaling).  ``exact``: at N random points (W, X) over F_p check the polynomial identity
    phi_W(X)[i,j] = sum_labels |Perm(label)| mu(W)_label x^label, with |Perm| counted by
    enumerating distinct permutations (degree 5 in (A, V, X)).
    """

    id = "coefficients"
    source = "ADM Prop 2, Prop 6, eq (3)"
    statement = ("The coefficient of each monomial of phi_W(X)[i,j] is given by Prop 6, and the "
                 "scaled coordinate is that coefficient divided by the orbit size |Perm|.")
    examples = ({"d": 2, "t": 2}, {"d": 3, "t": 2, "dprime": 2},
                {"d": 5, "t": 3, "method": "exact"})

    def check_symbolic(self, params, context):
        d, t, dprime = params["d"], params["t"], params["dprime"]
        expansion = expand_output(d, t, dprime)
        coords = CoordinateSystem(d, t, dprime, all_outputs=True)
        _, y = Parametrization(coords).symbolic(d)
        checked = 0
        for k, label in enumerate(coords.labels):
            coefficient = expansion[(label.row, label.target)].get(label.monomial_key())
            if coefficient is None or coefficient != y[k] * label.orbit_size \
                    or len(coefficient) != label.orbit_size:
                return refuted(method="symbolic", summary=(
                    f"the coefficient of {label.m2(True)} is not |Perm| x mu(W)"),
                    counterexample={"label": label.m2(True),
                                    "expansion": str(coefficient.as_expr()) if coefficient else "0",
                                    "orbit_size": label.orbit_size,
                                    "mu": str(y[k].as_expr())})
            checked += 1
        return proved(checked=checked, summary=(
            f"all {checked} coefficients of V X (X^T A X) equal |Perm| x mu(W) (Prop 6, eq 3)"),
            evidence={"ring": "QQ[A, V][X]", "outputs": dprime * t, "terms_after": 0})

    def check_exact(self, params, context, prime: int = DEFAULT_PRIME):
        d, t, dprime = params["d"], params["t"], params["dprime"]
        coords = CoordinateSystem(d, t, dprime, all_outputs=True)
        points = context.samples or DEFAULT_IDENTITY_POINTS
        weights = sample_weights_mod_p(context.sampler, points, d, dprime, d, prime)
        X = context.sampler.spawn(1).prime_field((points, d, t), prime)
        y = Parametrization(coords).evaluate_mod_p(weights)
        orbit = np.array([len(distinct_permutations(lab.multiset)) for lab in coords.labels])
        for b in range(points):
            direct = _lightning_mod_p(X[b], weights.A[b], weights.V[b], prime)
            from_labels = np.zeros((dprime, t), dtype=np.int64)
            for k, label in enumerate(coords.labels):
                monomial = 1
                for r, c in label.pairs():
                    monomial = monomial * int(X[b, r - 1, c - 1]) % prime
                term = int(y[b, k]) * int(orbit[k]) % prime * monomial % prime
                i, j = label.row - 1, label.target - 1
                from_labels[i, j] = (int(from_labels[i, j]) + term) % prime
            if not np.array_equal(direct, from_labels):
                i, j = (int(v) for v in np.argwhere(direct != from_labels)[0])
                return refuted(method="exact", summary=(
                    f"phi_W(X)[{i + 1},{j + 1}] differs from the Prop 6 expansion at a random "
                    f"point over F_{prime}"),
                    counterexample={"field": f"F_{prime}", "prime": prime,
                                    "weights": weights.point(b), "X": X[b].tolist(),
                                    "phi": int(direct[i, j]), "prop6": int(from_labels[i, j])})
        return verified(checked=dprime * t, degree=5, prime=prime, points=points,
                        members=dprime * t, summary=(
                            f"phi_W(X) = sum |Perm| mu(W) x^label at {points} random points "
                            f"(W, X) over F_{prime}"),
                        evidence={"identity": "V X (X^T A X) - sum_labels |Perm| y x^label",
                                  "points_mod_p": [{**weights.point(b), "X": X[b].tolist()}
                                                   for b in range(points)]})

    def show(self, params, fmt="text", limit=None):
        d, t, dprime = params["d"], params["t"], params["dprime"]
        coords = CoordinateSystem(d, t, dprime, all_outputs=True)
        _, y = Parametrization(coords).symbolic(d)
        rows = list(zip(coords.labels, y))[:limit]
        if fmt == "json":
            return json.dumps([{"label": lab.m2(coords.with_row), "orbit_size": lab.orbit_size,
                                "mu": str(val.as_expr())} for lab, val in rows], indent=1)
        if fmt == "m2":
            return "\n".join(f"{lab.m2(coords.with_row)} => {_m2_expr(val)}" for lab, val in rows)
        if fmt == "latex":
            import sympy
            return "\n".join(f"{lab.text(coords.with_row)} = {sympy.latex(val.as_expr())} \\\\"
                             for lab, val in rows)
        return "\n".join(f"{lab.text(coords.with_row)} = {val.as_expr()}" for lab, val in rows)


def _m2_expr(value) -> str:
    """A ring element in Macaulay2 syntax with a_(m,l), v_(i,k) variables."""
    import re
    text = str(value.as_expr()).replace("**", "^")
    return re.sub(r"\b([avqk])_(\d+)_(\d+)\b", r"\1_(\2,\3)", text)


def _lightning_mod_p(X, A, V, prime):
    """V X (X^T A X) over F_p (the matrix products of ADM §2.1, without int64 overflow)."""
    scores = matmul_mod_p(matmul_mod_p(X.T.copy(), A, prime), X, prime)
    return matmul_mod_p(V, matmul_mod_p(X, scores, prime), prime)

CLAIMS = [MonomialCountClaim(), CoefficientsClaim()]

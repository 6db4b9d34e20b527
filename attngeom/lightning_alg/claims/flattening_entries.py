"""Claim ``flattening-entries``: the entry formula F_{n,j}(mu(W)) of ADM Thm 27's proof,
as printed and corrected."""

from __future__ import annotations

import json

from attngeom.core.claim import Claim
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.verdict import Verdict, proved, refuted, verified
from attngeom.lightning_alg.claims.base import LIGHTNING_PARAMS, coordinates_of, validate_lightning
from attngeom.lightning_alg.claims.cross_column import (
    context_hypothesis, flattening_of, half_of, ring_matmul, generic_weights)
from attngeom.lightning_alg.family_check import DEFAULT_EXACT_POINTS
from attngeom.lightning_alg.invariants import syzygy
from attngeom.lightning_alg.labels import multisets
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p, weight_degree


class FlatteningEntriesClaim(Claim):
    """ADM Thm 27's proof prints F_{n,j}(mu(W))[{k1,k2}, l] = (1/omega(k1,k2)) (a_{k2 l} v_{k1}
    + a_{k1 l} v_{k2}) with omega of eq (4) (1 if k1 = k2, else 2), and describes Phi(v) with
    F(mu(W)) = Phi(v) A.  Both are compared with mu(W) entry by entry (symbolic: in
    QQ[weights]; exact: at random points over F_p).  A refutation names the entries where
    the printed formula fails and whether 1/2 (a_{k2 l} v_{k1} + a_{k1 l} v_{k2}) holds there.
    """

    id = "flattening-entries"
    source = "ADM Thm 27 (proof), eq (4)"
    params = LIGHTNING_PARAMS
    statement = ("On the variety F_{n,j}[{k1,k2}, l] = (1/omega(k1,k2)) (a_{k2 l} v_{k1} + "
                 "a_{k1 l} v_{k2}), and F_{n,j} = Phi(v) A.")
    methods = ("symbolic", "exact")
    examples = ({"d": 3, "t": 2, "a": 3},)

    def validate(self, params):
        validate_lightning(params)

    def hypothesis_violation(self, params):
        return context_hypothesis(params, "ADM Thm 27")

    def _entries(self, params, coords, values, A_, v, scalar, zero):
        """[(row name, l, mu value, printed value, value with omega = 2, Phi(v) A value)]."""
        flattening = flattening_of(params, coords)
        phi_a = ring_matmul(syzygy.phi_matrix(v, zero, scalar), A_, zero)
        out = []
        for r, (k1, k2) in enumerate(multisets(coords.d, 2)):
            for l in range(1, coords.d + 1):
                printed = syzygy.printed_entry_formula(A_, v, k1, k2, l, scalar)
                halved = (A_[k2 - 1][l - 1] * v[k1 - 1] + A_[k1 - 1][l - 1] * v[k2 - 1]) * scalar(1, 2)
                out.append((flattening.row_names[r], l, values[flattening.index[r, l - 1]], printed,
                            halved, phi_a[r][l - 1]))
        return out

    def check_symbolic(self, params, context):
        coords = coordinates_of(params)
        ring, values, A_, V, _, _ = generic_weights(coords, params["a"])
        entries = self._entries(params, coords, values, A_, V[params["row"] - 1], half_of, ring.zero)
        return self._decide("symbolic", entries, lambda x: str(x.as_expr()), lambda summary, ev:
                            proved(checked=len(entries), summary=summary, evidence=ev))

    def check_exact(self, params, context):
        coords = coordinates_of(params)
        prime = DEFAULT_PRIME
        points = context.samples or DEFAULT_EXACT_POINTS
        weights = sample_weights_mod_p(context.sampler, points, coords.d, coords.dprime,
                                       params["a"], prime)
        y = Parametrization(coords).evaluate_mod_p(weights)
        scalar = lambda n, q: n * pow(q, -1, prime) % prime
        entries = []
        for b in range(points):
            A_ = [[int(x) for x in row] for row in weights.A[b]]
            v = [int(x) for x in weights.V[b][params["row"] - 1]]
            entries += [(name, l, *(int(x) % prime for x in values))
                        for name, l, *values in self._entries(
                            params, coords, [int(x) for x in y[b]], A_, v, scalar, 0)]
        return self._decide("exact", entries, str, lambda summary, ev: verified(
            checked=len(entries), degree=weight_degree(coords.d, params["a"]), prime=prime,
            points=points, members=len(entries) // points, summary=summary, evidence=ev))

    def _decide(self, method, entries, show, holds) -> Verdict:
        """Compare mu(W) with the printed formula and with Phi(v) A at every entry;
        ``holds(summary, evidence)`` builds the verdict when both agree everywhere."""
        wrong = [e for e in entries if e[2] != e[3]]
        phi_wrong = [e for e in entries if e[2] != e[5]]
        evidence = {"entries": len(entries), "printed_formula_fails": len(wrong),
                    "phi_factorization_fails": len(phi_wrong)}
        if phi_wrong:
            name, l, mu, _, _, phi = phi_wrong[0]
            return refuted(method=method, evidence=evidence, summary=(
                f"F(mu(W)) = Phi(v) A fails at [{name}, {l}]"),
                counterexample={"entry": [name, l], "mu(W)": show(mu), "Phi(v) A": show(phi)})
        if wrong:
            rows = sorted({name for name, *_ in wrong})
            halved_holds = all(e[2] == e[4] for e in entries)
            name, l, mu, printed, _, _ = wrong[0]
            correction = ("1/2 (a_{k2 l} v_{k1} + a_{k1 l} v_{k2}) holds at every entry (omega = 2 "
                          "throughout), which is Phi(v) A as the proof describes Phi"
                          if halved_holds else "no uniform correction found")
            evidence.update(rows_where_printed_fails=rows, correction=correction)
            return refuted(method=method, evidence=evidence, summary=(
                f"the printed entry formula of ADM Thm 27's proof fails on the rows {rows}; "
                f"corrected: {correction}"),
                counterexample={"entry": [name, l], "mu(W)": show(mu), "printed": show(printed)},
                erratum=Erratum(
                    ErrorKind.MISPRINTED_FORMULA, "ADM Thm 27 (proof), eq (4)",
                    "F_{n,j}[{k1,k2}, l] = (1/omega(k1,k2)) (a_{k2 l} v_{k1} + a_{k1 l} v_{k2})",
                    "1/2 (a_{k2 l} v_{k1} + a_{k1 l} v_{k2}) = (Phi(v) A)[{k1,k2}, l]; a step of "
                    "the proof: Thm 27's statement is checked by lie-flattening",
                    f"mu(W) equals the halved formula at all {len(entries)} entries")
                if halved_holds else None)
        return holds(f"the printed entry formula and F = Phi(v) A hold at all {len(entries)} "
                     f"entries", evidence)

    def show(self, params, fmt="text", limit=None):
        coords = coordinates_of(params)
        ring, values, A_, V, _, _ = generic_weights(coords, params["a"])
        rows = self._entries(params, coords, values, A_, V[params["row"] - 1], half_of, ring.zero)[:limit]
        shown = [{"entry": [name, l], "mu(W)": str(mu.as_expr()), "printed": str(printed.as_expr()),
                  "Phi(v) A": str(phi.as_expr())} for name, l, mu, printed, _, phi in rows]
        if fmt == "json":
            return json.dumps(shown, indent=1)
        if fmt != "text":
            raise BadInput(f"{self.id} shows formulas in the weights, not polynomials in y: "
                           f"use --format text or json")
        return "\n".join(f"F[{e['entry'][0]}, {e['entry'][1]}]: mu(W) = {e['mu(W)']}; printed "
                         f"{e['printed']}; Phi(v) A = {e['Phi(v) A']}" for e in shown)


CLAIMS = [FlatteningEntriesClaim()]

"""The base of the claims beyond one plain head (:mod:`~attngeom.lightning_alg.claims.beyond`,
:mod:`~attngeom.lightning_alg.claims.beyond_mixing`): the options --heads, --skip, --causal,
and :class:`VariantDimensionClaim`, a dimension formula checked by exact Jacobian ranks over
F_p at one point or over a sweep.

Every point first holds the network it measures to its definition
(:func:`model_check`): the vectorized network's output at random weights and inputs over
F_p must equal the token-by-token construction of
:mod:`attngeom.lightning_alg.models.by_tokens`, and, for a masked or skip network, differ from
the construction without the mask or skip, so that a claim "masked = unmasked" (or "skip =
no skip" for one layer) compares two different maps and not one map with itself.
"""

from __future__ import annotations

import numpy as np

from attngeom.core.claim import Claim, Param
from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict, combine, refuted
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.lightning_alg.claims.hmk_support import (
    NETWORK_PARAMS, dimension_verdict, formula_show, require_hypotheses)
from attngeom.lightning_alg.hmk.dimension import architecture
from attngeom.lightning_alg.models import dimension as model_dimension
from attngeom.lightning_alg.models.by_tokens import output_by_tokens
from attngeom.lightning_alg.models.network import VariantNetwork
from attngeom.lightning_alg.models.variant import SKIPS, variant_from

#: Random stream of :func:`model_check` (independent of the rank measurement's).
STREAM_MODEL = 13

HEADS = Param("heads", "number of heads H (outputs summed; each head its own Q, K, V)")
SKIP = Param("skip", f"skip connection: {'|'.join(SKIPS)} (f(X), f(X) + X, f(X) + W_s X)",
             kind="str")
CAUSAL = Param("causal", "causal mask: output column j attends to columns 1..j", kind="flag")
VARIANT_PARAMS = NETWORK_PARAMS + (HEADS, SKIP, CAUSAL)


def variant_network(params: dict) -> VariantNetwork:
    """The VariantNetwork of claim / CLI parameters (d, a, t, layers, dprime, heads, skip,
    causal)."""
    return VariantNetwork(architecture(params),
                          variant_from(params.get("heads"), params.get("skip"), params.get("causal")))


def _without_skip_weights(net: VariantNetwork, weights) -> list:
    """The weights less every W_s (the network with the skip taken out)."""
    if net.variant.skip != "linear":
        return list(weights)
    per_layer = 3 * net.variant.heads + 1
    return [w for k, w in enumerate(weights) if k % per_layer != per_layer - 1]


def model_check(net: VariantNetwork, sampler, prime: int = DEFAULT_PRIME) -> tuple[str | None, dict]:
    """(the problem or None, evidence): at random weights and input mod p, exactly,

    * the network's output (:meth:`VariantNetwork.function`, in Python ints) equals the
      token-by-token construction from the definition (:func:`output_by_tokens`): the
      mask is the causal one (column j attends to 1..j, not j..t), the skip is f(X) + X
      or f(X) + W_s X, the heads are summed;
    * with --causal, the definition's masked output differs from its unmasked one; with a
      skip, it differs from the output without the skip: the claim compares two maps.

    Each comparison is of polynomials in (weights, X) at one uniform point of F_p: equal
    polynomials always agree (no false problem from the first); two different ones agree
    with probability <= deg / p (Schwartz-Zippel; deg <= 3^l + 1 <= 82 for l <= 4), the
    chance of a false problem from the second."""
    v, arch = net.variant, net.arch
    weights = net.sample_weights(sampler.spawn(1), prime)
    X = sampler.spawn(2).prime_field((arch.d[0], arch.t), prime)
    exact = [np.asarray(w).astype(object) for w in weights]
    got = np.asarray(net.function()(exact, np.asarray(X).astype(object)), dtype=object) % prime
    want = output_by_tokens(weights, X, v.heads, v.skip, v.causal, arch.layers) % prime
    evidence = {"entries": int(want.size), "prime": prime, "equals_definition": False,
                "differs_from": []}
    if got.shape != want.shape or not np.array_equal(got, want):
        wrong = int(np.count_nonzero(got != want)) if got.shape == want.shape else int(want.size)
        return (f"the network evaluated is not the model defined: {wrong} of {want.size} output "
                "entries differ from the token-by-token construction (mask, skip or heads)"), evidence
    evidence["equals_definition"] = True
    others = []
    if v.causal:
        others.append(("unmasked", output_by_tokens(weights, X, v.heads, v.skip, False,
                                                    arch.layers)))
    if v.skip != "none":
        others.append(("without skip", output_by_tokens(_without_skip_weights(net, weights), X,
                                                        v.heads, "none", v.causal, arch.layers)))
    for name, other in others:
        if np.array_equal(other % prime, want):
            return (f"the {v.slug} output equals the {name} one at the sampled point: the claim "
                    "would compare a map with itself"), evidence
        evidence["differs_from"].append(name)
    return None, evidence


class VariantDimensionClaim(Claim):
    """A formula for the dimension of a variant network, checked by exact Jacobian ranks
    over F_p at one point or over :attr:`grid` (pairs of Architecture and Variant)."""

    params = VARIANT_PARAMS
    methods = ("exact",)
    grid: tuple = ()
    grid_text = ""
    formula_name = ""

    def validate(self, params):
        variant_from(params.get("heads"), params.get("skip"), params.get("causal"))
        if params["d"] is not None:
            if params["t"] is None:
                raise BadInput("--t is required")
            variant_network(params)

    def hypothesis_violation(self, params):
        return None if params["d"] is None else self.violation(variant_network(params))

    def violation(self, net: VariantNetwork) -> str | None:
        raise NotImplementedError

    def expected(self, net: VariantNetwork, context) -> tuple[int, dict]:
        """(the formula's value of the rank, evidence)."""
        raise NotImplementedError

    def extra_tangents(self, net: VariantNetwork):
        """Symmetry tangents beyond :meth:`VariantNetwork.symmetry_tangents` for the bound
        P - s (``f(net, weights, prime)`` or None)."""
        return None

    def model_verdict(self, net: VariantNetwork, context) -> tuple[Verdict | None, dict]:
        """(a refutation when :func:`model_check` finds a problem, else None; its evidence)."""
        problem, evidence = model_check(net, context.sampler.spawn(STREAM_MODEL))
        if problem is None:
            return None, evidence
        return refuted(method="exact", evidence={"model_check": evidence},
                       counterexample={"architecture": net.arch.describe(),
                                       "variant": net.variant.describe(), "seed": context.seed,
                                       "prime": evidence["prime"]},
                       summary=problem), evidence

    def point(self, net: VariantNetwork, context) -> Verdict:
        bad, checked = self.model_verdict(net, context)
        if bad is not None:
            return bad
        m = model_dimension.measure_variant(net, context.sampler.spawn(0), context.samples,
                                            extra_tangents=self.extra_tangents(net))
        formula, evidence = self.expected(net, context)
        evidence = {"architecture": net.arch.describe(), "variant": net.variant.describe(),
                    "fibre_measured_upper_bound": net.parameters - m.rank,
                    "symmetry_orbit_dimension_measured": m.symmetry_rank,
                    "model_check": checked, **evidence}
        return dimension_verdict(self.formula_name, formula, m, net.arch, context.seed, evidence)

    def check(self, method, params, context):
        if params["d"] is not None:
            return self.point(variant_network(params), context)
        nets = [VariantNetwork(arch, variant) for arch, variant in self.grid]
        require_hypotheses(self.id, [(f"{net.arch.slug}/{net.variant.slug}", self.violation(net))
                                     for net in nets])
        parts = [(f"{net.arch.slug}/{net.variant.slug}", self.point(net, context))
                 for net in context.progress(nets, self.id)]
        held = sum(v.status.value != "refuted" for _, v in parts)
        summary = (f"{self.formula_name} = measured rank at {held} of {len(parts)} sweep points "
                   f"({self.grid_text}); a sweep is evidence over its range, not a proof for "
                   "every size")
        verdict = combine(parts, summary=summary if held == len(parts) else None)
        if held < len(parts):
            bad = [name for name, v in parts if v.status.value == "refuted"]
            verdict.summary = (f"{len(bad)} of {len(parts)} sweep points ({self.grid_text}) "
                               f"refute {self.formula_name}: {', '.join(bad)}; first: "
                               + verdict.summary)
        return verdict

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formula")
        net = variant_network(params)
        if self.violation(net):
            raise BadInput(self.violation(net))
        from attngeom.core.claim import CheckContext
        value, _ = self.expected(net, CheckContext(seed=0))
        return formula_show([(self.formula_name, self.formula_text, value),
                             ("parameters", "sum_i d_(i-1) (H (2a_i + d_i) + [linear] d_i)",
                              net.parameters)], fmt)

"""``attngeom verify-poly``: is a user's polynomial in the coefficient coordinates in J?"""

from __future__ import annotations

from functools import lru_cache

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.claims.base import (A, ALL_OUTPUTS, COL, D, DPRIME, ROW, T, FamilyClaim,
                                       coordinates_of)
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.family_check import MAX_SUBSTITUTED_TERMS, substituted_terms_bound
from attngeom.lightning_alg.invariant import Invariant
from attngeom.lightning_alg.polynomial_io import parse_polynomial
from attngeom.lightning_alg.claims.beyond import CAUSAL, HEADS, SKIP
from attngeom.lightning_alg.models.variant import variant_from


@lru_cache(maxsize=4)
def _parsed(text: str, coords: CoordinateSystem):
    return parse_polynomial(text, coords)


class PolynomialClaim(FamilyClaim):
    """The claim "this polynomial vanishes on the attention variety (ADM Def 8)", or on the
    variety of a variant layer with --heads / --skip / --causal (exactly over F_p,
    :mod:`attngeom.lightning_alg.variant_polynomial`; issue 24).

    Not registered: built from the polynomial the user typed (Macaulay2 syntax, labels as
    ``attngeom show --format m2`` prints them).  ``proved`` / ``verified`` / ``consistent``
    when it vanishes on mu(W), ``refuted`` with a witness point otherwise.

    Bounded work (issue 29): reading refuses what :mod:`attngeom.lightning_alg.polynomial_io`
    bounds; ``--method symbolic`` is refused, and ``auto`` evaluates exactly instead, when
    substituting mu(W) could multiply out more than
    :data:`~attngeom.lightning_alg.family_check.MAX_SUBSTITUTED_TERMS` terms.
    """

    id = "verify-poly"
    source = "user polynomial (ADM Def 8)"
    statement = "The given polynomial lies in the vanishing ideal J of the attention variety."
    params = (D, T, A, DPRIME, ROW, COL, ALL_OUTPUTS, HEADS, SKIP, CAUSAL)

    def __init__(self, text: str):
        self.text = text

    def members(self, params, coords):
        return [Invariant(_parsed(self.text, coords), "user", self.source)]

    def _substitution_bound(self, params) -> int:
        coords = coordinates_of(params)
        return substituted_terms_bound(self.members(params, coords), coords, params["a"])

    def _variant(self, params):
        """The model of --heads / --skip / --causal (issue 24); plain: the single head."""
        variant = variant_from(params.get("heads"), params.get("skip"), params.get("causal"))
        if not variant.plain and params.get("all_outputs") and variant.causal:
            raise BadInput("verify-poly --causal works on one output coordinate; drop --all-outputs")
        return variant

    def auto_method(self, params):
        if not self._variant(params).plain:
            return "exact"
        method = super().auto_method(params)
        if method == "symbolic" and self._substitution_bound(params) > MAX_SUBSTITUTED_TERMS:
            return "exact"
        return method

    def check(self, method, params, context):
        variant = self._variant(params)
        if not variant.plain:
            if method != "exact":
                raise BadInput(f"verify-poly on a variant network (--heads, --skip, --causal) "
                               f"evaluates exactly over F_p; --method {method} is not available")
            from attngeom.lightning_alg.variant_polynomial import verify_on_variant
            coords = coordinates_of(params)
            return verify_on_variant(self.members(params, coords), coords, params["a"], variant, context)
        if method == "symbolic":
            bound = self._substitution_bound(params)
            if bound > MAX_SUBSTITUTED_TERMS:
                raise BadInput(f"substituting mu(W) into this polynomial could multiply out "
                               f"more than {MAX_SUBSTITUTED_TERMS:,} terms (the limit); use "
                               f"--method exact")
        return super().check(method, params, context)

"""``attngeom verify-poly``: is a user's polynomial in the coefficient coordinates in J?"""

from __future__ import annotations

from lightning_alg.claims.base import A, ALL_OUTPUTS, COL, D, DPRIME, ROW, T, FamilyClaim
from lightning_alg.invariant import Invariant
from lightning_alg.polynomial_io import parse_polynomial


class PolynomialClaim(FamilyClaim):
    """The claim "this polynomial vanishes on the attention variety (ADM Def 8)".

    Not registered: built from the polynomial the user typed (Macaulay2 syntax, labels as
    ``attngeom show --format m2`` prints them).  ``proved`` / ``verified`` / ``consistent``
    when it vanishes on mu(W), ``refuted`` with a witness point otherwise.
    """

    id = "verify-poly"
    source = "user polynomial (ADM Def 8)"
    statement = "The given polynomial lies in the vanishing ideal J of the attention variety."
    params = (D, T, A, DPRIME, ROW, COL, ALL_OUTPUTS)

    def __init__(self, text: str):
        self.text = text

    def members(self, params, coords):
        return [Invariant(parse_polynomial(self.text, coords), "user", self.source)]

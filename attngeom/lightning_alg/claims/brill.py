"""Claim ``brill``: Brill's quartics vanish on the single-column cubic when rank A = 1
(ADM Example 21 and Remark 23; construction and proof in
:mod:`attngeom.lightning_alg.invariants.brill`)."""

from __future__ import annotations

from attngeom.core.claim import Param
from attngeom.kernels.sampling import Sampler
from attngeom.core.verdict import combine
from attngeom.lightning_alg.claims.base import (
    FamilyClaim, coordinates_of, refuse_large_symbolic, render_invariants)
from attngeom.lightning_alg.invariant import Invariant
from attngeom.lightning_alg.invariants import brill
from attngeom.lightning_alg.invariants.structured import check_nontrivial, check_vanishing

#: The most points ``--brill-points`` takes (each point is one member, checked at every
#: sample; the atlas's default is 40, and 80 already span all of Brill's quartics at d = 5).
MAX_BRILL_POINTS = 10_000
BRILL_POINTS = Param("brill_points", "number of seeded integer points (x, y, z), one Brill "
                     f"quartic B(x; y, z) each (at most {MAX_BRILL_POINTS:,})", default=40,
                     maximum=MAX_BRILL_POINTS)
#: The seed of the points (x, y, z): the members are fixed polynomials, not a random draw
#: of each check.
POINT_SEED = 28


class BrillClaim(FamilyClaim):
    """For rank A = 1 (a = 1) the single-column cubic is f_T = (v.x)(k.x)(q.x) (ADM Cor 22),
    so every Brill quartic B(x; y, z) = 3 g_0 h_0 - g_1 h_1 + g_2 h_2 - 3 g_3 h_3 of f_T
    (g_k the coefficients of f(a y + b z), h_k those of the power sum
    pi_x(alpha z + beta y), pi_x = E_1^3 - 3 E_0 E_1 E_2 + 3 E_0^2 E_3 from the polars
    f(x + s w) = sum_j s^j E_j(w)) lies in J; B / 3 = sum_i c_i f(l_i(z) y - l_i(y) z).

    Members: B at ``brill_points`` seeded integer points (x, y, z), evaluated without
    expansion at generic weights (symbolic), F_p points (exact) or float64 (numeric), and
    shown to be nonzero polynomials.  At a = 2 (f_T = l q, q irreducible) they do not
    vanish (tests).
    """

    id = "brill"
    source = brill.SOURCE
    statement = ("For rank A = 1 the single-column cubic is a product of three linear "
                 "forms, so Brill's quartics B(x; y, z) of it lie in J.")
    params = FamilyClaim.params + (BRILL_POINTS,)
    methods = ("exact", "symbolic", "numeric")
    examples = ({"d": 4, "t": 1, "a": 1}, {"d": 3, "t": 2, "a": 1},
                {"d": 4, "t": 1, "a": 1, "brill_points": 3, "method": "symbolic"})

    def hypothesis_violation(self, params):
        if params["a"] != 1:
            return f"ADM Cor 22 (f_T a product of three linear forms) needs a = 1; got a={params['a']}"
        if params["d"] < 3:
            return f"every binary cubic is a product of linear forms: Brill's equations need d >= 3; got d={params['d']}"
        return None

    def auto_method(self, params):
        return "exact"

    def family(self, params, coords) -> brill.BrillFamily:
        points = brill.brill_points(Sampler(POINT_SEED), params["brill_points"], params["d"])
        return brill.BrillFamily(coords, points)

    def check(self, method, params, context):
        coords = coordinates_of(params)
        refuse_large_symbolic(method, coords)
        family = self.family(params, coords)
        return combine({"vanishing": check_vanishing(family, coords, params["a"], method, context),
                        "nontrivial": check_nontrivial(family, coords, context)})

    def members(self, params, coords, limit=None):
        family = self.family(params, coords)
        shown = range(min(family.size, limit or family.size))
        return [Invariant(family.restrict(k).expand(coords)[0], family.name, self.source,
                          family.describe(k)) for k in shown]

    def lowest_member_degree(self, params) -> int:
        return 4

    def expansion_bound(self, params, coords) -> int:
        """An upper bound on the terms of every member expanded, known before expanding
        (``attngeom ideal`` refuses a family above its limit before paying for it): one
        dense quartic in the single-column coordinates per point."""
        return params["brill_points"] * brill.quartic_terms_bound(coords)

    def sparse_members(self, params, coords, prime: int):
        """Every member expanded over F_p for ``attngeom ideal``, split into multihomogeneous
        components: the span of B over all (x, y, z) is GL_d-stable, so each component of a
        member lies in it (and in J)."""
        from attngeom.lightning_alg.ideal.attribution import SparseMembers
        family = self.family(params, coords)
        member, monomials, coeff = family.expand_mod_p(coords, prime)[4]
        return SparseMembers(4, family.size, member, monomials, coeff, True)

    def show(self, params, fmt="text", limit=None):
        coords = coordinates_of(params)
        return render_invariants(self.members(params, coords, limit), coords, fmt)


CLAIMS = [BrillClaim()]

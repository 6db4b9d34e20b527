"""Claim ``linear``: ADM §3 sequence-copy relations, Prop 9 and Cor 10."""

from __future__ import annotations

from math import comb

from flint import fmpq_mat

from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.core.verdict import proved, refuted
from attngeom.lightning_alg.claims.base import FamilyClaim
from attngeom.lightning_alg.invariants.linear import (
    coefficient_rows, internal_symmetrization_relations, linear_invariants)
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p


def exact_rank(rows: list[list]) -> int:
    """Rank over Q of a rational matrix (FLINT fmpq_mat: exact, no probability)."""
    if not rows:
        return 0
    flat = [entry for row in rows for entry in row]
    return fmpq_mat(len(rows), len(rows[0]), flat).rank()


class LinearClaim(FamilyClaim):
    """ADM §3: the sequence-copy relations and Prop 9's internal symmetrization relations
    vanish on the attention variety, and (Cor 10) the Prop 9 relations of one output
    coordinate are C(d+2,3) linearly independent linear forms.

    Checked: every relation vanishes on mu(W) (symbolic expansion, F_p evaluation or
    float64); the rank over Q of the Prop 9 coefficient matrix equals C(d+2,3) (exact,
    FLINT).  Evidence also reports dim J_1 = N - dim span(im mu), measured over F_p, and
    whether the family spans it.
    """

    id = "linear"
    source = "ADM Prop 9, Cor 10 (§3)"
    statement = ("The sequence-copy and internal symmetrization relations lie in J, and the "
                 "C(d+2,3) relations of Prop 9 in one output coordinate are linearly independent.")
    examples = ({"d": 2, "t": 2, "a": 2},                     # ADM Example 12
                {"d": 3, "t": 2, "a": 1},                     # ADM Example 13
                {"d": 3, "t": 2, "a": 3},
                {"d": 2, "t": 3, "a": 2, "dprime": 2, "all_outputs": True},
                {"d": 6, "t": 4, "a": 2, "method": "exact"})

    def hypothesis_violation(self, params):
        if params["t"] < 2:
            return f"ADM Prop 9 needs a context column n != j, so t >= 2; got t={params['t']}"
        return None

    def members(self, params, coords):
        return linear_invariants(coords, params["context"])

    def side_checks(self, params, coords, members, context):
        prop9 = internal_symmetrization_relations(coords, coords.row, coords.col, params["context"])
        rank = exact_rank(coefficient_rows(prop9, coords))
        expected = comb(params["d"] + 2, 3)
        family_rank = exact_rank(coefficient_rows(members, coords))
        span = image_span_dimension(coords, params["a"], context)
        evidence = {"prop9_rank_over_Q": rank, "cor10_count": expected,
                    "family_rank": family_rank, "coordinates": len(coords),
                    "dim_J1_measured": len(coords) - span,
                    "family_spans_J1": family_rank == len(coords) - span}
        if rank != expected:
            return {"cor10": refuted(method="exact", evidence=evidence, summary=(
                f"Cor 10: the Prop 9 relations have rank {rank} over Q, not C(d+2,3) = {expected}"),
                counterexample={"rank_over_Q": rank, "claimed": expected,
                                "output": [coords.row, coords.col]})}
        return {"cor10": proved(checked=1, method="exact", evidence=evidence, summary=(
            f"Cor 10: the {len(prop9)} Prop 9 relations have rank {rank} = C(d+2,3) over Q; "
            f"dim J_1 = {len(coords) - span} (family rank {family_rank})"))}


def image_span_dimension(coords, a: int, context, prime: int = DEFAULT_PRIME) -> int:
    """dim of the linear span of mu's image, as the F_p rank of mu at random points.

    The rank at random points is at most the true dimension and equal to it unless a
    nonzero maximal minor vanishes at the sample; 16 more points than coordinates of the
    span's upper bound make that negligible.  Used as evidence, not as a verdict.
    """
    d, dprime = coords.d, coords.dprime
    bound = min(len(coords), dprime * d * comb(d + 1, 2))
    weights = sample_weights_mod_p(context.sampler.spawn(11), bound + 16, d, dprime, a, prime)
    return rank_mod_p(Parametrization(coords).evaluate_mod_p(weights), prime)


CLAIMS = [LinearClaim()]

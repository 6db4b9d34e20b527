"""Parameters shared by the lightning claims, and the base class of invariant-family claims."""

from __future__ import annotations

import json
from typing import Any

from attngeom.core.claim import CheckContext, Claim, Param
from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict, combine, not_applicable, refuted
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.family_check import check_family
from attngeom.lightning_alg.invariant import Invariant, format_invariant, invariant_json
from attngeom.lightning_alg.invariants.linear import default_context

D = Param("d", "embedding dimension d (rows of X)")
T = Param("t", "sequence length t (columns of X)")
A = Param("a", "attention dimension a: rank(A) <= a (default: d, no constraint)")
DPRIME = Param("dprime", "output dimension d'", default=1)
ROW = Param("row", "output row i of the single-coordinate view", default=1)
COL = Param("col", "target column j of the single-coordinate view", default=1)
CONTEXT = Param("context", "context column n != j (default: 2 if j = 1, else 1)")
ALL_OUTPUTS = Param("all_outputs", "use the whole coefficient array of phi_W instead of one "
                    "output coordinate", default=False, kind="flag")

LIGHTNING_PARAMS = (D, T, A, DPRIME, ROW, COL, CONTEXT, ALL_OUTPUTS)
#: ``show --matrix``: the matrix whose minors make a family (M_Lie, N, the slices, the
#: flattening F_{n,j}, C_S) instead of the polynomials.
MATRIX = Param("matrix", "show the matrix whose minors make the family (M_Lie, N, the "
               "slices, F_{n,j}, C_S) instead of the polynomials", default=False, kind="flag")

#: Above this many coordinates, ``--method auto`` prefers exact evaluation to expansion.
AUTO_SYMBOLIC_COORDINATES = 400
#: Above this many coordinates, symbolic expansion is refused (use --method exact).
MAX_SYMBOLIC_COORDINATES = 20_000


def require(params: dict[str, Any], *names: str) -> None:
    for name in names:
        if params.get(name) is None:
            raise BadInput(f"--{name} is required")


def validate_lightning(params: dict[str, Any]) -> None:
    """Fill derived defaults (a = d, context) and reject impossible combinations."""
    require(params, "d", "t")
    if params.get("a", 0) is None:
        params["a"] = params["d"]
    if "dprime" in params and params.get("row", 1) > params["dprime"]:
        raise BadInput(f"--row {params['row']} is not an output row: d' = {params['dprime']}")
    if params.get("col", 1) > params["t"]:
        raise BadInput(f"--col {params['col']} is not an output column: t = {params['t']}")
    if "context" in params:
        if params["context"] is None:
            params["context"] = default_context(params["col"]) if params["t"] >= 2 else None
        elif params["context"] > params["t"] or params["context"] == params["col"]:
            raise BadInput(f"--context {params['context']} must be a column of X other than "
                           f"the target column {params['col']} (t = {params['t']})")


def coordinates_of(params: dict[str, Any]) -> CoordinateSystem:
    return CoordinateSystem(params["d"], params["t"], params.get("dprime", 1), params.get("row", 1),
                            params.get("col", 1), params.get("all_outputs", False))


class FamilyClaim(Claim):
    """A claim that a family of polynomials lies in the vanishing ideal J (ADM Def 8).

    Subclasses give ``members`` and, if the theorem says more than "these vanish"
    (a count, a rank), ``side_checks``; the three methods and ``show`` come from here.
    """

    params = LIGHTNING_PARAMS
    methods = ("symbolic", "exact", "numeric")

    def validate(self, params):
        validate_lightning(params)

    def members(self, params: dict[str, Any], coords: CoordinateSystem) -> list[Invariant]:
        raise NotImplementedError

    def side_checks(self, params, coords, members, context: CheckContext) -> dict[str, Verdict]:
        """What the theorem says beyond "these vanish", by part name (attngeom.core.verdict)."""
        return {}

    def auto_method(self, params):
        return "symbolic" if len(coordinates_of(params)) <= AUTO_SYMBOLIC_COORDINATES else "exact"

    # -- no holding verdict on an empty family ------------------------------------------
    def has_members(self, params) -> bool | None:
        """Whether the family yields a member at ``params``, if that is cheap to know before
        checking: an indexed family (one with ``index_sets``, the cross-column claims) looks
        at its first index set; None for the others, whose members :meth:`check` builds and
        tests itself (a subclass that overrides ``check`` and can be empty overrides this)."""
        index_sets = getattr(self, "index_sets", None)
        if callable(index_sets):
            return next(iter(index_sets(params)), None) is not None
        return None

    def empty_family(self, params) -> Verdict:
        """The verdict of a family with no member: never a holding one.

        "Every member lies in J" holds vacuously for an empty family, so a check of it
        would be proved by a wrong index list or a loosened hypothesis as readily as by a
        true theorem.  Where the claim states a count of its members (``count(params)``,
        the cross-column claims' formulas) and that count is positive, the empty list
        contradicts it: refuted.  Otherwise the claim does not say its family is nonempty
        (its hypotheses, d >= 2a + 2 and the like, are what make it so), an empty family
        is no counterexample, and the parameters are outside what it is about:
        not-applicable, naming the empty family."""
        shown = " ".join(f"{k}={v}" for k, v in params.items()
                         if v is not None and v is not False and k in ("d", "t", "a", "minor_size"))
        count = getattr(self, "count", None)
        stated = count(params) if callable(count) else 0
        if stated > 0:
            return refuted(method="exact", checked=1, summary=(
                f"the {self.id} family has no members at {shown}, but its count gives {stated}"),
                counterexample={"members": 0, "stated_count": stated})
        return not_applicable(f"the {self.id} family has no members at {shown}: a statement "
                              f"about its members holds vacuously there, so nothing is checked")

    def vacuous_verdict(self, params) -> Verdict | None:
        """:meth:`empty_family` where :meth:`has_members` knows before the run that the family
        is empty (else :meth:`check` finds it on the members it builds)."""
        return self.empty_family(params) if self.has_members(params) is False else None

    def check(self, method: str, params, context: CheckContext) -> Verdict:
        coords = coordinates_of(params)
        refuse_large_symbolic(method, coords)
        members = self.members(params, coords)
        if not members:
            return self.empty_family(params)
        vanishing = check_family(members, coords, params["a"], method, context)
        extra = self.side_checks(params, coords, members, context)
        if not extra:
            return vanishing
        return combine({"vanishing": vanishing, **extra})


    def show(self, params, fmt="text", limit=None):
        coords = coordinates_of(params)
        members = self.members(params, coords)[:limit]
        return render_invariants(members, coords, fmt)


def refuse_large_symbolic(method: str, coords: CoordinateSystem) -> None:
    """BadInput for ``--method symbolic`` above MAX_SYMBOLIC_COORDINATES coordinates (the
    expansion would not finish); every family claim asks this before building members."""
    if method == "symbolic" and len(coords) > MAX_SYMBOLIC_COORDINATES:
        raise BadInput(f"symbolic expansion over {len(coords):,} coordinates is too large "
                       f"(limit {MAX_SYMBOLIC_COORDINATES:,}); use --method exact")


def render_invariants(members: list[Invariant], coords: CoordinateSystem, fmt: str) -> str:
    """One polynomial per line (text, latex, m2), or a JSON list."""
    if fmt == "json":
        return json.dumps([invariant_json(m, coords) for m in members], indent=1)
    end = " \\\\" if fmt == "latex" else ""
    return "\n".join(format_invariant(m, coords, fmt) + end for m in members)

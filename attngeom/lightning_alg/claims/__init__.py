"""The claims of ADM and HMK that attngeom checks, as one registry.

Every module of this package that holds claims defines ``CLAIMS``, a list of claim
instances; they are collected here in module-name order, so adding a claim module needs
no edit elsewhere.
"""

from attngeom.core.claim import ClaimRegistry, collect_claims
from attngeom.core.errors import BadInput

#: The order of `attngeom list`: the papers' order (ADM §2-5, then HMK); modules not named
#: here follow alphabetically.
ORDER = ("expansion_claims", "linear", "single_column", "chow111", "cross_cubic", "low_rank",
         "syzygy", "cross_row", "flattening_entries", "veronese", "resultant", "hmk_fibres",
         "hmk_deep_fibres", "hmk")


def __getattr__(name: str):
    """``REGISTRY``, built on first use (PEP 562): importing one claim module of this
    package (``attngeom verify linear``) does not import the others."""
    if name == "REGISTRY":
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _registry() -> ClaimRegistry:
    registry = globals().get("REGISTRY")
    if registry is None:
        registry = globals()["REGISTRY"] = ClaimRegistry(collect_claims(__name__, order=ORDER))
    return registry


def family_claims(selection: str = "all") -> list:
    """The registered claims that list polynomials of J (a ``members(params, coords)``
    method: every FamilyClaim, and the Veronese, resultant and single-column claims,
    which evaluate their members without expanding them), all or those named in a list."""
    claims = [c for c in _registry() if callable(getattr(c, "members", None))]
    if selection == "all":
        return claims
    if selection == "none":
        return []
    wanted = [name.strip() for name in selection.split(",") if name.strip()]
    known = {c.id: c for c in claims}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise BadInput(f"--families: {', '.join(unknown)} is not a family claim "
                       f"(families: {', '.join(sorted(known)) or 'none registered'})")
    return [known[name] for name in wanted]

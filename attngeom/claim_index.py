"""The claim index: what the command line needs to know about every registered claim
without importing the claim modules (SymPy, SciPy, the paper packages).

``attngeom/claim_index.json`` holds, for each claim of :data:`attngeom.registry.REGISTRY`
in its order, the id, source, statement, methods, parameters (name, help, default, kind,
minimum, option), the paper examples and the module whose ``CLAIMS`` list defines it; and
the parameters of ``attngeom verify-poly``.  The CLI builds its options, ``attngeom list``
and ``--help`` from it, and ``verify`` / ``show`` / ``certify CLAIM`` import only the
module of the claim they check (:func:`load_claim`).

The file is generated from the live registry and committed::

    python -m attngeom.registry > attngeom/claim_index.json

``tests/test_claim_index.py`` fails when it is stale (a claim added, a statement or
parameter changed).  A stale index never gives a wrong claim: an id it does not know, or
a module that no longer defines the id, falls back to the full registry.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

INDEX_FILE = Path(__file__).with_name("claim_index.json")
#: The module and class of ``attngeom verify-poly``'s claim (its parameters are indexed).
POLYNOMIAL_CLAIM = ("attngeom.lightning_alg.user_polynomial", "PolynomialClaim")


class ParamInfo(NamedTuple):
    """A claim parameter as indexed: the fields of :class:`attngeom.core.claim.Param`."""

    name: str
    help: str
    default: Any
    kind: str
    minimum: int | None
    maximum: int | None
    option: str


def _param_json(p) -> dict[str, Any]:
    """A parameter's index entry (``maximum`` only where it has one)."""
    entry = {"name": p.name, "help": p.help, "default": p.default, "kind": p.kind,
             "minimum": p.minimum, "option": p.option}
    return entry if p.maximum is None else {**entry, "maximum": p.maximum}


def _defining_module(claim, modules: list[tuple[str, list]]) -> str:
    """The module whose ``CLAIMS`` holds ``claim`` (the instance) and lists the fewest
    claims: ``lightning_alg.claims.linear`` rather than an area's collecting module."""
    holders = [(len(claims), name) for name, claims in modules
               if any(item is claim for item in claims)]
    if not holders:
        raise ValueError(f"claim {claim.id!r} is in no module's CLAIMS list")
    return min(holders)[1]


def build(registry) -> dict[str, Any]:
    """The index of ``registry``, the live :func:`attngeom.registry.full_registry` (every
    claim module imported)."""
    registry.all_params()                      # raises if a name is a flag for one claim only
    modules = sorted((name, list(module.CLAIMS)) for name, module in list(sys.modules.items())
                     if name.startswith("attngeom.") and module is not None
                     and isinstance(getattr(module, "CLAIMS", None), (list, tuple)))
    claims = [{"id": c.id, "source": c.source, "statement": c.statement,
               "module": _defining_module(c, modules), "methods": list(c.methods),
               "params": [_param_json(p) for p in c.params],
               "examples": [dict(example) for example in c.examples]} for c in registry]
    module, name = POLYNOMIAL_CLAIM
    polynomial = getattr(importlib.import_module(module), name)
    return {"claims": claims,
            "verify_poly_params": [_param_json(p) for p in polynomial.params]}


def render(index: dict[str, Any]) -> str:
    """The index as the committed file's text."""
    return json.dumps(index, indent=1, ensure_ascii=False) + "\n"


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The committed index (read once)."""
    return json.loads(INDEX_FILE.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _by_id() -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in load()["claims"]}


def ids() -> list[str]:
    """Every indexed claim id, in the registry's order."""
    return list(_by_id())


def entries() -> list[dict[str, Any]]:
    """Every indexed claim (dicts of id, source, statement, module, methods, params,
    examples), in the registry's order."""
    return list(load()["claims"])


def describe(entry: dict[str, Any]) -> dict[str, Any]:
    """What :meth:`attngeom.core.claim.Claim.describe` gives, from the index."""
    return {"id": entry["id"], "source": entry["source"], "statement": entry["statement"],
            "methods": list(entry["methods"]), "params": [p["name"] for p in entry["params"]]}


def _params(items: list[dict[str, Any]]) -> list[ParamInfo]:
    return [ParamInfo(p["name"], p["help"], p["default"], p["kind"], p["minimum"], p.get("maximum"), p["option"])
            for p in items]


def all_params() -> dict[str, ParamInfo]:
    """Every parameter name some claim uses, first use first (as
    :meth:`attngeom.core.claim.ClaimRegistry.all_params`)."""
    out: dict[str, ParamInfo] = {}
    for entry in load()["claims"]:
        for p in _params(entry["params"]):
            out.setdefault(p.name, p)
    return out


def verify_poly_params() -> dict[str, ParamInfo]:
    """The parameters of ``attngeom verify-poly`` (PolynomialClaim's)."""
    return {p.name: p for p in _params(load()["verify_poly_params"])}


def load_claim(claim_id: str):
    """The registered Claim ``claim_id``, importing only the module that defines it; None
    when the index does not know the id or the module no longer defines it (the caller
    then asks the full registry)."""
    entry = _by_id().get(claim_id) if isinstance(claim_id, str) else None
    if entry is None:
        return None
    module = importlib.import_module(entry["module"])
    for claim in getattr(module, "CLAIMS", ()):
        if claim.id == claim_id:
            return claim
    return None

"""Every registered claim in one registry: the claims of ``attngeom.lightning_alg`` (ADM,
HMK) and of ``attngeom.geometry_proofs`` (GEC, GT, RGT).  Importing this module imports
every claim module (SymPy, the claim packages); ``import attngeom`` does not, the CLI and
the functions of :mod:`attngeom.api` do when they need it."""

from __future__ import annotations

from attngeom.geometry_proofs.claims import REGISTRY as GEOMETRY_CLAIMS
from attngeom.kernels.claim import Claim, ClaimRegistry
from attngeom.kernels.errors import BadInput
from attngeom.lightning_alg.claims import REGISTRY as LIGHTNING_CLAIMS

REGISTRY = ClaimRegistry.merge(LIGHTNING_CLAIMS, GEOMETRY_CLAIMS)
#: The papers, as the prefixes of the claims' sources (``attngeom list --source``).
SOURCES = ("ADM", "HMK", "GEC", "GT", "RGT")


def check_source(source: str | None) -> str | None:
    """``source`` when it is None or one of :data:`SOURCES`, else BadInput."""
    if source is not None and source not in SOURCES:
        raise BadInput(f"unknown source {str(source)[:40]!r}; choose one of {', '.join(SOURCES)}")
    return source


def claims_of(source: str | None = None, claim_ids: str | None = None) -> list[Claim]:
    """The registered claims of paper SOURCE (None: all), only CLAIM_IDS ("id1,id2") if given."""
    wanted = None if claim_ids is None else {REGISTRY.get(name.strip()).id
                                             for name in claim_ids.split(",") if name.strip()}
    return [c for c in REGISTRY if (source is None or c.source.startswith(source))
            and (wanted is None or c.id in wanted)]


def errata_task(job) -> dict:
    """One paper example verified, where an executor runs it: job -> verdict JSON."""
    return REGISTRY.get(job.claim).verify(dict(job.params), job.method, job.context()).to_json()

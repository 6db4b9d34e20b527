"""Every registered claim in one registry: the claims of ``attngeom.lightning_alg`` (ADM,
HMK) and of ``attngeom.geometry_proofs`` (GEC, GT, RGT).

Importing this module imports no claim module.  :data:`REGISTRY` answers ``get(id)`` by
importing only the module that defines the claim (found in :mod:`attngeom.claim_index`);
iterating it, ``len`` and ``all_params`` build the full registry (every claim module,
SymPy, SciPy) on first use, as :func:`full_registry` does.

``python -m attngeom.registry > attngeom/claim_index.json`` writes the claim index of the
live registry (:func:`attngeom.claim_index.build`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from attngeom.core.errors import BadInput

if TYPE_CHECKING:
    from attngeom.core.claim import Claim, ClaimRegistry

#: The papers, as the prefixes of the claims' sources (``attngeom list --source``).
SOURCES = ("ADM", "HMK", "GEC", "GT", "RGT")


@functools.lru_cache(maxsize=1)
def full_registry() -> ClaimRegistry:
    """Every claim, in the order of ``attngeom list`` (imports every claim module)."""
    from attngeom.geometry_proofs.claims import REGISTRY as GEOMETRY_CLAIMS
    from attngeom.core.claim import ClaimRegistry
    from attngeom.lightning_alg.claims import REGISTRY as LIGHTNING_CLAIMS
    return ClaimRegistry.merge(LIGHTNING_CLAIMS, GEOMETRY_CLAIMS)


class LazyRegistry:
    """The merged registry with ClaimRegistry's interface, loading claim modules on demand:
    ``get`` imports the one module that defines the claim; the rest builds every claim."""

    def get(self, claim_id: str) -> Claim:
        from attngeom.claim_index import load_claim
        claim = load_claim(claim_id)
        return claim if claim is not None else full_registry().get(claim_id)

    def __iter__(self):
        return iter(full_registry())

    def __len__(self) -> int:
        return len(full_registry())

    def all_params(self):
        return full_registry().all_params()

    def __repr__(self) -> str:
        return "<attngeom.registry.REGISTRY: every registered claim, loaded on demand>"


REGISTRY = LazyRegistry()


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


def certify_task(task):
    """One certificate, where an executor runs it: (job, present text) -> outcome
    (:func:`attngeom.core.certificate_jobs.certify_job` against :data:`REGISTRY`)."""
    from attngeom.core.certificate_jobs import certify_job
    job, present = task
    return certify_job(REGISTRY, job, present)


def recheck_task(task):
    """One certificate re-checked, where an executor runs it: (path, content) -> CheckResult
    (:func:`attngeom.core.certificates.check_certificate` against :data:`REGISTRY`)."""
    from pathlib import Path

    from attngeom.core.certificates import check_certificate
    path, content = task
    return check_certificate(Path(path), REGISTRY, content)


def main() -> None:
    """Print the claim index of the live registry (the committed ``claim_index.json``)."""
    import sys

    from attngeom.claim_index import build, render
    sys.stdout.write(render(build(full_registry())))


if __name__ == "__main__":
    main()

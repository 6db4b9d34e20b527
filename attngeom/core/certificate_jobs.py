"""Writing and re-checking certificates as independent tasks of :mod:`attngeom.core.executor`.

A :class:`CertificateJob` holds everything one certificate needs (the claim's id, its
parameters as given, method, seed, samples, backend, device), so it can run anywhere.
The caller reads and writes the files; a worker gets the text of the certificate already
there and sends back the text of the new one, so workers on other machines need no
shared file system, and every file is written atomically by one process.

A rerun keeps a certificate that is already up to date (:func:`up_to_date`): well-formed,
made by the same job (claim, parameters, method, seed, samples, backend, device) with the
same toolkit version, from the same objects (the digest of ``show --format m2``), and whose
verdict compares equal to the re-run's (the job is always run: a file edited by hand is
never kept because its header matches).

The task functions themselves bind a claim registry, so they live with the registry
(:func:`attngeom.registry.certify_task` and :func:`~attngeom.registry.recheck_task`):
``task((job, present_text))`` returns :func:`certify_job`'s outcome,
``task((path, content))`` a ``CheckResult``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from attngeom.core import __version__
from attngeom.core.atomic_files import write_text_atomically
from attngeom.core.certificates import (FORMAT, FORMAT_VERSION, CheckResult, _canonical,
                                  certificate_name, certificate_text, digest, make_certificate,
                                  Unreadable, read_for_check, split_example, undefined_fields)
from attngeom.core.claim import CheckContext, Claim, ClaimRegistry
from attngeom.core.errors import BadInput
from attngeom.core.executor import Executor, Progress
from attngeom.core.verdict import Status

STATUSES = {status.value for status in Status}


@dataclass(frozen=True)
class CertificateJob:
    """One certificate to write: the claim, its parameters as given (None = default), how."""

    claim: str
    params: dict[str, Any] = field(default_factory=dict)
    method: str = "auto"
    seed: int = 0
    samples: int | None = None
    backend: str = "numpy"
    device: str = "cpu"

    @property
    def filename(self) -> str:
        return certificate_name(self.claim, self.params)

    def context(self) -> CheckContext:
        return CheckContext(seed=self.seed, samples=self.samples, backend=self.backend,
                            device=self.device)


def suite_jobs(claims: Sequence[Claim], seed: int = 0, samples: int | None = None,
               backend: str = "numpy", device: str = "cpu") -> list[CertificateJob]:
    """The jobs of ``certify --suite paper``: every claim at each of its examples (an
    example's own method and samples; ``samples``, when given, for all)."""
    return [CertificateJob(claim.id, params, method, seed, samples or count, backend, device)
            for claim in claims for params, method, count in map(split_example, claim.examples)]


@dataclass
class CertificateOutcome:
    """What a worker sends back: the verdict's status and time, and the new certificate's
    text (None: the certificate already there is up to date and stays)."""

    claim: str
    status: str
    seconds: float
    text: str | None = None

    @property
    def skipped(self) -> bool:
        return self.text is None


def certify_job(registry: ClaimRegistry, job: CertificateJob,
                present: str | bytes | None = None) -> CertificateOutcome:
    """Check the job's claim and return its certificate, unless ``present`` (the file
    already there) is an up-to-date certificate of the same job."""
    claim = registry.get(job.claim)
    kept = up_to_date(present, claim, job) if present is not None else None
    context = job.context()
    verdict = claim.verify(dict(job.params), job.method, context)
    cert = make_certificate(claim, verdict, job.method, context)
    if kept is not None and _same_verdict(kept, cert):
        return CertificateOutcome(claim.id, verdict.status.value, verdict.seconds)
    return CertificateOutcome(claim.id, verdict.status.value, verdict.seconds,
                              certificate_text(cert))


def _same_verdict(stored: dict, fresh: dict) -> bool:
    """Whether the stored certificate's verdict compares equal to the fresh one, value by
    value as ``check-certificates`` compares them (a file edited by hand, its errata
    emptied or its status changed, is rewritten, never kept as up to date)."""
    from attngeom.core.certificate_compare import Comparison
    from attngeom.core.certificates import COMPARED_FIELDS
    comparison = Comparison(fresh["verdict"]["kinds"])
    for key in COMPARED_FIELDS:
        comparison.field(key, stored["verdict"].get(key), fresh["verdict"].get(key))
    return not comparison.problems


def up_to_date(present: str | bytes, claim: Claim, job: CertificateJob) -> dict | None:
    """The stored certificate when it is well-formed and would be written again as it is
    (same job, toolkit version and digest of the claim's objects), else None.  The
    digest, the one costly check, comes last."""
    try:
        cert = json.loads(present)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if (not isinstance(cert, dict) or not isinstance(cert.get("verdict"), dict)
            or undefined_fields(cert)):
        return None
    resolved = claim.resolve(dict(job.params))
    params = _canonical(resolved)
    expected = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "toolkit_version": __version__, "claim": claim.id, "params": params,
                "method_requested": job.method, "seed": job.seed, "samples": job.samples,
                "backend": job.backend, "device": job.device}
    verdict = cert["verdict"]
    if (any(cert.get(key) != value for key, value in expected.items())
            or verdict.get("claim") != claim.id or verdict.get("params") != params
            or verdict.get("status") not in STATUSES):
        return None
    return cert if cert.get("digest") == digest(claim, resolved) else None


def write_certificates(jobs: Sequence[CertificateJob], out_dir: Path, executor: Executor,
                       task: Callable, force: bool = False,
                       progress: Progress | None = None) -> list[dict]:
    """Run ``jobs`` on ``executor`` and write each certificate to ``out_dir`` as it
    arrives (atomically), so an interrupted suite keeps what it finished; up-to-date
    certificates are skipped unless ``force``.  Rows (file, claim, status, seconds,
    skipped) in job order."""
    paths = [Path(out_dir) / job.filename for job in jobs]
    present = [None if force else _content(path) for path in paths]
    rows: list[dict] = [{} for _ in jobs]
    for index, outcome in executor.as_completed(task, list(zip(jobs, present)),
                                                names=[path.name for path in paths],
                                                label="certifying", progress=progress):
        if outcome.text is not None:
            try:
                write_text_atomically(paths[index], outcome.text)
            except OSError as error:
                raise BadInput(f"cannot write {paths[index]}: {error.strerror or error}") from None
        rows[index] = {"file": str(paths[index]), "claim": outcome.claim,
                       "status": outcome.status, "seconds": outcome.seconds,
                       "skipped": outcome.skipped}
    return rows


def recheck_certificates(files: Sequence[Path], executor: Executor, task: Callable,
                         progress: Progress | None = None) -> list[CheckResult]:
    """Re-check every file on ``executor``; the results in file order."""
    tasks = [(str(path), read_for_check(path)) for path in files]
    return executor.map(task, tasks, names=[Path(path).name for path in files],
                        label="re-checking", progress=progress)


def _content(path: Path) -> bytes | None:
    """The file's bytes, or None when there is none, or it is no regular certificate-sized
    file, or it cannot be read here (then it is written anew)."""
    content = read_for_check(path)
    return None if isinstance(content, Unreadable) else content

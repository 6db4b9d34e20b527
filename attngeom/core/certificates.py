"""Machine-checkable certificates of verdicts, and their re-checking.

A certificate is one JSON file per (claim, parameters).  It holds the verdict fields of
ARCHITECTURE.md, how it was obtained (method, seed, samples, backend, device), the toolkit
version, a SHA-256 digest of the claim's generated objects (the sorted lines of
``show --format m2``: the invariant polynomials, matrices, formulas) and the evidence that
lets anyone re-check it by hand: the prime and the sampled points of exact checks, the
term counts of symbolic proofs, the witness of a refutation, the residuals and controls
of numeric checks.

Re-checking (:func:`check_certificate`) first validates the file completely
(:mod:`attngeom.core.certificate_schema`: it is untrusted input), then re-runs the claim from the
certificate's own seed and parameters and compares the digest and the verdict value by
value, each by its evidence kind (:mod:`attngeom.core.evidence`, :mod:`attngeom.core.certificate_compare`):
exact values exactly, floats within the claim's tolerance, bounds against their bound,
measured values not at all.  The promise: the same verdict, with the same exact evidence,
on any machine, with any BLAS kernel, thread count or supported library build.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attngeom.core import __version__
from attngeom.core.atomic_files import write_text_atomically
from attngeom.core.certificate_compare import Comparison
from attngeom.core.certificate_schema import (CERTIFICATE_FIELDS, FORMAT, FORMAT_VERSION,
                                        VERDICT_FIELDS, InvalidCertificate, load_certificate,
                                        read_certificate_file, undefined_fields,
                                        validate_certificate)
from attngeom.core.claim import CheckContext, Claim, ClaimRegistry
from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict

__all__ = ["CERTIFICATE_FIELDS", "FORMAT", "FORMAT_VERSION", "VERDICT_FIELDS", "CheckResult",
           "Unreadable", "certificate_files", "certificate_name", "certificate_text",
           "check_certificate", "digest", "make_certificate", "read_for_check",
           "split_example", "undefined_fields", "write_certificate"]

#: Verdict fields compared on re-checking (``seconds`` and ``version`` are measured).
COMPARED_FIELDS = ("claim", "source", "params", "status", "method", "checked",
                   "failure_probability", "max_residual", "counterexample", "backend",
                   "device", "error_kind", "errata", "summary", "evidence", "kinds")


def digest(claim: Claim, params: dict[str, Any]) -> str:
    return hashlib.sha256(claim.digest_text(params).encode()).hexdigest()


def _canonical(value: Any) -> Any:
    """JSON round trip, so tuples become lists as they will in the file."""
    return json.loads(json.dumps(value, default=str))


def make_certificate(claim: Claim, verdict: Verdict, method: str,
                     context: CheckContext) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "toolkit_version": __version__,
        "claim": claim.id,
        "params": _canonical(verdict.params),
        "method_requested": method,
        "seed": context.seed,
        "samples": context.samples,
        "backend": context.backend,
        "device": context.device,
        "digest": digest(claim, verdict.params),
        "verdict": _canonical(verdict.to_json()),
    }


def certificate_name(claim_id: str, params: dict[str, Any]) -> str:
    parts = [claim_id] + [f"{k}{_slug(v)}" for k, v in sorted(params.items())
                          if v not in (None, False)]
    return "__".join(parts) + ".json"


def _slug(value: Any) -> str:
    if value is True:
        return ""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return re.sub(r"[^A-Za-z0-9,.-]+", "_", text)


def split_example(example: dict[str, Any]) -> tuple[dict[str, Any], str, int | None]:
    """A claim example is its parameters plus optional 'method' and 'samples' keys."""
    params = dict(example)
    return params, params.pop("method", "auto"), params.pop("samples", None)


def certificate_text(cert: dict[str, Any]) -> str:
    """A certificate as its file holds it: sorted keys, indented, a final newline."""
    return json.dumps(cert, indent=1, sort_keys=True) + "\n"


def write_certificate(claim: Claim, raw_params: dict[str, Any], method: str,
                      context: CheckContext, out_dir: Path) -> tuple[Path, Verdict]:
    """Check the claim and write its certificate to ``out_dir`` (atomically: an
    interrupted write leaves no half file)."""
    verdict = claim.verify(raw_params, method, context)
    path = Path(out_dir) / certificate_name(claim.id, raw_params)
    write_text_atomically(path, certificate_text(make_certificate(claim, verdict, method, context)))
    return path, verdict


@dataclass
class CheckResult:
    path: Path
    claim: str = "?"
    status: str = "?"
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: True when the file failed validation (bad input: exit code 2), not the comparison.
    invalid: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def check_certificate(path: Path, registry: ClaimRegistry,
                      content: str | bytes | None = None) -> CheckResult:
    """Validate one certificate, re-run it and list every difference (empty: it checks
    out).  ``content``: the file's content, read by the caller (a worker on another machine
    cannot read ``path``); by default it is read from ``path``."""
    result = CheckResult(path)
    try:
        if isinstance(content, Unreadable):
            raise InvalidCertificate(content.reason)
        cert = load_certificate(read_certificate_file(Path(path)) if content is None else content)
        if isinstance(cert.get("claim"), str):
            result.claim = cert["claim"][:40]
        if isinstance(cert.get("verdict"), dict) and isinstance(cert["verdict"].get("status"), str):
            result.status = cert["verdict"]["status"][:15]
        claim, _, context = validate_certificate(cert, registry)
    except OSError as error:
        result.problems.append(f"cannot read: {error.strerror or error}")
        result.invalid = True
        return result
    except InvalidCertificate as error:
        result.problems.append(str(error))
        result.invalid = True
        return result
    try:
        fresh = claim.verify(dict(cert["params"]), cert["method_requested"], context)
    except Exception as error:      # one certificate's failure is its own, never the run's
        text = str(error).splitlines()[0][:300] if str(error) else ""
        kind = "" if isinstance(error, BadInput) else f"{type(error).__name__}: "
        result.problems.append(f"cannot re-run: {kind}{text or repr(error)[:300]}")
        return result
    result.seconds = fresh.seconds or 0.0
    new_digest = digest(claim, fresh.params)
    if cert["digest"] != new_digest:
        result.problems.append(f"digest: certificate {cert['digest'][:16]}..., "
                               f"re-run {new_digest[:16]}... (the claim's objects changed)")
    fresh_json = _canonical(fresh.to_json())
    comparison = Comparison(fresh_json["kinds"])
    for key in COMPARED_FIELDS:
        comparison.field(key, cert["verdict"][key], fresh_json.get(key))
    result.problems += comparison.problems
    return result


@dataclass(frozen=True)
class Unreadable:
    """A certificate file the caller could not read safely (:func:`read_certificate_file`),
    sent to :func:`check_certificate` in place of its content."""

    reason: str


def read_for_check(path: Path) -> bytes | Unreadable:
    """The content of ``path`` for :func:`check_certificate`, or why it is not read."""
    try:
        return read_certificate_file(Path(path))
    except InvalidCertificate as error:
        return Unreadable(str(error))
    except OSError as error:
        return Unreadable(f"cannot read: {error.strerror or error}")


def certificate_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise BadInput(f"{directory} is not a directory")
    return sorted(directory.glob("*.json"))

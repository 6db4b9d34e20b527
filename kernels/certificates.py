"""Machine-checkable certificates of verdicts, and their re-checking.

A certificate is one JSON file per (claim, parameters).  It holds the verdict fields of
ARCHITECTURE.md, how it was obtained (method, seed, samples, backend, device), the toolkit
version, a SHA-256 digest of the claim's generated objects (the sorted lines of
``show --format m2``: the invariant polynomials, matrices, formulas) and the evidence that
lets anyone re-check it by hand: the prime and the sampled points of exact checks, the
term counts of symbolic proofs, the witness of a refutation, the residuals and controls
of numeric checks.

Re-checking (:func:`check_certificate`) re-runs the claim from the certificate's own seed
and parameters and compares the verdict, the digest and the evidence field by field;
floating-point numbers agree when within a relative 1e-6 (or both below 1e-12), which
absorbs BLAS reduction-order differences between machines and nothing else.  A field the
format does not define, at the top level or in ``verdict`` (an added ``status``, say), is
refused by name before anything is re-run.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernels import __version__
from kernels.atomic_files import write_text_atomically
from kernels.claim import CheckContext, Claim, ClaimRegistry
from kernels.errors import BadInput
from kernels.verdict import Status, Verdict

FORMAT = "attngeom-certificate"
FORMAT_VERSION = 1

#: The fields of a certificate, as :func:`make_certificate` writes them; any other is refused.
CERTIFICATE_FIELDS = ("format", "format_version", "toolkit_version", "claim", "params",
                      "method_requested", "seed", "samples", "backend", "device", "digest",
                      "verdict")
#: The fields of its ``verdict``: those of :meth:`kernels.verdict.Verdict.to_json` (the
#: verdict contract of ARCHITECTURE.md plus ``summary`` and ``evidence``).
VERDICT_FIELDS = tuple(Verdict(Status.PROVED, None).to_json())
#: Verdict fields compared on re-checking (``seconds`` and ``version`` are not).
COMPARED_FIELDS = ("claim", "source", "params", "status", "method", "checked",
                   "failure_probability", "max_residual", "counterexample", "backend",
                   "device", "summary", "evidence")


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

    @property
    def ok(self) -> bool:
        return not self.problems


def _differences(stored: Any, fresh: Any, where: str, out: list[str]) -> None:
    if isinstance(stored, dict) and isinstance(fresh, dict):
        for key in sorted(set(stored) | set(fresh)):
            if key not in stored:
                out.append(f"{where}.{key} is missing from the certificate")
            elif key not in fresh:
                out.append(f"{where}.{key} is not produced by the re-run")
            else:
                _differences(stored[key], fresh[key], f"{where}.{key}", out)
    elif isinstance(stored, list) and isinstance(fresh, list):
        if len(stored) != len(fresh):
            out.append(f"{where} has {len(stored)} entries, the re-run {len(fresh)}")
        else:
            for k, (a, b) in enumerate(zip(stored, fresh)):
                _differences(a, b, f"{where}[{k}]", out)
    elif isinstance(stored, float) or isinstance(fresh, float):
        if not (isinstance(stored, (int, float)) and isinstance(fresh, (int, float))
                and math.isclose(stored, fresh, rel_tol=1e-6, abs_tol=1e-12)):
            out.append(f"{where}: certificate {stored!r}, re-run {fresh!r}")
    elif stored != fresh:
        shown = lambda v: (repr(v)[:80] + "...") if len(repr(v)) > 80 else repr(v)
        out.append(f"{where}: certificate {shown(stored)}, re-run {shown(fresh)}")


def undefined_fields(cert: dict[str, Any]) -> list[str]:
    """The fields of ``cert`` and of its verdict that format version FORMAT_VERSION does not
    define (CERTIFICATE_FIELDS, VERDICT_FIELDS), named as ``status`` or ``verdict.extra``.
    Inside ``evidence`` every field is compared with the re-run instead."""
    undefined = [key for key in cert if key not in CERTIFICATE_FIELDS]
    if isinstance(cert.get("verdict"), dict):
        undefined += [f"verdict.{key}" for key in cert["verdict"] if key not in VERDICT_FIELDS]
    return undefined


def check_certificate(path: Path, registry: ClaimRegistry,
                      content: str | bytes | None = None) -> CheckResult:
    """Re-run one certificate and list every difference (empty list: it checks out).
    ``content``: the file's content, read by the caller (a worker on another machine
    cannot read ``path``); by default it is read from ``path``."""
    result = CheckResult(path)
    try:
        cert = json.loads(path.read_text() if content is None else content)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        result.problems.append(f"malformed: {str(error).splitlines()[0]}")
        return result
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        result.problems.append(f"malformed: not an {FORMAT} file")
        return result
    version = cert.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        result.problems.append(f"written by certificate format version {version!r}; this "
                               f"attngeom ({__version__}) reads versions <= {FORMAT_VERSION}")
        return result
    missing = [k for k in ("claim", "params", "method_requested", "seed", "samples", "backend",
                           "device", "digest", "verdict") if k not in cert]
    if missing:
        result.problems.append(f"malformed: missing field(s) {', '.join(missing)}")
        return result
    result.claim = str(cert["claim"])
    result.status = str(cert["verdict"].get("status", "?")) if isinstance(cert["verdict"], dict) else "?"
    undefined = undefined_fields(cert)
    if undefined:
        result.problems.append(f"field(s) the certificate format does not define: "
                               f"{', '.join(undefined)}")
        return result
    try:
        claim = registry.get(cert["claim"])
        context = CheckContext(seed=cert["seed"], samples=cert["samples"],
                               backend=cert["backend"], device=cert["device"])
        fresh = claim.verify(dict(cert["params"]), cert["method_requested"], context)
    except (BadInput, TypeError, ValueError, AttributeError) as error:
        result.problems.append(f"cannot re-run: {error}")
        return result
    result.seconds = fresh.seconds or 0.0
    new_digest = digest(claim, fresh.params)
    if cert["digest"] != new_digest:
        result.problems.append(f"digest: certificate {cert['digest'][:16]}..., "
                               f"re-run {new_digest[:16]}... (the claim's objects changed)")
    stored = cert["verdict"]
    if not isinstance(stored, dict):
        result.problems.append("malformed: verdict is not an object")
        return result
    fresh_json = _canonical(fresh.to_json())
    for key in COMPARED_FIELDS:
        if key not in stored:
            result.problems.append(f"verdict.{key} is missing from the certificate")
        else:
            _differences(stored[key], fresh_json.get(key), f"verdict.{key}", result.problems)
    return result


def certificate_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise BadInput(f"{directory} is not a directory")
    return sorted(directory.glob("*.json"))

"""Validating a certificate before anything in it is run: certificates are untrusted input.

A certificate folder may come from someone else (a pull request, a paper's supplement).
:func:`validate_certificate` checks the whole file against the format (the fields, their
JSON types, sizes and nesting) and the parameters through the claim's own parameter checks
and limits, the same as ``attngeom verify`` applies to options, *before* the claim is
re-run.  A certificate that fails is reported by name with the reason, and nothing of it
reaches a claim.  No text of a certificate is ever evaluated as code: parameters are
parsed by the claims' grammars (:mod:`attngeom.core.expressions` for expressions).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from attngeom.core.claim import METHODS, CheckContext, Claim, ClaimRegistry, validate_context
from attngeom.core.errors import BadInput
from attngeom.core.verdict import Status, Verdict

FORMAT = "attngeom-certificate"
#: 2: typed evidence (``verdict.kinds``); 1 compared every float to a relative 1e-6.
FORMAT_VERSION = 3
#: What each older format lacks (the message that asks for re-certifying).
FORMAT_CHANGES = {1: "typed evidence (verdict.kinds)",
                  2: "the kind of a refutation (verdict.error_kind, verdict.errata)"}

#: The fields of a certificate, as ``make_certificate`` writes them; any other is refused.
CERTIFICATE_FIELDS = ("format", "format_version", "toolkit_version", "claim", "params",
                      "method_requested", "seed", "samples", "backend", "device", "digest",
                      "verdict")
#: The fields of its ``verdict``: those of :meth:`attngeom.core.verdict.Verdict.to_json` (the
#: verdict contract of ARCHITECTURE.md plus ``summary``, ``evidence`` and ``kinds``).
VERDICT_FIELDS = tuple(Verdict(Status.PROVED, None).to_json())

#: Limits on a certificate file: bytes, JSON nesting, length of one string.
MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 40
MAX_STRING = 100_000
MAX_PARAM_TEXT = 2_000

_DIGEST = re.compile(r"[0-9a-f]{64}")
_STATUSES = {status.value for status in Status}


class InvalidCertificate(ValueError):
    """The certificate does not follow the format; the message says where and why."""


#: Most digits of an integer in a certificate (the largest exact count written today has
#: under 20; Python's own limit, 4,300, would end the whole run with a ValueError).
MAX_INT_DIGITS = 60


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise InvalidCertificate(f"malformed: an integer of {len(text.lstrip('-')):,} digits "
                                 f"(at most {MAX_INT_DIGITS})")
    return int(text)


def read_certificate_file(path: Path) -> bytes:
    """The bytes of the certificate file ``path``, read only if it is a regular file (not a
    symlink, FIFO, socket or device) of at most :data:`MAX_BYTES` bytes, as fstat says
    before anything is read.  Raises :class:`InvalidCertificate` (``OSError`` when it
    cannot be opened)."""
    import os
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if os.path.islink(path):
            raise InvalidCertificate("not a regular file: a symbolic link") from None
        raise error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device"
                    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                    else "a directory" if stat.S_ISDIR(info.st_mode) else "a special file")
            raise InvalidCertificate(f"not a regular file: {kind}")
        if info.st_size > MAX_BYTES:
            raise InvalidCertificate(f"malformed: {info.st_size:,} bytes (at most {MAX_BYTES:,})")
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return handle.read(MAX_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)


def load_certificate(content: str | bytes) -> dict[str, Any]:
    """Parse a certificate's text within the size, integer and nesting limits."""
    if len(content) > MAX_BYTES:
        raise InvalidCertificate(f"malformed: {len(content):,} bytes (at most {MAX_BYTES:,})")
    try:
        cert = json.loads(content, parse_int=_bounded_int)
    except InvalidCertificate:
        raise
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidCertificate(f"malformed: {str(error).splitlines()[0]}") from None
    except RecursionError:
        raise InvalidCertificate("malformed: nested too deeply") from None
    except ValueError as error:
        raise InvalidCertificate(f"malformed: {str(error).splitlines()[0][:200]}") from None
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise InvalidCertificate(f"malformed: not an {FORMAT} file")
    _check_nesting(cert)
    return cert


def _check_nesting(value: Any, depth: int = 0, where: str = "") -> None:
    if depth > MAX_DEPTH:
        raise InvalidCertificate(f"malformed: {where or 'the file'} is nested more than "
                                 f"{MAX_DEPTH} levels deep")
    if isinstance(value, str) and len(value) > MAX_STRING:
        raise InvalidCertificate(f"malformed: {where} is a string of {len(value):,} characters "
                                 f"(at most {MAX_STRING:,})")
    children = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, item in children:
        _check_nesting(item, depth + 1, f"{where}.{key}" if where else str(key))


def undefined_fields(cert: dict[str, Any]) -> list[str]:
    """The fields of ``cert`` and of its verdict that the format does not define
    (CERTIFICATE_FIELDS, VERDICT_FIELDS), named as ``status`` or ``verdict.extra``.
    Inside ``evidence`` every field is compared with the re-run instead."""
    undefined = [str(key) for key in cert if key not in CERTIFICATE_FIELDS]
    if isinstance(cert.get("verdict"), dict):
        undefined += [f"verdict.{key}" for key in cert["verdict"] if key not in VERDICT_FIELDS]
    return undefined


def _type_error(name: str, expected: str, value: Any) -> InvalidCertificate:
    return InvalidCertificate(f"invalid: {name} must be {expected}; got {type(value).__name__} "
                              f"{json.dumps(value)[:40]}")


def _param_value_ok(value: Any) -> bool:
    scalar = lambda v: v is None or isinstance(v, (bool, int, float)) or (
        isinstance(v, str) and len(v) <= MAX_PARAM_TEXT)
    if isinstance(value, list):
        return len(value) <= 64 and all(scalar(v) and v is not None for v in value)
    return scalar(value)


def validate_certificate(cert: dict[str, Any], registry: ClaimRegistry
                         ) -> tuple[Claim, dict[str, Any], CheckContext]:
    """The claim, the resolved parameters and the context of a loaded certificate, after
    checking every field; InvalidCertificate naming the first field that is wrong."""
    version = cert.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
        raise InvalidCertificate(f"written by certificate format version {version!r}; this "
                                 f"attngeom reads version {FORMAT_VERSION}")
    if version < FORMAT_VERSION:
        raise InvalidCertificate(f"format version {version} predates "
                                 f"{FORMAT_CHANGES.get(version, 'this format')}; re-certify "
                                 f"it with `attngeom certify`")
    missing = [k for k in CERTIFICATE_FIELDS if k not in cert]
    if missing:
        raise InvalidCertificate(f"malformed: missing field(s) {', '.join(missing)}")
    undefined = undefined_fields(cert)
    if undefined:
        raise InvalidCertificate(f"field(s) the certificate format does not define: "
                                 f"{', '.join(undefined)}")
    for name in ("toolkit_version", "claim", "method_requested", "backend", "device", "digest"):
        if not isinstance(cert[name], str):
            raise _type_error(name, "a string", cert[name])
    if not _DIGEST.fullmatch(cert["digest"]):
        raise InvalidCertificate("invalid: digest must be 64 lowercase hexadecimal digits")
    _check_verdict(cert["verdict"])
    try:
        claim = registry.get(cert["claim"])
    except BadInput as error:
        raise InvalidCertificate(f"invalid: {error}") from None
    if cert["method_requested"] not in ("auto", *METHODS):
        raise InvalidCertificate(f"invalid: method_requested {cert['method_requested'][:40]!r} "
                                 f"is not one of auto, {', '.join(METHODS)}")
    params = cert["params"]
    if not isinstance(params, dict):
        raise _type_error("params", "an object", params)
    for name, value in params.items():
        if not _param_value_ok(value):
            raise InvalidCertificate(f"invalid: params.{name[:40]} is not a number, a short "
                                     f"text, a flag or a short list of them")
    for name in ("seed", "samples"):
        if cert[name] is not None and (not isinstance(cert[name], int) or isinstance(cert[name], bool)):
            raise _type_error(name, "an integer", cert[name])
    for name, value in params.items():       # before anything parses them
        if isinstance(value, str) and value.strip() and _names_a_file(value):
            raise InvalidCertificate(f"invalid: params.{name} names a file on this machine; a "
                                     f"certificate is self-contained")
    try:
        context = validate_context(CheckContext(seed=cert["seed"], samples=cert["samples"],
                                                backend=cert["backend"], device=cert["device"]))
        resolved = claim.resolve(dict(params))
        claim.hypothesis_violation(dict(resolved))    # parses what the hypotheses read
    except BadInput as error:
        raise InvalidCertificate(f"invalid: {error}") from None
    refusal = claim.certificate_violation(dict(resolved))
    if refusal:
        raise InvalidCertificate(f"invalid: {refusal}")
    return claim, resolved, context


def _names_a_file(value: str) -> bool:
    """Whether ``value``, as given or as a parser would read it (surrounding whitespace
    stripped, the path normalized), names something on this machine."""
    import os
    for text in {value, value.strip(), os.path.normpath(value.strip())}:
        try:
            if text and os.path.lexists(text):
                return True
        except (OSError, ValueError):        # a name too long, a NUL byte
            continue
    return False


def _check_verdict(verdict: Any) -> None:
    if not isinstance(verdict, dict):
        raise _type_error("verdict", "an object", verdict)
    missing = [k for k in VERDICT_FIELDS if k not in verdict]
    if missing:
        raise InvalidCertificate(f"malformed: verdict lacks {', '.join(missing)}")
    if verdict["status"] not in _STATUSES:
        raise InvalidCertificate(f"invalid: verdict.status must be one of "
                                 f"{', '.join(sorted(_STATUSES))}")
    for name in ("evidence", "kinds"):
        if not isinstance(verdict[name], dict):
            raise _type_error(f"verdict.{name}", "an object", verdict[name])
    for name in ("summary", "claim", "source"):
        if not isinstance(verdict[name], str):
            raise _type_error(f"verdict.{name}", "a string", verdict[name])

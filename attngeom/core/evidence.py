"""Kinds of evidence: how each value of a verdict is compared when a certificate is re-checked.

A certificate promises the same verdict, with the same exact evidence, on any machine, with
any BLAS kernel, thread count or supported library build.  Every value of a verdict's JSON
therefore has one of four kinds, and :mod:`attngeom.core.certificates` compares by kind:

==========  ==================================================================  ============
kind        what                                                                compared
==========  ==================================================================  ============
exact       statuses, integers, strings, rationals and polynomials as text,     exactly
            ranks, counts, witnesses over Q or F_p
float       a deterministic float64 result (the default for every float)        within the
                                                                                claim's
                                                                                tolerance
bound       a measured error that the claim needs only on one side of a         the re-run
            threshold (finite-difference errors, residuals, agreement between   must meet
            backends): :class:`Bound` records the value and the threshold       the bound
measured    seconds, machine, library versions, the outcome of a chaotic         never
            training run that the verdict does not rest on: :func:`measured`
==========  ==================================================================  ============

Floats: ``|a - b| <= rel_tol * scale + abs_tol`` with the claim's
:attr:`~attngeom.core.claim.Claim.float_tolerance` (default ``rel_tol`` 1e-9, ``abs_tol`` 1e-12);
``scale`` is ``max(|a|, |b|)`` for a number and the largest magnitude of the whole list for a
list of numbers (a witness vector is compared relative to its size, so an entry that
cancels to rounding error does not decide).  A value is of kind ``exact`` or ``float`` by
its JSON type; a claim marks a ``bound`` or ``measured`` value by wrapping it, and the
wrapper stays an ordinary ``float`` / ``str`` / ``list`` / ``dict`` for Python code:

    evidence["largest error"] = Bound(error, FD_TOLERANCE)     # must stay <= 1e-6
    counterexample["violations"] = measured(run.violations)    # recorded, not compared

:func:`split_kinds` turns a verdict's JSON into plain values and the map of its non-default
kinds by path (``"max_residual"``, ``"evidence.parts.finite-differences.largest error"``,
``"counterexample.violations"``), which the certificate stores as ``verdict.kinds``.
The verdict's ``summary`` is compared as text with its numbers masked (they render typed
evidence); ``seconds`` and ``version`` are measured.
"""

from __future__ import annotations

import math
from typing import Any

#: Relations a bound may state between the measured value and its limit.
RELATIONS = {"<=": lambda value, limit: value <= limit, "<": lambda value, limit: value < limit,
             ">": lambda value, limit: value > limit, ">=": lambda value, limit: value >= limit}

#: Default float tolerance of a claim (``Claim.float_tolerance``).
DEFAULT_FLOAT_TOLERANCE = {"rel_tol": 1e-9, "abs_tol": 1e-12}


class Bound(float):
    """A measured float that the claim needs only to satisfy ``value RELATION limit``
    (default ``<=``): a re-run must meet the same bound; the value itself is not compared."""

    def __new__(cls, value: float, limit: float, relation: str = "<="):
        if relation not in RELATIONS:
            raise ValueError(f"unknown relation {relation!r}")
        obj = super().__new__(cls, value)
        obj.limit, obj.relation = float(limit), relation
        return obj

    def holds(self) -> bool:
        return RELATIONS[self.relation](float(self), self.limit)

    def spec(self) -> dict[str, Any]:
        return {"kind": "bound", "relation": self.relation, "limit": self.limit}

    def __reduce__(self):
        return Bound, (float(self), self.limit, self.relation)


class _Measured:
    """Marker of a value recorded and never compared (see :func:`measured`)."""

    def spec(self) -> dict[str, Any]:
        return {"kind": "measured"}


def _measured_type(base: type) -> type:
    kind = type(f"Measured{base.__name__.capitalize()}", (base, _Measured), {})
    kind.__reduce__ = lambda self: (measured, (base(self),))
    return kind


_MEASURED_TYPES = {base: _measured_type(base) for base in (float, int, str, list, dict)}


def measured(value: Any) -> Any:
    """``value`` (a float, int, str, list or dict) marked as measured: recorded in the
    certificate, never compared (seconds, versions, the outcome of a chaotic training run).
    It behaves as the plain value in Python."""
    if isinstance(value, bool) or value is None:
        raise TypeError("measured() takes a float, int, str, list or dict")
    for base, kind in _MEASURED_TYPES.items():
        if isinstance(value, base):
            return kind(value)
    if hasattr(value, "item"):            # a NumPy scalar
        return measured(value.item())
    raise TypeError(f"measured() cannot mark a {type(value).__name__}")


def spec_of(value: Any) -> dict[str, Any] | None:
    """The kind spec of a marked value (a :class:`Bound` or measured), else None."""
    return value.spec() if isinstance(value, (Bound, _Measured)) else None


def split_kinds(value: Any, path: str = "") -> tuple[Any, dict[str, dict[str, Any]]]:
    """``value`` with every marked value made plain, and ``{path: spec}`` of the marked ones
    (paths as :func:`join_path` writes them, relative to ``value``)."""
    kinds: dict[str, dict[str, Any]] = {}

    def plain(item: Any, where: str) -> Any:
        spec = spec_of(item)
        if spec is not None:
            kinds[where] = spec
        if isinstance(item, dict):
            return {key: plain(entry, join_path(where, key)) for key, entry in item.items()}
        if isinstance(item, (list, tuple)):
            return [plain(entry, f"{where}[{k}]") for k, entry in enumerate(item)]
        if isinstance(item, float):
            return float(item)
        if isinstance(item, bool):
            return item
        if isinstance(item, int):
            return int(item)
        if isinstance(item, str):
            return str(item)
        return item

    return plain(value, path), kinds


def join_path(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def floats_close(a: float, b: float, scale: float, rel_tol: float, abs_tol: float) -> bool:
    """The float rule: ``|a - b| <= rel_tol * scale + abs_tol`` (non-finite values must be
    equal: the same infinity, or both NaN)."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= rel_tol * scale + abs_tol

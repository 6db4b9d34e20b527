"""Comparing a certificate's verdict with its re-run, value by value, by evidence kind.

The kinds (:mod:`attngeom.core.evidence`) come from the *re-run*, that is from the code, never
from the certificate: a certificate that calls its own evidence "measured" cannot escape a
comparison.  The certificate's ``verdict.kinds`` is itself compared with the re-run's, so
a changed bound or tolerance is named too.

Rules, by the re-run's kind of each value:

* **exact** (strings, integers, booleans, null, and the shape of dicts and lists):
  equal.
* **float** (a float on either side): ``|a - b| <= rel_tol * scale + abs_tol`` with the
  claim's float tolerance; ``scale`` is ``max(|a|, |b|)``, or the largest magnitude of the
  whole array for a (nested) list of numbers.
* **bound**: the re-run's value, and the certificate's own, meet the bound
  (``value <= limit``, say); the two values are not compared.
* **measured**: not compared.
* the **summary** (the verdict's and every sub-verdict's in ``evidence.parts``) and the
  texts of the **errata** (:mod:`attngeom.core.erratum`) are compared as text with every number
  masked: their numbers render evidence that is compared by kind above (an erratum's kind
  is compared exactly).

Each mismatch is one line naming the field, both values and the rule used.
"""

from __future__ import annotations

import re
from typing import Any

from attngeom.core.evidence import DEFAULT_FLOAT_TOLERANCE, RELATIONS, floats_close, join_path

#: A number inside a summary (masked before the summaries are compared).
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SHOWN = 80


def shown(value: Any) -> str:
    text = repr(value)
    return text[:_SHOWN] + "..." if len(text) > _SHOWN else text


def mask_numbers(text: str) -> str:
    return _NUMBER.sub("#", text)


#: Verdict fields whose strings are compared with their numbers masked.
MASKED_TEXT_FIELDS = ("summary", "errata")


def _masked(value: Any) -> Any:
    """``value`` with the numbers inside its strings masked (an erratum's ``kind`` has
    none, so it still compares exactly)."""
    if isinstance(value, str):
        return mask_numbers(value)
    if isinstance(value, list):
        return [_masked(item) for item in value]
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numeric_leaves(value: Any) -> list | None:
    """The numbers of a (nested) list of numbers, or None when it holds anything else."""
    if _is_number(value):
        return [value]
    if not isinstance(value, list):
        return None
    out: list = []
    for item in value:
        leaves = _numeric_leaves(item)
        if leaves is None:
            return None
        out += leaves
    return out


class Comparison:
    """Compares one verdict (certificate) with its re-run under the re-run's ``kinds``."""

    def __init__(self, kinds: dict[str, Any]):
        tolerance = kinds.get("float") if isinstance(kinds, dict) else None
        self.tolerance = {**DEFAULT_FLOAT_TOLERANCE, **(tolerance or {})}
        fields = kinds.get("fields") if isinstance(kinds, dict) else None
        self.fields = fields if isinstance(fields, dict) else {}
        self.problems: list[str] = []

    @property
    def float_rule(self) -> str:
        return f"float: relative {self.tolerance['rel_tol']:g}, absolute {self.tolerance['abs_tol']:g}"

    def field(self, name: str, stored: Any, fresh: Any) -> None:
        """Compare the verdict field ``name``."""
        if name in MASKED_TEXT_FIELDS:
            stored, fresh = _masked(stored), _masked(fresh)
            if stored != fresh:
                self.problems.append(f"verdict.{name}: certificate {shown(stored)}, re-run "
                                     f"{shown(fresh)} (text, numbers masked)")
            return
        self._value(stored, fresh, name, None)

    def _value(self, stored: Any, fresh: Any, path: str, scale: float | None) -> None:
        where = f"verdict.{path}"
        if path.endswith(".summary") and isinstance(stored, str) and isinstance(fresh, str):
            if mask_numbers(stored) != mask_numbers(fresh):     # a sub-verdict's summary
                self.problems.append(f"{where}: certificate {shown(stored)}, re-run "
                                     f"{shown(fresh)} (text, numbers masked)")
            return
        spec = self.fields.get(path)
        if isinstance(spec, dict) and spec.get("kind") == "measured":
            return
        if isinstance(spec, dict) and spec.get("kind") == "bound":
            self._bound(stored, fresh, where, spec)
            return
        if isinstance(stored, dict) and isinstance(fresh, dict):
            for key in sorted(set(stored) | set(fresh), key=str):
                if key not in stored:
                    self.problems.append(f"{where}.{key} is missing from the certificate")
                elif key not in fresh:
                    self.problems.append(f"{where}.{key} is not produced by the re-run")
                else:
                    self._value(stored[key], fresh[key], join_path(path, key), None)
        elif isinstance(stored, list) and isinstance(fresh, list):
            if len(stored) != len(fresh):
                self.problems.append(f"{where} has {len(stored)} entries, the re-run {len(fresh)}")
                return
            if scale is None:
                leaves = (_numeric_leaves(stored) or []) + (_numeric_leaves(fresh) or [])
                scale = max((abs(float(x)) for x in leaves), default=None)
            for k, (a, b) in enumerate(zip(stored, fresh)):
                self._value(a, b, f"{path}[{k}]", scale)
        elif isinstance(stored, float) or isinstance(fresh, float):
            if not (_is_number(stored) and _is_number(fresh) and floats_close(
                    float(stored), float(fresh),
                    scale if scale is not None else max(abs(float(stored)), abs(float(fresh))),
                    self.tolerance["rel_tol"], self.tolerance["abs_tol"])):
                self.problems.append(f"{where}: certificate {shown(stored)}, re-run "
                                     f"{shown(fresh)} ({self.float_rule})")
        elif stored != fresh or type(stored) is not type(fresh) and (
                isinstance(stored, bool) or isinstance(fresh, bool)):
            self.problems.append(f"{where}: certificate {shown(stored)}, re-run {shown(fresh)} (exact)")

    def _bound(self, stored: Any, fresh: Any, where: str, spec: dict) -> None:
        relation, limit = spec.get("relation"), spec.get("limit")
        rule = f"bound: {relation} {limit!r}"
        if relation not in RELATIONS or not _is_number(limit):
            self.problems.append(f"{where}: the re-run's bound is malformed ({spec!r})")
            return
        holds = RELATIONS[relation]
        if not (_is_number(fresh) and holds(float(fresh), float(limit))):
            self.problems.append(f"{where}: re-run {shown(fresh)} does not meet the bound "
                                 f"(certificate {shown(stored)}; {rule})")
        if not (_is_number(stored) and holds(float(stored), float(limit))):
            self.problems.append(f"{where}: certificate {shown(stored)} does not meet its own "
                                 f"bound ({rule})")

"""A verdict as markdown: what Jupyter shows for a :class:`~attngeom.core.verdict.Verdict`
(``Verdict._repr_markdown_``).  The text form (``str(verdict)``, what ``attngeom verify``
prints) is :func:`attngeom.core.verdict_format.format_verdict`.

Shown: the status with a refutation's kind, the claim and its source; the parameters, the
method and timing; the summary; the failure bound or residual; the counterexample; the
errata; then the evidence as a table (key | value), the named sub-verdicts first, one row
each with its status, method and summary (their own evidence as indented rows below).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from attngeom.core.markdown import cell, code, table
from attngeom.core.verdict_format import status_text

if TYPE_CHECKING:   # the type only: Verdict imports this module to render itself
    from attngeom.core.verdict import Verdict


def verdict_markdown(verdict: Verdict) -> str:
    """The markdown of ``verdict`` (see the module docstring)."""
    lines = [f"**{cell(status_text(verdict))}** &nbsp; `{verdict.claim}` &nbsp; "
             f"[{cell(verdict.source)}]", ""]
    params = " ".join(f"{k}={_value(v)}" for k, v in verdict.params.items() if v is not None)
    how = [f"**{cell(verdict.method or '-')}**"]
    if verdict.checked is not None:
        how.append(f"checked {verdict.checked}")
    if verdict.backend:
        how.append(f"backend {cell(verdict.backend)}-{cell(verdict.device)}")
    if verdict.seconds is not None:
        how.append(f"{verdict.seconds:.2f} s")
    rows = [("params", code(params) if params else "—"), ("method", ", ".join(how)),
            ("summary", cell(verdict.summary, 2000))]
    if verdict.failure_probability is not None:
        rows.append(("failure probability",
                     f"≤ {verdict.failure_probability:.3g} (Schwartz–Zippel)"))
    if verdict.max_residual is not None:
        rows.append(("max relative residual", f"{verdict.max_residual:.3g}"))
    if verdict.counterexample:
        rows.append(("counterexample", code(json.dumps(verdict.counterexample, default=str),
                                            2000)))
    lines.append(table(("", ""), ((f"**{name}**", value) for name, value in rows)))
    if verdict.errata:
        lines += ["", "**Errata**", ""]
        lines.append(table(("kind", "location", "printed", "correct", "checked"), (
            (cell(e.kind.label), cell(e.location), cell(e.printed), cell(e.correct or "—"),
             cell(e.check or "—")) for e in verdict.errata)))
    evidence = _evidence_rows(verdict.evidence, 0)
    if evidence:
        lines += ["", "**Evidence**", "", table(("key", "value"), evidence)]
    return "\n".join(lines)


def _evidence_rows(evidence: dict[str, Any], depth: int) -> list[tuple[str, str]]:
    """The sub-verdicts first (``name`` | status (method): summary, their evidence below
    them, indented), then the other entries."""
    evidence = dict(evidence)
    indent = "&nbsp;&nbsp;&nbsp;&nbsp;" * depth
    rows = []
    for name, part in evidence.pop("parts", {}).items():
        part = dict(part)
        status, method, summary = part.pop("status"), part.pop("method"), part.pop("summary")
        rows.append((f"{indent}**{cell(name)}**",
                     f"**{cell(status)}** ({cell(method or '-')}): {cell(summary)}"))
        rows += _evidence_rows(part, depth + 1)
    for key, value in evidence.items():
        rows.append((f"{indent}{cell(key)}", _evidence_value(value)))
    return rows


def _evidence_value(value: Any) -> str:
    if isinstance(value, list) and len(value) > 3 and isinstance(value[0], (dict, list)):
        return f"[{len(value)} entries; `verdict.evidence` holds them]"
    return cell(value) if isinstance(value, str) else code(value)


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(x) for x in value)
    return str(value)

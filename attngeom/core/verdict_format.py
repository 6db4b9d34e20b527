"""A verdict as text: what ``attngeom verify`` prints and the notebooks show.

The JSON form is :meth:`attngeom.core.verdict.Verdict.to_json`; this is the other one.
:func:`format_verdict` gives the status line, the parameters, how it was checked, the
summary, the failure bound or residual, the counterexample, the errata (what kind of wrong
a refutation found, :mod:`attngeom.core.erratum`), then the named sub-verdicts
(``- name  status (method): summary``, their evidence indented below) and the evidence::

    verified  linear  [ADM Prop 9, Cor 10 (§3)]
      params    d=6 t=4 a=2 dprime=1 row=1 col=1 context=2 all_outputs=False
      method    exact   checked 309   0.41 s
      summary   all 308 polynomials vanish at 6 random points over F_2147483647; ...
      failure probability <= 2.29e-51 (Schwartz–Zippel)
      - vanishing  verified (exact): all 308 polynomials vanish at 6 random points ...
          prime: 2147483647
          ...
          weights_mod_p: [6 entries; --json shows them]
      - cor10  proved (exact): Cor 10: the 56 Prop 9 relations have rank 56 ...
          ...

:func:`verdict_line` is the one-line form for lists of verdicts.  Evidence values longer
than :data:`MAX_VALUE_CHARS` are cut, and lists of more than three records are counted,
not shown (``--json`` shows everything).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # the type only: Verdict imports this module to render itself
    from attngeom.core.verdict import Verdict

#: Longest evidence value shown in full.
MAX_VALUE_CHARS = 300
#: Indentation of a verdict's evidence, and the further indentation of a part's evidence.
INDENT = "  "
PART_INDENT = "    "


def format_verdict(verdict: Verdict, evidence: Iterable[str] | None = None) -> str:
    """The text form of ``verdict``, lines joined by newlines (no trailing newline).

    ``evidence``: which evidence entries and sub-verdicts to show, by key or part name;
    None shows all of them (the CLI), ``()`` none (a notebook that wants the headline).
    """
    lines = [f"{status_text(verdict)}  {verdict.claim}  [{verdict.source}]",
             f"{INDENT}params    " + " ".join(f"{k}={v}" for k, v in verdict.params.items()
                                              if v is not None)]
    how = f"{INDENT}method    {verdict.method or '-'}"
    if verdict.checked is not None:
        how += f"   checked {verdict.checked}"
    if verdict.backend:
        how += f"   backend {verdict.backend}-{verdict.device}"
    if verdict.seconds is not None:
        how += f"   {verdict.seconds:.2f} s"
    lines += [how, f"{INDENT}summary   {verdict.summary}"]
    if verdict.failure_probability is not None:
        lines.append(f"{INDENT}failure probability <= {verdict.failure_probability:.3g} "
                     "(Schwartz–Zippel)")
    if verdict.max_residual is not None:
        lines.append(f"{INDENT}max relative residual {verdict.max_residual:.3g}")
    if verdict.counterexample:
        lines.append(f"{INDENT}counterexample " + json.dumps(verdict.counterexample, default=str))
    for erratum in verdict.errata:
        lines.append(f"{INDENT}erratum   {erratum.kind.label} at {erratum.location}")
        lines += [f"{INDENT}{PART_INDENT}{name:<8} {text}" for name, text in
                  (("printed", erratum.printed), ("correct", erratum.correct),
                   ("checked", erratum.check)) if text]
    shown = dict(verdict.evidence)
    if evidence is not None:
        wanted = set(evidence)
        shown = {key: value for key, value in shown.items() if key in wanted}
        if "parts" in verdict.evidence:
            shown["parts"] = {name: part for name, part in verdict.evidence["parts"].items()
                              if name in wanted}
    lines += _evidence_lines(shown, INDENT)
    return "\n".join(lines)


def status_text(verdict: Verdict) -> str:
    """The status, with a refutation's kind: ``refuted (misprinted formula)``; a verdict
    that holds with errata names them: ``consistent (erratum: proof step)``."""
    if verdict.error_kind is not None:
        return f"{verdict.status.value} ({verdict.error_kind.label})"
    if verdict.errata:
        kinds = ", ".join(dict.fromkeys(e.kind.label for e in verdict.errata))
        return f"{verdict.status.value} (erratum: {kinds})"
    return verdict.status.value


def verdict_line(verdict: Verdict) -> str:
    """One line: status (with a refutation's kind), claim and summary
    (``refuted (false statement)  gated-sphere: ...``)."""
    return f"{status_text(verdict):<14} {verdict.claim}: {verdict.summary}"


def _evidence_lines(evidence: dict[str, Any], indent: str) -> list[str]:
    """The named sub-verdicts first (each with its own evidence, recursively), then the
    other evidence entries, one ``key: value`` line each."""
    evidence = dict(evidence)
    lines = []
    for name, part in evidence.pop("parts", {}).items():
        part = dict(part)
        lines.append(f"{indent}- {name}  {part.pop('status')} ({part.pop('method')}): "
                     f"{part.pop('summary')}")
        lines += _evidence_lines(part, indent + PART_INDENT)
    for key, value in evidence.items():
        lines.append(f"{indent}{key}: {_value_text(value)}")
    return lines


def _value_text(value: Any) -> str:
    if isinstance(value, list) and len(value) > 3 and isinstance(value[0], (dict, list)):
        return f"[{len(value)} entries; --json shows them]"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + " ..."

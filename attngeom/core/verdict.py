"""Verdicts and the decision rules of the soundness contract (ARCHITECTURE.md, "Verdicts").

A verdict is only ever the result of an evaluation.  The constructors below each demand
the evidence their status must carry:

=================  ==========================================================  ==============
status             meaning                                                     exit code
=================  ==========================================================  ==============
``proved``         an exact symbolic identity holds                            0
``verified``       exact evaluation at N random points of F_p (or Q) was zero  0
``consistent``     floating-point evidence within a stated tolerance           0
``refuted``        a concrete, re-checkable counterexample                     1
``not-applicable`` parameters outside the hypotheses (the hypothesis named)    2
=================  ==========================================================  ==============

Sub-verdicts.  A claim that checks several things (the vanishing of a family, its count, a
rank; or one grid point after another) conjoins them with :func:`combine`, which gives
every part a stable *name*: ``combine({"vanishing": v1, "count": v2})``.  The combined
verdict keeps them in ``evidence["parts"]``, an ordered mapping name -> part, each part the
sub-verdict's ``status``, ``method`` and ``summary`` plus its own evidence (a part that is
itself combined carries its own ``parts``).  Names are short slugs without whitespace
(``cor10``, ``remark23``, ``d=3,a=2``), unique within one verdict and stable across
versions, so tests, notebooks and certificates look a part up by name, never by its
summary text or position: ``verdict.evidence["parts"]["cor10"]``.  The key ``parts`` of
the evidence is reserved for them.  :mod:`attngeom.core.verdict_format` prints a verdict as text.

Errata (:mod:`attngeom.core.erratum`).  A ``refuted`` verdict says what kind of wrong it found:
its first erratum is the refutation's (``error_kind`` in the JSON).  A check that knows the
kind passes ``erratum=`` to :func:`refuted`; otherwise :meth:`attngeom.core.claim.Claim.verify`
records a false statement (a witness where the statement as printed fails).  A verdict that
holds may carry non-refuting errata only (:func:`with_erratum`): a proof step or a misnomer
(the statement is true; a step of its proof, or a name, is not).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from attngeom.core import __version__
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.evidence import DEFAULT_FLOAT_TOLERANCE, Bound, split_kinds

#: What a sub-verdict's name may be (:func:`combine`): a slug without whitespace.
PART_NAME = re.compile(r"[^\s]+")


class Status(str, Enum):
    PROVED = "proved"
    VERIFIED = "verified"
    CONSISTENT = "consistent"
    REFUTED = "refuted"
    NOT_APPLICABLE = "not-applicable"

    @property
    def exit_code(self) -> int:
        return {Status.REFUTED: 1, Status.NOT_APPLICABLE: 2}.get(self, 0)

    @property
    def holds(self) -> bool:
        return self.exit_code == 0


@dataclass
class Verdict:
    """The outcome of checking one claim at one parameter point.

    The first twelve fields are the JSON contract of ARCHITECTURE.md; ``evidence`` holds
    the method-specific details (prime, degree, term counts, tolerance, hypothesis ...) and
    ``summary`` one human sentence.  ``claim``, ``source``, ``params`` and ``seconds`` are
    stamped by :meth:`attngeom.core.claim.Claim.verify`.
    """

    status: Status
    method: str | None
    checked: int | None = None
    failure_probability: float | None = None
    max_residual: float | None = None
    counterexample: dict | None = None
    backend: str | None = None
    device: str | None = None
    summary: str = ""
    evidence: dict = field(default_factory=dict)
    claim: str = ""
    source: str = ""
    params: dict = field(default_factory=dict)
    seconds: float | None = None
    version: str = __version__
    #: How this verdict's floats compare on re-checking (the claim's ``float_tolerance``,
    #: stamped by :meth:`attngeom.core.claim.Claim.verify`); see :mod:`attngeom.core.evidence`.
    float_tolerance: dict = field(default_factory=lambda: dict(DEFAULT_FLOAT_TOLERANCE))
    #: What the check found wrong in the paper (:mod:`attngeom.core.erratum`): for a refutation
    #: its kind first; for a verdict that holds, proof-step and misnomer errata only.
    errata: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.status is not Status.REFUTED and any(e.kind.refutes for e in self.errata):
            raise AssertionError("a verdict that holds carries proof-step and misnomer errata only")
        if any(e.kind.refutes for e in self.errata) and not self.errata[0].kind.refutes:
            raise AssertionError("a refutation's own erratum comes first")

    @property
    def exit_code(self) -> int:
        return self.status.exit_code

    def __str__(self) -> str:
        """The text ``attngeom verify`` prints (:mod:`attngeom.core.verdict_format`)."""
        from attngeom.core.verdict_format import format_verdict
        return format_verdict(self)

    def _repr_markdown_(self) -> str:
        """Jupyter's display (:mod:`attngeom.core.verdict_markdown`)."""
        from attngeom.core.verdict_markdown import verdict_markdown
        return verdict_markdown(self)

    @property
    def error_kind(self) -> ErrorKind | None:
        """The kind of a refutation (None for a verdict that holds)."""
        if self.status is Status.REFUTED and self.errata and self.errata[0].kind.refutes:
            return self.errata[0].kind
        return None

    def to_json(self) -> dict[str, Any]:
        """The verdict as JSON-ready plain values, with ``kinds``: the claim's float
        tolerance and the path of every bound and measured value (:mod:`attngeom.core.evidence`)."""
        plain, fields = split_kinds(self._fields())
        plain["kinds"] = {"float": dict(self.float_tolerance), "fields": fields}
        return plain

    def _fields(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "source": self.source,
            "params": self.params,
            "status": self.status.value,
            "method": self.method,
            "checked": self.checked,
            "failure_probability": self.failure_probability,
            "max_residual": self.max_residual,
            "counterexample": self.counterexample,
            "seconds": self.seconds,
            "backend": self.backend,
            "device": self.device,
            "version": self.version,
            "error_kind": self.error_kind.value if self.error_kind else None,
            "errata": [erratum.to_json() for erratum in self.errata],
            "summary": self.summary,
            "evidence": self.evidence,
        }


def schwartz_zippel_bound(degree: int, prime: int, points: int, members: int = 1) -> float:
    """Probability that a nonzero polynomial survives ``points`` independent random points.

    Schwartz–Zippel: a nonzero polynomial of total degree ``degree`` over F_p vanishes at a
    uniform random point of F_p^n with probability at most degree/p, so at N independent
    points with probability at most (degree/p)^N.  For a family of ``members`` polynomials
    the union bound multiplies by ``members``.  The bound is for the reduction mod p of the
    polynomial; it assumes p divides neither the denominators nor all coefficients of the
    composite polynomial, which the callers state in their evidence.
    """
    if degree <= 0:
        return 0.0
    single = min(1.0, degree / prime)
    log_bound = math.log(members) + points * math.log(single) if single > 0 else -math.inf
    return min(1.0, math.exp(log_bound))


def proved(*, checked: int, summary: str, evidence: dict, method: str = "symbolic") -> Verdict:
    """An exact identity: ``evidence`` must say what was expanded and the term counts."""
    return Verdict(Status.PROVED, method, checked=checked, summary=summary, evidence=evidence)


def verified(*, checked: int, degree: int, prime: int, points: int, summary: str,
             evidence: dict | None = None, members: int = 1) -> Verdict:
    """Exact evaluation at ``points`` random points of F_p gave zero for ``checked`` objects."""
    ev = {"prime": prime, "points": points, "degree": degree, **(evidence or {})}
    return Verdict(Status.VERIFIED, "exact", checked=checked,
                   failure_probability=schwartz_zippel_bound(degree, prime, points, members),
                   summary=summary, evidence=ev)


def consistent(*, checked: int, max_residual: float, tolerance: float, summary: str,
               backend: str, device: str, evidence: dict | None = None) -> Verdict:
    """Floating-point evidence: the largest residual and the tolerance it was held to.
    The residual is a :class:`~attngeom.core.evidence.Bound` (a re-check needs it within the
    tolerance again, not equal to the last bits)."""
    if not max_residual <= tolerance:
        raise AssertionError("consistent() needs max_residual <= tolerance; use refuted()")
    ev = {"tolerance": tolerance, **(evidence or {})}
    return Verdict(Status.CONSISTENT, "numeric", checked=checked,
                   max_residual=Bound(max_residual, tolerance),
                   backend=backend, device=device, summary=summary, evidence=ev)


def refuted(*, method: str, counterexample: dict, summary: str, checked: int | None = None,
            evidence: dict | None = None, max_residual: float | None = None,
            backend: str | None = None, device: str | None = None,
            erratum: Erratum | None = None) -> Verdict:
    """A counterexample: ``counterexample`` must hold enough to re-check it.  ``erratum``
    says what kind of wrong it is (:mod:`attngeom.core.erratum`); without it the claim records a
    false statement."""
    if not counterexample:
        raise AssertionError("refuted() needs a counterexample")
    return Verdict(Status.REFUTED, method, checked=checked, counterexample=counterexample,
                   max_residual=max_residual, backend=backend, device=device,
                   summary=summary, evidence=evidence or {},
                   errata=[erratum] if erratum else [])


def with_erratum(verdict: Verdict, erratum: Erratum) -> Verdict:
    """``verdict`` with ``erratum`` attached: a refutation's kind when ``verdict`` is
    refuted and has none yet, else a further erratum (a verdict that holds takes proof-step
    and misnomer errata only; see :class:`Verdict`)."""
    if erratum not in verdict.errata:
        verdict.errata.append(erratum)
        verdict.errata.sort(key=lambda e: not e.kind.refutes)
    verdict.__post_init__()
    return verdict


def not_applicable(hypothesis: str) -> Verdict:
    """Parameters outside the claim's hypotheses; ``hypothesis`` names the one violated."""
    return Verdict(Status.NOT_APPLICABLE, None, summary=hypothesis,
                   evidence={"hypothesis": hypothesis})


def combine(parts: Mapping[str, Verdict] | Iterable[tuple[str, Verdict]], *,
            summary: str | None = None) -> Verdict:
    """Conjunction of named sub-checks of one claim: the weakest status wins.

    ``parts``: name -> sub-verdict (a mapping, or (name, verdict) pairs, in the order they
    are shown); the names must be unique slugs without whitespace (see the module
    docstring).  A refutation anywhere refutes; otherwise the result is as strong as the
    weakest part (proved > verified > consistent), with the failure bounds added (union
    bound) and the sub-verdicts kept in ``evidence["parts"]`` by name.  ``summary``
    defaults to the parts' summaries joined by "; "; a refutation takes the refuted
    part's summary.
    """
    pairs = list(parts.items()) if isinstance(parts, Mapping) else list(parts)
    names = [name for name, _ in pairs]
    bad = [name for name in names if not isinstance(name, str) or not PART_NAME.fullmatch(name)]
    if bad or len(set(names)) != len(names) or not pairs:
        raise AssertionError(f"combine() needs unique part names without whitespace; got {names}")
    verdicts = [v for _, v in pairs]
    order = [Status.REFUTED, Status.CONSISTENT, Status.VERIFIED, Status.PROVED]
    worst = min(verdicts, key=lambda v: order.index(v.status))
    bounds = [v.failure_probability for v in verdicts if v.failure_probability]
    residuals = [v.max_residual for v in verdicts if v.max_residual is not None]
    if summary is None:
        summary = "; ".join(v.summary for v in verdicts)
    errata: list[Erratum] = []
    for v in sorted(verdicts, key=lambda v: v.status is not Status.REFUTED):
        errata += [e for e in v.errata if e not in errata]
    errata.sort(key=lambda e: not e.kind.refutes)
    return Verdict(worst.status, worst.method,
                   checked=sum(v.checked or 0 for v in verdicts),
                   failure_probability=min(1.0, sum(bounds)) if bounds else None,
                   max_residual=max(residuals) if residuals else None,
                   counterexample=worst.counterexample, backend=worst.backend,
                   device=worst.device,
                   summary=worst.summary if worst.status is Status.REFUTED else summary,
                   errata=errata if worst.status is Status.REFUTED
                   else [e for e in errata if not e.kind.refutes],
                   evidence={"parts": {name: {"status": v.status.value, "method": v.method,
                                              "summary": v.summary, **v.evidence}
                                       for name, v in pairs}})

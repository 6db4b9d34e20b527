"""What kind of wrong a check found: the vocabulary of refutations and the erratum record.

ARCHITECTURE.md, "Verdicts": a refutation says what kind of wrong it found, and a statement
that holds keeps its own status when only a step of its proof (or a name) is wrong, with
that erratum attached.  The kinds, and the evidence each demands of the check that reports it:

=======================  ===========================================================
kind                     meaning (and what the check must have run)
=======================  ===========================================================
``false-statement``      a witness where the statement, as printed, fails
``misprinted-formula``   a printed formula differs from what the paper's own argument
                         or another of its equations gives; the correction is checked
``missing-hypothesis``   the statement holds under a condition the paper omits; the
                         condition is stated and checked, and the witness lies outside it
``proof-step``           the statement holds, a step of its proof does not: the verdict
                         keeps the statement's status (never ``refuted``), erratum attached
``convention``           the statement holds under another normalization (curvature
                         -1 for -c, truncated for rounded figures); that one is checked
``reading-dependent``    the paper underdetermines the object; every reasonable reading
                         is run, each with its outcome, and the statement fails under one
``misnomer``             a name that does not fit the object it names; the mathematics
                         holds and no result depends on the name: never ``refuted``
=======================  ===========================================================

An :class:`Erratum` says where (``location``), what the paper prints (``printed``), what
holds instead (``correct``: the corrected formula, the missing condition, the other
convention, or each reading's outcome; empty when nothing is derivable) and how that was
checked (``check``: the sub-verdict or evidence that established it).  A verdict carries
its errata (:attr:`attngeom.core.verdict.Verdict.errata`); ``attngeom errata`` gathers them
across the papers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class ErrorKind(str, Enum):
    FALSE_STATEMENT = "false-statement"
    MISPRINTED_FORMULA = "misprinted-formula"
    MISSING_HYPOTHESIS = "missing-hypothesis"
    PROOF_STEP = "proof-step"
    CONVENTION = "convention"
    READING_DEPENDENT = "reading-dependent"
    MISNOMER = "misnomer"

    @property
    def label(self) -> str:
        """The kind in words, as the text form of a verdict prints it."""
        return self.value.replace("-", " ")

    @property
    def refutes(self) -> bool:
        """Whether a verdict of this kind is ``refuted``: every kind but a proof step and a
        misnomer (the statement holds; the erratum is attached to its verdict)."""
        return self not in (ErrorKind.PROOF_STEP, ErrorKind.MISNOMER)


#: One line per kind, for ``attngeom errata`` and the docs.
KIND_MEANINGS = {
    ErrorKind.FALSE_STATEMENT: "a witness where the statement, as printed, fails",
    ErrorKind.MISPRINTED_FORMULA: "a printed formula differs from what the paper's own "
                                  "argument or another of its equations gives (correction checked)",
    ErrorKind.MISSING_HYPOTHESIS: "holds under a condition the paper omits (condition checked; "
                                  "the witness lies outside it)",
    ErrorKind.PROOF_STEP: "the statement holds; a step of its proof does not (status is the "
                          "statement's)",
    ErrorKind.CONVENTION: "holds under another normalization (that one checked)",
    ErrorKind.READING_DEPENDENT: "the paper underdetermines the object: every reasonable "
                                 "reading run, each with its outcome",
    ErrorKind.MISNOMER: "a name that does not fit the object it names; the mathematics holds "
                        "(status is the statement's)",
}

#: Kinds whose erratum must say what holds instead and how that was checked.
_NEEDS_CORRECTION = (ErrorKind.MISPRINTED_FORMULA, ErrorKind.MISSING_HYPOTHESIS,
                     ErrorKind.PROOF_STEP, ErrorKind.CONVENTION, ErrorKind.READING_DEPENDENT,
                     ErrorKind.MISNOMER)


@dataclass(frozen=True)
class Erratum:
    """One printed statement found wrong: where, what kind, what is printed, what holds."""

    kind: ErrorKind
    location: str
    printed: str
    correct: str = ""
    check: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ErrorKind(self.kind))
        if not self.location or not self.printed:
            raise AssertionError("an erratum names its location and what is printed")
        if self.kind in _NEEDS_CORRECTION and not (self.correct and self.check):
            raise AssertionError(f"a {self.kind.label} erratum says what holds instead "
                                 "(correct) and how that was checked (check)")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "location": self.location, "printed": self.printed,
                "correct": self.correct, "check": self.check}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Erratum":
        return cls(**{key: data.get(key, "") for key in
                      ("kind", "location", "printed", "correct", "check")})


@dataclass(frozen=True)
class ErratumSpec:
    """How a claim knows the kind of its refutation: what the paper prints, what holds
    instead, and the parameters under which that is checked (``{"variant": "corrected"}``,
    ``{"key_norms": "equal"}``).  :meth:`attngeom.core.claim.Claim.verify` runs the claim again
    with ``check_params`` whenever the printed statement is refuted; only when that check
    holds does the refutation carry this kind (else it stays a false statement).  The
    location defaults to the claim's source."""

    kind: ErrorKind
    printed: str
    correct: str
    check_params: dict
    location: str = ""

    def erratum(self, location: str, check: str) -> Erratum:
        return Erratum(self.kind, self.location or location, self.printed, self.correct, check)

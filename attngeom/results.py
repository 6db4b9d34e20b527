"""What the functions of :mod:`attngeom.api` return besides verdicts and ideal reports:
the claim list, the objects a claim shows, a curvature sample.  Each prints as the
``attngeom`` command prints it (``str()``) and shows as a markdown table in Jupyter
(``_repr_markdown_``).  No mathematics here, and nothing heavy imported."""

from __future__ import annotations

from typing import Any

from attngeom.core.markdown import cell, code, table


class ClaimList(list):
    """The registered claims as descriptions, one dict per claim (``attngeom list --json``):
    ``id``, ``source``, ``statement``, ``methods``, ``params``."""

    @property
    def ids(self) -> list[str]:
        """The claim ids, in the list's order."""
        return [c["id"] for c in self]

    def lines(self) -> list[str]:
        """One line per claim: id, source, statement (``attngeom list``)."""
        width = max((len(c["id"]) for c in self), default=10)
        source_width = max((len(c["source"]) for c in self), default=10)
        return [f"{c['id']:<{width}}  {c['source']:<{source_width}}  {c['statement']}"
                for c in self]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_markdown_(self) -> str:
        return f"{len(self)} claims\n\n" + table(
            ("id", "source", "statement", "methods", "params"),
            ((code(c["id"]), cell(c["source"]), cell(c["statement"], 1000),
              cell(", ".join(c["methods"])), cell(", ".join(c["params"]))) for c in self))


class ShownObjects(list):
    """The polynomials a family claim is about, as
    :class:`~attngeom.lightning_alg.invariant.Invariant` objects: each a SymPy expression
    ``poly`` in the coefficient coordinates ``coords.symbols``, with its provenance
    (``family``, ``source`` and the ``indices`` that pick it out of its family).
    ``text(fmt)`` renders them as ``attngeom show --format FMT`` does."""

    def __init__(self, members, claim: str, params: dict[str, Any], coords: Any):
        super().__init__(members)
        self.claim, self.params, self.coords = claim, params, coords

    def text(self, fmt: str = "text") -> str:
        """The objects in ``text``, ``latex``, ``m2`` or ``json`` (one polynomial a line)."""
        from attngeom.lightning_alg.claims.base import render_invariants
        return render_invariants(list(self), self.coords, fmt)

    def __str__(self) -> str:
        return self.text("text")

    def _repr_markdown_(self) -> str:
        from attngeom.lightning_alg.invariant import format_invariant
        return (f"{len(self)} polynomials of `{self.claim}`\n\n" + table(
            ("#", "family", "source", "indices", "polynomial"),
            ((str(i), cell(m.family), cell(m.source), code(m.indices),
              code(format_invariant(m, self.coords, "text"), 600))
             for i, m in enumerate(self, 1))))


class CurvatureReport(dict):
    """Gaussian curvature of a named construction at sampled points (``attngeom
    curvature --json``): ``witness``, ``construction``, ``params``, ``points``, ``K``,
    ``K_min``, ``K_max``, ``expected``, ``max_abs_deviation``, ``holds``, ..."""

    @property
    def holds(self) -> bool | None:
        """Whether K meets the construction's known curvature (None: none is known)."""
        return self["holds"]

    def lines(self) -> list[str]:
        from attngeom.geometry_proofs.gating.witnesses import curvature_lines
        return curvature_lines(self)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_markdown_(self) -> str:
        return "```\n" + str(self) + "\n```"

    def __repr__(self) -> str:
        """One line (the points and values are in the mapping: ``report["K"]``)."""
        return (f"CurvatureReport({self.get('witness')!r}, {len(self.get('K') or ())} points, "
                f"K in [{self.get('K_min')}, {self.get('K_max')}], holds={self.get('holds')})")


class CertificateRun(list):
    """The certificates :func:`attngeom.certify` wrote or kept, one dict per job in job
    order (``attngeom certify --json``): ``file``, ``claim``, ``status``, ``seconds`` and
    ``skipped`` (True: the certificate already there was up to date and stays)."""

    def lines(self) -> list[str]:
        """One line per certificate: status, time or "skipped (up to date)", file."""
        return [f"{row['status']:<15} "
                f"{'skipped (up to date)' if row['skipped'] else format(row['seconds'], '7.2f') + ' s'}  "
                f"{row['file']}" for row in self]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_markdown_(self) -> str:
        return f"{len(self)} certificates\n\n" + table(
            ("status", "claim", "seconds", "file"),
            ((cell(row["status"]), code(row["claim"]),
              "up to date" if row["skipped"] else f"{row['seconds']:.2f}", code(row["file"]))
             for row in self))


class CertificateCheck(list):
    """The certificates :func:`attngeom.check_certificates` re-ran, one
    :class:`~attngeom.core.certificates.CheckResult` per file in file order (``path``,
    ``claim``, ``status``, ``problems``, ``seconds``, ``invalid``, ``ok``)."""

    @property
    def ok(self) -> bool:
        """Every certificate checks out (and every file is a valid certificate)."""
        return all(result.ok for result in self)

    @property
    def failed(self) -> list:
        """The results that do not check out (invalid files included)."""
        return [result for result in self if not result.ok]

    @property
    def invalid(self) -> list:
        """The files that are not valid certificates (never run)."""
        return [result for result in self if result.invalid]

    def to_json(self) -> list[dict]:
        """``attngeom check-certificates --json``."""
        return [{"file": str(r.path), "claim": r.claim, "status": r.status, "ok": r.ok,
                 "invalid": r.invalid, "problems": r.problems} for r in self]

    def junit(self) -> str:
        """The JUnit XML document, one test case per certificate (``--junit FILE``)."""
        from attngeom.core.junit import junit_xml
        return junit_xml(list(self))

    def lines(self) -> list[str]:
        """What ``attngeom check-certificates`` prints: a line per certificate, its first
        eight problems, and the count that checks out."""
        out = []
        for r in self:
            out.append(f"{'ok' if r.ok else 'FAIL':<5} {r.status:<15} {r.claim:<24} {r.path.name}")
            out.extend(f"        {problem}" for problem in r.problems[:8])
        out.append(f"{len(self) - len(self.failed)} of {len(self)} certificates check out")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_markdown_(self) -> str:
        return f"{len(self) - len(self.failed)} of {len(self)} certificates check out\n\n" + table(
            ("", "status", "claim", "file", "problems"),
            (("ok" if r.ok else "**FAIL**", cell(r.status), code(r.claim), code(r.path.name),
              cell("; ".join(r.problems[:3]), 600)) for r in self))

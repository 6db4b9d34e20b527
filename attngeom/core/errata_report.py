"""The errata of the papers: every printed statement a check found wrong, in one table.

``attngeom errata`` runs every registered claim at each of its paper examples (the
parameter sets of ``attngeom certify --suite paper``) and gathers the errata of the
verdicts (:mod:`attngeom.core.erratum`): the refutations, each with its kind, and the proof-step
errata of statements that hold.  ``--certificates DIR`` reads the verdicts of a checked
certificate directory instead of re-running them (the default suite's certificates are
re-run in CI, so the two agree whenever the certificates check out).  ``docs/errata.md``
is this report in markdown; a test fails when it is stale.

One row per (claim, kind, location, printed text): the first example (in the claim's
order) that shows it gives the witness, and ``examples`` counts how many show it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from attngeom.core.certificate_compare import mask_numbers
from attngeom.core.certificate_schema import InvalidCertificate, load_certificate, validate_certificate
from attngeom.core.erratum import KIND_MEANINGS, ErrorKind
from attngeom.core.errors import BadInput

#: Papers in the order the report lists them (the prefixes of the claims' sources).
PAPERS = ("ADM", "HMK", "GEC", "GT", "RGT")
#: Longest witness text shown (the verdict's summary; --format json keeps it whole).
WITNESS_CHARS = 320
FORMATS = ("text", "markdown", "json")


@dataclass
class ErrataRow:
    """One printed statement found wrong, as the report shows it."""

    paper: str
    location: str
    kind: str
    printed: str
    correct: str
    check: str
    witness: str
    params: dict
    claim: str
    status: str
    examples: int = 1

    @property
    def key(self) -> tuple:
        return (self.claim, self.kind, self.location, mask_numbers(self.printed))


def paper_of(source: str) -> str:
    return source.split()[0] if source else "?"


def errata_rows(verdicts: Iterable[dict]) -> list[ErrataRow]:
    """The rows of the report from verdicts in JSON form (:meth:`Verdict.to_json` or a
    certificate's ``verdict``), deduplicated (see the module docstring), in paper order
    and then in the order the verdicts came.  Only claims whose source is one of
    :data:`PAPERS`: a claim of this project's own (source "attngeom ...", e.g. the
    expected join dimension of ``multihead-join``) is not a printed statement."""
    rows: dict[tuple, ErrataRow] = {}
    for verdict in verdicts:
        if paper_of(verdict.get("source", "")) not in PAPERS:
            continue    # a refuted expectation of this project's own is no paper's erratum
        for erratum in verdict.get("errata") or ():
            row = ErrataRow(paper=paper_of(verdict.get("source", "")),
                            location=erratum["location"], kind=erratum["kind"],
                            printed=erratum["printed"], correct=erratum.get("correct", ""),
                            check=erratum.get("check", ""), witness=verdict.get("summary", ""),
                            params={k: v for k, v in sorted((verdict.get("params") or {}).items())
                                    if v is not None},
                            claim=verdict.get("claim", ""), status=verdict.get("status", ""))
            if row.key in rows:
                rows[row.key].examples += 1
            else:
                rows[row.key] = row
    order = {paper: index for index, paper in enumerate(PAPERS)}
    return sorted(rows.values(), key=lambda r: order.get(r.paper, len(PAPERS)))


@dataclass
class ErrataReport:
    """What ``attngeom errata`` reports (:func:`attngeom.errata`): the rows, how many
    claims and verdicts they come from, and how the verdicts were obtained.  ``str()`` is
    the text the command prints; in Jupyter it shows as the markdown of ``--format
    markdown``."""

    rows: list[ErrataRow]
    claims: int
    verdicts: int
    origin: str

    def render(self, fmt: str = "text") -> str:
        """The report as ``text``, ``markdown`` or ``json`` (:func:`render`)."""
        if fmt not in FORMATS:
            raise BadInput(f"unknown format {str(fmt)[:40]!r}; choose one of {', '.join(FORMATS)}")
        return render(self.rows, fmt, self.claims, self.verdicts, self.origin)

    def __str__(self) -> str:
        return self.render("text")

    def _repr_markdown_(self) -> str:
        """The per-paper tables without the docs page's title and kinds tables."""
        return _markdown(self.rows, self.claims, self.verdicts, self.origin, page=False)

    def __repr__(self) -> str:
        return (f"ErrataReport({len(self.rows)} errata from {self.verdicts} verdicts of "
                f"{self.claims} claims)")

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)


def collect_errata(claims: Sequence, registry, certificates=None, executor=None, task=None,
                   progress=None) -> ErrataReport:
    """The errata of ``claims`` at their paper examples (``suite_jobs``): the verdicts of
    the certificates in directory ``certificates`` (:func:`certificate_verdicts`), or each
    example re-run by ``task`` (job -> verdict JSON) on ``executor``
    (:mod:`attngeom.core.executor`; None: in this process)."""
    from attngeom.core.certificate_jobs import suite_jobs
    jobs = suite_jobs(claims)
    if certificates:
        verdicts = certificate_verdicts(jobs, Path(certificates), registry)
        origin = f"the certificates in {Path(certificates).name}/"
    else:
        if executor is None:
            from attngeom.core.executor import make_executor
            with make_executor(None, None) as local:
                return collect_errata(claims, registry, None, local, task, progress)
        verdicts = executor.map(task, jobs, names=[job.filename for job in jobs],
                                label="errata", progress=progress)
        origin = "every claim re-run at its paper examples"
    return ErrataReport(errata_rows(verdicts), len(claims), len(verdicts), origin)


def render(rows: Sequence[ErrataRow], fmt: str, claims_run: int, verdicts_run: int,
           origin: str) -> str:
    """The report as text, markdown or JSON.  ``origin``: how the verdicts were obtained
    (shown in the header)."""
    if fmt == "json":
        return json.dumps({"claims": claims_run, "verdicts": verdicts_run, "origin": origin,
                           "kinds": {k.value: KIND_MEANINGS[k] for k in ErrorKind},
                           "errata": [asdict(row) for row in rows]}, indent=1, default=str)
    if fmt == "markdown":
        return _markdown(rows, claims_run, verdicts_run, origin)
    return _text(rows, claims_run, verdicts_run, origin)


def _short(text: str, limit: int = WITNESS_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _params_text(params: dict) -> str:
    return " ".join(f"--{k.replace('_', '-')} {_value(v)}" for k, v in params.items()
                    if v is not False)


def _value(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(x) for x in value)
    return str(value)


def _counts(rows: Sequence[ErrataRow]) -> list[tuple[str, dict[str, int]]]:
    table = []
    for paper in PAPERS:
        mine = [r for r in rows if r.paper == paper]
        table.append((paper, {k.value: sum(r.kind == k.value for r in mine) for k in ErrorKind}))
    return table


def _text(rows, claims_run, verdicts_run, origin) -> str:
    lines = [f"{len(rows)} errata from {verdicts_run} verdicts of {claims_run} claims ({origin})"]
    for row in rows:
        lines += ["", f"{row.paper}  {row.location}  [{row.kind.replace('-', ' ')}]  {row.claim}",
                  f"  printed   {row.printed}"]
        if row.correct:
            lines.append(f"  holds     {row.correct}")
        if row.check:
            lines.append(f"  checked   {row.check}")
        lines.append(f"  witness   {_short(row.witness)}")
        lines.append(f"  verify    attngeom verify {row.claim} {_params_text(row.params)}".rstrip()
                     + f"   ({row.status}; {row.examples} example(s))")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(rows, claims_run, verdicts_run, origin, page: bool = True) -> str:
    """The markdown report: with ``page`` the whole of ``docs/errata.md`` (title, kinds,
    counts), else only the per-paper tables (what a notebook shows)."""
    kinds = [k.value for k in ErrorKind]
    if not page:
        lines = [f"**{len(rows)} errata** from {verdicts_run} verdicts of {claims_run} claims "
                 f"({origin})"]
        return "\n".join(lines + _paper_tables(rows)) + "\n"
    lines = ["# Errata of the five papers", "",
             "Generated by `attngeom errata --format markdown` (`attngeom/core/errata_report.py`); "
             "do not edit by hand: `tests/test_errata.py` fails when this file is stale.", "",
             f"{len(rows)} printed statements found wrong, from {verdicts_run} verdicts of "
             f"{claims_run} claims ({origin}).  Each row names the claim that found it: "
             "`attngeom verify CLAIM` with the parameters shown re-runs the check and prints "
             "the full witness.", "",
             "## Kinds", "", "| kind | meaning |", "|---|---|"]
    lines += [f"| {k.value} | {KIND_MEANINGS[k]} |" for k in ErrorKind]
    lines += ["", "| paper | " + " | ".join(kinds) + " | total |",
              "|---|" + "---|" * (len(kinds) + 1)]
    for paper, counts in _counts(rows):
        lines.append(f"| {paper} | " + " | ".join(str(counts[k]) for k in kinds)
                     + f" | {sum(counts.values())} |")
    return "\n".join(lines + _paper_tables(rows)) + "\n"


def _paper_tables(rows: Sequence[ErrataRow]) -> list[str]:
    lines: list[str] = []
    for paper in PAPERS:
        mine = [r for r in rows if r.paper == paper]
        if not mine:
            continue
        lines += ["", f"## {paper}", "",
                  "| location | kind | printed | what holds | witness | claim |",
                  "|---|---|---|---|---|---|"]
        for row in mine:
            holds = row.correct + (f" (checked: {row.check})" if row.check else "")
            claim = f"`{row.claim}` {_params_text(row.params)}".rstrip()
            lines.append("| " + " | ".join(_cell(x) for x in (
                row.location, row.kind, row.printed, holds or "—", _short(row.witness), claim))
                + " |")
    return lines


def certificate_verdicts(jobs: Sequence, directory, registry) -> list[dict]:
    """The verdicts (JSON) of the certificates of ``jobs`` (``suite_jobs``: one per paper
    example, in the claims' order) in ``directory``, each validated against the format
    first; BadInput naming the first one missing or invalid."""
    verdicts = []
    for job in jobs:
        path = Path(directory) / job.filename
        try:
            cert = load_certificate(path.read_bytes())
            validate_certificate(cert, registry)
        except FileNotFoundError:
            raise BadInput(f"no certificate {path.name} in {directory} (write them with "
                           "`attngeom certify --suite paper`)") from None
        except InvalidCertificate as error:
            raise BadInput(f"{path.name}: {error}") from None
        verdicts.append(cert["verdict"])
    return verdicts

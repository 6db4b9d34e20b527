"""``attngeom atlas``: the vanishing ideal over a grid of (d, t, a, d') and degrees.

For every point of the grid (:mod:`.grid`) one task computes, with the machinery of
``attngeom ideal`` (:func:`~attngeom.lightning_alg.ideal.report.compute_ideal`, ADM Def 8):
HF(k), dim J_k and the minimal generators of each degree k <= K, the variety's dimension
(Jacobian rank) against HMK Cor 3.3, the attribution of the generators to the registered
families and what stays unexplained; then the local completeness of the families
(:mod:`.completeness`) and, with ``check_m2``, the Macaulay2 check
(:mod:`.m2_check`).

Tasks run on any executor (:mod:`attngeom.core.executor`: this process, ``--workers``,
``--scheduler``); each sends back its point's record (a JSON object), which the caller
writes atomically to ``DIR/points/<point>.json``.  A rerun skips a point whose file holds a
record made with the same key: the point, the seed, prime, families and budget, the
toolkit version and :func:`code_digest`, the digest of the source of every module the
numbers come from.  A point whose record is current but lacks a Macaulay2 result that
``--check-m2`` asks for (none, another script, or a timeout under a smaller budget) runs
only the Macaulay2 part.  Workers get the text of the file already there, so they need no
shared file system.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from attngeom.core import __version__
from attngeom.core.atomic_files import write_text_atomically
from attngeom.core.errors import BadInput
from attngeom.lightning_alg.atlas.grid import AtlasPoint

FORMAT = "attngeom-atlas-point"
FORMAT_VERSION = 1
POINTS_FOLDER = "points"

#: The sources the atlas's numbers come from (relative to the attngeom package): the ideal
#: and its attribution, the coordinates and mu, the families and their claims, the HMK
#: formula, the exact arithmetic, this sweep and its completeness check.  The grid grammar,
#: the Macaulay2 check (its results are keyed by their own script's digest) and the pages
#: are not among them.
CODE_SOURCES = ("lightning_alg/ideal/*.py", "lightning_alg/atlas/sweep.py",
                "lightning_alg/atlas/completeness.py", "lightning_alg/invariants/*.py",
                "lightning_alg/claims/*.py", "lightning_alg/parametrization.py",
                "lightning_alg/coordinates.py", "lightning_alg/labels.py",
                "lightning_alg/hmk/dimension.py", "kernels/primefield.py",
                "kernels/monomials.py", "kernels/polyeval.py", "kernels/sampling.py")


def code_digest() -> str:
    """sha256 (16 hex digits) of the source files of :data:`CODE_SOURCES`, in path order."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for pattern in CODE_SOURCES:
        for path in sorted(root.glob(pattern)):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class AtlasSettings:
    """How every point is computed: ``families`` (``all``, ``none`` or ids), the
    attribution ``budget`` factor (None: no limit), ``seed``, ``prime`` (None: 2^31 - 1),
    the Macaulay2 check and its budget in seconds."""

    families: str = "all"
    budget: float | None = 1.0
    seed: int = 0
    prime: int | None = None
    check_m2: bool = False
    m2_budget: float = 120.0

    def key(self, point: AtlasPoint, digest: str) -> dict:
        """What a stored record must have been made with to be reused."""
        return {**point.params(), "families": self.families, "budget": self.budget,
                "seed": self.seed, "prime": self.prime, "toolkit_version": __version__,
                "code_digest": digest}


def _ideal_part(point: AtlasPoint, settings: AtlasSettings) -> dict:
    """The ideal table, dimension, attribution and local completeness of one point."""
    from attngeom.lightning_alg.claims import family_claims
    from attngeom.lightning_alg.atlas.completeness import local_completeness
    from attngeom.lightning_alg.ideal.report import compute_ideal

    claims = family_claims(settings.families)
    start = time.perf_counter()
    report, engine = compute_ideal(point.d, point.t, point.a, point.dprime, 1,
                                   point.max_degree, claims, settings.prime, settings.seed,
                                   attribution_budget=settings.budget)
    ideal_seconds = time.perf_counter() - start
    try:
        completeness = local_completeness(engine, claims, point.max_degree,
                                          report.variety_dimension, settings.budget)
    except ValueError as error:        # no smooth point found: reported, never hidden
        completeness = {"error": str(error)}
    full = report.to_json()
    summary = {
        "ambient_dimension": full["ambient_dimension"],
        "linear_span_dimension": full["linear_span_dimension"],
        "variety_dimension": full["variety_dimension"],
        "codimension": full["codimension"],
        "hmk_cor33": full["dimension"]["hmk_cor33_one_coordinate"],
        "hmk_cor33_whole_output": full["dimension"].get("hmk_cor33_whole_output"),
        "hilbert_function": full["hilbert_function"],
        "dim_J": full["dim_J"],
        "minimal_generators": report.by_degree("minimal_generators"),
        "attribution": attribution_summary(full["family_attribution"]),
        "failure_probability": full["failure_probability"],
    }
    return {**summary, "local_completeness": completeness, "ideal": full,
            "seconds": {"ideal": round(ideal_seconds, 3),
                        "completeness": completeness.get("seconds")}}


def attribution_summary(attribution: dict | None) -> dict | None:
    """Per degree: minimal generators, those each family accounts for (``new``), all
    families together, and the unexplained; the skipped families with their reasons."""
    if attribution is None:
        return None
    degrees = {}
    for table in attribution["degrees"]:
        degrees[str(table["degree"])] = {
            "minimal_generators": table["minimal_generators"],
            "families": {row["id"]: row["new_generators"] for row in table["families"]},
            "explained": table["all_families"]["new_generators"],
            "unexplained": table["unexplained"]["minimal_generators"],
            "lower_bound": any(row["lower_bound"] for row in table["families"])}
    skipped = [s for s in attribution["skipped"]
               if not str(s.get("reason", "")).startswith("not-applicable")]
    return {"degrees": degrees, "skipped": skipped}


def _m2_part(point: AtlasPoint, settings: AtlasSettings, minimal: dict) -> dict:
    from attngeom.lightning_alg.atlas.m2_check import m2_check
    return m2_check(point.d, point.t, point.a, point.max_degree, minimal, settings.m2_budget,
                    point.dprime)


def _m2_current(record: dict, point: AtlasPoint, settings: AtlasSettings) -> bool:
    """Whether the record's Macaulay2 result answers ``--check-m2`` at these settings."""
    from attngeom.lightning_alg.atlas.m2_check import m2_script, script_digest
    m2 = record.get("m2")
    if not m2 or m2.get("script_digest") != script_digest(
            m2_script(point.d, point.t, point.a, point.max_degree, point.dprime)):
        return False
    if m2["status"] == "timeout":
        return m2.get("budget", 0) >= settings.m2_budget
    return m2["status"] in ("finished", "error")     # "unavailable": M2 may be there now


def current_record(text: str | None, point: AtlasPoint, settings: AtlasSettings,
                   digest: str) -> dict | None:
    """The stored record when it is well-formed and made with this point's key, else None."""
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or \
            record.get("format_version") != FORMAT_VERSION or \
            record.get("key") != settings.key(point, digest):
        return None
    return record


def run_point(task: tuple) -> dict:
    """One atlas point, where an executor runs it: ``(point, settings, digest, present)``
    -> ``{"record": ..., "computed": [parts]}`` (``present``: the text of the point's file,
    or None).  ``computed`` is empty when the stored record is current."""
    point, settings, digest, present = task
    record = current_record(present, point, settings, digest)
    computed = []
    if record is None:
        record = {"format": FORMAT, "format_version": FORMAT_VERSION,
                  "key": settings.key(point, digest), "point": point.name,
                  **_ideal_part(point, settings), "m2": None}
        computed.append("ideal")
    if settings.check_m2 and not _m2_current(record, point, settings):
        record["m2"] = _m2_part(point, settings, record["minimal_generators"])
        computed.append("m2")
    return {"record": record, "computed": computed}


def run_atlas(points: list[AtlasPoint], settings: AtlasSettings, out_dir: Path | None,
              executor, progress=None) -> tuple[list[dict], dict]:
    """Every point's record, in grid order, and what was done (``computed``: point names by
    part; ``reused``: names).  With ``out_dir``, records are read from and written to
    ``out_dir/points`` (one JSON file a point, written as soon as its task finishes)."""
    digest = code_digest()
    folder = None if out_dir is None else Path(out_dir) / POINTS_FOLDER
    tasks = []
    for point in points:
        path = None if folder is None else folder / point.filename
        present = path.read_text(encoding="utf-8") if path is not None and path.is_file() else None
        tasks.append((point, settings, digest, present))
    records: list[dict | None] = [None] * len(points)
    done = {"ideal": [], "m2": [], "reused": []}
    for index, outcome in executor.as_completed(run_point, tasks,
                                                names=[p.name for p in points],
                                                label="atlas points", progress=progress):
        records[index] = outcome["record"]
        for part in outcome["computed"]:
            done[part].append(points[index].name)
        if not outcome["computed"]:
            done["reused"].append(points[index].name)
        if folder is not None and outcome["computed"]:
            write_text_atomically(folder / points[index].filename,
                                  json.dumps(outcome["record"], indent=1, sort_keys=True) + "\n")
    return records, done


def validate_settings(families: str, budget, seed: int, prime: int | None,
                      m2_budget: float) -> AtlasSettings:
    """The settings after the checks the command makes before any point runs."""
    from attngeom.lightning_alg.claims import family_claims
    from attngeom.lightning_alg.ideal.budget_option import parse_budget
    from attngeom.lightning_alg.ideal.degree_table import validate_ideal_params

    family_claims(families)                       # an unknown family stops here
    budget = parse_budget("none" if budget is None else budget)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BadInput(f"--seed must be a nonnegative integer; got {seed!r}")
    if prime is not None:
        validate_ideal_params(2, 2, 2, 1, 1, prime)
    try:
        m2_budget = float(m2_budget)
    except (TypeError, ValueError):
        raise BadInput(f"--m2-budget must be a number of seconds; got {m2_budget!r}") from None
    if not 0 < m2_budget <= 86_400:
        raise BadInput(f"--m2-budget must be in (0, 86400] seconds; got {m2_budget:g}")
    return AtlasSettings(families, budget, seed, prime, False, m2_budget)


def compute_atlas(grid: str | None = None, max_degree: int = 4, out_dir: Path | None = None,
                  families: str = "all", budget=1.0, seed: int = 0, prime: int | None = None,
                  check_m2: bool = False, m2_budget: float = 120.0, executor=None,
                  progress=None):
    """The atlas over ``grid`` (:func:`~.grid.parse_grid`): every point's record,
    read from ``out_dir`` where current, computed (on ``executor``) where not; with
    ``out_dir``, the point files, ``atlas.json``, ``atlas.csv`` and the heat map are
    written there.  Without Macaulay2, ``check_m2`` adds a note and is dropped."""
    from attngeom.core.executor import SerialExecutor
    from attngeom.lightning_alg.atlas.grid import parse_grid
    from attngeom.lightning_alg.atlas.m2_check import m2_executable
    from attngeom.lightning_alg.atlas.pages import AtlasReport, summary, write_outputs

    points = parse_grid(grid, max_degree)
    settings = validate_settings(families, budget, seed, prime, m2_budget)
    notes = []
    if check_m2 and m2_executable() is None:
        notes.append("Macaulay2 (M2) is not installed: the Macaulay2 check is skipped "
                     "(apt-get install macaulay2)")
    elif check_m2:
        settings = AtlasSettings(**{**asdict(settings), "check_m2": True})
    records, done = run_atlas(points, settings, out_dir, executor or SerialExecutor(), progress)
    report = AtlasReport([summary(r) for r in records], asdict(settings), done, notes=notes)
    if out_dir is not None:
        report.files = write_outputs(report, Path(out_dir))
    return report

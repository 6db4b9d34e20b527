"""The atlas's outputs, made from its point records (:mod:`.sweep`): the text table of
``attngeom atlas``, ``atlas.json``, ``atlas.csv``, the heat map of unexplained minimal
generators, and the markdown page ``docs/atlas.md``.

Every figure is read from the records; nothing is typed in.  Regenerate the docs page and
its picture from a committed atlas folder with::

    python -m attngeom.lightning_alg.atlas.pages data/atlas \\
        --figure docs/figures/atlas_unexplained.png > docs/atlas.md

(``tests/test_atlas.py`` fails while ``docs/atlas.md`` differs from what this prints.)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from attngeom.core.atomic_files import write_text_atomically
from attngeom.core.errors import BadInput
from attngeom.core.markdown import cell, table

#: Files an atlas folder holds beside ``points/``.
JSON_NAME, CSV_NAME, FIGURE_NAME = "atlas.json", "atlas.csv", "atlas_unexplained.png"
#: Where the docs page shows the picture (relative to docs/).
DOCS_FIGURE = "figures/atlas_unexplained.png"
#: The record fields ``atlas.json`` keeps (the per-point files also keep the whole
#: ``attngeom ideal --json`` report under ``ideal``).
SUMMARY_FIELDS = ("point", "key", "ambient_dimension", "linear_span_dimension",
                  "variety_dimension", "codimension", "hmk_cor33", "hmk_cor33_whole_output",
                  "hilbert_function", "dim_J", "minimal_generators", "attribution",
                  "failure_probability", "local_completeness", "m2", "seconds")


def summary(record: dict) -> dict:
    """A record without its bulky ``ideal`` report."""
    return {name: record.get(name) for name in SUMMARY_FIELDS}


@dataclass
class AtlasReport:
    """The atlas (:func:`attngeom.atlas`): ``records`` (one summary dict per point, in grid
    order: HF, dim J_k, minimal generators, dimension and HMK Cor 3.3, attribution,
    local completeness, Macaulay2), ``settings``, ``done`` (which points were computed and
    which reused) and ``files`` written.  ``str()`` is the command's table; Jupyter shows
    the markdown tables."""

    records: list[dict]
    settings: dict
    done: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def __str__(self) -> str:
        return render_text(self)

    def _repr_markdown_(self) -> str:
        return "\n\n".join(markdown_tables(self.records))

    def to_json(self) -> dict:
        """Settings, point records, what was computed or reused, files and notes."""
        return {"settings": self.settings, "points": self.records, "done": self.done,
                "files": self.files, "notes": self.notes}

    def rows(self) -> list[dict]:
        """One flat row per point (the CSV's)."""
        return csv_rows(self.records)

    def plot(self, path: str | None = None):
        """The heat map of unexplained minimal generators (points x degrees): saved to
        ``path`` (PNG), or returned as a matplotlib figure."""
        return plot_unexplained(self.records, None if path is None else Path(path))


def degrees_of(records: list[dict]) -> list[str]:
    top = max((r["key"]["max_degree"] for r in records), default=0)
    return [str(k) for k in range(1, top + 1)]


def point_label(record: dict) -> str:
    key = record["key"]
    return f"({key['d']},{key['t']},{key['a']},{key['dprime']})"


def unexplained(record: dict) -> dict[str, int] | None:
    """Unexplained minimal generators by degree (None without an attribution)."""
    attribution = record.get("attribution")
    if attribution is None:
        return None
    return {k: v["unexplained"] for k, v in attribution["degrees"].items()}


def skipped_families(record: dict) -> list[str]:
    """The families the attribution skipped at this point (over its budget): their
    generators may be among the unexplained ones (``attngeom ideal --attribution-budget``)."""
    return [entry["id"] for entry in (record.get("attribution") or {}).get("skipped") or ()]


def _unexplained_cell(record: dict) -> str:
    text = _by_degree(unexplained(record))
    skipped = skipped_families(record)
    if skipped and any((unexplained(record) or {}).values()):
        text += f" (skipped over budget: {', '.join(skipped)})"
    return text


def _skipped_note(records: list[dict]) -> str:
    skipped = sorted({name for r in records for name in skipped_families(r)})
    if not skipped:
        return ""
    return (f"; at {sum(bool(skipped_families(r)) for r in records)} of them the attribution "
            f"skipped {', '.join(skipped)} (over its budget), so these counts are upper bounds "
            "of what the families leave (`attngeom ideal ... --attribution-budget none` "
            "attributes them; docs/new-families.md)")


def unexplained_is_upper_bound(record: dict) -> bool:
    """Whether some degree with unexplained generators has a family whose span is only a
    lower bound (members sampled, or a random projection saturated: ``lower_bound``), so
    that its unexplained count is an upper bound."""
    degrees = (record.get("attribution") or {}).get("degrees") or {}
    return any(entry["lower_bound"] and entry["unexplained"] for entry in degrees.values())


def _upper_bound_note(records: list[dict]) -> str:
    points = [point_label(r) for r in records if unexplained_is_upper_bound(r)]
    if not points:
        return ""
    return (f"; at {', '.join(points)} some family's span is a lower bound (members sampled, "
            "or a random projection saturated; `+` below), so the count is an upper bound "
            "(`--attribution-budget none` reduces every member; docs/ideal.md)")


def _by_degree(values: dict | None, nonzero: bool = True) -> str:
    if not values:
        return "-"
    parts = [f"{k}: {v:,}" for k, v in sorted(values.items(), key=lambda kv: int(kv[0]))
             if v or not nonzero]
    return ", ".join(parts) or "none"


def _hmk(record: dict) -> str:
    entry = record["hmk_cor33"]
    verdict = "agrees" if entry["agrees"] else "differs"
    scope = "" if entry["applicable"] else " (outside hyp.)"
    return f"{entry['value']} {verdict}{scope}"


def completeness_text(record: dict) -> str:
    lc = record.get("local_completeness") or {}
    if "error" in lc:
        return f"error: {lc['error']}"
    if not lc:
        return "-"
    if not lc["complete"]:
        none = "; J has no generator of degree <= K" if not any(
            record["minimal_generators"].values()) else ""
        return f"no: rank {lc['rank']} < codim {lc['codimension']}{none}"
    if lc["codimension"] == 0:
        return "yes: codimension 0"
    sets = " or ".join("+".join(s) for s in lc["sufficient_sets"]) or "(search cut)"
    return f"yes: {sets}"


def m2_text(record: dict) -> str:
    m2 = record.get("m2")
    if not m2:
        return "-"
    if m2["status"] == "finished":
        verdict = "agrees" if m2["agrees"] else "DISAGREES " + json.dumps(m2["differences"])
        return f"{verdict}, {m2['seconds']:.1f} s"
    return f"{m2['status']} ({m2['seconds']:.1f} s)" if m2["status"] == "timeout" else m2["status"]


def render_text(report: AtlasReport) -> str:
    """The table ``attngeom atlas`` prints: one line a point."""
    lines = [f"{'point (d,t,a,dp)':<17} {'K':>2} {'N':>4} {'dim':>4}  {'HMK Cor 3.3':<26} "
             f"{'minimal generators':<28} {'unexplained':<20} local completeness; M2"]
    for record in report.records:
        lines.append(f"{point_label(record):<17} {record['key']['max_degree']:>2} "
                     f"{record['ambient_dimension']:>4} {record['variety_dimension']:>4}  "
                     f"{_hmk(record):<26} {_by_degree(record['minimal_generators']):<28} "
                     f"{_by_degree(unexplained(record)):<20} {completeness_text(record)}; "
                     f"{m2_text(record)}")
    done = report.done
    if done:
        lines.append(f"  {len(report.records)} points: {len(done.get('ideal', []))} computed, "
                     f"{len(done.get('reused', []))} reused; Macaulay2 run at "
                     f"{len(done.get('m2', []))}")
    lines.extend(f"  note: {note}" for note in report.notes)
    for name, path in report.files.items():
        lines.append(f"  wrote {name}: {path}")
    return "\n".join(lines)


# -- CSV ----------------------------------------------------------------------------------------

def csv_rows(records: list[dict]) -> list[dict]:
    """One flat row a point: parameters, dimensions, HMK, and per degree k HF_k, dimJ_k,
    mingens_k, unexplained_k (empty above the point's K), local completeness, Macaulay2."""
    degrees = degrees_of(records)
    rows = []
    for record in records:
        key = record["key"]
        row = {"point": record["point"], "d": key["d"], "t": key["t"], "a": key["a"],
               "dprime": key["dprime"], "max_degree": key["max_degree"],
               "ambient": record["ambient_dimension"],
               "linear_span": record["linear_span_dimension"],
               "dimension": record["variety_dimension"], "codimension": record["codimension"],
               "hmk_cor33": record["hmk_cor33"]["value"],
               "hmk_applicable": record["hmk_cor33"]["applicable"],
               "hmk_agrees": record["hmk_cor33"]["agrees"]}
        lost = unexplained(record) or {}
        for k in degrees:
            inside = int(k) <= key["max_degree"]
            row[f"HF_{k}"] = record["hilbert_function"].get(k, "") if inside else ""
            row[f"dimJ_{k}"] = record["dim_J"].get(k, "") if inside else ""
            row[f"mingens_{k}"] = record["minimal_generators"].get(k, "") if inside else ""
            row[f"unexplained_{k}"] = lost.get(k, "") if inside else ""
        lc = record.get("local_completeness") or {}
        row.update({"lc_codimension": lc.get("codimension", ""), "lc_rank": lc.get("rank", ""),
                    "lc_complete": lc.get("complete", ""),
                    "lc_sufficient_sets": " | ".join("+".join(s) for s in
                                                     lc.get("sufficient_sets", []))})
        m2 = record.get("m2") or {}
        row.update({"m2_status": m2.get("status", ""), "m2_agrees": m2.get("agrees", ""),
                    "m2_seconds": m2.get("seconds", ""),
                    "seconds_ideal": (record.get("seconds") or {}).get("ideal", "")})
        rows.append(row)
    return rows


def csv_text(records: list[dict]) -> str:
    rows = csv_rows(records)
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


# -- the picture --------------------------------------------------------------------------------

def plot_unexplained(records: list[dict], path: Path | None = None):
    """Heat map: points (rows) x degrees (columns), colour log10(1 + unexplained minimal
    generators), each cell annotated 'unexplained / minimal'; blank above a point's K or
    where nothing was attributed.  Saved to ``path`` (PNG), or, without a path, the
    matplotlib figure is returned.  Drawn on a bare ``Figure`` (no pyplot), so no backend
    is chosen or changed."""
    import numpy as np
    from matplotlib.figure import Figure

    degrees = degrees_of(records)
    grid = np.full((len(records), len(degrees)), np.nan)
    labels = []
    for i, record in enumerate(records):
        lost = unexplained(record) or {}
        for j, k in enumerate(degrees):
            if k in lost:
                grid[i, j] = np.log10(1 + lost[k])
        labels.append(point_label(record))
    fig = Figure(figsize=(2.2 + 1.3 * len(degrees), 0.9 + 0.34 * len(records)))
    ax = fig.subplots()
    image = ax.imshow(grid, aspect="auto", cmap="Reds", vmin=0,
                      vmax=max(1.0, float(np.nanmax(grid)) if np.isfinite(grid).any() else 1.0))
    for i, record in enumerate(records):
        lost = unexplained(record) or {}
        for j, k in enumerate(degrees):
            if k in lost:
                minimal = record["minimal_generators"].get(k, 0)
                ax.text(j, i, f"{lost[k]:,} / {minimal:,}", ha="center", va="center",
                        fontsize=7, color="black" if grid[i, j] < 2.2 else "white")
    ax.set_xticks(range(len(degrees)), [f"k = {k}" for k in degrees])
    ax.set_yticks(range(len(records)), labels)
    ax.set_ylabel("(d, t, a, d')")
    ax.set_title("Minimal generators no family explains (unexplained / minimal)", fontsize=9)
    fig.colorbar(image, ax=ax, label="log10(1 + unexplained)")
    fig.tight_layout()
    if path is None:
        return fig
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    return path


# -- files --------------------------------------------------------------------------------------

def write_outputs(report: AtlasReport, out_dir: Path) -> dict:
    """atlas.json, atlas.csv and the heat map in ``out_dir``; their paths by name."""
    out_dir = Path(out_dir)
    files = {"json": out_dir / JSON_NAME, "csv": out_dir / CSV_NAME, "figure": out_dir / FIGURE_NAME}
    payload = {"settings": report.settings, "points": report.records}
    write_text_atomically(files["json"], json.dumps(payload, indent=1, sort_keys=True) + "\n")
    write_text_atomically(files["csv"], csv_text(report.records))
    plot_unexplained(report.records, files["figure"])
    return {name: str(path) for name, path in files.items()}


def load_atlas(folder: Path) -> dict:
    """``folder/atlas.json`` (written by :func:`write_outputs`)."""
    path = Path(folder) / JSON_NAME
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BadInput(f"cannot read the atlas {path}: {error}") from None


# -- markdown -----------------------------------------------------------------------------------

def markdown_tables(records: list[dict]) -> list[str]:
    """The page's tables: the points, the Hilbert functions, the attribution, local
    completeness and Macaulay2."""
    degrees = degrees_of(records)
    points = table(
        ["(d,t,a,d')", "K", "N", "span", "dim", "HMK Cor 3.3", "minimal generators",
         "unexplained", "seconds"],
        [[point_label(r), str(r["key"]["max_degree"]), str(r["ambient_dimension"]),
          str(r["linear_span_dimension"]), str(r["variety_dimension"]), cell(_hmk(r)),
          cell(_by_degree(r["minimal_generators"])), cell(_unexplained_cell(r)),
          f"{(r.get('seconds') or {}).get('ideal', 0):.1f}"] for r in records])
    hilbert = table(["(d,t,a,d')", *[f"HF({k})" for k in degrees]],
                    [[point_label(r), *[f"{r['hilbert_function'][k]:,}"
                                        if k in r["hilbert_function"] else "" for k in degrees]]
                     for r in records])
    attribution_rows = []
    for r in records:
        for k, entry in sorted(((r.get("attribution") or {}).get("degrees") or {}).items(),
                               key=lambda kv: int(kv[0])):
            if not entry["minimal_generators"]:
                continue
            families = ", ".join(f"{name} {n:,}" for name, n in entry["families"].items() if n)
            attribution_rows.append([point_label(r), k, f"{entry['minimal_generators']:,}",
                                     cell(families or "none"), f"{entry['explained']:,}" +
                                     ("+" if entry["lower_bound"] else ""),
                                     f"{entry['unexplained']:,}"])
    attribution = table(["(d,t,a,d')", "k", "minimal", "families (new generators)",
                         "explained", "unexplained"], attribution_rows)
    completeness_rows = []
    for r in records:
        lc = r.get("local_completeness") or {}
        if "rank" not in lc:
            continue
        sets = " or ".join("+".join(s) for s in lc["sufficient_sets"] if s)
        verdict = "yes" if lc["complete"] else "no" if any(r["minimal_generators"].values()) \
            else "no (J has no generator of degree <= K)"
        completeness_rows.append([point_label(r), str(lc["codimension"]), str(lc["rank"]),
                                  cell(verdict), cell(sets or "-")])
    completeness = table(["(d,t,a,d')", "codim", "rank of all members", "component",
                          "smallest sufficient sets of families"], completeness_rows)
    m2_rows = [[point_label(r), str(r["key"]["max_degree"]), r["m2"]["status"],
                ("yes" if r["m2"]["agrees"] else "NO " + cell(json.dumps(r["m2"]["differences"])))
                if r["m2"]["status"] == "finished" else "-",
                f"{r['m2']['seconds']:.1f}", f"{(r.get('seconds') or {}).get('ideal', 0):.1f}",
                str(r["m2"].get("version") or "")]
               for r in records if r.get("m2")]
    m2 = table(["(d,t,a,d')", "K", "M2", "agrees", "M2 seconds", "attngeom seconds",
                "M2 version"], m2_rows)
    return [points, hilbert, attribution, completeness, m2]


def _seconds_by_d(records: list[dict]) -> str:
    spans = {}
    for r in records:
        seconds = (r.get("seconds") or {}).get("ideal", 0)
        low, high = spans.get(r["key"]["d"], (seconds, seconds))
        spans[r["key"]["d"]] = (min(low, seconds), max(high, seconds))
    return "; ".join(f"d = {d}: {low:.1f}-{high:.1f} s" for d, (low, high) in sorted(spans.items()))


def atlas_markdown(atlas: dict, figure: str = DOCS_FIGURE) -> str:
    """The page ``docs/atlas.md``: prose around the tables of :func:`markdown_tables`, every
    number from ``atlas`` (the contents of ``atlas.json``)."""
    records, settings = atlas["points"], atlas["settings"]
    points, hilbert, attribution, completeness, m2 = markdown_tables(records)
    timed = [r for r in records if r.get("m2")]
    finished = [r for r in timed if r["m2"]["status"] == "finished"]
    agreeing = [r for r in finished if r["m2"]["agrees"]]
    complete = [r for r in records if (r.get("local_completeness") or {}).get("complete")]
    with_lost = [r for r in records if any((unexplained(r) or {}).values())]
    budget = max((r["m2"]["budget"] for r in timed), default=None)
    slowest = max(records, key=lambda r: (r.get("seconds") or {}).get("ideal", 0))
    return "\n".join([
        "# The atlas of attention varieties (`attngeom atlas`)",
        "",
        "<!-- generated by: python -m attngeom.lightning_alg.atlas.pages data/atlas "
        "--figure docs/figures/atlas_unexplained.png > docs/atlas.md -->",
        "",
        "The vanishing ideal J of one output coordinate's attention variety (ADM Def 8) at "
        f"every point of a grid of (d, t, a, d'), computed by `attngeom atlas` with the "
        "machinery of `attngeom ideal` (docs/ideal.md): HF(k), dim J_k and the minimal "
        "generators of each degree k <= K, the variety's dimension against HMK Cor 3.3, "
        "which registered families account for the generators and what no family explains, "
        "the local completeness of the families, and an independent check by Macaulay2.",
        "",
        "```",
        "attngeom atlas [--grid SPEC] [--max-degree K] [--out DIR] [--workers N | --scheduler ADDR]",
        "               [--check-m2] [--m2-budget SECONDS] [--families all|none|ID,...] [--json]",
        "```",
        "",
        f"This page: {len(records)} points, families `{settings['families']}`, attribution "
        f"budget {settings['budget']}, seed {settings['seed']}; the data are in "
        "`data/atlas/` (one JSON file a point under `points/`, `atlas.json`, `atlas.csv`).  "
        f"The slowest point, {point_label(slowest)}, took "
        f"{(slowest.get('seconds') or {}).get('ideal', 0):.1f} s.",
        "",
        "## Grid grammar and the default grid",
        "",
        "`--grid` takes terms `d,t,a[,d'][@K]` separated by `;` or spaces; each field is an "
        "integer, a range `LO..HI` or a list `X|Y|Z`, and a term stands for all "
        "combinations (`3,1..3,1..3` is nine points; `3,1,3@8` goes to degree 8).  "
        "`default` is the default grid (`attngeom.lightning_alg.atlas.grid.DEFAULT_GRID`).  "
        "Bad input (a value below 1, a backward range, a malformed term, over 500 points) "
        "is one line and exit code 2.",
        "",
        "The default grid's rule: a point is in when its table to degree 4, every "
        "registered family attributed, takes at most a few minutes and about 1 GiB in one "
        "process on the 2-core, 24 GiB development machine (measured; the figures are in "
        "the comment of `DEFAULT_GRID`).  d' = 2 is included at two points: one output "
        "coordinate sees only row 1 of V, so its ideal is that of d' = 1 and only the "
        "whole output's dimension changes.  Seconds of the table, attribution included, by "
        f"d on this page: {_seconds_by_d(records)}.",
        "",
        "## The points",
        "",
        "`N` coordinates, `span` the dimension of their linear span on the variety, `dim` "
        "the variety's dimension (Jacobian rank over F_p), `HMK Cor 3.3` its formula at "
        "d' = 1 (ADM's variety is one output coordinate) and whether it agrees; minimal "
        "generators and the unexplained ones by degree (`k: count`).",
        "",
        points,
        "",
        f"![unexplained minimal generators]({figure})",
        "",
        f"{len(with_lost)} of {len(records)} points {'has' if len(with_lost) == 1 else 'have'} "
        f"minimal generators that no registered family explains within the attribution budget: "
        f"{', '.join(point_label(r) for r in with_lost) or 'none'}"
        + _skipped_note(with_lost) + _upper_bound_note(with_lost) + ".",
        "",
        "## Hilbert functions",
        "",
        "HF(k) = dim of the coordinate ring in degree k (docs/ideal.md, step 3).",
        "",
        hilbert,
        "",
        "## Attribution",
        "",
        "Per point and degree with minimal generators: the families that account for some "
        "(`new` of `attngeom ideal`), all together, and what stays unexplained "
        "(`+`: a lower bound, members sampled or a projection saturated).",
        "",
        attribution,
        "",
        "## Local completeness",
        "",
        "At a random smooth point y of the variety over F_p, the rank of the Jacobian of all "
        "family members of degree <= K against the codimension c (module "
        "`attngeom.lightning_alg.atlas.completeness`).  Rank c means the variety is "
        "an irreducible component of the families' common zero set (the tangent space of "
        "the zero set at y has the variety's dimension); the rank at an F_p point never "
        "exceeds the generic rank over Q, so `yes` is exact, and `no` may be wrong with "
        "the probability the JSON gives.  The last column lists every smallest set of "
        "families that already reaches rank c.  "
        f"{len(complete)} of {len(records)} points: the variety is a component.",
        "",
        completeness,
        "",
        "## Macaulay2",
        "",
        "`--check-m2` runs Macaulay2 on a script generated from the parametrization "
        "(module `attngeom.lightning_alg.atlas.m2_check`): the graph ideal of mu in "
        "QQ[a, v, y] (A and row 1 of V of degree 1, coordinates of degree 2) plus the "
        "(a+1)-minors of A when a < d, a Groebner basis in an elimination order truncated "
        "at degree 2K, the elements free of (a, v), and their `mingens`; the counts per degree "
        "are compared with attngeom's.  Without `M2` on the PATH the check is skipped with "
        "one line."
        + (f"  Budget {budget:g} s a point: {len(finished)} of {len(timed)} points finished, "
           f"{len(agreeing)} agree." if timed else "  No point was checked."),
        "",
        m2,
        "",
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attngeom.lightning_alg.atlas.pages",
        description="print docs/atlas.md from an atlas folder (and draw its picture)")
    parser.add_argument("folder", help="the atlas folder (attngeom atlas --out DIR)")
    parser.add_argument("--figure", default=None, help="also draw the heat map to this PNG")
    args = parser.parse_args(argv)
    atlas = load_atlas(Path(args.folder))
    if args.figure:
        plot_unexplained(atlas["points"], Path(args.figure))
    sys.stdout.write(atlas_markdown(atlas))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

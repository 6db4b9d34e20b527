"""The ideal report as text: the table ``attngeom ideal`` prints (``str(report)`` for an
:class:`~attngeom.lightning_alg.ideal.report.IdealReport`; ADM Def 8's degree table, HMK
Cor 3.3's dimension, the family attribution).  The markdown form Jupyter shows is
:mod:`attngeom.lightning_alg.ideal.report_markdown`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attngeom.lightning_alg.ideal.attribution import describe_budget

if TYPE_CHECKING:   # the type only: IdealReport imports this module to render itself
    from attngeom.lightning_alg.ideal.report import IdealReport


def render_report(report: IdealReport) -> str:
    """The table ``attngeom ideal`` prints."""
    p = report.params
    dim = report.dimension
    lines = [f"attention variety of output coordinate (i,j)=(1,{p['col']}): d={p['d']}, "
             f"t={p['t']}, a={p['a']}, d'={p['dprime']}  [ADM Def 8]",
             f"  ambient dimension {report.ambient_dimension}, linear span "
             f"{report.linear_span_dimension}, variety dimension {report.variety_dimension} "
             f"(codimension {report.ambient_dimension - report.variety_dimension}; "
             f"Jacobian rank over F_p at {dim['jacobian']['points']} points)"]
    for key, what in (("hmk_cor33_one_coordinate", "one coordinate (d'=1)"),
                      ("hmk_cor33_whole_output", f"whole output (d'={p['dprime']})")):
        if key not in dim:
            continue
        entry = dim[key]
        measured = entry.get("measured", report.variety_dimension)
        verdict = "agrees" if entry["agrees"] else "DISAGREES"
        scope = "" if entry["applicable"] else f"  (outside its hypotheses: {entry['hypothesis']})"
        lines.append(f"  HMK Cor 3.3, {what}: formula {entry['value']}, measured {measured}: "
                     f"{verdict}{scope}")
    lines.append("")
    header = ("  k  monomials  blocks  computed  largest   HF(k)      dim J_k  dim J_k/J_1  "
              "from J_<k  minimal  points  seconds")
    lines.append(header)
    for t in report.degrees:
        lines.append(f"{t.degree:3d} {t.monomials:10d} {t.blocks:7d} {t.blocks_computed:9d} "
                     f"{t.largest_block:8d} "
                     f"{t.hilbert_function:7d} {t.dim_J:12d} {t.dim_J_mod_linear:12d} "
                     f"{t.generated_by_lower:10d} {t.minimal_generators:8d} {t.max_points:7d} "
                     f"{t.seconds:8.2f}")
    minimal = ", ".join(f"{v} in degree {k}" for k, v in report.by_degree(
        "minimal_generators", nonzero=True).items()) or "none"
    lines.append(f"  minimal generators: {minimal}")
    lines.append(f"  over F_p, p = {p['prime']}: at most {report.points_drawn} random points of the "
                 f"variety per block, every kernel checked at {report.fresh_points} fresh points; "
                 f"failure probability <= {report.failure_probability:.3g} (Schwartz-Zippel)")
    if report.attribution is not None:
        lines.extend(["", *render_attribution(report.attribution)])
    lines.extend(f"  note: {note}" for note in report.notes)
    if report.export is not None:
        counts = ", ".join(f"{n} of degree {k}" for k, n in report.export["polynomials"].items() if n)
        lines.append(f"  wrote {report.export['path']}: {counts or 'nothing'} (lifted to Q from "
                     f"{len(report.export['primes'])} prime(s), each checked at "
                     f"{report.export['check_points']} points mod {report.export['check_prime']})")
    lines.append(f"  {report.seconds:.2f} s")
    return "\n".join(lines)


def render_attribution(attribution: dict) -> list[str]:
    """The family attribution table's lines (the text form of ``IdealReport.attribution``)."""
    lines = ["family attribution (span: inside J_k modulo J_1, J_1 itself for k = 1; "
             "new: minimal generators accounted for)",
             "  k  family                    source                        members  outside J"
             "     span      new"]
    for table in attribution["degrees"]:
        k = table["degree"]
        if not table["families"] and not table["minimal_generators"]:
            continue
        for row in table["families"]:
            mark = "+" if row["lower_bound"] else " "
            lines.append(f"{k:3d}  {row['id']:<24}  {row['source'][:28]:<28}  {row['used']:7d}  "
                         f"{row['outside_J']:9d}  {row['span']:7d}{mark} {row['new_generators']:7d}")
        together = table["all_families"]
        lines.append(f"{k:3d}  {'all families':<24}  {'':<28}  {'':7}  {'':9}  "
                     f"{together['span']:7d}  {together['new_generators']:7d}")
        lines.append(f"{k:3d}  {'unexplained':<24}  {'of dim J_k/J_1, minimal':<28}  {'':7}  {'':9}  "
                     f"{table['unexplained']['span']:7d}  {table['unexplained']['minimal_generators']:7d}"
                     f"   (of {table['dim_J_mod_linear']}, {table['minimal_generators']})")
    if any(row["lower_bound"] for table in attribution["degrees"] for row in table["families"]):
        lines.append("  + lower bound (members sampled or projection saturated)")
    for skipped in attribution["skipped"]:
        lines.append(f"  skipped {skipped['id']}: {skipped['reason']}")
    budget = attribution.get("budget")
    if budget is not None:
        limit = "no limit" if budget["limit"] is None else (
            f"of {budget['limit']:,} ({describe_budget(budget['factor'])})")
        lines.append(f"  attribution budget: {budget['used']:,} work units used {limit}")
    return lines

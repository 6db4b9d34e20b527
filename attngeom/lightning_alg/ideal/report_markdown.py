"""The ideal report as markdown: what Jupyter shows for an
:class:`~attngeom.lightning_alg.ideal.report.IdealReport` (``str(report)`` is the text
``attngeom ideal`` prints, :func:`~attngeom.lightning_alg.ideal.report_text.render_report`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attngeom.core.markdown import cell, table
from attngeom.lightning_alg.ideal.report_text import render_attribution

if TYPE_CHECKING:   # the type only: IdealReport imports this module to render itself
    from attngeom.lightning_alg.ideal.report import IdealReport

#: The degree table's columns: header and DegreeTable field.
COLUMNS = (("k", "degree"), ("monomials", "monomials"), ("blocks", "blocks"),
           ("computed", "blocks_computed"), ("largest", "largest_block"),
           ("HF(k)", "hilbert_function"), ("dim J_k", "dim_J"),
           ("dim J_k/J_1", "dim_J_mod_linear"), ("from J_<k", "generated_by_lower"),
           ("minimal", "minimal_generators"), ("points", "max_points"))


def report_markdown(report: IdealReport) -> str:
    """The header, HMK Cor 3.3, the degree table and the failure bound in markdown; the
    family attribution (when computed) as the text table ``attngeom ideal`` prints."""
    p = report.params
    dim = report.dimension
    codim = report.ambient_dimension - report.variety_dimension
    lines = [f"**Attention variety of output coordinate (i,j)=(1,{p['col']})**: d={p['d']}, "
             f"t={p['t']}, a={p['a']}, d'={p['dprime']} [ADM Def 8]", "",
             f"- ambient dimension {report.ambient_dimension}, linear span "
             f"{report.linear_span_dimension}, variety dimension **{report.variety_dimension}** "
             f"(codimension {codim}; Jacobian rank over F_p at {dim['jacobian']['points']} points)"]
    for key, what in (("hmk_cor33_one_coordinate", "one coordinate (d'=1)"),
                      ("hmk_cor33_whole_output", f"whole output (d'={p['dprime']})")):
        if key in dim:
            entry = dim[key]
            measured = entry.get("measured", report.variety_dimension)
            agrees = "agrees" if entry["agrees"] else "**DISAGREES**"
            scope = "" if entry["applicable"] else \
                f" (outside its hypotheses: {cell(entry['hypothesis'])})"
            lines.append(f"- HMK Cor 3.3, {what}: formula {entry['value']}, measured "
                         f"{measured}: {agrees}{scope}")
    lines += ["", table([name for name, _ in COLUMNS] + ["seconds"], (
        [str(getattr(t, attr)) for _, attr in COLUMNS] + [f"{t.seconds:.2f}"]
        for t in report.degrees)), ""]
    minimal = ", ".join(f"{v} in degree {k}" for k, v in report.by_degree(
        "minimal_generators", nonzero=True).items()) or "none"
    lines.append(f"- minimal generators: **{minimal}**")
    lines.append(f"- over F_p, p = {p['prime']}: at most {report.points_drawn} random points "
                 f"of the variety per block, every kernel checked at {report.fresh_points} "
                 f"fresh points; failure probability ≤ {report.failure_probability:.3g} "
                 "(Schwartz–Zippel)")
    lines += [f"- note: {cell(note)}" for note in report.notes]
    lines.append(f"- {report.seconds:.2f} s")
    if report.attribution is not None:
        lines += ["", "```", *render_attribution(report.attribution), "```"]
    return "\n".join(lines)

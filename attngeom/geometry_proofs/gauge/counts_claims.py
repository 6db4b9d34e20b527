"""GT's printed counts recomputed from its stated sizes (GT §2.5.1, eqs 37, 46, Tables 2-4,
§4.1, §4.3.1, §5.0.5): one claim per group of figures, see
:mod:`attngeom.geometry_proofs.gauge.counts` for the sizes and the reproduction rule (the
recomputed value rounded at the last printed digit; a truncated figure is a convention
erratum)."""

from __future__ import annotations

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge import counts
from attngeom.core.claim import Claim
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.kernels.sampling import Sampler
from attngeom.core.verdict import consistent, proved, refuted

#: a figure reproduces when |printed - computed| <= 1/2 unit of its last printed digit
UNITS_TOLERANCE = counts.ROUNDING_UNITS + counts.FIGURE_SLACK
RULE = "printed = recomputed rounded at the last printed digit (|printed - computed| <= 1/2 unit)"


class CountsClaim(Claim):
    """A group of GT's printed figures, each recomputed from the stated sizes.  ``proved``
    (integer counts, exact) or ``consistent`` (figures through exp / log / division, gap
    measured in units of the last printed digit, at most 1/2: rounding) when every figure
    reproduces; ``refuted`` with the first figure that does not: a false statement, or a
    convention erratum when every failing figure is the recomputed value truncated instead
    of rounded."""

    params = ()
    examples = ({},)

    def __init__(self, claim_id: str, source: str, statement: str, figures, exact: bool):
        self.id, self.source, self.statement = claim_id, source, statement
        self._figures, self._exact = figures, exact
        self.methods = ("exact",) if exact else ("numeric",)
        self.__doc__ = f"{source}: {statement}"

    def figures(self, context) -> list[counts.PrintedFigure]:
        return self._figures(context.sampler) if self._exact else self._figures()

    def check_exact(self, params, context):
        figures = self.figures(context)
        table = [f.as_dict() for f in figures]
        failing = [f for f in figures if not f.reproduces]
        if failing:
            wrong = [f for f in failing if not f.truncated]
            worst = (wrong or failing)[0]
            summary = (f"{worst.name} ({worst.where}): printed {worst.printed:g}, recomputed "
                       f"{worst.computed:.6g} from the stated sizes ({worst.how})")
            if wrong:
                erratum = Erratum(ErrorKind.FALSE_STATEMENT, worst.where, f"{worst.name}: {worst.printed:g}",
                                  f"{worst.computed:.6g} ({worst.how})")
            else:
                erratum = Erratum(
                    ErrorKind.CONVENTION, "; ".join(dict.fromkeys(f.where for f in failing)),
                    "; ".join(f"{f.name}: {f.printed:g}" for f in failing),
                    "; ".join(f"{f.computed:.6g} rounds to {f.rounded:g}" for f in failing)
                    + ": the printed figures are truncated, not rounded",
                    f"consistent: each of the {len(failing)} equals the recomputed value "
                    f"truncated at its last printed digit, and the other "
                    f"{len(figures) - len(failing)} figures reproduce rounded")
                summary += f", which rounds to {worst.rounded:g}: truncated, not rounded"
            return refuted(method="exact", counterexample=worst.as_dict(), checked=len(figures),
                           max_residual=max(f.gap_in_units for f in figures),
                           evidence={"figures": table, "rule": RULE}, summary=summary,
                           erratum=erratum)
        summary = "every figure reproduces from the stated sizes: " + ", ".join(
            f"{f.name} {f.printed:g} (computed {f.computed:.6g})" for f in figures)
        if self._exact:
            return proved(checked=len(figures), summary=summary, method="exact",
                          evidence={"figures": table, "rule": "integer counts, equal"})
        return consistent(checked=len(figures), max_residual=max(f.gap_in_units for f in figures),
                          tolerance=UNITS_TOLERANCE, backend="python", device="cpu", summary=summary,
                          evidence={"figures": table, "rule": RULE})

    #: the float groups run the same evaluation as ``numeric`` (their verdict is consistent)
    check_numeric = check_exact

    def show(self, params, fmt="text", limit=None):
        figures = self._figures(Sampler(0)) if self._exact else self._figures()
        return render_items([(f.name, f"{f.printed:g} printed; {f.computed:.6g} = {f.how}") for f in figures], fmt)


CLAIMS = [
    CountsClaim("gt-counts-architecture", "GT §2.5.1, eqs (37), (46)",
                "dim so(20) = 190; K = 5 x 20 = 100 gives 5 heads of size 20.",
                counts.architecture_figures, exact=True),
    CountsClaim("gt-counts-parameters", "GT Tables 2-3",
                "The gauge VFE has 24.6M parameters; the standard baselines 23.5M and 5.76M.",
                counts.parameter_figures, exact=False),
    CountsClaim("gt-counts-results", "GT Table 3, §4.1",
                "PPL 230 is a 218x improvement over random (V = 50,257); the table's losses, PPLs, ratios and 77%.",
                counts.result_figures, exact=False),
    CountsClaim("gt-counts-cost", "GT Table 4, §4.3.1, §5.0.5",
                "0.43 s vs 0.015 s per step is ~29x; ~890 and ~25,000 tokens/s; ~24 h and ~50 min for 200k steps.",
                counts.cost_figures, exact=False),
]

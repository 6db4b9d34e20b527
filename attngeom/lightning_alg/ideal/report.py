"""``attngeom ideal``: the report (degree table, dimension, family attribution) and its text."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from attngeom.core.claim import CheckContext
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.lightning_alg.ideal.attribution import (
    DEFAULT_BUDGET, AttributionBudget, attribute_families, parse_family_params)
from attngeom.lightning_alg.ideal.degree_table import (
    AttentionIdeal, DEFAULT_MAX_DEGREE, DegreeTable, STREAM_JACOBIAN)
from attngeom.lightning_alg.ideal.interpolation import FRESH_POINTS
from attngeom.lightning_alg.ideal.variety import dimension_report


@dataclass
class IdealReport:
    """Everything ``attngeom ideal`` prints (:func:`attngeom.ideal`): ``params``, the
    ambient and linear-span dimensions, ``dimension`` (Jacobian rank, HMK Cor 3.3),
    ``degrees`` (one DegreeTable per degree k: monomials, blocks, ``hilbert_function``,
    ``dim_J``, ``dim_J_mod_linear``, ``generated_by_lower``, ``minimal_generators``,
    points, seconds), the family ``attribution`` and the ``notes``.  ``str()`` is the
    command's table; Jupyter shows it as markdown."""

    params: dict
    ambient_dimension: int
    linear_span_dimension: int
    dimension: dict
    degrees: list[DegreeTable]
    points_drawn: int
    fresh_points: int
    attribution: dict | None = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)
    export: dict | None = None
    #: The engine that computed the report, when it kept every block's kernel basis
    #: (``compute_ideal(keep=True)``): :meth:`to_m2` lifts those bases instead of
    #: recomputing them.
    _engine: Any = field(default=None, repr=False, compare=False)
    _m2: str | None = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        """The table ``attngeom ideal`` prints
        (:func:`attngeom.lightning_alg.ideal.report_text.render_report`)."""
        from attngeom.lightning_alg.ideal.report_text import render_report
        return render_report(self)

    def _repr_markdown_(self) -> str:
        """Jupyter's display (:mod:`attngeom.lightning_alg.ideal.report_markdown`)."""
        from attngeom.lightning_alg.ideal.report_markdown import report_markdown
        return report_markdown(self)

    def to_m2(self) -> str:
        """A basis over Q of J_1 and of each J'_k = J_k cap Q[pivots]_k (k = 2..max_degree),
        one polynomial a line in Macaulay2 syntax: the text ``attngeom ideal --m2 FILE``
        writes (:mod:`attngeom.lightning_alg.ideal.m2_export`).  With J_1 times all
        monomials these span every J_k, k <= max_degree: a generating set of J up to that
        degree, not necessarily a minimal one (the table's ``minimal`` column counts the
        minimal generators).  Each line is accepted by ``attngeom verify-poly`` at the same
        d, t, a, d', col.  The bases are those the report was computed with when it kept
        them, else recomputed (same prime and seed: the same ideal)."""
        if self._m2 is None:
            from attngeom.lightning_alg.ideal.m2_export import m2_basis
            p = self.params
            engine = self._engine
            if engine is None:
                _, engine = compute_ideal(p["d"], p["t"], p["a"], p["dprime"], p["col"],
                                          p["max_degree"], prime=p["prime"], seed=p["seed"],
                                          keep=True)
            lines, _ = m2_basis(engine, p["max_degree"])
            self._m2 = "\n".join(lines) + ("\n" if lines else "")
        return self._m2

    @property
    def variety_dimension(self) -> int:
        return self.dimension["variety_dimension"]

    @property
    def failure_probability(self) -> float:
        parts = [t.failure_probability for t in self.degrees]
        parts.append(self.dimension["jacobian"]["failure_probability"])
        return min(1.0, sum(parts))

    def by_degree(self, name: str, nonzero: bool = False) -> dict[str, int]:
        """A column of the degree table by degree ("1", "2", ...): ``name`` is a DegreeTable
        field (``dim_J``, ``minimal_generators``, ...); ``nonzero`` keeps nonzero entries."""
        return {str(t.degree): getattr(t, name) for t in self.degrees
                if getattr(t, name) or not nonzero}

    def to_json(self) -> dict:
        """The report as ``attngeom ideal --json`` prints it."""
        return {
            "params": self.params,
            "ambient_dimension": self.ambient_dimension,
            "linear_span_dimension": self.linear_span_dimension,
            "variety_dimension": self.variety_dimension,
            "codimension": self.ambient_dimension - self.variety_dimension,
            "dimension": self.dimension,
            "dim_J": self.by_degree("dim_J"),
            "dim_J_mod_linear": self.by_degree("dim_J_mod_linear"),
            "hilbert_function": self.by_degree("hilbert_function"),
            "minimal_generators": self.by_degree("minimal_generators", nonzero=True),
            "degrees": [asdict(t) for t in self.degrees],
            "points": {"drawn": self.points_drawn, "fresh": self.fresh_points,
                       "prime": self.params["prime"]},
            "failure_probability": self.failure_probability,
            "family_attribution": self.attribution,
            "m2_export": self.export,
            "seconds": self.seconds,
            "notes": self.notes,
        }


def compute_ideal(d: int, t: int, a: int | None = None, dprime: int = 1, col: int = 1,
                  max_degree: int = DEFAULT_MAX_DEGREE, families=(),
                  prime: int | None = None, seed: int = 0,
                  context: CheckContext | None = None,
                  keep: bool = False, family_params=(),
                  attribution_budget: float | None = DEFAULT_BUDGET,
                  executor=None, variant=None) -> tuple[IdealReport, AttentionIdeal]:
    """The ideal table of ``attngeom ideal`` and the engine that produced it (whose
    ``bases`` hold every block's kernel basis when ``keep``, for the Macaulay2 export).

    ``families``: the family claims to attribute the generators to (claims with a
    ``members`` method; :func:`attngeom.lightning_alg.claims.family_claims` selects registered ones by
    name, "all" or "none"); none by default.  ``family_params``: ``--family-param``
    texts (ID:NAME=VALUE); ``attribution_budget``: the attribution's work as a multiple of
    the ideal's own (None: no limit), see :mod:`attngeom.lightning_alg.ideal.attribution`.
    ``executor``: where the blocks of each degree run (:mod:`attngeom.core.executor`; None: in
    this process); the report is the same wherever they run.  ``variant``: a
    :class:`~attngeom.lightning_alg.models.variant.Variant` (H heads, skip, causal mask;
    :mod:`attngeom.lightning_alg.ideal.variant_ideal`), None or plain for ADM's model.
    """
    start = time.perf_counter()
    a = d if a is None else a
    prime = DEFAULT_PRIME if prime is None else prime
    if max_degree < 1:
        raise BadInput(f"--max-degree must be at least 1; got {max_degree}")
    plain = variant is None or variant.plain
    if plain:
        ideal = AttentionIdeal(d, t, a, dprime, col, prime, seed, context, executor)
    else:
        from attngeom.lightning_alg.ideal.variant_ideal import VariantIdeal
        if keep:
            raise BadInput("--m2 is not available with --heads, --skip or --causal")
        ideal = VariantIdeal(d, t, a, dprime, col, prime, seed, context, executor, variant)
    ideal.check_size(max_degree)
    claims = list(families)
    values = {"d": d, "t": t, "a": a, "dprime": dprime, "col": col}
    overrides = parse_family_params(family_params, claims, values)
    AttributionBudget(0, attribution_budget)   # a bad factor stops before the long part
    tables = ideal.run(max_degree, keep, record=bool(claims))
    attribution = None
    if claims:
        attribution = attribute_families(ideal, tables, claims, max_degree, overrides,
                                         AttributionBudget(ideal.work, attribution_budget))
    dimension = dimension_report(d, t, a, dprime, col, prime, ideal.stream(STREAM_JACOBIAN))
    params = {"d": d, "t": t, "a": a, "dprime": dprime, "row": 1, "col": col,
              "max_degree": max_degree, "prime": prime, "seed": seed}
    notes = []
    if not plain:
        from attngeom.lightning_alg.ideal.variant_ideal import variant_report_parts
        dimension, notes = variant_report_parts(ideal, dimension["variety_dimension"],
                                                ideal.stream(STREAM_JACOBIAN))
        params.update(variant.describe())
    report = IdealReport(
        params, len(ideal.coords), len(ideal.variables), dimension, tables,
        max(table.max_points for table in tables), FRESH_POINTS, attribution,
        round(time.perf_counter() - start, 4), notes=notes, _engine=ideal if keep else None)
    if dprime > 1:
        report.notes.append("one output coordinate sees only row 1 of V, so its variety is the "
                            "same for every d'; HMK's neuromanifold is the whole output")
    return report, ideal

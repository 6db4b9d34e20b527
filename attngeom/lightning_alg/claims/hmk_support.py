"""Parameters and verdict helpers shared by the HMK claim modules (``hmk``, ``hmk_fibres``,
``beyond``, ``beyond_mixing``): :func:`dimension_verdict` judges a dimension formula (HMK
eq 7, 14, 16) against a measured Jacobian rank.

Exact checks run over F_p (p = 2^31 - 1) at random points; these helpers turn the failures
of an identity check, or a measured rank against an expected one, into verdicts with
re-checkable counterexamples.  No claims are registered here.
"""

from __future__ import annotations

import json

import numpy as np

from attngeom.core.claim import Claim, Param
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.core.errors import BadInput
from attngeom.kernels.jacobian import residues
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.core.verdict import Verdict, consistent, refuted, verified, with_erratum
from attngeom.lightning_alg.hmk.dimension import Architecture, entry_degree

PRIME = DEFAULT_PRIME
#: Random points per exact identity check (--samples overrides).
IDENTITY_POINTS = 4
#: Inputs X per point of an identity check.
INPUTS_PER_POINT = 3

D = Param("d", "dimension(s): one integer d, or d_0,...,d_l of a network (HMK Def 2)",
          kind="intlist")
A = Param("a", "attention dimension(s): one integer or a_1,...,a_l (default a_i = d_(i-1))",
          kind="intlist")
LAYERS = Param("layers", "number of layers l (default: from --d or --a)")
T = Param("t", "sequence length t")
DPRIME = Param("dprime", "output dimension d' (= d_l when --d is one integer)")
NETWORK_PARAMS = (LAYERS, D, A, T, DPRIME)
SINGLE_LAYER_PARAMS = (D, DPRIME, T)


class SingleLayerClaim(Claim):
    """A claim about one lightning layer (A, V) with d, d' and a required t; HMK's
    single-layer theorems assume t >= 2 (a claim with further hypotheses overrides
    ``hypothesis_violation``)."""

    params = SINGLE_LAYER_PARAMS

    def validate(self, params):
        single_layer_dims(params)
        if params["t"] is None:
            raise BadInput("--t is required")

    def hypothesis_violation(self, params):
        if params["t"] < 2:
            return f"{self.source} needs t >= 2; got t={params['t']}"
        return None


# -- helpers ----------------------------------------------------------------------------------
def single_layer_dims(params: dict, with_a: bool = False) -> tuple[int, int, int | None]:
    """(d, d', a) of a one-layer claim: --d is d (with --dprime, default d' = d) or d,d';
    --a one integer (default a = d)."""
    if params.get("layers") not in (None, 1):
        raise BadInput("this claim is about one layer: --layers must be 1")
    d, dprime, a = params.get("d"), params.get("dprime"), params.get("a")
    if not d or len(d) > 2:
        raise BadInput("give --d as one integer d or as d,d'")
    if len(d) == 2 and dprime is not None and dprime != d[1]:
        raise BadInput(f"--dprime {dprime} contradicts --d {d[0]},{d[1]}")
    d, dprime = d[0], (d[1] if len(d) == 2 else dprime or d[0])
    if not with_a:
        return d, dprime, None
    if a is not None and len(a) != 1:
        raise BadInput("a single layer takes one integer --a")
    return d, dprime, (a[0] if a else d)


def equal_values(x, y) -> bool:
    """Exact equality of two arrays of residues."""
    return bool(np.array_equal(np.asarray(x), np.asarray(y)))


def prime_inputs(sampler: Sampler, count: int, d: int, t: int):
    """``count`` random inputs X in F_p^{d x t}, as one batch of exact residues."""
    return residues(sampler.prime_field((count, d, t), PRIME), PRIME, batch_ndim=1)


def mod_p(array):
    """A weight matrix as exact residues (``@`` reduces mod p)."""
    return residues(array, PRIME)


def identity_verdict(name: str, failures: list, checked: int, degree: int, points: int,
                     summary: str, evidence: dict | None = None) -> Verdict:
    """``verified`` (Schwartz-Zippel bound for ``degree`` at ``points`` points) unless an
    identity failed; then ``refuted`` with the first failure (its 'why' and witness)."""
    if failures:
        return refuted(method="exact", summary=f"{name}: {failures[0].pop('why')}",
                       counterexample={"field": f"F_{PRIME}", **failures[0]},
                       evidence=evidence or {})
    return verified(checked=checked, degree=degree, prime=PRIME, points=points,
                    summary=f"{name}: {summary}", evidence=evidence or {})


def minor_degree(rank: int, degree: int) -> int:
    """Degree of a rank x rank minor of a matrix with entries of degree ``degree``."""
    return max(1, rank * degree)


def rank_verdict(name: str, measured: int, expected: int, degree: int, evidence: dict,
                 what: str, counterexample: dict) -> Verdict:
    """A measured exact rank (or kernel dimension) against the expected value."""
    evidence = {"measured_rank": measured, "expected": expected, **evidence}
    if measured != expected:
        return refuted(method="exact", evidence=evidence, counterexample={
            "field": f"F_{PRIME}", "measured_rank": measured, "expected": expected,
            **counterexample}, summary=f"{name}: {what} is {measured}, not {expected}")
    return verified(checked=1, degree=minor_degree(measured, degree), prime=PRIME, points=1,
                    evidence=evidence, summary=f"{name}: {what} = {measured}")


def require_hypotheses(claim_id: str, points: list[tuple[str, str | None]]) -> None:
    """Refuse a sweep whose own grid has a point outside the claim's hypotheses ((name, the
    violation or None) per point): such a point is no evidence for the claim, and a sweep
    that counted it would hold for a grid the statement is not about."""
    outside = [f"{name} ({why})" for name, why in points if why]
    if outside:
        raise AssertionError(f"{claim_id}: {len(outside)} of the sweep's {len(points)} points are "
                             f"outside its hypotheses: {'; '.join(outside[:3])}")


def formula_show(rows: list[tuple[str, str, int | None]], fmt: str) -> str:
    """(name, formula, value or None) rows in text, LaTeX (\\text names), M2 comments or JSON."""
    if fmt == "json":
        return json.dumps([{"name": n, "formula": f, "value": v} for n, f, v in rows], indent=1)
    value = lambda v: "" if v is None else f" = {v}"
    if fmt == "m2":
        return "\n".join(f"-- {n}: {f}{value(v)}" for n, f, v in rows)
    if fmt == "latex":
        return "\n".join(f"\\text{{{n}}}: \\ {f}{value(v)} \\\\" for n, f, v in rows)
    return "\n".join(f"{n}: {f}{value(v)}" for n, f, v in rows)


def dimension_verdict(name: str, formula: int, m, arch: Architecture, seed: int,
                       evidence: dict, corrected: int | None = None,
                       other_problems: tuple = (), texts: tuple[str, str] | None = None,
                       other_errata: tuple = ()) -> Verdict:
    """The verdict of 'formula = dimension' from a RankMeasurement, evidence at top level
    (the ``dimension`` command prints it).  ``texts``: the printed and the corrected
    formula; a refutation is a misprinted formula when the corrected value equals the
    measured dimension (certified or ample), else a false statement.  ``other_errata``
    belong to ``other_problems`` (eq (5), say)."""
    ev = {"formula_name": name, "formula": formula, **m.evidence(), **evidence}
    if corrected is not None:
        ev["corrected_formula"] = corrected
    problems = list(other_problems)
    if m.method == "numeric":
        m.numerical.require_clear(f"{name} at {arch.describe()}")
    # the measured rank is a lower bound on the dimension; it is the dimension only when it
    # meets the symmetry bound (certified) or stopped growing (ample).  Otherwise a formula
    # at or above it is neither shown nor refuted: a formula too small would pass.
    if m.rank <= formula and not m.certified and not m.ample:
        relation = "below" if m.rank < formula else "equal to"
        raise BadInput(f"inconclusive: rank {m.rank} at {m.samples} inputs ({relation} the "
                       f"formula, {formula}) is only a lower bound: it is below the symmetry "
                       f"bound ({m.upper_bound}) and not ample; take more --samples (or none: "
                       "exact ranks adapt)")
    if m.rank != formula:
        if m.rank > formula:
            how = "the measured rank is a lower bound, so the formula is too small"
        elif m.certified:
            how = "the rank equals P - dim(symmetry orbit), an upper bound: the dimension is exactly it"
        else:
            how = ("below the symmetry bound, at an ample sample (the rank stopped growing "
                   "under doubling, or >= 2P rows); a deficient random point is unlikely")
        problems.insert(0, {"formula": name, "value": formula, "measured": m.rank, "why": how})
    if problems:
        fix = f"; corrected formula gives {corrected}" if corrected is not None else ""
        first = problems[0]
        text = f"{first['formula']} gives {first['value']}, measured {first['measured']}"
        erratum = None
        if texts and corrected == m.rank and first["formula"] == name:
            erratum = Erratum(ErrorKind.MISPRINTED_FORMULA, f"HMK {name}", f"{name} = {texts[0]}",
                              texts[1], "the corrected formula equals the Jacobian rank, which is the "
                              "dimension (certified by the symmetry bound or ample)")
        elif other_errata:                   # the first problem's kind comes first
            erratum = Erratum(ErrorKind.FALSE_STATEMENT, f"HMK {first['formula']}",
                              f"{first['formula']} = {texts[0]}" if texts and first["formula"] == name
                              else f"{first['formula']} gives {first['value']}")
        verdict = refuted(method=m.method, evidence=ev, backend=m.backend, device=m.device,
                       erratum=erratum,
                       max_residual=None if m.numerical is None else m.numerical.dropped_max,
                       counterexample={"architecture": arch.describe(), "seed": seed,
                                       "problems": problems,
                                       **({"prime": m.prime} if m.prime else {})},
                       summary=f"{text} ({first['why']}){fix}")
        for extra in other_errata:
            with_erratum(verdict, extra)
        return verdict
    how = ("certified: = P - dim(symmetry orbit)" if m.certified
           else "not certified by the symmetry bound")
    summary = f"{name} = {formula} = measured rank ({how})"
    if m.method == "exact":
        return verified(checked=1, degree=minor_degree(m.rank, entry_degree(arch)),
                        prime=m.prime, points=1, evidence=ev, summary=summary)
    return consistent(checked=1, max_residual=m.numerical.dropped_max,
                      tolerance=m.numerical.tolerance, backend=m.backend, device=m.device,
                      evidence=ev, summary=summary + f"; smallest kept sigma/sigma_1 = "
                                                     f"{m.numerical.kept_min:.3g}")

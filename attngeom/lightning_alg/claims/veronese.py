"""Claims ``veronese`` (ADM Thm 30), ``cross-target`` (ADM Cor 32) and ``block-veronese``
(ADM Cor 33 and Remark 34): 2 x 2 minors of rank-one matrices of the Veronese
coordinates D_alpha(y) = det M_alpha(y).

Each claim checks, by evaluating the determinants (never expanding them):

* every minor vanishes on mu(W) -- ``proved`` by exact evaluation over QQ[weights] at
  generic weights for small cases, ``verified`` at random points over F_p, ``consistent``
  in float64;
* no minor is the zero polynomial (each is nonzero at a random point off the variety);
* the number of minors generated equals its closed-form count.

``veronese`` also checks Thm 30's formula D_alpha(mu(W)) = v^alpha det(A_{K,L}) and,
where the printed indices apply, ADM Examples 29, 31 and 36 exactly as printed.
"""

from __future__ import annotations

import json
from math import comb, factorial

import numpy as np
import sympy
from flint import fmpq

from attngeom.core.claim import METHODS, Claim, Param
from attngeom.core.errors import BadInput
from attngeom.kernels.polyeval import compile_polynomials
from attngeom.core.verdict import Verdict, combine, proved, refuted
from attngeom.lightning_alg.claims.base import LIGHTNING_PARAMS, coordinates_of, validate_lightning
from attngeom.lightning_alg.claims.linear import exact_rank
from attngeom.lightning_alg.invariant import Invariant, format_polynomial, invariant_json
from attngeom.lightning_alg.invariants import veronese as ver
from attngeom.lightning_alg.invariants.structured import (
    ObjectArithmetic, check_nontrivial, check_vanishing, det_leibniz,
    symbolic_point)
from attngeom.lightning_alg.parametrization import uses_query_key

R = Param("r", "Veronese degree r, 2 <= r <= min(a, d) (default: every such r)")
CONTEXT_INDICES = Param("context_indices", "ordered context indices K = k_1,..,k_r "
                        "(default: every r-subset of [d])", kind="intlist")
TARGET_INDICES = Param("target_indices", "ordered target indices L = l_1,..,l_r "
                       "(default: every r-subset of [d])", kind="intlist")
SPLIT = Param("split", "s of ADM Remark 34: rows of degree s, columns of degree r - s "
              "(1 = ADM Cor 33)", default=1)

#: Estimated ring operations (sum over minors of (r!)^2 (a^r if a < d)^2) up to which
#: ``--method auto`` expands symbolically, and beyond which symbolic is refused.
AUTO_SYMBOLIC_COST = 100_000
MAX_SYMBOLIC_COST = 3_000_000
#: Terms ``show`` will expand in one call (a minor of degree 2r has up to 2 (r!)^2), and
#: terms ``members`` will expand for other tools.
MAX_SHOW_TERMS = 100_000
MAX_MEMBER_TERMS = 400_000


def require_expandable(family, count: int, limit: int, hint: str) -> None:
    """BadInput when expanding the first ``count`` members would exceed ``limit`` terms."""
    terms = sum(family.printable_terms(k) for k in range(count)) if count <= 100_000 else limit + 1
    if terms > limit:
        raise BadInput(f"expanding {count:,} members of degree up to {family.degree} gives about "
                       f"{terms:,} terms (limit {limit:,}); {hint}")


class VeroneseFamilyClaim(Claim):
    """Common part of the three constructions: parameters, hypotheses, checks, show."""

    params = LIGHTNING_PARAMS + (R, CONTEXT_INDICES)
    methods = METHODS
    index_params = ("context_indices",)

    # -- parameters and hypotheses -----------------------------------------------------
    def validate(self, params):
        validate_lightning(params)
        lengths = {len(params[n]) for n in self.index_params if params.get(n)}
        if params.get("r"):
            lengths.add(params["r"])
        if len(lengths) > 1:
            raise BadInput("--r, --context-indices and --target-indices must agree on r; got "
                           f"lengths {sorted(lengths)}")
        for name in self.index_params:
            if params.get(name):
                ver.require_in_range(params[name], "--" + name.replace("_", "-"), params["d"])

    def requested_r(self, params) -> int | None:
        for name in self.index_params:
            if params.get(name):
                return len(params[name])
        return params.get("r")

    def admits(self, params, r: int) -> str | None:
        """The construction's own hypothesis on r beyond Thm 30's (None if it holds)."""
        return None

    def degrees(self, params) -> list[int]:
        r = self.requested_r(params)
        if r is not None:
            return [r]
        top = min(params["a"], params["d"])
        return [r for r in range(2, top + 1) if self.admits(params, r) is None]

    def hypothesis_violation(self, params):
        d, a, t = params["d"], params["a"], params["t"]
        if t < 2:
            return f"{ver.THM30} needs t > 1 (a context column n != j); got t={t}"
        for name in self.index_params:
            values = params.get(name)
            if values and len(set(values)) < len(values):
                what = "context" if name == "context_indices" else "target"
                return f"{ver.THM30} needs r distinct {what} indices; got {tuple(values)}"
        r = self.requested_r(params)
        if r is not None:
            if not 2 <= r <= min(a, d):
                return f"{ver.THM30} needs 2 <= r <= min(a, d); got r={r}, a={a}, d={d}"
            return self.admits(params, r)
        if min(a, d) < 2:
            return f"{ver.THM30} needs 2 <= r <= min(a, d), so min(a, d) >= 2; got a={a}, d={d}"
        if not self.degrees(params):
            return self.admits(params, min(a, d))
        return None

    # -- the family ----------------------------------------------------------------------
    def blocks(self, params) -> list[ver.RankOneBlock]:
        raise NotImplementedError

    def expected_count(self, params) -> int:
        raise NotImplementedError

    def family(self, params, coords) -> ver.VeroneseMinors:
        return ver.VeroneseMinors(self.family_name, coords, params["context"], self.blocks(params))

    def symbolic_cost(self, params, family) -> int:
        d, a = params["d"], params["a"]
        per_weight = a if uses_query_key(d, a) else 1
        return sum(b.minor_count * (factorial(len(b.K)) * per_weight ** len(b.K)) ** 2
                   for b in family.blocks)

    def auto_method(self, params):
        if self.hypothesis_violation(params):
            return "exact"
        coords = coordinates_of(params)
        cost = self.symbolic_cost(params, self.family(params, coords))
        return "symbolic" if cost <= AUTO_SYMBOLIC_COST else "exact"

    # -- checks --------------------------------------------------------------------------
    def side_checks(self, params, coords, family, method, context) -> dict[str, Verdict]:
        """Checks beyond vanishing, nontriviality and the count, by part name."""
        return {}

    def counts(self, params, family) -> list[tuple[str, int, int, str]]:
        """(what, generated, closed form, formula text) for each count of the construction."""
        return [("minors", family.size, self.expected_count(params), self.count_formula)]

    def count_check(self, params, family) -> Verdict:
        rows = self.counts(params, family)
        evidence = {what: {"generated": got, "formula": want, "formula_text": text}
                    for what, got, want, text in rows}
        evidence.update(blocks=len(family.blocks), degrees=self.degrees(params))
        wrong = [(what, got, want) for what, got, want, _ in rows if got != want]
        if wrong:
            what, got, want = wrong[0]
            return refuted(method="exact", evidence=evidence, summary=(
                f"count: {got} {what} generated, the formula gives {want}"),
                counterexample={"count": what, "generated": got, "formula": want})
        return proved(method="exact", checked=len(rows), evidence=evidence, summary="count: " + (
            ", ".join(f"{got} {what} = {text}" for what, got, _, text in rows)))

    def check(self, method, params, context) -> Verdict:
        coords = coordinates_of(params)
        family = self.family(params, coords)
        if method == "symbolic" and self.symbolic_cost(params, family) > MAX_SYMBOLIC_COST:
            raise BadInput(f"symbolic evaluation of {family.size:,} minors of degree up to "
                           f"{family.degree} is too large; use --method exact")
        return combine({"vanishing": check_vanishing(family, coords, params["a"], method, context),
                        "nontrivial": check_nontrivial(family, coords, context),
                        "count": self.count_check(params, family),
                        **self.side_checks(params, coords, family, method, context)})


    # -- expanded polynomials ------------------------------------------------------------
    def members(self, params, coords) -> list[Invariant]:
        """Every minor expanded, for tools that need the polynomials (compiling, ideals)."""
        family = self.family(params, coords)
        require_expandable(family, family.size, MAX_MEMBER_TERMS, "choose --r or smaller d")
        return [Invariant(poly, self.family_name, self.source, family.describe(k))
                for k, poly in enumerate(family.expand(coords))]

    def member_family(self, params, coords, max_degree: int) -> ver.VeroneseMinors | None:
        """The minors of degree 2r <= max_degree, for ``attngeom ideal``'s attribution: every
        admissible r of ``params`` that fits the table (all of them at the defaults), so the
        higher r are never built; None when none fits."""
        fitting = [r for r in self.degrees(params) if 2 * r <= max_degree]
        if not fitting:
            return None
        if self.requested_r(params) is not None:
            return self.family(params, coords)
        return ver.VeroneseMinors(self.family_name, coords, params["context"],
                                  [b for r in fitting for b in self.blocks({**params, "r": r})])

    # -- show ----------------------------------------------------------------------------
    def show(self, params, fmt="text", limit=None):
        coords = coordinates_of(params)
        family = self.family(params, coords)
        shown = min(family.size, limit or family.size)
        require_expandable(family, shown, MAX_SHOW_TERMS,
                           "use --limit, --r or --context-indices")
        singles = family.restrict_many(range(shown))
        members = [(Invariant(poly, self.family_name, self.source, family.describe(k)),
                    singles.blocks[k], family.block_of(k))
                   for k, poly in enumerate(singles.expand(coords))]
        if fmt == "m2":
            return "\n".join(format_polynomial(m.poly, coords, "m2") for m, _, _ in members)
        expanded = singles.coordinates.expand()
        if fmt == "json":
            return json.dumps(self._json(params, coords, family, members, expanded), indent=1)
        return "\n".join(self._structured(params, coords, family, members, expanded, fmt))

    def _json(self, params, coords, family, members, expanded) -> dict:
        return {"claim": self.id, "source": self.source, "params": params,
                "counts": self.count_check(params, family).evidence,
                "veronese_coordinates": [coordinate_json(key, family.coordinates, coords, poly)
                                         for key, poly in expanded.items()],
                "invariants": [invariant_json(m, coords) for m, _, _ in members]}

    def _structured(self, params, coords, family, members, expanded, fmt) -> list[str]:
        comment, end = ("% ", " \\\\") if fmt == "latex" else ("# ", "")
        out = [f"{comment}{self.source}: {self.statement}",
               f"{comment}output (i,j) = ({coords.row},{coords.col}), context column n = "
               f"{params['context']}, r in {self.degrees(params)}; {family.size} minors "
               f"({self.count_formula})"]
        out += self.preamble(params, coords, fmt)
        current, seen = None, set()
        for member, single, block in members:
            with_L = block.source != ver.THM30
            if block is not current:
                current = block
                out.append(f"{comment}{block_title(block)}")
            for key in (e for line in single.entries for e in line):
                if key not in seen:
                    seen.add(key)
                    out += [line + end for line in coordinate_lines(
                        key, family.coordinates, coords, expanded[key], fmt, with_L)]
            out.append(minor_line(member, single, coords, fmt, with_L) + end)
        return out

    def preamble(self, params, coords, fmt) -> list[str]:
        return []


# -- rendering ------------------------------------------------------------------------

def _label(label, coords, fmt) -> str:
    return label.text(coords.with_row) if fmt != "m2" else label.m2(coords.with_row)


def matrix_text(rows: list[list[str]], fmt: str) -> str:
    """[a, b; c, d] in text, a pmatrix in LaTeX."""
    if fmt == "latex":
        return "\\begin{pmatrix}" + " \\\\ ".join(" & ".join(r) for r in rows) + "\\end{pmatrix}"
    return "[" + "; ".join(", ".join(r) for r in rows) + "]"


def entry_text(weight: int, label, coords, fmt: str) -> str:
    name = _label(label, coords, fmt)
    if weight == 1:
        return name
    return f"{weight}\\,{name}" if fmt == "latex" else f"{weight} {name}"


def block_title(block: ver.RankOneBlock) -> str:
    K = ",".join(map(str, block.K))
    if block.source == ver.THM30:
        L = ",".join(map(str, block.entries[0][0].L))
        return f"{block.source} catalecticant: r = {len(block.K)}, K = ({K}), L = ({L})"
    Ls = sorted({e.L for line in block.entries for e in line})
    return (f"{block.source}: r = {len(block.K)}, K = ({K}), {len(block.row_keys)} x "
            f"{len(block.col_keys)} matrix over L in {[tuple(L) for L in Ls]}")


def coordinate_lines(key: ver.VeroneseCoordinate, coordinates, coords, poly, fmt,
                     with_L: bool) -> list[str]:
    """M_alpha(y) (with f), and D_alpha(y) = det M_alpha(y) = ``poly`` expanded, with its
    value on the variety (ADM Thm 30)."""
    matrix = coordinates.matrix(key)
    name = key.name(with_L, fmt)
    M = "M" + name[1:]
    grid = matrix_text([[entry_text(w, lab, coords, fmt) for w, lab in line] for line in matrix], fmt)
    expanded = format_polynomial(poly, coords, fmt)
    v_alpha = ver.monomial_text(key.alpha, key.K, fmt)
    f = "(" + ",".join(map(str, key.f)) + ")"
    if fmt == "latex":
        return [f"{M}(y) = {grid}, \\quad f = {f}",
                f"{name}(y) = \\det {M}(y) = {expanded} = {v_alpha} \\det A_{{K,L}} "
                "\\text{ on the variety}"]
    return [f"{M}(y) = {grid}   f = {f}",
            f"{name}(y) = det {M}(y) = {expanded}   (= {v_alpha} det A_(K,L) on the variety)"]


def coordinate_json(key, coordinates, coords, poly) -> dict:
    return {"name": key.name(with_L=True), "K": list(key.K), "L": list(key.L),
            "alpha": list(key.alpha), "f": list(key.f),
            "matrix": [[{"factor": w, "label": lab.m2(coords.with_row)} for w, lab in line]
                       for line in coordinates.matrix(key)],
            "m2": format_polynomial(poly, coords, "m2"),
            "on_variety": f"{ver.monomial_text(key.alpha, key.K)}*det(A_(K,L))"}


def minor_line(member: Invariant, single: ver.RankOneBlock, coords, fmt: str,
               with_L: bool) -> str:
    """One minor: its D-structure and its expansion."""
    expanded = format_polynomial(member.poly, coords, fmt)
    if fmt != "latex":
        return f"{member.indices['minor']} = {expanded}"
    names = [[key.name(with_L, "latex") + "(y)" for key in line] for line in single.entries]
    return f"\\det{matrix_text(names, 'latex')} = {expanded}"


# -- the three claims -----------------------------------------------------------------

class VeroneseClaim(VeroneseFamilyClaim):
    """ADM Thm 30: for 2 <= r <= min(a, d), context indices K and target indices L, the
    catalecticant of the Veronese coordinates D_alpha(y) = det M_alpha(y) has rank <= 1 on
    the variety, so its 2 x 2 minors (degree 2r) lie in J; and D_alpha(mu(W)) =
    v^alpha det(A_{K,L}).

    Checked: the minors vanish (exact evaluation of the determinants), are nonzero
    polynomials, and number sum_r C(d,r)^2 C(r,2) C(C(2r-2,r-1),2); the formula for
    D_alpha(mu(W)) holds for every (K, L, alpha); Example 29/31's M_alpha, f, D_alpha and
    quartic q = 4 d_1 d_2 - d_3^2, and Example 36's M_(1,2,0), f, D_(1,2,0)(mu(W)), C_3 and
    its printed minor, all exactly as printed.
    """

    id = "veronese"
    source = ver.THM30
    statement = ("The 2x2 minors of the catalecticant of D_alpha(y) = det M_alpha(y) vanish on "
                 "the variety, and D_alpha(mu(W)) = v^alpha det(A_{K,L}).")
    params = VeroneseFamilyClaim.params + (TARGET_INDICES,)
    index_params = ("context_indices", "target_indices")
    examples = ({"d": 2, "t": 2, "a": 2},                               # ADM Example 29 / 31
                {"d": 2, "t": 2, "a": 2, "target_indices": (2, 1)},     # Example 31's L
                {"d": 3, "t": 2, "a": 2}, {"d": 3, "t": 2, "a": 3},     # ADM Example 36
                {"d": 4, "t": 3, "a": 4, "method": "exact"},
                {"d": 6, "t": 2, "a": 6, "method": "exact"})
    family_name = "catalecticant 2x2 minors (ADM Thm 30)"
    count_formula = "sum_r C(d,r)^2 C(r,2) C(C(2r-2,r-1),2)"

    def blocks(self, params):
        return ver.veronese_blocks(params["d"], self.degrees(params),
                                   params.get("context_indices"), params.get("target_indices"))

    def expected_count(self, params):
        return ver.veronese_minor_count(params["d"], self.degrees(params),
                                        bool(params.get("context_indices")),
                                        bool(params.get("target_indices")))

    def counts(self, params, family):
        expected = ver.coordinate_count(params["d"], self.degrees(params),
                                        bool(params.get("context_indices")),
                                        bool(params.get("target_indices")))
        return super().counts(params, family) + [
            ("Veronese coordinates D_alpha", len(family.coordinates), expected,
             "sum_r C(d,r)^2 C(2r-1,r)")]

    def side_checks(self, params, coords, family, method, context):
        identity = ver.VeroneseIdentity(family.coordinates)
        checks = {"thm30-formula": check_vanishing(identity, coords, params["a"], method, context)}
        degrees = self.degrees(params)
        if 2 in degrees and coords.col == 1 and params["context"] == 2:
            checks["example31"] = example31_check(coords, params["a"])
        if 3 in degrees and params["d"] >= 3:
            checks["example36"] = example36_check(coords, params["context"], params["a"])
        return checks

    def preamble(self, params, coords, fmt):
        if coords.d != 2 or coords.col != 1 or params["context"] != 2:
            return []
        names = [matrix_text([[_label(lab, coords, fmt) for lab in line] for line in matrix], fmt)
                 for matrix in ver.example29_matrices(coords)]
        q = format_polynomial(ver.example29_quartic(coords), coords, fmt)
        if fmt == "latex":
            return (["% ADM Example 29, eq (5), as printed"]
                    + [f"d_{k}(y) = \\det{m} \\\\" for k, m in enumerate(names, 1)]
                    + [f"q(y) = 4\\,d_1(y)\\,d_2(y) - d_3(y)^{{2}} = {q} \\\\"])
        return (["# ADM Example 29, eq (5), as printed"]
                + [f"d_{k}(y) = det {m}" for k, m in enumerate(names, 1)]
                + [f"q(y) = 4 d_1(y) d_2(y) - d_3(y)^2 = {q}"])


class CrossTargetClaim(VeroneseFamilyClaim):
    """ADM Cor 32: for K and two target choices L != L', the matrix with rows
    (D_{alpha,L}, D_{alpha,L'}) over all alpha of degree r has rank <= 1 on the variety,
    so its 2 x 2 minors (degree 2r) lie in J.

    Target choices are the sorted r-subsets of [d] (two orderings of one subset give
    proportional columns and only zero minors), so the corollary needs C(d, r) >= 2,
    i.e. r < d.  Count: sum_r C(d,r) C(C(d,r),2) C(C(2r-1,r),2).
    """

    id = "cross-target"
    source = ver.COR32
    statement = ("The 2x2 minors of (D_{alpha,L}, D_{alpha,L'})_alpha for two target choices "
                 "L != L' vanish on the attention variety.")
    family_name = "cross-target 2x2 minors (ADM Cor 32)"
    examples = ({"d": 3, "t": 2, "a": 2}, {"d": 3, "t": 2, "a": 3},     # ADM Example 36
                {"d": 4, "t": 2, "a": 4, "r": 2, "method": "exact"},
                {"d": 5, "t": 3, "a": 5, "method": "exact"})
    count_formula = "sum_r C(d,r) C(C(d,r),2) C(C(2r-1,r),2)"

    def admits(self, params, r):
        if comb(params["d"], r) < 2:
            return (f"{ver.COR32} needs two distinct target choices L != L' (C(d, r) >= 2, so "
                    f"r < d); got r={r}, d={params['d']}")
        return None

    def blocks(self, params):
        return ver.cross_target_blocks(params["d"], self.degrees(params),
                                       params.get("context_indices"))

    def expected_count(self, params):
        return ver.cross_target_minor_count(params["d"], self.degrees(params),
                                            bool(params.get("context_indices")))


class BlockVeroneseClaim(VeroneseFamilyClaim):
    """ADM Cor 33 (s = 1) and Remark 34 (1 <= s <= r - 1): for context indices K, the
    matrix C_K(y) with rows beta (|beta| = s) and columns (gamma, L) (|gamma| = r - s, L
    over the sorted r-subsets of [d]), entry D_{beta+gamma,L}(y), has rank <= 1 on the
    variety, so its 2 x 2 minors (degree 2r) lie in J.

    Count: sum_{r > s} C(d,r) C(C(r+s-1,s),2) C(C(2r-s-1,r-s) C(d,r),2).
    """

    id = "block-veronese"
    source = f"{ver.COR33}, {ver.REMARK34}"
    statement = ("The 2x2 minors of C_K(y) = (D_{beta+gamma,L}(y)) with rows |beta| = s and "
                 "columns (gamma, L) vanish on the attention variety.")
    params = VeroneseFamilyClaim.params + (SPLIT,)
    family_name = "block Veronese 2x2 minors (ADM Cor 33 / Remark 34)"
    examples = ({"d": 3, "t": 2, "a": 2}, {"d": 3, "t": 2, "a": 3},     # ADM Example 36
                {"d": 4, "t": 2, "a": 4, "split": 2, "method": "exact"},  # ADM Remark 34
                {"d": 5, "t": 3, "a": 5, "method": "exact"})
    count_formula = "sum_{r>s} C(d,r) C(C(r+s-1,s),2) C(C(2r-s-1,r-s) C(d,r),2)"

    def admits(self, params, r):
        s = params["split"]
        if not 1 <= s <= r - 1:
            return f"{ver.REMARK34} needs 1 <= s <= r - 1; got s={s}, r={r}"
        return None

    def blocks(self, params):
        return ver.block_veronese_blocks(params["d"], self.degrees(params), params["split"],
                                         params.get("context_indices"))

    def expected_count(self, params):
        return ver.block_minor_count(params["d"], self.degrees(params), params["split"],
                                     bool(params.get("context_indices")))

    def side_checks(self, params, coords, family, method, context):
        if (params["d"] == 3 and 2 in self.degrees(params) and params["split"] == 1
                and not params.get("context_indices")):
            return {"example36-span": example36_span_check(coords, params["context"])}
        return {}


# -- ADM Examples 29, 31 and 36 -------------------------------------------------------

def _compare(what: str, constructed, printed, mismatches: list) -> None:
    if constructed != printed:
        mismatches.append({"object": what, "constructed": str(constructed), "printed": str(printed)})


def _at_mu(polys, coords, a):
    """Polynomials in y evaluated at the symbolic mu(W) (ring elements), with (A, V)."""
    point = symbolic_point(coords, a)
    compiled = compile_polynomials(polys, coords.symbol_index)
    return ObjectArithmetic().polynomials(compiled, point.y[:, :-1])[0], point


def _example_verdict(name: str, checked: int, mismatches: list) -> Verdict:
    if mismatches:
        return refuted(method="symbolic", summary=f"{name}: {mismatches[0]['object']} differs "
                       "from the construction", counterexample={"mismatches": mismatches})
    return proved(checked=checked, summary=f"{name}: all {checked} printed objects agree with "
                  "the construction", evidence={"example": name})


def example31_check(coords, a: int) -> Verdict:
    """ADM Examples 29 and 31 (j = 1, n = 2, K = (1,2), L = (2,1)): the printed f and
    M_alpha(y); D_(2,0) = 2 d_1, D_(0,2) = 2 d_2, D_(1,1) = d_3; det of the catalecticant
    = q = 4 d_1 d_2 - d_3^2 (also for the canonical L = (1,2)); and the printed values
    d_1(mu(W)) = -1/2 v_1^2 det A, d_2 = -1/2 v_2^2 det A, d_3 = -v_1 v_2 det A, with
    det A the leading 2 x 2 minor (Example 29 has d = 2)."""
    mismatches = []
    minors = ver.example29_minors(coords)
    q = ver.example29_quartic(coords)
    keys = []
    for alpha, (f, printed) in ver.EXAMPLE31.items():
        key = ver.VeroneseCoordinate(ver.EXAMPLE31_K, ver.EXAMPLE31_L, alpha)
        keys.append(key)
        _compare(f"f for alpha={alpha}", key.f, f, mismatches)
        _compare(f"M_{alpha}(y)", key.matrix(coords.row, coords.col, 2),
                 ver.labelled_matrix(printed, coords), mismatches)
        factor, which = ver.EXAMPLE31_D[alpha]
        D = ver.VeroneseCoordinates(coords, 2, [key]).expand()[key]
        _compare(f"D_{alpha}(y)", sympy.expand(D), sympy.expand(factor * minors[which]),
                 mismatches)
    for L in (ver.EXAMPLE31_L, (1, 2)):
        block = ver.catalecticant_block(ver.EXAMPLE31_K, L, 2)
        family = ver.VeroneseMinors("Example 31", coords, 2, [block])
        _compare(f"det of the catalecticant for L={L}", sympy.expand(family.expand(coords)[0]),
                 q, mismatches)
    values, point = _at_mu(list(minors), coords, a)
    d = coords.d
    A, V = point.A[0], point.V[0]
    v = [V[(coords.row - 1) * d], V[(coords.row - 1) * d + 1]]
    det_A = A[0] * A[d + 1] - A[1] * A[d]
    for k, (value, claimed) in enumerate(zip(values, ver.example29_minor_values(v, det_A))):
        _compare(f"d_{k + 1}(mu(W))", value, claimed, mismatches)
    return _example_verdict("ADM Examples 29/31", 3 * 3 + 2 + 3, mismatches)


def example36_check(coords, context: int, a: int) -> Verdict:
    """ADM Example 36 (K = L = (1,2,3)): the printed f and M_(1,2,0)(y) for context n and
    target j, D_(1,2,0)(mu(W)) = v_1 v_2^2 det(A_{K,L}), the layout of C_3(y), and that
    its printed minor D_(3,0,0) D_(1,2,0) - D_(2,1,0)^2 is one of the generated minors."""
    mismatches = []
    K = (1, 2, 3)
    key = ver.VeroneseCoordinate(K, K, (1, 2, 0))
    f, printed = ver.example36_matrix(context, coords.col)
    _compare("f for alpha=(1,2,0)", key.f, f, mismatches)
    _compare("M_(1,2,0)(y)", key.matrix(coords.row, coords.col, context),
             ver.labelled_matrix(printed, coords), mismatches)
    point = symbolic_point(coords, a)
    value = ver.VeroneseCoordinates(coords, context, [key]).evaluate(point, ObjectArithmetic())[0, 0]
    d, i = coords.d, coords.row - 1
    A = np.array([[point.A[0, (k - 1) * d + l - 1] for l in K] for k in K], dtype=object)
    v = [point.V[0, i * d + k - 1] for k in K]
    _compare("D_(1,2,0)(mu(W))", value, v[0] * v[1] ** 2 * det_leibniz(A), mismatches)
    block = ver.catalecticant_block(K, K, 3)
    _compare("C_3(y)", [[e.alpha for e in line] for line in block.entries], ver.EXAMPLE36_C3,
             mismatches)
    family = ver.VeroneseMinors("Example 36", coords, context, [block])
    listed = [family.describe(k)["minor"] for k in range(family.size)]
    _compare("D_(3,0,0) D_(1,2,0) - D_(2,1,0)^2 among the minors",
             "D_(3,0,0)*D_(1,2,0) - D_(2,1,0)*D_(2,1,0)" in listed, True, mismatches)
    return _example_verdict("ADM Example 36", 5, mismatches)


def example36_span_check(coords, context: int) -> Verdict:
    """ADM Example 36 (d = 3, r = 2): "the Veronese-type constructions from Theorem 30 and
    Corollaries 32 and 33 together produce 45 quartics" -- read as the dimension of the
    span of the 9 + 27 + 45 quartics, computed exactly over Q (FLINT) from their
    expansions."""
    blocks = (ver.veronese_blocks(3, [2]) + ver.cross_target_blocks(3, [2])
              + ver.block_veronese_blocks(3, [2], 1))
    polys = ver.VeroneseMinors("Example 36", coords, context, blocks).expand(coords)
    compiled = compile_polynomials(polys, coords.symbol_index)
    rows = [[fmpq(0)] * compiled.n_monomials for _ in range(compiled.n_polynomials)]
    for m, j, c in compiled.entries:
        rows[j][m] += fmpq(c.numerator, c.denominator)
    rank = exact_rank(rows)
    evidence = {"quartics": len(polys), "rank_over_Q": rank, "printed": 45}
    if rank != 45:
        return refuted(method="symbolic", evidence=evidence, summary=(
            f"ADM Example 36: the Thm 30 / Cor 32 / Cor 33 quartics span dimension {rank}, "
            "printed 45"), counterexample={"rank_over_Q": rank, "printed": 45})
    return proved(checked=len(polys), evidence=evidence, summary=(
        f"ADM Example 36: the {len(polys)} quartics of Thm 30, Cor 32 and Cor 33 (r = 2) span "
        "dimension 45 over Q, as printed"))


CLAIMS = [VeroneseClaim(), CrossTargetClaim(), BlockVeroneseClaim()]

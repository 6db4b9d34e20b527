"""ADM §5.4: slice quadrics (Def 38), the common factor (Prop 39), Sylvester resultants
(Def 37, Thm 40), Examples 41 and 42, counts, and mutations."""

from itertools import combinations_with_replacement
from math import comb

import numpy as np
import pytest
import sympy

from attngeom.core.certificates import split_example
from attngeom.core.claim import CheckContext
from attngeom.kernels.polyeval import compile_polynomials
from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg.claims import resultant as claim_module
from attngeom.lightning_alg.claims.base import coordinates_of
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants import grassmannian as gr
from attngeom.lightning_alg.invariants import resultant as res
from attngeom.lightning_alg.invariants import resultant_lines as rl
from attngeom.lightning_alg.invariants import structured
from attngeom.lightning_alg.labels import Label
from attngeom.lightning_alg.polynomial_io import parse_polynomial

RESULTANT = REGISTRY.get("resultant")
P = DEFAULT_PRIME

#: ADM Example 41, typed from the paper with a_s = y_((1,2),(1,2),(s,1)),
#: b_s = y_((1,2),(2,2),(s,1)), c_s = y_((2,2),(2,2),(s,1)).
A1, A2 = "y_((1,2),(1,2),(1,1))", "y_((1,2),(1,2),(2,1))"
B1, B2 = "y_((1,2),(2,2),(1,1))", "y_((1,2),(2,2),(2,1))"
C1, C2 = "y_((2,2),(2,2),(1,1))", "y_((2,2),(2,2),(2,1))"
EXAMPLE_41 = (f"{A1}^2*{C2}^2 - 2*{A1}*{A2}*{C1}*{C2} - 4*{A1}*{B1}*{B2}*{C2} + 4*{A1}*{B2}^2*{C1} "
              f"+ {A2}^2*{C1}^2 + 4*{A2}*{B1}^2*{C2} - 4*{A2}*{B1}*{B2}*{C1}")


def _part(verdict, name):
    return verdict.evidence["parts"][name]


def test_example_41_quartic_exactly_as_printed(run_cli):
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--format", "m2", "--line", "example41")
    coords = CoordinateSystem(3, 2)
    first = parse_polynomial(out.splitlines()[0], coords)
    assert code == 0 and sympy.expand(first - parse_polynomial(EXAMPLE_41, coords)) == 0
    assert len(out.splitlines()) == 3 + 12


def test_show_text_has_quadrics_factors_and_forms(run_cli):
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--line", "1,1,0:0,1,2",
                           "--limit", 2)
    assert code == 0
    assert ("q_1(y; z) = y_{(1,2),(1,2),(1,1)} z_1^2 + 2 y_{(1,2),(2,2),(1,1)} z_1 z_2 + "
            "2 y_{(1,2),(3,2),(1,1)} z_1 z_3 + y_{(2,2),(2,2),(1,1)} z_2^2") in out
    assert "l(z) = v_1 z_1 + v_2 z_2 + v_3 z_3" in out
    assert "m_2(z) = a_12 z_1 + a_22 z_2 + a_32 z_3" in out
    # xi = (1,1,0): A_1 = y_11 + 2 y_12 + y_22 (omega(1,2) = 2)
    assert ("A_1 = y_{(1,2),(1,2),(1,1)} + 2 y_{(1,2),(2,2),(1,1)} + y_{(2,2),(2,2),(1,1)}") in out
    assert "Res(q_1^L, q_2^L) = " in out


def test_show_latex_and_json(run_cli):
    import json
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--format", "latex", "--line", "example41")
    assert code == 0 and "l(z) = v_{1} z_{1} + v_{2} z_{2} + v_{3} z_{3} \\\\" in out
    assert "[u_1^2 w_2 w_3] Res(Q_u^{L}, Q_w^{L}) = " in out
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--format", "json", "--line", "example41")
    data = json.loads(out)
    assert data["restricted"][0] == {"s": 1, "A": A1, "B": f"2*{B1}", "C": C1}
    assert data["common_factor"]["m"][0] == "a_11 z_1 + a_21 z_2 + a_31 z_3"
    assert len(data["invariants"]) == 15


@pytest.mark.parametrize("a", [1, 2, 3])
def test_proved_for_d3_t2(a):
    """On the default line (dense forms) ``auto`` proves at a = 1, 3 and evaluates over F_p
    at a = 2, where the symbolic cost is above AUTO_SYMBOLIC_COST; symbolic proves all three."""
    v = RESULTANT.verify({"d": 3, "t": 2, "a": a}, "symbolic")
    assert v.status is Status.PROVED and v.method == "symbolic"
    assert RESULTANT.verify({"d": 3, "t": 2, "a": a}).method == ("exact" if a == 2 else "symbolic")
    assert _part(v, "example41")["status"] == "proved"
    assert _part(v, "prop39-identity")["status"] == "proved"


def test_example_42_six_mixed_coefficients_and_rank_6():
    v = RESULTANT.verify({"d": 3, "t": 2, "line": "1,2,0:0,1,-1"}, "exact")
    part = _part(v, "example42")
    assert part["status"] == "proved" and part["rank_of_the_nine"] == 6
    assert part["distinct_mixed_coefficients"] == 3


@pytest.mark.parametrize("d,t,a,line", [(6, 4, 6, None), (6, 3, 2, "1,2,0,-1,3,1:0,0,1,1,-2,5"),
                                        (5, 2, 5, "1,1,1,1,1:1,2,3,4,5"), (4, 3, 1, None)])
def test_exact_verification(d, t, a, line):
    v = RESULTANT.verify({"d": d, "t": t, "a": a, "line": line}, "exact")
    assert v.status is Status.VERIFIED and v.failure_probability < 1e-40


@pytest.mark.parametrize("backend,d,line", [("numpy", 4, "1,0,2,1:0,1,1,-1"),
                                            ("torch", 4, "1,0,2,1:0,1,1,-1"), ("jax", 3, None)])
def test_numeric_consistent(backend, d, line):
    v = RESULTANT.verify({"d": d, "t": 2, "line": line}, "numeric", CheckContext(backend=backend))
    assert v.status is Status.CONSISTENT and v.max_residual < 1e-12
    assert _part(v, "vanishing")["control_min_relative"] > 1e-8


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
def test_counts_and_span_dimension(d):
    v = RESULTANT.verify({"d": d, "t": 2}, "exact")
    counts = _part(v, "count")
    assert counts["pairwise resultants"]["generated"] == comb(d, 2)
    assert counts["nonzero coefficients of Res(Q_u, Q_w)"]["generated"] == \
        comb(d + 1, 2) ** 2 - 2 * d * d + d
    assert counts["distinct coefficients (u <-> w)"]["generated"] == \
        counts["distinct coefficients (u <-> w)"]["formula"]
    assert counts["symmetric_in_u_w"] is True
    assert counts["span_dimension"]["measured_rank_mod_p"] == d * d * (d * d - 1) // 12


def test_generic_resultants_match_sympy_determinants():
    """Def 37 and Thm 40 recomputed independently with SymPy's Matrix.det (Berkowitz)."""
    d = 3
    A, B, C = ([sympy.Symbol(f"{x}_{s}") for s in range(1, d + 1)] for x in "ABC")
    u, w = sympy.symbols("u1:4"), sympy.symbols("w1:4")
    row = lambda z: [sum(zs * X[s] for s, zs in enumerate(z)) for X in (A, B, C)]
    (au, bu, cu), (aw, bw, cw) = row(u), row(w)
    M = sympy.Matrix([[au, bu, cu, 0], [0, au, bu, cu], [aw, bw, cw, 0], [0, aw, bw, cw]])
    full = sympy.Poly(sympy.expand(M.det(method="berkowitz")), *u, *w)
    generic = res.generic_resultants(d)
    for poly, info in zip(generic.polynomials, generic.descriptions):
        if info["kind"] == "pairwise":
            r, s = (k - 1 for k in info["slices"])
            pair = sympy.Matrix([[A[r], B[r], C[r], 0], [0, A[r], B[r], C[r]],
                                 [A[s], B[s], C[s], 0], [0, A[s], B[s], C[s]]]).det()
            assert sympy.expand(poly - pair) == 0
        else:
            exps = tuple(info["u"].count(k) for k in range(1, d + 1)) + \
                tuple(info["w"].count(k) for k in range(1, d + 1))
            assert sympy.expand(poly - full.coeff_monomial(exps)) == 0
    assert len(full.terms()) == generic.nonzero_coefficients


def test_structured_evaluation_equals_expanded_polynomials():
    params = RESULTANT.resolve({"d": 3, "t": 3, "col": 2, "line": "2,-1,1:1,3,0"})
    coords = coordinates_of(params)
    family = RESULTANT.family(params, coords)
    polys = family.expand(coords)
    y = Sampler(8).prime_field((3, len(coords)), P)
    expected = compile_polynomials(polys, coords.symbol_index).evaluate_mod_p(y, P)
    point = structured.Point(np.concatenate([y, np.zeros((3, 1), dtype=np.int64)], axis=1))
    _, got = next(family.chunks(point, structured.ModPArithmetic(P)))
    assert np.array_equal(got, expected) and all(p != 0 for p in polys)


def test_m2_lines_round_trip_and_perturbed_member_is_refuted(run_cli):
    dims = ("--d", 3, "--t", 2, "--a", 2)
    code, out, _ = run_cli("show", "resultant", *dims, "--line", "1,1,1:1,-1,0", "--format", "m2",
                           "--limit", 4)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 4
    for line in lines:
        code, verdict, _ = run_cli("verify-poly", *dims, "--method", "exact", "--", line)
        assert code == 0 and verdict.startswith("verified")
    perturbed = lines[-1].replace(" + ", " + 3*", 1)
    assert perturbed != lines[-1]
    code, verdict, _ = run_cli("verify-poly", *dims, "--method", "exact", "--", perturbed)
    assert code == 1 and verdict.startswith("refuted")


@pytest.mark.parametrize("params,text", [
    ({"d": 3, "t": 1}, "t > 1"),
    ({"d": 1, "t": 2}, "d >= 2"),
    ({"d": 3, "t": 2, "line": "1,2,3:2,4,6"}, "linearly independent"),
    ({"d": 3, "t": 2, "line": "1,0:0,1"}, "length d = 3"),
])
def test_not_applicable(params, text):
    v = RESULTANT.verify(params)
    assert v.status is Status.NOT_APPLICABLE and text in v.summary


@pytest.mark.parametrize("line", ["1,0,0", "1,0,0:0,x,0", "1,0,0:0,1,0:1,1,1"])
def test_bad_line_is_one_line_exit_2(run_cli, line):
    code, out, err = run_cli("verify", "resultant", "--d", 3, "--t", 2, "--line", line)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--line" in err


# -- mutations ----------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_no_omega_in_slice_quadrics_is_refuted(monkeypatch, method):
    monkeypatch.setattr(res, "omega", lambda p, q: 1)
    v = RESULTANT.verify({"d": 3, "t": 2, "line": "1,1,0:0,1,1"}, method)
    assert v.status is Status.REFUTED


def _b_without_its_mirror_term(monkeypatch):
    """B_s with xi_p zeta_q only (the printed xi_p zeta_q + xi_q zeta_p loses its mirror
    term): on a coordinate line e_i:e_j (i < j) the two agree, on a generic line they do not."""
    real = res.restricted_forms

    def wrong(coords, context, xi, zeta):
        index, coeff = real(coords, context, xi, zeta)
        d = coords.d
        for s in range(1, d + 1):
            for k, (p, q, w, _) in enumerate(res.slice_quadric(coords, context, s)):
                coeff[d + s - 1, k] = w * xi[p - 1] * zeta[q - 1]
        return index, coeff

    monkeypatch.setattr(res, "restricted_forms", wrong)


def test_mutation_b_restriction_is_refuted_by_every_certified_example(monkeypatch):
    _b_without_its_mirror_term(monkeypatch)
    for example in RESULTANT.examples:
        params, method, samples = split_example(example)
        v = RESULTANT.verify(params, method, CheckContext(samples=samples))
        assert v.status is Status.REFUTED, example
        # the restriction, computed as z^T M_s z, names the wrong form on every line
        assert _part(v, "restriction")["status"] == "refuted", example
    # a = 1: the slice quadrics are proportional on the variety, so the resultants of any
    # s-independent restriction vanish; only the restriction part sees the error
    v = RESULTANT.verify({"d": 3, "t": 2, "a": 1, "line": claim_module.GENERIC_LINE_3})
    assert _part(v, "vanishing")["status"] == "proved"
    assert v.counterexample["form"] == "B_1" and v.counterexample["xi"] == [1, 2, -1]
    assert (v.counterexample["coefficient"], v.counterexample["restriction"]) == ("2", "4")
    # the default line (no entry zero) sees it; the paper's line e1:e2 cannot: there both
    # formulas agree (it was the default until 2026-11-27)
    for d in (2, 3, 4):
        assert RESULTANT.verify({"d": d, "t": 2, "a": d}, "exact").status is Status.REFUTED, d
    assert RESULTANT.verify({"d": 3, "t": 2, "a": 3, "line": "example41"}).status is Status.PROVED


def test_the_default_line_has_no_zero_entry_and_the_certified_lines_are_it():
    """res.generic_line: xi, zeta independent with every entry nonzero for every d; the
    certified examples' lines are the default at d = 3 and 6, written out."""
    for d in range(2, 14):
        xi, zeta = res.parse_line(None, d)
        assert len(xi) == len(zeta) == d and 0 not in xi + zeta and res.independent(xi, zeta)
    text = lambda line: ":".join(",".join(map(str, v)) for v in line)
    assert text(res.generic_line(3)) == claim_module.GENERIC_LINE_3
    assert text(res.generic_line(6)) == claim_module.GENERIC_LINE_6
    assert res.parse_line(None, 3) != res.example_41_line(3) == ((1, 0, 0), (0, 1, 0))


def test_restriction_part_names_the_line_and_form():
    v = RESULTANT.verify({"d": 3, "t": 2, "line": claim_module.GENERIC_LINE_3})
    part = _part(v, "restriction")
    assert part["status"] == "proved" and (part["lines"], part["forms_per_line"]) == (1, 9)
    assert _part(RESULTANT.verify({"d": 3, "t": 2, "line": "all"}), "restriction")["lines"] == 15


def _negate_one_sylvester_entry(monkeypatch):
    """Def 37 with entry (2, 3) negated, for every resultant computed afterwards."""
    real = res.sylvester_matrix

    def wrong(f, g):
        m = real(f, g)
        m[1][2] = -m[1][2]
        return m

    monkeypatch.setattr(res, "sylvester_matrix", wrong)


def test_mutation_sylvester_sign_is_refuted(monkeypatch):
    """Def 37 with one entry negated: the 'resultant' no longer detects the common factor."""
    _negate_one_sylvester_entry(monkeypatch)
    res.generic_resultants.cache_clear()
    try:
        v = RESULTANT.verify({"d": 3, "t": 2}, "exact")
        assert v.status is Status.REFUTED
        assert v.counterexample["field"] == "Q" and "polynomial" in v.counterexample
    finally:
        res.generic_resultants.cache_clear()


def test_mutation_prop39_factor_is_refuted(monkeypatch):
    """m_s(z) with a_{sk} (transposed A) instead of a_{ks}."""
    real = res.CommonFactorIdentity.__init__

    def transposed(self, coords, context):
        real(self, coords, context)
        d = coords.d
        self.a_qs = (self.a_qs % d) * d + self.a_qs // d
        self.a_ps = (self.a_ps % d) * d + self.a_ps // d

    monkeypatch.setattr(res.CommonFactorIdentity, "__init__", transposed)
    v = RESULTANT.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.REFUTED and "Prop 39" in v.summary


def test_mutation_example_41_coefficient_is_refuted(monkeypatch):
    real = res.example41_quartic
    monkeypatch.setattr(res, "example41_quartic",
                        lambda coords: real(coords) + 2 * coords.symbols[0] ** 4)
    v = RESULTANT.verify({"d": 3, "t": 2})
    assert v.status is Status.REFUTED and "Example 41" in v.summary


def test_mutation_example_42_monomial_is_refuted(monkeypatch):
    monkeypatch.setattr(res, "EXAMPLE42_MIXED", ("u_1^2*w_1*w_2",) + res.EXAMPLE42_MIXED[1:])
    v = RESULTANT.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.REFUTED and "Example 42" in v.summary


def test_mutation_count_formula_is_refuted(monkeypatch):
    monkeypatch.setattr(res, "distinct_coefficient_count", lambda d: 11)
    v = RESULTANT.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.REFUTED and v.counterexample["formula"] == 11


def test_mutation_zero_member_is_refuted(monkeypatch):
    """The same slice twice: Res(q_1, q_1) = 0 identically, caught as trivial."""
    real = res.restricted_forms

    def same_slice(coords, context, xi, zeta):
        index, coeff = real(coords, context, xi, zeta)
        d = coords.d
        for form in range(3):
            index[form * d + 1], coeff[form * d + 1] = index[form * d], coeff[form * d]
        return index, coeff

    monkeypatch.setattr(res, "restricted_forms", same_slice)
    v = RESULTANT.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.REFUTED and "zero polynomial" in v.summary


def test_show_refuses_huge_expansions(run_cli):
    code, _, err = run_cli("show", "resultant", "--d", 6, "--t", 2,
                           "--line", "1,2,3,4,5,6:6,5,4,3,2,1")
    assert code == 2 and "--limit" in err
    assert claim_module.MAX_SHOW_TERMS < 10**6


# -- several lines, random lines, every line (ADM Example 42, Remark 43) ----------------------


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_coordinate_ring_dimension_against_random_lines(d):
    """dim R_k(Gr(2,d)) by the hook content formula = rank of the degree-k Pluecker monomials
    at many random lines (an independent computation: the Pluecker relations are never written)."""
    rng = Sampler(d).spawn(1)
    lines = [tuple(tuple(int(x) for x in v) for v in rng.integers((2, d), -50, 50)) for _ in range(800)]
    for k in (1, 2, 3, 4):
        assert gr.conditions_imposed(lines, k) == gr.coordinate_ring_dimension(d, k)
    assert gr.coordinate_ring_dimension(d, 2) == res.span_dimension(d)


@pytest.mark.parametrize("d,k", [(3, 2), (3, 4), (4, 2), (4, 4)])
def test_interpolation_lines_are_sparse_and_independent(d, k):
    lines = gr.interpolation_lines(d, k)
    assert len(lines) == gr.coordinate_ring_dimension(d, k) == gr.conditions_imposed(lines, k)
    units = [tuple(int(i == j) for i in range(d)) for j in range(d)]
    assert lines[:comb(d, 2)] == tuple((units[i], units[j]) for i in range(d) for j in range(i + 1, d))
    assert max(x for line in lines for v in line for x in v) <= 2


def test_every_line_is_proved_at_d3_and_spans_90():
    v = RESULTANT.verify({"d": 3, "t": 2, "line": "all"})
    assert v.status is Status.PROVED and v.method == "symbolic"
    counts = _part(v, "count")
    assert counts["members"]["generated"] == 90 == rl.all_lines_members(3)
    assert counts["conditions the lines impose on R_4(Gr(2,d))"]["generated"] == 15
    assert counts["span_dimension"]["measured_rank_mod_p"] == 90 == counts["span_dimension"]["predicted"]


def _universal_coefficients(coords, context=2):
    """Res(Q_u^L, Q_w^L) with xi, zeta, u, w indeterminates (ADM Thm 40 for every line at
    once), expanded in QQ[y, xi, zeta, u, w] and split by its monomials in (xi, zeta, u, w):
    the coefficients as dicts y-monomial -> coefficient."""
    d = coords.d
    ys = {(p, q, s): coords.symbol(Label(coords.row, coords.col, context, (p, q, s)))
          for s in range(1, d + 1) for p, q in combinations_with_replacement(range(1, d + 1), 2)}
    aux = [sympy.Symbol(f"{x}{i}") for x in ("xi", "ze", "u", "w") for i in range(d)]
    R, *gens = sympy.polys.rings.ring(list(ys.values()) + aux, sympy.QQ)
    y = dict(zip(ys, gens))
    xi, ze, u, w = (gens[len(ys) + k * d:len(ys) + (k + 1) * d] for k in range(4))

    def forms(c):
        A = B = C = R.zero
        for (p, q, s), g in y.items():
            weight = (1 if p == q else 2) * c[s - 1] * g
            A += weight * xi[p - 1] * xi[q - 1]
            C += weight * ze[p - 1] * ze[q - 1]
            B += weight * (xi[p - 1] * ze[q - 1] + xi[q - 1] * ze[p - 1])
        return A, B, C

    (a1, b1, c1), (a2, b2, c2) = forms(u), forms(w)
    resultant = (a1 * c2 - a2 * c1) ** 2 - (a1 * b2 - a2 * b1) * (b1 * c2 - b2 * c1)
    assert resultant == res.sylvester_resultant((a1, b1, c1), (a2, b2, c2))
    groups = {}
    for monom, c in resultant.terms():
        groups.setdefault(monom[len(ys):], {})[monom[:len(ys)]] = c
    return list(groups.values()), list(ys.values())


def test_all_lines_span_equals_the_coefficients_in_xi_zeta_u_w():
    """The cleanest object: every coefficient of Res in (xi, zeta, u, w).  Their span has
    dimension 90 at d = 3, and the 90 members of --line all (15 lines x 6 pairs) span the
    same space (the rank of both together is 90)."""
    params = RESULTANT.resolve({"d": 3, "t": 2, "line": "all"})
    coords = coordinates_of(params)
    coefficients, ys = _universal_coefficients(coords)
    position = {coords.symbol_index[y]: k for k, y in enumerate(ys)}
    members = [{} for _ in range(90)]      # the members' terms (expand_mod_p = SymPy, tested)
    for j, row, c in zip(*rl.expand_mod_p(RESULTANT.family(params, coords), P)):
        exponents = [0] * len(ys)
        for index in row:
            exponents[position[int(index)]] += 1
        members[j][tuple(exponents)] = int(c)
    monomials = sorted({k for c in coefficients for k in c} | {k for m in members for k in m})
    column = {k: i for i, k in enumerate(monomials)}

    def matrix(rows):
        out = np.zeros((len(rows), len(monomials)), dtype=np.int64)
        for i, row in enumerate(rows):
            for k, c in row.items():
                out[i, column[k]] = int(c) % P
        return out

    universal = matrix(coefficients)
    listed = matrix(members)
    assert len(coefficients) > 2000
    assert rank_mod_p(universal, P) == rank_mod_p(listed, P) == 90
    assert rank_mod_p(np.concatenate([universal, listed]), P) == 90


@pytest.mark.parametrize("line", [None, "all", "random:2", "1,1,0:0,1,2;0,0,1:1,-1,3"])
def test_expansion_mod_p_equals_sympy(line):
    params = RESULTANT.resolve({"d": 3, "t": 2, "line": line})
    coords = coordinates_of(params)
    family = RESULTANT.family(params, coords)
    compiled = compile_polynomials(family.expand(coords), coords.symbol_index)
    expected = {}
    for m, j, c in compiled.entries:
        key = (j, *compiled.monomials[m])
        expected[key] = (expected.get(key, 0) + c.numerator * pow(c.denominator, -1, P)) % P
    member, rows, coeff = rl.expand_mod_p(family, P)
    got = {(int(j), *map(int, r)): int(c) for j, r, c in zip(member, rows, coeff)}
    assert got == {k: v for k, v in expected.items() if v}


def test_random_lines_add_six_dimensions_each_until_fifteen():
    """ADM Remark 43 at d = 3: k generic lines span 6k dimensions (6 = dim R_2) up to
    k = 15 = dim R_4(Gr(2,3)); more lines add nothing."""
    spans = {}
    for k in (1, 4, 14, 15, 17):
        v = RESULTANT.verify({"d": 3, "t": 2, "line": f"random:{k}"}, "exact")
        spans[k] = _part(v, "count")["span_dimension"]["measured_rank_mod_p"]
        assert v.status is Status.VERIFIED
    assert spans == {1: 6, 4: 24, 14: 84, 15: 90, 17: 90}


@pytest.mark.parametrize("d,line", [(4, "random:3"), (4, "coordinate"), (5, "random:2:7")])
def test_several_lines_verified_exactly(d, line):
    v = RESULTANT.verify({"d": d, "t": 3, "a": d, "line": line}, "exact")
    assert v.status is Status.VERIFIED and v.failure_probability < 1e-40
    counts = _part(v, "count")
    assert counts["span_dimension"]["agrees"] is True


def test_several_lines_numeric_consistent():
    v = RESULTANT.verify({"d": 4, "t": 2, "line": "1,0,2,1:0,1,1,-1;1,1,1,1:0,1,2,3"}, "numeric")
    assert v.status is Status.CONSISTENT and v.max_residual < 1e-12


def test_every_line_verified_at_d4():
    v = RESULTANT.verify({"d": 4, "t": 2, "line": "all"}, "exact")
    assert v.status is Status.VERIFIED
    counts = _part(v, "count")
    assert counts["members"]["generated"] == 2100 and counts["interpolation lines"]["generated"] == 105


def test_show_several_lines(run_cli):
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--line",
                           "1,0,0:0,1,0;1,1,0:0,0,1", "--limit", 16)
    assert code == 0 and "# L_2 = 1,1,0:0,0,1   p = [0, 1, 1]" in out
    assert "L_2 = 1,1,0:0,0,1: Res(q_1^L, q_2^L) = " in out
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--line", "all", "--format", "m2",
                           "--limit", 12)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 12
    code, verdict, _ = run_cli("verify-poly", "--d", 3, "--t", 2, "--method", "exact", "--", lines[-1])
    assert code == 0 and verdict.startswith("verified")


def test_mutation_perturbed_pair_member_is_refuted(monkeypatch):
    """--line all with one generic pair resultant perturbed by one term: refuted."""
    real = res.pair_resultants(3)
    A1, B1, C2, A2 = sympy.symbols("A_1 B_1 C_2 A_2")
    wrong = res.PairResultants(3, real.pairs, (real.polynomials[0] + A1 * B1 * C2 * A2,)
                               + real.polynomials[1:], real.descriptions)
    monkeypatch.setitem(res.GENERIC, "pairs", lambda d: wrong)
    v = RESULTANT.verify({"d": 3, "t": 2, "line": "all"}, "exact")
    assert v.status is Status.REFUTED and v.counterexample["member"]["line"]["number"] == 1


def test_mutation_wrong_sylvester_matrix_refutes_every_line(monkeypatch):
    _negate_one_sylvester_entry(monkeypatch)
    res.pair_resultants.cache_clear()
    try:
        v = RESULTANT.verify({"d": 3, "t": 2, "line": "all"}, "exact")
        assert v.status is Status.REFUTED
    finally:
        res.pair_resultants.cache_clear()


@pytest.mark.parametrize("line,text", [
    ("random:0", "K >= 1"), ("random:x", "integers"), ("random:2:3:4", "at most two"),
    ("1,0,0:0,1,0;", "empty line"), ("1,0,0:0,1,0;1,1", "two integer vectors"),
    ("random:5000", "too many"),
])
def test_bad_line_lists_are_one_line_exit_2(run_cli, line, text):
    code, out, err = run_cli("verify", "resultant", "--d", 3, "--t", 2, "--line", line)
    assert code == 2 and out == "" and err.count("\n") == 1 and text in err


def test_every_line_too_large_and_dependent_line_in_a_list():
    from attngeom.core.errors import BadInput
    with pytest.raises(BadInput, match="--line all needs"):
        RESULTANT.verify({"d": 6, "t": 2, "line": "all"})
    v = RESULTANT.verify({"d": 3, "t": 2, "line": "1,0,0:0,1,0;1,2,3:2,4,6"})
    assert v.status is Status.NOT_APPLICABLE and v.summary.startswith("line 2: ")

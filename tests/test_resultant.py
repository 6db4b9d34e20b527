"""ADM §5.4: slice quadrics (Def 38), the common factor (Prop 39), Sylvester resultants
(Def 37, Thm 40), Examples 41 and 42, counts, and mutations."""

from math import comb

import numpy as np
import pytest
import sympy

from kernels.claim import CheckContext
from kernels.polyeval import compile_polynomials
from kernels.sampling import DEFAULT_PRIME, Sampler
from kernels.verdict import Status
from lightning_alg.claims import REGISTRY
from lightning_alg.claims import resultant as claim_module
from lightning_alg.claims.base import coordinates_of
from lightning_alg.coordinates import CoordinateSystem
from lightning_alg.invariants import resultant as res
from lightning_alg.invariants import structured
from lightning_alg.polynomial_io import parse_polynomial

RESULTANT = REGISTRY.get("resultant")
P = DEFAULT_PRIME

#: ADM Example 41, typed from the paper with a_s = y_((1,2),(1,2),(s,1)),
#: b_s = y_((1,2),(2,2),(s,1)), c_s = y_((2,2),(2,2),(s,1)).
A1, A2 = "y_((1,2),(1,2),(1,1))", "y_((1,2),(1,2),(2,1))"
B1, B2 = "y_((1,2),(2,2),(1,1))", "y_((1,2),(2,2),(2,1))"
C1, C2 = "y_((2,2),(2,2),(1,1))", "y_((2,2),(2,2),(2,1))"
EXAMPLE_41 = (f"{A1}^2*{C2}^2 - 2*{A1}*{A2}*{C1}*{C2} - 4*{A1}*{B1}*{B2}*{C2} + 4*{A1}*{B2}^2*{C1} "
              f"+ {A2}^2*{C1}^2 + 4*{A2}*{B1}^2*{C2} - 4*{A2}*{B1}*{B2}*{C1}")


def _part(verdict, text):
    return next(p for p in verdict.evidence["parts"] if text in p["summary"])


def test_example_41_quartic_exactly_as_printed(run_cli):
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--format", "m2")
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
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--format", "latex")
    assert code == 0 and "l(z) = v_{1} z_{1} + v_{2} z_{2} + v_{3} z_{3} \\\\" in out
    assert "[u_1^2 w_2 w_3] Res(Q_u^{L}, Q_w^{L}) = " in out
    code, out, _ = run_cli("show", "resultant", "--d", 3, "--t", 2, "--format", "json")
    data = json.loads(out)
    assert data["restricted"][0] == {"s": 1, "A": A1, "B": f"2*{B1}", "C": C1}
    assert data["common_factor"]["m"][0] == "a_11 z_1 + a_21 z_2 + a_31 z_3"
    assert len(data["invariants"]) == 15


@pytest.mark.parametrize("a", [1, 2, 3])
def test_proved_for_d3_t2(a):
    v = RESULTANT.verify({"d": 3, "t": 2, "a": a})
    assert v.status is Status.PROVED and v.method == "symbolic"
    assert _part(v, "Example 41")["status"] == "proved"
    assert _part(v, "Prop 39")["status"] == "proved"


def test_example_42_six_mixed_coefficients_and_rank_6():
    v = RESULTANT.verify({"d": 3, "t": 2, "line": "1,2,0:0,1,-1"}, "exact")
    part = _part(v, "Example 42")
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
    assert v.evidence["parts"][0]["control_min_relative"] > 1e-8


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
def test_counts_and_span_dimension(d):
    v = RESULTANT.verify({"d": d, "t": 2}, "exact")
    counts = _part(v, "count:")
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


def test_mutation_sylvester_sign_is_refuted(monkeypatch):
    """Def 37 with one entry negated: the 'resultant' no longer detects the common factor."""
    real = res.sylvester_matrix

    def wrong(f, g):
        m = real(f, g)
        m[1][2] = -m[1][2]
        return m

    monkeypatch.setattr(res, "sylvester_matrix", wrong)
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

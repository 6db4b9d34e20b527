"""Single-column invariants of ADM §4: lie-flattening, single-column-rank, chow-111."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import sympy

import attngeom.lightning_alg.claims.chow111 as chow
import attngeom.lightning_alg.claims.single_column as sc
from attngeom.core.claim import CheckContext
from attngeom.kernels.primefield import rank_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.core.verdict import Status
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.chow import (
    Annihilator, apply_operator, factor_cubic, lie_rank_split_111, lie_rank_split_21,
    operator_trace, product_coefficients, split_annihilator)
from attngeom.lightning_alg.invariants.determinantal import LinearMatrix
from attngeom.lightning_alg.invariants.lie_flattening import (
    lie_flattening_matrix, operator_matrix, sl_basis, sl_coordinates)
from attngeom.lightning_alg.invariants.single_column import (
    EXAMPLE19_LETTERS, coefficient_submatrix, cubic_coefficients, sample_slice_mod_p,
    single_column_symbols)
from attngeom.lightning_alg.labels import multisets
from attngeom.lightning_alg.polynomial_io import parse_polynomial

P = DEFAULT_PRIME

#: ADM Example 19's M_Lie, transcribed from the paper: rows x1^3, x1^2x2, ..., x3^3;
#: columns H1, H2, E12, E13, E21, E23, E31, E32.
EXAMPLE19 = [
    "a 0 d i 0 0 0 0",
    "2d d 2g 2j a i 0 0",
    "i -i 2j 2f 0 0 a d",
    "g 2g b e 2d 2j 0 0",
    "0 0 2e 2h 2i 2f 2d 2g",
    "-f -2f h c 0 0 2i 2j",
    "0 b 0 0 g e 0 0",
    "-e e 0 0 2j 2h g b",
    "-2h -h 0 0 f c 2j 2e",
    "-c -c 0 0 0 0 f h",
]
EXAMPLE19_ROWS = ["x1^3", "x1^2x2", "x1^2x3", "x1x2^2", "x1x2x3", "x1x3^2", "x2^3", "x2^2x3",
                  "x2x3^2", "x3^3"]
#: ADM Example 19: a = y111, b = y222, ..., j = y123.
EXAMPLE19_NAMES = {"a": "111", "b": "222", "c": "333", "d": "112", "e": "223", "f": "133",
                   "g": "122", "h": "233", "i": "113", "j": "123"}


def verify(claim, method, **params):
    return claim.verify(params, method, CheckContext(seed=params.pop("seed", 0)))


def part(verdict, name):
    return verdict.evidence["parts"][name]


# -- Example 19 ------------------------------------------------------------------------------
def test_show_reproduces_example_19_entry_for_entry(run_cli):
    code, out, _ = run_cli("show", "lie-flattening", "--d", 3)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["H1", "H2", "E12", "E13", "E21", "E23", "E31", "E32"]
    table = [line.split() for line in lines[1:11]]
    assert [row[0] for row in table] == EXAMPLE19_ROWS
    assert [" ".join(row[1:]) for row in table] == EXAMPLE19
    legend = {line.split()[0]: line for line in lines[12:]}
    for letter, digits in EXAMPLE19_NAMES.items():
        k1, k2, k3 = digits
        assert f"y_{{({k1},1),({k2},1),({k3},1)}}" in legend[letter]


def test_example_19_letters_match_the_paper():
    assert {letter: "".join(map(str, K)) for K, letter in EXAMPLE19_LETTERS.items()} == EXAMPLE19_NAMES


def test_lie_flattening_is_the_matrix_of_d_to_d_of_f_over_three():
    """Independent of the entry formula: differentiate f_T with SymPy."""
    rng = random.Random(4)
    for d in (3, 4):
        xs = sympy.symbols(f"x1:{d + 1}")
        y = [rng.randint(-5, 5) for _ in multisets(d, 3)]
        f = sum(c * sympy.Mul(*[xs[k - 1] for k in K])
                for K, c in zip(multisets(d, 3), cubic_coefficients(y, d)))
        matrix = lie_flattening_matrix(d).evaluate_ring(y)
        for _ in range(3):
            vector = [rng.randint(-3, 3) for _ in sl_basis(d)]
            image = [sum(row[c] * vector[c] for c in range(len(vector))) for row in matrix]
            operator = operator_matrix(vector, d)
            assert operator_trace(operator) == 0
            applied = sympy.Poly(sympy.expand(apply_operator(operator, f, xs)), *xs)
            expected = [Fraction(int(applied.coeff_monomial(sympy.Mul(*[xs[k - 1] for k in K]))), 3)
                        for K in multisets(d, 3)]
            assert image == expected


def test_sl_coordinates_round_trip():
    rng = random.Random(1)
    for d in (3, 5):
        vector = [rng.randint(-9, 9) for _ in range(d * d - 1)]
        assert sl_coordinates(operator_matrix(vector, d)) == vector
        assert lie_flattening_matrix(d).shape == ((d + 2) * (d + 1) * d // 6, d * d - 1)


# -- linear matrices and minors ----------------------------------------------------------------
def test_minor_expansion_agrees_with_determinants_at_points():
    lm = lie_flattening_matrix(3)
    rows, cols = (0, 1, 2, 3, 4, 5, 6, 7), tuple(range(8))
    terms = lm.minor(rows, cols)
    rng = random.Random(2)
    for _ in range(3):
        y = [rng.randint(-4, 4) for _ in range(10)]
        value = sum(c * np.prod([y[k] ** e for k, e in enumerate(exps)]) for exps, c in terms.items())
        direct = sympy.Matrix([[lm.evaluate_ring(y)[r][c] for c in cols] for r in rows]).det()
        assert value == direct
    symbols = sympy.symbols("n0:10")
    N = coefficient_submatrix(3)
    assert sympy.expand(N.minor_expression((0, 1), (1, 2), symbols) -
                        sympy.Matrix(N.evaluate_ring(list(symbols))).extract([0, 1], [1, 2]).det()) == 0


def test_evaluations_agree():
    lm = lie_flattening_matrix(4)
    y = Sampler(3).prime_field((2, 20), P)
    mod_p = lm.evaluate_mod_p(y, P)
    ring = np.array(lm.evaluate_ring([int(v) for v in y[1]]), dtype=object)
    assert (mod_p[1] == ring % P).all()
    floats = Sampler(3).floats((2, 20))
    assert np.allclose(lm.evaluate_float(floats)[0],
                       np.array(lm.evaluate_ring(list(floats[0])), dtype=float))


# -- Lemma 16 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, case", [("generic", 1), ("square", 2), ("divisible", 2), ("zero", 2)])
def test_lemma16_annihilator_both_cases(kind, case):
    # a fixed seed per kind (str hash() changes with PYTHONHASHSEED, and a random small-integer
    # "generic" draw can land in Lemma 16's special case 2)
    rng = random.Random(sum(map(ord, kind)))
    for d in (3, 4, 5):
        xs = sympy.symbols(f"x1:{d + 1}")
        for _ in range(4):
            l = [rng.randint(-3, 3) for _ in range(d)]
            if not any(l):
                l[0] = 1
            m = [rng.randint(-3, 3) for _ in range(d)]
            A = {"generic": [[rng.randint(-3, 3) for _ in range(d)] for _ in range(d)],
                 "square": [[m[i] * m[j] for j in range(d)] for i in range(d)],
                 "divisible": [[l[i] * m[j] for j in range(d)] for i in range(d)],
                 "zero": [[0] * d for _ in range(d)]}[kind]
            S = [[Fraction(A[i][j] + A[j][i]) for j in range(d)] for i in range(d)]
            f = sympy.expand(sum(l[i] * xs[i] for i in range(d)) *
                             sum(A[i][j] * xs[i] * xs[j] for i in range(d) for j in range(d)))
            found = split_annihilator([Fraction(v) for v in l], S)
            assert sympy.expand(apply_operator(found.matrix, f, xs)) == 0
            assert operator_trace(found.matrix) == 0
            assert any(v != 0 for row in found.matrix for v in row)
            if kind != "generic" or any(any(row) for row in S):
                assert found.case == case


def test_lemma16_needs_d_at_least_3_and_a_linear_factor():
    with pytest.raises(ValueError):
        split_annihilator([Fraction(1), Fraction(2)], [[Fraction(1)] * 2] * 2)
    with pytest.raises(ValueError):
        split_annihilator([Fraction(0)] * 3, [[Fraction(1)] * 3] * 3)


# -- lie-flattening verdicts ------------------------------------------------------------------
def test_lie_flattening_d3_is_proved_with_example_19():
    verdict = verify(sc.LieFlatteningClaim(), "auto", d=3)
    assert verdict.status is Status.PROVED
    example = part(verdict, "example19")
    assert example["span_of_minors"] == 35 and example["codimension"] == 2
    assert part(verdict, "nontrivial")["generic_cubic_rank"] == 8


@pytest.mark.parametrize("d, a", [(3, 3), (4, 4), (5, 2), (6, 1)])
def test_lie_flattening_methods(d, a):
    claim = sc.LieFlatteningClaim()
    assert verify(claim, "symbolic", d=d, a=a).status is Status.PROVED
    exact = verify(claim, "exact", d=d, a=a)
    assert exact.status is Status.VERIFIED
    assert set(part(exact, "lemma16")["lemma16_cases"]) == {1, 2}
    assert verify(claim, "numeric", d=d, a=a).status is Status.CONSISTENT


def test_lie_flattening_other_output_coordinates():
    claim = sc.LieFlatteningClaim()
    assert verify(claim, "symbolic", d=3, t=3, col=2, dprime=2, row=2).status is Status.PROVED
    assert verify(claim, "exact", d=4, t=2, col=1).status is Status.VERIFIED


def test_lie_flattening_d8_exact_cli(run_cli):
    code, out, _ = run_cli("verify", "lie-flattening", "--d", 8, "--method", "exact")
    assert code == 0 and out.startswith("verified")


def test_rank_on_the_split_21_locus_matches_the_stabilizer_count():
    for d in range(3, 7):
        _, y = sample_slice_mod_p(CoordinateSystem(d, 1), d, 2, Sampler(d), P)
        ranks = {rank_mod_p(m, P) for m in lie_flattening_matrix(d).evaluate_mod_p(y, P)}
        assert ranks == {lie_rank_split_21(d)}


def test_d2_is_where_lemma_16_needs_its_hypothesis():
    """For d = 2 every cubic is split, yet M_Lie (4 x 3) has full rank on the slice."""
    _, y = sample_slice_mod_p(CoordinateSystem(2, 1), 2, 3, Sampler(0), P)
    assert {rank_mod_p(m, P) for m in lie_flattening_matrix(2).evaluate_mod_p(y, P)} == {3}


# -- printed minors ----------------------------------------------------------------------------
def test_printed_minor_is_accepted_by_verify_poly_and_nonzero_at_a_generic_cubic(run_cli):
    code, out, _ = run_cli("show", "lie-flattening", "--d", 3, "--format", "m2", "--limit", 1)
    assert code == 0
    minor = out.strip()
    assert len(out.strip().splitlines()) == 1
    code, verdict, _ = run_cli("verify-poly", minor, "--d", 3, "--t", 1, "--method", "exact")
    assert code == 0 and verdict.startswith("verified")
    coords = CoordinateSystem(3, 1)
    poly = parse_polynomial(minor, coords)
    assert sympy.Poly(poly, *single_column_symbols(coords)).total_degree() == 8
    rng = random.Random(5)
    generic = {s: rng.randint(-9, 9) for s in single_column_symbols(coords)}
    assert poly.subs(generic) != 0
    mutated = minor.replace("4*", "5*", 1)
    code, verdict, _ = run_cli("verify-poly", mutated, "--d", 3, "--t", 1, "--method", "exact")
    assert code == 1 and verdict.startswith("refuted")


def test_show_formats(run_cli):
    code, out, _ = run_cli("show", "lie-flattening", "--d", 3, "--format", "m2")
    assert code == 0 and out.startswith("matrix{{y_((1,1),(1,1),(1,1)),0,")
    code, out, _ = run_cli("show", "lie-flattening", "--d", 3, "--format", "latex")
    assert "\\begin{array}" in out and "x_{1}^{2}x_{2} & 2d & d & 2g" in out
    code, out, _ = run_cli("show", "lie-flattening", "--d", 4, "--format", "json")
    assert code == 0 and '"H3"' in out
    code, out, _ = run_cli("show", "lie-flattening", "--d", 3, "--limit", 2)
    assert code == 0 and len(out.strip().splitlines()) == 2


# -- single-column-rank -------------------------------------------------------------------------
def test_example_21_quartic_is_det_n(run_cli):
    code, out, _ = run_cli("show", "single-column-rank", "--d", 4, "--a", 1)
    assert code == 0
    coords = CoordinateSystem(4, 1)
    y = dict(zip(("".join(map(str, K)) for K in multisets(4, 3)), single_column_symbols(coords)))
    paper = [["111", "112", "113", "114"], ["122", "222", "223", "224"],
             ["133", "233", "333", "334"], ["144", "244", "344", "444"]]
    det_n = sympy.Matrix([[y[k] for k in row] for row in paper]).det()
    assert sympy.expand(parse_polynomial(out.strip(), coords) - det_n) == 0
    assert verify(sc.SingleColumnRankClaim(), "symbolic", d=4, a=1).status is Status.PROVED


@pytest.mark.parametrize("d, a", [(5, 1), (6, 2), (8, 1), (8, 3)])
def test_single_column_rank_methods(d, a):
    claim = sc.SingleColumnRankClaim()
    assert verify(claim, "symbolic", d=d, a=a).status in (Status.PROVED, Status.VERIFIED)
    exact = verify(claim, "exact", d=d, a=a)
    assert exact.status is Status.VERIFIED
    assert max(part(exact, "vanishing")["ranks_mod_p"]) == 2 * a + 1
    assert verify(claim, "numeric", d=d, a=a).status is Status.CONSISTENT


def test_single_column_rank_vacuous_bound(run_cli):
    verdict = verify(sc.SingleColumnRankClaim(), "symbolic", d=3)
    assert verdict.status is Status.PROVED and "vacuous" in verdict.summary
    code, _, err = run_cli("show", "single-column-rank", "--d", 3)
    assert code == 2 and "no vanishing minors" in err


# -- chow-111 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", range(3, 9))
def test_remark_23_ranks(d):
    verdict = verify(chow.Chow111Claim(), "exact", d=d)
    assert verdict.status is Status.VERIFIED
    ranks = part(verdict, "remark23")
    assert set(ranks["ranks_mod_p"]) == {6 if d == 3 else 3 * d - 2}
    example = part(verdict, "example21")
    assert example["cone_dimension_measured"] == 3 * d - 2
    assert example["rank_on_split_21"] == lie_rank_split_21(d) > lie_rank_split_111(d)


def test_example_21_numbers():
    verdict = verify(chow.Chow111Claim(), "symbolic", d=4)
    assert verdict.status is Status.VERIFIED
    assert part(verdict, "nontrivial")["generic_cubic_rank"] == 15
    assert part(verdict, "example21")["cone_dimension_measured"] == 10
    assert part(verdict, "cor22")["status"] == "proved"
    assert verify(chow.Chow111Claim(), "numeric", d=4).status is Status.CONSISTENT


def test_factor_cubic():
    assert factor_cubic([1, 0, 0, 0, 0, 0, 1, 0, 0, 1], 3)[1] == [3]             # x1^3+x2^3+x3^3
    assert sorted(factor_cubic([0, 0, 0, 1, 0, 1, 0, 0, 0, 0], 3)[1]) == [1, 2]  # x1 (x2^2 + x3^2)
    product = product_coefficients([1, 2, 0], [0, 1, -1], [3, 0, 1])
    assert factor_cubic(product, 3)[1] == [1, 1, 1]


def test_chow_111_show(run_cli):
    code, out, _ = run_cli("show", "chow-111", "--d", 4)
    assert code == 0 and "rank M_Lie(f_T) = 10" in out
    code, out, _ = run_cli("show", "chow-111", "--d", 3, "--limit", 1, "--format", "m2")
    assert code == 0
    code, verdict, _ = run_cli("verify-poly", out.strip(), "--d", 3, "--t", 1, "--a", 1,
                               "--method", "exact")
    assert code == 0
    code, verdict, _ = run_cli("verify-poly", out.strip(), "--d", 3, "--t", 1, "--method", "exact")
    assert code == 1, "a rank-one minor must not vanish on the (2,1) variety"


# -- mutations: each check must refute a perturbed formula ------------------------------------
def perturbed(matrix: LinearMatrix, index: int = 0, delta: int = 1) -> LinearMatrix:
    terms = list(matrix.terms)
    r, c, k, coeff = terms[index]
    terms[index] = (r, c, k, coeff + delta)
    return LinearMatrix(matrix.rows, matrix.columns, matrix.n_variables, tuple(terms))


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutated_lie_flattening_is_refuted(monkeypatch, method):
    """d = 3: M_Lie has corank exactly 1 on the slice, so one changed entry raises its rank."""
    monkeypatch.setattr(sc, "lie_flattening_matrix", lambda d: perturbed(lie_flattening_matrix(d)))
    verdict = verify(sc.LieFlatteningClaim(), method, d=3)
    assert verdict.status is Status.REFUTED
    if method == "exact":
        assert part(verdict, "rank")["status"] == "refuted"


def test_mutated_lie_flattening_breaks_lemma16_kernel(monkeypatch):
    monkeypatch.setattr(sc, "lie_flattening_matrix",
                        lambda d: perturbed(lie_flattening_matrix(d), index=7, delta=-3))
    verdict = verify(sc.LieFlatteningClaim(), "symbolic", d=5)
    assert verdict.status is Status.REFUTED and "M_Lie vec(D)" in verdict.counterexample


@pytest.mark.parametrize("method", ["symbolic", "exact"])
def test_mutated_lemma16_operator_is_refuted(monkeypatch, method):
    def wrong(linear, symmetric):
        found = split_annihilator(linear, symmetric)
        matrix = [list(row) for row in found.matrix]
        matrix[0][1] = matrix[0][1] + matrix[1][0] + 1
        return Annihilator(matrix, found.case, found.pivot, found.directions)
    monkeypatch.setattr(sc, "split_annihilator", wrong)
    verdict = verify(sc.LieFlatteningClaim(), method, d=3)
    assert verdict.status is Status.REFUTED and "Lemma 16" in verdict.summary


def test_trivial_family_is_refuted(monkeypatch):
    """A matrix with a zero column drops rank everywhere: its 'verified' would be vacuous."""
    def without_first_column(d):
        lm = lie_flattening_matrix(d)
        return LinearMatrix(lm.rows, lm.columns, lm.n_variables,
                            tuple(t for t in lm.terms if t[1] != 0))
    monkeypatch.setattr(sc, "lie_flattening_matrix", without_first_column)
    verdict = verify(sc.LieFlatteningClaim(), "exact", d=4)
    assert verdict.status is Status.REFUTED
    assert part(verdict, "nontrivial")["status"] == "refuted"


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutated_submatrix_is_refuted(monkeypatch, method):
    def wrong_index(d):
        index = {K: n for n, K in enumerate(multisets(d, 3))}
        terms = tuple((k - 1, kp - 1, index[tuple(sorted((k, kp, kp)))], 1)
                      for k in range(1, d + 1) for kp in range(1, d + 1))
        return LinearMatrix(tuple(map(str, range(d))), tuple(map(str, range(d))), len(index), terms)
    monkeypatch.setattr(sc, "coefficient_submatrix", wrong_index)
    assert verify(sc.SingleColumnRankClaim(), method, d=5, a=1).status is Status.REFUTED


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutated_decomposition_is_refuted(monkeypatch, method):
    from attngeom.lightning_alg.invariants.single_column import submatrix_decomposition

    def without_transpose(A, v):
        first, _, third = submatrix_decomposition(A, v)
        return [first, first, third]
    monkeypatch.setattr(sc, "submatrix_decomposition", without_transpose)
    assert verify(sc.SingleColumnRankClaim(), method, d=4, a=1).status is Status.REFUTED


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutated_factors_are_refuted(monkeypatch, method):
    monkeypatch.setattr(chow, "product_coefficients", lambda a, b, c: product_coefficients(a, a, c))
    assert verify(chow.Chow111Claim(), method, d=4).status is Status.REFUTED


def test_perturbed_cubic_does_not_factor(monkeypatch):
    def bumped(values, d):
        out = cubic_coefficients(values, d)
        return [out[0] + 1] + out[1:]
    monkeypatch.setattr(chow, "cubic_coefficients", bumped)
    found = chow._integer_factorizations(CoordinateSystem(3, 1), CheckContext(seed=0))
    assert any(degrees != [1, 1, 1] for _, degrees, _ in found)
    assert verify(chow.Chow111Claim(), "exact", d=3).status is Status.REFUTED


@pytest.mark.parametrize("shift", [1, -1])
@pytest.mark.parametrize("method", ["exact", "numeric"])
def test_mutated_remark_23_rank_is_refuted(monkeypatch, shift, method):
    monkeypatch.setattr(chow, "lie_rank_split_111", lambda d: lie_rank_split_111(d) + shift)
    verdict = verify(chow.Chow111Claim(), method, d=5)
    assert verdict.status is Status.REFUTED and "Remark 23" in verdict.summary


# -- bad input and applicability ----------------------------------------------------------------
@pytest.mark.parametrize("claim", ["lie-flattening", "single-column-rank", "chow-111"])
def test_d_below_3_is_not_applicable(run_cli, claim):
    code, out, err = run_cli("verify", claim, "--d", 2)
    assert code == 2 and out == "" and err.startswith("attngeom: not-applicable:") and "d >= 3" in err
    code, _, err = run_cli("show", claim, "--d", 2)
    assert code == 2 and "not-applicable" in err


@pytest.mark.parametrize("args, message", [
    (("verify", "lie-flattening", "--d", 0), "at least 1"),
    (("verify", "lie-flattening", "--d", 40), "limit"),
    (("verify", "lie-flattening", "--d", 3, "--col", 2), "not an output column"),
    (("verify", "lie-flattening", "--d", 3, "--context", 2), "does not take --context"),
    (("show", "lie-flattening", "--d", 4, "--limit", 1), "terms"),
])
def test_bad_input_is_one_line(run_cli, args, message):
    code, _, err = run_cli(*args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_chow_111_needs_rank_one(run_cli):
    code, out, err = run_cli("verify", "chow-111", "--d", 4, "--a", 2)
    assert code == 2 and out == "" and "not-applicable: ADM Cor 22 needs rank(A) = 1" in err


def test_seeded_verdicts_are_reproducible():
    first = verify(sc.LieFlatteningClaim(), "exact", d=5, seed=7)
    second = verify(sc.LieFlatteningClaim(), "exact", d=5, seed=7)
    assert first.to_json() | {"seconds": 0} == second.to_json() | {"seconds": 0}


#: ADM Example 19's 10 x 9 gl_3 syzygy matrix M (columns alpha_1..3, beta_1..3, gamma_1..3,
#: i.e. E_u1, E_u2, E_u3), transcribed from the paper.
EXAMPLE19_GL3 = [
    "a 0 0 d 0 0 i 0 0",
    "2d a 0 2g d 0 2j i 0",
    "2i 0 a 2j 0 d 2f 0 i",
    "g 2d 0 b 2g 0 e 2j 0",
    "2j 2i 2d 2e 2j 2g 2h 2f 2j",
    "f 0 2i h 0 2j c 0 2f",
    "0 g 0 0 b 0 0 e 0",
    "0 2j g 0 2e b 0 2h e",
    "0 f 2j 0 h 2e 0 c 2h",
    "0 0 f 0 0 h 0 0 c",
]


def test_example_19_gl3_matrix_restricts_to_m_lie():
    """The paper's two matrices agree with each other and with M_Lie: the off-diagonal
    columns of M are the E_uv of M_Lie, and H_1 = alpha_1 - gamma_3, H_2 = beta_2 - gamma_3."""
    letters = {k: sympy.Symbol(k) for k in "abcdefghij"}

    def entry(text):
        if text == "0":
            return sympy.Integer(0)
        return int(text[:-1] or 1) * letters[text[-1]]
    gl3 = sympy.Matrix([[entry(x) for x in row.split()] for row in EXAMPLE19_GL3])
    column = {(u, v): gl3[:, 3 * (v - 1) + (u - 1)] for u in (1, 2, 3) for v in (1, 2, 3)}
    values = [letters[EXAMPLE19_LETTERS[K]] for K in multisets(3, 3)]
    m_lie = sympy.Matrix(lie_flattening_matrix(3).evaluate_ring(values))
    names = [name for name, _ in sl_basis(3)]
    for c, name in enumerate(names):
        if name.startswith("E"):
            assert m_lie[:, c] == column[(int(name[1]), int(name[2]))]
    assert m_lie[:, 0] == column[(1, 1)] - column[(3, 3)]
    assert m_lie[:, 1] == column[(2, 2)] - column[(3, 3)]

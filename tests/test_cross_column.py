"""ADM §5 and Appendix A: cross-cubic (Prop 24), low-rank (Thm 25, Example 26), syzygy
(Thm 27, Example 28), flattening-entries (Thm 27's proof) and cross-row (Prop 44)."""

import json
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import sympy

from attngeom.core.claim import CheckContext
from attngeom.kernels.primefield import rank_mod_p
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg.claims import cross_column as claims_module
from attngeom.lightning_alg.claims import cross_cubic as cross_cubic_claims
from attngeom.lightning_alg.claims import syzygy as syzygy_claims
from attngeom.lightning_alg.claims.base import coordinates_of
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants import coordinate_matrices, cross_cubic, cross_row, low_rank, syzygy

CROSS_CUBIC, LOW_RANK, SYZYGY, CROSS_ROW, ENTRIES = (
    REGISTRY.get(c) for c in ("cross-cubic", "low-rank", "syzygy", "cross-row", "flattening-entries"))
P = 2**31 - 1


def statuses(verdict):
    return [part["status"] for part in verdict.evidence.get("parts", {}).values()]


# -- the examples: proved for d = 3, t = 2, every a where the theorem applies ------------

@pytest.mark.parametrize("claim,params", [
    (CROSS_CUBIC, {"a": 1}), (CROSS_CUBIC, {"a": 2}), (CROSS_CUBIC, {"a": 3}),
    (LOW_RANK, {"a": 1}), (LOW_RANK, {"a": 2}), (SYZYGY, {"a": 3}),
])
def test_proved_for_d3_t2(claim, params):
    v = claim.verify({"d": 3, "t": 2, **params}, "symbolic")
    assert v.status is Status.PROVED, v.summary
    assert set(statuses(v)) == {"proved"}


@pytest.mark.parametrize("a", [1, 2, 3])
def test_cross_row_d3_is_verified_on_every_member_as_built(a):
    """d = 3, d' = 4: 20,475 members, 8 within the symbolic budget.  The factorization is
    proved, but "proved" must cover every member as built (issue 48): each is evaluated
    exactly over F_p, so the verdict is verified."""
    v = CROSS_ROW.verify({"d": 3, "t": 2, "a": a, "dprime": 4}, "symbolic")
    assert v.status is Status.VERIFIED, v.summary
    parts = v.evidence["parts"]
    assert parts["criterion"]["status"] == "proved"
    assert parts["members"]["members_checked"] == parts["members"]["members_total"] == 20475
    assert "evaluated exactly over F_p" in parts["members"]["summary"]


def test_d3_families_are_expanded_in_full():
    for claim, a in ((CROSS_CUBIC, 1), (LOW_RANK, 1), (LOW_RANK, 2), (SYZYGY, 3)):
        members = claim.verify({"d": 3, "t": 2, "a": a}, "symbolic").evidence["parts"]["members"]
        assert not members["sampled"] and members["members_checked"] == members["members_total"]


@pytest.mark.parametrize("claim,params,hypothesis", [
    (LOW_RANK, {"d": 3, "t": 2, "a": 3}, "a < d"),
    (SYZYGY, {"d": 3, "t": 2, "a": 2}, "a >= d"),
    (SYZYGY, {"d": 1, "t": 2, "a": 1}, "d >= 2"),
    (SYZYGY, {"d": 2, "t": 2}, "ker E = 0"),
    (CROSS_CUBIC, {"d": 2, "t": 2}, "d >= 3"),
    (CROSS_CUBIC, {"d": 3, "t": 1}, "t >= 2"),
    (LOW_RANK, {"d": 3, "t": 1, "a": 1}, "t >= 2"),
    (ENTRIES, {"d": 3, "t": 1}, "t >= 2"),
    (CROSS_ROW, {"d": 3, "t": 2}, "d' > 1"),
    (CROSS_ROW, {"d": 3, "t": 2, "dprime": 3}, "d' >= d+1"),
])
def test_hypotheses_are_named(claim, params, hypothesis):
    v = claim.verify(params)
    assert v.status is Status.NOT_APPLICABLE and hypothesis in v.summary


@pytest.mark.parametrize("claim,params", [
    (CROSS_CUBIC, {"d": 4, "t": 3, "a": 2}), (LOW_RANK, {"d": 4, "t": 3, "a": 2}),
    (SYZYGY, {"d": 4, "t": 3}), (CROSS_ROW, {"d": 2, "t": 3, "dprime": 3, "a": 1}),
])
def test_exact_and_numeric_agree(claim, params):
    assert claim.verify(params, "exact").status is Status.VERIFIED
    numeric = claim.verify(params, "numeric")
    assert numeric.status is Status.CONSISTENT and numeric.max_residual < 1e-12


@pytest.mark.parametrize("claim,params", [
    (CROSS_CUBIC, {"d": 6, "t": 4}), (CROSS_CUBIC, {"d": 5, "t": 3, "a": 2}),
    (LOW_RANK, {"d": 6, "t": 4, "a": 3}), (LOW_RANK, {"d": 6, "t": 4, "a": 5}),
    (SYZYGY, {"d": 6, "t": 4}), (CROSS_ROW, {"d": 6, "t": 4, "dprime": 7}),
])
@pytest.mark.slow
def test_verified_up_to_d6_t4(claim, params):
    v = claim.verify(params, "exact")
    assert v.status is Status.VERIFIED and v.failure_probability < 1e-40


# -- rank checks: the bound is attained on the variety and exceeded off it ------------------------

def test_rank_evidence_shows_bound_attained_and_control():
    v = LOW_RANK.verify({"d": 4, "t": 2, "a": 2}, "exact")
    rank = v.evidence["parts"]["criterion"]
    assert rank["ranks_mod_p"] == [2] * 6 and rank["bound_attained"]
    assert rank["rank_at_a_random_point_off_the_variety"] == 4
    pencil = CROSS_CUBIC.verify({"d": 4, "t": 2}, "exact").evidence["parts"]["criterion"]
    assert pencil["ranks_mod_p"] == [2] * 6 and pencil["rank_at_a_random_point_off_the_variety"] == 4


# -- counts ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [3, 4, 5])
def test_prop24_count_and_distinct_members(d):
    assert sum(1 for _ in cross_cubic.mixed_minor_indices(d)) == cross_cubic.prop24_count(d)
    coords = CoordinateSystem(d, 2)
    family = cross_cubic.mixed_minor_family(coords, 1, 1, 2, cross_cubic.mixed_minor_indices(d))
    distinct = claims_module.distinct_members(family, coords, CheckContext())
    assert distinct == cross_cubic.distinct_mixed_minor_count(d)
    assert (distinct < cross_cubic.prop24_count(d)) == (d >= 4)


def test_delta_is_symmetric_in_rows_and_columns():
    coords = CoordinateSystem(4, 2)
    R, C, S = (1, 2, 3), (2, 3, 4), (1, 2, 2)
    both = cross_cubic.mixed_minor_family(coords, 1, 1, 2, [(R, C, S), (C, R, S)]).expand(coords)
    assert both[0] == both[1] != 0


@pytest.mark.parametrize("d,a", [(3, 1), (3, 2), (4, 1), (4, 3), (5, 2)])
def test_thm25_count(d, a):
    v = LOW_RANK.verify({"d": d, "t": 2, "a": a}, "exact")
    count = v.evidence["parts"]["count"]
    assert count["listed"] == count["formula_value"] == comb(comb(d + 1, 2), a + 1) * comb(d, a + 1)


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_thm27_relation_count(d):
    columns, relations, pivots = syzygy_claims.syzygy_basis(d)
    assert len(columns) == comb(comb(d + 1, 2), d) and len(pivots) == comb(2 * d - 1, d)
    assert len(relations) == syzygy.thm27_bound(d)


def test_example_28_exactly_ten_and_not_in_prop24_span():
    v = SYZYGY.verify({"d": 3, "t": 2, "a": 3}, "exact")
    parts = v.evidence["parts"]
    assert v.status is Status.VERIFIED
    assert parts["example28-count"]["summary"].startswith("ADM Example 28: exactly 10")
    span = parts["example28-span"]
    assert (span["rank_syzygy"], span["rank_prop24"], span["rank_together"]) == (10, 10, 20)
    assert span["dim_intersection"] == 0


# -- Thm 27's coefficient matrix and kernel -------------------------------------------------------

@pytest.mark.parametrize("d", [3, 4])
def test_maximal_minor_coefficients_match_sympy(d):
    v = sympy.symbols(f"v1:{d + 1}")
    phi = sympy.Matrix(syzygy.phi_matrix(list(v), 0, sympy.Rational))
    monomials = [sympy.Mul(*[v[k - 1] for k in m]) for m in syzygy.degree_d_monomials(d)]
    for R, column in zip(syzygy.maximal_minor_subsets(d), syzygy.maximal_minor_coefficients(d)):
        expected = sympy.expand(phi.extract(list(R), list(range(d))).det())
        built = sum(sympy.Rational(c.numerator, c.denominator) * monomials[m] for m, c in column.items())
        assert sympy.expand(expected - built) == 0


def test_example_28_monomial_basis_as_printed():
    names = [" ".join(f"v{k}" for k in m) for m in syzygy.degree_d_monomials(3)]
    assert names[:4] == ["v1 v1 v1", "v1 v1 v2", "v1 v1 v3", "v1 v2 v2"] and len(names) == 10


def test_kernel_relations_of_a_dense_matrix():
    rng = np.random.default_rng(3)
    dense = rng.integers(-2, 3, size=(4, 9))
    dense[:, 5] = dense[:, 1] - 2 * dense[:, 3]
    columns = [{i: Fraction(int(x)) for i, x in enumerate(col) if x} for col in dense.T]
    relations, pivots = syzygy.kernel_relations(columns)
    assert len(pivots) == rank_mod_p(dense, P) and len(relations) == 9 - len(pivots)
    for relation in relations:
        assert all(sum(c * int(dense[i, r]) for r, c in relation.items()) == 0 for i in range(4))


def test_integer_relation_is_primitive():
    assert syzygy.integer_relation({3: Fraction(1, 2), 5: Fraction(1)}) == {3: 1, 5: 2}
    assert syzygy.integer_relation({1: Fraction(-4), 2: Fraction(6)}) == {1: -2, 2: 3}


# -- Example 26 and the printed entry formula of Thm 27's proof -----------------------------------

def test_example_26_matrix_entry_for_entry(run_cli):
    code, out, _ = run_cli("show", "low-rank", "--d", 3, "--t", 2, "--a", 1, "--matrix", "--format", "json")
    shown = json.loads(out)[0]
    assert code == 0 and shown["name"] == "F_{2,1}" and len(shown["entries"]) == 6
    coords = CoordinateSystem(3, 2)
    from attngeom.lightning_alg.polynomial_io import parse_polynomial
    parsed = [[coords.labels[coords.symbol_index[parse_polynomial(e, coords)]] for e in row]
              for row in shown["entries"]]
    assert parsed == low_rank.example_26_labels()
    v = LOW_RANK.verify({"d": 3, "t": 2, "a": 1})
    assert v.evidence["parts"]["example26"]["summary"].startswith("ADM Example 26: F_{2,1} equals")


def test_example_26_transcription_mutation(monkeypatch):
    printed = list(low_rank.EXAMPLE_26_FLATTENING)
    printed[3] = ("(1,1),(2,2),(2,2)", "(2,2),(2,2),(3,1)", "(2,1),(2,2),(2,2)")
    monkeypatch.setattr(low_rank, "EXAMPLE_26_FLATTENING", tuple(printed))
    v = LOW_RANK.verify({"d": 3, "t": 2, "a": 1}, "exact")
    assert v.status is Status.REFUTED and v.counterexample["entry"] == [4, 2]


@pytest.mark.parametrize("method", ["symbolic", "exact"])
def test_printed_entry_formula_is_refuted_with_correction(method):
    v = ENTRIES.verify({"d": 3, "t": 2, "a": 3}, method)
    assert v.status is Status.REFUTED
    assert v.evidence["rows_where_printed_fails"] == ["{1,1}", "{2,2}", "{3,3}"]
    assert v.evidence["phi_factorization_fails"] == 0
    assert "omega = 2 throughout" in v.evidence["correction"]


def test_entry_formula_holds_with_omega_two(monkeypatch):
    monkeypatch.setattr(syzygy, "omega", lambda k1, k2: 2)
    assert ENTRIES.verify({"d": 3, "t": 2, "a": 2}, "symbolic").status is Status.PROVED
    assert ENTRIES.verify({"d": 3, "t": 2, "a": 2}, "exact").status is Status.VERIFIED


# -- mutations: each check says refuted -----------------------------------------------------------

def _transposed_slice(coords, row, col, context, k):
    """M^(k)[k1, k2] = y({k1, k}, k2): the wrong slice direction."""
    d = coords.d
    labels = [[coordinate_matrices.cross_column_label(row, col, context, k1, k, k2)
               for k2 in range(1, d + 1)] for k1 in range(1, d + 1)]
    return coordinate_matrices.CoordinateMatrix.of_labels(coords, labels, range(1, d + 1), range(1, d + 1))


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_cross_cubic_slices(monkeypatch, method):
    monkeypatch.setattr(cross_cubic, "cross_column_slice", _transposed_slice)
    monkeypatch.setattr(cross_cubic_claims, "cross_column_slice", _transposed_slice)
    v = CROSS_CUBIC.verify({"d": 3, "t": 2, "a": 3}, method)
    assert v.status is Status.REFUTED and statuses(v)[0] == "refuted"
    assert statuses(v)[1] == "refuted"  # the members, built from the wrong slices, fail too


def test_mutation_cross_cubic_slice_formula(monkeypatch):
    original = cross_cubic.slice_formula
    monkeypatch.setattr(cross_cubic, "slice_formula",
                        lambda A, v, k, half: [[x + x for x in row] for row in original(A, v, k, half)])
    v = CROSS_CUBIC.verify({"d": 3, "t": 2, "a": 2}, "symbolic")
    assert v.status is Status.REFUTED and "1/2 (v a_k^T + a_k v^T)" in v.summary


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_mixed_minor_drops_an_ordering(monkeypatch, method):
    monkeypatch.setattr(cross_cubic, "distinct_permutations", lambda S: (tuple(S),))
    v = CROSS_CUBIC.verify({"d": 3, "t": 2, "a": 3}, method)
    assert v.status is Status.REFUTED and statuses(v)[:2] == [
        {"symbolic": "proved", "exact": "verified", "numeric": "consistent"}[method], "refuted"]


def test_mutation_count_formulas(monkeypatch):
    monkeypatch.setattr(cross_cubic, "prop24_count", lambda d: comb(d, 3) ** 2 * comb(d + 2, 3) + 1)
    monkeypatch.setattr(low_rank, "thm25_count", lambda d, a: comb(comb(d + 1, 2), a + 1) * comb(d, a))
    for claim in (CROSS_CUBIC, LOW_RANK):
        v = claim.verify({"d": 3, "t": 2, "a": 2}, "exact")
        # the count against the listed index sets, or against the members built from them
        assert v.status is Status.REFUTED and ("listed" in v.counterexample
                                               or "members_built" in v.counterexample)


def _swapped_flattening(coords, row, col, context):
    matrix = coordinate_matrices.cross_column_flattening(coords, row, col, context)
    index = matrix.index.copy()
    index[0, 0], index[4, 1] = index[4, 1], index[0, 0]
    return coordinate_matrices.CoordinateMatrix(index, matrix.row_names, matrix.col_names, coords)


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_low_rank_flattening(monkeypatch, method):
    monkeypatch.setattr(claims_module, "cross_column_flattening", _swapped_flattening)
    v = LOW_RANK.verify({"d": 3, "t": 2, "a": 1}, method)
    assert v.status is Status.REFUTED and statuses(v)[:2] == ["refuted", "refuted"]


def test_mutation_low_rank_exact_names_a_nonzero_minor(monkeypatch):
    monkeypatch.setattr(claims_module, "cross_column_flattening", _swapped_flattening)
    v = LOW_RANK.verify({"d": 3, "t": 2, "a": 2}, "exact")
    minor = v.counterexample["nonzero_minor"]
    assert len(minor["rows"]) == len(minor["cols"]) == 3


def test_mutation_low_rank_proof_factors(monkeypatch):
    original = low_rank.rank_one_factors
    monkeypatch.setattr(low_rank, "rank_one_factors",
                        lambda K, Q, v, half: original(K, Q, v, half * 2))
    v = LOW_RANK.verify({"d": 3, "t": 2, "a": 2}, "symbolic")
    assert v.status is Status.REFUTED and "s^(r) w^(r)T" in v.summary


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_minor_index(monkeypatch, method):
    original = low_rank.low_rank_family

    def shifted(*args):
        family = original(*args)
        family.entries[0, 0, 0, 1] = family.entries[0, 0, 1, 1]  # one entry of one minor repeated
        return family

    monkeypatch.setattr(low_rank, "low_rank_family", shifted)
    v = LOW_RANK.verify({"d": 3, "t": 2, "a": 1}, method)
    assert v.status is Status.REFUTED and statuses(v)[1] == "refuted"


@pytest.fixture
def fresh_syzygy_basis():
    syzygy_claims.syzygy_basis.cache_clear()
    yield
    syzygy_claims.syzygy_basis.cache_clear()


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_syzygy_coefficient(monkeypatch, method, fresh_syzygy_basis):
    original = syzygy.integer_relation

    def perturbed(relation):
        out = original(relation)
        if len(out) > 1:
            first = next(iter(out))
            out[first] += 1
        return out

    monkeypatch.setattr(syzygy, "integer_relation", perturbed)
    v = SYZYGY.verify({"d": 3, "t": 2, "a": 3}, method)
    assert v.status is Status.REFUTED and "refuted" in statuses(v)


def test_mutation_phi(monkeypatch, fresh_syzygy_basis):
    original = syzygy.context_pair_matrix

    def wrong(d):
        rows = original(d)
        rows[1] = [(c, var, coefficient * 2) for c, var, coefficient in rows[1]]
        return rows

    monkeypatch.setattr(syzygy, "context_pair_matrix", wrong)
    v = SYZYGY.verify({"d": 3, "t": 2, "a": 3}, "symbolic")
    assert v.status is Status.REFUTED and statuses(v)[0] == "refuted"
    assert SYZYGY.verify({"d": 3, "t": 2, "a": 3}, "exact").status is Status.REFUTED


def test_mutation_kernel(monkeypatch, fresh_syzygy_basis):
    original = syzygy.kernel_relations

    def wrong(columns):
        relations, pivots = original(columns)
        relations[1] = {r: c * (2 if k else 1) for k, (r, c) in enumerate(relations[1].items())}
        return relations, pivots

    monkeypatch.setattr(syzygy, "kernel_relations", wrong)
    v = SYZYGY.verify({"d": 3, "t": 2, "a": 3}, "exact")
    assert v.status is Status.REFUTED and "E c != 0" in v.summary


def test_mutation_prop24_span(monkeypatch):
    prop24 = cross_cubic_claims.CrossCubicClaim().members
    monkeypatch.setattr(syzygy_claims.SyzygyClaim, "members",
                        lambda self, params, coords, limit=None: prop24(params, coords)[:3])
    verdict = SYZYGY.prop24_span(SYZYGY.resolve({"d": 3, "t": 2}), CoordinateSystem(3, 2))
    assert verdict.status is Status.REFUTED and verdict.counterexample["members_in_span"] == [1, 2, 3]


def _mixed_rows(original):
    def build(coords, col):
        matrix = original(coords, col)
        index = matrix.index.copy()
        index[0, 0] = index[1, 0]  # output row 1 takes one coordinate of output row 2
        return coordinate_matrices.CoordinateMatrix(index, matrix.row_names, matrix.col_names, coords)
    return build


@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_cross_row_matrix(monkeypatch, method):
    monkeypatch.setattr(cross_row, "cross_row_matrix", _mixed_rows(cross_row.cross_row_matrix))
    v = CROSS_ROW.verify({"d": 2, "t": 2, "dprime": 3}, method)
    assert v.status is Status.REFUTED and statuses(v)[0] == "refuted"


def test_mutation_cross_row_value_matrix(monkeypatch):
    original = cross_row.value_coefficients
    monkeypatch.setattr(cross_row, "value_coefficients",
                        lambda values, v: [row[:1] + row[2:] + row[1:2] for row in original(values, v)])
    v = CROSS_ROW.verify({"d": 2, "t": 2, "dprime": 3}, "symbolic")
    assert v.status is Status.REFUTED and "V M_S(A)" in v.summary


# -- nontriviality --------------------------------------------------------------------------------

def test_members_are_nonzero_and_controls_are_not_vanishing():
    coords = CoordinateSystem(3, 2)
    family = cross_cubic.mixed_minor_family(coords, 1, 1, 2, cross_cubic.mixed_minor_indices(3))
    assert all(poly != 0 for poly in family.expand(coords))
    zero = coordinate_matrices.MinorCombinationFamily(
        "zero", coords, np.full((1, 1, 2, 2), len(coords)), np.ones((1, 1)), [{}])
    from attngeom.lightning_alg.invariants.structured import check_nontrivial
    assert check_nontrivial(zero, coords, CheckContext()).status is Status.REFUTED


# -- show, the CLI and verify-poly ------------------------------------------------------------------

SHOW_CASES = [
    ("cross-cubic", ["--d", 3, "--t", 2, "--a", 2]),
    ("low-rank", ["--d", 3, "--t", 2, "--a", 1]),
    ("syzygy", ["--d", 3, "--t", 2]),
    ("cross-row", ["--d", 2, "--t", 2, "--dprime", 3, "--a", 1]),
]


@pytest.mark.parametrize("claim,args", SHOW_CASES)
def test_m2_lines_pass_verify_poly_and_perturbed_ones_fail(run_cli, claim, args):
    code, out, _ = run_cli("show", claim, *args, "--format", "m2", "--limit", 3)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    view = args + (["--all-outputs"] if claim == "cross-row" else [])
    for line in lines:
        code, verdict, _ = run_cli("verify-poly", line, *view)
        assert code == 0 and verdict.startswith("proved"), line
    first_label = lines[0].split("*")[0].lstrip("-")
    code, verdict, _ = run_cli("verify-poly", f"{lines[0]} + {first_label}^2", *view)
    assert code == 1 and verdict.startswith("refuted")


@pytest.mark.parametrize("claim,args", SHOW_CASES)
def test_show_formats_and_matrices(run_cli, claim, args):
    for fmt in ("text", "latex"):
        code, out, _ = run_cli("show", claim, *args, "--format", fmt, "--limit", 2)
        assert code == 0 and len(out.splitlines()) == 2
    code, out, _ = run_cli("show", claim, *args, "--format", "json", "--limit", 2)
    members = json.loads(out)
    assert code == 0 and len(members) == 2 and all(m["source"].startswith("ADM") for m in members)
    code, out, _ = run_cli("show", claim, *args, "--matrix", "--format", "m2")
    assert code == 0 and out.startswith("matrix{{")


def test_show_latex_matrix_of_example_26(run_cli):
    code, out, _ = run_cli("show", "low-rank", "--d", 3, "--t", 2, "--a", 1, "--matrix", "--format", "latex")
    assert code == 0 and out.startswith("F_{2,1} = \\begin{pmatrix}") and out.count("\\\\") == 5


def test_show_without_limit_refuses_huge_families(run_cli):
    code, _, err = run_cli("show", "cross-row", "--d", 4, "--t", 3, "--dprime", 5)
    assert code == 2 and "pass --limit" in err


@pytest.mark.parametrize("args", [
    ("verify", "low-rank", "--d", 3, "--t", 2, "--a", 1, "--matrix"),
    ("verify", "low-rank", "--d", 3, "--t", 2, "--a", 1, "--context", 1),
    ("verify", "cross-cubic", "--d", 0, "--t", 2),
    ("verify", "syzygy", "--d", 7, "--t", 2),
    ("show", "flattening-entries", "--d", 2, "--t", 2, "--format", "m2"),
    ("verify", "low-rank", "--d", 3, "--t", 2, "--a", 3),
])
def test_bad_input_is_one_line_exit_2(run_cli, args):
    code, _, err = run_cli(*args)
    assert code == 2 and len(err.strip().splitlines()) <= 1


def test_cross_row_implies_the_whole_output_view():
    params = CROSS_ROW.resolve({"d": 2, "t": 2, "dprime": 3})
    assert params["all_outputs"] and coordinates_of(params).all_outputs


def test_json_verdict_and_exit_codes(run_cli):
    code, out, _ = run_cli("verify", "flattening-entries", "--d", 2, "--t", 2, "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "refuted" and data["counterexample"]["entry"] == ["{1,1}", 1]
    code, out, _ = run_cli("verify", "cross-cubic", "--d", 3, "--t", 2, "--method", "exact", "--json")
    assert code == 0 and json.loads(out)["status"] == "verified"


# -- helpers --------------------------------------------------------------------------------------

def test_nonsingular_submatrix_mod_p():
    rng = np.random.default_rng(0)
    m = rng.integers(0, 5, size=(6, 4))
    m[:, 3] = m[:, 0] + m[:, 1]
    rows, cols = coordinate_matrices.nonsingular_submatrix_mod_p(m, 3, P)
    assert rank_mod_p(m[np.ix_(rows, cols)], P) == 3


def test_sampled_indices_are_distinct_and_seeded():
    from attngeom.kernels.sampling import Sampler
    draw = lambda s: (lambda: coordinate_matrices.random_subset(s, 10, 3))
    first, sampled = coordinate_matrices.sampled_indices(lambda: iter(()), 120, 20, draw(Sampler(4)))
    again, _ = coordinate_matrices.sampled_indices(lambda: iter(()), 120, 20, draw(Sampler(4)))
    assert sampled and first == again and len(set(first)) == 20
    every, sampled = coordinate_matrices.sampled_indices(lambda: iter(range(5)), 5, 20, None)
    assert not sampled and every == list(range(5))


def test_family_evaluation_matches_expansion():
    coords = CoordinateSystem(3, 2)
    family = SYZYGY.family(SYZYGY.resolve({"d": 3, "t": 2}), coords, range(10))
    rng = np.random.default_rng(1)
    y = rng.integers(0, P, size=(1, len(coords)))
    from attngeom.lightning_alg.invariants.structured import ModPArithmetic, Point, padded
    point = Point(padded(y))
    values = next(family.chunks(point, ModPArithmetic(P)))[1][0]
    from attngeom.kernels.polyeval import compile_polynomials
    compiled = compile_polynomials(family.expand(coords), coords.symbol_index)
    assert list(values) == list(compiled.evaluate_mod_p(y, P)[0])


def test_symbolic_proof_without_expanding_costly_members():
    """No member within the symbolic budget: the factorization is proved, and every member
    as built is evaluated exactly over F_p (issue 48): verified, not proved."""
    v = LOW_RANK.verify({"d": 5, "t": 2, "a": 4}, "symbolic")
    assert v.status is Status.VERIFIED
    parts = v.evidence["parts"]
    assert parts["criterion"]["status"] == "proved"
    assert "a symbolic expansion of 0 of them" in parts["members"]["summary"]
    assert parts["members"]["members_checked"] == parts["members"]["members_total"]


@pytest.mark.parametrize("claim,args", [
    ("cross-cubic", ["--d", 3, "--t", 2, "--a", 1]), ("low-rank", ["--d", 3, "--t", 2, "--a", 2]),
    ("syzygy", ["--d", 3, "--t", 2]),
])
def test_every_m2_line_of_the_d3_families_passes_verify_poly(run_cli, claim, args):
    code, out, _ = run_cli("show", claim, *args, "--format", "m2")
    assert code == 0
    for line in out.splitlines():
        code, verdict, _ = run_cli("verify-poly", line, *args, "--method", "exact")
        assert code == 0 and verdict.startswith("verified"), line

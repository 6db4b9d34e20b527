"""ADM §5.3: Veronese-type invariants (Thm 30), cross-target (Cor 32), block Veronese
(Cor 33, Remark 34), Examples 29, 31 and 36, the structured evaluation, and mutations."""

from math import comb

import numpy as np
import pytest
import sympy

from attngeom.core.claim import CheckContext
from attngeom.kernels.polyeval import compile_polynomials
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg.claims.base import coordinates_of
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariant import format_polynomial
from attngeom.lightning_alg.invariants import structured
from attngeom.lightning_alg.invariants import veronese as ver
from attngeom.lightning_alg.polynomial_io import parse_polynomial

VERONESE, CROSS, BLOCK = (REGISTRY.get(c) for c in ("veronese", "cross-target", "block-veronese"))
P = DEFAULT_PRIME

#: ADM Example 29, eq (5), typed from the paper: q = 4 d1 d2 - d3^2 (j = 1, n = 2).
D1 = "(y_((1,2),(1,2),(2,1))*y_((1,2),(2,2),(1,1)) - y_((1,2),(1,2),(1,1))*y_((1,2),(2,2),(2,1)))"
D2 = "(y_((1,2),(2,2),(2,1))*y_((2,2),(2,2),(1,1)) - y_((1,2),(2,2),(1,1))*y_((2,2),(2,2),(2,1)))"
D3 = "(y_((1,2),(1,2),(2,1))*y_((2,2),(2,2),(1,1)) - y_((1,2),(1,2),(1,1))*y_((2,2),(2,2),(2,1)))"
EXAMPLE_29 = f"4*{D1}*{D2} - {D3}^2"


def _part(verdict, name):
    return verdict.evidence["parts"][name]


# -- the construction -----------------------------------------------------------------

def test_acyclic_map_examples_as_printed():
    # ADM Example 31 and Example 36
    assert ver.acyclic_map((2, 0)) == (1, 1)
    assert ver.acyclic_map((0, 2)) == (2, 2)
    assert ver.acyclic_map((1, 1)) == (1, 2)
    assert ver.acyclic_map((1, 2, 0)) == (1, 2, 2)


@pytest.mark.parametrize("r", [2, 3, 4, 5])
def test_acyclic_map_has_the_fibres_and_no_long_cycles(r):
    for alpha in ver.multi_indices(r, r):
        f = ver.acyclic_map(alpha)
        assert tuple(f.count(m) for m in range(1, r + 1)) == alpha
        for start in range(1, r + 1):   # iterating f ends in a fixed point
            x = start
            for _ in range(r):
                x = f[x - 1]
            assert f[x - 1] == x


def test_multi_indices_in_example_36_order():
    assert ver.multi_indices(3, 3)[:6] == ver.EXAMPLE36_C3[0]
    assert len(ver.multi_indices(4, 4)) == comb(7, 4)


def test_example_31_matrices_as_printed():
    coords = CoordinateSystem(2, 2)
    for alpha, (f, printed) in ver.EXAMPLE31.items():
        key = ver.VeroneseCoordinate((1, 2), (2, 1), alpha)
        assert key.f == f
        assert key.matrix(1, 1, 2) == ver.labelled_matrix(printed, coords)


def test_example_36_matrix_as_printed():
    coords = CoordinateSystem(3, 2)
    key = ver.VeroneseCoordinate((1, 2, 3), (1, 2, 3), (1, 2, 0))
    f, printed = ver.example36_matrix(2, 1)
    assert key.f == f == (1, 2, 2)
    assert key.matrix(1, 1, 2) == ver.labelled_matrix(printed, coords)


# -- ADM Examples 29 / 31 / 36 through the CLI ------------------------------------------

def test_show_latex_has_example_29_quartic(run_cli):
    code, out, _ = run_cli("show", "veronese", "--d", 2, "--t", 2, "--a", 2, "--format", "latex")
    coords = CoordinateSystem(2, 2)
    q = format_polynomial(parse_polynomial(EXAMPLE_29, coords), coords, "latex")
    assert code == 0
    assert f"q(y) = 4\\,d_1(y)\\,d_2(y) - d_3(y)^{{2}} = {q} \\\\" in out.splitlines()
    # and the catalecticant minor of Thm 30 prints the same quartic
    assert out.splitlines()[-1] == (
        "\\det\\begin{pmatrix}D_{(2,0)}(y) & D_{(1,1)}(y) \\\\ D_{(1,1)}(y) & D_{(0,2)}(y)"
        f"\\end{{pmatrix}} = {q} \\\\")


def test_show_m2_is_example_29_quartic(run_cli):
    code, out, _ = run_cli("show", "veronese", "--d", 2, "--t", 2, "--a", 2, "--format", "m2")
    coords = CoordinateSystem(2, 2)
    assert code == 0 and len(out.splitlines()) == 1
    assert sympy.expand(parse_polynomial(out.strip(), coords)
                        - parse_polynomial(EXAMPLE_29, coords)) == 0


def test_show_example_31_with_L_21(run_cli):
    code, out, _ = run_cli("show", "veronese", "--d", 2, "--t", 2, "--a", 2,
                           "--target-indices", "2,1")
    assert code == 0
    assert ("M_(2,0)(y) = [y_{(1,2),(1,2),(2,1)}, y_{(1,2),(1,2),(1,1)}; "
            "2 y_{(1,2),(2,2),(2,1)}, 2 y_{(1,2),(2,2),(1,1)}]   f = (1,1)") in out
    assert ("M_(0,2)(y) = [2 y_{(1,2),(2,2),(2,1)}, 2 y_{(1,2),(2,2),(1,1)}; "
            "y_{(2,2),(2,2),(2,1)}, y_{(2,2),(2,2),(1,1)}]   f = (2,2)") in out


def test_show_example_36_D_120(run_cli):
    code, out, _ = run_cli("show", "veronese", "--d", 3, "--t", 2, "--a", 3, "--r", 3)
    assert code == 0
    assert ("M_(1,2,0)(y) = [y_{(1,2),(1,2),(1,1)}, y_{(1,2),(1,2),(2,1)}, y_{(1,2),(1,2),(3,1)}; "
            "y_{(2,2),(2,2),(1,1)}, y_{(2,2),(2,2),(2,1)}, y_{(2,2),(2,2),(3,1)}; "
            "2 y_{(2,2),(3,2),(1,1)}, 2 y_{(2,2),(3,2),(2,1)}, 2 y_{(2,2),(3,2),(3,1)}]   "
            "f = (1,2,2)") in out
    assert "(= v_1*v_2^2 det A_(K,L) on the variety)" in out
    assert "D_(3,0,0)*D_(1,2,0) - D_(2,1,0)*D_(2,1,0) = " in out


def test_show_json_structure(run_cli):
    import json
    code, out, _ = run_cli("show", "cross-target", "--d", 3, "--t", 2, "--format", "json",
                           "--limit", 2)
    data = json.loads(out)
    assert code == 0 and len(data["invariants"]) == 2
    assert data["counts"]["minors"]["generated"] == data["counts"]["minors"]["formula"] == 27
    assert data["veronese_coordinates"][0]["matrix"][0][0]["factor"] == 1


# -- verdicts ---------------------------------------------------------------------------

@pytest.mark.parametrize("claim", [VERONESE, CROSS, BLOCK])
@pytest.mark.parametrize("a", [2, 3])
def test_proved_for_d3_t2(claim, a):
    v = claim.verify({"d": 3, "t": 2, "a": a})
    assert v.status is Status.PROVED and v.method == "symbolic"


@pytest.mark.parametrize("claim", [VERONESE, CROSS, BLOCK])
def test_a1_is_not_applicable(claim):
    v = claim.verify({"d": 3, "t": 2, "a": 1})
    assert v.status is Status.NOT_APPLICABLE and "2 <= r <= min(a, d)" in v.summary


def test_veronese_parts_and_examples_proved():
    v = VERONESE.verify({"d": 3, "t": 2, "a": 3})
    assert _part(v, "example31")["status"] == "proved"
    assert _part(v, "example36")["status"] == "proved"
    assert _part(v, "thm30-formula")["status"] == "proved"
    counts = _part(v, "count")
    assert counts["minors"]["generated"] == counts["minors"]["formula"] == 9 + 45
    # ADM Example 36: "9 minimal quartics come from Theorem 30" (r = 2, d = 3)
    v = VERONESE.verify({"d": 3, "t": 2, "r": 2}, "exact")
    assert _part(v, "count")["minors"]["generated"] == 9


def test_example_36_span_of_all_quartics_is_45():
    v = BLOCK.verify({"d": 3, "t": 2, "a": 3})
    part = _part(v, "example36-span")
    assert part["status"] == "proved" and part["rank_over_Q"] == 45 and part["quartics"] == 81


@pytest.mark.parametrize("claim,d,t,a", [(VERONESE, 6, 4, 6), (CROSS, 5, 3, 4), (BLOCK, 4, 4, 4),
                                         (VERONESE, 4, 2, 3)])
def test_exact_verification_larger_cases(claim, d, t, a):
    v = claim.verify({"d": d, "t": t, "a": a}, "exact")
    assert v.status is Status.VERIFIED and v.failure_probability < 1e-30


@pytest.mark.slow
@pytest.mark.parametrize("claim", [CROSS, BLOCK])
def test_exact_verification_d6_t4(claim):
    v = claim.verify({"d": 6, "t": 4, "a": 6}, "exact")
    assert v.status is Status.VERIFIED


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_numeric_consistent(backend):
    v = VERONESE.verify({"d": 4, "t": 2, "a": 4}, "numeric", CheckContext(backend=backend))
    assert v.status is Status.CONSISTENT and v.max_residual < 1e-12
    assert _part(v, "vanishing")["control_min_relative"] > 1e-6


def test_remark_34_split_2():
    v = BLOCK.verify({"d": 4, "t": 2, "a": 4, "split": 2}, "exact")
    assert v.status is Status.VERIFIED
    assert _part(v, "count")["minors"]["generated"] == ver.block_minor_count(4, [3, 4], 2)
    assert BLOCK.verify({"d": 3, "t": 2, "r": 2, "split": 2}).status is Status.NOT_APPLICABLE


def test_fixed_indices_and_counts():
    v = VERONESE.verify({"d": 4, "t": 2, "context_indices": (3, 1, 4),
                         "target_indices": (2, 4, 1)}, "exact")
    assert v.status is Status.VERIFIED
    assert _part(v, "count")["minors"]["generated"] == comb(3, 2) * comb(comb(4, 2), 2)


@pytest.mark.parametrize("d", [2, 3, 4, 5, pytest.param(6, marks=pytest.mark.slow)])
def test_count_formulas_match_generated_lists(d):
    degrees = list(range(2, d + 1))
    blocks = ver.veronese_blocks(d, degrees)
    assert sum(b.minor_count for b in blocks) == ver.veronese_minor_count(d, degrees)
    keys = {e for b in blocks for line in b.entries for e in line}
    assert len(keys) == ver.coordinate_count(d, degrees)
    cross = [r for r in degrees if r < d]
    assert sum(b.minor_count for b in ver.cross_target_blocks(d, cross)) == \
        ver.cross_target_minor_count(d, cross)
    for s in range(1, d):
        assert sum(b.minor_count for b in ver.block_veronese_blocks(d, degrees, s)) == \
            ver.block_minor_count(d, degrees, s)


def test_hypotheses_and_bad_input(run_cli):
    assert VERONESE.verify({"d": 3, "t": 1}).status is Status.NOT_APPLICABLE
    v = VERONESE.verify({"d": 3, "t": 2, "a": 3, "r": 4})
    assert v.status is Status.NOT_APPLICABLE and v.summary.endswith("got r=4, a=3, d=3")
    assert VERONESE.verify({"d": 3, "t": 2, "context_indices": (1, 1)}).status \
        is Status.NOT_APPLICABLE
    v = CROSS.verify({"d": 3, "t": 2, "r": 3})
    assert v.status is Status.NOT_APPLICABLE and "r < d" in v.summary
    for args in (("--context-indices", "1,4"), ("--r", 2, "--context-indices", "1,2,3"),
                 ("--target-indices", "x")):
        code, out, err = run_cli("verify", "veronese", "--d", 3, "--t", 2, *args)
        assert code == 2 and out == "" and err.count("\n") == 1
    code, _, err = run_cli("show", "veronese", "--d", 6, "--t", 2)
    assert code == 2 and "use --limit" in err
    code, _, err = run_cli("verify", "veronese", "--d", 6, "--t", 2, "--method", "symbolic")
    assert code == 2 and "use --method exact" in err


# -- show and verify evaluate the same polynomials -----------------------------------------

@pytest.mark.parametrize("claim,params", [(VERONESE, {"d": 3, "t": 2, "a": 3}),
                                          (CROSS, {"d": 3, "t": 3, "a": 2, "col": 2}),
                                          (BLOCK, {"d": 3, "t": 2, "split": 1})])
def test_structured_evaluation_equals_expanded_polynomials(claim, params):
    params = claim.resolve(params)
    coords = coordinates_of(params)
    family = claim.family(params, coords)
    polys = family.expand(coords)
    y = Sampler(4).prime_field((3, len(coords)), P)
    expected = compile_polynomials(polys, coords.symbol_index).evaluate_mod_p(y, P)
    point = structured.Point(structured.padded(y))
    got = np.concatenate([v for _, v in family.chunks(point, structured.ModPArithmetic(P))], 1)
    assert np.array_equal(got, expected) and all(p != 0 for p in polys)


def test_m2_lines_round_trip_and_perturbed_member_is_refuted(run_cli):
    dims = ("--d", 3, "--t", 2, "--a", 3)
    for claim in ("veronese", "cross-target", "block-veronese"):
        code, out, _ = run_cli("show", claim, *dims, "--r", 2, "--format", "m2", "--limit", 3)
        lines = out.splitlines()
        assert code == 0 and len(lines) == 3
        for line in lines:  # '--' ends the options: a line may start with '-'
            code, verdict, _ = run_cli("verify-poly", *dims, "--method", "exact", "--", line)
            assert code == 0 and verdict.startswith("verified")
    perturbed = lines[0].replace(" - ", " - 2*", 1)
    assert perturbed != lines[0]
    code, verdict, _ = run_cli("verify-poly", *dims, "--method", "exact", "--", perturbed)
    assert code == 1 and verdict.startswith("refuted")


# -- mutations ----------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["symbolic", "exact", "numeric"])
def test_mutation_no_omega_unscaling_is_refuted(monkeypatch, method):
    monkeypatch.setattr(ver, "omega", lambda u, v: 1)
    v = VERONESE.verify({"d": 3, "t": 2, "a": 3}, method)
    assert v.status is Status.REFUTED
    assert v.counterexample["member"]["source"] == "ADM Thm 30"


def test_mutation_cyclic_map_is_refuted(monkeypatch):
    """f with a 2-cycle for alpha = (1,1): both rows get the pair {k1, k2}, D_(1,1) = 0."""
    real = ver.acyclic_map
    monkeypatch.setattr(ver, "acyclic_map", lambda alpha: (2, 1) if alpha == (1, 1) else real(alpha))
    v = VERONESE.verify({"d": 3, "t": 2, "a": 2}, "exact")
    assert v.status is Status.REFUTED
    assert v.counterexample["field"] == "Q" and v.counterexample["value"] != "0"


def test_mutation_swapped_target_index_is_refuted(monkeypatch):
    real = ver.VeroneseCoordinate.matrix

    def swapped(self, row, col, context):  # the last row reads the target columns reversed
        m = real(self, row, col, context)
        return m[:-1] + [m[-1][::-1]]

    monkeypatch.setattr(ver.VeroneseCoordinate, "matrix", swapped)
    assert VERONESE.verify({"d": 3, "t": 2, "a": 3}, "exact").status is Status.REFUTED


def test_mutation_example_29_coefficient_is_refuted(monkeypatch):
    real = ver.example29_quartic
    monkeypatch.setattr(ver, "example29_quartic", lambda coords: real(coords) + sympy.Rational(1, 2)
                        * ver.example29_minors(coords)[2] ** 2)
    v = VERONESE.verify({"d": 2, "t": 2, "a": 2})
    assert v.status is Status.REFUTED and "Examples 29/31" in v.summary


def test_mutation_example_36_layout_is_refuted(monkeypatch):
    monkeypatch.setattr(ver, "EXAMPLE36_C3", [row[::-1] for row in ver.EXAMPLE36_C3])
    v = VERONESE.verify({"d": 3, "t": 2, "a": 3})
    assert v.status is Status.REFUTED and "Example 36" in v.summary


def test_mutation_count_formula_is_refuted(monkeypatch):
    monkeypatch.setattr(ver, "cross_target_minor_count", lambda *args: 26)
    v = CROSS.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.REFUTED and v.counterexample["formula"] == 26


def test_mutation_trivial_member_is_refuted(monkeypatch):
    """A cross-target block comparing L with itself has only zero minors."""
    monkeypatch.setattr(ver, "cross_target_block",
                        lambda K, L, L2, r, real=ver.cross_target_block: real(K, L, L, r))
    v = CROSS.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.REFUTED and "zero polynomial" in v.summary


def test_every_member_has_the_printed_degree():
    coords = CoordinateSystem(3, 2)
    family = ver.VeroneseMinors("t", coords, 2, ver.veronese_blocks(3, [2, 3]))
    for poly, k in zip(family.expand(coords), range(family.size)):
        r = family.describe(k)["r"]
        assert sympy.Poly(poly).is_homogeneous and sympy.Poly(poly).total_degree() == 2 * r


def test_all_alpha_identity_holds_exactly_for_r4():
    coords = CoordinateSystem(4, 2)
    keys = [ver.VeroneseCoordinate((4, 2, 1, 3), (2, 3, 4, 1), al) for al in ver.multi_indices(4, 4)]
    identity = ver.VeroneseIdentity(ver.VeroneseCoordinates(coords, 2, keys))
    v = structured.check_vanishing(identity, coords, 4, "symbolic", CheckContext())
    assert v.status is Status.PROVED and v.checked == comb(7, 4)


def test_r_range_default_is_every_r():
    params = VERONESE.resolve({"d": 5, "t": 2, "a": 4})
    assert VERONESE.degrees(params) == [2, 3, 4]
    assert CROSS.degrees(CROSS.resolve({"d": 4, "t": 2})) == [2, 3]
    assert BLOCK.degrees(BLOCK.resolve({"d": 4, "t": 2, "split": 2})) == [3, 4]

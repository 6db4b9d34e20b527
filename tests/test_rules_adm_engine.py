"""Issue 48, ADM / HMK engine survivors: the claim ``ideal-table`` (the ideal engine against
whole evaluation matrices), the checks added to the engine modules, and the behaviours of
the modules that no verdict reads (rendering, messages, input bounds)."""

from __future__ import annotations

import numpy as np
import pytest

from attngeom.core.claim import CheckContext
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims.ideal_table import DirectIdeal, IdealTableClaim
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.family_check import substituted_terms_bound
from attngeom.lightning_alg.ideal import attribution
from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix
from attngeom.lightning_alg.invariants.structured import check_nontrivial


# -- ideal-table ------------------------------------------------------------------------------

def test_direct_reference_gives_adm_example_26_counts():
    """(3,2,1): 10 linear forms and 45 quadrics (ADM Example 26), from the whole matrices."""
    coords = CoordinateSystem(3, 2)
    direct = DirectIdeal(coords, 1, 2**31 - 1, 0)
    assert len(coords) == 28
    assert 28 - direct.hilbert(1) == len(direct.linear_forms()) == 10
    dim_j2 = 406 - direct.hilbert(2)
    assert dim_j2 - direct.linear_products(2)[0] == 45


def test_ideal_table_verifies_its_examples():
    claim = IdealTableClaim()
    verdict = claim.verify(dict(claim.examples[0]))
    assert verdict.status is Status.VERIFIED
    rows = verdict.evidence["parts"]["attribution"]["rows"]
    assert {r["family"]: r["span"] for r in rows} == {"linear": 10, "low-rank": 45}


def test_ideal_table_refutes_a_wrong_echelon_form(monkeypatch):
    """An elimination that keeps a dependent row over-counts a family's span."""
    real = attribution.echelon_rows

    def wrong(matrix, prime):
        rows = real(matrix, prime)
        return np.concatenate([rows, rows[:1] * 2 % prime]) if len(rows) else rows
    monkeypatch.setattr(attribution, "echelon_rows", wrong)
    claim = IdealTableClaim()
    verdict = claim.verify(dict(claim.examples[0]))
    assert verdict.status is Status.REFUTED and "the direct ranks give" in verdict.summary


# -- the checks added to the engine modules ---------------------------------------------------

def test_coordinate_matrix_needs_one_name_per_row_and_column():
    coords = CoordinateSystem(2, 2)
    index = np.arange(4, dtype=np.int64).reshape(2, 2)
    CoordinateMatrix(index, ("1", "2"), ("a", "b"), coords)
    with pytest.raises(ValueError):
        CoordinateMatrix(index, ("2",), ("a", "b"), coords)
    with pytest.raises(ValueError):
        CoordinateMatrix(index, ("1", "2", "3"), ("a", "b"), coords)


def test_nontriviality_needs_every_member_evaluated():
    """A family whose chunks skip members cannot be called nontrivial."""
    from attngeom.lightning_alg.claims.low_rank import LowRankClaim
    claim = LowRankClaim()
    params = claim.resolve({"d": 3, "t": 2, "a": 1})
    coords = CoordinateSystem(3, 2)
    family, _ = claim.member_sample(params, coords, CheckContext())
    assert check_nontrivial(family, coords, CheckContext()).status is Status.PROVED

    class Short:
        name, size = family.name, family.size

        def chunks(self, point, arith):
            for offset, values in family.chunks(point, arith):
                yield offset, values[:, :-1]
    with pytest.raises(RuntimeError):
        check_nontrivial(Short(), coords, CheckContext())


# -- behaviours no verdict reads -------------------------------------------------------------

def test_substitution_bound_adds_over_monomials_of_mixed_degree():
    """verify-poly's bound for y1 y2 - y3 is the bound for y1 y2 plus the bound for y3 (the
    monomial table pads y3 with the index N, which is no coordinate)."""
    from attngeom.lightning_alg.polynomial_io import parse_polynomial
    coords = CoordinateSystem(2, 2)
    y = [label.m2() for label in coords.labels[:3]]
    bound = lambda text: substituted_terms_bound([parse_polynomial(text, coords)], coords, 2)
    assert bound(f"{y[0]}*{y[1]} - {y[2]}") == bound(f"{y[0]}*{y[1]}") + bound(y[2]) > 0


def test_latex_matrix_is_a_pmatrix_with_every_row():
    from attngeom.lightning_alg.invariants.coordinate_matrices import cross_column_flattening
    matrix = cross_column_flattening(CoordinateSystem(3, 2), 1, 1, 2)
    text = matrix.render("latex")
    assert text.startswith("\\begin{pmatrix}\n") and text.endswith("\n\\end{pmatrix}")
    assert text.count("\\\\\n") == 6 - 1 and text.count(" & ") == 6 * 2


def test_a_dependent_line_in_a_list_is_named_by_its_number():
    from attngeom.lightning_alg.invariants.resultant_lines import lines_violation, parse_lines
    lines = parse_lines("1,2,-1:2,-1,3;1,1,1:2,2,2", 3)
    assert lines_violation(lines, 3).startswith("line 2: ")


def test_the_largest_number_of_heads_is_accepted():
    from attngeom.core.errors import BadInput
    from attngeom.lightning_alg.models.variant import MAX_HEADS, Variant
    assert Variant(heads=MAX_HEADS).heads == MAX_HEADS
    with pytest.raises(BadInput):
        Variant(heads=MAX_HEADS + 1)
    assert Variant().plain and not Variant(heads=2).plain

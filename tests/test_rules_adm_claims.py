"""Issue 48, the survivors of the mutation campaign in ``attngeom/lightning_alg/claims``: what
the claims now check so that those mutants, and the real bugs they stand for, are noticed."""

import sympy
import pytest

from attngeom.core.claim import CheckContext
from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY
from attngeom.lightning_alg.claims.base import coordinates_of
from attngeom.lightning_alg.claims.cross_column import matrix_identity_verdict
from attngeom.lightning_alg.invariants import cross_cubic

CROSS_CUBIC = REGISTRY.get("cross-cubic")


# -- a matrix identity compares shapes, not only the entries zip() pairs up ----------------------

def test_matrix_identity_refutes_a_side_with_a_row_missing():
    x, y = sympy.symbols("x y")
    full = [[x, y], [y, x], [x + y, 0]]
    assert matrix_identity_verdict("M = M", full, [row[:] for row in full], "abc", "pq", "Q") is None
    short = matrix_identity_verdict("M = M", full, full[:2], "abc", "pq", "Q")
    assert short.status is Status.REFUTED and "3 rows" in short.summary and "2 rows" in short.summary
    narrow = matrix_identity_verdict("M = M", full, [row[:1] for row in full], "abc", "pq", "Q")
    assert narrow.status is Status.REFUTED


# -- ADM Prop 24's symbolic proof covers every slice the pencil is made of -----------------------

@pytest.mark.parametrize("drop", ["matrix", "formula"])
def test_cross_cubic_proof_refutes_when_a_slice_is_left_out(monkeypatch, drop):
    """The slice formula is checked on the whole stack of the d slices (the matrix the members
    and the pencil are built from) against the stacked formula: the last slice missing from
    either side is a refutation (before, the loop over k could stop one short and still prove)."""
    params = CROSS_CUBIC.resolve({"d": 4, "t": 3, "a": 2})
    coords = coordinates_of(params)
    assert CROSS_CUBIC.factorization_proof(params, coords).status is Status.PROVED
    if drop == "matrix":
        built = cross_cubic.stacked_slices
        monkeypatch.setattr(cross_cubic, "stacked_slices",
                            lambda c, *args: _drop_rows(built(c, *args), c.d))
    else:
        formula = cross_cubic.slice_formula
        monkeypatch.setattr(cross_cubic, "slice_formula",
                            lambda A, v, k, half: [] if k == len(v) else formula(A, v, k, half))
    verdict = CROSS_CUBIC.factorization_proof(params, coords)
    assert verdict.status is Status.REFUTED and "rows" in verdict.summary


def _drop_rows(matrix, d):
    """The stacked slices less the last slice (its d rows)."""
    from attngeom.lightning_alg.invariants.coordinate_matrices import CoordinateMatrix
    return CoordinateMatrix(matrix.index[:-d], matrix.row_names[:-d], matrix.col_names, matrix.coords)


# -- a sweep counts only points inside the claim's hypotheses ------------------------------------

def test_sweeps_refuse_a_grid_point_outside_the_hypotheses(monkeypatch):
    """HMK Cor 3.8 needs a_i >= 2, multihead-mixing H <= min(dd', d^2): a grid point that
    breaks them (a slip in the grid literal) stops the sweep instead of counting as evidence."""
    from attngeom.lightning_alg.claims import hmk
    from attngeom.lightning_alg.hmk.dimension import Architecture
    from attngeom.lightning_alg.models.variant import Variant
    context = CheckContext(seed=0)
    monkeypatch.setattr(hmk, "DEEP_GRID", (((3, 3), (2,)), ((2, 2, 2, 2), (2, 1, 2))))
    with pytest.raises(AssertionError, match="1 of the sweep's 2 points"):
        REGISTRY.get("dimension-deep").check("exact", {"d": None}, context)
    mixing = REGISTRY.get("multihead-mixing")
    monkeypatch.setattr(mixing, "grid", ((Architecture((2, 2), (2,), 2), Variant(5)),))
    with pytest.raises(AssertionError, match="outside its hypotheses"):
        mixing.check("exact", {"d": None}, context)

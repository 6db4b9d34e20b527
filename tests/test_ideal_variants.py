"""attngeom ideal --heads / --skip / --causal (issue 24, ask 3)."""

import numpy as np
import pytest

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.claims import family_claims
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.ideal import variant_ideal
from attngeom.lightning_alg.ideal.report import compute_ideal
from attngeom.lightning_alg.models.variant import Variant


@pytest.mark.parametrize("variant,col", [
    (Variant(2), 2), (Variant(1, "identity"), 1), (Variant(1, "linear"), 3),
    (Variant(1, causal=True), 2), (Variant(2, "linear", True), 1)])
def test_coordinates_agree_with_the_network_expansion(variant, col):
    check = variant_ideal.network_coefficients_agree(variant, 2, 3, 2, col)
    assert check["agree"] and check["monomials"] > 0


def test_a_wrong_mask_disagrees_with_the_network(monkeypatch):
    """Mutation: keeping the contexts n <= j + 1 instead of n < j."""
    def wrong(coords):
        return np.array([int(lab.is_single or lab.context <= coords.col + 1)
                         for lab in coords.labels], dtype=np.int64)
    monkeypatch.setattr(variant_ideal, "causal_keep", wrong)
    assert not variant_ideal.network_coefficients_agree(Variant(causal=True), 2, 3, 2, 1)["agree"]


def _minimal(report):
    return report.by_degree("minimal_generators", nonzero=True)


def test_identity_skip_table_is_the_plain_table_plus_its_linear_generators():
    plain, _ = compute_ideal(2, 2, 2, max_degree=4)
    skip, _ = compute_ideal(2, 2, 2, max_degree=4, variant=Variant(1, "identity"))
    assert _minimal(skip) == _minimal(plain) == {"1": 4, "4": 1}     # ADM Example 12
    assert skip.dimension["skip"]["generators"] == ["z_(1,1) - 1", "z_(2,1)"]
    assert skip.dimension["network_coefficients"]["agree"]


def test_causal_column_j_is_the_variety_of_t_equal_j():
    causal, _ = compute_ideal(2, 3, 2, col=2, max_degree=4, variant=Variant(causal=True))
    plain, _ = compute_ideal(2, 2, 2, col=2, max_degree=4)
    zero = causal.ambient_dimension - plain.ambient_dimension
    assert zero == CoordinateSystem.size_of(2, 3) - CoordinateSystem.size_of(2, 2) == 6
    assert causal.variety_dimension == plain.variety_dimension
    assert causal.by_degree("hilbert_function") == plain.by_degree("hilbert_function")
    assert causal.by_degree("minimal_generators")["1"] == plain.by_degree("minimal_generators")["1"] + zero


def test_two_heads_lose_adm_quadrics_and_gain_cubics():
    """d = 3, t = 2, a = 1 (ADM Example 26: 10 linear, 45 quadrics, 10 cubics): with two
    heads the join has dimension 14 = 2 x 7, ADM's quadrics and cubics do not vanish on it,
    and 20 cubics appear that no registered family explains."""
    report, _ = compute_ideal(3, 2, 1, max_degree=3,
                              families=family_claims("low-rank,cross-cubic,linear"),
                              variant=Variant(2))
    assert report.variety_dimension == report.dimension["join_expected"]["value"] == 14
    assert _minimal(report) == {"1": 10, "3": 20}
    rows = {(t["degree"], r["id"]): r for t in report.attribution["degrees"] for r in t["families"]}
    assert rows[(2, "low-rank")]["outside_J"] == 45 and rows[(3, "cross-cubic")]["outside_J"] == 10
    assert rows[(1, "linear")]["outside_J"] == 0
    one, _ = compute_ideal(3, 2, 1, max_degree=3)                  # mutation: one head
    assert _minimal(one) != _minimal(report)


def test_bad_variant_input():
    for kwargs in ({"heads": 0}, {"skip": "foo"}):
        with pytest.raises(BadInput):
            compute_ideal(2, 2, 2, max_degree=2, variant=Variant(**kwargs))
    with pytest.raises(BadInput, match="--m2"):
        compute_ideal(2, 2, 2, max_degree=2, keep=True, variant=Variant(2))

"""The families of issue 28 (ask 3) that explain ADM's unexplained generators:
``minor-relations`` (relations among the k x k minors of F_{n,j}, generalizing ADM Thm 27)
and ``pencil-pair`` (the 2+2 minors of [M(u); M(w)])."""

from math import comb

import pytest

from attngeom.core.verdict import Status
from attngeom.lightning_alg.claims import REGISTRY, family_claims
from attngeom.lightning_alg.claims import minor_relations as relation_claims
from attngeom.lightning_alg.claims.syzygy import syzygy_basis
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.ideal.report import compute_ideal
from attngeom.lightning_alg.invariants import minor_relations, pencil_pair

RELATIONS, PAIR = REGISTRY.get("minor-relations"), REGISTRY.get("pencil-pair")


def parts(verdict):
    return {name: part["status"] for name, part in verdict.evidence["parts"].items()}


def test_minor_relations_proved_at_4_2_4_with_the_issue_counts():
    v = RELATIONS.verify({"d": 4, "t": 2, "a": 4}, "symbolic")
    assert v.status is Status.PROVED and set(parts(v).values()) == {"proved"}
    count = v.evidence["parts"]["count"]
    assert (count["row_sets"], count["rank_E_over_Q"], count["relations_per_column_set"],
            count["column_sets"], count["members"]) == (120, 70, 50, 4, 200)
    members = v.evidence["parts"]["members"]
    assert not members["sampled"] and members["members_checked"] == 200


def test_minor_relations_at_k_equal_d_are_thm27():
    """k = d: one S, one C, and E_d is ADM Thm 27's E (10 relations at d = 3, 175 at d = 4)."""
    for d in (3, 4):
        basis, pivots, rows = minor_relations.relations(d, d)
        assert len(basis) == len(syzygy_basis(d)[1]) and rows == comb(2 * d - 1, d)
    assert len(minor_relations.relations(4, 2)[0]) == 0  # k = 2: no quadric relation


@pytest.mark.parametrize("params,hypothesis", [
    ({"d": 4, "t": 2, "minor_size": 4}, "3 <= k < d"),
    ({"d": 4, "t": 2, "a": 2}, "k <= a"),
    ({"d": 4, "t": 1}, "t >= 2"),
])
def test_minor_relations_hypotheses(params, hypothesis):
    v = RELATIONS.verify(params, "exact")
    assert v.status is Status.NOT_APPLICABLE and hypothesis in v.summary


@pytest.mark.parametrize("method", ["exact", "numeric"])
def test_mutation_minor_relation_perturbed(monkeypatch, method):
    """One coefficient of every relation moved by 1: the members no longer vanish."""
    original = minor_relations.integer_relation

    def perturbed(relation):
        scaled = dict(original(relation))
        first = next(iter(scaled))
        scaled[first] += 1
        return scaled

    monkeypatch.setattr(minor_relations, "integer_relation", perturbed)
    v = RELATIONS.verify({"d": 4, "t": 2, "a": 4}, method)
    assert v.status is Status.REFUTED and parts(v)["members"] == "refuted"


def test_mutation_minor_relation_kernel(monkeypatch):
    """A wrong kernel vector (E_k c != 0) refutes the criterion itself."""
    columns, basis, pivots, rows = relation_claims.relation_basis(4, 3)
    number = next(i for i, relation in enumerate(basis) if len(relation) > 1)
    wrong = [dict(relation) for relation in basis]   # a one-term relation is a vanishing minor
    wrong[number][min(wrong[number])] += 1
    monkeypatch.setattr(relation_claims, "relation_basis", lambda d, k: (columns, wrong, pivots, rows))
    v = RELATIONS.verify({"d": 4, "t": 2, "a": 4}, "exact")
    assert v.status is Status.REFUTED and parts(v)["criterion"] == "refuted"


def test_pencil_pair_verified_at_4_2_4():
    v = PAIR.verify({"d": 4, "t": 2, "a": 4}, "exact")
    assert v.status is Status.VERIFIED and set(parts(v).values()) == {"verified", "proved"}
    assert v.evidence["parts"]["count"]["listed"] == pencil_pair.pair_count(4) == 1686
    assert v.evidence["parts"]["criterion"]["ranks_mod_p"] == [3] * 6


def test_pencil_pair_highest_weight_example_is_a_member():
    """The issue's example: rows 1, 2 of M_1 on rows 1, 2 of M_2 (R1 = R2 = {1,2}, S1 = {1,1},
    S2 = {2,2}) is one determinant, a member."""
    first, second = ((1, 2), (1, 1)), ((1, 2), (2, 2))
    assert pencil_pair.terms(first, second) == [((1, 1), (2, 1), (1, 2), (2, 2))]
    assert ((1, 2, 3, 4), first, second) in set(pencil_pair.pair_indices(4))


def test_pencil_pair_needs_d4():
    v = PAIR.verify({"d": 3, "t": 2}, "exact")
    assert v.status is Status.NOT_APPLICABLE and "d >= 4" in v.summary


@pytest.mark.parametrize("method", ["exact", "numeric"])
def test_mutation_pencil_pair_drops_an_ordering(monkeypatch, method):
    """Without the sum over Perm(S1) a coefficient of the (u, w)-minor is not a member."""
    monkeypatch.setattr(pencil_pair, "distinct_permutations", lambda S: (tuple(S),))
    v = PAIR.verify({"d": 4, "t": 2, "a": 4}, method)
    assert v.status is Status.REFUTED and parts(v)["members"] == "refuted"


def test_mutation_pencil_pair_rank_bound(monkeypatch):
    monkeypatch.setattr(type(PAIR), "rank_bound", lambda self, params: 2)
    v = PAIR.verify({"d": 4, "t": 2, "a": 4}, "exact")
    assert v.status is Status.REFUTED and parts(v)["criterion"] == "refuted"


def test_show_m2_lines_are_accepted_by_verify_poly(run_cli):
    for claim in ("minor-relations", "pencil-pair"):
        code, out, _ = run_cli("show", claim, "--d", 4, "--t", 2, "--limit", 1, "--format", "m2")
        assert code == 0
        code, out, err = run_cli("verify-poly", out.strip(), "--d", 4, "--t", 2, "--method", "exact")
        assert code == 0, err


def test_cubics_at_4_2_4_are_explained():
    """Measured: Prop 24 and the 3 x 3 minor relations span 200 each, meet in 0, and account
    for all 400 minimal cubics at (4,2,4)."""
    report, _ = compute_ideal(4, 2, 4, max_degree=3,
                              families=family_claims("cross-cubic,minor-relations"))
    cubic = report.attribution["degrees"][-1]
    rows = {r["id"]: r for r in cubic["families"]}
    assert cubic["minimal_generators"] == 400
    assert rows["minor-relations"]["span"] == rows["minor-relations"]["new_generators"] == 200
    assert rows["cross-cubic"]["span"] == 200
    assert cubic["all_families"] == {"span": 400, "new_generators": 400}
    assert cubic["unexplained"]["minimal_generators"] == 0


@pytest.mark.slow
def test_everything_explained_at_4_2_4_through_degree_4():
    """Measured: with the resultants over every line, the pencil pairs add exactly the 400
    minimal quartics the resultants leave, and nothing is unexplained through degree 4."""
    report, _ = compute_ideal(4, 2, 4, max_degree=4, families=family_claims("all"))
    quartic = report.attribution["degrees"][-1]
    rows = {r["id"]: r for r in quartic["families"]}
    assert quartic["minimal_generators"] == 2500
    assert rows["pencil-pair"]["new_generators"] == 400
    assert quartic["all_families"]["new_generators"] == 2500
    assert all(t["unexplained"]["minimal_generators"] == 0 for t in report.attribution["degrees"])


# -- (4,1,1), ADM Example 21: Brill's quartics and the cone flattening -------------------------

BRILL, CONE = REGISTRY.get("brill"), REGISTRY.get("cone-flattening")


def test_brill_vanishes_at_a1_and_not_at_a2():
    v = BRILL.verify({"d": 4, "t": 1, "a": 1}, "exact")
    assert v.status is Status.VERIFIED and parts(v)["nontrivial"] == "proved"
    assert BRILL.verify({"d": 4, "t": 1, "a": 2}, "exact").status is Status.NOT_APPLICABLE
    # off Cor 22's hypothesis (f_T = l q, q irreducible) the quartics do not vanish
    from attngeom.core.claim import CheckContext
    from attngeom.lightning_alg.claims.base import coordinates_of
    from attngeom.lightning_alg.invariants.structured import check_vanishing
    params = BRILL.resolve({"d": 4, "t": 1, "a": 1, "brill_points": 3})
    coords = coordinates_of(params)
    family = BRILL.family(params, coords)
    assert check_vanishing(family, coords, 2, "exact", CheckContext()).status is Status.REFUTED


def test_brill_proved_symbolically_for_a_few_members():
    v = BRILL.verify({"d": 3, "t": 1, "a": 1, "brill_points": 2}, "symbolic")
    assert v.status is Status.PROVED


@pytest.mark.parametrize("name,value", [("NEWTON", (-2, 3)), ("WEIGHTS", (3, 1, 1, -3))])
def test_mutation_brill_formula(monkeypatch, name, value):
    """Newton's p_3 = e1^3 - 3 e1 e2 + 3 e3 or B's alternating weights changed: the quartics
    no longer vanish."""
    from attngeom.lightning_alg.invariants import brill
    monkeypatch.setattr(brill, name, value)
    v = BRILL.verify({"d": 4, "t": 1, "a": 1, "brill_points": 5}, "exact")
    assert v.status is Status.REFUTED and parts(v)["vanishing"] == "refuted"


@pytest.mark.parametrize("d,points", [(3, 40), (4, 6)])
def test_brill_expanded_over_f_p_equals_the_expansion_over_q(monkeypatch, d, points):
    """Brill's members expanded for the attribution over F_p[y] (python-flint's nmod_mpoly,
    ``integer_program``) give the same terms and residues as over QQ[y] (SymPy) reduced mod
    p; where python-flint has no nmod_mpoly the SymPy path runs.  A member changed in the
    F_p path only (one NEWTON constant) gives other residues."""
    import numpy as np
    from attngeom.kernels.sampling import DEFAULT_PRIME
    from attngeom.lightning_alg.claims.base import coordinates_of
    from attngeom.lightning_alg.invariants import brill, structured
    params = BRILL.resolve({"d": d, "t": 1, "a": 1, "brill_points": points})
    coords = coordinates_of(params)
    family = BRILL.family(params, coords)
    assert family.integer_program
    expand = lambda: family.expand_mod_p(coords, DEFAULT_PRIME)[4]
    over_p = expand()
    assert isinstance(structured.modular_generic_point(coords, [1, 2], DEFAULT_PRIME).y[0, 1],
                      __import__("flint").nmod_mpoly)
    monkeypatch.setattr(family, "integer_program", False)
    over_q = expand()
    assert len(over_q[0]) > 1000 and all(np.array_equal(a, b) for a, b in zip(over_p, over_q))
    monkeypatch.setattr(family, "integer_program", True)
    monkeypatch.setattr(structured, "modular_generic_point", lambda *args: None)
    assert all(np.array_equal(a, b) for a, b in zip(expand(), over_q))
    monkeypatch.undo()
    monkeypatch.setattr(brill, "NEWTON", (-2, 3))
    assert not all(np.array_equal(a, b) for a, b in zip(expand(), over_q))


def test_cone_flattening_proved_and_counted():
    v = CONE.verify({"d": 4, "t": 1, "a": 1}, "symbolic")
    assert v.status is Status.PROVED and v.evidence["parts"]["count"]["listed"] == 210
    assert CONE.verify({"d": 4, "t": 1, "a": 2}, "exact").status is Status.NOT_APPLICABLE


def test_mutation_cone_flattening_rank_bound(monkeypatch):
    from attngeom.lightning_alg.invariants import cone_flattening
    monkeypatch.setattr(cone_flattening, "rank_bound", lambda a: 2 * a)
    v = CONE.verify({"d": 4, "t": 1, "a": 1}, "exact")
    assert v.status is Status.REFUTED and parts(v)["criterion"] == "refuted"


@pytest.mark.slow
def test_everything_explained_at_4_1_1():
    """Measured: Brill's quartics span 875 of the 1085 minimal quartics of ADM Example 21, the
    cone flattening's 210 minors the other 210."""
    report, _ = compute_ideal(4, 1, 1, max_degree=4, families=family_claims("brill,cone-flattening"),
                              attribution_budget=None)
    quartic = report.attribution["degrees"][-1]
    rows = {r["id"]: r for r in quartic["families"]}
    assert quartic["minimal_generators"] == 1085
    assert rows["brill"]["new_generators"] == 875 and rows["cone-flattening"]["new_generators"] == 210
    assert quartic["unexplained"]["minimal_generators"] == 0


def test_too_many_brill_points_are_refused_before_anything_is_expanded(monkeypatch, run_cli):
    """--brill-points above MAX_BRILL_POINTS is one line and exit 2; in `attngeom ideal` a
    Brill family whose expansion bound (points x C(N + 3, 4)) exceeds MAX_EXPANSION_TERMS is
    skipped with the bound before it expands (it used to expand first: 20,000 points at
    (4,1,1) ran 44 s into 4.8 GB and FLINT aborted the process)."""
    from attngeom.lightning_alg.claims import brill as brill_claim
    from attngeom.lightning_alg.ideal import attribution
    from attngeom.lightning_alg.invariants import brill
    code, _, err = run_cli("verify", "brill", "--d", 4, "--t", 1, "--a", 1, "--brill-points", 10_001)
    assert code == 2 and err.strip() == "attngeom: error: --brill-points must be at most 10000; got 10001"

    def expand(*args, **kwargs):
        raise AssertionError("expanded although its bound is over the limit")
    monkeypatch.setattr(brill.BrillFamily, "expand_mod_p", expand)
    bound = brill.quartic_terms_bound(CoordinateSystem(4, 1))      # C(20 + 3, 4) = 8,855 at (4,1,1)
    points = attribution.MAX_EXPANSION_TERMS // bound + 1
    assert bound == comb(23, 4) and brill_claim.BRILL_POINTS.default < points <= brill_claim.MAX_BRILL_POINTS
    report, _ = compute_ideal(4, 1, 1, max_degree=4, families=family_claims("brill"),
                              family_params=[f"brill:brill_points={points}"])
    skipped = {s["id"]: s["reason"] for s in report.attribution["skipped"]}
    assert skipped[f"brill --brill-points {points}"] == (
        f"members refused: the members would expand into up to {points * bound:,} terms (an upper "
        f"bound, before expanding; limit {attribution.MAX_EXPANSION_TERMS:,})")

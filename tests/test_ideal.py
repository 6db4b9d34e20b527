"""The vanishing ideal by multigraded interpolation (issue 5): ADM Examples 12, 19, 21, 26,
36 and HMK Cor 3.3, the fresh-point check, family attribution, the Macaulay2 export."""

from __future__ import annotations

import json
from itertools import combinations, permutations
from math import comb

import numpy as np
import pytest
import sympy

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.claims import family_claims
from attngeom.lightning_alg.claims.base import FamilyClaim
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.ideal import degree_table, interpolation, variety
from attngeom.lightning_alg.ideal.attribution import MIN_IDEAL_WORK
from attngeom.lightning_alg.ideal.report import compute_ideal
from attngeom.lightning_alg.ideal.report_text import render_report
from attngeom.lightning_alg.ideal.m2_export import export_m2, lift_block
from attngeom.lightning_alg.invariant import Invariant
from attngeom.lightning_alg.labels import Label, multisets
from attngeom.lightning_alg.polynomial_io import parse_polynomial


def table(d, t, a, k, **kw):
    report, engine = compute_ideal(d, t, a, max_degree=k, families=family_claims(kw.pop("families", "none")),
                                   **kw)
    return report, engine


# -- ADM's numbers ------------------------------------------------------------------------

def test_example_12_four_linear_and_one_quartic():
    report, _ = table(2, 2, 2, 4)
    assert report.to_json()["minimal_generators"] == {"1": 4, "4": 1}
    assert report.ambient_dimension == 10 and report.variety_dimension == 5


def test_example_26_linear_quadrics_cubics():
    report, _ = table(3, 2, 1, 3)
    assert report.to_json()["minimal_generators"] == {"1": 10, "2": 45, "3": 10}


def test_example_36_linear_cubics_quartics():
    report, _ = table(3, 2, 3, 4)
    out = report.to_json()
    assert out["minimal_generators"] == {"1": 10, "3": 20, "4": 90}
    assert out["dim_J_mod_linear"] == {"1": 10, "2": 0, "3": 20, "4": 450}
    # dim J_k = C(N+k-1, k) - HF(k) with N = 28 coordinates
    for k, hf in out["hilbert_function"].items():
        assert out["dim_J"][k] == comb(28 + int(k) - 1, int(k)) - hf
    assert out["failure_probability"] < 1e-12


def test_example_19_codimension_two_and_35_octics():
    report, _ = table(3, 1, 3, 8)
    out = report.to_json()
    assert out["minimal_generators"] == {"8": 35}
    assert out["codimension"] == 2 and out["ambient_dimension"] == 10


def test_example_21_dimension_ten():
    report, _ = table(4, 1, 1, 1)
    assert report.variety_dimension == 10
    hmk = report.dimension["hmk_cor33_one_coordinate"]
    assert not hmk["applicable"] and "t >= 2" in hmk["hypothesis"]


def test_other_prime_and_seed_give_the_same_table():
    a, _ = table(3, 2, 1, 3)
    b, _ = table(3, 2, 1, 3, prime=2147483629, seed=5)
    assert a.to_json()["dim_J"] == b.to_json()["dim_J"]
    assert a.to_json()["minimal_generators"] == b.to_json()["minimal_generators"]


# -- HMK Cor 3.3 ---------------------------------------------------------------------------

@pytest.mark.parametrize("d,t,a,dprime", [(2, 2, 2, 1), (3, 2, 3, 1), (3, 3, 2, 2), (2, 2, 5, 2)])
def test_hmk_cor33_against_the_jacobian_rank(d, t, a, dprime):
    dim = variety.dimension_report(d, t, a, dprime, 1, DEFAULT_PRIME, Sampler(0))
    one, whole = dim["hmk_cor33_one_coordinate"], dim["hmk_cor33_whole_output"]
    assert one["applicable"] and one["agrees"] and whole["agrees"]
    # one output coordinate sees only row 1 of V: HMK's formula at d' = 1
    alpha = min(a, d)
    assert dim["variety_dimension"] == 2 * alpha * d + d - alpha ** 2 - 1
    assert whole["measured"] == 2 * alpha * d + d * dprime - alpha ** 2 - 1


def test_hmk_mutated_formula_disagrees(monkeypatch):
    monkeypatch.setattr(variety, "single_layer_dimension", lambda d, dp, a: 2 * a * d + d * dp - a * a)
    dim = variety.dimension_report(3, 2, 3, 1, 1, DEFAULT_PRIME, Sampler(0))
    assert not dim["hmk_cor33_one_coordinate"]["agrees"]


def test_symmetry_shortcut_changes_no_figure(monkeypatch):
    fast, _ = table(3, 2, 1, 4)
    monkeypatch.setattr(degree_table, "permutation_stable", lambda coords, variables: False)
    slow, _ = table(3, 2, 1, 4)
    assert slow.degrees[-1].blocks_computed == slow.degrees[-1].blocks
    assert fast.degrees[-1].blocks_computed < fast.degrees[-1].blocks
    for name in ("dim_J", "hilbert_function", "minimal_generators"):
        assert fast.to_json()[name] == slow.to_json()[name]


def test_permutation_stability_detects_a_lopsided_pivot_set():
    _, engine = table(3, 2, 3, 1)
    assert degree_table.permutation_stable(engine.coords, engine.variables)
    assert not degree_table.permutation_stable(engine.coords, engine.variables[1:])


# -- interpolation machinery ---------------------------------------------------------------

def test_monomial_blocks_partition_every_monomial():
    degrees = np.array([[3, 0], [2, 1], [1, 2], [0, 3], [1, 2]])
    blocks = interpolation.monomial_blocks(degrees, 3)
    assert len(blocks.monomials) == comb(5 + 2, 3)
    for b in range(len(blocks)):
        assert (degrees[blocks.block(b)].sum(axis=1) == blocks.multidegrees[b]).all()
    found, columns = blocks.locate(blocks.monomials)
    assert (blocks.starts[found] + columns == np.arange(len(blocks.monomials))).all()


def _veronese_pool(first_equal: int):
    """z = (u^2, u v, v^2): its ideal is generated by z0 z2 - z1^2.  The first points are
    copies of one point (a degenerate sample)."""
    def draw(sampler, count):
        uv = sampler.prime_field((count, 2))
        return np.stack([uv[:, 0] ** 2 % DEFAULT_PRIME, uv[:, 0] * uv[:, 1] % DEFAULT_PRIME,
                         uv[:, 1] ** 2 % DEFAULT_PRIME], axis=1)
    pool = interpolation.PointPool(draw, Sampler(1))
    values = pool.values(64)
    values[:first_equal] = values[0]
    return pool, draw(Sampler(2), interpolation.FRESH_POINTS)


def test_fresh_points_catch_a_degenerate_sample():
    pool, fresh = _veronese_pool(first_equal=3)
    monomials = interpolation.all_monomials(3, 2)
    kernel = interpolation.interpolate_block(monomials, pool, fresh, DEFAULT_PRIME, 3)
    assert kernel.nullity == 1 and kernel.points > 3   # recomputed with more points
    vector = kernel.vectors()[0]
    # z1^2 - z0 z2 in reduced form (1 at its last monomial): monomials (00, 01, 02, 11, 12, 22)
    assert vector.tolist() == [0, 0, DEFAULT_PRIME - 1, 1, 0, 0]


def test_without_the_fresh_check_the_degenerate_sample_is_wrong(monkeypatch):
    monkeypatch.setattr(interpolation, "_vanishes", lambda *args: True)
    pool, fresh = _veronese_pool(first_equal=3)
    kernel = interpolation.interpolate_block(interpolation.all_monomials(3, 2), pool, fresh,
                                             DEFAULT_PRIME, 3)
    assert kernel.nullity == 5


def test_fresh_points_are_not_interpolation_points():
    _, engine = table(2, 2, 2, 1)
    pool, fresh = engine._pool(engine.variables)
    drawn = {tuple(row) for row in pool.values(2048)}
    assert not any(tuple(row) in drawn for row in fresh)


def test_rational_reconstruction_and_crt():
    p, q = 2147483647, 2147483629
    for value in [sympy.Rational(-3, 7), sympy.Rational(12345, 678), sympy.Rational(1, 1)]:
        residue = int(value.p) * pow(int(value.q), -1, p) % p
        assert interpolation.rational_reconstruction(residue, p) == value
    big = 10**8 + 7   # beyond sqrt(p/2): needs two primes
    assert interpolation.rational_reconstruction(big % p, p) != big
    rows = lift_block([np.array([[1, big % p]]), np.array([[1, big % q]])], [p, q])
    assert rows == [[1, big]]


# -- the Macaulay2 export ------------------------------------------------------------------

EXAMPLE_29 = (  # ADM eq (5): q = 4 d1 d2 - d3^2, d = t = a = 2, j = 1, n = 2
    "4*(y_((1,2),(1,2),(2,1))*y_((1,2),(2,2),(1,1)) - y_((1,2),(1,2),(1,1))*y_((1,2),(2,2),(2,1)))"
    "*(y_((1,2),(2,2),(2,1))*y_((2,2),(2,2),(1,1)) - y_((1,2),(2,2),(1,1))*y_((2,2),(2,2),(2,1)))"
    " - (y_((1,2),(1,2),(2,1))*y_((2,2),(2,2),(1,1)) - y_((1,2),(1,2),(1,1))*y_((2,2),(2,2),(2,1)))^2")


def test_example_12_quartic_is_adm_eq5(tmp_path):
    _, engine = table(2, 2, 2, 4, keep=True)
    stats = export_m2(engine, 4, str(tmp_path / "j.m2"))
    assert stats["polynomials"] == {"1": 4, "2": 0, "3": 0, "4": 1}
    lines = (tmp_path / "j.m2").read_text().splitlines()
    coords = CoordinateSystem(2, 2)
    ours = parse_polynomial(lines[-1], coords)
    theirs = parse_polynomial(EXAMPLE_29, coords)
    assert sympy.simplify(theirs / ours).is_number


def test_export_round_trips_through_verify_poly(run_cli, tmp_path):
    path = tmp_path / "j36.m2"
    code, out, err = run_cli("ideal", "--d", 3, "--t", 2, "--a", 3, "--max-degree", 3,
                             "--families", "none", "--m2", path)
    assert code == 0, err
    lines = path.read_text().splitlines()
    assert len(lines) == 10 + 20
    for line in lines[:2] + lines[10:13]:
        code, out, err = run_cli("verify-poly", line, "--d", 3, "--t", 2, "--a", 3)
        assert code == 0, out + err
    mutated = lines[12].replace("+ ", "+ 2*", 1) if "+ " in lines[12] else lines[12] + " + " + \
        lines[12].split(" ")[0].lstrip("-")
    code, out, _ = run_cli("verify-poly", mutated, "--d", 3, "--t", 2, "--a", 3)
    assert code == 1 and "refuted" in out


def test_export_with_two_output_rows_names_the_row(run_cli, tmp_path):
    path = tmp_path / "j.m2"
    code, _, err = run_cli("ideal", "--d", 2, "--t", 2, "--dprime", 2, "--max-degree", 4,
                           "--families", "none", "--m2", path)
    assert code == 0, err
    quartic = path.read_text().splitlines()[-1]
    assert quartic.startswith(("y_(1,(", "-y_(1,("))
    code, out, err = run_cli("verify-poly", quartic, "--d", 2, "--t", 2, "--dprime", 2)
    assert code == 0, out + err


def test_export_combines_primes_when_one_does_not_lift(tmp_path, monkeypatch):
    from attngeom.lightning_alg.ideal import m2_export as ideal_export
    _, engine = table(2, 2, 2, 4, keep=True)
    single = export_m2(engine, 4, str(tmp_path / "one.m2"))
    calls = []

    def first_call_fails(residues, primes):
        calls.append(len(primes))
        return None if len(calls) == 1 else lift_block(residues, primes)
    monkeypatch.setattr(ideal_export, "lift_block", first_call_fails)
    double = export_m2(engine, 4, str(tmp_path / "two.m2"))
    assert single["primes"] == [DEFAULT_PRIME] and len(double["primes"]) == 2
    assert calls[:2] == [1, 2]
    assert (tmp_path / "one.m2").read_text() == (tmp_path / "two.m2").read_text()


# -- family attribution --------------------------------------------------------------------

def _cross(coords, k1, k2, k3, context=2):
    a1, a2 = sorted((k1, k2))
    return coords.symbol(Label(1, 1, context, (a1, a2, k3)))


def prop24_cubics(coords):
    """ADM Prop 24 with R = C = {1,2,3}: the mixed minors Delta^S, S in Mult_3([3])."""
    out = []
    for S in multisets(3, 3):
        total = 0
        for t in sorted(set(permutations(S))):
            total += sympy.Matrix(3, 3, lambda i, l: _cross(coords, i + 1, l + 1, t[i])).det()
        out.append(sympy.expand(total))
    return out


def thm25_quadrics(coords):
    """ADM Thm 25 for a = 1: the 2 x 2 minors of the 6 x 3 flattening F_{2,1}."""
    F = sympy.Matrix([[_cross(coords, a1, a2, b) for b in (1, 2, 3)] for a1, a2 in multisets(3, 2)])
    return [F.extract(list(r), list(c)).det()
            for r in combinations(range(6), 2) for c in combinations(range(3), 2)]


class ListFamily(FamilyClaim):
    """A test family: fixed polynomials, built for d = 3 from a function of the coordinates."""

    def __init__(self, name, build):
        self.id, self.source, self.statement, self.build = name, f"test {name}", name, build

    def hypothesis_violation(self, params):
        return None if params["d"] == 3 and params["t"] == 2 else "d = 3, t = 2 only"

    def members(self, params, coords):
        return [Invariant(p, self.id, self.source) for p in self.build(coords)]


def test_attribution_example_26_prop24_and_thm25():
    families = [ListFamily("prop24", prop24_cubics), ListFamily("thm25", thm25_quadrics)]
    report, _ = compute_ideal(3, 2, 1, max_degree=3, families=families)
    by_degree = {t["degree"]: t for t in report.attribution["degrees"]}
    quad = {r["id"]: r for r in by_degree[2]["families"]}
    assert quad["thm25"]["span"] == 45 and quad["thm25"]["new_generators"] == 45
    cubic = {r["id"]: r for r in by_degree[3]["families"]}
    assert cubic["prop24"]["used"] == 10 and cubic["prop24"]["outside_J"] == 0
    assert cubic["prop24"]["new_generators"] == 10
    assert by_degree[3]["unexplained"]["minimal_generators"] == 0
    assert by_degree[2]["unexplained"] == {"span": 0, "minimal_generators": 0}


def test_attribution_example_36_prop24_explains_half_the_cubics():
    report, _ = compute_ideal(3, 2, 3, max_degree=3, families=[ListFamily("prop24", prop24_cubics)])
    cubic = report.attribution["degrees"][2]
    assert cubic["families"][0]["span"] == 10 and cubic["families"][0]["multihomogeneous"]
    assert cubic["unexplained"] == {"span": 10, "minimal_generators": 10}


def test_attribution_mutated_member_is_outside_J():
    def mutated(coords):
        cubics = prop24_cubics(coords)
        term = sympy.Add.make_args(cubics[4])[0]
        return cubics[:4] + [cubics[4] + term] + cubics[5:]
    report, _ = compute_ideal(3, 2, 3, max_degree=3, families=[ListFamily("bad", mutated)])
    row = report.attribution["degrees"][2]["families"][0]
    assert row["outside_J"] == 1 and row["span"] == 9


def test_attribution_of_members_spread_over_blocks_is_exact():
    def mixed(coords):
        c = prop24_cubics(coords)   # ten cubics of ten different multidegrees
        return [c[0] + c[1], c[1] + c[2], c[0] + c[2], 2 * c[0] + 2 * c[1]]
    report, _ = compute_ideal(3, 2, 3, max_degree=3, families=[ListFamily("mixed", mixed)])
    row = report.attribution["degrees"][2]["families"][0]
    assert not row["multihomogeneous"] and row["span"] == 3 and row["new_generators"] == 3


def _prop24_under_budget(monkeypatch, limit):
    """The ten Prop 24 cubics at (3,2,3) as a family larger than MAX_MEMBERS = 4, under a
    budget of ``limit`` units (None: no limit): (row, budget).  Their costs: 108 terms to
    expand, 108 to reduce, 108 coordinate entries (6 units); a sample of 4: 41 terms to
    reduce, 41 entries (2 units)."""
    from attngeom.lightning_alg.ideal import attribution as ideal_families
    monkeypatch.setattr(ideal_families, "MAX_MEMBERS", 4)
    report, _ = compute_ideal(3, 2, 3, max_degree=3, families=[ListFamily("prop24", prop24_cubics)],
                              attribution_budget=None if limit is None else limit / MIN_IDEAL_WORK)
    rows = report.attribution["degrees"][2]["families"]
    return (rows[0] if rows else None), report.attribution["budget"]


def test_a_large_family_is_reduced_whole_when_the_budget_covers_it(monkeypatch):
    """More members than MAX_MEMBERS, but all of them fit the default budget: every member is
    reduced, the span is exact (the atlas's (5,1,1,1): 6,825 cone-flattening quartics, 4,550
    where a sample of 3,000 spanned 2,873)."""
    row, budget = _prop24_under_budget(monkeypatch, MIN_IDEAL_WORK)
    assert row["members"] == row["used"] == 10 and not row["sampled"] and not row["lower_bound"]
    assert row["span"] == 10 and budget["used"] == 108 + 108 + 6


def test_a_large_family_is_sampled_when_all_its_members_do_not_fit(monkeypatch):
    """Where all members do not fit, the seeded sample stands for them (a lower bound): when
    their reduction does not fit (200 units: 108 + 108 > 200), the sample is reduced on its
    own; when only their coordinates do not (218: 216 + 6 > 218), the sample's terms are
    taken from the reduction already paid for.  Both give the sample's row; too small a
    budget for the sample too skips the family."""
    rows = {}
    for limit, used in ((200, 108 + 41 + 2), (218, 108 + 108 + 2)):
        rows[limit], budget = _prop24_under_budget(monkeypatch, limit)
        assert budget["used"] == used <= limit
        assert rows[limit]["members"] == 10 and rows[limit]["used"] == 4
        assert rows[limit]["sampled"] and rows[limit]["lower_bound"] and rows[limit]["span"] == 4
    assert {k: v for k, v in rows[200].items() if k != "seconds"} == \
        {k: v for k, v in rows[218].items() if k != "seconds"}
    row, _ = _prop24_under_budget(monkeypatch, 150)                # 108 + 41 + 2 > 150
    assert row is None


def test_selecting_reduced_terms_equals_reducing_the_selected_members(monkeypatch):
    """BlockTerms.select(keep) is the reduction of SparseMembers.select(keep), array for
    array, for members (Prop 24's cubics) and for (member, block) parts (split_by_block)."""
    from dataclasses import replace
    from attngeom.lightning_alg.ideal import attribution as ideal_families
    calls = []
    real = ideal_families.reduce_members

    def spy(members, substitution, record, prime):
        calls.append((members, substitution, record, prime))
        return real(members, substitution, record, prime)
    monkeypatch.setattr(ideal_families, "reduce_members", spy)
    compute_ideal(3, 2, 3, max_degree=3, families=[ListFamily("prop24", prop24_cubics)],
                  attribution_budget=None)
    members, substitution, record, prime = calls[0]
    keep = np.array([1, 4, 5, 8])
    fields = ("block", "component", "column", "value", "member")
    for split in (False, True):
        whole = replace(members, split_by_block=split)
        selected = real(whole, substitution, record, prime).select(keep)
        direct = real(whole.select(keep), substitution, record, prime)
        assert (selected.count, selected.homogeneous) == (direct.count, direct.homogeneous)
        for name in fields:
            assert np.array_equal(getattr(selected, name), getattr(direct, name)), (split, name)
        assert selected.count == (len(keep) if not split else len(np.unique(direct.component)))


def test_attribution_skips_families_outside_their_hypotheses():
    report, _ = compute_ideal(2, 2, 2, max_degree=2, families=[ListFamily("prop24", prop24_cubics)])
    assert report.attribution["skipped"][0]["reason"].startswith("not-applicable")


def test_registered_linear_family_spans_J1():
    report, _ = compute_ideal(3, 3, 2, max_degree=2, families=family_claims("linear"))
    linear = report.attribution["degrees"][0]
    assert linear["families"][0]["span"] == linear["dim_J_mod_linear"] == 10 + 18
    assert linear["unexplained"] == {"span": 0, "minimal_generators": 0}


# -- command line ---------------------------------------------------------------------------

def test_cli_json_carries_the_contract(run_cli):
    code, out, err = run_cli("ideal", "--d", 2, "--t", 2, "--a", 2, "--json")
    assert code == 0, err
    data = json.loads(out)
    for key in ("ambient_dimension", "variety_dimension", "dim_J", "minimal_generators",
                "family_attribution", "points", "failure_probability"):
        assert key in data
    assert data["minimal_generators"] == {"1": 4, "4": 1}


def test_cli_table(run_cli):
    code, out, _ = run_cli("ideal", "--d", 2, "--t", 2)
    assert code == 0
    assert "minimal generators: 4 in degree 1, 1 in degree 4" in out
    assert "family attribution" in out and "HMK Cor 3.3" in out


@pytest.mark.parametrize("args,message", [
    (("--d", 0, "--t", 2), "--d must be a positive integer"),
    (("--d", 2, "--t", 2, "--col", 3), "not an output column"),
    (("--d", 2, "--t", 2, "--max-degree", 0), "--max-degree must be at least 1"),
    (("--d", 2, "--t", 2, "--prime", 91), "--prime must be a prime"),
    (("--d", 2, "--t", 2, "--families", "nope"), "is not a family claim"),
    (("--d", 9, "--t", 4, "--max-degree", 6), "monomials"),
])
def test_cli_bad_input(run_cli, args, message):
    code, out, err = run_cli("ideal", *args)
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_size_limit_is_bad_input():
    with pytest.raises(BadInput):
        compute_ideal(9, 4, max_degree=6)


# -- ADM Example 36's quartics: Veronese-type and resultant families -----------------------

def test_attribution_example_36_every_line_explains_all_90_quartics():
    """Measured (ADM Example 36, 42): the resultants over every line account for all 90
    minimal quartics; Thm 30 + Cor 33 for 18, which lie inside them modulo products."""
    report, _ = compute_ideal(3, 2, 3, max_degree=4,
                              families=family_claims("resultant,veronese,block-veronese"))
    quartic = report.attribution["degrees"][-1]
    rows = {r["id"]: r for r in quartic["families"]}
    assert quartic["minimal_generators"] == 90
    every = rows["resultant --line all"]
    assert every["members"] == 90 and every["span"] == 90 and every["new_generators"] == 90
    assert every["multihomogeneous"] and not every["lower_bound"]
    assert rows["resultant --line example41"]["span"] == rows["resultant --line example41"]["new_generators"] == 6
    assert rows["veronese"]["new_generators"] == 9 and rows["block-veronese"]["new_generators"] == 18
    assert quartic["all_families"] == {"span": 117, "new_generators": 90}
    assert quartic["unexplained"]["minimal_generators"] == 0
    veronese, _ = compute_ideal(3, 2, 3, max_degree=4,
                                 families=family_claims("veronese,block-veronese"))
    assert veronese.attribution["degrees"][-1]["all_families"]["new_generators"] == 18


def test_sparse_members_agree_with_sympy_members():
    """The F_p expansion with multihomogeneous splitting (``sparse_members``) against the
    SymPy members of the same family attributed by the random projection."""
    from attngeom.lightning_alg.claims import REGISTRY
    resultant = REGISTRY.get("resultant")

    class Expanded(FamilyClaim):
        id, source, statement = "expanded", "test", "resultant --line all via SymPy"

        def members(self, params, coords):
            return resultant.members(resultant.resolve({**params, "line": "all"}), coords)

    report, _ = compute_ideal(3, 2, 3, max_degree=4, families=[Expanded()])
    row = report.attribution["degrees"][-1]["families"][0]
    assert not row["multihomogeneous"] and row["span"] == row["new_generators"] == 90


def test_families_whose_lowest_members_lie_above_the_table_are_not_built(monkeypatch):
    """chow-111 at d = 3 has only degree-7 members (Remark 23's Lie minors): an ideal up to
    degree 3 must not build them; up to degree 7 it would (the hook, not a constant, decides)."""
    from attngeom.lightning_alg.claims.chow111 import Chow111Claim

    def refuse(*args, **kwargs):
        raise AssertionError("members built below their degree")

    monkeypatch.setattr(Chow111Claim, "members", refuse)
    report, _ = compute_ideal(d=3, t=2, a=1, max_degree=3, families=family_claims("all"))
    assert not [s for s in report.attribution["skipped"] if s["id"] == "chow-111"]
    claim = Chow111Claim()
    assert claim.lowest_member_degree(claim.resolve({"d": 3, "t": 2})) == 7
    assert claim.lowest_member_degree(claim.resolve({"d": 4, "t": 2})) == 4


# -- attribution at the cost of the ideal (issue 17): budget, family parameters, stages ------

def _attribution(report):
    """The attribution without its timings: per degree, each row and the totals."""
    return [([{k: v for k, v in row.items() if k != "seconds"} for row in t["families"]],
             t["all_families"], t["unexplained"]) for t in report.attribution["degrees"]]


def test_default_run_keeps_the_ideal_table_of_families_none():
    """The attribution no longer forces every block to be computed: the degree table of the
    default run is the table of --families none (the S_d shortcut included)."""
    plain, _ = compute_ideal(3, 2, 3, max_degree=4)
    attributed, _ = compute_ideal(3, 2, 3, max_degree=4, families=family_claims("all"))
    strip = lambda r: [{k: v for k, v in row.items() if k != "seconds"}
                       for row in r.to_json()["degrees"]]
    assert strip(plain) == strip(attributed)
    assert attributed.to_json()["degrees"][-1]["blocks_computed"] < attributed.degrees[-1].blocks


def test_attribution_through_the_symmetry_equals_computing_every_block(monkeypatch):
    """Blocks the table did not compute are attributed in the coordinates of the block they
    are a permutation of; switching the shortcut off (every block computed) changes nothing."""
    families = family_claims("cross-cubic,syzygy,veronese,block-veronese,resultant")
    mapped, _ = compute_ideal(3, 2, 3, max_degree=4, families=families)
    monkeypatch.setattr(degree_table, "permutation_stable", lambda coords, variables: False)
    direct, _ = compute_ideal(3, 2, 3, max_degree=4, families=families)
    assert direct.degrees[-1].blocks_computed == direct.degrees[-1].blocks
    assert _attribution(mapped) == _attribution(direct)


def test_budget_skips_families_with_the_reason_and_never_silently():
    report, _ = compute_ideal(3, 2, 3, max_degree=4, families=family_claims("resultant,syzygy"),
                              attribution_budget=0.001)
    skipped = {s["id"]: s["reason"] for s in report.attribution["skipped"]}
    assert "over the attribution budget" in skipped["resultant --line all"]
    assert "--attribution-budget raises it" in skipped["resultant --line all"]
    rows = {r["id"] for t in report.attribution["degrees"] for r in t["families"]}
    assert rows | set(skipped) == {"syzygy", "resultant --line example41", "resultant --line all"}
    assert "resultant --line all" not in rows
    budget = report.attribution["budget"]
    assert budget["factor"] == 0.001 and budget["ideal_work"] < MIN_IDEAL_WORK
    assert budget["used"] <= budget["limit"] == int(0.001 * MIN_IDEAL_WORK)
    assert "skipped resultant --line all: over the attribution budget" in render_report(report)
    again, _ = compute_ideal(3, 2, 3, max_degree=4, families=family_claims("resultant,syzygy"),
                             attribution_budget=0.001)
    # a count of work, not a clock: the same families are skipped again
    assert again.attribution["skipped"] == report.attribution["skipped"]


def test_a_small_ideal_counts_as_min_ideal_work_in_the_budget():
    """At (d, t, a) = (3, 1, 1) the ideal counts 2,767 units and Brill's equations need
    18,379: with the budget a plain multiple of the ideal's count they were skipped (the
    atlas's (3,1,1,1) row, before); counted as at least MIN_IDEAL_WORK units, the default
    budget attributes all 35 quartic generators to them, as an unlimited budget does."""
    def run(budget):
        report, _ = compute_ideal(3, 1, 1, max_degree=4, families=family_claims("brill"),
                                  attribution_budget=budget)
        return report.attribution
    default, unlimited = run(1), run(None)
    assert default["budget"]["ideal_work"] < 20_000 < default["budget"]["limit"] == MIN_IDEAL_WORK
    untimed = lambda a: [[{k: v for k, v in row.items() if k != "seconds"} for row in t["families"]]
                         for t in a["degrees"]]
    assert default["skipped"] == [] and untimed(default) == untimed(unlimited)
    assert default["degrees"][-1]["all_families"]["new_generators"] == 35
    assert default["budget"]["used"] == unlimited["budget"]["used"]
    # a factor still scales it: the same family at a budget below its need is skipped, saying so
    small = run(18_000 / MIN_IDEAL_WORK)
    assert [s["id"] for s in small["skipped"]] == ["brill"]
    assert "counted as at least 5,000,000 units" in small["skipped"][0]["reason"]


def test_zero_budget_skips_every_family_and_no_budget_skips_none():
    families = family_claims("cross-cubic,syzygy")
    none_left, _ = compute_ideal(3, 2, 3, max_degree=3, families=families, attribution_budget=0)
    assert {s["id"] for s in none_left.attribution["skipped"]} == {"cross-cubic", "syzygy"}
    assert not any(t["families"] for t in none_left.attribution["degrees"])
    unlimited, _ = compute_ideal(3, 2, 3, max_degree=3, families=families, attribution_budget=None)
    assert not unlimited.attribution["skipped"] and unlimited.attribution["budget"]["limit"] is None
    assert unlimited.attribution["degrees"][2]["all_families"]["new_generators"] == 20


def test_family_param_attributes_the_claim_at_those_parameters():
    report, _ = compute_ideal(3, 2, 3, max_degree=4, families=family_claims("veronese,resultant"),
                              family_params=["veronese:r=2", "resultant:line=1,0,0:0,1,0"])
    rows = {r["id"]: r for r in report.attribution["degrees"][-1]["families"]}
    assert set(rows) == {"veronese --r 2", "resultant --line 1,0,0:0,1,0"}   # no variants
    assert rows["veronese --r 2"]["members"] == 9 and rows["veronese --r 2"]["new_generators"] == 9
    assert rows["resultant --line 1,0,0:0,1,0"]["span"] == 6
    high, _ = compute_ideal(3, 2, 3, max_degree=4, families=family_claims("veronese"),
                            family_params=["veronese:r=3"])
    assert high.attribution["skipped"] == [{
        "id": "veronese --r 3", "source": "ADM Thm 30",
        "reason": "no members of degree <= 4 at these parameters"}]


def test_veronese_defaults_reach_every_r_that_fits_the_table():
    """ADM Thm 30 at its defaults (every r) used to be expanded up to r = min(a, d) and then
    skipped as too large at d = 4; the attribution now asks only for the r with 2r <= K."""
    from attngeom.lightning_alg.claims import REGISTRY
    veronese = REGISTRY.get("veronese")
    params = veronese.resolve({"d": 4, "t": 2, "a": 4})
    coords = CoordinateSystem(4, 2, 1, 1, 1)
    assert veronese.member_family(params, coords, 4).size == 36       # r = 2 only
    assert veronese.member_family(params, coords, 3) is None
    assert veronese.member_family(params, coords, 8).degree == 8     # r = 2, 3, 4


@pytest.mark.parametrize("option,message", [
    ("veronese", "takes ID:NAME=VALUE"),
    ("nope:r=2", "'nope' is not an attributed family"),
    ("veronese:q=2", "veronese has no family parameter 'q'"),
    ("veronese:d=4", "veronese has no family parameter 'd'"),
    ("veronese:r=x", "--r must be an integer"),
])
def test_cli_family_param_errors_are_one_line(run_cli, option, message):
    code, _, err = run_cli("ideal", "--d", 3, "--t", 2, "--a", 3, "--families", "veronese",
                           "--family-param", option)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_cli_family_param_twice_and_bad_budget(run_cli):
    code, _, err = run_cli("ideal", "--d", 3, "--t", 2, "--families", "veronese",
                           "--family-param", "veronese:r=2", "--family-param", "veronese:r=3")
    assert code == 2 and "veronese:r is given twice" in err
    code, _, err = run_cli("ideal", "--d", 3, "--t", 2, "--attribution-budget", "-1")
    assert code == 2 and "--attribution-budget must be a nonnegative number" in err
    code, out, _ = run_cli("ideal", "--d", 3, "--t", 2, "--a", 3, "--max-degree", 3,
                           "--families", "syzygy", "--attribution-budget", "none", "--json")
    assert code == 0 and json.loads(out)["family_attribution"]["budget"]["limit"] is None


class _RecordingProgress:
    """A progress callable (CheckContext convention) that records its labels."""

    def __init__(self):
        self.labels = []

    def __call__(self, iterable, label="", length=None):
        self.labels.append(label)
        return iterable


def test_progress_names_the_stages():
    from attngeom.core.claim import CheckContext
    progress = _RecordingProgress()
    compute_ideal(3, 2, 3, max_degree=3, families=family_claims("syzygy"),
                  context=CheckContext(seed=0, progress=progress))
    assert progress.labels == ["degree 2 blocks: kernels", "degree 3 blocks: kernels",
                               "attribution: family members", "degree 3 blocks: attribution"]
    quiet = _RecordingProgress()
    compute_ideal(3, 2, 3, max_degree=3, context=CheckContext(seed=0, progress=quiet))
    assert not [label for label in quiet.labels if "attribution" in label]


def test_block_work_is_a_top_level_function_of_picklable_inputs():
    """The unit a attngeom.core.executor can map over the blocks of one degree: the same result
    after a round trip through pickle."""
    import pickle
    engine = degree_table.AttentionIdeal(3, 2, 3)
    blocks = engine.blocks(2)
    pool, fresh = engine._pool(engine.variables)
    task = degree_table.BlockTask(blocks.block(5), pool, fresh, DEFAULT_PRIME, 4, None, True, True)
    here = degree_table.solve_block(task)
    there = degree_table.solve_block(pickle.loads(pickle.dumps(task)))
    assert (here.rank, here.nullity, here.points) == (there.rank, there.nullity, there.points)
    assert np.array_equal(here.vectors, there.vectors)
    assert np.array_equal(here.solution.free, there.solution.free)


def test_structured_families_expand_over_fp_as_sympy_does():
    """StructuredFamily.expand_mod_p (ring terms) and MinorCombinationFamily's Leibniz
    expansion against the SymPy expansion the attribution used before."""
    from attngeom.kernels.polyeval import compile_polynomials
    from attngeom.lightning_alg.claims import REGISTRY
    from attngeom.lightning_alg.claims.base import coordinates_of
    from attngeom.lightning_alg.invariants.structured import StructuredFamily
    for name, raw in (("cross-cubic", {}), ("syzygy", {}), ("block-veronese", {"r": 2})):
        claim = REGISTRY.get(name)
        params = claim.resolve({"d": 3, "t": 2, "a": 3, **raw})
        coords = coordinates_of(params)
        family = claim.member_family(params, coords, 4)
        compiled = compile_polynomials(family.expand(coords), coords.symbol_index)
        expected = {}
        for m, j, c in compiled.entries:
            key = (j, *compiled.monomials[m])
            value = c.numerator * pow(c.denominator, -1, DEFAULT_PRIME)
            expected[key] = (expected.get(key, 0) + value) % DEFAULT_PRIME
        for expand in (family.expand_mod_p, lambda *a: StructuredFamily.expand_mod_p(family, *a)):
            (degree, (member, rows, coeff)), = expand(coords, DEFAULT_PRIME).items()
            assert degree == family.degree
            assert {(int(j), *map(int, r)): int(c) for j, r, c in zip(member, rows, coeff)} == \
                {k: v for k, v in expected.items() if v}


def test_linear_substitution_expands_like_the_polynomials():
    """attngeom.kernels.monomials.LinearSubstitution against SymPy: x0 = z0 + 2 z1, x1 = z1, x2 = 3 z2."""
    from attngeom.kernels.monomials import LinearSubstitution, sum_terms_mod_p
    z0, z1, z2 = sympy.symbols("z0 z1 z2")
    forms = [z0 + 2 * z1, z1, 3 * z2]
    substitution = LinearSubstitution.of([[(0, 1), (1, 2)], [(1, 1)], [(2, 3)]], 7)
    owner, rows, values = np.array([0, 0, 1, 0]), np.array([[1, 2], [1, 2], [0, 0], [0, 1]]), \
        np.array([1, 2, 3, 5])
    for combine in (True, False):
        got = sum_terms_mod_p(*substitution.apply(owner, rows, values, 7, combine=combine), 7)
        expected = {}
        for j, (a, b), c in zip(owner, rows, values):
            for monom, coeff in sympy.Poly(c * forms[a] * forms[b], z0, z1, z2).terms():
                key = (int(j),) + tuple(sorted(v for v, e in enumerate(monom) for _ in range(e)))
                expected[key] = (expected.get(key, 0) + int(coeff)) % 7
        assert {(int(j), *map(int, r)): int(c) for j, r, c in zip(*got)} == \
            {k: v for k, v in expected.items() if v}
    assert substitution.terms(rows) == 1 + 1 + 4 + 2


def test_an_unlimited_attribution_budget_reduces_every_member(monkeypatch):
    """--attribution-budget none: no sampling (the span is exact, not a lower bound); the
    same family under the default budget is sampled."""
    from attngeom.lightning_alg.ideal import attribution as ideal_families
    monkeypatch.setattr(ideal_families, "MAX_MEMBERS", 4)
    report, _ = compute_ideal(3, 2, 3, max_degree=3, families=[ListFamily("prop24", prop24_cubics)],
                              attribution_budget=None)
    row = report.attribution["degrees"][2]["families"][0]
    assert row["members"] == row["used"] == 10 and not row["sampled"] and not row["lower_bound"]
    assert row["span"] == 10

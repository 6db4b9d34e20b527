"""``attngeom atlas`` (issue 28, asks 1, 2, 4): the grid grammar, resumable point records,
local completeness of the families, the Macaulay2 cross-check and the generated docs page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import attngeom
from attngeom.core.errors import BadInput
from attngeom.lightning_alg.atlas import sweep as atlas_module
from attngeom.lightning_alg.atlas.completeness import member_gradients
from attngeom.lightning_alg.atlas.grid import (
    DEFAULT_GRID, MAX_POINTS, AtlasPoint, parse_grid)
from attngeom.lightning_alg.atlas.m2_check import (
    compare_counts, m2_check, m2_script, parse_m2_output, run_m2)
from attngeom.lightning_alg.atlas.pages import atlas_markdown, load_atlas, unexplained_is_upper_bound
from attngeom.lightning_alg.ideal.attribution import SparseMembers

ROOT = Path(__file__).resolve().parent.parent
HAS_M2 = shutil.which("M2") is not None
needs_m2 = pytest.mark.skipif(not HAS_M2, reason="Macaulay2 (M2) is not installed")
#: Two small points: ADM Example 12 (d = t = a = 2) and its rank-one neighbour.
SMALL = "2,2,1..2"


# -- the grid ----------------------------------------------------------------------------------

def test_grid_grammar():
    points = parse_grid("3,1..2,1|3; 4,2,4,2@3 3,1,1", 4)
    assert points == [AtlasPoint(3, 1, 1), AtlasPoint(3, 1, 3), AtlasPoint(3, 2, 1),
                      AtlasPoint(3, 2, 3), AtlasPoint(4, 2, 4, 2, 3)]     # 3,1,1 once
    assert points[-1].name == "d=4,t=2,a=4,d'=2,K=3"
    assert points[-1].filename == "d4-t2-a4-dp2-K3.json"
    default = parse_grid(None, 4)
    assert default == parse_grid("default", 4) == parse_grid(DEFAULT_GRID, 4)
    assert len(set(default)) == len(default) and all(p.max_degree == 4 for p in default)


@pytest.mark.parametrize("spec, words", [
    ("3,-1,1", "t must be an integer >= 1"), ("0,2,2", "d must be >= 1"),
    ("3,2", "a term is d,t,a"), ("3,3..1,1", "runs downwards"), ("3,2,2@0", "degree K"),
    ("3,2,2@x", "after '@'"), ("__import__('os')", "a term is"), ("1+1,2,2", "d must be"),
    ("1..9,1..9,1..9", f"more than {MAX_POINTS}"), ("", "no points"), ("3,2,2,1,1", "a term")])
def test_bad_grids_are_one_line(spec, words):
    with pytest.raises(BadInput, match=words.replace("(", r"\(").replace("+", r"\+")):
        parse_grid(spec, 4)


def test_bad_input_exits_2_with_one_line(run_cli, tmp_path):
    for args in (["--grid", "3,-2,1"], ["--grid", "2,2,2", "--max-degree", "0"],
                 ["--grid", "2,2,2", "--m2-budget", "-1"], ["--grid", "2,2,2", "--families", "nope"],
                 ["--grid", "2,2,2", "--attribution-budget", "-2"]):
        code, out, err = run_cli("atlas", *args, "--out", str(tmp_path / "x"))
        assert code == 2, args
        assert err.startswith("attngeom: error:") and len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err
    assert not (tmp_path / "x" / "points").exists()


# -- records and resumability ------------------------------------------------------------------

def test_point_records_match_the_ideal_and_runs_resume(tmp_path, monkeypatch):
    first = attngeom.atlas(SMALL, 4, out=str(tmp_path))
    assert sorted(first.done["ideal"]) == sorted(p.name for p in parse_grid(SMALL))
    files = sorted((tmp_path / "points").glob("*.json"))
    assert [f.name for f in files] == ["d2-t2-a1-dp1-K4.json", "d2-t2-a2-dp1-K4.json"]
    for name in ("atlas.json", "atlas.csv", "atlas_unexplained.png"):
        assert (tmp_path / name).stat().st_size > 0
    # every figure is the ideal's own, computed the same way
    for record in first.records:
        key = record["key"]
        report = attngeom.ideal(key["d"], key["t"], key["a"], max_degree=4)
        assert record["minimal_generators"] == report.by_degree("minimal_generators")
        assert record["hilbert_function"] == report.by_degree("hilbert_function")
        assert record["variety_dimension"] == report.variety_dimension
        lost = {str(t["degree"]): t["unexplained"]["minimal_generators"]
                for t in report.attribution["degrees"]}
        assert {k: v["unexplained"] for k, v in record["attribution"]["degrees"].items()} == lost
    # a rerun reuses every point and writes nothing new
    stamps = [f.stat().st_mtime_ns for f in files]
    second = attngeom.atlas(SMALL, 4, out=str(tmp_path))
    assert not second.done["ideal"] and sorted(second.done["reused"]) == sorted(first.done["ideal"])
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert second.records == first.records
    # a torn file and a change of the code that matters are recomputed, the rest reused
    files[0].write_text(files[0].read_text()[:100])
    third = attngeom.atlas(SMALL, 4, out=str(tmp_path))
    assert third.done["ideal"] == ["d=2,t=2,a=1,d'=1,K=4"] and len(third.done["reused"]) == 1
    monkeypatch.setattr(atlas_module, "code_digest", lambda: "changed-code")
    fourth = attngeom.atlas(SMALL, 4, out=str(tmp_path))
    assert len(fourth.done["ideal"]) == 2
    assert fourth.records[0]["key"]["code_digest"] == "changed-code"
    assert "(2,2,2,1)" in str(fourth)


def test_code_digest_follows_the_sources():
    digest = atlas_module.code_digest()
    assert len(digest) == 16 and digest == atlas_module.code_digest()


# -- local completeness ------------------------------------------------------------------------

def test_member_gradients_are_the_product_rule():
    prime = 101
    # f0 = 3 y0^2 y2 + 5 y1 y2^2,  f1 = 7 y0 y1 y2
    members = SparseMembers(3, 2, np.array([0, 0, 1]), np.array([[0, 0, 2], [1, 2, 2], [0, 1, 2]]),
                            np.array([3, 5, 7]))
    y = np.array([2, 3, 5])
    expected = np.array([[2 * 3 * 2 * 5, 5 * 25, 3 * 4 + 2 * 5 * 3 * 5],
                         [7 * 3 * 5, 7 * 2 * 5, 7 * 2 * 3]]) % prime
    assert np.array_equal(member_gradients(members, y, prime), expected)


def test_local_completeness_needs_the_linear_relations():
    """At ADM Example 12 every family together reaches the codimension (the variety is a
    component of their zero set); without ADM Prop 9's linear relations it cannot."""
    complete = attngeom.atlas("2,2,2", 4).records[0]["local_completeness"]
    assert complete["rank"] == complete["codimension"] and complete["complete"]
    assert complete["sufficient_sets"] and all("linear" in s for s in complete["sufficient_sets"])
    without = attngeom.atlas("2,2,2", 4, families="veronese,resultant").records[0]
    lc = without["local_completeness"]
    assert not lc["complete"] and lc["rank"] < lc["codimension"]
    assert lc["sufficient_sets"] == [] and lc["failure_probability"] > 0


# -- Macaulay2 ---------------------------------------------------------------------------------

def test_m2_script_comes_from_the_parametrization():
    script = m2_script(2, 2, 2, 4)
    # one graph relation per coordinate: ADM Prop 5's count for d = t = 2 is 10
    assert script.count("*y_") == 10 and "DegreeLimit => 8" in script
    assert "QQ[w_0..w_5" in script                       # A (4) and row 1 of V (2)
    assert "minors" not in script
    low_rank = m2_script(3, 2, 1, 3)                      # a < d: rank A <= 1 by its 2-minors
    assert "minors(2, matrix{{w_0, w_1, w_2}, {w_3, w_4, w_5}, {w_6, w_7, w_8}})" in low_rank


def test_m2_comparison_reports_disagreement():
    """A fabricated Macaulay2 output through the parser: equal counts agree, one changed
    count is named with both values."""
    ours = {"1": 4, "2": 0, "3": 0, "4": 1}
    same = parse_m2_output("-- M2 chatter\natlas-m2 1 4\natlas-m2 4 1\natlas-m2 done\n", 4)
    assert same == ours and compare_counts(ours, same) == {"agrees": True, "differences": {}}
    mutated = parse_m2_output("atlas-m2 1 4\natlas-m2 4 2\natlas-m2 done\n", 4)
    verdict = compare_counts(ours, mutated)
    assert not verdict["agrees"]
    assert verdict["differences"] == {"4": {"attngeom": 1, "m2": 2}}
    for bad in ("atlas-m2 1 4\n", "atlas-m2 1 x\natlas-m2 done", "atlas-m2 5 1\natlas-m2 done",
                "atlas-m2 1 4\natlas-m2 1 4\natlas-m2 done"):
        with pytest.raises(BadInput):
            parse_m2_output(bad, 4)


def test_a_disagreeing_m2_is_reported(tmp_path, monkeypatch):
    """Mutation: Macaulay2 (fabricated) finds one quartic more at ADM Example 12; the record,
    the text and the docs table say so."""
    from attngeom.lightning_alg.atlas import m2_check as atlas_m2
    from attngeom.lightning_alg.atlas.pages import markdown_tables

    fabricated = "atlas-m2 1 4\natlas-m2 4 2\natlas-m2 done\n"
    monkeypatch.setattr(atlas_m2, "m2_executable", lambda: "/fabricated/M2")
    monkeypatch.setattr(atlas_m2, "m2_version", lambda: "0.0")
    monkeypatch.setattr(atlas_m2, "run_m2", lambda script, budget: {
        "status": "finished", "seconds": 0.5, "output": fabricated})
    report = attngeom.atlas("2,2,2", 4, out=str(tmp_path), families="none", check_m2=True)
    m2 = report.records[0]["m2"]
    assert m2["status"] == "finished" and not m2["agrees"]
    assert m2["differences"] == {"4": {"attngeom": report.records[0]["minimal_generators"]["4"],
                                       "m2": 2}}
    assert "DISAGREES" in str(report) and "| NO " in markdown_tables(report.records)[-1]


def test_without_m2_the_check_is_skipped_with_one_line(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    code, out, err = run_cli("atlas", "--grid", "2,2,1", "--max-degree", "2", "--families",
                             "none", "--check-m2", "--out", str(tmp_path))
    assert code == 0
    assert err.strip().splitlines() == [
        "attngeom: Macaulay2 (M2) is not installed: the Macaulay2 check is skipped "
        "(apt-get install macaulay2)"]
    record = json.loads(next((tmp_path / "points").glob("*.json")).read_text())
    assert record["m2"] is None
    assert run_m2("print 1", 5)["status"] == "unavailable"


@needs_m2
def test_m2_agrees_at_example_12_and_reruns_only_m2(tmp_path):
    first = attngeom.atlas("2,2,2", 4, out=str(tmp_path), families="none")
    assert first.records[0]["m2"] is None
    second = attngeom.atlas("2,2,2", 4, out=str(tmp_path), families="none", check_m2=True)
    assert second.done["m2"] == ["d=2,t=2,a=2,d'=1,K=4"] and not second.done["ideal"]
    m2 = second.records[0]["m2"]
    assert m2["status"] == "finished" and m2["agrees"], m2
    assert m2["minimal_generators"] == second.records[0]["minimal_generators"]
    third = attngeom.atlas("2,2,2", 4, out=str(tmp_path), families="none", check_m2=True)
    assert third.done["reused"] == ["d=2,t=2,a=2,d'=1,K=4"]


@needs_m2
def test_m2_budget_stops_the_run():
    result = m2_check(3, 2, 3, 4, {}, budget=0.05)
    assert result["status"] == "timeout" and "minimal_generators" not in result


# -- the committed atlas and its page ----------------------------------------------------------

def test_docs_atlas_page_is_generated_from_the_committed_atlas():
    """docs/atlas.md is what ``python -m attngeom.lightning_alg.atlas.pages
    data/atlas`` prints; regenerate it (see its module doc) after re-running the atlas."""
    atlas = load_atlas(ROOT / "data" / "atlas")
    page = (ROOT / "docs" / "atlas.md").read_text()
    assert page == atlas_markdown(atlas), "docs/atlas.md is stale"
    assert (ROOT / "docs" / "figures" / "atlas_unexplained.png").is_file()
    points = sorted(p.name for p in (ROOT / "data" / "atlas" / "points").glob("*.json"))
    assert points == sorted(point.filename for point in parse_grid(None, 4))


def test_the_page_says_where_a_lower_bound_span_makes_the_count_an_upper_bound():
    """A degree with unexplained generators and a family whose span is a lower bound
    (``lower_bound``: sampled, or a saturated projection) marks the point (its unexplained
    count is an upper bound); such a degree with none left, or an exact one, does not.  The committed atlas samples nowhere: the default budget covers
    all 6,825 cone-flattening quartics at (5,1,1,1) (a sample of 3,000 until 2026-11-27),
    so its 38 unexplained quartics are an exact count."""
    degree = lambda lower, left: {"attribution": {"degrees": {"4": {"lower_bound": lower, "unexplained": left}}}}
    upper = unexplained_is_upper_bound
    assert upper(degree(True, 5)) and not upper(degree(True, 0)) and not upper(degree(False, 5))
    assert not upper({"attribution": None})
    page = atlas_markdown(load_atlas(ROOT / "data" / "atlas"))
    assert "1 of 36 points has minimal generators that no registered family explains within " \
        "the attribution budget: (5,1,1,1)." in page
    assert "is a lower bound" not in page and "| 14,137 | 38 |" in page


@pytest.mark.slow
def test_worker_processes_give_the_same_records(tmp_path):
    """``--workers 2`` (spawned processes, one BLAS thread each) writes the same records as
    this process: nothing a point computes depends on where it runs."""
    serial = attngeom.atlas("3,2,1..3", 3, out=str(tmp_path / "serial"))
    parallel = attngeom.atlas("3,2,1..3", 3, out=str(tmp_path / "parallel"), workers=2)
    strip = lambda r: {k: v for k, v in r.items() if k != "seconds"} | {
        "local_completeness": {k: v for k, v in r["local_completeness"].items() if k != "seconds"}}
    assert [strip(r) for r in serial.records] == [strip(r) for r in parallel.records]

"""The generated mutation campaign (tests/mutation_campaign.py, issue 48): its machinery, and
the ledger of surviving mutants kept current (every entry still applies to the code and
gives the line it records; an equivalent mutant carries its reason)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("cosmic_ray", reason="the campaign's operators (requirements-dev.txt)")

from tests import mutation_campaign as campaign  # noqa: E402

LINEAR = "attngeom/lightning_alg/claims/linear.py"


def test_the_ledger_is_current():
    """Each entry names a paper-side module and a mutant that still applies there with the
    same line before and after: when the code moves, the ledger is updated with it."""
    for entry in campaign.read_ledger():
        assert entry["state"] in campaign.LEDGER_STATES, entry
        assert entry["module"] in campaign.paper_side_modules(), entry["key"]
        site = campaign.site_at(entry["module"], entry["operator"], entry["occurrence"], entry["line"])
        assert site is not None and (site.before, site.after) == (entry["before"], entry["after"]), (
            f"{entry['key']}: the mutant no longer applies as recorded; re-run the campaign "
            "with --ledger or update the entry")
        assert entry["state"] == "open" or entry["reason"].strip(), entry["key"]


def test_wilson_interval():
    low, high = campaign.wilson(95, 100)
    assert 0.887 < low < 0.889 and 0.978 < high < 0.979
    assert campaign.wilson(0, 0) == (0.0, 1.0)
    low, high = campaign.wilson(10, 10)
    assert high == pytest.approx(1.0) and 0.72 < low < 0.73


def test_sites_are_drawn_reproducibly_and_skip_example_literals():
    first = campaign.sample_sites([LINEAR], 4, seed=3)
    assert first == campaign.sample_sites([LINEAR], 4, seed=3)
    assert len(first) == 4 and len({s.key for s in first}) == 4
    code = (campaign.ROOT / LINEAR).read_text()
    skipped = campaign.example_lines(code)
    assert skipped and not {s.line for s in first} & skipped
    assert all(s.before != s.after for s in first)
    assert all(op in campaign.OPERATORS for op, _, _ in campaign.positions_of(LINEAR))


def test_the_oracle_finds_the_claims_that_import_a_module():
    claims = campaign.claims_seeing("attngeom/lightning_alg/invariants/linear.py", 50)
    assert "linear" in claims and claims[0] == "linear"
    assert not set(claims) & {"gated-sphere", "gt-kl-attention"}
    assert campaign.claims_seeing("attngeom/geometry_proofs/hyperbolic/poincare.py", 3)


def test_the_certificate_stage_takes_the_claims_certificates():
    names = campaign.certificates_of(["linear", "gyro-attention-weights"])
    on_disk = sorted(p.name for p in (campaign.ROOT / "certificates").glob("*.json"))
    assert names and set(names) <= set(on_disk)
    assert {n.split("__")[0] for n in names} == {"linear", "gyro-attention-weights"}
    assert names == [n for n in on_disk if n.startswith("linear__")] + [
        n for n in on_disk if n.startswith("gyro-attention-weights__")]
    assert campaign.certificates_of(["no-such-claim"]) == []
    assert campaign.certificates_of(["gt-counts-cost"]) == ["gt-counts-cost.json"]   # no params


def test_ledger_keys_name_ledger_entries():
    entries = campaign.read_ledger()
    if entries:
        sites = campaign.ledger_sites(entries, [entries[0]["key"]])
        assert [s.key for s in sites] == [entries[0]["key"]]
    with pytest.raises(SystemExit, match="not in the ledger"):
        campaign.ledger_sites(entries, ["attngeom/nowhere.py:1:core/AddNot#0"])


def test_the_summary_leaves_out_equivalent_mutants():
    site = {"key": "m:1:op#0"}
    results = [{"site": site, "paper": "GT", "outcome": "survived"},
               {"site": {"key": "m:2:op#0"}, "paper": "GT", "outcome": "killed"},
               {"site": {"key": "m:3:op#0"}, "paper": "GT", "outcome": "not-run"}]
    summary = campaign.summarize(results, [])
    assert summary["all"]["rate"] == 0.5 and summary["GT"]["survived"] == 1
    summary = campaign.summarize(results, [{"key": "m:1:op#0", "state": "equivalent"}])
    assert summary["all"]["rate"] == 1.0


@pytest.mark.slow
def test_a_small_campaign_end_to_end(tmp_path):
    """Two mutants of invariants/linear.py against the claims that import it; the working
    tree is not touched."""
    module = "attngeom/lightning_alg/invariants/linear.py"
    before = (campaign.ROOT / module).read_text()
    out = tmp_path / "run.json"
    assert campaign.main(["--modules", module, "--per-module", "2", "--claims-per-mutant", "2",
                          "--workers", "1", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert (campaign.ROOT / module).read_text() == before
    assert len(record["results"]) == 2
    assert {r["outcome"] for r in record["results"]} <= {"killed", "survived", "timeout"}

"""The mutation audit (issue 27, ask 5): ``tests/mutation_audit.py``.

The fast tests check the table itself -- every mutation's old snippet occurs exactly once in
its file (so the table cannot go stale silently), every claim of the registry is either
mutated or listed as out of scope -- and run one cheap mutation end to end.  The full audit
is slow (about 10 minutes on 2 cores): ``pytest -m slow tests/test_mutation_audit.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutation_audit as audit  # noqa: E402

from attngeom import cli  # noqa: E402


@pytest.mark.parametrize("mutation", audit.MUTATIONS, ids=lambda m: m.name)
def test_old_snippet_occurs_exactly_once(mutation):
    assert audit.snippet_count(mutation) == 1, (
        f"{mutation.file}: the old snippet of '{mutation.name}' occurs "
        f"{audit.snippet_count(mutation)} times; update tests/mutation_audit.py")
    assert mutation.old != mutation.new
    assert mutation.expect in ("refuted", "inconclusive")


def test_every_claim_is_mutated_or_out_of_scope():
    ids = {claim.id for claim in cli.REGISTRY}
    mutated = {m.claim for m in audit.MUTATIONS}
    out_of_scope = set(audit.REFUTED_AT_DEFAULTS) | set(audit.NO_PAPER_SIDE)
    assert mutated <= ids, mutated - ids
    assert out_of_scope <= ids, out_of_scope - ids
    assert not mutated & set(audit.REFUTED_AT_DEFAULTS), mutated & set(audit.REFUTED_AT_DEFAULTS)
    assert ids == mutated | out_of_scope, ids - mutated - out_of_scope
    assert set(audit.KNOWN_SURVIVORS) <= {m.name for m in audit.MUTATIONS}


def test_names_are_unique():
    names = [m.name for m in audit.MUTATIONS]
    assert len(names) == len(set(names))


def test_one_mutation_end_to_end():
    """The machinery: a copy of the repository, one mutation, the verdict flips; the
    working tree is not touched."""
    mutation = next(m for m in audit.MUTATIONS if m.claim == "monomial-count")
    before = (audit.ROOT / mutation.file).read_text()
    report = audit.run_audit([mutation], workers=1, timeout=None)
    assert (audit.ROOT / mutation.file).read_text() == before
    assert report["results"][0]["outcome"] == "flipped", report["results"][0]
    assert report["flip_rate"] == 1.0


@pytest.mark.slow
def test_every_mutation_flips():
    report = audit.run_audit(audit.MUTATIONS, workers=2)
    unexpected = [r for r in report["results"] if r["outcome"] != "flipped"
                  and f"{r['claim']}: {r['what']}" not in audit.KNOWN_SURVIVORS]
    assert not unexpected, audit.render({**report, "survived": [
        r for r in unexpected if r["outcome"] == "survived"], "errors": [
        r for r in unexpected if r["outcome"] == "error"]})

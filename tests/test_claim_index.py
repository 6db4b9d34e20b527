"""The claim index (issue 26, ask 5): ``attngeom/claim_index.json`` is what the live
registry says; the CLI's options, ``list`` and ``--help`` come from it without importing a
claim module, SymPy, SciPy, NumPy, matplotlib, torch or jax; ``verify CLAIM`` imports only
CLAIM's module; a stale index never gives a wrong claim."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attngeom import claim_index
from attngeom.registry import REGISTRY, full_registry

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sympy", "scipy", "numpy", "matplotlib", "torch", "jax", "flint", "networkx")


def test_the_committed_index_is_the_live_registry():
    fresh = claim_index.render(claim_index.build(full_registry()))
    assert claim_index.INDEX_FILE.read_text(encoding="utf-8") == fresh, (
        "attngeom/claim_index.json is stale: run "
        "python -m attngeom.registry > attngeom/claim_index.json")


def test_the_index_answers_as_the_registry_does():
    registry = full_registry()
    assert claim_index.ids() == [c.id for c in registry]
    assert [claim_index.describe(e) for e in claim_index.entries()] == [c.describe() for c in registry]
    live = registry.all_params()
    indexed = claim_index.all_params()
    assert list(indexed) == list(live)
    for name, p in indexed.items():
        assert (p.help, p.kind, p.option, p.minimum) == (live[name].help, live[name].kind,
                                                          live[name].option, live[name].minimum)
    from attngeom.lightning_alg.user_polynomial import PolynomialClaim
    assert [(p.name, p.help, p.kind) for p in claim_index.verify_poly_params().values()] == \
        [(p.name, p.help, p.kind) for p in PolynomialClaim.params]


def test_get_gives_the_registered_instance():
    registry = full_registry()
    for claim_id in ("linear", "gated-sphere", "gt-grad-sigma-key", "monomial-count"):
        assert REGISTRY.get(claim_id) is registry.get(claim_id)
    assert len(REGISTRY) == len(registry) and [c.id for c in REGISTRY] == claim_index.ids()


def test_a_stale_index_falls_back_to_the_full_registry(monkeypatch):
    from attngeom.core.errors import BadInput
    entries = {e["id"]: dict(e) for e in claim_index.load()["claims"]}
    entries["linear"]["module"] = "attngeom.lightning_alg.claims.chow111"   # moved away
    del entries["gated-sphere"]                                              # not indexed
    monkeypatch.setattr(claim_index, "_by_id", lambda: entries)
    assert REGISTRY.get("linear") is full_registry().get("linear")
    assert REGISTRY.get("gated-sphere").id == "gated-sphere"
    with pytest.raises(BadInput, match="unknown claim 'linaer'; did you mean 'linear'"):
        REGISTRY.get("linaer")


def _modules_after(*args: str) -> tuple[int, list[str]]:
    """Run ``attngeom ARGS`` in a fresh interpreter: its exit code and loaded modules."""
    code = ("import sys\nfrom attngeom.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as stop:\n    code = stop.code\n"
            "sys.stdout = sys.__stdout__\n"
            "print('\\nMODULES ' + str(code) + ' ' + ' '.join(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT)
    line = done.stdout.rstrip().splitlines()[-1].split()
    assert line[0] == "MODULES", done.stdout[-500:] + done.stderr[-2000:]
    return int(line[1]), line[2:]


@pytest.mark.parametrize("args", [("--help",), ("list",), ("list", "--source", "GT"),
                                  ("verify", "--help"), ("show", "--help"),
                                  ("certify", "--help"), ("verify-poly", "--help")])
def test_help_and_list_import_no_claim_module_and_nothing_heavy(args):
    code, modules = _modules_after(*args)
    assert code == 0
    heavy = [m for m in modules if m.split(".")[0] in HEAVY
             or m.startswith(("attngeom.lightning_alg", "attngeom.geometry_proofs"))]
    assert not heavy, heavy


def test_verify_imports_only_the_claims_module():
    code, modules = _modules_after("verify", "linear", "--d", "3", "--t", "2", "--a", "3")
    assert code == 0
    claim_modules = [m for m in modules if m.startswith("attngeom.lightning_alg.claims.")
                     or m.startswith("attngeom.geometry_proofs")]
    assert claim_modules == ["attngeom.lightning_alg.claims.base",
                             "attngeom.lightning_alg.claims.linear"], claim_modules
    assert not [m for m in modules if m.split(".")[0] in ("scipy", "matplotlib", "torch", "jax")]


def test_the_index_is_json_of_every_claim_with_its_module():
    data = json.loads(claim_index.INDEX_FILE.read_text(encoding="utf-8"))
    for entry in data["claims"]:
        assert set(entry) == {"id", "source", "statement", "module", "methods", "params",
                              "examples"}
        assert entry["module"].startswith(("attngeom.lightning_alg.", "attngeom.geometry_proofs."))

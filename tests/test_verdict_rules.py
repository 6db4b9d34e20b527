"""The rules that the mutation campaign's survivors teach (issue 48), each as a test.

Where each rule is enforced:

=====================================================  =========================================
rule                                                   test
=====================================================  =========================================
defaults and examples at generic values                tests/test_generic_examples.py
``proved`` covers the objects as built                 :func:`test_proved_covers_every_member_as_built`,
                                                       :func:`test_proved_families_cover_every_member_as_built`
0 members / 0 points / 0 checks is never holding       :func:`test_a_holding_verdict_that_checked_nothing_is_not_applicable`,
                                                       :func:`test_a_sweep_with_no_point_never_holds`,
                                                       tests/test_new_families.py (empty families)
every stated count is pinned and compared              :func:`test_every_stated_count_is_compared`
every reference independent of the code under test     tests/test_mutation_audit.py (each mutation
                                                       of the code under test must flip its claim,
                                                       which a reference built from the same code
                                                       cannot do) and the campaign's ledger
a cost claim checks its kernels' values; every CPU     :func:`test_cost_claims_check_the_values`,
kernel is used by some claim                           :func:`test_every_cpu_kernel_is_used_by_a_claim`
a missing-hypothesis / convention kind shows the       :func:`test_missing_conditions_are_checked_inside_and_out`
condition holding inside, the witness outside
verdict texts never contradict themselves              :func:`test_relations_stated_in_verdict_texts_hold`
an equality of two models checks that the maps differ  tests/test_beyond.py (a lost or transposed
                                                       mask, a lost skip: refuted)
=====================================================  =========================================

Each rule's test is also fed a made-up violation and must fail on it.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from attngeom.core.claim import Claim
from attngeom.core.verdict import Status, combine, proved
from attngeom.registry import full_registry

ROOT = Path(__file__).resolve().parents[1]
CERTIFICATES = sorted((ROOT / "certificates").glob("*.json"))
REGISTRY = full_registry()
INDEX = json.loads((ROOT / "attngeom" / "claim_index.json").read_text(encoding="utf-8"))


def _certificates() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in CERTIFICATES]


def _texts(verdict: dict):
    """The summary of a verdict and of each of its parts."""
    yield verdict.get("summary") or ""
    parts = (verdict.get("evidence") or {}).get("parts")
    if isinstance(parts, dict):
        for part in parts.values():
            if isinstance(part, dict):
                yield from _texts(part)


# -- verdict texts never contradict themselves ----------------------------------------------

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
#: "x = 1.5 < 2/lambda_max = 1.853" or "1.5 < 1.853": a number, a relation, and the number
#: it is compared with (after an optional "name =").
RELATION = re.compile(rf"({_NUM})\s*(<=|>=|<|>|!=)\s*(?:[^=<>,;()\n]*?=\s*)?({_NUM})(?![\w./*^])")
_HOLDS = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__,
          "!=": float.__ne__}


def contradictions(text: str) -> list[str]:
    """The relations ``a < b`` (and <=, >, >=, !=) between two printed numbers in ``text``
    that do not hold for those numbers."""
    return [m.group(0) for m in RELATION.finditer(text)
            if not _HOLDS[m.group(2)](float(m.group(1)), float(m.group(3)))]


def test_relations_stated_in_verdict_texts_hold():
    """Issue 48: the frechet verdict printed "eta = 1 >= 2/lambda_max = 1.9648"."""
    found, bad = 0, []
    for cert in _certificates():
        for text in _texts(cert["verdict"]):
            found += len(RELATION.findall(text))
            bad += [f"{cert['claim']}: {c}" for c in contradictions(text)]
    assert not bad, bad
    assert found >= 40          # the pattern does read the verdicts (63 relations today)


def test_the_relation_reader_has_teeth():
    assert contradictions("eta = 1 >= 2/lambda_max = 1.9648 (outside)") == [
        "1 >= 2/lambda_max = 1.9648"]
    assert contradictions("Algorithm 1 at eta = 1.5 < 2/lambda_max = 1.85302 converges") == []
    assert contradictions("sup |K| = 0 < kappa_0 = 1") == []
    assert contradictions("rank 7 != 7") == ["7 != 7"]
    assert contradictions("x < 2/lambda") == []           # "2/lambda" is no number


# -- a missing hypothesis / another convention: inside and outside ------------------------

CONDITION_KINDS = ("missing-hypothesis", "convention")


def condition_gaps(certificates: list[dict]) -> list[str]:
    """Claims with a missing-hypothesis or convention erratum that show no holding check
    inside the condition: neither the erratum's ``check`` (the claim re-run with the
    condition or convention, which must hold) nor another certificate of the claim that
    holds, nor a holding part of the refuted verdict besides the printed statement."""
    holding = {c["claim"] for c in certificates if Status(c["verdict"]["status"]).holds}
    gaps = []
    for cert in certificates:
        verdict = cert["verdict"]
        for erratum in verdict.get("errata") or []:
            if erratum.get("kind") not in CONDITION_KINDS:
                continue
            parts = (verdict.get("evidence") or {}).get("parts") or {}
            inside_part = any(name != "printed" and isinstance(p, dict)
                              and Status(p.get("status", "refuted")).holds
                              for name, p in parts.items())
            check = erratum.get("check") or ""
            check_holds = bool(re.search(r"(^|:\s*)(proved|verified|consistent)\b", check))
            if not (inside_part or check_holds or cert["claim"] in holding):
                gaps.append(f"{cert['claim']}: {erratum['kind']} with no holding check inside")
            if verdict["status"] != "refuted":
                gaps.append(f"{cert['claim']}: a {erratum['kind']} erratum on a "
                            f"{verdict['status']} verdict")
    return gaps


def test_missing_conditions_are_checked_inside_and_out():
    certificates = _certificates()
    kinds = [e["kind"] for c in certificates for e in c["verdict"].get("errata") or []]
    assert sum(k in CONDITION_KINDS for k in kinds) >= 5
    assert condition_gaps(certificates) == []


def test_the_condition_rule_has_teeth():
    erratum = {"kind": "missing-hypothesis", "check": "--variant x: refuted, ..."}
    alone = [{"claim": "c", "verdict": {"status": "refuted", "errata": [erratum]}}]
    assert condition_gaps(alone) == ["c: missing-hypothesis with no holding check inside"]
    inside = [*alone, {"claim": "c", "verdict": {"status": "consistent", "errata": []}}]
    assert condition_gaps(inside) == []
    checked = [{"claim": "c", "verdict": {"status": "refuted", "errata": [
        {**erratum, "check": "--variant x: proved, holds"}]}}]
    assert condition_gaps(checked) == []


# -- 0 members, points or checks: never holding --------------------------------------------

class _Vacuous(Claim):
    id, source, statement = "fake-vacuous", "test", "Every element of an empty list is zero."
    methods = ("exact",)
    params = ()

    def check_exact(self, params, context):
        return proved(checked=0, summary="all 0 elements are zero", evidence={})


def test_a_holding_verdict_that_checked_nothing_is_not_applicable():
    v = _Vacuous().verify({}, "exact")
    assert v.status is Status.NOT_APPLICABLE and "examined nothing" in v.summary


def test_a_sweep_with_no_point_never_holds():
    with pytest.raises(AssertionError):
        combine([])


# -- a cost claim checks the values; every CPU kernel is used by a claim --------------------

#: Claims about the cost of computing something (operation counts, FLOPs, speed-ups) and the
#: claims they compute it with; each must check the values of what it counts.
COST_CLAIMS = {"riemannian-attention-cost": "values"}
#: Claims with "cost" in their name that count no kernel, and why.
NOT_COST_CLAIMS = {"gt-counts-cost": "the arithmetic of GT's printed timings (Tables 2-3): "
                                     "it runs no kernel"}


def test_cost_claims_check_the_values():
    named = {e["id"] for e in INDEX["claims"] if "cost" in e["id"]}
    assert named == set(COST_CLAIMS) | set(NOT_COST_CLAIMS)
    for claim, part in COST_CLAIMS.items():
        certs = [c for c in _certificates() if c["claim"] == claim]
        assert certs, claim
        for cert in certs:
            parts = cert["verdict"]["evidence"].get("parts") or {}
            assert part in parts and Status(parts[part]["status"]).holds, (claim, sorted(parts))


#: The accelerated (fast) kernels that run on a CPU, by module, and the public names a claim
#: need not call (with the reason).  GPU-only modules (CUDA, Triton, CUDA graphs) are out:
#: CI has no GPU, their tests compare them with these.
CPU_KERNEL_MODULES = ("geometry_proofs/gauge/accelerated/kl_primitives.py",
                      "geometry_proofs/gauge/accelerated/kl_pairwise.py",
                      "geometry_proofs/gauge/accelerated/kl_structured.py",
                      "geometry_proofs/gauge/accelerated/kl_attention.py",
                      "geometry_proofs/gauge/accelerated/kl_statistics_cpu.py",
                      "geometry_proofs/hyperbolic/accelerated/gram.py")
NOT_KERNELS = {
    "instruction_set": "reports which SIMD path the C extension took (information only)",
    "dot_product_attention": "the Euclidean baseline of the benchmarks, not a GT kernel",
    "check_attention_inputs": "input validation shared by the kernels (run by each of them)",
}


def _public_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]


def _claim_reachable_sources() -> dict[str, str]:
    """module path -> source, for every module some claim's defining module imports
    (directly or not), benchmarks and the accelerated modules themselves left out."""
    from tests.test_layout import import_graph
    graph = import_graph(ROOT / "attngeom")
    seen: set[str] = set()
    stack = [e["module"] for e in INDEX["claims"]]
    while stack:
        module = stack.pop()
        if module not in seen:
            seen.add(module)
            stack.extend(graph.get(module, ()))
    out = {}
    for module in seen:
        path = ROOT / (module.replace(".", "/") + ".py")
        if path.is_file() and "benchmark" not in module:
            out[module] = path.read_text(encoding="utf-8")
    return out


def unused_kernels(modules, sources: dict[str, str]) -> list[str]:
    """Public functions of the kernel ``modules`` named by no claim-reachable module."""
    out = []
    for rel in modules:
        for name in _public_functions(ROOT / "attngeom" / rel):
            if name in NOT_KERNELS:
                continue
            own = "attngeom." + rel.removesuffix(".py").replace("/", ".")
            if not any(re.search(rf"\b{name}\b", text) for module, text in sources.items()
                       if module != own):
                out.append(f"{rel}: {name}")
    return out


def test_every_cpu_kernel_is_used_by_a_claim():
    assert unused_kernels(CPU_KERNEL_MODULES, _claim_reachable_sources()) == []


def test_the_kernel_rule_has_teeth():
    sources = {"m": "from x import einstein_midpoint"}
    unused = unused_kernels(["geometry_proofs/hyperbolic/accelerated/gram.py"], sources)
    assert unused and "geometry_proofs/hyperbolic/accelerated/gram.py: einstein_midpoint" not in unused


# -- proved covers every member as built; every stated count is compared ----------------------

def _family_claims():
    from attngeom.lightning_alg.claims.base import FamilyClaim
    for entry in INDEX["claims"]:
        claim = REGISTRY.get(entry["id"])
        if isinstance(claim, FamilyClaim) and entry["examples"]:
            yield claim, entry["examples"][0]


#: Family claims tested elsewhere or too slow here, and where.
FAMILY_ELSEWHERE = {
    "pencil-pair": "1,686 members: tests/test_new_families.py::"
                   "test_pencil_pair_proved_covers_every_member_as_built and the mutations there",
    "brill": "its 40 members take minutes to build: the slow run of this test (-m slow)",
}


def _cross_column(claim) -> bool:
    from attngeom.lightning_alg.claims.cross_column import CrossColumnFamilyClaim
    return isinstance(claim, CrossColumnFamilyClaim)


def _family_cases(slow: bool, cross_column: bool = False):
    out = []
    for claim, example in _family_claims():
        if _cross_column(claim) != cross_column:
            continue
        marks = ()
        if claim.id in FAMILY_ELSEWHERE:
            if claim.id != "brill":
                continue
            marks = (pytest.mark.slow,)
        out.append(pytest.param(claim.id, example, id=claim.id, marks=marks))
    return out


def _with_members(monkeypatch, claim, change):
    """``claim.members`` with ``change`` applied to the list it builds."""
    original = type(claim).members

    def members(self, params, coords):
        return change(original(self, params, coords))
    monkeypatch.setattr(type(claim), "members", members)


def _verify(claim, example):
    params = {k: v for k, v in example.items() if k not in ("method", "seed")}
    return claim.verify(params, example.get("method", "auto"))


@pytest.mark.parametrize("claim_id, example", _family_cases(slow=False))
def test_proved_covers_every_member_as_built(monkeypatch, claim_id, example):
    """The last member as built, plus 1 (off the variety wherever the member vanishes): no
    holding verdict may survive it, whatever the method (the check must reach every member
    the family yields, not a slice formula and a sample)."""
    from attngeom.lightning_alg.invariant import Invariant
    claim = REGISTRY.get(claim_id)
    assert _verify(claim, example).status.holds, claim_id

    def off(members):
        # + s^k for a coordinate s of the member, k its degree: homogeneous like the member,
        # and off the variety (J is prime and holds no coordinate, so s^k is not in J)
        last = members[-1]
        s = sorted(last.poly.free_symbols, key=str)[0]
        return members[:-1] + [Invariant(last.poly + s ** last.degree, last.family,
                                         last.source, dict(last.indices))]
    _with_members(monkeypatch, claim, off)
    assert not _verify(claim, example).status.holds, claim_id


# The cross-column families (cross-cubic, low-rank, syzygy, cross-row, cone-flattening,
# minor-relations, ...) build the members ``show`` prints and the ones they check with one
# builder, ``family(params, coords, indices)``: the rules are tested there.

@pytest.mark.parametrize("claim_id, example", _family_cases(slow=False, cross_column=True))
def test_every_stated_count_is_compared(monkeypatch, claim_id, example):
    """A family whose theorem states its number of members (``count``, all the cross-column
    families): one member lost by the builder, the index sets unchanged, must not hold (the
    count is compared with the members as built, not assumed)."""
    claim = REGISTRY.get(claim_id)
    original = type(claim).family

    def fewer(self, params, coords, indices):
        family = original(self, params, coords, indices)
        return family.subfamily(list(range(family.size - 1))) if family.size > 1 else family
    monkeypatch.setattr(type(claim), "family", fewer)
    assert not _verify(claim, example).status.holds, claim_id


def test_proved_families_cover_every_member_as_built():
    """Over every committed certificate: a ``proved`` verdict with a ``members`` part checked
    every member the family yields, none sampled (else the verdict is ``verified``)."""
    seen = 0
    for cert in _certificates():
        verdict = cert["verdict"]
        part = ((verdict.get("evidence") or {}).get("parts") or {}).get("members")
        if verdict["status"] != "proved" or not isinstance(part, dict):
            continue
        seen += 1
        assert not part.get("sampled") and part.get("members_checked") == part.get(
            "members_total"), (cert["claim"], cert["params"])
        assert "symbolically_expanded" not in part, cert["claim"]
    assert seen >= 10

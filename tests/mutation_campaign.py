"""Generated mutation campaign over the paper side, with the claims as the oracle (issue 48).

``tests/mutation_audit.py`` is a curated list written by the same hands as the claims; this
script is not.  It takes cosmic-ray's mutation operators (the maintained operator set of
https://github.com/sixty-north/cosmic-ray, used as a library: :data:`OPERATORS`), finds every
place in every paper-side module (:data:`PAPER_SIDE`) where one applies, samples the sites
uniformly per module with a seed, and for each mutant runs the claims that can see it:

* the claims whose defining module imports the mutated module, directly or through other
  modules (the import graph of ``tests/test_layout.py``, lazy imports included), nearest
  first, at most ``--claims-per-mutant`` of them (default 8: fewer claims can only miss a
  kill, so the rate is a lower bound);
* each at its first paper example (``claim.examples[0]``, the example's own method), seed 0,
  in a fresh interpreter in a copy of the repository, the mutant applied there.

A mutant is **killed** when some claim's status differs from the unmutated tree's (any
direction: proved -> refuted, refuted -> proved, holding -> not-applicable) or the check
raises (``crash``), **timeout** when the claims did not answer within the mutant's budget
(``--timeout-factor`` x the baseline's seconds + 60 s; counted as killed: the change did
not go unnoticed, but reported apart), **survived** otherwise, and **not-run** when no claim
imports the module.  The kill rate is killed / (killed + survived) with a Wilson 95%
interval, overall and per paper; mutants that the ledger marks equivalent are left out of
the rate (they cannot be killed: the program means the same).

Every survivor goes into the ledger ``tests/mutation_ledger.json`` (module, operator,
occurrence, line, the line before and after, the claims that ran) with a state: ``open``
(no claim notices it yet), ``equivalent`` (with a one-line reason a reviewer can check), or
``killed`` (with the claim or example that now kills it).  ``tests/test_mutation_campaign.py``
keeps the ledger from going stale (each entry must still apply and give the same line) and
checks the machinery on a small run (slow).

Usage::

    python tests/mutation_campaign.py --per-module 3 --seed 0 --workers 2 --json out.json
    python tests/mutation_campaign.py --list                 # sites per module, nothing run
    python tests/mutation_campaign.py --per-module 3 --ledger tests/mutation_ledger.json

The run takes minutes to hours (docs/mutation-campaign.md has the figures of the last one).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.mutation_audit import copy_repository  # noqa: E402
from tests.test_layout import import_graph  # noqa: E402

#: The paper side: every module of the papers' packages, less what no claim judges
#: (renderings of reports, benchmarks and their CLI, the Macaulay2 export and check, the
#: accelerated kernels' GPU-only code paths, figure makers).  Paths relative to attngeom/.
PAPER_SIDE = ("lightning_alg/**/*.py", "geometry_proofs/**/*.py")
NOT_PAPER_SIDE = ("__init__.py", "attention_benchmark.py", "gt_baseline.py", "figure3.py",
                  "figures.py", "report_text.py", "report_markdown.py", "pages.py", "m2_export.py",
                  "m2_check.py", "grid.py", "sweep.py", "embedding_reports.py",
                  "kl_statistics_cuda.py", "kl_statistics_triton.py",
                  "kl_statistics_triton_kernels.py", "kl_attention_graphs.py", "graphs.py",
                  "runner.py", "readings.py", "report.py")
#: cosmic-ray's operators used: arithmetic and comparison replacements, unary and boolean
#: changes, numbers, loops, control flow.  Left out: bitwise operators (no paper formula
#: uses them), identity comparisons (``is``), decorator removal and variable insertion /
#: replacement (they break a module's import or every claim at once: trivially killed,
#: which would only inflate the rate).
_ARITHMETIC = ("Add", "Sub", "Mul", "Div", "FloorDiv", "Mod", "Pow")
_COMPARISON = ("Eq", "NotEq", "Lt", "LtE", "Gt", "GtE")
OPERATORS = tuple(
    [f"core/ReplaceBinaryOperator_{a}_{b}" for a in _ARITHMETIC for b in _ARITHMETIC if a != b]
    + [f"core/ReplaceComparisonOperator_{a}_{b}" for a in _COMPARISON for b in _COMPARISON if a != b]
    + ["core/ReplaceUnaryOperator_USub_UAdd", "core/ReplaceUnaryOperator_UAdd_USub",
       "core/ReplaceUnaryOperator_Delete_Not", "core/AddNot", "core/ReplaceTrueWithFalse",
       "core/ReplaceFalseWithTrue", "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd",
       "core/NumberReplacer", "core/ZeroIterationForLoop", "core/ReplaceBreakWithContinue",
       "core/ReplaceContinueWithBreak"])
PAPERS = {"ADM/HMK": "lightning_alg/", "GEC": "geometry_proofs/gating/",
          "GT": "geometry_proofs/gauge/", "RGT": "geometry_proofs/hyperbolic/",
          "engine": "geometry_proofs/"}
LEDGER = ROOT / "tests" / "mutation_ledger.json"
LEDGER_STATES = ("open", "equivalent", "killed")


@dataclass(frozen=True)
class Site:
    """One mutant: ``operator`` applied at its ``occurrence``-th position in ``module``."""

    module: str         # path relative to the repository root
    operator: str
    occurrence: int
    line: int           # 1-based line of the mutated position
    before: str         # that line, stripped
    after: str          # the same line in the mutant, stripped

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line}:{self.operator}#{self.occurrence}"


def paper_paper(module: str) -> str:
    """The paper a paper-side module belongs to (:data:`PAPERS`, first match)."""
    rel = module.removeprefix("attngeom/")
    return next(name for name, prefix in PAPERS.items() if rel.startswith(prefix))


def paper_side_modules(root: Path | None = None) -> list[str]:
    """The mutated modules, sorted, as paths relative to ``root``."""
    root = ROOT if root is None else root
    package = root / "attngeom"
    found = {p for pattern in PAPER_SIDE for p in package.glob(pattern)
             if p.name not in NOT_PAPER_SIDE}
    return sorted(p.relative_to(root).as_posix() for p in found)


def _operator(name: str):
    from cosmic_ray.plugins import get_operator
    return get_operator(name)()


def positions_of(module: str, root: Path | None = None) -> list[tuple[str, int, int]]:
    """Every (operator, occurrence, line) of :data:`OPERATORS` in ``module``, in operator then
    position order (one parse of the module)."""
    root = ROOT if root is None else root
    from cosmic_ray.ast import Visitor, get_ast

    code = (root / module).read_text(encoding="utf-8")
    tree = get_ast(code)
    skipped = example_lines(code)
    out = []
    for name in OPERATORS:
        operator = _operator(name)
        lines: list[int] = []

        class Positions(Visitor):
            def visit(self, node):
                lines.extend(start[0] for start, _ in operator.mutation_positions(node))
                return node

        Positions().walk(tree)
        out.extend((name, occurrence, line) for occurrence, line in enumerate(lines)
                   if line not in skipped)
    return out


def example_lines(code: str) -> set[int]:
    """The lines of the claims' ``examples`` literals (the points a claim is checked at, not
    the code that checks it; the oracle reads them from the unmutated tree anyway)."""
    import ast
    lines: set[int] = set()
    for node in ast.walk(ast.parse(code)):
        value = None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(x, ast.Name) and x.id == "examples" for x in targets):
                value = node.value
        elif isinstance(node, ast.keyword) and node.arg == "examples":
            value = node.value
        if value is not None:
            lines.update(range(value.lineno, value.end_lineno + 1))
    return lines


def site_at(module: str, operator: str, occurrence: int, line: int,
            root: Path | None = None) -> Site | None:
    """The mutant at that position, with its line before and after (None when the operator
    changes nothing there)."""
    from cosmic_ray.mutating import mutate_code

    root = ROOT if root is None else root
    code = (root / module).read_text(encoding="utf-8")
    mutated = mutate_code(code, _operator(operator), occurrence)
    if mutated is None or mutated == code:
        return None
    before, after = code.splitlines(), mutated.splitlines()
    return Site(module, operator, occurrence, line, before[line - 1].strip(),
                after[line - 1].strip() if line - 1 < len(after) else "")


def mutant_code(site: Site, root: Path | None = None) -> str | None:
    """The module's text with ``site`` applied (None if it no longer applies)."""
    root = ROOT if root is None else root
    from cosmic_ray.mutating import mutate_code
    return mutate_code((root / site.module).read_text(encoding="utf-8"), _operator(site.operator),
                       site.occurrence)


def sample_sites(modules: list[str], per_module: int, seed: int, root: Path | None = None) -> list[Site]:
    """``per_module`` mutants drawn uniformly (without replacement) from each module's
    positions (a position where the operator changes nothing is skipped and another drawn)."""
    root = ROOT if root is None else root
    chosen = []
    for module in modules:
        positions = positions_of(module, root)
        random.Random(f"{seed}:{module}").shuffle(positions)
        taken = 0
        for operator, occurrence, line in positions:
            if taken == per_module:
                break
            site = site_at(module, operator, occurrence, line, root)
            if site is not None:
                chosen.append(site)
                taken += 1
    return chosen


# -- the oracle ----------------------------------------------------------------------------

def claim_modules(root: Path | None = None) -> dict[str, str]:
    """claim id -> the module that defines it (the committed claim index)."""
    root = ROOT if root is None else root
    index = json.loads((root / "attngeom" / "claim_index.json").read_text(encoding="utf-8"))
    return {entry["id"]: entry["module"] for entry in index["claims"]}


def _distances(graph: dict[str, set[str]], start: str) -> dict[str, int]:
    seen, frontier, depth = {start: 0}, [start], 0
    while frontier:
        depth += 1
        frontier = [t for s in frontier for t in graph.get(s, ()) if t not in seen]
        for t in frontier:
            seen.setdefault(t, depth)
    return seen


def claim_classes(root: Path | None = None) -> dict[str, str]:
    """claim id -> the module of the claim's class (where a claim registered in one module,
    GEC's ``gating/claims.py`` say, is implemented in another)."""
    root = ROOT if root is None else root
    code = ("import json; from attngeom.registry import full_registry; "
            "print(json.dumps({c.id: type(c).__module__ for c in full_registry()}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=_environment(root),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def claims_seeing(module: str, limit: int, root: Path | None = None,
                  graph: dict[str, set[str]] | None = None,
                  classes: dict[str, str] | None = None) -> list[str]:
    """The claims whose defining module, or the module of their class, reaches ``module``
    through imports, nearest first (ties by id), at most ``limit``: the claims implemented
    in ``module`` itself come first."""
    root = ROOT if root is None else root
    graph = import_graph(root / "attngeom") if graph is None else graph
    classes = claim_classes(root) if classes is None else classes
    name = module.removesuffix(".py").replace("/", ".")
    ranked = []
    for claim, defining in claim_modules(root).items():
        found = [d for d in (_distances(graph, defining).get(name),
                             _distances(graph, classes.get(claim, defining)).get(name))
                 if d is not None]
        if found:
            ranked.append((min(found), claim))
    return [claim for _, claim in sorted(ranked)[:limit]]


RUNNER = r"""
import json, sys, time
import attngeom
out = {}
for claim_id, example in json.loads(sys.argv[1]):
    start = time.perf_counter()
    try:
        out[claim_id] = attngeom.verify(claim_id, **example).status.value
    except attngeom.BadInput as error:
        out[claim_id] = "bad-input"
    except Exception as error:
        out[claim_id] = "crash: " + type(error).__name__
    print(json.dumps({"claim": claim_id, "status": out[claim_id],
                      "seconds": round(time.perf_counter() - start, 3)}), flush=True)
"""


CERTIFICATE_RUNNER = r"""
import json, sys
from pathlib import Path
from attngeom.core.certificates import check_certificate
from attngeom.registry import REGISTRY
for name in json.loads(sys.argv[1]):
    try:
        result = check_certificate(Path("certificates") / name, REGISTRY)
        problems = list(result.problems)
    except Exception as error:
        problems = ["crash: " + type(error).__name__]
    print(json.dumps({"file": name, "problems": problems[:3]}), flush=True)
    if problems and sys.argv[2] == "first":
        break
"""


def certificates_of(claims: list[str], root: Path | None = None) -> list[str]:
    """The committed certificates (file names) of ``claims``, in claim order."""
    root = ROOT if root is None else root
    by_claim: dict[str, list[str]] = {}
    for path in sorted((root / "certificates").glob("*.json")):
        by_claim.setdefault(path.stem.split("__")[0], []).append(path.name)
    return [name for claim in claims for name in by_claim.get(claim, [])]


def run_certificates(copy: Path, names: list[str], timeout: float | None,
                     stop_at_first: bool = True) -> tuple[dict, float, bool]:
    """Re-check the committed certificates ``names`` in ``copy`` as ``check-certificates``
    does (every value compared by its evidence kind, the digest of the claim's objects
    included), by default stopping at the first that does not check out: (problems by
    file, seconds, timed out)."""
    records, seconds, timed_out = _run_runner(
        copy, [CERTIFICATE_RUNNER, json.dumps(names), "first" if stop_at_first else "all"], timeout)
    return {r["file"]: r["problems"] for r in records}, seconds, timed_out


def _run_runner(copy: Path, args: list[str], timeout: float | None) -> tuple[list[dict], float, bool]:
    """``python -c ARGS`` in ``copy``: the JSON lines it printed (also those printed before a
    timeout), the seconds, and whether it timed out."""
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", *args], cwd=copy, env=_environment(copy),
                              capture_output=True, text=True, timeout=timeout)
        stdout, timed_out = done.stdout, False
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        timed_out = True
    records = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return records, time.monotonic() - start, timed_out


def _environment(copy: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", ATTNGEOM_THREADS="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def first_examples(root: Path | None = None) -> dict[str, dict]:
    """claim id -> its first paper example, from the unmutated tree's claim index (a mutant
    of an example literal cannot move the point the oracle checks)."""
    root = ROOT if root is None else root
    index = json.loads((root / "attngeom" / "claim_index.json").read_text(encoding="utf-8"))
    return {entry["id"]: entry["examples"][0] for entry in index["claims"] if entry["examples"]}


def run_claims(copy: Path, claims: list[str], timeout: float | None) -> tuple[dict, float, bool]:
    """Statuses of ``claims`` at their first example in ``copy``: (status by claim, seconds,
    timed out)."""
    examples = first_examples(copy)
    records, seconds, timed_out = _run_runner(
        copy, [RUNNER, json.dumps([[c, examples[c]] for c in claims])], timeout)
    return {r["claim"]: r["status"] for r in records}, seconds, timed_out


_COPIES: dict[int, Path] = {}


def _worker_copy(root: str) -> Path:
    """This worker process's copy of the checkout at ``root`` (made once)."""
    pid = os.getpid()
    if pid not in _COPIES:
        _COPIES[pid] = copy_repository(Path(tempfile.mkdtemp(prefix="attngeom-campaign-")),
                                       Path(root))
    return _COPIES[pid]


def baseline_task(task) -> dict:
    """(root, claims) -> the unmutated statuses and seconds."""
    root, claims = task
    statuses, seconds, _ = run_claims(_worker_copy(root), claims, None)
    return {"statuses": statuses, "seconds": seconds}


def certificate_baseline_task(task) -> dict:
    """(root, certificate names) -> seconds by name, and the names that do not check out
    unmutated (none on a healthy tree; they are left out of the mutants' oracle)."""
    root, names = task
    problems, _, _ = run_certificates(_worker_copy(root), names, None, stop_at_first=False)
    return {"failing": [n for n in names if problems.get(n) or n not in problems]}


def mutant_task(task) -> dict:
    """(root, site as dict, claims, baseline statuses, timeout) -> the mutant's outcome."""
    root, site, claims, base, timeout, names, certificate_timeout = task
    site = Site(**site)
    copy = _worker_copy(root)
    path = copy / site.module
    original = path.read_text(encoding="utf-8")
    mutated = mutant_code(site, copy)
    if mutated is None:
        return {"outcome": "not-applied"}
    problems, stage = {}, "verify"
    try:
        path.write_text(mutated, encoding="utf-8")
        statuses, seconds, timed_out = run_claims(copy, claims, timeout)
        changed = {c: [base.get(c), statuses.get(c)] for c in claims
                   if c in statuses and statuses[c] != base.get(c)}
        crashed = any(str(s).startswith("crash") for s in statuses.values())
        if not (changed or crashed or timed_out) and names:
            stage = "certificates"
            found, spent, timed_out = run_certificates(copy, names, certificate_timeout)
            seconds += spent
            problems = {name: p for name, p in found.items() if p}
    finally:
        path.write_text(original, encoding="utf-8")
    if changed or crashed or problems:
        outcome = "killed"
    elif timed_out:
        outcome = "timeout"
    else:
        outcome = "survived"
    return {"outcome": outcome, "stage": stage, "changed": changed, "certificates": problems,
            "seconds": round(seconds, 2)}


# -- the rate ------------------------------------------------------------------------------

def wilson(killed: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a proportion killed / total."""
    if total == 0:
        return (0.0, 1.0)
    p = killed / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (max(0.0, centre - half), min(1.0, centre + half))


def read_ledger(path: Path = LEDGER) -> list[dict]:
    """The ledger's entries (none when the file does not exist)."""
    return json.loads(path.read_text(encoding="utf-8"))["entries"] if path.is_file() else []


def summarize(results: list[dict], ledger: list[dict]) -> dict:
    """Kill rate overall and per paper, equivalent mutants (by the ledger) left out."""
    equivalent = {e["key"] for e in ledger if e["state"] == "equivalent"}
    rows = {}
    for r in results:
        if r["outcome"] in ("not-run", "not-applied") or r["site"]["key"] in equivalent:
            continue
        for group in ("all", r["paper"]):
            row = rows.setdefault(group, {"killed": 0, "timeout": 0, "survived": 0})
            row[r["outcome"]] += 1
    for row in rows.values():
        caught = row["killed"] + row["timeout"]
        total = caught + row["survived"]
        row["rate"] = caught / total if total else None
        row["interval95"] = wilson(caught, total)
    return rows


def run_campaign(root: Path, sites: list[Site], claims_per_mutant: int, workers: int,
                 timeout_factor: float, certificates: bool = True,
                 progress=print) -> dict:
    from attngeom.core.executor import make_executor
    graph = import_graph(root / "attngeom")
    classes = claim_classes(root)
    oracle = {s.module: claims_seeing(s.module, claims_per_mutant, root, graph, classes)
              for s in sites}
    claim_sets = sorted({tuple(c) for c in oracle.values() if c})
    executor = make_executor(workers)
    progress(f"baseline: {len(claim_sets)} claim sets")
    base = dict(zip(claim_sets, executor.map(baseline_task, [(str(root), list(c)) for c in claim_sets],
                                             label="baseline")))
    failing: set[str] = set()
    if certificates:
        every = sorted({n for c in claim_sets for n in certificates_of(list(c), root)})
        chunks = [every[i:i + 24] for i in range(0, len(every), 24)]
        progress(f"baseline: {len(every)} certificates")
        failing = {n for r in executor.map(certificate_baseline_task,
                                           [(str(root), chunk) for chunk in chunks],
                                           label="certificates") for n in r["failing"]}
        if failing:
            progress(f"left out of the oracle (they do not check out unmutated): {sorted(failing)}")
    tasks, kept = [], []
    for site in sites:
        claims = oracle[site.module]
        if not claims:
            continue
        b = base[tuple(claims)]
        names = [n for n in (certificates_of(claims, root) if certificates else [])
                 if n not in failing]
        # the certificates' budget: a generous allowance per certificate (the unmutated
        # check takes ~1 s each on the development machine)
        tasks.append((str(root), asdict(site), claims, b["statuses"],
                      timeout_factor * b["seconds"] + 60, names,
                      timeout_factor * 10 * len(names) + 60))
        kept.append(site)
    progress(f"{len(tasks)} mutants with claims, {len(sites) - len(tasks)} without")
    outcomes = executor.map(mutant_task, tasks, label="mutants")
    results = [{"site": {**asdict(s), "key": s.key}, "paper": paper_paper(s.module),
                "claims": oracle[s.module], **o} for s, o in zip(kept, outcomes)]
    results += [{"site": {**asdict(s), "key": s.key}, "paper": paper_paper(s.module),
                 "claims": [], "outcome": "not-run"} for s in sites if not oracle[s.module]]
    return {"results": results, "baseline": {",".join(k): v for k, v in base.items()}}


def ledger_entries(results: list[dict], previous: list[dict]) -> list[dict]:
    """The ledger after a run: every survivor (kept with its state and reason if already
    there), and previous entries this run did not sample, unchanged."""
    known = {e["key"]: e for e in previous}
    for r in results:
        key = r["site"]["key"]
        if r["outcome"] == "survived" and key not in known:
            known[key] = {**{k: r["site"][k] for k in ("module", "operator", "occurrence", "line",
                                                        "before", "after")},
                          "key": key, "claims": r["claims"], "state": "open", "reason": ""}
        elif r["outcome"] in ("killed", "timeout") and key in known and known[key]["state"] == "open":
            known[key] = {**known[key], "state": "killed",
                          "reason": f"killed by {sorted(r.get('changed', {})) or r['outcome']}"}
    return [known[k] for k in sorted(known)]


def relocate(entries: list[dict], root: Path | None = None) -> tuple[list[dict], list[dict]]:
    """Find each ledger entry again after the code moved: the same operator on the same
    line text before and after, nearest to the recorded line.  (kept entries with their
    line, occurrence and key updated, entries that no longer apply)."""
    root = ROOT if root is None else root
    kept, gone, cache = [], [], {}
    for entry in entries:
        module = entry["module"]
        if not (root / module).is_file():
            gone.append(entry)
            continue
        if module not in cache:
            cache[module] = positions_of(module, root)
        candidates = [(abs(line - entry["line"]), occurrence, line)
                      for operator, occurrence, line in cache[module] if operator == entry["operator"]]
        found = None
        for _, occurrence, line in sorted(candidates):
            site = site_at(module, entry["operator"], occurrence, line, root)
            if site is not None and (site.before, site.after) == (entry["before"], entry["after"]):
                found = site
                break
        if found is None:
            gone.append(entry)
        else:
            kept.append({**entry, "line": found.line, "occurrence": found.occurrence, "key": found.key})
    return kept, gone


def ledger_sites(entries: list[dict], keys: list[str], root: Path | None = None) -> list[Site]:
    """The mutants of the ledger entries named by ``keys`` (a state, ``open``, ``killed`` or
    ``equivalent``: every entry in it), found again in the code as it is now."""
    wanted = [e for e in entries if e["key"] in keys or e["state"] in keys]
    unknown = set(keys) - set(LEDGER_STATES) - {e["key"] for e in entries}
    if unknown:
        raise SystemExit(f"not in the ledger: {', '.join(sorted(unknown))}")
    kept, gone = relocate(wanted, root)
    if gone:
        print("no longer apply: " + ", ".join(e["key"] for e in gone))
    return [Site(e["module"], e["operator"], e["occurrence"], e["line"], e["before"], e["after"])
            for e in kept]


def render(summary: dict) -> str:
    lines = ["group      killed  timeout  survived  rate    95% interval"]
    for group, row in sorted(summary.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        low, high = row["interval95"]
        rate = "-" if row["rate"] is None else f"{row['rate']:.3f}"
        lines.append(f"{group:<10} {row['killed']:6d}  {row['timeout']:7d}  {row['survived']:8d}  "
                     f"{rate:<6}  [{low:.3f}, {high:.3f}]")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-module", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modules", nargs="*", help="only these modules (paths)")
    parser.add_argument("--claims-per-mutant", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout-factor", type=float, default=5.0)
    parser.add_argument("--json", type=Path, help="write the full record here")
    parser.add_argument("--ledger", type=Path, help="update this ledger with the survivors")
    parser.add_argument("--list", action="store_true", help="sites per module; nothing run")
    parser.add_argument("--root", type=Path, help="the checkout to mutate (default: this one)")
    parser.add_argument("--no-certificates", action="store_true",
                        help="the first stage only (each claim's first example), as before")
    parser.add_argument("--keys", nargs="*", metavar="KEY",
                        help="run these ledger entries (keys of --ledger, or of the committed "
                             "ledger) instead of a sample; a state (open, killed) runs every "
                             "entry in it")
    parser.add_argument("--relocate", type=Path, metavar="LEDGER",
                        help="find LEDGER's entries again after the code moved; nothing run")
    args = parser.parse_args(argv)
    root = (args.root or ROOT).resolve()
    if args.relocate:
        kept, gone = relocate(read_ledger(args.relocate), root)
        args.relocate.write_text(json.dumps({"entries": sorted(kept, key=lambda e: e["key"])},
                                            indent=1) + "\n", encoding="utf-8")
        print(f"{len(kept)} entries found again, {len(gone)} no longer apply: "
              + ", ".join(e["key"] for e in gone))
        return 0
    modules = args.modules or paper_side_modules(root)
    if args.list:
        for module in modules:
            print(f"{len(positions_of(module, root)):6d}  {module}")
        return 0
    if args.keys is not None:
        sites = ledger_sites(read_ledger(args.ledger) if args.ledger else read_ledger(), args.keys, root)
    else:
        sites = sample_sites(modules, args.per_module, args.seed, root)
    start = time.monotonic()
    record = run_campaign(root, sites, args.claims_per_mutant, args.workers, args.timeout_factor,
                          certificates=not args.no_certificates)
    ledger = read_ledger(args.ledger) if args.ledger else read_ledger()
    record["summary"] = summarize(record["results"], ledger)
    record["settings"] = {**{k: v for k, v in vars(args).items() if k not in ("json", "ledger", "list")},
                          "modules": len(modules), "sites": len(sites),
                          "seconds": round(time.monotonic() - start, 1)}
    print(render(record["summary"]))
    if args.keys is not None:
        for r in record["results"]:
            why = r.get("changed") or r.get("certificates") or ""
            print(f"{r['outcome']:<9} {r['site']['key']}  {json.dumps(why)[:300] if why else ''}")
    if args.json:
        args.json.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    if args.ledger:
        entries = ledger_entries(record["results"], read_ledger(args.ledger))
        args.ledger.write_text(json.dumps({"entries": entries}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

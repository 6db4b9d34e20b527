"""The layout of the package (issue 47; docs/DEVELOPING.md, "The map of the tree"): read from
the code's own imports, every one of them (module level and inside functions; an import
under ``if TYPE_CHECKING:`` never runs and names a type only, so it is not an arrow).

* no import circle anywhere in ``attngeom``;
* the layers: ``core.errors`` imports nothing of attngeom; ``kernels`` imports only
  ``kernels`` and ``core.errors`` (never a verdict, its renderings or a claim); ``core``
  imports only ``core`` and ``kernels``; ``lightning_alg`` and ``geometry_proofs`` import
  ``core``, ``kernels`` and themselves, never each other and never the top
  (``registry``, ``claim_index``, ``results``, ``api``, ``apidoc``, ``cli``); a paper's
  ``accelerated`` kernels import no claim module and no benchmark of that paper;
* no module over :data:`MAX_LINES` lines.

The checks are functions of an import graph, so the tests at the end feed them made-up
graphs with a circle and an upward arrow and require a failure (a test that cannot fail
proves nothing).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attngeom"
MAX_LINES = 800
PAPERS = ("attngeom.lightning_alg", "attngeom.geometry_proofs")
TOP = ("attngeom", "attngeom.__main__", "attngeom.api", "attngeom.apidoc", "attngeom.cli",
       "attngeom.registry", "attngeom.claim_index", "attngeom.results")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node that runs, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the attngeom modules it imports (a name imported from a package counts as
    the submodule when there is one, else as the package)."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                found = [f"{module}.{a.name}" if f"{module}.{a.name}" in files else module
                         for a in node.names]
            for target in found:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def allowed(source: str, target: str) -> bool:
    """The layering rule for one arrow source -> target (both attngeom modules)."""
    if source == "attngeom.core.errors":
        return False
    if _within(source, "attngeom.kernels"):
        return _within(target, "attngeom.kernels") or target == "attngeom.core.errors"
    if _within(source, "attngeom.core"):
        return _within(target, "attngeom.core", "attngeom.kernels")
    for paper in PAPERS:
        if _within(source, paper):
            if ".accelerated" in source and ("claim" in target.rpartition(".")[2]
                                             or target.endswith("_benchmark")):
                return False
            return _within(target, "attngeom.core", "attngeom.kernels", paper)
    return True                                  # the top: api, cli, registry, ...


def upward_arrows(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((s, t) for s, targets in graph.items() for t in targets if not allowed(s, t))


def test_no_import_circle():
    assert circles(import_graph()) == []


def test_every_arrow_points_down_the_layers():
    assert upward_arrows(import_graph()) == []


def test_no_module_over_the_size_limit():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_graph_sees_lazy_imports_and_the_layers_exist():
    graph = import_graph()
    # a lazy import inside a method is an arrow (Verdict.__str__ renders through verdict_format)
    assert "attngeom.core.verdict_format" in graph["attngeom.core.verdict"]
    # ... and one under TYPE_CHECKING is not (verdict_format names the Verdict type only)
    assert "attngeom.core.verdict" not in graph["attngeom.core.verdict_format"]
    for package in ("attngeom.core", "attngeom.kernels", "attngeom.lightning_alg",
                    "attngeom.geometry_proofs", "attngeom.geometry_proofs.gauge.accelerated",
                    "attngeom.geometry_proofs.hyperbolic.accelerated", "attngeom.lightning_alg.atlas"):
        assert package in graph, package
    assert set(TOP) <= set(graph)


# -- the checks can fail -------------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "attngeom"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_lazy_circle_is_found(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "core/__init__.py": "",
        "core/a.py": "def f():\n    from attngeom.core import b\n",
        "core/b.py": "from attngeom.core.a import f\n",
        "core/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from attngeom.core.d import X\n",
        "core/d.py": "from attngeom.core import c\n"})
    assert circles(import_graph(root)) == [["attngeom.core.a", "attngeom.core.b"]]


@pytest.mark.parametrize("source, target", [
    ("attngeom.kernels.backend", "attngeom.core.verdict"),
    ("attngeom.kernels.backend", "attngeom.core.verdict_format"),
    ("attngeom.core.claim", "attngeom.lightning_alg.model"),
    ("attngeom.core.errors", "attngeom.kernels.threads"),
    ("attngeom.lightning_alg.claims.hmk", "attngeom.geometry_proofs.riemann"),
    ("attngeom.geometry_proofs.gauge.claims", "attngeom.registry"),
    ("attngeom.geometry_proofs.hyperbolic.accelerated.gram", "attngeom.geometry_proofs.hyperbolic.tree_claims"),
    ("attngeom.geometry_proofs.gauge.accelerated.kl_attention", "attngeom.geometry_proofs.gauge.attention_benchmark"),
])
def test_an_upward_arrow_is_refused(source, target):
    assert not allowed(source, target)
    assert upward_arrows({source: {target}}) == [(source, target)]


@pytest.mark.parametrize("source, target", [
    ("attngeom.kernels.backend", "attngeom.core.errors"),
    ("attngeom.core.claim", "attngeom.kernels.backend"),
    ("attngeom.lightning_alg.claims.hmk", "attngeom.core.verdict"),
    ("attngeom.geometry_proofs.hyperbolic.accelerated.gram", "attngeom.geometry_proofs.hyperbolic.poincare"),
    ("attngeom.registry", "attngeom.lightning_alg.claims"),
])
def test_a_downward_arrow_is_allowed(source, target):
    assert allowed(source, target)

"""The library's declared requirements cover what it imports: every third-party module that a
library module imports at module level (so that ``attngeom`` cannot start without it) is a
requirement in pyproject.toml, not only in requirements-dev.txt.  scipy and mpmath were
imported by the GT / RGT modules and missing from pyproject.toml, so the README's first
command (``pip install -e .`` and ``attngeom verify ...``) failed on a fresh machine."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

try:
    import tomllib                                  # Python >= 3.11
except ImportError:                                 # Python 3.10: the tomli backport, if any
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
LOCAL = {"attngeom"}
#: import name of each distribution whose import name differs from its project name.
IMPORT_NAMES = {"python-flint": "flint"}


def _import_names(requirements) -> set[str]:
    names = set()
    for requirement in requirements:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].strip().lower()
        names.add(IMPORT_NAMES.get(name, name.replace("-", "_")))
    return names


def _declared() -> set[str]:
    return _import_names(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])


def _optional() -> set[str]:
    """The import names of the optional extras (``pip install attngeom[torch]`` ...)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return _import_names(r for name, requirements in extras.items() if name != "test" for r in requirements)


def module_level_imports(source: str) -> set[str]:
    """Top-level names imported by the module's own statements (not inside functions)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _third_party_imports() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    files = sorted((ROOT / "attngeom").rglob("*.py"))
    for path in files:
        for name in module_level_imports(path.read_text()):
            if name not in sys.stdlib_module_names and name not in LOCAL and name != "__future__":
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def eagerly_imported_modules(sources: dict[str, str]) -> set[str]:
    """The package's modules (dotted names) that some package module imports at module level
    (``import attngeom.x`` or ``from attngeom.y import x``: both attngeom.y and attngeom.y.x)."""
    found = set()
    for source in sources.values():
        for node in ast.parse(source).body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in LOCAL}


def _module_name(path: str) -> str:
    return path[:-len(".py")].replace("/", ".").removesuffix(".__init__")


def undeclared(imports: dict[str, list[str]], sources: dict[str, str], declared: set[str],
               optional: set[str]) -> dict[str, list[str]]:
    """Module-level imports that a plain install does not provide: not a requirement, or an
    optional extra's package imported at module level by a module that the package itself
    imports at module level (an extra may be imported at module level only by a module that
    the package imports lazily, inside the function that needs it)."""
    eager = eagerly_imported_modules(sources)
    missing = {}
    for name, paths in imports.items():
        if name in declared:
            continue
        offending = [p for p in paths if name not in optional or _module_name(p) in eager]
        if offending:
            missing[name] = offending[:3]
    return missing


def test_every_module_level_import_is_a_declared_requirement():
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "attngeom").rglob("*.py"))}
    missing = undeclared(_third_party_imports(), sources, _declared(), _optional())
    assert not missing, f"imported at module level but not in pyproject.toml dependencies: {missing}"


def test_an_extra_imported_eagerly_is_reported():
    """Mutation: an optional extra's package imported at module level is allowed only in a
    module that the package imports lazily (the Triton kernels' module); imported at module
    level by another module, it is reported."""
    kernels = "attngeom/kernels/gpu_kernels.py"
    lazy = {kernels: "import triton\n", "attngeom/user.py": "def f():\n    from attngeom.kernels import gpu_kernels\n"}
    eager = {kernels: "import triton\n", "attngeom/user.py": "from attngeom.kernels import gpu_kernels\n"}
    imports = {"triton": [kernels]}
    assert undeclared(imports, lazy, set(), {"triton"}) == {}
    assert undeclared(imports, eager, set(), {"triton"}) == {"triton": [kernels]}
    assert undeclared(imports, lazy, set(), set()) == {"triton": [kernels]}
    assert "triton" in _optional() and "triton" not in _declared()


def test_the_check_sees_a_missing_requirement():
    """Mutation: an undeclared module-level import is reported."""
    assert module_level_imports("import scipy.linalg\nfrom flint import nmod_mat\n") == {"scipy", "flint"}
    assert "not_a_requirement" not in _declared()
    assert module_level_imports("def f():\n    import torch\n") == set()

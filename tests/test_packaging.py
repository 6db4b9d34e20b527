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


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = set()
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].strip().lower()
        names.add(IMPORT_NAMES.get(name, name.replace("-", "_")))
    return names


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


def test_every_module_level_import_is_a_declared_requirement():
    declared = _declared()
    missing = {name: paths[:3] for name, paths in _third_party_imports().items() if name not in declared}
    assert not missing, f"imported at module level but not in pyproject.toml dependencies: {missing}"


def test_the_check_sees_a_missing_requirement():
    """Mutation: an undeclared module-level import is reported."""
    assert module_level_imports("import scipy.linalg\nfrom flint import nmod_mat\n") == {"scipy", "flint"}
    assert "not_a_requirement" not in _declared()
    assert module_level_imports("def f():\n    import torch\n") == set()

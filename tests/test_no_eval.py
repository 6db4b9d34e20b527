"""Issue 29, "Untrusted input never runs code": no code of the package turns text into code.

Every .py file of the package (attngeom/: cli.py, kernels/, lightning_alg/, geometry_proofs/) is
parsed with ``ast``; a call of ``eval``, ``exec``, ``compile``, ``__import__`` (by bare
name), or of ``sympify``, ``S``, ``parse_expr`` (bare or as an attribute) is an offender
unless it is ``sympify(..., strict=True)`` (which raises SympifyError on a string) or its
argument is a literal; ``lambdify`` is an offender when given a string expression.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = sorted((ROOT / "attngeom").rglob("*.py"))

BUILTINS = {"eval", "exec", "compile", "__import__"}
PARSERS = {"sympify", "S", "parse_expr"}


def _name(func: ast.expr) -> tuple[str | None, bool]:
    """(called name, whether it is a bare name rather than an attribute)."""
    if isinstance(func, ast.Name):
        return func.id, True
    if isinstance(func, ast.Attribute):
        return func.attr, False
    return None, False


def _literal(node: ast.expr) -> bool:
    """A number literal (or a signed one); strings are never literal enough."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, bool))


def _strict(call: ast.Call) -> bool:
    return any(k.arg == "strict" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def offenders(source: str, filename: str = "<string>") -> list[str]:
    """``file:line: call`` for every call of the module docstring's kinds in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name, bare = _name(node.func)
        if name in BUILTINS and bare:
            found.append(f"{filename}:{node.lineno}: {name}(...)")
        elif name in PARSERS:
            if (name == "sympify" and _strict(node)) or (node.args and all(map(_literal, node.args))):
                continue
            found.append(f"{filename}:{node.lineno}: {name}(...) without strict=True")
        elif name == "lambdify":
            expression = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "expr"), None)
            if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
                found.append(f"{filename}:{node.lineno}: lambdify of a string")
    return found


def test_the_package_never_parses_text_as_code():
    assert len(PACKAGE) > 50
    found = [hit for path in PACKAGE
             for hit in offenders(path.read_text(), str(path.relative_to(ROOT)))]
    assert not found, "text parsed as code at:\n" + "\n".join(found)


def test_the_checker_catches_planted_offenders():
    planted = """
import sympy
from sympy import sympify, S
from sympy.parsing.sympy_parser import parse_expr
a = sympy.sympify(text)
b = sympify(text, locals={})
c = S(text)
d = parse_expr(text)
e = eval(text)
exec(text)
f = compile(text, "f", "eval")
g = __import__(text)
h = sympy.lambdify(x, "x**2")
"""
    found = offenders(planted, "planted.py")
    assert [int(hit.split(":")[1]) for hit in found] == list(range(5, 14))
    assert found[0].startswith("planted.py:5: sympify")


def test_the_checker_allows_the_safe_forms():
    safe = """
import re, sympy
a = sympy.sympify(value, strict=True)
b = sympy.S(1)
c = sympy.S(-2)
d = re.compile(pattern)
e = sympy.lambdify(x, expression, "numpy")
"""
    assert offenders(safe) == []

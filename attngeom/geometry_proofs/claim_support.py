"""What the claims of every geometry area (GEC, GT, RGT) share: a claim base with parameter
limits, the backend of a check, the float64 residual decision rule, and the rendering of
``show`` output and of numbers in summaries."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from attngeom.kernels.backend import get_backend
from attngeom.core.claim import CheckContext, Claim
from attngeom.core.errors import BadInput
from attngeom.core.verdict import Verdict, consistent, refuted

class LimitedClaim(Claim):
    """A claim whose integer parameters have upper ``limits`` beyond which its checks would
    not fit in memory or time (BadInput with one line)."""

    limits: dict[str, int] = {}

    def validate(self, params):
        for name, maximum in self.limits.items():
            if params.get(name) is not None and params[name] > maximum:
                raise BadInput(f"--{name.replace('_', '-')} {params[name]} is too large for "
                               f"{self.id} (at most {maximum})")

def context_backend(context: CheckContext):
    return get_backend(context.backend, context.device)

def residual_verdict(be, worst: float, tolerance: float, *, checked: int, summary: str,
                     failure: str, counterexample: dict, evidence: dict | None = None,
                     holds: bool = True) -> Verdict:
    """A float64 check: ``consistent`` (``summary``) when the largest relative residual
    ``worst`` is within ``tolerance`` and the side conditions ``holds``, else ``refuted``
    (``failure``, ``counterexample``); both carry ``evidence`` and the backend ``be``
    (None: a NumPy / SciPy computation outside the backends, reported as numpy-cpu)."""
    backend, device = (be.name, be.device) if be is not None else ("numpy", "cpu")
    worst = float(worst)
    if worst > tolerance or not holds:
        return refuted(method="numeric", backend=backend, device=device, max_residual=worst,
                       evidence=evidence, summary=failure, counterexample=counterexample)
    return consistent(checked=checked, max_residual=worst, tolerance=tolerance,
                      backend=backend, device=device, evidence=evidence, summary=summary)


def format_value(value) -> str:
    """A number for a summary: exact values as SymPy prints them, floats rounded to 9
    decimals and 6 significant digits, so rounding noise does not change the text between
    machines (certificates compare summaries verbatim)."""
    if isinstance(value, (float, np.floating)):
        return f"{round(float(value), 9) + 0.0:.6g}"
    return str(value)

def plain_value(value) -> Any:
    """Nested lists / arrays of ints, Fractions and SymPy objects as JSON-ready values."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain_value(x) for x in value]
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)

def render_items(items: list[tuple[str, Any]], fmt: str) -> str:
    """``show`` output: one "name = object" per line (text / latex / m2 comment) or JSON."""
    if fmt == "json":
        return json.dumps({name: plain_value(value) for name, value in items}, indent=1)
    if fmt == "latex":
        return "\n".join(f"\\text{{{name}}}: {sympy.latex(sympy.sympify(value, strict=True))} \\\\"
                         if isinstance(value, (sympy.Basic, int, Fraction)) else
                         f"\\text{{{name}}}: \\text{{{value}}} \\\\" for name, value in items)
    prefix = "-- " if fmt == "m2" else ""
    text = lambda v: json.dumps(plain_value(v)) if isinstance(v, (list, tuple, np.ndarray)) else str(v)
    return "\n".join(f"{prefix}{name} = {text(value)}" for name, value in items)

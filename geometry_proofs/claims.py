"""The claims of GEC, GT and RGT, as one registry.

Each paper area is a subpackage whose ``claims`` module defines ``CLAIMS``, a list of claim
instances; they are collected here in the papers' order, so adding a claim needs no edit
here.
"""

import importlib
import importlib.util

from kernels.claim import ClaimRegistry

#: The paper areas, in the order of `attngeom list`: GEC (gating), GT (gauge), RGT (hyperbolic).
AREAS = ("gating", "gauge", "hyperbolic")


def _collect() -> ClaimRegistry:
    registry = ClaimRegistry()
    for area in AREAS:
        if importlib.util.find_spec(f"{__package__}.{area}.claims") is None:
            continue
        for claim in importlib.import_module(f"{__package__}.{area}.claims").CLAIMS:
            registry.register(claim)
    return registry


REGISTRY = _collect()

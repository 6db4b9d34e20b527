"""The claims of ADM and HMK that attngeom checks, as one registry.

Every module of this package except ``base`` defines ``CLAIMS``, a list of claim
instances; they are collected here in module-name order, so adding a claim module needs
no edit elsewhere.
"""

import importlib
import pkgutil

from kernels.claim import ClaimRegistry


def _collect() -> ClaimRegistry:
    registry = ClaimRegistry()
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module == "base":
            continue
        for claim in getattr(importlib.import_module(f"{__name__}.{module}"), "CLAIMS", ()):
            registry.register(claim)
    return registry


REGISTRY = _collect()

"""The claims of ADM and HMK that attngeom checks, as one registry.

Every module of this package except ``base`` defines ``CLAIMS``, a list of claim
instances; they are collected here in module-name order, so adding a claim module needs
no edit elsewhere.
"""

import importlib
import pkgutil

from kernels.claim import ClaimRegistry


#: The order of `attngeom list`: the papers' order (ADM §2-5, then HMK); modules not named
#: here follow alphabetically.
ORDER = ("expansion_claims", "linear", "single_column", "cross_column", "veronese", "resultant",
         "hmk_fibres", "hmk")


def _collect() -> ClaimRegistry:
    registry = ClaimRegistry()
    found = sorted(m.name for m in pkgutil.iter_modules(__path__))
    for module in sorted(found, key=lambda m: (ORDER.index(m) if m in ORDER else len(ORDER), m)):
        if module == "base":
            continue
        for claim in getattr(importlib.import_module(f"{__name__}.{module}"), "CLAIMS", ()):
            registry.register(claim)
    return registry


REGISTRY = _collect()

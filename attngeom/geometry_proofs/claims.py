"""The claims of GEC, GT and RGT, as one registry.

Each paper area is a subpackage whose ``claims`` module defines ``CLAIMS``, a list of claim
instances; they are collected here in the papers' order.
"""

import importlib

from attngeom.core.claim import ClaimRegistry

#: The paper areas, in the order of `attngeom list`: GEC (gating), GT (gauge), RGT (hyperbolic).
AREAS = ("gating", "gauge", "hyperbolic")

REGISTRY = ClaimRegistry(claim for area in AREAS
                         for claim in importlib.import_module(f"{__package__}.{area}.claims").CLAIMS)

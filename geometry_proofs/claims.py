"""The claims of GEC, GT and RGT, as one registry (filled as the geometry issues land)."""

from kernels.claim import ClaimRegistry

REGISTRY = ClaimRegistry()

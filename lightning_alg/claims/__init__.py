"""The claims of ADM and HMK that attngeom checks, as one registry."""

from kernels.claim import ClaimRegistry
from lightning_alg.claims.expansion_claims import CoefficientsClaim, MonomialCountClaim
from lightning_alg.claims.linear import LinearClaim

REGISTRY = ClaimRegistry([MonomialCountClaim(), CoefficientsClaim(), LinearClaim()])

"""The claims of GEC, GT and RGT, as one registry (filled as the geometry issues land)."""

from geometry_proofs.gating import (
    CurvatureLowerBoundClaim, CurvatureRobustnessClaim, DepthAmplificationClaim,
    GatedSphereClaim, GatingSecondDerivativeClaim, GenericNonflatClaim, GraphCurvatureClaim,
    UngatedFlatClaim, VectorGraphCurvatureClaim)
from kernels.claim import ClaimRegistry

REGISTRY = ClaimRegistry([
    UngatedFlatClaim(), CurvatureLowerBoundClaim(), GatingSecondDerivativeClaim(),
    GatedSphereClaim(), GraphCurvatureClaim(), DepthAmplificationClaim(),
    VectorGraphCurvatureClaim(), CurvatureRobustnessClaim(), GenericNonflatClaim(),
])

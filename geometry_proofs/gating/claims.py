"""The GEC claims, in the paper's order (``attngeom list``)."""

from geometry_proofs.gating.depth import (
    DepthAmplificationClaim, GraphCurvatureClaim, VectorGraphCurvatureClaim)
from geometry_proofs.gating.flatness import CurvatureLowerBoundClaim, UngatedFlatClaim
from geometry_proofs.gating.robustness import CurvatureRobustnessClaim, GenericNonflatClaim
from geometry_proofs.gating.sphere import GatedSphereClaim, GatingSecondDerivativeClaim

CLAIMS = [
    UngatedFlatClaim(), CurvatureLowerBoundClaim(), GatingSecondDerivativeClaim(),
    GatedSphereClaim(), GraphCurvatureClaim(), DepthAmplificationClaim(),
    VectorGraphCurvatureClaim(), CurvatureRobustnessClaim(), GenericNonflatClaim(),
]

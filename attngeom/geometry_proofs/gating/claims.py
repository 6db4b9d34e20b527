"""The GEC claims, in the paper's order (``attngeom list``): the theorems of §3, then the
experiment of §4 and Appendix A.2-A.5."""

from attngeom.geometry_proofs.gating.depth import (
    DepthAmplificationClaim, GraphCurvatureClaim, VectorGraphCurvatureClaim)
from attngeom.geometry_proofs.gating.experiment.claims import CLAIMS as EXPERIMENT_CLAIMS
from attngeom.geometry_proofs.gating.flatness import CurvatureLowerBoundClaim, UngatedFlatClaim
from attngeom.geometry_proofs.gating.robustness import CurvatureRobustnessClaim, GenericNonflatClaim
from attngeom.geometry_proofs.gating.sphere import GatedSphereClaim, GatingSecondDerivativeClaim

CLAIMS = [
    UngatedFlatClaim(), CurvatureLowerBoundClaim(), GatingSecondDerivativeClaim(),
    GatedSphereClaim(), GraphCurvatureClaim(), DepthAmplificationClaim(),
    VectorGraphCurvatureClaim(), CurvatureRobustnessClaim(), GenericNonflatClaim(),
    *EXPERIMENT_CLAIMS,
]

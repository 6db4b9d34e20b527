"""RGT's accelerated geodesic attention: the Gram-matrix kernels of the Poincare ball
(:mod:`.gram`) and their replay from CUDA graphs or ``torch.compile`` (:mod:`.graphs`).  The
reference they are checked against is :mod:`attngeom.geometry_proofs.hyperbolic.attention`
and :mod:`.poincare` (docs/hyperbolic.md)."""

"""attngeom's compute kernels: how numbers are computed, with nothing of attention in them.

Array backends (:mod:`.backend`: numpy / torch / jax on cpu / cuda) and their threads
(:mod:`.threads`), seeded samplers (:mod:`.sampling`: floats, small rationals, a prime
field), exact arithmetic (:mod:`.primefield`, :mod:`.monomials`, :mod:`.polyeval`),
Jacobians and ranks (:mod:`.jacobian`), curvature by the Gauss equation
(:mod:`.curvature`), and what the papers' accelerated attention is built with: CUDA graphs
(:mod:`.cuda_graphs`), ``torch.compile`` (:mod:`.torch_compile`), NumPy's softmax with
glibc's vector exp (:mod:`.softmax_cpu`), the allocator setting (:mod:`.allocator`) and the
kernel switches (:mod:`.switch`).

The accelerated attention of each paper lives beside that paper's code, in an
``accelerated`` subpackage: GT's in :mod:`attngeom.geometry_proofs.gauge.accelerated`,
RGT's in :mod:`attngeom.geometry_proofs.hyperbolic.accelerated`.  Modules here import only
each other and :mod:`attngeom.core.errors` (``docs/DEVELOPING.md``).
"""

"""GT's accelerated KL attention (eq 22 with transported Gaussian beliefs): the structured
kernel and its per-token statistics on the CPU (C extension), on CUDA (CUDA C by NVRTC,
Triton) and replayed from CUDA graphs, in modules layered without an import circle (listed
in :mod:`attngeom.geometry_proofs.gauge.accelerated.kl_attention`'s docstring).  The reference it is checked against is
:mod:`attngeom.geometry_proofs.gauge.beliefs` and :mod:`.transport` (docs/kernels.md,
docs/gauge-attention.md)."""

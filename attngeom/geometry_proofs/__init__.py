"""Differential geometry of attention outputs: the Riemannian engine (:mod:`.riemann`,
:mod:`.surfaces`, :mod:`.ops`) at the top, and one subpackage per paper, each holding its
objects and, beside them, its claims: ``gating/`` (GEC), ``gauge/`` (GT) and
``hyperbolic/`` (RGT).  A paper's accelerated attention is its ``accelerated/`` subpackage
(GT's KL attention kernel, RGT's Gram kernels); :mod:`.claims` lists all three papers'
claims."""

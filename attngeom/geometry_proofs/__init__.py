"""Differential geometry of attention outputs: the Riemannian engine and the claims of GEC
(gating), GT (gauge attention) and RGT (hyperbolic attention)."""

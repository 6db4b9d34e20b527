"""HMK: Henry, Marchetti, Kohn, *Geometry of lightning self-attention* -- fibres of the
parametrization (``fibres``), the virtual weights of deep networks (``virtual_weights``),
the neuromanifold dimension (``dimension``) and Figure 3 (``figure3``).  The HMK claims are
in :mod:`attngeom.lightning_alg.claims` (``hmk_fibres``, ``hmk_deep_fibres``, ``hmk``).
"""

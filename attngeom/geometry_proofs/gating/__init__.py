"""GEC: *Gating Enables Curvature* -- the Fisher-Rao geometry of attention outputs.

Split by the paper's theorem groups, each module holding its claims:

* ``flatness``: Thm 3.1-3.3 (ungated outputs are flat; the curvature lower bound);
* ``sphere``: Lemma 3.5, Thm 3.6-3.8 (gating and the sphere witness);
* ``depth``: Lemma 3.10-3.12, Thm 3.13-3.17 (graph curvature and depth amplification);
* ``robustness``: Thm 3.18-3.21 (robustness and genericity);

beside them the constructions they use: ``attention`` (attention layers and GEC's
witnesses), ``gates`` (the gates), ``witnesses`` (what ``attngeom curvature`` samples) and
``common`` (parameters, tolerances and helpers of the claims).  ``claims`` lists them all.
"""

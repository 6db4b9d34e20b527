"""attngeom: executable claims about the geometry of attention.

One import name holds the whole toolkit: ``attngeom.kernels`` (the checking engine),
``attngeom.lightning_alg`` (ADM and HMK: the attention variety, its invariants, fibres and
dimension), ``attngeom.geometry_proofs`` (GEC, GT and RGT: curvature, gauge and hyperbolic
attention) and ``attngeom.cli`` (the ``attngeom`` command; ``python -m attngeom``).
"""

from attngeom.kernels import __version__

__all__ = ["__version__"]

"""attngeom's checking engine.

Array backends (numpy / torch / jax on cpu / cuda), seeded samplers (floats, small
rationals, a prime field), prime-field linear algebra, batched polynomial evaluation,
the verdict type with the decision rules of the soundness contract, and the Claim
interface with its registry.  Nothing here knows about attention: ``lightning_alg`` and
``geometry_proofs`` build on it.
"""

__version__ = "0.1.0"

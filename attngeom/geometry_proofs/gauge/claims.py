"""The claims of this paper area: every module of the package named ``*_claims`` defines
``CLAIMS``; they are collected here (``ORDER`` first, the rest alphabetically)."""

from attngeom.core.claim import collect_claims

#: The order of `attngeom list`: the paper's order (§2 objects and gradients, the counts of
#: §2.5 and Tables 2-4, §5's Dirac limit and holonomy, Appendix B).
ORDER = ("belief_claims", "transport_claims", "free_energy_claims", "natural_gradient_claims",
         "kl_gradient_claims", "attention_gradient_claims", "counts_claims", "dirac_claims",
         "holonomy_claims", "vacuum_claims")

CLAIMS = collect_claims(__package__, order=ORDER, suffix="_claims")

"""The claims of this paper area: every module of the package named ``*_claims`` defines
``CLAIMS``; they are collected here (``ORDER`` first, the rest alphabetically)."""

from attngeom.core.claim import collect_claims

#: The order of `attngeom list`: the paper's order (the geometry of §2-4 and its stability,
#: products, Frechet means and attention layers of §5-6, tangent attention of §8.2, volume
#: growth of §7.1.1, tree embeddings of Thm 3.4 / 8.1 and Prop 9.2, the cost of Prop 9.3).
ORDER = ("geometry_claims", "stability_claims", "products_claims", "frechet_claims",
         "layers_claims", "tangent_claims", "volume_claims", "tree_claims", "cost_claims")

CLAIMS = collect_claims(__package__, order=ORDER, suffix="_claims")

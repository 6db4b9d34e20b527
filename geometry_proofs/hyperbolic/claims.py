"""The claims of this paper area: every module of the package named ``*_claims`` defines
``CLAIMS``; they are collected here (``ORDER`` first, the rest alphabetically)."""

from kernels.claim import collect_claims

#: The order of `attngeom list`: the paper's order.
ORDER: tuple[str, ...] = ()

CLAIMS = collect_claims(__package__, order=ORDER, suffix="_claims")

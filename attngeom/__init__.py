"""attngeom: executable claims about the geometry of attention.

One import name holds the whole toolkit: ``attngeom.core`` (the verification contract:
claims, verdicts, certificates, errata), ``attngeom.kernels`` (compute: backends, prime
fields, Jacobians, curvature), ``attngeom.lightning_alg`` (ADM and HMK: the attention
variety, its invariants, fibres and dimension), ``attngeom.geometry_proofs`` (GEC, GT and
RGT: curvature, gauge and hyperbolic attention, each paper's accelerated kernels in its
``accelerated/``) and ``attngeom.cli`` (the ``attngeom`` command; ``python -m attngeom``).
The map of the tree is ``docs/DEVELOPING.md``.

The public Python API (:mod:`attngeom.api`, documented in ``docs/api.md``)::

    import attngeom
    attngeom.claims("ADM")                       # the registered claims
    attngeom.verify("linear", d=3, t=2, a=3)     # a Verdict
    attngeom.show("linear", d=3, t=2, limit=2)   # the polynomials, as SymPy objects
    attngeom.ideal(2, 2, max_degree=2)           # the vanishing ideal, degree by degree
    attngeom.check_certificates("certificates")  # re-run certificates, compare by evidence kind

Importing ``attngeom`` loads no claim module, SymPy, torch or jax: each function loads
what it needs on its first call.
"""

from typing import TYPE_CHECKING

from attngeom.core import __version__
if TYPE_CHECKING:
    from attngeom.api import (BadInput, NotApplicable, atlas, certify, check_certificates, claims,
                              curvature, dimension, errata, ideal, show, verify)

__all__ = ["__version__", "verify", "show", "claims", "ideal", "atlas", "dimension",
           "curvature", "errata", "certify", "check_certificates", "BadInput", "NotApplicable"]


def __getattr__(name: str):
    """The public API (:mod:`attngeom.api`), loaded on first use (PEP 562)."""
    if name in __all__:
        from attngeom import api
        return getattr(api, name)
    raise AttributeError(f"module 'attngeom' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""Which lightning model: the options --heads H, --skip none|identity|linear, --causal.

HMK §5: "with skip connections and multiple heads the lightning self-attention mechanism
is still polynomial"; ADM §6 asks for invariants of "masked self-attention, deep attention
networks, and multi-head models".  A :class:`Variant` names one such model; the plain
single-head model of ADM / HMK is ``Variant()``.
"""

from __future__ import annotations

from dataclasses import dataclass

from attngeom.core.errors import BadInput

#: --skip: none (phi = f(X)), identity (f(X) + X, needs d' = d), linear (f(X) + W_s X).
SKIPS = ("none", "identity", "linear")
#: Largest --heads accepted (the Jacobian grows linearly in H; bounded work on hostile input).
MAX_HEADS = 64


@dataclass(frozen=True)
class Variant:
    """H heads (outputs summed), a skip connection, a causal mask."""

    heads: int = 1
    skip: str = "none"
    causal: bool = False

    def __post_init__(self):
        if isinstance(self.heads, bool) or not isinstance(self.heads, int) \
                or not 1 <= self.heads <= MAX_HEADS:
            raise BadInput(f"--heads must be an integer in 1..{MAX_HEADS}; got {self.heads!r}")
        if self.skip not in SKIPS:
            raise BadInput(f"--skip must be one of {', '.join(SKIPS)}; got {self.skip!r}")

    @property
    def plain(self) -> bool:
        """The single-head model of ADM / HMK."""
        return self == Variant()

    def describe(self) -> dict:
        return {"heads": self.heads, "skip": self.skip, "causal": self.causal}

    @property
    def slug(self) -> str:
        """``H=2/skip=identity/causal``: the variant's part of a grid point's name."""
        return f"H={self.heads}/skip={self.skip}" + ("/causal" if self.causal else "")


def variant_from(heads=None, skip=None, causal=None) -> Variant:
    """A Variant from option values (None: the default)."""
    return Variant(1 if heads is None else heads, skip or "none", bool(causal))

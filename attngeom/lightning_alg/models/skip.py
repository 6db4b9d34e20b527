"""Skip connections around a lightning layer (HMK §5).

    identity:  psi(X) = f(X) + X          (needs d' = d)
    linear:    psi(X) = f(X) + W_s X      (W_s in R^{d' x d}, a parameter of the layer)

f the (multi-head, possibly masked) lightning layer.  HMK §5 expects the skip to break the
scaling symmetry and the parametrization to become "generically one-to-one"; but the
per-head scaling (A_h, V_h) -> (c A_h, V_h / c) leaves f, hence f(X) + X and f(X) + W_s X,
unchanged, in every layer, so it survives (these are the per-layer rescalings of HMK eq 13);
what the identity skip removes is the inter-layer GL_d of HMK eq 9 (``skip-fibre`` measures
what remains).
"""

from __future__ import annotations


def with_skip(out, X, skip: str, S=None):
    """out + X (identity), out + S X (linear) or out (none)."""
    if skip == "identity":
        return out + X
    if skip == "linear":
        return out + S @ X
    return out

"""GT eq (7): the covariance update by retraction on the SPD manifold,

    Sigma_new = Sigma^{1/2} exp(eta Sigma^{-1/2} V Sigma^{-1/2}) Sigma^{1/2},

V the natural-gradient step (eq 6), matrix square roots and exponentials by symmetric
eigendecomposition (as GT says, after Higham).  numpy, shape=[K, K].
"""

from __future__ import annotations

import numpy as np


def spd_power(Sigma: np.ndarray, power: float) -> np.ndarray:
    """Sigma^power for SPD Sigma via eigh (the principal power, itself SPD)."""
    values, vectors = np.linalg.eigh(Sigma)
    return (vectors * values ** power) @ vectors.T


def symmetric_exp(A: np.ndarray) -> np.ndarray:
    """exp(A) for symmetric A via eigh."""
    values, vectors = np.linalg.eigh(0.5 * (A + A.T))
    return (vectors * np.exp(values)) @ vectors.T


def square_root(Sigma: np.ndarray) -> np.ndarray:
    """The factor used on both sides of eq 7: the principal square root Sigma^{1/2}
    (a module-level function so the mutation test can swap in a Cholesky factor)."""
    return spd_power(Sigma, 0.5)


def retract_eq7(Sigma: np.ndarray, V: np.ndarray, eta: float, root: np.ndarray | None = None) -> np.ndarray:
    """GT eq (7): Sigma^{1/2} exp(eta Sigma^{-1/2} V Sigma^{-1/2}) Sigma^{1/2}, shape=[K, K].

    With another factor A of Sigma = A A^T in place of Sigma^{1/2} (``root``) the formula
    reads A exp(eta A^{-1} V A^{-T}) A^T; since A = Sigma^{1/2} Q with Q orthogonal and
    exp(Q^T X Q) = Q^T exp(X) Q, the result does not depend on the factor."""
    root = square_root(Sigma) if root is None else root
    inverse_root = np.linalg.inv(root)
    return root @ symmetric_exp(eta * inverse_root @ V @ inverse_root.T) @ root.T

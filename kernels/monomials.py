"""Monomials as sorted rows of variable indices, and sparse polynomials mod p.

A degree-k monomial in m variables z_0..z_{m-1} is a sorted row of k indices
(z_0^2 z_3 = [0, 0, 3]); a family of such rows is an int64 array, shape=[monomials, k].
These are the tables that the vanishing ideal's interpolation (ADM Def 8,
:mod:`lightning_alg.ideal`) and the Grassmannian interpolation sets evaluate over F_p.
"""

from __future__ import annotations

import numpy as np

from kernels.errors import BadInput


def encode(monomials: np.ndarray, n_variables: int) -> np.ndarray:
    """One int64 per monomial (sorted index rows read as base-m digits)."""
    codes = np.zeros(len(monomials), dtype=np.int64)
    for column in range(monomials.shape[1]):
        codes = codes * n_variables + monomials[:, column]
    return codes


def sum_terms_mod_p(owner: np.ndarray, monomials: np.ndarray, values: np.ndarray,
                    prime: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse polynomials given term by term -- (owner, monomial row, value mod p) -- with
    the terms of equal (owner, monomial) added mod p and zero sums dropped; returned sorted
    by owner, then monomial.  Rows are sorted variable indices of one length."""
    width = monomials.shape[1]
    if not len(values):
        return owner[:0], monomials[:0], values[:0]
    base = int(monomials.max()) + 1
    if (int(owner.max()) + 1) * float(base) ** width >= 2.0**62:
        raise BadInput(f"{int(owner.max()) + 1} polynomials in {base} variables are too many to index")
    codes = encode(np.column_stack([owner, monomials]), base)
    keys, inverse = np.unique(codes, return_inverse=True)
    total = np.zeros(len(keys), dtype=np.int64)
    np.add.at(total, inverse.ravel(), np.remainder(values, prime))
    total %= prime
    keys = keys[total != 0]
    digits = []
    for _ in range(width):
        keys, digit = np.divmod(keys, base)
        digits.append(digit)
    return keys, np.column_stack(digits[::-1]), total[total != 0]


def all_monomials(n_variables: int, degree: int) -> np.ndarray:
    """Every degree-k monomial in m variables as sorted index rows, lexicographically.

    Built degree by degree without a Python loop over monomials: each row of degree k-1
    ending in l extends by every s >= l.
    """
    rows = np.arange(n_variables, dtype=np.int64)[:, None]
    for _ in range(degree - 1):
        last = rows[:, -1]
        counts = n_variables - last
        offsets = np.repeat(np.cumsum(counts) - counts, counts)
        new = np.arange(counts.sum(), dtype=np.int64) - offsets + np.repeat(last, counts)
        rows = np.column_stack([np.repeat(rows, counts, axis=0), new])
    return rows


def evaluate_monomials(values: np.ndarray, monomials: np.ndarray, prime: int) -> np.ndarray:
    """Monomial values mod p, shape=[points, monomials]; ``values`` are residues < 2^31."""
    out = values[:, monomials[:, 0]]
    for column in range(1, monomials.shape[1]):
        out = out * values[:, monomials[:, column]] % prime
    return out

"""Monomials as sorted rows of variable indices, and sparse polynomials mod p.

A degree-k monomial in m variables z_0..z_{m-1} is a sorted row of k indices
(z_0^2 z_3 = [0, 0, 3]); a family of such rows is an int64 array, shape=[monomials, k].
These are the tables that the vanishing ideal's interpolation (ADM Def 8,
:mod:`attngeom.lightning_alg.ideal`) and the Grassmannian interpolation sets evaluate over F_p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attngeom.core.errors import BadInput


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
    order = np.argsort(codes)
    codes = codes[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    # each residue is < 2^31, so a sum of up to 2^32 of them fits in int64
    total = np.add.reduceat(np.remainder(values[order], prime), starts) % prime
    keys = codes[starts][total != 0]
    digits = []
    for _ in range(width):
        keys, digit = np.divmod(keys, base)
        digits.append(digit)
    return keys, np.column_stack(digits[::-1]), total[total != 0]


@dataclass(frozen=True)
class LinearSubstitution:
    """Variables x_c replaced by linear forms: x_c = sum_i weight[i] z_var[i] over
    i in start[c] .. start[c+1] - 1 (residues mod p), for sparse polynomials given term by
    term (:func:`sum_terms_mod_p`).  Built from one list of (variable, weight) pairs per x_c
    (:meth:`of`)."""

    start: np.ndarray
    var: np.ndarray
    weight: np.ndarray

    @classmethod
    def of(cls, forms: list, prime: int) -> "LinearSubstitution":
        counts = np.array([len(form) for form in forms], dtype=np.int64)
        pairs = [pair for form in forms for pair in form]
        var = np.array([v for v, _ in pairs], dtype=np.int64)
        weight = np.array([w % prime for _, w in pairs], dtype=np.int64)
        return cls(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), var, weight)

    def terms(self, monomials: np.ndarray) -> int:
        """How many terms the monomials expand into, before equal ones are added."""
        counts = np.diff(self.start)
        return int(np.prod(counts[monomials], axis=1).sum()) if len(monomials) else 0

    def apply(self, owner: np.ndarray, monomials: np.ndarray, values: np.ndarray,
              prime: int, combine: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The polynomials (owner, monomial row, value) with every x_c replaced, expanded
        position by position without a loop over terms; equal terms added
        (:func:`sum_terms_mod_p`) unless ``combine`` is False (then terms may repeat)."""
        counts = np.diff(self.start)
        present = np.bincount(monomials.ravel(), minlength=len(counts)) > 0
        if len(monomials) and np.all(counts[present] == 1):
            # one variable per x_c: a renaming (the rows stay sorted when it is increasing)
            first = self.start[np.flatnonzero(present)]
            value = np.remainder(values, prime)
            if np.any(self.weight[first] != 1):
                for j in range(monomials.shape[1]):
                    value = value * self.weight[self.start[monomials[:, j]]] % prime
            keep = value != 0
            rows = self.var[self.start[monomials[keep]]]
            if np.any(np.diff(self.var[first]) < 0):
                rows.sort(axis=1)
            if not combine:
                return owner[keep], rows, value[keep]
            return sum_terms_mod_p(owner[keep], rows, value[keep], prime)
        # term t expands into prod_j n_j(t) terms; expanded term e of t picks, at position
        # j, entry (e // stride_j(t)) % n_j(t) of its form (strides: products of later n)
        n = counts[monomials]
        total = np.prod(n, axis=1)
        parent = np.repeat(np.arange(len(owner)), total)
        local = np.arange(int(total.sum()), dtype=np.int64) - np.repeat(np.cumsum(total) - total,
                                                                         total)
        chosen = np.empty((len(parent), monomials.shape[1]), dtype=np.int64)
        value = np.repeat(np.remainder(values, prime), total)
        stride = np.ones(len(owner), dtype=np.int64)
        for j in reversed(range(monomials.shape[1])):
            pick = local // np.repeat(stride, total) % np.repeat(n[:, j], total)
            slot = np.repeat(self.start[monomials[:, j]], total) + pick
            chosen[:, j] = self.var[slot]
            value = value * self.weight[slot] % prime
            stride = stride * n[:, j]
        chosen.sort(axis=1)
        if not combine:
            return owner[parent], chosen, value
        return sum_terms_mod_p(owner[parent], chosen, value, prime)


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

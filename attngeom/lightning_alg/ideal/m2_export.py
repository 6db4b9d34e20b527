"""Macaulay2 export of the interpolated ideal: a basis over Q of J_1 and of each J'_k.

What is written.  One polynomial per line, degree after degree, in the labels of
``attngeom show --format m2`` (each line is accepted by ``attngeom verify-poly`` with the
same --d --t --a --dprime --col): the basis of J_1, then for k >= 2 the basis of
J'_k = J_k cap Q[pivots]_k, the part of J_k not in (J_1)_k; together with J_1 times all
monomials these span J_k (:mod:`attngeom.lightning_alg.ideal`, step 3).

From F_p to Q.  Each kernel basis vector is in reduced form (1 at its free monomial, 0 at
the other free monomials), which is the reduction mod p of the same reduced basis over Q
(the form is determined by the ideal and the monomial order).  Its entries are lifted to
Q by rational reconstruction, from one prime or, if an entry does not reconstruct or a
lifted polynomial fails its check, from several primes combined by the Chinese remainder
theorem.  Every lifted polynomial, scaled to primitive integer coefficients, is then
evaluated at random points of the variety modulo a further prime that took no part in the
computation: a polynomial outside J survives with probability <= (k w / q)^2.
"""

from __future__ import annotations

from math import gcd, lcm

import numpy as np
from sympy import prevprime

from attngeom.core.errors import BadInput
from attngeom.kernels.monomials import evaluate_monomials
from attngeom.kernels.primefield import matmul_mod_p
from attngeom.kernels.sampling import Sampler
from attngeom.core.verdict import schwartz_zippel_bound
from attngeom.lightning_alg.ideal.degree_table import STREAM_EXPORT, AttentionIdeal
from attngeom.lightning_alg.ideal.interpolation import (
    FRESH_POINTS, chinese_remainder, free_columns, rational_reconstruction)
from attngeom.lightning_alg.parametrization import Parametrization, sample_weights_mod_p

#: Primes tried one after the other when a basis does not lift from fewer.
MAX_PRIMES = 4


def prime_sequence(first: int, count: int) -> list[int]:
    """``first`` and the primes below it."""
    out = [first]
    while len(out) < count:
        out.append(int(prevprime(out[-1])))
    return out


def block_coordinates(ideal, k: int, b: int) -> np.ndarray:
    """The monomials of block b of degree k as rows of coordinate indices."""
    if k == 1:
        return ideal.linear.order[ideal.block_tables[1].block(b)]
    return ideal.variables[ideal.block_tables[k].block(b)]


def lift_block(residues: list[np.ndarray], primes: list[int]) -> list[list[int]] | None:
    """Primitive integer rows, first nonzero entry positive, whose reductions are
    proportional to the given reduced rows mod every prime, or None if some entry does not
    reconstruct."""
    rows = []
    modulus = 1
    for q in primes:
        modulus *= q
    for r in range(residues[0].shape[0]):
        fractions = []
        for c in range(residues[0].shape[1]):
            value, _ = chinese_remainder([int(res[r, c]) for res in residues], primes)
            if value == 0:
                fractions.append(0)
                continue
            lifted = rational_reconstruction(value, modulus)
            if lifted is None:
                return None
            fractions.append(lifted)
        scale = lcm(*[f.denominator for f in fractions if f != 0] or [1])
        integers = [int(f * scale) for f in fractions]
        # a positive first term: a line starting with '-' would read as a command-line option
        common = (gcd(*integers) or 1) * (-1 if next(v for v in integers if v) < 0 else 1)
        rows.append([v // common for v in integers])
    return rows


def _check(ideal, k: int, b: int, rows: list[list[int]], prime: int, sampler: Sampler) -> bool:
    """Do the integer rows vanish at FRESH_POINTS random points of the variety mod prime?"""
    coords = ideal.coords
    weights = sample_weights_mod_p(sampler, FRESH_POINTS, coords.d, coords.dprime, ideal.a, prime)
    values = Parametrization(coords).evaluate_mod_p(weights)
    monomials = block_coordinates(ideal, k, b)
    table = evaluate_monomials(values, monomials, prime)
    coefficients = np.array([[v % prime for v in row] for row in rows], dtype=np.int64).T
    return not matmul_mod_p(table, coefficients, prime).any()


def m2_polynomial(coefficients: list[int], monomials: np.ndarray, coords) -> str:
    """A sparse integer polynomial in Macaulay2 syntax, as ``format_polynomial`` writes it
    (which needs a SymPy expression: too slow for thousands of basis polynomials)."""
    pieces = []
    for coeff, monomial in zip(coefficients, monomials):
        if coeff == 0:
            continue
        indices, exponents = np.unique(monomial, return_counts=True)
        body = "*".join(coords.labels[int(c)].m2(coords.with_row) + (f"^{e}" if e > 1 else "")
                        for c, e in zip(indices, exponents))
        magnitude = abs(coeff)
        text = body if magnitude == 1 else f"{magnitude}*{body}"
        if not pieces:
            pieces.append(("-" if coeff < 0 else "") + text)
        else:
            pieces.append(("- " if coeff < 0 else "+ ") + text)
    return " ".join(pieces)


def export_m2(ideal, max_degree: int, path: str) -> dict:
    """Write the bases of J_1 and J'_2..J'_K of ``ideal`` (run with ``keep=True``) to
    ``path``.  Returns what was written and how it was checked."""
    lines, info = m2_basis(ideal, max_degree)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + ("\n" if lines else ""))
    return {"path": path, **info}


def m2_basis(ideal, max_degree: int) -> tuple[list[str], dict]:
    """The bases of J_1 and J'_2..J'_K of ``ideal`` (run with ``keep=True``) over Q, one
    Macaulay2 polynomial a line, and how they were lifted and checked (the fields of
    :func:`export_m2`'s answer but the path)."""
    primes = prime_sequence(ideal.prime, MAX_PRIMES + 1)
    check_prime = primes.pop()
    engines = [ideal]
    sampler = ideal.stream(STREAM_EXPORT)
    lines, counts = [], {}
    for k in range(1, max_degree + 1):
        counts[str(k)] = 0
        for b, vectors in sorted(ideal.bases.get(k, {}).items()):
            if not len(vectors):
                continue
            while True:
                residues = [_matching(e, ideal, k, b) for e in engines]
                rows = lift_block(residues, primes[:len(engines)])
                if rows is not None and _check(ideal, k, b, rows, check_prime, sampler):
                    break
                if len(engines) == MAX_PRIMES:
                    raise BadInput(f"the degree-{k} basis does not lift to Q from {MAX_PRIMES} "
                                   "primes; its coefficients are too large to export")
                engines.append(_engine(ideal, primes[len(engines)], max_degree))
            monomials = block_coordinates(ideal, k, b)
            lines.extend(m2_polynomial(row, monomials, ideal.coords) for row in rows)
            counts[str(k)] += len(rows)
    return lines, {"polynomials": counts, "primes": primes[:len(engines)],
                   "check_prime": check_prime, "check_points": FRESH_POINTS,
                   "failure_probability": min(1.0, sum(
                       schwartz_zippel_bound(int(k) * ideal.weight_degree, check_prime,
                                             FRESH_POINTS) * n
                       for k, n in counts.items()))}


def _engine(ideal, prime: int, max_degree: int):
    """The same ideal computed modulo another prime, every basis kept."""
    coords = ideal.coords
    engine = AttentionIdeal(coords.d, coords.t, ideal.a, coords.dprime, coords.col, prime,
                            ideal.seed)
    engine.run(max_degree, keep=True)
    return engine


def _matching(engine, ideal, k: int, b: int) -> np.ndarray:
    """The block's basis mod the engine's prime; a different shape or different free
    monomials mean a bad prime, which cannot be combined."""
    vectors = engine.bases[k].get(b) if np.array_equal(engine.variables, ideal.variables) else None
    reference = ideal.bases[k][b]
    if vectors is None or vectors.shape != reference.shape or \
            not np.array_equal(free_columns(vectors), free_columns(reference)):
        raise BadInput(f"the ideal mod {engine.prime} has another shape than mod {ideal.prime} "
                       "(a bad prime); rerun with --prime")
    return vectors

"""Matrices of linear forms in the coefficient coordinates, their minors, and rank bounds.

ADM §4 states its single-column invariants as rank conditions: the maximal minors of the
Lie algebra flattening M_Lie(f_T) (Def 15, Prop 17(2)), the (2a+2)-minors of N(j,j,j)
(Prop 17(1)), the (r+1)-minors of M_Lie on the rank-one slice (Remark 23).  A
:class:`LinearMatrix` holds such a matrix once, sparsely (entry (r, c) = sum_k n_k y_k with
integer n_k), and evaluates it

* at a batch of points mod p or in float64 (gathers of the coordinates, no per-point
  Python loop), on any backend;
* at ring elements (mu(W) in QQ[A, V], for symbolic proofs);
* as an exact minor, expanded with FLINT integer polynomials by Laplace expansion over
  column subsets (n 2^n products; Bareiss with exact division is ~200x slower here).

"rank <= r at every point of the variety" is the same statement as "every (r+1)-minor
lies in J", so the decisions below test ranks at sampled points and never expand the
minors (there are C(20,15) = 15504 maximal minors of M_Lie for d = 4): exact rank over
F_p (``verified``), float64 singular values (``consistent``).  A point of higher rank is a
counterexample: some (r+1)-minor is nonzero there.  The Schwartz–Zippel bound needs no
union over the minors: if some (r+1)-minor g is a nonzero polynomial, rank <= r at N
random points needs g to vanish at all of them, probability <= (deg g / p)^N.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from math import comb, factorial

import flint
import numpy as np
import sympy

from attngeom.kernels.backend import Backend, get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.primefield import rank_mod_p
from attngeom.core.verdict import Status, Verdict, consistent, proved, refuted, verified

#: Largest number of terms a minor may have before ``show --limit`` refuses to expand it.
MAX_MINOR_TERMS = 2_000_000


@dataclass(frozen=True)
class LinearMatrix:
    """A matrix whose entries are integer linear forms in ``n_variables`` coordinates.

    Attributes
    ----------
    rows, columns : names of the rows and columns (shape=[R], [C])
    n_variables : int, the number of coordinates y_0 .. y_{n-1}
    terms : tuple of (row, column, variable, coefficient), entry (r, c) = sum n y_k
    """

    rows: tuple
    columns: tuple
    n_variables: int
    terms: tuple

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.columns)

    @cached_property
    def _by_entry(self) -> dict:
        by_entry: dict = {}
        for r, c, k, coeff in self.terms:
            by_entry.setdefault((r, c), []).append((k, coeff))
        return by_entry

    def entry(self, r: int, c: int) -> list[tuple[int, int]]:
        """[(variable, coefficient), ...] of entry (r, c)."""
        return self._by_entry.get((r, c), [])

    @cached_property
    def slots(self) -> tuple[np.ndarray, np.ndarray]:
        """(variables, coefficients), int64, shape=[S, R * C]: the s-th term of each entry
        (coefficient 0 where an entry has fewer than s + 1 terms), S = most terms per entry."""
        n_cols = self.shape[1]
        depth = max((len(v) for v in self._by_entry.values()), default=1)
        variables = np.zeros((depth, self.shape[0] * n_cols), dtype=np.int64)
        coefficients = np.zeros_like(variables)
        for (r, c), pairs in self._by_entry.items():
            for s, (k, coeff) in enumerate(pairs):
                variables[s, r * n_cols + c], coefficients[s, r * n_cols + c] = k, coeff
        return variables, coefficients

    def evaluate_mod_p(self, y: np.ndarray, prime: int) -> np.ndarray:
        """The matrices at B points, shape=[B, R, C], for int64 residues ``y`` of shape [B, n]."""
        variables, coefficients = self.slots
        y = np.asarray(y, dtype=np.int64) % prime
        total = np.zeros((y.shape[0], variables.shape[1]), dtype=np.int64)
        for var, coeff in zip(variables, coefficients % prime):
            total = (total + y[:, var] * coeff % prime) % prime
        return total.reshape((y.shape[0],) + self.shape)

    def evaluate_float(self, y, backend: Backend | None = None):
        """The matrices at B float points ``y`` (shape=[B, n], an array of ``backend``)."""
        backend = backend or get_backend("numpy")
        variables, coefficients = self.slots
        total = 0
        for var, coeff in zip(variables, coefficients):
            total = total + y[:, backend.asarray(var, "int64")] * backend.asarray(coeff)
        return total.reshape((y.shape[0],) + self.shape)

    def evaluate_ring(self, values: list) -> list[list]:
        """The matrix with y_k replaced by ``values[k]`` (ring elements or numbers)."""
        zero = values[0] * 0
        out = [[zero for _ in self.columns] for _ in self.rows]
        for r, c, k, coeff in self.terms:
            out[r][c] = out[r][c] + coeff * values[k]
        return out

    # -- minors ------------------------------------------------------------------------
    def minor_term_bound(self, size: int) -> int:
        """An upper bound on the number of terms of a size x size minor."""
        per_entry = max((len(v) for v in self._by_entry.values()), default=1)
        monomials = comb(self.n_variables + size - 1, size)
        return min(monomials, factorial(size) * per_entry ** size)

    def minor(self, rows, columns) -> dict:
        """The minor on ``rows`` x ``columns`` as {exponent vector: integer coefficient}."""
        if len(rows) != len(columns):
            raise ValueError("a minor needs as many rows as columns")
        bound = self.minor_term_bound(len(rows))
        if bound > MAX_MINOR_TERMS:
            raise BadInput(
                f"a {len(rows)}x{len(rows)} minor in {self.n_variables} coordinates may have "
                f"{bound:.3g} terms (limit {MAX_MINOR_TERMS:,}); expand it in Macaulay2 from "
                f"the matrix that `show` prints without --limit")
        ctx = flint.fmpz_mpoly_ctx.get(tuple(f"y{k}" for k in range(self.n_variables)),
                                       "degrevlex")
        gens = ctx.gens()
        entries = {}
        for r, c, k, coeff in self.terms:
            entries[(r, c)] = entries.get((r, c), ctx.constant(0)) + coeff * gens[k]
        zero = ctx.constant(0)
        matrix = [[entries.get((r, c), zero) for c in columns] for r in rows]
        return {tuple(map(int, exps)): int(coeff)
                for exps, coeff in _laplace_determinant(matrix, ctx).to_dict().items()}

    def minor_expression(self, rows, columns, symbols) -> sympy.Expr:
        """The minor as a SymPy polynomial in ``symbols`` (one per coordinate)."""
        terms = self.minor(rows, columns)
        if not terms:
            return sympy.Integer(0)
        return sympy.Poly.from_dict(terms, *symbols).as_expr()

    def nonzero_minors(self, size: int, symbols, limit: int | None):
        """(rows, columns, expression) of the nonzero size x size minors, rows then columns
        in lexicographic order, at most ``limit`` of them (identically zero ones skipped)."""
        for rows, columns, terms in self.nonzero_minor_terms(size, limit):
            yield rows, columns, sympy.Poly.from_dict(terms, *symbols).as_expr()

    def nonzero_minor_terms(self, size: int, limit: int | None):
        """:meth:`nonzero_minors` with each minor as :meth:`minor` gives it
        ({exponent vector: integer coefficient}, no SymPy expression)."""
        found = 0
        for columns in combinations(range(len(self.columns)), size):
            for rows in combinations(range(len(self.rows)), size):
                terms = self.minor(rows, columns)
                if terms:
                    yield rows, columns, terms
                    found += 1
                    if limit is not None and found >= limit:
                        return


def _laplace_determinant(matrix, ctx):
    """det of a square matrix of fmpz_mpoly: Laplace expansion along the rows, memoised
    on the set of columns used (the minors of the first k rows)."""
    n = len(matrix)
    partial = {0: ctx.constant(1)}
    for k in range(n):
        extended = {}
        for used, value in partial.items():
            if value.is_zero():
                continue
            for c in range(n):
                if used >> c & 1 or matrix[k][c].is_zero():
                    continue
                term = matrix[k][c] * value
                if bin(used >> (c + 1)).count("1") % 2:
                    term = -term
                key = used | (1 << c)
                extended[key] = extended[key] + term if key in extended else term
        partial = extended
    return partial.get((1 << n) - 1, ctx.constant(0))


# -- ranks at sampled points --------------------------------------------------------------
def ranks_mod_p(matrices: np.ndarray, prime: int) -> list[int]:
    """Exact rank over F_p of each matrix of a batch (shape=[B, R, C])."""
    return [rank_mod_p(m, prime) for m in matrices]


def singular_value_ratios(matrices, backend: Backend) -> np.ndarray:
    """sigma_k / sigma_1 for each matrix of a float batch, shape=[B, min(R, C)], descending.

    Only the name of the singular-value routine differs between the backends (torch has
    ``linalg.svdvals``; numpy and jax.numpy ``linalg.svd(..., compute_uv=False)``).
    """
    if backend.name == "torch":
        values = backend.module.linalg.svdvals(matrices)
    else:
        values = backend.module.linalg.svd(matrices, compute_uv=False)
    values = backend.to_numpy(values)
    top = np.maximum(values[:, :1], np.finfo(float).tiny)
    return values / top


#: Relative size sigma_{r+1}/sigma_1 accepted as "zero" for a matrix of exact rank r whose
#: entries were computed in float64.  Each entry of M_Lie or N is a small integer
#: combination of coordinates y = mu(W), each a sum of at most six products divided by
#: an orbit size, so |E_ij| <= ~10 eps |M|_max; the perturbation of the (r+1)-th singular
#: value is at most ||E||_2 <= sqrt(R C) 10 eps sigma_1 ~ 2e-13 sigma_1 for R C <= 7560
#: (M_Lie at d = 8), plus the SVD's own backward error ~ eps sigma_1.  1e-10 keeps a
#: factor ~500 above that; generic points (the controls) sit at 1e-4 .. 1e-1.
RANK_TOLERANCE = 1e-10


def rank_bound_exact(matrices: np.ndarray, bound: int, *, prime: int, degree: int, what: str,
                     point) -> Verdict:
    """rank <= ``bound`` at every matrix of a batch over F_p (sampled on the variety).

    ``degree`` is the degree of a (bound+1)-minor in the weights; ``point(b)`` returns the
    weights of the b-th sample for a counterexample.
    """
    ranks = ranks_mod_p(matrices, prime)
    evidence = {"ranks_mod_p": ranks, "minor_size": bound + 1}
    above = [b for b, r in enumerate(ranks) if r > bound]
    if above:
        b = above[0]
        return refuted(method="exact", checked=len(ranks), evidence=evidence, summary=(
            f"{what} has rank {ranks[b]} > {bound} at a point over F_{prime}: some "
            f"{bound + 1}-minor is nonzero there"),
            counterexample={"field": f"F_{prime}", "prime": prime, "weights": point(b),
                            "rank": ranks[b], "bound": bound})
    return verified(checked=len(ranks), degree=degree, prime=prime, points=len(ranks),
                    evidence=evidence, summary=(
                        f"{what} has rank <= {bound} (measured {sorted(set(ranks))}) at "
                        f"{len(ranks)} random points over F_{prime}, so its {bound + 1}-minors "
                        f"vanish there"))


def generic_rank_witness(matrix: np.ndarray, size: int, *, prime: int, what: str) -> Verdict:
    """Nontriviality: at a generic cubic (uniform point of F_p^{C(d+2,3)}) the matrix has
    rank >= ``size``, so some size x size minor is a nonzero polynomial (its reduction mod
    p is nonzero at this point, hence it is nonzero over Q)."""
    rank = rank_mod_p(matrix, prime)
    if rank < size:
        return refuted(method="exact", summary=(
            f"{what} has rank {rank} < {size} at a generic cubic too: its {size}-minors may "
            f"all be the zero polynomial, so vanishing on the variety would prove nothing"),
            counterexample={"field": f"F_{prime}", "generic_cubic_rank": rank, "minor_size": size},
            evidence={"generic_cubic_rank": rank, "minor_size": size})
    return proved(checked=1, method="exact", summary=(
        f"nontrivial: {what} has rank {rank} at a generic cubic, so some {size}-minor is "
        f"nonzero there"), evidence={"generic_cubic_rank": rank, "minor_size": size})


def generic_rank_exact(matrices: np.ndarray, expected: int, *, prime: int, degree: int,
                       what: str, point) -> Verdict:
    """"rank = ``expected`` at a general point of the variety", from a batch over F_p.

    The upper bound is :func:`rank_bound_exact`; the lower bound needs one point of rank
    ``expected`` (a nonzero expected-minor there, hence a nonzero polynomial).  No sampled
    point reaching it is reported ``refuted``: were the generic rank ``expected``, that
    minor would have to vanish at every point, probability <= (degree / p)^N.
    """
    upper = rank_bound_exact(matrices, expected, prime=prime, degree=degree, what=what,
                             point=point)
    if upper.status is Status.REFUTED:
        return upper
    ranks = upper.evidence["ranks_mod_p"]
    reached = sum(r == expected for r in ranks)
    if not reached:
        return refuted(method="exact", checked=len(ranks), evidence=upper.evidence, summary=(
            f"{what} has rank {max(ranks)} < {expected} at all {len(ranks)} random points over "
            f"F_{prime}: its generic rank is lower than stated"),
            counterexample={"field": f"F_{prime}", "ranks_mod_p": ranks, "stated": expected,
                            "weights": point(0)})
    return verified(checked=len(ranks), degree=degree, prime=prime, points=len(ranks),
                    evidence=upper.evidence, summary=(
                        f"{what} has rank {expected} at general points: <= {expected} at all "
                        f"{len(ranks)} random points over F_{prime} and = {expected} at "
                        f"{reached} of them"))


def rank_bound_numeric(matrices, controls, bound: int, *, backend: Backend, what: str,
                       point, attained: bool = False) -> Verdict:
    """sigma_{bound+1} / sigma_1 <= RANK_TOLERANCE at every float point on the variety;
    ``controls`` (generic cubics) show the same ratio where the bound does not hold.
    With ``attained``, some point must also have sigma_bound / sigma_1 above the
    tolerance (rank = bound there)."""
    ratios = singular_value_ratios(matrices, backend)
    control = singular_value_ratios(controls, backend)[:, bound]
    residuals = ratios[:, bound]
    worst = float(residuals.max())
    evidence = {"points": len(residuals), "control_min_relative": float(control.min()),
                "tolerance_reason": "float64 rounding bound, see "
                                    "invariants.determinantal.RANK_TOLERANCE"}
    if attained:
        evidence["sigma_bound_relative_max"] = float(ratios[:, bound - 1].max())
    if worst > RANK_TOLERANCE:
        b = int(np.argmax(residuals))
        return refuted(method="numeric", checked=len(residuals), max_residual=worst,
                       backend=backend.name, device=backend.device, evidence=evidence,
                       summary=(f"{what}: sigma_{bound + 1}/sigma_1 = {worst:.3g} > "
                                f"{RANK_TOLERANCE:g}, so rank > {bound} at a float point"),
                       counterexample={"field": "float64", "weights": point(b),
                                       "relative_singular_value": worst})
    if attained and float(ratios[:, bound - 1].max()) <= RANK_TOLERANCE:
        return refuted(method="numeric", checked=len(residuals), backend=backend.name,
                       device=backend.device, evidence=evidence, summary=(
                           f"{what}: sigma_{bound}/sigma_1 <= {RANK_TOLERANCE:g} at every float "
                           f"point, so its generic rank is below {bound}"),
                       counterexample={"field": "float64", "weights": point(0),
                                       "relative_singular_value": float(ratios[0, bound - 1])})
    return consistent(checked=len(residuals), max_residual=worst, tolerance=RANK_TOLERANCE,
                      backend=backend.name, device=backend.device, evidence=evidence,
                      summary=(f"{what}: sigma_{bound + 1}/sigma_1 <= {worst:.2e} at "
                               f"{len(residuals)} float64 points (generic cubics >= "
                               f"{float(control.min()):.2e})"))


# -- display -------------------------------------------------------------------------------
def format_entry(lm: LinearMatrix, r: int, c: int, names, fmt: str) -> str:
    """Entry (r, c) as ADM prints it ('2d', '-i', '0'); Macaulay2 gets '2*d'."""
    out = ""
    for k, coeff in lm.entry(r, c):
        sign = "-" if coeff < 0 else ("+" if out else "")
        number = "" if abs(coeff) == 1 else str(abs(coeff)) + ("*" if fmt == "m2" else "")
        out += sign + number + names[k]
    return out or "0"


def latex_name(name: str) -> str:
    """'x1^2x2' -> 'x_{1}^{2}x_{2}', 'E12' -> 'E_{12}', 'H1' -> 'H_{1}'."""
    out = re.sub(r"([a-zA-Z])(\d+(?:,\d+)?)", r"\1_{\2}", name.replace("*", ""))
    return re.sub(r"\^(\d+)", r"^{\1}", out)


def m2_matrix(cells) -> str:
    """Rows of entry strings as Macaulay2's ``matrix{{...},...}`` (for ``minors``)."""
    return "matrix{" + ",".join("{" + ",".join(row) + "}" for row in cells) + "}"


def format_matrix(lm: LinearMatrix, names, fmt: str, legend=()) -> str:
    """The matrix with coordinate k written ``names[k]``: an aligned table followed by the
    ``legend`` lines (text), an array (latex), ``matrix{{...}}`` (m2, for ``minors`` in
    Macaulay2) or JSON with the row and column names."""
    n_rows, n_cols = lm.shape
    cells = [[format_entry(lm, r, c, names, fmt) for c in range(n_cols)] for r in range(n_rows)]
    if fmt == "m2":
        return m2_matrix(cells)
    if fmt == "json":
        return json.dumps({"rows": list(lm.rows), "columns": list(lm.columns),
                           "entries": cells}, indent=1)
    if fmt == "latex":
        head = " & ".join(latex_name(c) for c in lm.columns)
        body = " \\\\\n".join(latex_name(lm.rows[r]) + " & " + " & ".join(cells[r])
                              for r in range(n_rows))
        return (f"\\begin{{array}}{{c|{'c' * n_cols}}}\n & {head} \\\\ \\hline\n{body}\n"
                f"\\end{{array}}")
    width = max([len(x) for row in cells for x in row] + [len(c) for c in lm.columns])
    first = max(len(r) for r in lm.rows)
    lines = [" " * first + "  " + " ".join(f"{c:>{width}}" for c in lm.columns)]
    lines += [f"{lm.rows[r]:>{first}}  " + " ".join(f"{x:>{width}}" for x in cells[r])
              for r in range(n_rows)]
    return "\n".join(lines + ([""] + list(legend) if legend else []))

"""Veronese-type invariants of the cross-column coordinates (ADM §5.3).

Fix an output row i, a target column j and a context column n != j.  For ordered tuples
K = (k_1..k_r) of distinct context indices and L = (l_1..l_r) of distinct target indices
and a multi-index alpha of degree r, ADM Thm 30 builds

    M_alpha(y)[p, q] = omega(k_f(p), k_p) * y_{(k_f(p),n),(k_p,n),(l_q,j)},
    omega(u, v) = 1 if u = v else 2                                   (ADM eq 4)

with f: [r] -> [r] an acyclic map (only self-loops as cycles) with |f^-1(m)| = alpha_m,
and proves

    D_alpha(y) = det M_alpha(y) = v^alpha det(A_{K,L}) on the variety,
    v^alpha = prod_m v_{k_m}^{alpha_m}.

So (D_alpha)_alpha is a point of the r-th Veronese variety of P^{r-1} (scaled by
det A_{K,L}), and rank-one matrices of these coordinates give invariants of degree 2r
(their 2 x 2 minors):

* ADM Thm 30 -- the catalecticant of one (K, L): rows |beta| = 1, columns |gamma| = r - 1,
  entry D_{beta+gamma};
* ADM Cor 32 (cross-target) -- rows alpha (all of degree r), columns two target choices
  L != L': entry D_{alpha, L};
* ADM Cor 33 (block Veronese) and Remark 34 -- rows |beta| = s, columns (gamma, L) with
  |gamma| = r - s and L over all target choices: entry D_{beta+gamma, L} (Cor 33: s = 1).

Multi-indices are listed in descending lexicographic order, as ADM Example 36 prints the
catalecticant C_3; index tuples are 1-based; target choices of Cor 32/33 are the sorted
r-subsets of [d] (reordering L only changes every D_{alpha,L} by the same sign).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product
from math import comb, factorial

import numpy as np
import sympy

from attngeom.core.errors import BadInput
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants.structured import (
    ObjectArithmetic, StructuredFamily, chunk_length, generic_point)
from attngeom.lightning_alg.labels import Label

THM30 = "ADM Thm 30"
COR32 = "ADM Cor 32"
COR33 = "ADM Cor 33"
REMARK34 = "ADM Remark 34"


def omega(u: int, v: int) -> int:
    """ADM eq (4): 1 if u = v, else 2 (the orbit size of the context pair {u, v})."""
    return 1 if u == v else 2


def multi_indices(variables: int, degree: int) -> list[tuple[int, ...]]:
    """Exponent vectors of degree ``degree`` in ``variables`` variables, lex descending."""
    return sorted((c for c in product(range(degree + 1), repeat=variables) if sum(c) == degree),
                  reverse=True)


def acyclic_map(alpha: tuple[int, ...]) -> tuple[int, ...]:
    """The map f of the proof of ADM Thm 30, as the tuple (f(1), .., f(r)).

    Self-loops f(m) = m for every m with alpha_m >= 1; the vertices p with alpha_p = 0 are
    sent, in increasing order, to the targets still needing alpha_m - 1 preimages (in
    increasing order of m).  Then |f^-1(m)| = alpha_m and every cycle is a self-loop.
    """
    r = len(alpha)
    f = [0] * r
    remaining = []
    for m in range(1, r + 1):
        if alpha[m - 1] >= 1:
            f[m - 1] = m
            remaining += [m] * (alpha[m - 1] - 1)
    for p, m in zip([p for p in range(1, r + 1) if alpha[p - 1] == 0], remaining):
        f[p - 1] = m
    return tuple(f)


def monomial_text(alpha: tuple[int, ...], K: tuple[int, ...], fmt: str = "text") -> str:
    """v^alpha = prod_m v_{k_m}^{alpha_m}, as text or LaTeX."""
    parts = []
    for k, e in zip(K, alpha):
        if e:
            power = "" if e == 1 else (f"^{{{e}}}" if fmt == "latex" else f"^{e}")
            parts.append(f"v_{{{k}}}{power}" if fmt == "latex" else f"v_{k}{power}")
    return (" " if fmt == "latex" else "*").join(parts) or "1"


@dataclass(frozen=True)
class VeroneseCoordinate:
    """D_{alpha,K,L}(y) = det M_alpha(y) of ADM Thm 30 (1-based K, L; alpha of degree r)."""

    K: tuple[int, ...]
    L: tuple[int, ...]
    alpha: tuple[int, ...]

    @property
    def r(self) -> int:
        return len(self.K)

    @property
    def f(self) -> tuple[int, ...]:
        return acyclic_map(self.alpha)

    def matrix(self, row: int, col: int, context: int) -> list[list[tuple[int, Label]]]:
        """M_alpha(y) as (unscaling factor, label) entries: row p has the context pair
        {k_f(p), k_p}, column q the target index l_q (ADM Thm 30 proof)."""
        f = self.f
        out = []
        for p in range(self.r):
            u, v = self.K[f[p] - 1], self.K[p]
            a1, a2 = min(u, v), max(u, v)
            out.append([(omega(u, v), Label(row, col, context, (a1, a2, l))) for l in self.L])
        return out

    def name(self, with_L: bool = False, fmt: str = "text") -> str:
        alpha = "(" + ",".join(map(str, self.alpha)) + ")"
        sub = alpha + (",(" + ",".join(map(str, self.L)) + ")" if with_L else "")
        return f"D_{{{sub}}}" if fmt == "latex" else f"D_{sub}"


class VeroneseCoordinates:
    """An ordered list of D_{alpha,K,L}, evaluated together (one batched det per r)."""

    def __init__(self, coords: CoordinateSystem, context: int, keys: list[VeroneseCoordinate]):
        self.coords, self.context, self.keys = coords, context, list(keys)
        self.position = {key: k for k, key in enumerate(self.keys)}
        self._groups = []
        for r in sorted({key.r for key in self.keys}):
            members = [k for k, key in enumerate(self.keys) if key.r == r]
            index = np.zeros((len(members), r, r), dtype=np.int64)
            scales = np.zeros((len(members), r, r), dtype=np.int64)
            for slot, k in enumerate(members):
                for p, line in enumerate(self.matrix(self.keys[k])):
                    for q, (w, label) in enumerate(line):
                        index[slot, p, q] = coords.index[label]
                        scales[slot, p, q] = w
            self._groups.append((np.array(members), index, scales))
        #: permutation from the concatenated per-r groups back to the order of ``keys``
        self.order = np.argsort(np.concatenate([g[0] for g in self._groups])) \
            if self._groups else np.zeros(0, dtype=np.int64)

    def matrix(self, key: VeroneseCoordinate):
        return key.matrix(self.coords.row, self.coords.col, self.context)

    def __len__(self) -> int:
        return len(self.keys)

    def variables(self) -> list[int]:
        return sorted({int(c) for _, index, _ in self._groups for c in index.ravel()})

    def expand(self) -> dict:
        """{key: D_key(y) as a SymPy expression in the coordinates}."""
        _, point = generic_point(self.coords, self.variables())
        values = self.evaluate(point, ObjectArithmetic())[0]
        return {key: value.as_expr() for key, value in zip(self.keys, values)}

    def evaluate(self, point, arith):
        """(D_key(y))_key, shape=[B, len(keys)], in the order of ``keys``."""
        parts = [arith.det(arith.scale(arith.take(point.y, index), scales))
                 for _, index, scales in self._groups]
        return arith.take(arith.concat(parts), self.order)


def index_choices(d: int, r: int, given: tuple[int, ...] | None) -> list[tuple[int, ...]]:
    """The given tuple, or all sorted r-subsets of [d]."""
    return [tuple(given)] if given else list(combinations(range(1, d + 1), r))


# -- rank-one matrices of Veronese coordinates and their minors -----------------------

@dataclass(frozen=True)
class RankOneBlock:
    """A matrix of Veronese coordinates that has rank <= 1 on the variety.

    ``entries[a][b]`` is a VeroneseCoordinate; ``row_keys`` / ``col_keys`` label the rows
    and columns for display (multi-indices, or (gamma, L) pairs).
    """

    source: str
    K: tuple[int, ...]
    row_keys: tuple
    col_keys: tuple
    entries: tuple

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.row_keys), len(self.col_keys)

    @property
    def minor_count(self) -> int:
        rows, cols = self.shape
        return comb(rows, 2) * comb(cols, 2)

    def minor_positions(self, start: int, stop: int) -> tuple[np.ndarray, ...]:
        """(row, row', col, col') of minors start .. stop-1: row pairs outer, column pairs inner."""
        rows, cols = self.shape
        r1, r2 = np.triu_indices(rows, 1)
        c1, c2 = np.triu_indices(cols, 1)
        k = np.arange(start, stop)
        pr, pc = k // len(c1), k % len(c1)
        return r1[pr], r2[pr], c1[pc], c2[pc]


class VeroneseMinors(StructuredFamily):
    """The 2 x 2 minors D_{a}D_{b} - D_{c}D_{e} of a list of rank-one blocks.

    Member order: block by block, and in a block row pairs (i < i') outer, column pairs
    (c < c') inner; the minor is entries[i][c] entries[i'][c'] - entries[i][c'] entries[i'][c].
    """

    def __init__(self, name: str, coords: CoordinateSystem, context: int,
                 blocks: list[RankOneBlock]):
        self.name, self.coords, self.context, self.blocks = name, coords, context, blocks
        keys = list(dict.fromkeys(e for b in blocks for line in b.entries for e in line))
        self.coordinates = VeroneseCoordinates(coords, context, keys)
        self.offsets = np.cumsum([0] + [b.minor_count for b in blocks])
        self._positions = [np.array([[self.coordinates.position[e] for e in line]
                                     for line in b.entries], dtype=np.int64) for b in blocks]

    @property
    def size(self) -> int:
        return int(self.offsets[-1])

    @property
    def degree(self) -> int:
        return 2 * max((b.entries[0][0].r for b in self.blocks), default=0)

    def variables(self):
        return self.coordinates.variables()

    def chunks(self, point, arith):
        D = self.coordinates.evaluate(point, arith)
        # one fixed chunk length (the last chunk padded), so that backends compiling per
        # shape (jax) compile the minor evaluation once
        step = min(max(self.size, 1), chunk_length(point.batch))
        for start in range(0, self.size, step):
            count = min(self.size, start + step) - start
            main, second, third, fourth = (np.pad(e, (0, step - count))
                                           for e in self.positions(start, start + count))
            values = arith.sub(arith.mul(arith.take(D, main), arith.take(D, second)),
                               arith.mul(arith.take(D, third), arith.take(D, fourth)))
            yield start, values if count == step else arith.take(values, np.arange(count))

    def positions(self, start: int, stop: int) -> tuple[np.ndarray, ...]:
        """Indices into the D values of the four entries of minors start .. stop-1:
        minor = D[first] D[second] - D[third] D[fourth]."""
        parts = []
        b = int(np.searchsorted(self.offsets, start, side="right") - 1)
        while b < len(self.blocks) and self.offsets[b] < stop:
            low = max(start, int(self.offsets[b])) - int(self.offsets[b])
            high = min(stop, int(self.offsets[b + 1])) - int(self.offsets[b])
            if high > low:
                i, i2, c, c2 = self.blocks[b].minor_positions(low, high)
                pos = self._positions[b]
                parts.append((pos[i, c], pos[i2, c2], pos[i, c2], pos[i2, c]))
            b += 1
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))

    def block_of(self, index: int) -> RankOneBlock:
        return self._locate(index)[0]

    def _locate(self, index: int):
        b = int(np.searchsorted(self.offsets, index, side="right") - 1)
        i, i2, c, c2 = (int(x[0]) for x in self.blocks[b].minor_positions(
            index - int(self.offsets[b]), index - int(self.offsets[b]) + 1))
        return self.blocks[b], i, i2, c, c2

    def describe(self, index):
        block, i, i2, c, c2 = self._locate(index)
        e = block.entries
        with_L = block.source != THM30
        name = lambda key: key.name(with_L)
        return {"source": block.source, "r": e[0][0].r, "K": list(block.K),
                "L": [list(x) for x in sorted({x.L for x in (e[i][c], e[i2][c2], e[i][c2], e[i2][c])})],
                "rows": [str(block.row_keys[i]), str(block.row_keys[i2])],
                "columns": [str(block.col_keys[c]), str(block.col_keys[c2])],
                "minor": f"{name(e[i][c])}*{name(e[i2][c2])} - {name(e[i][c2])}*{name(e[i2][c])}"}

    def restrict(self, index):
        return self.restrict_many([index])

    def restrict_many(self, indices) -> "VeroneseMinors":
        """The family of the given members, each as its own 2 x 2 block (same order)."""
        singles = []
        for index in indices:
            block, i, i2, c, c2 = self._locate(index)
            e = block.entries
            singles.append(RankOneBlock(block.source, block.K,
                                        (block.row_keys[i], block.row_keys[i2]),
                                        (block.col_keys[c], block.col_keys[c2]),
                                        ((e[i][c], e[i][c2]), (e[i2][c], e[i2][c2]))))
        return VeroneseMinors(self.name, self.coords, self.context, singles)

    def printable_terms(self, index):
        r = self._locate(index)[0].entries[0][0].r
        return 2 * factorial(r) ** 2


class VeroneseIdentity(StructuredFamily):
    """ADM Thm 30's formula D_{alpha,K,L}(mu(W)) - v^alpha det(A_{K,L}) = 0, one member per
    Veronese coordinate (an identity in the weights, not an invariant)."""

    uses_weights = True

    def __init__(self, coordinates: VeroneseCoordinates):
        self.coordinates = coordinates
        self.name = f"{THM30} formula D_alpha(mu(W)) = v^alpha det(A_(K,L))"
        d = coordinates.coords.d
        self._groups = []
        for r in sorted({key.r for key in coordinates.keys}):
            members = [k for k, key in enumerate(coordinates.keys) if key.r == r]
            minors = np.zeros((len(members), r, r), dtype=np.int64)
            monomial = np.zeros((len(members), r), dtype=np.int64)
            for slot, k in enumerate(members):
                key = coordinates.keys[k]
                minors[slot] = [[(kk - 1) * d + (l - 1) for l in key.L] for kk in key.K]
                monomial[slot] = [(coordinates.coords.row - 1) * d + k_m - 1
                                  for k_m, e in zip(key.K, key.alpha) for _ in range(e)]
            self._groups.append((minors, monomial))

    @property
    def size(self):
        return len(self.coordinates)

    @property
    def degree(self):
        return max((key.r for key in self.coordinates.keys), default=0)

    def chunks(self, point, arith):
        parts = []
        for minors, monomial in self._groups:
            value = arith.det(arith.take(point.A, minors))
            for m in range(monomial.shape[1]):
                value = arith.mul(value, arith.take(point.V, monomial[:, m]))
            parts.append(value)
        rhs = arith.take(arith.concat(parts), self.coordinates.order)
        yield 0, arith.sub(self.coordinates.evaluate(point, arith), rhs)

    def describe(self, index):
        key = self.coordinates.keys[index]
        return {"source": THM30, "K": list(key.K), "L": list(key.L), "alpha": list(key.alpha),
                "f": list(key.f), "claimed": f"{monomial_text(key.alpha, key.K)}*det(A_(K,L))"}

    def restrict(self, index):
        c = self.coordinates
        return VeroneseIdentity(VeroneseCoordinates(c.coords, c.context, [c.keys[index]]))


# -- the three constructions ----------------------------------------------------------

def catalecticant_block(K, L, r: int, s: int = 1, source: str = THM30) -> RankOneBlock:
    """Rows |beta| = s, columns |gamma| = r - s, entry D_{beta+gamma,K,L} (ADM Thm 30 with s=1)."""
    rows, cols = multi_indices(r, s), multi_indices(r, r - s)
    entries = tuple(tuple(VeroneseCoordinate(K, L, tuple(b + g for b, g in zip(beta, gamma)))
                          for gamma in cols) for beta in rows)
    return RankOneBlock(source, K, tuple(rows), tuple(cols), entries)


def cross_target_block(K, L, L2, r: int) -> RankOneBlock:
    """Rows alpha of degree r, columns L and L' (ADM Cor 32)."""
    alphas = multi_indices(r, r)
    entries = tuple((VeroneseCoordinate(K, L, al), VeroneseCoordinate(K, L2, al)) for al in alphas)
    return RankOneBlock(COR32, K, tuple(alphas), (L, L2), entries)


def block_veronese_block(K, Ls, r: int, s: int) -> RankOneBlock:
    """Rows |beta| = s, columns (gamma, L), entry D_{beta+gamma,K,L} (ADM Cor 33, Remark 34)."""
    rows, gammas = multi_indices(r, s), multi_indices(r, r - s)
    cols = tuple((gamma, L) for L in Ls for gamma in gammas)
    entries = tuple(tuple(VeroneseCoordinate(K, L, tuple(b + g for b, g in zip(beta, gamma)))
                          for gamma, L in cols) for beta in rows)
    return RankOneBlock(COR33 if s == 1 else REMARK34, K, tuple(rows), cols, entries)


def veronese_blocks(d: int, degrees, K=None, L=None) -> list[RankOneBlock]:
    """ADM Thm 30: one catalecticant per (r, K, L)."""
    return [catalecticant_block(k, l, r) for r in degrees
            for k in index_choices(d, r, K) for l in index_choices(d, r, L)]


def cross_target_blocks(d: int, degrees, K=None) -> list[RankOneBlock]:
    """ADM Cor 32: one block per (r, K, {L, L'}) with L < L' sorted r-subsets."""
    return [cross_target_block(k, l, l2, r) for r in degrees for k in index_choices(d, r, K)
            for l, l2 in combinations(index_choices(d, r, None), 2)]


def block_veronese_blocks(d: int, degrees, s: int, K=None) -> list[RankOneBlock]:
    """ADM Cor 33 (s = 1) / Remark 34: one block C_K per (r, K), over r with s <= r - 1."""
    return [block_veronese_block(k, index_choices(d, r, None), r, s)
            for r in degrees if s <= r - 1 for k in index_choices(d, r, K)]


# -- counts ---------------------------------------------------------------------------

def coordinate_count(d: int, degrees, fixed_K: bool = False, fixed_L: bool = False) -> int:
    """Number of D_{alpha,K,L}: sum_r C(d,r)^2 C(2r-1, r) (a factor C(d,r) less per fixed tuple)."""
    return sum((1 if fixed_K else comb(d, r)) * (1 if fixed_L else comb(d, r)) * comb(2 * r - 1, r)
               for r in degrees)


def veronese_minor_count(d: int, degrees, fixed_K=False, fixed_L=False) -> int:
    """Thm 30: sum_r C(d,r)^2 C(r,2) C(C(2r-2, r-1), 2)."""
    return sum((1 if fixed_K else comb(d, r)) * (1 if fixed_L else comb(d, r))
               * comb(r, 2) * comb(comb(2 * r - 2, r - 1), 2) for r in degrees)


def cross_target_minor_count(d: int, degrees, fixed_K=False) -> int:
    """Cor 32: sum_r C(d,r) C(C(d,r), 2) C(C(2r-1, r), 2)."""
    return sum((1 if fixed_K else comb(d, r)) * comb(comb(d, r), 2) * comb(comb(2 * r - 1, r), 2)
               for r in degrees)


def block_minor_count(d: int, degrees, s: int, fixed_K=False) -> int:
    """Cor 33 / Remark 34: sum_{r > s} C(d,r) C(C(r+s-1, s), 2) C(C(2r-s-1, r-s) C(d,r), 2)."""
    return sum((1 if fixed_K else comb(d, r)) * comb(comb(r + s - 1, s), 2)
               * comb(comb(2 * r - s - 1, r - s) * comb(d, r), 2) for r in degrees if s <= r - 1)


# -- ADM Examples 29, 31 and 36 exactly as printed --------------------------------------

#: ADM Example 29, eq (5): the matrices of d_1, d_2, d_3 as printed (target column 1,
#: context column 2), entries as the three (row, column) pairs of their label.
EXAMPLE29 = (
    [[((1, 2), (1, 2), (2, 1)), ((1, 2), (1, 2), (1, 1))],
     [((1, 2), (2, 2), (2, 1)), ((1, 2), (2, 2), (1, 1))]],
    [[((1, 2), (2, 2), (2, 1)), ((1, 2), (2, 2), (1, 1))],
     [((2, 2), (2, 2), (2, 1)), ((2, 2), (2, 2), (1, 1))]],
    [[((1, 2), (1, 2), (2, 1)), ((1, 2), (1, 2), (1, 1))],
     [((2, 2), (2, 2), (2, 1)), ((2, 2), (2, 2), (1, 1))]],
)


def example29_matrices(coords: CoordinateSystem) -> list[list[list[Label]]]:
    """The printed matrices of d_1, d_2, d_3 as labels of ``coords``' output row."""
    return [[[Label.from_pairs(pairs, coords.row) for pairs in line] for line in matrix]
            for matrix in EXAMPLE29]


def example29_minors(coords: CoordinateSystem) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """d_1, d_2, d_3 of ADM Example 29 (eq 5), as printed."""
    return tuple(sympy.Matrix([[coords.symbol(label) for label in line] for line in matrix]).det()
                 for matrix in example29_matrices(coords))


def example29_quartic(coords: CoordinateSystem) -> sympy.Expr:
    """q(y) = 4 d_1(y) d_2(y) - d_3(y)^2 of ADM Example 29, eq (5), as printed."""
    d1, d2, d3 = example29_minors(coords)
    return sympy.expand(4 * d1 * d2 - d3 ** 2)


def example29_minor_values(v, det_A):
    """ADM Example 29's printed values of d_1, d_2, d_3 at mu(W): -1/2 v_11^2 det A,
    -1/2 v_12^2 det A, -v_11 v_12 det A (v = (v_11, v_12))."""
    half = sympy.Rational(1, 2)
    return -half * v[0] ** 2 * det_A, -half * v[1] ** 2 * det_A, -v[0] * v[1] * det_A


#: ADM Example 31: K = (1, 2), L = (2, 1), and per alpha the printed f and M_alpha(y),
#: entries as (factor, ((row, col), (row, col), (row, col))).
EXAMPLE31_K, EXAMPLE31_L = (1, 2), (2, 1)
EXAMPLE31 = {
    (2, 0): ((1, 1), [[(1, ((1, 2), (1, 2), (2, 1))), (1, ((1, 2), (1, 2), (1, 1)))],
                      [(2, ((1, 2), (2, 2), (2, 1))), (2, ((1, 2), (2, 2), (1, 1)))]]),
    (0, 2): ((2, 2), [[(2, ((1, 2), (2, 2), (2, 1))), (2, ((1, 2), (2, 2), (1, 1)))],
                      [(1, ((2, 2), (2, 2), (2, 1))), (1, ((2, 2), (2, 2), (1, 1)))]]),
    (1, 1): ((1, 2), [[(1, ((1, 2), (1, 2), (2, 1))), (1, ((1, 2), (1, 2), (1, 1)))],
                      [(1, ((2, 2), (2, 2), (2, 1))), (1, ((2, 2), (2, 2), (1, 1)))]]),
}
#: ADM Example 31: D_(2,0) = 2 d_1, D_(0,2) = 2 d_2, D_(1,1) = d_3 (indices into (d1, d2, d3)).
EXAMPLE31_D = {(2, 0): (2, 0), (0, 2): (2, 1), (1, 1): (1, 2)}


def example36_matrix(n: int, j: int) -> tuple[tuple[int, ...], list]:
    """ADM Example 36: f and M_(1,2,0)(y) for K = L = (1,2,3), as printed."""
    rows = [(1, (1, 1)), (1, (2, 2)), (2, (2, 3))]
    return (1, 2, 2), [[(w, ((a, n), (b, n), (l, j))) for l in (1, 2, 3)] for w, (a, b) in rows]


#: ADM Example 36's catalecticant C_3(y): the alpha of each entry, as printed.
EXAMPLE36_C3 = [
    [(3, 0, 0), (2, 1, 0), (2, 0, 1), (1, 2, 0), (1, 1, 1), (1, 0, 2)],
    [(2, 1, 0), (1, 2, 0), (1, 1, 1), (0, 3, 0), (0, 2, 1), (0, 1, 2)],
    [(2, 0, 1), (1, 1, 1), (1, 0, 2), (0, 2, 1), (0, 1, 2), (0, 0, 3)],
]


def labelled_matrix(printed, coords: CoordinateSystem) -> list[list[tuple[int, Label]]]:
    """A printed matrix of (factor, pairs) as (factor, Label) entries of ``coords``' row."""
    return [[(w, Label.from_pairs(pairs, coords.row)) for w, pairs in line] for line in printed]


def require_in_range(indices, what: str, d: int) -> None:
    """BadInput for indices outside [d]."""
    bad = [k for k in indices if not 1 <= k <= d]
    if bad:
        raise BadInput(f"{what} {tuple(indices)} must lie in 1..{d} (d = {d})")

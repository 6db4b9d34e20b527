"""ADM Thm 40's resultant quartics over several lines, random lines, and every line
(ADM Example 42, Remark 43).

ADM Thm 40 holds for every line L = P(span{xi, zeta}) of P^{d-1}; Example 42 collects the
quartics of "a finite list of lines selected by hand" and Remark 43 asks which collections
of lines suffice.  With xi, zeta, u, w indeterminates,

    Res(Q_u^L, Q_w^L)(y; xi, zeta, u, w)

is SL_2-invariant in (xi, zeta) of degree 8 (a change of basis g of the line multiplies it
by det(g)^4) and in (u, w) of degree 4 (det(g)^2), so it lies in
R_4(Gr(2,d)) (x) R_2(Gr(2,d)) (x) Q[y]_4 (:mod:`~attngeom.lightning_alg.invariants.grassmannian`):
a form of degree 4 in the Pluecker coordinates of the line and of degree 2 in those of
(u, w).  Hence

* the span of the quartics of all lines equals the span of the coefficients of
  Res(Q_u^L, Q_w^L) as a polynomial in (xi, zeta, u, w), and has dimension at most
  dim R_4 * dim R_2 = C(d+3,4) C(d+2,4) / 5 * d^2 (d^2 - 1) / 12 (90 for d = 3, 2100 for
  d = 4);
* ``--line all`` realizes it with finitely many members: Res(Q_u^L, Q_w^L) at the
  dim R_4 lines and dim R_2 pairs (u, w) of two interpolation sets
  (:func:`~attngeom.lightning_alg.invariants.grassmannian.interpolation_lines`); the Kronecker
  product of two invertible evaluation matrices is invertible, so these values span exactly
  the all-lines span;
* a set S of lines spans (rank of the Pluecker quartics at S) * dim R_2 dimensions whenever
  the map R_4^* (x) R_2^* -> Q[y]_4 is injective (measured: it is for d = 3, 4), so S
  suffices iff it lies on no quartic line complex (no degree-4 Pluecker form vanishes on S):
  dim R_4 lines in general position, never fewer.

Members: one line keeps ADM Example 42's list (pairwise resultants and every distinct
coefficient in u, w); several lines take, on each line, Res(Q_u^L, Q_w^L) at the dim R_2
interpolation pairs (u, w) -- the same span per line, with dim R_2 members.

``--line`` syntax (:func:`parse_lines`): ``xi:zeta`` (one line; by default
:func:`~attngeom.lightning_alg.invariants.resultant.generic_line`, no entry zero),
``example41`` (ADM Example 41's e1:e2), ``xi:zeta;xi:zeta;...`` (several), ``coordinate`` (every e_i:e_j), ``random:K`` or
``random:K:SEED`` (K seeded random lines, integer entries in [-99, 99]), ``all`` (every line).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from attngeom.core.errors import BadInput
from attngeom.kernels.monomials import LinearSubstitution, sum_terms_mod_p
from attngeom.kernels.primefield import residue
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.invariants import resultant as res
from attngeom.lightning_alg.invariants.grassmannian import (
    Pair, coordinate_ring_dimension, independent, interpolation_lines)
from attngeom.lightning_alg.invariants.structured import StructuredFamily

ALL, COORDINATE, RANDOM, EXAMPLE41 = "all", "coordinate", "random", "example41"
#: Entries of random line vectors lie in [-RANDOM_ENTRY, RANDOM_ENTRY].
RANDOM_ENTRY = 99
#: Sampler stream of the random lines (independent of the checks' streams).
LINE_STREAM = 23
#: At most this many lines, and this many members over all lines.
MAX_LINES = 2000
MAX_MEMBERS = 30_000


@dataclass(frozen=True)
class LineSet:
    """The lines a resultant family uses.  ``kind``: one, list, coordinate, random, all."""

    kind: str
    lines: tuple[Pair, ...]
    seed: int | None = None

    @property
    def generic_kind(self) -> str:
        """Per line: one line keeps every coefficient in u, w (ADM Example 42's list);
        several lines take Res(Q_u^L, Q_w^L) at the dim R_2 interpolation pairs, which span
        the same space with fewer members (d^2 (d^2 - 1) / 12 = 6 instead of 15 at d = 3)."""
        return "coefficients" if self.kind == "one" else "pairs"

    def text(self) -> str:
        if self.kind == ALL:
            return "every line (interpolation lines)"
        if self.kind == RANDOM:
            return f"{len(self.lines)} random lines (seed {self.seed})"
        if self.kind == COORDINATE:
            return f"the {len(self.lines)} coordinate lines e_i:e_j"
        return "; ".join(line_text(*line) for line in self.lines)


def line_text(xi, zeta) -> str:
    return ",".join(map(str, xi)) + ":" + ",".join(map(str, zeta))


def all_lines_members(d: int) -> int:
    """dim R_4(Gr(2,d)) * dim R_2(Gr(2,d)): the members of ``--line all``, and an upper
    bound on the dimension of the span of the resultant quartics of all lines."""
    return coordinate_ring_dimension(d, 4) * coordinate_ring_dimension(d, 2)


def parse_lines(text: str | None, d: int) -> LineSet:
    """The ``--line`` value (module doc) as a :class:`LineSet`; BadInput when malformed."""
    if text is None:
        return LineSet("one", (res.parse_line(None, d),))
    word = text.strip()
    if word == ALL:
        if d >= 2 and all_lines_members(d) > MAX_MEMBERS:
            raise BadInput(f"--line all needs {all_lines_members(d):,} members for d = {d} "
                           f"(limit {MAX_MEMBERS:,}); use --line random:K")
        return LineSet(ALL, interpolation_lines(d, 4) if d >= 2 else ())
    if word == EXAMPLE41:
        return LineSet("one", (res.example_41_line(d),))
    if word == COORDINATE:
        return LineSet(COORDINATE, tuple((res.unit_vector(i, d), res.unit_vector(j, d))
                                         for i, j in combinations(range(d), 2)))
    if word.startswith(RANDOM + ":"):
        return random_lines(word, d)
    parts = text.split(";")
    if any(not part.strip() for part in parts):
        raise BadInput(f"--line: an empty line in the list {text!r} (lines are separated by ';')")
    lines = tuple(res.parse_line(part.strip(), d) for part in parts)
    check_count(len(lines), d)
    return LineSet("one" if len(lines) == 1 else "list", lines)


def random_lines(word: str, d: int) -> LineSet:
    """``random:K`` or ``random:K:SEED``: K lines with entries uniform in [-99, 99], each
    redrawn until its two vectors are independent."""
    fields = word.split(":")[1:]
    try:
        count, seed = int(fields[0]), int(fields[1]) if len(fields) > 1 else 0
    except (ValueError, IndexError):
        raise BadInput(f"--line random:K[:SEED] needs integers; got {word!r}") from None
    if len(fields) > 2:
        raise BadInput(f"--line random:K[:SEED] takes at most two numbers; got {word!r}")
    if count < 1:
        raise BadInput(f"--line random:K needs K >= 1; got {count}")
    check_count(count, d)
    if d < 2:
        return LineSet(RANDOM, (), seed)
    sampler = Sampler(seed).spawn(LINE_STREAM)
    lines = []
    while len(lines) < count:
        xi, zeta = (tuple(int(x) for x in v)
                    for v in sampler.integers((2, d), -RANDOM_ENTRY, RANDOM_ENTRY))
        if independent(xi, zeta):
            lines.append((xi, zeta))
    return LineSet(RANDOM, tuple(lines), seed)


def check_count(lines: int, d: int) -> None:
    members = lines * coordinate_ring_dimension(d, 2) if d >= 2 else 0
    if lines > MAX_LINES or members > MAX_MEMBERS:
        raise BadInput(f"--line: {lines:,} lines ({members:,} members) is too many "
                       f"(limits {MAX_LINES:,} lines, {MAX_MEMBERS:,} members)")


def lines_violation(lines: LineSet, d: int) -> str | None:
    """ADM Thm 40's hypothesis for every line: vectors of length d, linearly independent."""
    for k, (xi, zeta) in enumerate(lines.lines):
        violation = res.line_violation(xi, zeta, d)
        if violation:
            return violation if len(lines.lines) == 1 else f"line {k + 1}: {violation}"
    return None


class LineUnion(StructuredFamily):
    """The resultant quartics of several lines: each line's :class:`ResultantQuartics` at the
    interpolation pairs (u, w), one line after another."""

    name = "resultant quartics over several lines (ADM Thm 40, Example 42)"

    def __init__(self, coords: CoordinateSystem, context: int, lines: LineSet):
        self.coords, self.context, self.lineset = coords, context, lines
        self.parts = [res.ResultantQuartics(coords, context, xi, zeta, kind=lines.generic_kind)
                      for xi, zeta in lines.lines]
        self.numbers = list(range(len(self.parts)))
        self._offsets()

    def _offsets(self):
        self.offsets = np.cumsum([0] + [p.size for p in self.parts]).tolist()

    def _locate(self, index: int) -> tuple[int, int]:
        part = int(np.searchsorted(self.offsets, index, side="right")) - 1
        return part, index - self.offsets[part]

    @property
    def size(self):
        return self.offsets[-1]

    @property
    def degree(self):
        return 4

    def variables(self):
        return sorted({c for p in self.parts for c in p.variables()})

    def chunks(self, point, arith):
        for offset, part in zip(self.offsets, self.parts):
            for start, values in part.chunks(point, arith):
                yield offset + start, values

    def describe(self, index):
        part, local = self._locate(index)
        member = self.parts[part]
        out = member.describe(local)
        number = self.numbers[part] + 1
        out["line"] = {"number": number, "xi": list(member.xi), "zeta": list(member.zeta)}
        out["name"] = f"L_{number} = {line_text(member.xi, member.zeta)}: {out['name']}"
        return out

    def restrict(self, index):
        part, local = self._locate(index)
        single = LineUnion.__new__(LineUnion)
        single.coords, single.context, single.lineset = self.coords, self.context, self.lineset
        single.parts, single.numbers = [self.parts[part].restrict(local)], [self.numbers[part]]
        single._offsets()
        return single

    def printable_terms(self, index):
        """The terms of member ``index`` expanded: counted by :func:`expand_mod_p` (exact
        unless a coefficient is divisible by p = 2^31 - 1), which is cheap, where the
        per-line bound (terms of the generic polynomial x terms of a form ^ 4) is ~10x high."""
        if not hasattr(self, "_terms"):
            member, _, _ = expand_mod_p(self, DEFAULT_PRIME)
            self._terms = np.bincount(member, minlength=self.size)
        return int(self._terms[index])


def expand_mod_p(family, prime: int, combine: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every member of a resultant family expanded over F_p without SymPy: (member, rows,
    coefficients) with one entry per term, rows the sorted coordinate indices of the
    quartic monomial (shape=[T, 4]), coefficients nonzero residues.

    Each member is a generic polynomial in (A, B, C) composed with the linear forms of its
    line (:class:`~attngeom.lightning_alg.invariants.resultant.ResultantQuartics`): every generic
    monomial of every line becomes the product of its four forms
    (:class:`~attngeom.kernels.monomials.LinearSubstitution`, vectorized over all of them), expanded
    once and then copied, with its coefficient, into each member that has it; the terms of
    equal (member, monomial) are summed unless ``combine`` is False (then they may repeat).
    Equal to the SymPy expansion mod p (tested).
    """
    parts = getattr(family, "parts", [family])
    forms, products, offsets = [], [], []
    for part in parts:
        compiled = part.compiled
        if np.any(compiled.monomials >= compiled.n_variables):
            raise ValueError("a generic resultant is not a quartic in (A, B, C)")
        products.append(compiled.monomials + len(forms))
        for index, weight in zip(part.form_index, part.form_coeff):
            keep = weight != 0
            forms.append(list(zip(index[keep].tolist(), (weight[keep] % prime).tolist())))
        offsets.append(sum(p.size for p in parts[:len(offsets)]))
    if not products:
        empty = np.zeros(0, np.int64)
        return empty, np.zeros((0, family.degree), np.int64), empty
    # each (line, generic monomial) once: product p = line * M + m
    n_generic = parts[0].compiled.n_monomials
    product, rows, value = LinearSubstitution.of(forms, prime).apply(
        np.arange(len(parts) * n_generic, dtype=np.int64), np.concatenate(products),
        np.ones(len(parts) * n_generic, dtype=np.int64), prime)
    line, generic = np.divmod(product, n_generic)
    # then into the members: generic monomial m has coefficient c in generic member j
    entries = _generic_entries(parts[0].compiled, prime)
    starts, targets, coefficients = entries
    copies = np.diff(starts)[generic]
    term = np.repeat(np.arange(len(product)), copies)
    slot = np.repeat(starts[generic] - (np.cumsum(copies) - copies), copies) + np.arange(len(term))
    member = np.asarray(offsets, dtype=np.int64)[line[term]] + targets[slot]
    out = (member, rows[term], value[term] * coefficients[slot] % prime)
    return sum_terms_mod_p(*out, prime) if combine else out


def _generic_entries(compiled, prime: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The coefficient matrix of the generic members by monomial, as CSR: monomial m has
    coefficient ``coefficients[i]`` in generic member ``targets[i]``, i in starts[m] ..
    starts[m+1] - 1."""
    entries = sorted(compiled.entries, key=lambda e: (e[0], e[1]))
    counts = np.bincount([m for m, _, _ in entries], minlength=compiled.n_monomials)
    return (np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            np.array([j for _, j, _ in entries], dtype=np.int64),
            np.array([residue(c, prime) for _, _, c in entries], dtype=np.int64))

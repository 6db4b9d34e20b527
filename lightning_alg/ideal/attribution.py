"""Which invariant families explain the vanishing ideal: the attribution table of
``attngeom ideal``.

For every registered claim with ``members`` (each :class:`~lightning_alg.claims.base.FamilyClaim`
and a few structured claims), at its defaults and at each of its ``attribution_variants``,
whose hypotheses hold at (d, t, a, d', j), its members of degree k (``members``, or
``sparse_members`` over F_p: :class:`SparseMembers`) are reduced into the
coordinates of :mod:`lightning_alg.ideal`: each coordinate is replaced by its expression in
the pivots modulo J_1, and the result is split into multidegree blocks.  Block by block,
while J'_k is interpolated, each member component is

* tested for membership in J'_k (a component outside the block's kernel puts the member
  outside J, reported as ``outside_J`` and left out of the spans);
* written in the block's kernel basis (its entries at the free monomials), giving
  ``span`` = dim of the family's span inside J_k modulo the linear part (for k = 1, inside
  J_1 itself);
* reduced modulo (J'_{<k})_k, the part generated in lower degrees, giving
  ``new_generators`` = how many minimal generators of degree k the family accounts for.

Ranks are exact over F_p when every member lies in one block (multihomogeneous members,
the usual case: the sum of the block ranks).  Otherwise the member vectors, spread over
several blocks, are multiplied by a seeded random matrix with ``s`` columns, which keeps
their rank with probability >= 1 - rank/p (Schwartz-Zippel on an r x r minor); a rank equal
to ``s`` below the number of members is reported as a lower bound (``saturated``).

A family with more than :data:`MAX_MEMBERS` members in one degree is represented by a
seeded uniform sample of that many (``sampled``: its span is then a lower bound).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from flint import nmod_mat

from kernels.errors import BadInput
from kernels.monomials import sum_terms_mod_p
from kernels.polyeval import compile_polynomials
from kernels.primefield import matmul_mod_p, residue, to_nmod_mat
from kernels.sampling import DEFAULT_PRIME, Sampler
from lightning_alg.coordinates import CoordinateSystem
from lightning_alg.ideal.interpolation import MonomialBlocks, free_columns, rank_of_rows

#: Members per family and degree that are reduced; a larger family is sampled (seeded).
MAX_MEMBERS = 3000
#: Columns of the random projection used for members spread over several blocks.
PROJECTION_WIDTH = 4096
#: Terms a family may expand into when its coordinates are replaced by pivots.
MAX_EXPANSION_TERMS = 5_000_000

COMMON_PARAMS = ("d", "t", "a", "dprime", "col")


@dataclass
class SparseMembers:
    """Members of one degree given term by term over F_p instead of as SymPy polynomials
    (a claim's ``sparse_members(params, coords, prime)``, for families too large to expand
    in SymPy): ``member[t]``, ``monomials[t]`` (sorted coordinate indices) and ``coeff[t]``
    of every term t.

    ``split_by_block``: the family's span is stable under the grading torus
    (y_(k1,k2,k3) -> lambda_k1 lambda_k2 lambda_k3 y), so it equals the span of the
    multihomogeneous components of its members, and each component is attributed as a
    member of its own (exact blockwise ranks instead of a random projection).
    """

    degree: int
    count: int
    member: np.ndarray
    monomials: np.ndarray
    coeff: np.ndarray
    split_by_block: bool = False

    def __len__(self) -> int:
        return self.count

    def select(self, keep: np.ndarray) -> "SparseMembers":
        """Members ``keep`` (sorted ids), renumbered 0, 1, ..."""
        mask = np.isin(self.member, keep)
        return SparseMembers(self.degree, len(keep), np.searchsorted(keep, self.member[mask]),
                             self.monomials[mask], self.coeff[mask], self.split_by_block)


@dataclass
class FamilySource:
    """One family claim's members by degree (after the cap), or why it was skipped."""

    id: str
    source: str
    members: dict = field(default_factory=dict)   # degree -> list of SymPy polynomials
    totals: dict = field(default_factory=dict)    # degree -> members before sampling
    skipped: str | None = None
    seconds: float = 0.0


def attribution_variants(claim) -> list[tuple[str, dict]]:
    """(row id, parameter overrides) of the rows a claim gets in the table: the claim at its
    defaults, plus each entry of its ``attribution_variants`` (e.g. ``resultant`` over every
    line, ``--line all``), named by the options that select it."""
    out = []
    for overrides in getattr(claim, "attribution_variants", ({},)):
        suffix = "".join(f" --{name.replace('_', '-')} {value}" for name, value in overrides.items())
        out.append((claim.id + suffix, dict(overrides)))
    return out


def collect_families(claims, values: dict, coords: CoordinateSystem, max_degree: int,
                     sampler: Sampler, prime: int = DEFAULT_PRIME) -> list[FamilySource]:
    """Members of degree <= max_degree of each claim (and each of its attribution variants)
    whose hypotheses hold at ``values``: ``sparse_members`` (over F_p) where the claim has
    it, else ``members``."""
    out = []
    for claim, (row_id, overrides) in ((c, v) for c in claims for v in attribution_variants(c)):
        entry = FamilySource(row_id, claim.source)
        out.append(entry)
        start = time.perf_counter()
        takes = {p.name for p in claim.params}
        try:
            params = claim.resolve({**{k: v for k, v in values.items() if k in takes}, **overrides})
        except BadInput as error:
            entry.skipped = f"parameters: {error}"
            continue
        violation = claim.hypothesis_violation(params)
        if violation:
            entry.skipped = f"not-applicable: {violation}"
            continue
        lowest = getattr(claim, "lowest_member_degree", None)
        if lowest is not None and lowest(params) > max_degree:   # all members above the table
            continue
        try:
            sparse = getattr(claim, "sparse_members", None)
            if sparse is not None:
                _collect_sparse(entry, sparse(params, coords, prime), max_degree, sampler)
                entry.seconds = round(time.perf_counter() - start, 4)
                continue
            members = claim.members(params, coords)
        except NotImplementedError:
            entry.skipped = "the claim lists no members"
            continue
        except Exception as error:  # a broken family must not hide the ideal's table
            entry.skipped = f"members failed: {type(error).__name__}: {error}"
            continue
        polys = [getattr(m, "poly", m) for m in members]
        degrees = compile_polynomials(polys, coords.symbol_index).degrees if polys else ()
        for k in range(1, max_degree + 1):
            chosen = [p for p, deg in zip(polys, degrees) if deg == k]
            entry.totals[k] = len(chosen)
            if len(chosen) > MAX_MEMBERS:
                keep = np.sort(sampler.floats(len(chosen)).argsort()[:MAX_MEMBERS])
                chosen = [chosen[i] for i in keep]
            if chosen:
                entry.members[k] = chosen
        entry.seconds = round(time.perf_counter() - start, 4)
    return out


def _collect_sparse(entry: FamilySource, members: SparseMembers, max_degree: int,
                    sampler: Sampler) -> None:
    """Store sparse members (one degree) with the same cap and sampling as SymPy ones."""
    if members.degree > max_degree:
        return
    entry.totals[members.degree] = members.count
    if members.count > MAX_MEMBERS:
        members = members.select(np.sort(sampler.floats(members.count).argsort()[:MAX_MEMBERS]))
    if members.count:
        entry.members[members.degree] = members


def _substituted(rows: np.ndarray, n: int, substitution: list, prime: int) -> list[dict]:
    """Each monomial (row of coordinate indices; entries >= n pad) with every coordinate
    replaced by its expression in the variables: a dict variable tuple -> coefficient."""
    out, size = [], 0
    for row in rows:
        terms = {(): 1}
        for c in row[row < n]:
            step: dict = {}
            for key, coeff in terms.items():
                for var, weight in substitution[int(c)]:
                    new = tuple(sorted(key + (var,)))
                    step[new] = (step.get(new, 0) + coeff * weight) % prime
            terms = step
        out.append(terms)
        size += len(terms)
        if size > MAX_EXPANSION_TERMS:
            raise BadInput(f"the members expand into more than {MAX_EXPANSION_TERMS:,} terms")
    return out


def _reduce_sparse(members: SparseMembers, coords: CoordinateSystem, substitution: list,
                   blocks: MonomialBlocks, prime: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """:func:`reduce_members` for members given term by term (vectorized over the terms)."""
    unique, inverse = np.unique(members.monomials, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    expansions = _substituted(unique, len(coords), substitution, prime)
    counts = np.array([len(e) for e in expansions], dtype=np.int64)
    if not counts.sum():
        return {}
    keys = np.array([key for e in expansions for key in e], dtype=np.int64)
    weights = np.array([w for e in expansions for w in e.values()], dtype=np.int64)
    starts = np.cumsum(counts) - counts
    repeat = counts[inverse]
    term = np.repeat(np.arange(len(inverse)), repeat)
    position = np.repeat(starts[inverse] - np.cumsum(repeat) + repeat, repeat) + np.arange(repeat.sum())
    ids, rows, values = sum_terms_mod_p(members.member[term], keys[position],
                                        members.coeff[term] * weights[position] % prime, prime)
    return _by_block(ids, rows, values, blocks)


def reduce_members(polys, coords: CoordinateSystem, substitution: list, blocks: MonomialBlocks,
                   prime: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The members as vectors over the blocks' monomials: block -> (member ids, rows).

    ``substitution[c]`` lists (variable, coefficient mod p) with y_c = sum of the variables
    modulo J_1; each monomial of a member is expanded into the variables.  ``polys`` is a
    list of SymPy polynomials or a :class:`SparseMembers`.
    """
    if isinstance(polys, SparseMembers):
        return _reduce_sparse(polys, coords, substitution, blocks, prime)
    compiled = compile_polynomials(polys, coords.symbol_index)
    expansions = dict(enumerate(_substituted(compiled.monomials, compiled.n_variables,
                                             substitution, prime)))
    accumulated: list[dict] = [{} for _ in range(compiled.n_polynomials)]
    for m, j, c in compiled.entries:
        weight = residue(c, prime)
        target = accumulated[j]
        for key, coeff in expansions[m].items():
            target[key] = (target.get(key, 0) + weight * coeff) % prime
    ids, keys, values = [], [], []
    for j, terms in enumerate(accumulated):
        for key, coeff in terms.items():
            if coeff:
                ids.append(j)
                keys.append(key)
                values.append(coeff)
    if not keys:
        return {}
    return _by_block(np.array(ids), np.array(keys, dtype=np.int64),
                     np.array(values, dtype=np.int64), blocks)


def _by_block(ids: np.ndarray, keys: np.ndarray, values: np.ndarray,
              blocks: MonomialBlocks) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Terms (member, monomial row, value) -> block -> (member ids, matrix over its monomials)."""
    if not len(keys):
        return {}
    block_of, column = blocks.locate(keys)
    out = {}
    for b in np.unique(block_of):
        here = block_of == b
        members, rows = np.unique(ids[here], return_inverse=True)
        matrix = np.zeros((len(members), blocks.size(int(b))), dtype=np.int64)
        matrix[rows, column[here]] = values[here]
        out[int(b)] = (members, matrix)
    return out


def _split_by_block(reduced: dict) -> tuple[dict, int]:
    """Every (member, block) component as a member of its own (``SparseMembers.split_by_block``)."""
    out, count = {}, 0
    for b, (members, matrix) in reduced.items():
        out[b] = (np.arange(count, count + len(members)), matrix)
        count += len(members)
    return out, count


class SpanAccumulator:
    """The rank of row vectors given block by block (see the module doc: exact blockwise
    sum for rows that live in one block, a seeded projection otherwise)."""

    def __init__(self, n_rows: int, homogeneous: bool, prime: int, sampler: Sampler):
        self.homogeneous, self.prime, self.sampler = homogeneous, prime, sampler
        self.width = min(n_rows, PROJECTION_WIDTH)
        self.total = 0
        self.projected = None if homogeneous else np.zeros((n_rows, self.width), dtype=np.int64)

    def add(self, block: int, rows: np.ndarray, matrix: np.ndarray) -> None:
        if not len(rows) or not matrix.shape[1]:
            return
        if self.homogeneous:
            self.total += rank_of_rows(matrix, self.prime)
            return
        random = self.sampler.prime_field((matrix.shape[1], self.width), self.prime)
        part = matmul_mod_p(matrix, random, self.prime)
        np.add.at(self.projected, rows, part)
        self.projected %= self.prime

    def rank(self, excluded: set) -> tuple[int, bool]:
        """(rank, saturated) with the rows of ``excluded`` dropped."""
        if self.homogeneous:
            return self.total, False
        keep = [i for i in range(len(self.projected)) if i not in excluded]
        rank = rank_of_rows(self.projected[keep], self.prime)
        return rank, rank == self.width < len(keep)


def nmod_rows(matrix: nmod_mat, count: int) -> np.ndarray:
    """The first ``count`` rows of an nmod_mat as int64."""
    return np.array([[int(matrix[i, j]) for j in range(matrix.ncols())] for i in range(count)],
                    dtype=np.int64).reshape(count, matrix.ncols())


class FamilyAttribution:
    """Observer of :meth:`lightning_alg.ideal.AttentionIdeal.degree_table`: accumulates
    each family's span and new generators block by block (module doc)."""

    def __init__(self, sources: list[FamilySource], coords: CoordinateSystem, prime: int,
                 sampler: Sampler):
        self.sources = [s for s in sources if s.skipped is None]
        self.skipped = [{"id": s.id, "source": s.source, "reason": s.skipped}
                        for s in sources if s.skipped is not None]
        self.coords, self.prime, self.sampler = coords, prime, sampler
        self.state: dict = {}

    def prepare(self, k: int, blocks: MonomialBlocks, substitution: list) -> None:
        """Reduce every family's degree-k members into the blocks of degree k."""
        families = []
        for source in self.sources:
            polys = source.members.get(k, [])
            start = time.perf_counter()
            try:
                reduced = reduce_members(polys, self.coords, substitution, blocks, self.prime) \
                    if polys else {}
            except BadInput as error:
                self.skipped.append({"id": source.id, "source": source.source,
                                     "reason": f"degree {k}: {error}"})
                continue
            n = len(polys)
            if getattr(polys, "split_by_block", False):
                reduced, n = _split_by_block(reduced)
            touched = np.zeros(n, dtype=np.int64)
            for members, _ in reduced.values():
                touched[members] += 1
            families.append({"source": source, "reduced": reduced, "n": n, "used": len(polys),
                             "homogeneous": bool(np.all(touched <= 1)), "outside": set(),
                             "seconds": time.perf_counter() - start})
        offsets = np.cumsum([0] + [f["n"] for f in families])
        homogeneous = all(f["homogeneous"] for f in families)
        for i, family in enumerate(families):
            family["offset"] = int(offsets[i])
            family["span"] = SpanAccumulator(family["n"], family["homogeneous"], self.prime,
                                             self.sampler)
            family["new"] = SpanAccumulator(family["n"], family["homogeneous"], self.prime,
                                            self.sampler)
        self.state[k] = {"families": families, "homogeneous": homogeneous,
                         "span": SpanAccumulator(int(offsets[-1]), homogeneous, self.prime,
                                                 self.sampler),
                         "new": SpanAccumulator(int(offsets[-1]), homogeneous, self.prime,
                                                self.sampler)}

    def __call__(self, k: int, b: int, blocks: MonomialBlocks, vectors: np.ndarray,
                 generated: np.ndarray | None) -> None:
        state = self.state[k]
        parts = [(f, *f["reduced"][b]) for f in state["families"] if b in f["reduced"]]
        if not parts:
            return
        p = self.prime
        free = free_columns(vectors)
        reducer = _generated_reducer(generated, free, p)
        union = {"span": [], "new": []}
        for family, members, matrix in parts:
            coordinates = matrix[:, free]
            residual = (matrix - matmul_mod_p(coordinates, vectors, p)) % p if len(free) else matrix
            inside = ~residual.any(axis=1)
            family["outside"].update(int(m) for m in members[~inside])
            rows = members if not family["homogeneous"] else members[inside]
            coordinates = coordinates if not family["homogeneous"] else coordinates[inside]
            new = reducer(coordinates)
            family["span"].add(b, rows, coordinates)
            family["new"].add(b, rows, new)
            union["span"].append((rows + family["offset"], coordinates))
            union["new"].append((rows + family["offset"], new))
        for name, pieces in union.items():
            state[name].add(b, np.concatenate([r for r, _ in pieces]),
                            np.concatenate([m for _, m in pieces]))

    def finish(self, k: int, dimension: int, minimal: int) -> dict:
        """The degree-k table: each family's span and new generators, all together, and
        what remains unexplained."""
        state = self.state.pop(k)
        rows = []
        outside_all = set()
        for family in state["families"]:
            source = family["source"]
            span, span_saturated = family["span"].rank(family["outside"])
            new, new_saturated = family["new"].rank(family["outside"])
            outside_all.update(m + family["offset"] for m in family["outside"])
            rows.append({"id": source.id, "source": source.source,
                         "members": source.totals.get(k, 0), "used": family["used"],
                         "sampled": source.totals.get(k, 0) > family["used"],
                         "outside_J": len(family["outside"]), "span": span,
                         "new_generators": new,
                         "lower_bound": span_saturated or new_saturated
                         or source.totals.get(k, 0) > family["used"],
                         "multihomogeneous": family["homogeneous"],
                         "seconds": round(source.seconds + family["seconds"], 4)})
        span, _ = state["span"].rank(outside_all)
        new, _ = state["new"].rank(outside_all)
        return {"degree": k, "dim_J_mod_linear": dimension, "minimal_generators": minimal,
                "families": [r for r in rows if r["members"]],
                "all_families": {"span": span, "new_generators": new},
                "unexplained": {"span": dimension - span, "minimal_generators": minimal - new}}


def _generated_reducer(generated: np.ndarray | None, free: np.ndarray, prime: int):
    """u -> its normal form modulo (J'_{<k})_k, in kernel coordinates (free monomials).

    The products lie in J'_k, so their kernel coordinates are their free entries; the
    normal form subtracts the reduced row echelon basis at its pivot columns.
    """
    if generated is None or not len(free):
        return lambda u: u
    echelon, rank = to_nmod_mat(generated[:, free], prime).rref()
    if rank == 0:
        return lambda u: u
    basis = nmod_rows(echelon, rank)
    pivots = np.argmax(basis != 0, axis=1)
    return lambda u: (u - matmul_mod_p(u[:, pivots], basis, prime)) % prime if len(u) else u

"""Which invariant families explain the vanishing ideal: the attribution table of
``attngeom ideal``.

For every registered claim with members (each :class:`~attngeom.lightning_alg.claims.base.FamilyClaim`
and a few structured claims), at its defaults and at each of its ``attribution_variants``
(or at the parameters given with ``--family-param``), whose hypotheses hold at
(d, t, a, d', j), its members of degree k <= K are expanded over F_p (``sparse_members``,
``member_family`` expanded without SymPy, or the SymPy ``members``: :func:`collect_families`)
and reduced into the coordinates of :mod:`attngeom.lightning_alg.ideal`: each coordinate is replaced
by its expression in the pivots modulo J_1 (:class:`~attngeom.kernels.monomials.LinearSubstitution`),
and the result is split into multidegree blocks.  After the degree table is computed
(:class:`~attngeom.lightning_alg.ideal.degree_table.DegreeRecord`), block by block, each member
component is

* tested for membership in J (ADM Def 8): it must vanish at the fresh points of the variety
  at which every kernel was checked (a component outside J passes with probability
  <= (k w / p)^2, Schwartz-Zippel, as in the kernel check); a member with a component
  outside J is reported as ``outside_J`` and left out of the spans;
* written in the block's kernel basis: its entries at the free monomials, giving ``span`` =
  dim of the family's span inside J_k modulo the linear part (for k = 1, inside J_1 itself);
* mapped through the quotient by (J'_{<k})_k, the part generated in lower degrees
  (:class:`~attngeom.lightning_alg.ideal.degree_table.BlockSolution`), giving ``new_generators`` =
  how many minimal generators of degree k the family accounts for.

Blocks that the degree table did not compute (images of a computed block under a permutation
of [d], the variety being GL_d-stable) are attributed in the coordinates of their computed
block: the permutation of the variables maps the component there, and maps J'_k and
(J'_{<k})_k of the one block onto those of the other.

Ranks are exact over F_p when every member lies in one block (multihomogeneous members, the
usual case: the sum of the block ranks, by elimination, :func:`echelon_rows`).  Otherwise
the member vectors, spread over several blocks, are multiplied by a seeded random matrix
with ``s`` columns, which keeps their rank with probability >= 1 - rank/p (Schwartz-Zippel
on an r x r minor); a rank equal to ``s`` below the number of members is reported as a
lower bound (``saturated``).

A family with more than :data:`MAX_MEMBERS` members in one degree is reduced whole when
the budget covers all of them, and otherwise represented by a seeded uniform sample of that
many (``sampled``: its span is then a lower bound); with no limit on the budget
(``--attribution-budget none``) every member is reduced.  (Until 2026-11-27 a limited
budget always sampled: at (5,1,1) 3,000 of the 6,825 cone-flattening quartics spanned
2,873 where all of them span 4,550, although the whole attribution with all of them needs
4,740,681 of the 5,000,000 units the default budget gives it.)  The sample is drawn when the
members are collected, so it is the same sample whichever way the budget decides.

Budget (:class:`AttributionBudget`).  The attribution may spend :data:`DEFAULT_BUDGET` times
the ideal's own work (:attr:`~attngeom.lightning_alg.ideal.degree_table.AttentionIdeal.work`: the
entries of the matrices whose kernels and ranks it computed; counted as at least
:data:`MIN_IDEAL_WORK`, below which it understates the ideal's cost), in the same unit:
the terms a family expands into, the terms of its reduction modulo J_1, and the entries of
its blockwise coordinate matrices (:data:`COORDINATE_ENTRIES_PER_UNIT` to a unit).  Each
count is known before the work it measures (the expansion's once it is done); a family that
would exceed what is left is skipped, at that degree, with the reason -- never silently.
The counts are deterministic, so a run skips the same families on every machine;
``--attribution-budget`` scales the budget (``none``: no limit).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from attngeom.core.errors import BadInput
from attngeom.kernels.monomials import LinearSubstitution, sum_terms_mod_p
from attngeom.kernels.polyeval import compile_polynomials
from attngeom.kernels.primefield import matmul_mod_p, power_mod, residue, to_nmod_mat
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.ideal.degree_table import (
    STREAM_MEMBERS, STREAM_PROJECTIONS, BlockSolution, DegreeRecord)
from attngeom.lightning_alg.ideal.interpolation import rank_of_rows

#: Members per family and degree that are reduced; a larger family is sampled (seeded).
MAX_MEMBERS = 3000
#: Columns of the random projection used for members spread over several blocks.
PROJECTION_WIDTH = 4096
#: Terms a family may expand into, in the coordinates or in the pivots, whatever the budget
#: (about 50 bytes each while they are reduced).
MAX_EXPANSION_TERMS = 10_000_000
#: Members whose expansion is estimated (``printable_terms``) before it is done.
MAX_MEMBERS_ESTIMATED = 100_000
#: Entries of the blockwise coordinate matrices that count as one unit of work (they are
#: filled and eliminated by NumPy, about this many times cheaper than a term or an entry
#: of the ideal's evaluation matrices, measured).
COORDINATE_ENTRIES_PER_UNIT = 16
#: The attribution's work as a multiple of the ideal's own work (``--attribution-budget``).
DEFAULT_BUDGET = 1.0
#: The ideal's own work counts as at least this many units in the budget.  Below it the count
#: understates what the ideal costs (it counts matrix entries, not the elimination over
#: them, nor the members' expansion, paid before the charge): at (d, t, a) = (3, 1, 1),
#: (4, 1, 1) and (5, 1, 1) the ideal counted 2,767 / 38,643 / 275,630 units, so Brill's
#: equations (needing 18,379 / 441,649 / 4,740,681 units in all, the unlimited run's
#: count) were skipped after their expansion had been paid, although the whole attribution
#: with them took 0.4 / 6.1 / 85 s against 0.4 / 6.2 / 84 s without (2026-11-26, one core,
#: the expansion in SymPy; over F_p by python-flint since, ``integer_program``: 0.4 / 1.4 /
#: 17 s with them).
MIN_IDEAL_WORK = 5_000_000

#: Claim parameters that the ideal fixes, or that select no members (``row``: the ideal is of
#: output row 1; ``all_outputs``: it is of one coordinate; ``matrix``: a ``show`` switch):
#: they are not family parameters.
COMMON_PARAMS = ("d", "t", "a", "dprime", "col")
FIXED_PARAMS = COMMON_PARAMS + ("row", "all_outputs", "matrix")


def _identity_progress(iterable, label="", length=None):
    return iterable


@dataclass
class SparseMembers:
    """Members of one degree given term by term over F_p instead of as SymPy polynomials
    (a claim's ``sparse_members(params, coords, prime)``, or its ``member_family`` expanded
    by :meth:`~attngeom.lightning_alg.invariants.structured.StructuredFamily.expand_mod_p`):
    ``member[t]``, ``monomials[t]`` (sorted coordinate indices) and ``coeff[t]`` of every
    term t; terms of equal (member, monomial) may repeat (they are added).

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
    """One row of the table (a claim at some parameters): its members by degree (after the
    cap), or why it was skipped."""

    id: str
    source: str
    members: dict = field(default_factory=dict)   # degree -> SparseMembers (all of them)
    totals: dict = field(default_factory=dict)    # degree -> members
    #: degree -> the sorted ids of a seeded sample of MAX_MEMBERS members, drawn for a family
    #: larger than that under a limited budget (reduced when all of them do not fit)
    samples: dict = field(default_factory=dict)
    skipped: str | None = None
    seconds: float = 0.0


# -- which rows, at which parameters --------------------------------------------------------

def attribution_variants(claim) -> list[tuple[str, dict]]:
    """(row id, parameter overrides) of the rows a claim gets in the table: the claim at its
    defaults, plus each entry of its ``attribution_variants`` (e.g. ``resultant`` over every
    line, ``--line all``), named by the options that select it."""
    return [(row_id(claim, overrides), dict(overrides))
            for overrides in getattr(claim, "attribution_variants", ({},))]


def row_id(claim, overrides: dict) -> str:
    """``veronese --r 2``: the claim id and the options of its non-default parameters."""
    return claim.id + "".join(f" --{name.replace('_', '-')} {value}"
                              for name, value in overrides.items())


def parse_family_params(texts, claims, values: dict) -> dict[str, dict]:
    """The ``--family-param ID:NAME=VALUE`` options (repeatable) as claim id -> {name: raw}.

    ID must be one of ``claims`` (the ``--families`` selection) and NAME one of its
    parameters other than :data:`FIXED_PARAMS`; each claim's parameters are validated
    together at ``values`` (d, t, a, d', j), so that a mistake stops the command before the
    ideal is computed.  A claim given parameters gets one row, at those parameters, instead
    of its defaults and variants.
    """
    known = {c.id: c for c in claims}
    out: dict[str, dict] = {}
    for text in texts:
        head, colon, assignment = str(text).partition(":")
        name, equals, value = assignment.partition("=")
        claim_id, name = head.strip(), name.strip().replace("-", "_")
        if not colon or not equals or not claim_id or not name or not value.strip():
            raise BadInput(f"--family-param takes ID:NAME=VALUE (e.g. veronese:r=2); got {text!r}")
        claim = known.get(claim_id)
        if claim is None:
            raise BadInput(f"--family-param {text}: {claim_id!r} is not an attributed family "
                           f"(--families selects {', '.join(sorted(known)) or 'none'})")
        takes = sorted(p.name for p in claim.params if p.name not in FIXED_PARAMS)
        if name not in takes:
            raise BadInput(f"--family-param {text}: {claim_id} has no family parameter {name!r} "
                           f"(it takes {', '.join(takes) or 'none'})")
        if name in out.setdefault(claim_id, {}):
            raise BadInput(f"--family-param {text}: {claim_id}:{name} is given twice")
        out[claim_id][name] = value.strip()
    for claim_id, overrides in out.items():
        try:
            _resolve(known[claim_id], values, overrides)
        except BadInput as error:
            raise BadInput(f"--family-param {claim_id}: {error}") from None
    return out


def _resolve(claim, values: dict, overrides: dict) -> dict:
    takes = {p.name for p in claim.params}
    return claim.resolve({**{k: v for k, v in values.items() if k in takes}, **overrides})


# -- the budget -------------------------------------------------------------------------------

def describe_budget(factor: float) -> str:
    """What a budget factor means, in words (the report and the reasons of skipped families)."""
    return f"{factor:g} x the ideal's own work, counted as at least {MIN_IDEAL_WORK:,} units"


class AttributionBudget:
    """The work the attribution may spend: ``factor`` x the ideal's own work, counted as at
    least :data:`MIN_IDEAL_WORK` units (the units of the module doc); ``factor`` None means
    no limit, 0 no attribution."""

    def __init__(self, ideal_work: int, factor: float | None = DEFAULT_BUDGET):
        if factor is not None and not 0 <= factor < float("inf"):
            raise BadInput(f"--attribution-budget must be a nonnegative number or 'none'; "
                           f"got {factor!r}")
        self.ideal_work, self.factor = int(ideal_work), factor
        self.limit = None if factor is None else int(factor * max(self.ideal_work, MIN_IDEAL_WORK))
        self.used = 0

    @property
    def sample_size(self) -> int | None:
        """Members of a seeded sample that stands for a larger family when all of its members
        do not fit (:data:`MAX_MEMBERS`), or None with no limit on the work (no sample)."""
        return None if self.limit is None else MAX_MEMBERS

    def charge(self, units: int, what: str) -> str | None:
        """Spend ``units`` and return None, or the reason they cannot be spent."""
        if self.limit is not None and self.used + units > self.limit:
            return (f"over the attribution budget: {what} needs {units:,} work units, "
                    f"{max(self.limit - self.used, 0):,} of {self.limit:,} left ({describe_budget(self.factor)}; "
                    f"--attribution-budget raises it)")
        self.used += units
        return None

    def to_json(self) -> dict:
        return {"factor": self.factor, "ideal_work": self.ideal_work, "limit": self.limit,
                "used": self.used}


# -- members ----------------------------------------------------------------------------------

def collect_families(claims, values: dict, coords: CoordinateSystem, max_degree: int,
                     sampler: Sampler, prime: int = DEFAULT_PRIME,
                     family_params: dict | None = None, budget: AttributionBudget | None = None,
                     progress=_identity_progress) -> list[FamilySource]:
    """Members of degree <= max_degree of each claim (at each of its rows) whose hypotheses
    hold at ``values``: ``sparse_members`` (over F_p) where the claim has it, else
    ``member_family`` expanded over F_p, else the SymPy ``members``."""
    family_params = family_params or {}
    budget = budget or AttributionBudget(0, None)
    sample_size = budget.sample_size
    rows = []   # (claim, row id, parameter overrides, given on the command line?)
    for claim in claims:
        if claim.id in family_params:
            overrides = family_params[claim.id]
            rows.append((claim, row_id(claim, overrides), overrides, True))
        else:
            rows.extend((claim, name, overrides, False)
                        for name, overrides in attribution_variants(claim))
    out = []
    for claim, name, overrides, explicit in progress(rows, "attribution: family members",
                                                     len(rows)):
        entry = FamilySource(name, claim.source)
        start = time.perf_counter()
        try:
            params = _resolve(claim, values, overrides)
        except BadInput as error:
            entry.skipped = f"parameters: {error}"
            out.append(entry)
            continue
        violation = claim.hypothesis_violation(params)
        if violation:
            entry.skipped = f"not-applicable: {violation}"
            out.append(entry)
            continue
        lowest = getattr(claim, "lowest_member_degree", None)
        try:
            by_degree = ({} if lowest is not None and lowest(params) > max_degree
                         else _members_by_degree(claim, params, coords, max_degree, prime))
        except NotImplementedError:
            entry.skipped = "the claim lists no members"
        except BadInput as error:        # too large to expand (_check_terms), not homogeneous
            entry.skipped = f"members refused: {error}"
        except Exception as error:  # a broken family must not hide the ideal's table
            entry.skipped = f"members failed: {type(error).__name__}: {error}"
        else:
            terms = sum(len(m.coeff) for m in by_degree.values())
            entry.skipped = budget.charge(terms, f"expanding its members ({terms:,} terms)")
            for k, members in sorted(by_degree.items()) if entry.skipped is None else ():
                entry.totals[k] = members.count
                if sample_size is not None and members.count > sample_size:
                    entry.samples[k] = np.sort(sampler.floats(members.count).argsort()[:sample_size])
                if members.count:
                    entry.members[k] = members
            if explicit and not entry.members and entry.skipped is None:
                entry.skipped = f"no members of degree <= {max_degree} at these parameters"
        entry.seconds = round(time.perf_counter() - start, 4)
        if entry.members or entry.skipped:
            out.append(entry)
    return out


def _members_by_degree(claim, params: dict, coords: CoordinateSystem, max_degree: int,
                       prime: int) -> dict[int, SparseMembers]:
    """A claim's members of degree <= max_degree as :class:`SparseMembers`, by degree."""
    sparse = getattr(claim, "sparse_members", None)
    if sparse is not None:
        bound = getattr(claim, "expansion_bound", None)
        if bound is not None:            # refused before the expansion is paid for
            _check_terms(bound(params, coords), bound=True)
        members = sparse(params, coords, prime)
        return {members.degree: members} if members.degree <= max_degree else {}
    member_family = getattr(claim, "member_family", None)
    if member_family is not None:
        family = member_family(params, coords, max_degree)
        if family is None:
            return {}
        if family.size > MAX_MEMBERS:   # a large family must show it fits before expanding
            _check_terms(sum(family.printable_terms(i) for i in range(family.size))
                         if family.size <= MAX_MEMBERS_ESTIMATED else MAX_EXPANSION_TERMS + 1)
        expanded = family.expand_mod_p(coords, prime)
        return _by_degree(expanded, family.size, max_degree)
    polys = [getattr(m, "poly", m) for m in claim.members(params, coords)]
    if not polys:
        return {}
    compiled = compile_polynomials(polys, coords.symbol_index)
    member = np.array([j for _, j, _ in compiled.entries], dtype=np.int64)
    coeff = np.array([residue(c, prime) for _, _, c in compiled.entries], dtype=np.int64)
    rows = compiled.monomials[[m for m, _, _ in compiled.entries]]
    degree = (rows < compiled.n_variables).sum(axis=1)
    expanded = {}
    for k in np.unique(degree).tolist():
        here = degree == k
        if not set(member[here].tolist()).isdisjoint(member[~here].tolist()):
            raise BadInput("a member is not homogeneous")
        expanded[k] = sum_terms_mod_p(member[here], np.sort(rows[here][:, :k], axis=1),
                                      coeff[here], prime)
    return _by_degree(expanded, len(polys), max_degree)


def _by_degree(expanded: dict, size: int, max_degree: int) -> dict[int, SparseMembers]:
    """Terms by degree -> :class:`SparseMembers`, members renumbered within each degree (a
    family of one degree keeps its numbering and its size, zero members included)."""
    out = {}
    for k, (member, rows, coeff) in expanded.items():
        if k > max_degree:
            continue
        _check_terms(len(coeff))
        if len(expanded) == 1:
            out[k] = SparseMembers(k, size, member, rows, coeff)
        else:
            ids, renumbered = np.unique(member, return_inverse=True)
            out[k] = SparseMembers(k, len(ids), renumbered.ravel(), rows, coeff)
    return out


def _check_terms(terms: int, bound: bool = False) -> None:
    """BadInput (the family is skipped with this reason) when ``terms`` (or, with ``bound``,
    an upper bound on them known before expanding) exceed :data:`MAX_EXPANSION_TERMS`."""
    if terms > MAX_EXPANSION_TERMS:
        raise BadInput(f"the members would expand into up to {terms:,} terms (an upper bound, "
                       f"before expanding; limit {MAX_EXPANSION_TERMS:,})" if bound else
                       f"the members expand into more than {MAX_EXPANSION_TERMS:,} terms")


# -- reduction modulo J_1, by block ------------------------------------------------------------

@dataclass
class BlockTerms:
    """One family's members of one degree, reduced modulo J_1 and split by block, each term
    in the columns of its block's computed representative: ``block`` (the block itself),
    ``component``, ``column``, ``value``, sorted by block and component, and ``member`` (the
    member each term came from).  ``count`` components (the members, or with
    ``split_by_block`` each (member, block) part); ``homogeneous``: no component spreads over
    several blocks."""

    block: np.ndarray
    component: np.ndarray
    column: np.ndarray
    value: np.ndarray
    count: int
    homogeneous: bool
    member: np.ndarray
    split_by_block: bool = False

    def select(self, keep: np.ndarray) -> "BlockTerms":
        """The terms of members ``keep`` (sorted ids), members renumbered 0, 1, ... as
        :meth:`SparseMembers.select` numbers them: the reduction of that selection, without
        reducing again (the order of the terms is kept: the renumberings are monotone)."""
        mask = np.isin(self.member, keep)
        block, column, value = self.block[mask], self.column[mask], self.value[mask]
        member = np.searchsorted(keep, self.member[mask])
        if self.split_by_block:
            ids, component = np.unique(self.component[mask], return_inverse=True)
            count = len(ids)
        else:
            component, count = member, len(keep)
        return BlockTerms(block, component.ravel(), column, value, count,
                          _homogeneous(block, component.ravel(), self.split_by_block), member,
                          self.split_by_block)

    def coordinate_entries(self) -> int:
        """Entries of its blockwise coordinate matrices: components x distinct monomials
        of each block (an upper bound)."""
        if not len(self.block):
            return 0
        count = max(self.count, 1)
        components = np.unique(self.block * count + self.component) // count
        span = int(self.column.max()) + 1
        columns = np.unique(self.block * span + self.column) // span
        n_blocks = int(self.block.max()) + 1
        return int(np.dot(np.bincount(components, minlength=n_blocks),
                          np.bincount(columns, minlength=n_blocks)))

    def ranges(self) -> dict[int, tuple[int, int]]:
        """block -> (first, last + 1) of its terms."""
        starts = np.flatnonzero(np.r_[True, self.block[1:] != self.block[:-1]]) \
            if len(self.block) else np.zeros(0, dtype=np.int64)
        ends = np.append(starts[1:], len(self.block))
        return {int(self.block[a]): (int(a), int(b)) for a, b in zip(starts, ends)}


def reduce_members(members: SparseMembers, substitution: LinearSubstitution,
                   record: DegreeRecord, prime: int) -> BlockTerms:
    """The members as block components (:class:`BlockTerms`): coordinates replaced by
    pivots, terms located in their blocks, the terms of blocks that were not computed
    carried to their representative by the permutation of the variables (which maps the
    block's monomials bijectively onto the representative's), and equal terms added."""
    owner, rows, value = substitution.apply(members.member, members.monomials, members.coeff,
                                            prime, combine=False)
    blocks = record.blocks
    block, column = blocks.locate(rows) if len(rows) else (owner[:0], owner[:0])
    column = record.columns[blocks.starts[block] + column]
    # one sort by (block, member, column) adds equal terms and orders the components
    count, width = max(members.count, 1), int(np.diff(blocks.starts).max())
    if float(len(blocks)) * count * width >= 2.0**62:
        raise BadInput(f"{members.count:,} members in {len(blocks):,} blocks are too many to index")
    key = (block * count + owner) * width + column
    if float(len(blocks)) * count * width * prime < 2.0**63:
        # key and value packed into one int64: a sort instead of an argsort and two gathers
        packed = np.sort(key * prime + value)
        key, value = np.divmod(packed, prime)
    else:
        order = np.argsort(key)
        key, value = key[order], value[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key[:0]
    value = np.add.reduceat(value, first) % prime if len(key) else value
    key = key[first][value != 0]
    value = value[value != 0]
    pair, column = np.divmod(key, width)
    block, owner = np.divmod(pair, count)
    if members.split_by_block:
        new_pair = np.r_[True, pair[1:] != pair[:-1]] if len(pair) else pair[:0].astype(bool)
        component, count = np.cumsum(new_pair) - 1, int(new_pair.sum())
    else:
        component, count = owner, members.count
    return BlockTerms(block, component, column, value, count,
                      _homogeneous(block, component, members.split_by_block), owner,
                      members.split_by_block)


def _homogeneous(block: np.ndarray, component: np.ndarray, split_by_block: bool) -> bool:
    """No component spreads over several blocks (terms sorted by block and component): true
    of (member, block) parts, and of members when each appears in one run of one block."""
    if split_by_block:
        return True
    new_pair = np.r_[True, (block[1:] != block[:-1]) | (component[1:] != component[:-1])] \
        if len(block) else block[:0].astype(bool)
    parts = component[new_pair]
    return len(np.unique(parts)) == len(parts)


# -- ranks --------------------------------------------------------------------------------------

#: Pivots eliminated with NumPy before the rest of a matrix goes to FLINT: NumPy costs one
#: pass over the remaining rows per pivot, FLINT a conversion of every entry (~0.3 us).
NUMPY_PIVOTS = 48


def echelon_rows(matrix: np.ndarray, prime: int) -> np.ndarray:
    """Independent rows spanning the row space of ``matrix`` over F_p (exact).  The first
    :data:`NUMPY_PIVOTS` pivots are eliminated in NumPy, dropping the rows that become zero
    (the blockwise coordinate matrices are tall and of small rank), the rest by FLINT."""
    width = matrix.shape[1]
    rest = np.remainder(matrix, prime)
    rest = rest[rest.any(axis=1)]
    if len(rest) > NUMPY_PIVOTS:
        # rows equal up to a scalar are common (components of one family): scaled to a
        # leading 1, the repeated ones go before any elimination
        lead = rest[np.arange(len(rest)), np.argmax(rest != 0, axis=1)]
        rest = rest * power_mod(lead, prime - 2, prime)[:, None] % prime
        distinct = {row.tobytes(): i for i, row in enumerate(rest)}
        rest = rest[sorted(distinct.values())]
    basis = []
    while len(rest) and len(basis) < NUMPY_PIVOTS:
        row = rest[0]
        c = int(np.flatnonzero(row)[0])
        row = row * pow(int(row[c]), prime - 2, prime) % prime
        basis.append(row)
        rest = (rest[1:] - rest[1:, c:c + 1] * row % prime) % prime
        rest = rest[rest.any(axis=1)]
    if len(rest):
        reduced, rank = to_nmod_mat(rest, prime).rref()
        basis.extend(nmod_rows(reduced, rank))
    return np.array(basis, dtype=np.int64).reshape(len(basis), width)


def nmod_rows(matrix, count: int) -> np.ndarray:
    """The first ``count`` rows of an nmod_mat as int64."""
    return np.array([[int(matrix[i, j]) for j in range(matrix.ncols())] for i in range(count)],
                    dtype=np.int64).reshape(count, matrix.ncols())


def modulo_generated(matrix: np.ndarray, used: np.ndarray, solution: BlockSolution,
                     prime: int) -> np.ndarray:
    """Coordinates u (at the coordinates ``used``) -> u quotient: the images modulo
    (J'_{<k})_k."""
    if solution.quotient is None:
        return matrix
    return matmul_mod_p(matrix, solution.quotient[used], prime)


class SpanAccumulator:
    """The rank of row vectors given block by block (module doc): the sum of the blockwise
    ranks for rows that live in one block (``add_basis``), a seeded projection otherwise."""

    def __init__(self, n_rows: int, homogeneous: bool, prime: int, sampler: Sampler):
        self.homogeneous, self.prime, self.sampler = homogeneous, prime, sampler
        self.width = min(n_rows, PROJECTION_WIDTH)
        self.total = 0
        self.projected = None if homogeneous else np.zeros((n_rows, self.width), dtype=np.int64)

    def add_basis(self, basis: np.ndarray) -> None:
        """Independent rows of one block (:func:`echelon_rows`)."""
        self.total += len(basis)

    def add(self, rows: np.ndarray, matrix: np.ndarray) -> None:
        """Rows ``rows`` of one block's part of the vectors (projection)."""
        if not len(rows) or not matrix.shape[1]:
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


@dataclass
class _Family:
    """A family's state during one degree."""

    source: FamilySource
    terms: BlockTerms
    used: int
    offset: int
    span: SpanAccumulator
    new: SpanAccumulator
    ranges: dict
    outside: set = field(default_factory=set)
    seconds: float = 0.0


def attribute_block(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                    solution: BlockSolution, prime: int) -> tuple[np.ndarray, list[tuple]]:
    """One block for several families, in the monomials of its computed representative:
    each part (component, column, value term arrays, sorted by component) gives
    (components, inside J?, kernel coordinates), one row per component (module doc).  Only
    the kernel coordinates that some part uses, ``used``, are kept (the same ranks); returns
    (used, parts).  A top-level function of arrays (the unit of work over blocks)."""
    position = np.full(solution.fresh.shape[1], -1, dtype=np.int64)
    position[solution.free] = np.arange(len(solution.free))
    coordinates_of = [position[column] for _, column, _ in parts]
    used = np.unique(np.concatenate(coordinates_of))
    used = used[used >= 0]
    index = np.full(len(solution.free), -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    out = []
    for (component, column, value), coordinate in zip(parts, coordinates_of):
        rows, first, local = np.unique(component, return_index=True, return_inverse=True)
        at_fresh = value[:, None] * solution.fresh.T[column] % prime
        inside = ~(np.add.reduceat(at_fresh, first, axis=0) % prime).any(axis=1)
        kept = coordinate >= 0
        coordinates = np.zeros((len(rows), len(used)), dtype=np.int64)
        coordinates[local.ravel()[kept], index[coordinate[kept]]] = value[kept]
        out.append((rows, inside, coordinates))
    return used, out


class FamilyAttribution:
    """The attribution of the sources, degree after degree, from the
    :class:`~attngeom.lightning_alg.ideal.degree_table.DegreeRecord` of each degree (module doc)."""

    def __init__(self, sources: list[FamilySource], prime: int, sampler: Sampler,
                 budget: AttributionBudget | None = None, progress=_identity_progress):
        self.sources = [s for s in sources if s.skipped is None]
        self.skipped = [{"id": s.id, "source": s.source, "reason": s.skipped}
                        for s in sources if s.skipped is not None]
        self.prime, self.sampler = prime, sampler
        self.budget = budget or AttributionBudget(0, None)
        self.progress = progress

    def _families(self, k: int, record: DegreeRecord,
                  substitution: LinearSubstitution) -> list[_Family]:
        """Every source's degree-k members reduced into the blocks, within the budget: all
        of them, or the seeded sample of a large family (``source.samples``) when all do
        not fit (:meth:`_reduced`)."""
        families, offset = [], 0
        for source in self.sources:
            members = source.members.get(k)
            if members is None:
                continue
            start = time.perf_counter()
            terms, used, reason = self._reduced(members, source.samples.get(k), substitution, record)
            if reason is not None:
                self.skipped.append({"id": source.id, "source": source.source,
                                     "reason": f"degree {k}: {reason}"})
                continue
            make = lambda: SpanAccumulator(terms.count, terms.homogeneous, self.prime,
                                           self.sampler)
            families.append(_Family(source, terms, used, offset, make(), make(),
                                    terms.ranges(),
                                    seconds=time.perf_counter() - start))
            offset += terms.count
        return families

    def _reduced(self, members: SparseMembers, sample: np.ndarray | None,
                 substitution: LinearSubstitution, record: DegreeRecord):
        """(terms, members used, None), or (None, 0, why not): the members reduced modulo
        J_1 into the blocks (:func:`reduce_members`), each step charged to the budget before
        it runs (the terms in the pivots, then the blockwise coordinate entries).  With a
        ``sample`` (sorted member ids): all members when both charges fit, else the sample
        -- taken from the reduction already paid for when only the coordinates did not fit
        (:meth:`BlockTerms.select`), reduced on its own when the reduction did not."""
        expanded = substitution.terms(members.monomials)
        if expanded > MAX_EXPANSION_TERMS:
            reason = f"the members expand into {expanded:,} terms in the pivots (limit {MAX_EXPANSION_TERMS:,})"
        else:
            reason = self.budget.charge(expanded, f"reducing its members modulo J_1 ({expanded:,} terms)")
        if reason is None:
            terms = reduce_members(members, substitution, record, self.prime)
            reason = self._charge_coordinates(terms)
            if reason is None:
                return terms, members.count, None
            if sample is not None:
                terms = terms.select(sample)
                reason = self._charge_coordinates(terms)
                return (terms, len(sample), None) if reason is None else (None, 0, reason)
        if sample is None:
            return None, 0, reason
        return self._reduced(members.select(sample), None, substitution, record)

    def _charge_coordinates(self, terms: BlockTerms) -> str | None:
        """Charge the blockwise coordinate matrices of ``terms`` (None), or say why not."""
        entries = terms.coordinate_entries()
        return self.budget.charge(entries // COORDINATE_ENTRIES_PER_UNIT,
                                  f"its blockwise coordinates ({entries:,} entries)")

    def degree(self, k: int, record: DegreeRecord, substitution: list, dimension: int,
               minimal: int) -> dict:
        """The degree-k table: each family's span and new generators, all together, and
        what remains unexplained (J'_k of dimension ``dimension``, ``minimal`` minimal
        generators)."""
        families = self._families(k, record, LinearSubstitution.of(substitution, self.prime))
        total = sum(f.terms.count for f in families)
        homogeneous = all(f.terms.homogeneous for f in families)
        union = {"span": SpanAccumulator(total, homogeneous, self.prime, self.sampler),
                 "new": SpanAccumulator(total, homogeneous, self.prime, self.sampler)}
        blocks = sorted(set().union(*(f.ranges for f in families)))
        for b in self.progress(blocks, f"degree {k} blocks: attribution", len(blocks)) \
                if blocks else ():
            here = [(f, *f.ranges[b]) for f in families if b in f.ranges]
            solution = record.solutions[int(record.representative[b])]
            start = time.perf_counter()
            used, results = attribute_block([(f.terms.component[lo:hi], f.terms.column[lo:hi],
                                              f.terms.value[lo:hi]) for f, lo, hi in here],
                                            solution, self.prime)
            bases, parts = [], []
            for (family, _, _), (rows, inside, coordinates) in zip(here, results):
                family.outside.update(rows[~inside].tolist())
                if family.terms.homogeneous:
                    rows, coordinates = rows[inside], coordinates[inside]
                    basis = echelon_rows(coordinates, self.prime)
                    bases.append((basis, self._modulo_generated(basis, used, solution)))
                    family.span.add_basis(bases[-1][0])
                    family.new.add_basis(bases[-1][1])
                else:
                    family.span.add(rows, coordinates)
                    family.new.add(rows, modulo_generated(coordinates, used, solution, self.prime))
                parts.append((rows + family.offset, coordinates))
            if homogeneous:
                if len(bases) > 1:
                    basis = echelon_rows(np.concatenate([b for b, _ in bases]), self.prime)
                    bases = [(basis, self._modulo_generated(basis, used, solution))]
                union["span"].add_basis(bases[0][0])
                union["new"].add_basis(bases[0][1])
            else:
                rows = np.concatenate([r for r, _ in parts])
                coordinates = np.concatenate([m for _, m in parts])
                union["span"].add(rows, coordinates)
                union["new"].add(rows, modulo_generated(coordinates, used, solution, self.prime))
            elapsed = (time.perf_counter() - start) / len(here)
            for family, _, _ in here:
                family.seconds += elapsed
        return self._table(k, families, union, dimension, minimal)

    def _modulo_generated(self, basis: np.ndarray, used: np.ndarray,
                          solution: BlockSolution) -> np.ndarray:
        """Independent rows spanning the image of the rows of ``basis`` (independent) modulo
        (J'_{<k})_k: the basis itself when nothing is generated in lower degrees."""
        if solution.quotient is None:
            return basis
        return echelon_rows(modulo_generated(basis, used, solution, self.prime), self.prime)

    def _table(self, k: int, families: list[_Family], union: dict, dimension: int,
               minimal: int) -> dict:
        rows = []
        outside_all = set()
        for family in families:
            source = family.source
            span, span_saturated = family.span.rank(family.outside)
            new, new_saturated = family.new.rank(family.outside)
            outside_all.update(m + family.offset for m in family.outside)
            rows.append({"id": source.id, "source": source.source,
                         "members": source.totals.get(k, 0), "used": family.used,
                         "sampled": source.totals.get(k, 0) > family.used,
                         "outside_J": len(family.outside), "span": span,
                         "new_generators": new,
                         "lower_bound": span_saturated or new_saturated
                         or source.totals.get(k, 0) > family.used,
                         "multihomogeneous": family.terms.homogeneous,
                         "seconds": round(source.seconds + family.seconds, 4)})
        span, _ = union["span"].rank(outside_all)
        new, _ = union["new"].rank(outside_all)
        return {"degree": k, "dim_J_mod_linear": dimension, "minimal_generators": minimal,
                "families": [r for r in rows if r["members"]],
                "all_families": {"span": span, "new_generators": new},
                "unexplained": {"span": dimension - span, "minimal_generators": minimal - new}}


def attribute_families(ideal, tables: list, claims, max_degree: int,
                       family_params: dict | None = None,
                       budget: AttributionBudget | None = None) -> dict:
    """The ``family_attribution`` of ``attngeom ideal``: every family of ``claims`` against
    the degree tables that ``ideal`` computed with ``record=True``."""
    budget = budget or AttributionBudget(ideal.work)
    coords = ideal.coords
    values = {"d": ideal.d, "t": ideal.t, "a": ideal.a, "dprime": coords.dprime, "col": coords.col}
    progress = ideal.context.progress
    sources = collect_families(claims, values, coords, max_degree, ideal.stream(STREAM_MEMBERS),
                               ideal.prime, family_params, budget, progress)
    ideal.family_sources = sources      # kept for the atlas's local completeness (attngeom.lightning_alg.atlas.completeness)
    attribution = FamilyAttribution(sources, ideal.prime, ideal.stream(STREAM_PROJECTIONS),
                                    budget, progress)
    degrees = []
    for table in tables:
        k = table.degree
        substitution = ideal.linear_substitution() if k == 1 else ideal.linear.substitution
        degrees.append(attribution.degree(k, ideal.records[k], substitution,
                                          table.dim_J_mod_linear, table.minimal_generators))
    return {"degrees": degrees, "skipped": attribution.skipped, "budget": budget.to_json()}

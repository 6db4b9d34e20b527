"""Claim ``cone-flattening``: the flattening of the single-column tensor has rank <= 2a + 1
(new; construction and proof in :mod:`attngeom.lightning_alg.invariants.cone_flattening`)."""

from __future__ import annotations

from itertools import islice
from math import comb

import numpy as np

from attngeom.core.errors import BadInput
from attngeom.core.verdict import proved
from attngeom.lightning_alg.claims.cross_column import (
    MAX_ENUMERATED, MatrixMinorsClaim, coordinate_matrix_identity, count_check, generic_weights,
    half_of, weights_ring_name)
from attngeom.lightning_alg.invariants import cone_flattening as cone
from attngeom.lightning_alg.invariants.structured import check_vanishing

#: Members built at once by the part ``as_built`` (bounds its memory: 16 to 64 entries each).
AS_BUILT_CHUNK = 50_000


class ConeFlatteningClaim(MatrixMinorsClaim):
    """For d >= 2a + 2 the d x C(d+1,2) flattening Fl(T) of the single-column tensor
    (entry T_{k,j,l} = y_j(sorted(k,j,l))) has rank <= 2a + 1 on the variety, so its
    C(d,2a+2) C(C(d+1,2),2a+2) minors of size 2a + 2 lie in J.  At a = 1 (ADM Example 21)
    this says that f_T = l1 l2 l3 is a cone (depends on three linear forms).

    Whole family: T_{k,j,l}(mu(W)) = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj), S = (A + A^T)/2,
    expanded in QQ[weights] (symbolic; rows then lie in span(S, sym(k_r v^T), sym(q_r v^T))),
    rank Fl(T) <= 2a + 1 over F_p (exact), sigma_{2a+2}/sigma_1 (numeric).  Members: every
    minor as a determinant.  The rank bound covers the members as built because each is
    checked, exactly and for every member, to be one (2a+2)-minor of that same Fl(T) (the
    part ``as_built``: one determinant, coefficient 1, distinct increasing rows and columns);
    the symbolic expansion of the members (part ``members``) is then a seeded sample.
    """

    id = "cone-flattening"
    source = cone.SOURCE
    statement = ("For d >= 2a + 2 the flattening of the single-column tensor T has rank "
                 "<= 2a + 1 on the variety, so its (2a+2)-minors lie in J.")
    examples = ({"d": 4, "t": 1, "a": 1}, {"d": 4, "t": 2, "a": 1},
                {"d": 6, "t": 1, "a": 2, "method": "exact"})

    def hypothesis_violation(self, params):
        d, a = params["d"], params["a"]
        if d < cone.rank_bound(a) + 1:
            return (f"the (2a+2)-minors of the d x C(d+1,2) flattening need d >= 2a + 2; "
                    f"got d={d}, a={a}")
        return None

    def minors_shape(self, params):
        d = params["d"]
        return d, comb(d + 1, 2), cone.rank_bound(params["a"]) + 1

    def count(self, params):
        return cone.minor_count(params["d"], params["a"])

    def rank_matrix(self, params, coords):
        return cone.tensor_flattening(coords)

    def matrix_name(self, params):
        return "Fl(T)"

    def entry_terms(self, params, coords):
        return 6 * params["a"]

    def family(self, params, coords, indices):
        return cone.cone_family(self.rank_matrix(params, coords), params["row"], params["col"],
                                indices)

    def factorization_proof(self, params, coords):
        ring, values, A_, V, _, _ = generic_weights(coords, params["a"])
        matrix = self.rank_matrix(params, coords)
        ring_name = weights_ring_name(coords, params["a"])
        failure = coordinate_matrix_identity(
            "T_{k,j,l}(mu(W)) = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj)", matrix, values,
            cone.tensor_formula(A_, V[params["row"] - 1], half_of(1, 6)), ring_name)
        return failure or proved(checked=int(matrix.index.size), summary=(
            f"T_{{k,j,l}}(mu(W)) = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj) in {ring_name} (all "
            f"{matrix.index.size} entries of Fl(T)), so every row lies in span(S, sym(k_r v^T), "
            f"sym(q_r v^T) : r <= a) and rank Fl(T) <= 2a + 1 = {cone.rank_bound(params['a'])}"),
            evidence={"ring": ring_name, "entries": int(matrix.index.size)})

    def extra_checks(self, method, params, coords, context):
        d, a = params["d"], params["a"]
        checks = count_check("(2a+2)-minors of Fl(T)", self.index_sets(params), self.count(params),
                             f"C({d},{2 * a + 2}) C(C({d}+1,2),{2 * a + 2})")
        return {"as_built": self.all_minors_as_built(method, params, coords, context), **checks}

    def all_minors_as_built(self, method, params, coords, context):
        """The part ``as_built``: every member, as built (AS_BUILT_CHUNK index sets at a time),
        is a combination of (2a+2)-minors of the Fl(T) whose rank the criterion bounds, so the
        criterion covers it; a member that is not is checked on its own by
        :func:`~attngeom.lightning_alg.invariants.structured.check_vanishing` (refuted with a
        witness if it does not vanish: a slip of construction that stays in J refutes
        nothing).  Above MAX_ENUMERATED members only the seeded sample of ``member_sample``
        (said so), which ``--method symbolic`` refuses: its proof would not cover them all."""
        matrix, size, total = self.rank_matrix(params, coords), cone.rank_bound(params["a"]) + 1, self.count(params)
        if total > MAX_ENUMERATED:
            if method == "symbolic":
                raise BadInput(f"cone-flattening has {total:,} members, above the {MAX_ENUMERATED:,} "
                               f"whose construction a proof checks one by one; use --method exact")
            family, sampled = self.member_sample(params, coords, context)
            chunks = [family]
        else:
            indices, sampled = iter(self.index_sets(params)), False
            chunks = (self.family(params, coords, chunk)
                      for chunk in iter(lambda: list(islice(indices, AS_BUILT_CHUNK)), []))
        checked, off, weaker = 0, [], None
        for family in chunks:
            here = minors_off_the_matrix(family, matrix, size)
            if here:
                verdict = check_vanishing(family.subfamily(here), coords, params["a"], method, context)
                verdict.summary = (f"members {[checked + m + 1 for m in here][:10]}, as built, are "
                                   f"not combinations of {size} x {size} minors of Fl(T); checked "
                                   f"on their own: {verdict.summary}")
                if verdict.status.value == "refuted":
                    return verdict
                weaker = verdict if method != "symbolic" else None
                off += [checked + m for m in here]
            checked += family.size
        if weaker is not None:
            return weaker
        which = f"a seeded sample of {checked} of the {total}" if sampled else f"all {checked}"
        return proved(method="exact" if not off else "symbolic", checked=checked, summary=(
            f"{which} members, as built, are {size} x {size} minors of Fl(T) (each determinant "
            f"taken on rows and columns of Fl(T)): the rank bound covers them"
            + (f"; {len(off)} are not, and were expanded at mu(W) on their own" if off else "")),
            evidence={"members_checked": checked, "members_total": total, "sampled": sampled,
                      "expanded_at_mu": len(off)})


def minors_off_the_matrix(family, matrix, size: int) -> list[int]:
    """The members (0-based) of ``family`` (a MinorCombinationFamily) that are not integer
    combinations of size x size minors of ``matrix`` (rows and columns in any order); the
    others are covered by a rank bound on ``matrix``.  Fast path: the member is the one
    minor its description names (vectorized); the rest are searched for rows and columns of
    ``matrix`` that give each of their determinants (:func:`is_submatrix`)."""
    names = {str(name): c for c, name in enumerate(matrix.col_names)}
    keys = [family.describe(m) for m in range(family.size)]
    nonzero = family.coefficients != 0
    ok = np.zeros(family.size, dtype=bool)
    rows = np.array([[r - 1 for r in key.get("rows", [])] for key in keys], dtype=np.int64)
    cols = np.array([[names.get(str(c), -1) for c in key.get("cols", [])] for key in keys], dtype=np.int64)
    if rows.shape == cols.shape == (family.size, size) and family.entries.shape[-1] == size:
        in_range = ((rows >= 0) & (rows < matrix.shape[0])).all(axis=1) & (cols >= 0).all(axis=1)
        named = matrix.index[np.clip(rows, 0, matrix.shape[0] - 1)[:, :, None], cols[:, None, :]]
        ok = in_range & (nonzero.sum(axis=1) == 1) & nonzero[:, 0] & (
            family.entries[:, 0] == named).all(axis=(1, 2))
    off = []
    for m in np.nonzero(~ok)[0]:
        terms = np.nonzero(nonzero[m])[0]
        if not (terms.size and family.entries.shape[-1] == size and all(
                is_submatrix(family.entries[m, k], matrix.index) for k in terms)):
            off.append(int(m))
    return off


def is_submatrix(block: np.ndarray, index: np.ndarray) -> bool:
    """Whether block == index[rows][:, cols] for some rows and columns of ``index`` (coordinate
    indices; a coordinate occurs at most once in a row of Fl(T), so the columns follow from
    the first row's choice)."""
    for r0 in np.nonzero((index == block[0, 0]).any(axis=1))[0]:
        choices = [np.nonzero(index[r0] == x)[0] for x in block[0]]
        if any(len(c) != 1 for c in choices):
            continue
        sub = index[:, [int(c[0]) for c in choices]]
        if all((sub == row).all(axis=1).any() for row in block[1:]):
            return True
    return False


CLAIMS = [ConeFlatteningClaim()]

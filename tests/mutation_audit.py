"""Mutation audit: every claim that holds must fail when the paper side it checks is wrong.

Issue 27, ask 5 ("positive verdicts with teeth").  A claim that says proved / verified /
consistent must say so only on evidence that a wrong statement could not produce.  This
script makes small mutations of the *paper side* of each claim -- the formula or statement
the claim checks (a polynomial builder in ``attngeom/lightning_alg/invariants/``, a printed formula in
``geometry_proofs/...``), never the reference it is checked against -- one at a time, in a
copy of the repository, as an outsider would, and runs ``python -m attngeom verify CLAIM
[--params] --json`` on the mutated copy.

Each mutation names a file, an exact snippet (which must occur exactly once in the file), its
replacement, the claim and parameters to verify and the expected outcome: ``refuted`` (exit
1), or ``inconclusive`` (exit 2) where the claim rightly cannot decide.  A mutation

* flips when the outcome is the expected one,
* survives when the claim still holds (exit 0): the claim has no teeth against it,
* errors otherwise (a crash, a timeout, an unexpected exit 2).

Usage::

    python tests/mutation_audit.py                       # every mutation, 2 workers
    python tests/mutation_audit.py --claims linear gt-dexp --workers 1
    python tests/mutation_audit.py --json audit.json     # the full record as JSON
    python tests/mutation_audit.py --list                # the table, nothing run

The repository is copied once per worker (``git ls-files`` of the working tree, tracked and
untracked-but-not-ignored files) into a temporary directory; the original is never written.
``tests/test_mutation_audit.py`` runs it (marked slow) and checks the table (fast).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TIMEOUT = 180


@dataclass(frozen=True)
class Mutation:
    """One small change of a claim's paper side, and the outcome it must produce."""

    claim: str
    file: str          # path relative to the repository root
    old: str           # occurs exactly once in the file
    new: str
    what: str          # the mutation in words
    params: tuple = ()  # extra CLI arguments after the claim id
    expect: str = "refuted"  # or "inconclusive"

    @property
    def name(self) -> str:
        return f"{self.claim}: {self.what}"


def M(claim, file, old, new, what, *params, expect="refuted"):
    return Mutation(claim, file, old, new, what, tuple(str(p) for p in params), expect)


# ---------------------------------------------------------------------------------------
# Claims with no paper side to mutate (documented; see docs/DEVELOPING.md "Mutation audit").
# Claims refuted at their default parameters are out of scope (the audit asks whether a
# *holding* verdict has teeth); they are listed here with the verdict they give.
# ---------------------------------------------------------------------------------------

#: Holding claims without a paper side to mutate, with the reason: none at present -- every
#: claim that holds at its defaults (or its first example, where a size is required) has at
#: least one mutation below.
NO_PAPER_SIDE: dict[str, str] = {}
#: Claims refuted at their defaults / first example (out of scope): claim -> where.
REFUTED_AT_DEFAULTS: dict[str, str] = {
    "flattening-entries": "at --d 3 --t 2 --a 3",
    "singular-locus": "at --d 2 --dprime 1 --t 2",
    "dimension-deep": "at --d 3,3,3 --a 2,2 --t 3",
    "multihead-join": "at its defaults (the sweep: 14 of 78 points below the join's expected "
                      "dimension; mutations at a holding point: tests/test_beyond.py)",
    "curvature-lower-bound": "at its defaults",
    "gec-gating-curvature-monotone": "at its defaults",
    "gec-curvature-accuracy-correlation": "at its defaults",
    "gt-transport-derivative": "at its defaults",
    "gt-natural-gradient-mean": "at its defaults",
    "gt-natural-gradient-covariance": "at its defaults",
    "gt-grad-sigma-prior": "at its defaults",
    "gt-grad-sigma-key": "at its defaults",
    "gt-grad-mu-assembled": "at its defaults",
    "gt-grad-sigma-assembled": "at its defaults",
    "gt-grad-frame-assembled": "at its defaults",
    "gt-beta-gradient-mean": "at its defaults",
    "gt-counts-parameters": "at its defaults",
    "gt-dirac-limit": "at its defaults",
    "gt-curvature-minimization": "at its defaults",
    "gt-vacuum-stationarity": "at its defaults",
    "tangent-attention-error": "at its defaults",
    "tree-euclidean-depth-bound": "at its defaults",
    "tree-euclidean-sqrt-n": "at its defaults",
    "hierarchy-preservation": "at its defaults",
}

#: Mutations known to survive, each with the reason (a survivor is a claim without teeth
#: against that change: fix the claim rather than add it here).  name -> reason.
KNOWN_SURVIVORS: dict[str, str] = {}

# ---------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------

ADM_HMK = [
    M("monomial-count", "attngeom/lightning_alg/coordinates.py",
      "return sympy.Rational(d * (d + 1) * (3 * d * t - 2 * d + 2), 6)",
      "return sympy.Rational(d * (d + 1) * (3 * d * t - 2 * d + 4), 6)",
      "Prop 5 per-coordinate count: +2 -> +4", "--d", 2, "--t", 2),
    M("monomial-count", "attngeom/lightning_alg/coordinates.py",
      "return sympy.Rational(d * t * (d + 1) * (3 * d * t - 2 * d + 2), 6)",
      "return sympy.Rational(d * t * (d + 2) * (3 * d * t - 2 * d + 2), 6)",
      "Prop 5 total N_phi: (d+1) -> (d+2)", "--d", 2, "--t", 2),
    M("coefficients", "attngeom/lightning_alg/parametrization.py",
      "return [(p1, p2, b) for p1, p2 in distinct_permutations(label.multiset)]",
      "return [(p1, b, p2) for p1, p2 in distinct_permutations(label.multiset)]",
      "Prop 6 cross-column term a_{p2 b} -> a_{b p2}", "--d", 2, "--t", 2),
    M("coefficients", "attngeom/lightning_alg/labels.py",
      "return math.factorial(len(multiset)) // math.prod(",
      "return math.factorial(len(multiset) + 1) // math.prod(",
      "eq (3) scaling |Perm K| = r!/prod -> (r+1)!/prod", "--d", 2, "--t", 2),
    M("linear", "attngeom/lightning_alg/invariants/linear.py",
      "poly -= cross.orbit_size * coords.symbol(cross)",
      "poly += cross.orbit_size * coords.symbol(cross)",
      "Prop 9: sign of the cross-column sum flipped", "--d", 2, "--t", 2, "--a", 2),
    M("linear", "attngeom/lightning_alg/invariants/linear.py",
      "poly = single.orbit_size * coords.symbol(single)",
      "poly = coords.symbol(single)",
      "Prop 9: |Perm K| dropped from the single-column term", "--d", 2, "--t", 2, "--a", 2),
    M("lie-flattening", "attngeom/lightning_alg/invariants/lie_flattening.py",
      "basis = [(f\"H{u}\", {(u, u): 1, (d, d): -1}) for u in range(1, d)]",
      "basis = [(f\"H{u}\", {(u, u): 1, (d, d): 1}) for u in range(1, d)]",
      "Def 15: H_u = E_uu - E_dd -> E_uu + E_dd (not trace zero)", "--d", 3),
    M("lie-flattening", "attngeom/lightning_alg/invariants/lie_flattening.py",
      "sign * orbit_size(rest)))",
      "sign * orbit_size(m)))",
      "Def 15 entry: |Perm(m - u)| -> |Perm m|", "--d", 3),
    M("single-column-rank", "attngeom/lightning_alg/invariants/single_column.py",
      "return [[[v[k] * A[k][kp] for kp in range(d)] for k in range(d)],\n            [[v[k] * A[kp][k] for kp in range(d)] for k in range(d)],",
      "return [[[v[k] * A[k][kp] for kp in range(d)] for k in range(d)],\n            [[v[k] * A[k][kp] for kp in range(d)] for k in range(d)],",
      "Prop 17(1) proof: diag(v) A^T -> diag(v) A", "--d", 4, "--a", 1),
    M("single-column-rank", "attngeom/lightning_alg/invariants/single_column.py",
      "index[tuple(sorted((k, k, kp)))], 1)",
      "index[tuple(sorted((k, kp, kp if kp > 1 else k)))], 1)",
      "N(j,j,j) entry T_{k,k,k'} -> T_{k,k',k'} (except k' = 1)", "--d", 4, "--a", 1),
    M("chow-111", "attngeom/lightning_alg/invariants/chow.py",
      "return [sum((first[p1 - 1] * second[p2 - 1] * third[p3 - 1]",
      "return [sum((first[p1 - 1] * first[p2 - 1] * third[p3 - 1]",
      "Cor 22 product (l1.x)(l2.x)(l3.x) -> (l1.x)^2 (l3.x)", "--d", 3),
    M("chow-111", "attngeom/lightning_alg/invariants/chow.py",
      "return 6 if d == 3 else 3 * d - 2",
      "return 7 if d == 3 else 3 * d - 2",
      "Remark 23 rank M_Lie: 6 -> 7 for d = 3", "--d", 3),
    M("chow-111", "attngeom/lightning_alg/invariants/chow.py",
      "return 6 if d == 3 else 3 * d - 2",
      "return 6 if d == 3 else 3 * d - 1",
      "Remark 23 rank M_Lie: 3d - 2 -> 3d - 1 (d >= 4)", "--d", 4),
    M("cross-cubic", "attngeom/lightning_alg/invariants/cross_cubic.py",
      "return [[(v[k1] * column[k2] + column[k1] * v[k2]) * half for k2 in range(d)] for k1 in range(d)]",
      "return [[(v[k1] * column[k2] + column[k1] * v[k1]) * half for k2 in range(d)] for k1 in range(d)]",
      "Prop 24 slice 1/2(v a_k^T + a_k v^T): v[k2] -> v[k1]", "--d", 3, "--t", 2, "--a", 1),
    M("cross-cubic", "attngeom/lightning_alg/invariants/cross_cubic.py",
      "for ts in distinct_permutations(tuple(S))] for R, C, S in indices]",
      "for ts in (tuple(S),)] for R, C, S in indices]",
      "Prop 24 mixed minor: the sum over Perm(S) dropped", "--d", 3, "--t", 2, "--a", 2),
    M("cross-cubic", "attngeom/lightning_alg/invariants/cross_cubic.py",
      "return comb(d, 3) ** 2 * comb(d + 2, 3)",
      "return comb(d, 3) ** 2 * comb(d + 1, 3)",
      "Prop 24 count C(d+2,3) -> C(d+1,3)", "--d", 3, "--t", 2, "--a", 1),
    M("low-rank", "attngeom/lightning_alg/invariants/low_rank.py",
      "s = [[(v[k1 - 1] * u[k2 - 1] + u[k1 - 1] * v[k2 - 1]) * half for u in K]",
      "s = [[(v[k1 - 1] * u[k2 - 1] + u[k1 - 1] * v[k1 - 1]) * half for u in K]",
      "Thm 25 proof S^(r) = 1/2(v u^T + u v^T): v[k2] -> v[k1]", "--d", 3, "--t", 2, "--a", 1),
    M("low-rank", "attngeom/lightning_alg/invariants/low_rank.py",
      "return comb(comb(d + 1, 2), a + 1) * comb(d, a + 1)",
      "return comb(comb(d + 1, 2), a + 1) * comb(d + 1, a + 1)",
      "Thm 25 count C(d, a+1) -> C(d+1, a+1)", "--d", 3, "--t", 2, "--a", 1),
    M("low-rank", "attngeom/lightning_alg/invariants/low_rank.py",
      "(\"(1,1),(1,2),(1,2)\", \"(1,2),(1,2),(2,1)\", \"(1,2),(1,2),(3,1)\"),",
      "(\"(1,1),(1,2),(1,2)\", \"(1,2),(1,2),(3,1)\", \"(1,2),(1,2),(2,1)\"),",
      "Example 26 printed F_{2,1}: two entries of row 1 swapped", "--d", 3, "--t", 2, "--a", 1),
    M("syzygy", "attngeom/lightning_alg/invariants/syzygy.py",
      "return comb(comb(d + 1, 2), d) - comb(2 * d - 1, d)",
      "return comb(comb(d + 1, 2), d) - comb(2 * d - 2, d)",
      "Thm 27 lower bound C(D,d) - C(2d-1, d) -> C(D,d) - C(2d-2, d) (stronger)", "--d", 3, "--t", 2, "--a", 3),
    M("syzygy", "attngeom/lightning_alg/invariants/syzygy.py",
      "rows.append([(k1 - 1, k2 - 1, Fraction(1, 2)), (k2 - 1, k1 - 1, Fraction(1, 2))])",
      "rows.append([(k1 - 1, k2 - 1, Fraction(1, 2)), (k2 - 1, k1 - 1, Fraction(1, 3))])",
      "Thm 27 Phi(v): off-diagonal coefficient 1/2 -> 1/3", "--d", 3, "--t", 2, "--a", 3),
    M("minor-relations", "attngeom/lightning_alg/invariants/minor_relations.py",
      "terms = [[(c, subsets[r], C) for r, c in scaled[number].items()] for C, number in indices]",
      "terms = [[(c + 1, subsets[r], C) for r, c in scaled[number].items()] for C, number in indices]",
      "relations among 3 x 3 minors: every coefficient c_R -> c_R + 1", "--d", 4, "--t", 2, "--a", 4),
    M("minor-relations", "attngeom/lightning_alg/invariants/minor_relations.py",
      "rows = [integer_row([(position[c], var, x) for c, var, x in phi[r] if c in position])",
      "rows = [integer_row([(position[c], var, x) for c, var, x in phi[r][:1] if c in position])",
      "E_k from Phi(v) with only the first entry of each row", "--d", 4, "--t", 2, "--a", 4),
    M("pencil-pair", "attngeom/lightning_alg/invariants/pencil_pair.py",
      "for t1 in distinct_permutations(S1) for t2 in distinct_permutations(S2)]",
      "for t1 in (tuple(S1),) for t2 in distinct_permutations(S2)]",
      "[M(u); M(w)] 2+2 minor: the sum over Perm(S1) dropped", "--d", 4, "--t", 2, "--a", 4),
    M("brill", "attngeom/lightning_alg/invariants/brill.py",
      "NEWTON = (-3, 3)", "NEWTON = (-2, 3)",
      "Newton p_3 = e1^3 - 3 e1 e2 + 3 e3: -3 -> -2", "--d", 4, "--t", 1, "--a", 1),
    M("brill", "attngeom/lightning_alg/invariants/brill.py",
      "WEIGHTS = (3, -1, 1, -3)", "WEIGHTS = (3, 1, 1, -3)",
      "B = sum_k (-1)^k g_k h_k / C(3,k): sign of k = 1", "--d", 4, "--t", 1, "--a", 1),
    M("ideal-table", "attngeom/lightning_alg/ideal/degree_table.py",
      "substitution[int(c)] = [(variable_of[int(c)], 1)]",
      "substitution[int(c)] = [(variable_of[int(c)], 0)]",
      "the attribution's substitution of a coordinate by its variable loses the variable",
      "--d", 3, "--t", 2, "--a", 1, "--max-degree", 2),
    M("ideal-table", "attngeom/lightning_alg/ideal/attribution.py",
      "row = row * pow(int(row[c]), prime - 2, prime) % prime",
      "row = row * pow(int(row[c]), prime + 2, prime) % prime",
      "the attribution's pivot inverse mod p: p - 2 -> p + 2 (no inverse)",
      "--d", 2, "--t", 2, "--a", 2, "--max-degree", 4),
    M("cone-flattening", "attngeom/lightning_alg/invariants/cone_flattening.py",
      "return [[(v[k - 1] * twice_s(j, l) + v[j - 1] * twice_s(k, l) + v[l - 1] * twice_s(k, j)) * sixth",
      "return [[(v[k - 1] * twice_s(j, l) + v[j - 1] * twice_s(k, l) + v[k - 1] * twice_s(l, j)) * sixth",
      "T_{k,j,l} = 1/3 (v_k S_jl + v_j S_kl + v_l S_kj): v_l S_kj -> v_k S_lj", "--d", 4, "--t", 1, "--a", 1),
    M("cone-flattening", "attngeom/lightning_alg/invariants/cone_flattening.py",
      "return 2 * a + 1", "return 2 * a",
      "rank bound 2a + 1 -> 2a (stronger)", "--d", 4, "--t", 1, "--a", 1, "--method", "exact"),
    # issue 48: proved covers every member as built; counts pinned; no holding on 0 members
    M("pencil-pair", "attngeom/lightning_alg/invariants/pencil_pair.py",
      "                        for rows in terms(first, second)])",
      "                        for rows in terms(first, second)][:-1 if len(members) == 1000 else None])",
      "one member as built (number 1001) loses its last determinant (the proof sampled 162 of 1,686)",
      "--d", 4, "--t", 2, "--a", 4),
    M("minor-relations", "attngeom/lightning_alg/invariants/minor_relations.py",
      "        columns.append(column)\n    return columns",
      "        column[len(column_subsets(d, k)) * per_subset] = __import__(\"fractions\").Fraction(len(columns) + 1)\n        columns.append(column)\n    return columns",
      "E_k gets an extra row: 49 relations per column triple instead of 50",
      "--d", 4, "--t", 2, "--a", 4),
    M("cone-flattening", "attngeom/lightning_alg/claims/cone_flattening.py",
      "        if d < cone.rank_bound(a) + 1:",
      "        if d < cone.rank_bound(a):",
      "hypothesis d >= 2a+2 loosened to d >= 2a+1 (was 'proved ... all 0 members')",
      "--d", 3, "--t", 1, "--a", 1, expect="inconclusive"),
    M("cone-flattening", "attngeom/lightning_alg/claims/cone_flattening.py",
      "        return d, comb(d + 1, 2), cone.rank_bound(params[\"a\"]) + 1",
      "        return d, comb(d + 1, 2), cone.rank_bound(params[\"a\"]) + 7",
      "minor size in the index list wrong: an empty family at (4,1,1)",
      "--d", 4, "--t", 1, "--a", 1),
    M("cross-row", "attngeom/lightning_alg/invariants/cross_row.py",
      "labels = [[Label(i, lab.target, lab.context, lab.rows) for lab in columns]",
      "labels = [[Label(i if s % 2 else i % coords.dprime + 1, lab.target, lab.context, lab.rows)\n                for s, lab in enumerate(columns)]",
      "Prop 44 C_S: every other column taken from the next output row", "--d", 2, "--t", 2, "--a", 2, "--dprime", 3),
    M("veronese", "attngeom/lightning_alg/invariants/veronese.py",
      "\"\"\"ADM eq (4): 1 if u = v, else 2 (the orbit size of the context pair {u, v}).\"\"\"\n    return 1 if u == v else 2",
      "\"\"\"ADM eq (4): 1 if u = v, else 2 (the orbit size of the context pair {u, v}).\"\"\"\n    return 1 if u == v else 3",
      "eq (4) omega(u, v) = 2 -> 3 for u != v", "--d", 2, "--t", 2, "--a", 2),
    M("veronese", "attngeom/lightning_alg/invariants/veronese.py",
      "entries = tuple(tuple(VeroneseCoordinate(K, L, tuple(b + g for b, g in zip(beta, gamma)))\n                          for gamma in cols) for beta in rows)",
      "entries = tuple(tuple(VeroneseCoordinate(K, L, tuple(b + g for b, g in zip(beta, gamma[::-1])))\n                          for gamma in cols) for beta in rows)",
      "Thm 30 catalecticant entry D_{beta+gamma} -> D_{beta+reversed gamma}", "--d", 3, "--t", 2, "--a", 3),
    M("cross-target", "attngeom/lightning_alg/invariants/veronese.py",
      "entries = tuple((VeroneseCoordinate(K, L, al), VeroneseCoordinate(K, L2, al)) for al in alphas)",
      "entries = tuple((VeroneseCoordinate(K, L, al), VeroneseCoordinate(K, L2, al[::-1])) for al in alphas)",
      "Cor 32 block: alpha reversed in the L' column", "--d", 3, "--t", 2, "--a", 2),
    M("block-veronese", "attngeom/lightning_alg/invariants/veronese.py",
      "entries = tuple(tuple(VeroneseCoordinate(K, L, tuple(b + g for b, g in zip(beta, gamma)))\n                          for gamma, L in cols) for beta in rows)",
      "entries = tuple(tuple(VeroneseCoordinate(K, L, tuple(b + g for b, g in zip(beta if L == Ls[0] else beta[::-1], gamma)))\n                          for gamma, L in cols) for beta in rows)",
      "Cor 33 C_K entry D_{beta+gamma,L} -> D_{reversed beta+gamma,L} for L != L_1", "--d", 3, "--t", 2, "--a", 2),
    M("resultant", "attngeom/lightning_alg/invariants/resultant.py",
      "return [[a1, b1, c1, 0], [0, a1, b1, c1], [a2, b2, c2, 0], [0, a2, b2, c2]]",
      "return [[a1, b1, c1, 0], [0, a1, b1, c1], [a2, c2, b2, 0], [0, a2, b2, c2]]",
      "Def 37 Sylvester matrix: b2, c2 swapped in row 3", "--d", 3, "--t", 2, "--a", 1, "--line", "1,2,-1:2,-1,3"),
    M("resultant", "attngeom/lightning_alg/invariants/resultant.py",
      "+ a2**2 * c1**2 + 4 * a2 * b1**2 * c2 - 4 * a2 * b1 * b2 * c1)",
      "+ a2**2 * c1**2 + 2 * a2 * b1**2 * c2 - 4 * a2 * b1 * b2 * c1)",
      "Example 41 quartic: coefficient 4 -> 2", "--d", 3, "--t", 2, "--a", 1, "--line", "1,2,-1:2,-1,3"),
    # HMK
    M("matmul-fibre", "attngeom/lightning_alg/hmk/fibres.py",
      "inverse_T = inverse_mod_p(C, prime).T.copy()",
      "inverse_T = inverse_mod_p(C, prime).copy()",
      "Lemma 3.1 action C^{-T} Q -> C^{-1} Q", "--d", 3, "--a", 2),
    M("fibre-single-layer", "attngeom/lightning_alg/hmk/fibres.py",
      "W2 = (outer_mod_p(v, q, prime), outer_mod_p(h, k, prime))",
      "W2 = (outer_mod_p(q, v, prime), outer_mod_p(h, k, prime))",
      "Thm 3.2 second preimage v (x) q -> q (x) v", "--d", 2, "--dprime", 1, "--t", 2),
    M("virtual-weights", "attngeom/lightning_alg/hmk/virtual_weights.py",
      "Ms.append(L.T @ A @ L)", "Ms.append(L @ A @ L)",
      "eq (8) M_i = L^T A L -> L A L", "--d", "3,3,3", "--t", 3),
    M("virtual-weights", "attngeom/lightning_alg/hmk/virtual_weights.py",
      "D.append(_product([D[-1], G[i - 1], D[-1], G[i - 1].T, D[-1]]))",
      "D.append(_product([D[-1], G[i - 1], D[-1], G[i - 1], D[-1]]))",
      "eq (11) D_i: G^T -> G", "--d", "3,3,3", "--t", 3),
    M("virtual-weights", "attngeom/lightning_alg/hmk/virtual_weights.py",
      "return alpha, j % 3 == 2", "return alpha, j % 3 == 1",
      "eq (12) 3-adic rule: transposed digit 2 -> 1", "--d", "3,3,3", "--t", 3),
    M("virtual-weights", "attngeom/lightning_alg/hmk/virtual_weights.py",
      "new_A = [As[0]] + [_product([None if Cinv[i] is None else Cinv[i].T, As[i], Cinv[i]])",
      "new_A = [As[0]] + [_product([None if Cinv[i] is None else Cinv[i], As[i], Cinv[i]])",
      "eq (9) A' = C^{-T} A C^{-1} -> C^{-1} A C^{-1}", "--d", "3,3,3", "--t", 3),
    M("fibre-deep", "attngeom/lightning_alg/claims/hmk_deep_fibres.py",
      "rho = rho * pow(lam, -(3 ** (l - i)), PRIME) % PRIME",
      "rho = rho * pow(lam, -(3 ** (l - i + 1)), PRIME) % PRIME",
      "eq (13) prod lambda_i^{3^{l-i}} = 1/rho: exponent 3^{l-i} -> 3^{l-i+1}", "--d", "3,3,3", "--a", "2,2", "--t", 3),
    M("fibre-deep", "attngeom/lightning_alg/claims/hmk_deep_fibres.py",
      "for j in (3 * i, 3 * i + 1, 3 * i + 2):",
      "for j in (3 * i, 3 * i + 2):",
      "eq (9) change of basis: K_{i+1} left untransformed", "--d", "3,3,3", "--a", "2,2", "--t", 3),
    M("fibre-deep", "attngeom/lightning_alg/claims/hmk_deep_fibres.py",
      "return rank_verdict(\"Thm 3.7 (local)\", P - rank, l, degree=entry_degree(arch),",
      "return rank_verdict(\"Thm 3.7 (local)\", P - rank, l + 1, degree=entry_degree(arch),",
      "Thm 3.7 fibre dimension l -> l + 1", "--d", "3,3,3", "--a", "2,2", "--t", 3),
    M("dimension-single-layer", "attngeom/lightning_alg/hmk/dimension.py",
      "return 2 * a * d + d * dprime - a * a - 1",
      "return 2 * a * d + d * dprime - a * a",
      "eq (7) the -1 dropped (a <= d)"),
    M("dimension-single-layer", "attngeom/lightning_alg/hmk/dimension.py",
      "return d * d + d * dprime - 1",
      "return d * d + d * dprime",
      "eq (7) the -1 dropped (a > d)", "--d", "3,2", "--a", 5, "--t", 2),
    M("softmax-injective", "attngeom/lightning_alg/claims/hmk.py",
      "P = d * d + dp * d\n",
      "P = d * d + dp * d - 1\n",
      "Thm 3.9 generic fibre {W}: dimension d^2 + dd' -> d^2 + dd' - 1", "--d", 2, "--dprime", 2, "--t", 2),
    M("softmax-dimension", "attngeom/lightning_alg/hmk/dimension.py",
      "return _first_layer_and_ends(arch, delta) - delta ** 2 + _later_layers(arch, delta, 2)",
      "return _first_layer_and_ends(arch, delta) - delta ** 2 + 1 + _later_layers(arch, delta, 2)",
      "eq (16) +1", "--d", "3,3,3", "--a", "2,2", "--t", 3),
    M("skip-fibre", "attngeom/lightning_alg/models/dimension.py",
      "(2 * alpha * d_in - alpha ** 2) + 1)",
      "(2 * alpha * d_in - alpha ** 2) + 2)",
      "skip fibre: per-head symmetries a^2 + 1 -> a^2 + 2 (a <= d)"),
    M("skip-fibre", "attngeom/lightning_alg/models/dimension.py",
      "total += sum(w * w for w in arch.d[1:-1])",
      "total += sum(w * w - 1 for w in arch.d[1:-1])",
      "skip fibre: inter-layer GL_d -> SL_d (linear skip)",
      "--d", "3,3,3", "--a", "2,2", "--t", 3, "--skip", "linear"),
    M("causal-dimension", "attngeom/lightning_alg/models/dimension.py",
      "return single_layer_dimension(arch.d[0], arch.d[1], arch.a[0])",
      "return single_layer_dimension(arch.d[0], arch.d[1], arch.a[0]) + 1",
      "causal dimension: eq (7) + 1 for one layer"),
    M("causal-dimension", "attngeom/lightning_alg/models/dimension.py",
      "return deep_dimension_corrected(arch, arch.delta)",
      "return deep_dimension_corrected(arch, arch.delta) - 1",
      "causal dimension: corrected eq (14) - 1 for two layers",
      "--d", "3,3,3", "--a", "2,2", "--t", 3, "--causal"),
    M("multihead-mixing", "attngeom/lightning_alg/models/mixing.py",
      "return heads * (heads - 1)", "return heads * (heads + 1)",
      "head mixing: defect H(H-1) -> H(H+1)"),
    M("multihead-mixing", "attngeom/lightning_alg/models/mixing.py",
      "tangent[3 * c + 2] = blocks[3 * r + 2].copy()",
      "tangent[3 * c + 2] = (-blocks[3 * r + 2]) % prime",
      "head mixing: tangent dV_c = V_r -> -V_r (not in the kernel)",
      "--d", "3", "--dprime", "3", "--a", "3", "--t", 2, "--heads", 2),
    # issue 48: the equality of two models is checked against a construction from the
    # definition (models/by_tokens.py), and the two maps must differ
    M("causal-dimension", "attngeom/lightning_alg/models/causal.py",
      "return np.triu(np.ones((t, t), dtype=dtype))",
      "return np.ones((t, t), dtype=dtype)",
      "causal mask removed (masked = unmasked by construction before issue 48)"),
    M("causal-dimension", "attngeom/lightning_alg/models/causal.py",
      "return np.triu(np.ones((t, t), dtype=dtype))",
      "return np.tril(np.ones((t, t), dtype=dtype))",
      "causal mask transposed"),
    M("skip-fibre", "attngeom/lightning_alg/models/skip.py",
      "return out + X", "return out",
      "identity skip removed (one layer: the same fibre a^2 + 1 with and without it)",
      "--d", 3, "--a", 2, "--t", 2, "--skip", "identity"),
    M("skip-fibre", "attngeom/lightning_alg/models/skip.py",
      "return out + S @ X", "return out + S @ X + X",
      "linear skip S X -> S X + X",
      "--d", "3,3,3", "--a", "2,2", "--t", 3, "--skip", "linear"),
    M("skip-fibre", "attngeom/lightning_alg/models/dimension.py",
      "total += mixing_defect(net.variant.heads)", "total += 0",
      "head mixing left out of the skip fibre (issue 51: 28 against 24)",
      "--d", "2,2,2", "--a", "2,2", "--t", 3, "--heads", 2, "--skip", "identity"),
    M("skip-fibre", "attngeom/lightning_alg/models/mixing.py",
      "return heads * (d * dprime + d * d - heads)",
      "return heads * (d * dprime + d * d - heads) + 1",
      "rank-<=H tensor cap + 1", "--d", 3, "--a", 2, "--t", 2, "--heads", 3, "--skip", "identity"),
]

GATING = "attngeom/geometry_proofs/gating"
GAUGE = "attngeom/geometry_proofs/gauge"
HYP = "attngeom/geometry_proofs/hyperbolic"

GEC = [
    M("ungated-flat", f"{GATING}/gates.py",
      "return ops.const(offset) + ops.const(slope) @ phi",
      "return ops.const(offset) + ops.const(slope) @ phi + phi[0] * phi[1] * ops.const([1] + [0] * (len(offset) - 1))",
      "Thm 3.1 mean map a + B phi gets a phi_1 phi_2 term in one coordinate"),
    M("gating-second-derivative", f"{GATING}/gates.py",
      "return B_i * dg_j + B_j * dg_i + Y * ddg_ij",
      "return B_i * dg_i + B_j * dg_j + Y * ddg_ij",
      "Lemma 3.5: B_i d_j g + B_j d_i g -> B_i d_i g + B_j d_j g (index swap)"),
    M("gated-sphere", f"{GATING}/attention.py",
      "return ops.logit(self.sphere(phi, ops) / self.affine(phi, ops))",
      "return ops.logit(self.sphere(phi, ops) / (2 * self.affine(phi, ops)))",
      "Thm 3.6 step 2: t = logit(s~ / (a + B phi)) -> logit(s~ / (2 (a + B phi)))"),
    M("gated-sphere", f"{GATING}/attention.py",
      "left_inverse[:, D:] = _exact_inverse(W_theta[D:])",
      "left_inverse[:, D:] = _exact_inverse(W_theta[D:]).T",
      "Thm 3.6: left inverse W_theta^dagger transposed"),
    M("graph-curvature", f"{GATING}/depth.py",
      "return (f_uu * f_vv - f_uv ** 2) / (1 + f_u ** 2 + f_v ** 2) ** 2",
      "return (f_uu * f_vv + f_uv ** 2) / (1 + f_u ** 2 + f_v ** 2) ** 2",
      "Lemma 3.12 K = (f_uu f_vv - f_uv^2)/W^2: sign of f_uv^2 flipped"),
    M("graph-curvature", f"{GATING}/depth.py",
      "return (f_uu * f_vv - f_uv ** 2) / (1 + f_u ** 2 + f_v ** 2) ** 2",
      "return (f_uu * f_vv - f_uv ** 2) / (1 + f_u ** 2 + f_v ** 2)",
      "Lemma 3.12: exponent of (1 + f_u^2 + f_v^2) 2 -> 1"),
    M("depth-amplification", f"{GATING}/depth.py",
      "return sympy.Rational(sum(amplitudes[:layers], Fraction(0))) ** 2 * facts[\"det\"]",
      "return sympy.Rational(sum(amplitudes[:layers], Fraction(0))) ** 3 * facts[\"det\"]",
      "Thm 3.13 K(0) = A_L^2 det -> A_L^3 det"),
    M("vector-graph-curvature", f"{GATING}/depth.py",
      "return sum(sympy.Matrix(sum(hs, sympy.zeros(2, 2))).det() for hs in layer_hessians)",
      "return sum(sympy.Matrix(h).det() for hs in layer_hessians for h in hs)",
      "Thm 3.15 det(sum_l D^2 Phi_l) -> sum_l det D^2 Phi_l (additive)", "--layers", 2, "--ambient", 4),
    M("generic-nonflat", f"{GATING}/gates.py",
      "q = eps / 2 * (x @ x)",
      "q = eps * (x @ x)",
      "Thm 3.21 proof q_eps = eps/2 |phi - phi0|^2 -> eps |phi - phi0|^2"),
    M("gec-ablation-ordering", f"{GATING}/experiment/claims.py",
      "for low, high in ((\"ungated\", \"silu\"), (\"silu\", \"gated-sigmoid\"), (\"silu\", \"gated-nonsparse\")):",
      "for low, high in ((\"silu\", \"ungated\"), (\"silu\", \"gated-sigmoid\"), (\"silu\", \"gated-nonsparse\")):",
      "Fig 5 ordering ungated < SiLU -> SiLU < ungated"),
    M("gec-linear-control-no-advantage", f"{GATING}/experiment/claims.py",
      "excess = abs(mean - base_mean) - max(std, base_std)",
      "excess = abs(mean - base_mean) - 0.01 * max(std, base_std)",
      "A.4 'within the seed std' -> within 1% of the seed std"),
    M("gec-iso-aniso-ranking", f"{GATING}/experiment/claims.py",
      "rhos = {c: st.spearman(iso, st.column(runs, st.ANISO_COLUMNS[measure].format(c=c)))",
      "rhos = {c: -st.spearman(iso, st.column(runs, st.ANISO_COLUMNS[measure].format(c=c)))",
      "A.2 'rank alike' -> rank in reverse (Spearman rho negated)"),
    M("curvature-robustness", f"{GATING}/robustness.py",
      "worst = float(np.max(np.abs(K - 1)))",
      "worst = float(np.max(np.abs(K - 2)))",
      "Thm 3.18 (ii) K = 1 at W* -> K = 2"),
    M("curvature-robustness", f"{GATING}/robustness.py",
      'good = [row["all_finite"] and row["min_det_g"] > 0 and row["min_K"] >= 0.5',
      'good = [row["all_finite"] and row["min_det_g"] > 0 and row["min_K"] >= 1.5',
      "Thm 3.18 (iii) K >= c/2 = 1/2 near W* -> K >= 3/2"),
    # issue 48: generic amplitudes and psi by default (unit amplitudes hid these)
    M("depth-amplification", f"{GATING}/attention.py",
      "ops.logit(ops.scalar(amplitude) * psi)",
      "ops.logit(ops.scalar(amplitude) ** 2 * psi)",
      "A.1.7 gate a_l psi -> a_l^2 psi (invisible at unit amplitudes)"),
    M("depth-amplification", f"{GATING}/depth.py",
      "return sympy.Rational(sum(amplitudes[:layers], Fraction(0))) ** 2 * facts[\"det\"]",
      "return sympy.Rational(sum((a ** 2 for a in amplitudes[:layers]), Fraction(0))) ** 2 * facts[\"det\"]",
      "Thm 3.13 A_L = sum a_l -> sum a_l^2"),
    M("graph-curvature", f"{GATING}/depth.py",
      "return amplitudes, psi, facts, A, sympy.Rational(A) ** 2 * facts[\"det\"]",
      "return amplitudes, psi, facts, A, sympy.Rational(sum((a ** 2 for a in amplitudes), Fraction(0))) ** 2 * facts[\"det\"]",
      "Thm 3.13 A_L -> sum a_l^2"),
    M("graph-curvature", f"{GATING}/common.py",
      'return {"gradient": gradient, "hessian": hessian, "det": hessian.det()}',
      'return {"gradient": gradient, "hessian": hessian, "det": hessian[0, 0] * hessian[1, 1]}',
      "Lemma 3.12 det D^2 psi(0) loses its -psi_uv^2 term (invisible at psi = |phi|^2/8)"),
]

GT = [
    M("gt-gaussian-kl", "attngeom/geometry_proofs/gauge/accelerated/kl_primitives.py",
      "return 0.5 * (trace + mahalanobis - n + _logdet_from_cholesky(lower_p, be)",
      "return 0.5 * (trace + mahalanobis - n + 2 * _logdet_from_cholesky(lower_p, be)",
      "App. C.1 KL: log det Sigma_p -> 2 log det Sigma_p"),
    M("gt-gaussian-kl", f"{GAUGE}/beliefs.py",
      "- dim + sympy.log(Sigma_p.det()) - sympy.log(Sigma_q.det()))",
      "- dim + sympy.log(Sigma_p.det()) + sympy.log(Sigma_q.det()))",
      "App. C.1 KL (symbolic): sign of log det Sigma_q", "--method", "symbolic"),
    M("gt-transport", f"{GAUGE}/transport.py",
      "omega = rotation[:, None] @ rotation[None, :].swapaxes(-1, -2)",
      "omega = rotation[:, None] @ rotation[None, :]",
      "eq (3) Omega_ij = e^phi_i e^-phi_j -> e^phi_i e^phi_j"),
    M("gt-dexp", f"{GAUGE}/transport.py",
      "out = out + term / factorial * (-1) ** k",
      "out = out + term / factorial",
      "eqs (34)-(35) dexp series: alternating sign dropped"),
    M("gt-kl-attention", f"{GAUGE}/free_energy.py",
      "return softmax_last(-kl / kappa, be)",
      "return softmax_last(kl / kappa, be)",
      "eq (1) beta = softmax(-KL/kappa) -> softmax(KL/kappa)"),
    M("gt-spd-retraction", f"{GAUGE}/retraction.py",
      "return root @ symmetric_exp(eta * inverse_root @ V @ inverse_root.T) @ root.T",
      "return root @ symmetric_exp(2 * eta * inverse_root @ V @ inverse_root.T) @ root.T",
      "eq (7) exp(eta ...) -> exp(2 eta ...)"),
    M("gt-likelihood-gradient", f"{GAUGE}/gradients.py",
      "return weights - np.eye(mu.shape[0])[observation]",
      "return weights - 2 * np.eye(mu.shape[0])[observation]",
      "eq (57) softmax(mu) - e_o -> softmax(mu) - 2 e_o"),
    M("gt-grad-mu-self", f"{GAUGE}/gradients.py",
      "return inv(S_p) @ (mu_q - mu_p)",
      "return inv(S_p) @ (mu_p - mu_q)",
      "eq (11) P^-1 (mu_q - m): sign flipped"),
    M("gt-grad-sigma-self", f"{GAUGE}/gradients.py",
      "return 0.5 * (inv(S_p) - inv(S_q))",
      "return 0.25 * (inv(S_p) - inv(S_q))",
      "eq (12) coefficient 1/2 -> 1/4"),
    M("gt-grad-sigma-query", f"{GAUGE}/gradients.py",
      "return 0.5 * (inv(omega @ S_j @ omega.T) - inv(S_i))",
      "return 0.5 * (inv(omega.T @ S_j @ omega) - inv(S_i))",
      "eq (25) Omega S_j Omega^T -> Omega^T S_j Omega"),
    M("gt-beta-gradient", f"{GAUGE}/gradients.py",
      "EQ15_SIGN, EQ50_SIGN = -1.0, +1.0",
      "EQ15_SIGN, EQ50_SIGN = +1.0, +1.0",
      "eq (15) sign -1/kappa -> +1/kappa"),
    M("gt-beta-gradient-sigma", f"{GAUGE}/gradients.py",
      "EQ15_SIGN, EQ50_SIGN = -1.0, +1.0",
      "EQ15_SIGN, EQ50_SIGN = +1.0, +1.0",
      "eq (27) (= eq 15 for Sigma) sign -1/kappa -> +1/kappa"),
    M("gt-counts-architecture", f"{GAUGE}/counts.py",
      "PrintedFigure(\"dim so(20)\", \"GT §2.5.1\", 190, 1,",
      "PrintedFigure(\"dim so(20)\", \"GT §2.5.1\", 200, 1,",
      "§2.5.1 dim so(20) = 190 -> 200"),
    M("gt-counts-results", f"{GAUGE}/counts.py",
      "from_printed(\"gauge improvement (x)\", \"GT abstract, Table 3, §4.1\", 218, 1,",
      "from_printed(\"gauge improvement (x)\", \"GT abstract, Table 3, §4.1\", 228, 1,",
      "Table 3 improvement 218x -> 228x"),
    M("gt-counts-cost", f"{GAUGE}/counts.py",
      "from_printed(\"overhead (x)\", \"GT Table 4, §4.3.1\", 29, 1,",
      "from_printed(\"overhead (x)\", \"GT Table 4, §4.3.1\", 35, 1,",
      "Table 4 overhead 29x -> 35x"),
    M("gt-dirac-kl", f"{GAUGE}/dirac.py",
      "return (delta * delta).sum(-1) / (2.0 * sigma2)",
      "return (delta * delta).sum(-1) / sigma2",
      "eq (47) |mu_i - Omega mu_j|^2 / (2 sigma^2) -> / sigma^2"),
    M("gt-dirac-kl", f"{GAUGE}/dirac.py",
      "return (delta.T * delta)[0, 0] / (2 * sigma2)",
      "return (delta.T * delta)[0, 0] / sigma2",
      "eq (47) (symbolic): / (2 sigma^2) -> / sigma^2", "--method", "symbolic", "--dim", 2),
    M("gt-cocycle", f"{GAUGE}/holonomy.py",
      "return rotation[:, None] @ rotation[None, :].swapaxes(-1, -2)",
      "return rotation[:, None] @ rotation[None, :]",
      "eq (3) Omega_ij = R_i R_j^T -> R_i R_j"),
    M("gt-holonomy", f"{GAUGE}/holonomy.py",
      "return rotation[:, None] @ rotation[None, :].swapaxes(-1, -2)",
      "return rotation[:, None] @ rotation[None, :]",
      "§5.0.6 transport Omega_ij = R_i R_j^T -> R_i R_j"),
    M("gt-vacuum-prior-kl", f"{GAUGE}/vacuum.py",
      "- dim - (logdet - dim * np.log(prior_var)))",
      "- dim - (logdet + dim * np.log(prior_var)))",
      "eq (52): sign of K log sigma_p^2"),
    M("gt-vacuum-gauge-invariance", f"{GAUGE}/vacuum.py",
      "frames = skew_to_vector(g @ phis @ g.T)",
      "frames = skew_to_vector(g.T @ phis @ g)",
      "App. B.2 frame transformation g phi g^T -> g^T phi g"),
    M("gt-vacuum-ground-state", f"{GAUGE}/vacuum.py",
      "return mean / prior_var",
      "return 2 * mean / prior_var",
      "eq (54) phase gradient mean / sigma_p^2 -> 2 mean / sigma_p^2"),
    # issue 48: kappa = 0.7 by default (a power of kappa was invisible at kappa = 1)
    M("gt-kl-attention", f"{GAUGE}/free_energy.py",
      "return softmax_last(-kl / kappa, be)",
      "return softmax_last(-kl / kappa ** 2, be)",
      "eq (1) softmax(-KL/kappa) -> softmax(-KL/kappa^2)"),
    M("gt-beta-gradient", f"{GAUGE}/gradients.py",
      "return sign / kappa * beta_row.reshape(shape) * (kl_grads - mean)",
      "return sign / kappa ** 2 * beta_row.reshape(shape) * (kl_grads - mean)",
      "eq (15) 1/kappa -> 1/kappa^2"),
]

RGT = [
    M("poincare-curvature", f"{HYP}/poincare.py",
      "return (2 / (1 - c * (phi * phi).sum())) ** 2 * ops.const(np.eye(phi.shape[-1], dtype=int))",
      "return (2 / (1 - c * (phi * phi).sum())) ** 3 * ops.const(np.eye(phi.shape[-1], dtype=int))",
      "eq (8) metric lambda^2 -> lambda^3"),
    M("poincare-clipping", f"{HYP}/poincare.py",
      "radius = 1 / math.sqrt(c) - eps\n",
      "radius = 1 / math.sqrt(c) - 10 * eps\n",
      "eq (28) clip radius 1/sqrt(c) - eps -> 1/sqrt(c) - 10 eps"),
    M("mobius-gyrogroup", f"{HYP}/poincare.py",
      "num = (1 + 2 * c * xy + c * y2) * x + (1 - c * x2) * y",
      "num = (1 + 2 * c * xy + c * x2) * x + (1 - c * x2) * y",
      "eq (9) Mobius addition: c|y|^2 -> c|x|^2 in the x coefficient"),
    M("poincare-distance-geodesic", f"{HYP}/poincare.py",
      "return (2 / sc) * xp.arctanh(xp.clip(sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]",
      "return (1 / sc) * xp.arctanh(xp.clip(sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]",
      "eq (10) distance 2/sqrt(c) artanh -> 1/sqrt(c) artanh"),
    M("exp-log-inverse", f"{HYP}/poincare.py",
      "lam = 2.0 / (1.0 - c * _sqnorm(x))\n    u = _mobius_add(-x, y, c)",
      "lam = 2.0 / (1.0 - _sqnorm(x))\n    u = _mobius_add(-x, y, c)",
      "eq (11) log map: lambda_x without c"),
    M("exp-log-inverse", f"{HYP}/poincare.py",
      "scale = xp.where(n > 0, xp.tanh(sc * lam * safe / 2) / (sc * safe), lam / 2)",
      "scale = xp.where(n > 0, xp.tanh(lam * safe / 2) / (sc * safe), lam / 2)",
      "eq (11) exp map: sqrt(c) dropped inside tanh"),
    M("lorentz-ball-isometry", f"{HYP}/lorentz.py",
      "time = (1 + c * sq) / (math.sqrt(c) * (1 - c * sq))",
      "time = (1 + c * sq) / (1 - c * sq)",
      "eq (12) ball -> hyperboloid: 1/sqrt(c) dropped from the time coordinate"),
    M("lorentz-ball-isometry", f"{HYP}/lorentz.py",
      "return prod[..., 1:].sum(-1, keepdims=True) - prod[..., :1]",
      "return prod[..., 1:].sum(-1, keepdims=True) + prod[..., :1]",
      "Lorentz inner product: sign of the time term"),
    M("parallel-transport", f"{HYP}/poincare.py",
      "ratio = (1.0 - c * _sqnorm(y)) / (1.0 - c * _sqnorm(x))",
      "ratio = (1.0 - c * _sqnorm(x)) / (1.0 - c * _sqnorm(y))",
      "eq (7) lambda_x / lambda_y -> lambda_y / lambda_x"),
    M("lorentz-stability", f"{HYP}/lorentz.py",
      "return (xp.arccosh(arg) / math.sqrt(c))[..., 0]",
      "return (xp.arccosh(arg) * (1 + 1e-6) / math.sqrt(c))[..., 0]",
      "Lorentz distance scaled by 1 + 1e-6"),
    M("product-manifold", f"{HYP}/products.py",
      "total = total + factor.distance(a, b) ** 2\n        return namespace(x).sqrt(total)",
      "total = total + factor.distance(a, b)\n        return namespace(x).sqrt(total)",
      "eq (26) sqrt(sum d_i^2) -> sqrt(sum d_i)"),
    M("gyro-attention-weights", f"{HYP}/attention.py",
      "return -poincare.distance(q[..., :, None, :], k[..., None, :, :], c) ** 2 * c / math.sqrt(q.shape[-1])",
      "return poincare.distance(q[..., :, None, :], k[..., None, :, :], c) ** 2 * c / math.sqrt(q.shape[-1])",
      "eq (14) S_ij = -d^2 c / sqrt(d_k): sign flipped"),
    M("frechet-algorithm-1", f"{HYP}/frechet.py",
      "p = poincare.exp_map(p, eta * u, c)",
      "p = poincare.exp_map(p, 0.5 * eta * u, c)",
      "Algorithm 1 step exp_p(eta u) -> exp_p(eta u / 2)"),
    M("geodesic-residual", f"{HYP}/layers.py",
      "return poincare.exp_map(x_curr, step * poincare.parallel_transport(x_prev, x_curr, direction, c), c)",
      "return poincare.exp_map(x_curr, step * direction, c)",
      "eq (17) parallel transport P_{x_prev -> x_curr} dropped"),
    M("riemannian-norm", f"{HYP}/layers.py",
      "sigma = (poincare.distance(mu[None, :], points, c) ** 2).mean() ** 0.5",
      "sigma = (poincare.distance(mu[None, :], points, c) ** 2).mean()",
      "eq (19) sigma = sqrt(mean d^2) -> mean d^2"),
    M("riemannian-sgd", f"{HYP}/poincare.py",
      "return ((1.0 - c * _sqnorm(x)) ** 2 / 4) * euclidean_grad",
      "return ((1.0 - c * _sqnorm(x)) ** 2 / 2) * euclidean_grad",
      "eq (21) (1 - c|x|^2)^2 / 4 -> / 2"),
    M("hyperbolic-volume-growth", f"{HYP}/volume.py",
      "integrand = (sympy.sinh(sympy.sqrt(c) * t) / sympy.sqrt(c)) ** (d - 1)",
      "integrand = (sympy.sinh(sympy.sqrt(c) * t) / sympy.sqrt(c)) ** d",
      "§7.1.1 volume integrand sinh^(d-1) -> sinh^d"),
    M("tree-hyperbolic-distortion", f"{HYP}/sarkar.py",
      "return nu * (1 + eps) / eps",
      "return nu * (1 + eps) / (8 * eps)",
      "Thm 3.4(2) construction: tau = nu (1 + eps)/eps -> /8"),
    M("tree-sala-comparison", f"{HYP}/sala.py",
      "return tau * longest_path / math.log(2)",
      "return tau * longest_path / math.log(2) / 10",
      "Sala et al. estimate tau l / ln 2 -> / 10"),
    M("tree-embedding-precision", f"{HYP}/tree_claims.py",
      "residual = abs(slope * math.log(2) - 1)",
      "residual = abs(slope * math.log(2) - 2)",
      "§3 precision: 1/ln 2 bits per unit radius -> 2/ln 2"),
    M("einstein-midpoint-shortcut", f"{HYP}/frechet.py",
      "w = weights[..., None] * gamma",
      "w = weights[..., None] * gamma ** 3",
      "§5.2.2 Einstein midpoint: Lorentz factors gamma -> gamma^3 (caught by part naming)"),
    M("einstein-midpoint-shortcut", f"{HYP}/frechet_claims.py",
      "frechet.frechet_mean(points, weights, c, steps=1).mean, mean, c)))",
      "frechet.frechet_mean(points, weights, c, steps=0).mean, mean, c)))",
      "§5.2.2 'a single iteration' -> no iteration (v_1 itself; caught by the error law)"),
    M("riemannian-attention-cost", f"{HYP}/cost_claims.py",
      'expected = {"gemm_in_N": 2, "gemm_in_d": 1, "pair_in_N": 2, "pair_in_d": 0}',
      'expected = {"gemm_in_N": 2, "gemm_in_d": 2, "pair_in_N": 2, "pair_in_d": 0}',
      "Prop 9.3 O(N^2 d) -> O(N^2 d^2)"),
    # issue 48: the cost claim checks the values of every Gram kernel it times
    M("riemannian-attention-cost", f"{HYP}/accelerated/gram.py",
      "a = _recip(1.0 / c - sq)", "a = _recip(1.0 - sq)",
      "Gram factor a_i loses its c (invisible at c = 1)"),
    M("riemannian-attention-cost", f"{HYP}/accelerated/gram.py",
      "def geodesic_attention(q, k, v, c, steps: int = 3, eta: float | str = 1.0,",
      "def geodesic_attention(q, k, v, c, steps: int = 0, eta: float | str = 1.0,",
      "Algorithm 1 run for 0 steps in the geodesic layer"),
    M("riemannian-attention-cost", f"{HYP}/accelerated/gram.py",
      "gamma = (1 + c * sq) / (1 - c * sq)", "gamma = 1 / (1 - c * sq)",
      "gram.einstein_midpoint: a wrong Lorentz factor"),
    M("riemannian-attention-cost", f"{HYP}/accelerated/gram.py",
      "left = x * (-c)", "left = x * (-1.0)",
      "Lorentz Gram: -c dropped from the Minkowski form"),
    # issue 48: references independent of poincare.distance; generic c
    M("gyro-attention-weights", f"{HYP}/poincare.py",
      "return (2 / sc) * xp.arctanh(xp.clip(sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]",
      "return (2 / sc) * xp.arctanh(xp.clip(0.999 * sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]",
      "eq (10) distance: a factor 0.999 inside artanh (the reference used the same distance)"),
    M("poincare-distance-geodesic", f"{HYP}/poincare.py",
      "return (2 / sc) * xp.arctanh(xp.clip(sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]",
      "return (2 / c) * xp.arctanh(xp.clip(sc * _norm(_mobius_add(-x, y, c)), 0, 1 - 1e-16))[..., 0]",
      "eq (10) prefactor 2/sqrt(c) -> 2/c (invisible at c = 1)"),
    M("frechet-algorithm-1", f"{HYP}/frechet_claims.py",
      "STEP_CONDITION = 2.0", "STEP_CONDITION = 4.0",
      "Algorithm 1's condition eta < 2/lambda_max loosened to 4/lambda_max"),
    M("frechet-algorithm-1", f"{HYP}/frechet.py",
      "p = poincare.exp_map(p, eta * u, c)", "p = poincare.exp_map(p, eta ** 2 * u, c)",
      "Algorithm 1 step exp_p(eta u) -> exp_p(eta^2 u) (invisible at eta = 1)"),
    # issue 48: generic curvature (c = 3/2, 2/3) in every RGT default and example; each of
    # these survived at c = 1
    M("poincare-curvature", f"{HYP}/poincare.py",
      "return (2 / (1 - c * (phi * phi).sum())) ** 2 * ops.const",
      "return (2 / (1 - c * c * (phi * phi).sum())) ** 2 * ops.const",
      "eq (8) metric: c -> c^2"),
    M("poincare-clipping", f"{HYP}/poincare.py",
      "radius = 1 / math.sqrt(c) - eps\n", "radius = 1 / c - eps\n",
      "eq (28) clip radius 1/sqrt(c) - eps -> 1/c - eps"),
    M("mobius-gyrogroup", f"{HYP}/poincare.py",
      "out = num / (1 + 2 * c * xy + c * c * x2 * y2)",
      "out = num / (1 + 2 * c * xy + c * x2 * y2)",
      "eq (9) denominator c^2 |x|^2 |y|^2 -> c |x|^2 |y|^2"),
    M("product-manifold", f"{HYP}/products.py",
      "return (xp.arccos(cos) / math.sqrt(self.c))[..., 0]",
      "return (xp.arccos(cos) / self.c)[..., 0]",
      "sphere factor distance / sqrt(c) -> / c"),
    M("einstein-midpoint-shortcut", f"{HYP}/frechet.py",
      "gamma = 1 / xp.sqrt(1 - c * _sqnorm(k))",
      "gamma = (1 - c * _sqnorm(k)) ** (-c / 2)",
      "Lorentz factor exponent -1/2 -> -c/2"),
    M("geodesic-residual", f"{HYP}/layers.py",
      "step * poincare.parallel_transport(x_prev, x_curr, direction, c), c)",
      "step * poincare.parallel_transport(x_prev, x_curr, direction, c * c), c)",
      "eq (17) transport at curvature c^2"),
    M("riemannian-norm", f"{HYP}/layers.py",
      "sigma = (poincare.distance(mu[None, :], points, c) ** 2).mean() ** 0.5",
      "sigma = (poincare.distance(mu[None, :], points, c * c) ** 2).mean() ** 0.5",
      "eq (19) sigma measured at curvature c^2"),
    M("riemannian-sgd", f"{HYP}/poincare.py",
      "return ((1.0 - c * _sqnorm(x)) ** 2 / 4) * euclidean_grad",
      "return ((1.0 - c * c * _sqnorm(x)) ** 2 / 4) * euclidean_grad",
      "eq (36) conformal factor with c -> c^2"),
    M("parallel-transport", f"{HYP}/poincare.py",
      "ratio = (1.0 - c * _sqnorm(y)) / (1.0 - c * _sqnorm(x))",
      "ratio = (1.0 - c * c * _sqnorm(y)) / (1.0 - c * c * _sqnorm(x))",
      "eq (7) lambda_x / lambda_y with c -> c^2"),
    M("exp-log-inverse", f"{HYP}/poincare.py",
      "lam = 2.0 / (1.0 - c * _sqnorm(x))\n    n = _norm(v)",
      "lam = 2.0 / (1.0 - c * c * _sqnorm(x))\n    n = _norm(v)",
      "eq (11) exp map lambda_x with c -> c^2"),
    M("lorentz-ball-isometry", f"{HYP}/lorentz.py",
      "time = (1 + c * sq) / (math.sqrt(c) * (1 - c * sq))",
      "time = (1 + c * sq) / (c * (1 - c * sq))",
      "eq (12) time coordinate sqrt(c) -> c"),
]

MUTATIONS: list[Mutation] = [*ADM_HMK, *GEC, *GT, *RGT]


# ---------------------------------------------------------------------------------------
# Machinery
# ---------------------------------------------------------------------------------------

def snippet_count(mutation: Mutation, root: Path = ROOT) -> int:
    """How often the mutation's old snippet occurs in its file (must be exactly 1)."""
    path = root / mutation.file
    if not path.is_file():
        return 0
    return path.read_text().count(mutation.old)


def repository_files(root: Path = ROOT) -> list[str]:
    """Tracked and untracked-but-not-ignored files that exist in the working tree."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, check=True).stdout.decode()
    return [p for p in out.split("\0") if p and (root / p).is_file()]


def copy_repository(target: Path, root: Path = ROOT) -> Path:
    """Copy the working tree's files into ``target`` and byte-compile them (hash-checked
    .pyc files, so a restored source file can never be shadowed by a stale cache)."""
    for rel in repository_files(root):
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dest)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode",
                    "checked-hash", "attngeom"],
                   cwd=target, capture_output=True)
    return target


def _environment(copy: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", ATTNGEOM_THREADS="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def run_verify(copy: Path, claim: str, params: tuple, timeout: float) -> dict:
    """``python -m attngeom verify CLAIM PARAMS --json`` in the copy: exit code, status, summary."""
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "attngeom", "verify", claim, *params, "--json"],
                              cwd=copy, env=_environment(copy), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": None, "status": "timeout", "summary": f"no answer in {timeout:g} s",
                "seconds": round(time.monotonic() - start, 1)}
    status, summary = None, ""
    try:
        verdict = json.loads(proc.stdout)
        status, summary = verdict.get("status"), verdict.get("summary", "")
    except (json.JSONDecodeError, AttributeError):
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        summary = lines[-1] if lines else ""
    return {"exit": proc.returncode, "status": status, "summary": summary[:300],
            "seconds": round(time.monotonic() - start, 1)}


def classify(mutation: Mutation, result: dict) -> str:
    """flipped / survived / error."""
    code = result["exit"]
    if code == 0:
        return "survived"
    if mutation.expect == "refuted" and code == 1 and result["status"] == "refuted":
        return "flipped"
    if mutation.expect == "inconclusive" and code == 2:
        return "flipped"
    return "error"


def apply_and_run(copy: Path, mutation: Mutation, timeout: float) -> dict:
    path = copy / mutation.file
    original = path.read_text()
    record = {"claim": mutation.claim, "what": mutation.what, "file": mutation.file,
              "params": list(mutation.params), "expect": mutation.expect}
    if original.count(mutation.old) != 1:
        record.update(outcome="error", exit=None, status=None, seconds=0.0,
                      summary=f"old snippet occurs {original.count(mutation.old)} times")
        return record
    try:
        path.write_text(original.replace(mutation.old, mutation.new))
        result = run_verify(copy, mutation.claim, mutation.params, timeout)
    finally:
        path.write_text(original)
    record.update(result)
    record["outcome"] = classify(mutation, result)
    return record


def baseline(copy: Path, mutation: Mutation, timeout: float) -> dict:
    """The unmutated verdict at the mutation's parameters (must hold: exit 0)."""
    return run_verify(copy, mutation.claim, mutation.params, timeout)


def run_audit(mutations: list[Mutation], workers: int = 2, timeout: float = DEFAULT_TIMEOUT,
              check_baseline: bool = False, progress=None) -> dict:
    """Run every mutation; returns {"results": [...], "flip_rate", "seconds", ...}."""
    start = time.monotonic()
    workers = max(1, min(workers, len(mutations) or 1))
    with tempfile.TemporaryDirectory(prefix="mutation-audit-") as tmp:
        copies: queue.Queue = queue.Queue()
        for w in range(workers):
            copies.put(copy_repository(Path(tmp) / f"copy{w}"))
        lock = threading.Lock()
        done = [0]

        def task(mutation: Mutation) -> dict:
            copy = copies.get()
            try:
                if check_baseline:
                    base = baseline(copy, mutation, timeout)
                record = apply_and_run(copy, mutation, timeout)
                if check_baseline:
                    record["baseline_exit"] = base["exit"]
                    if base["exit"] != 0:
                        record["outcome"] = "error"
                        record["summary"] = f"baseline does not hold: {base['summary']}"
            finally:
                copies.put(copy)
            with lock:
                done[0] += 1
                if progress:
                    progress(done[0], len(mutations), record)
            return record

        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(task, mutations))
    flipped = sum(r["outcome"] == "flipped" for r in results)
    return {"results": results, "total": len(results), "flipped": flipped,
            "survived": [r for r in results if r["outcome"] == "survived"],
            "errors": [r for r in results if r["outcome"] == "error"],
            "flip_rate": flipped / len(results) if results else 1.0,
            "claims": sorted({r["claim"] for r in results}),
            "seconds": round(time.monotonic() - start, 1), "workers": workers}


def select(claims: list[str] | None) -> list[Mutation]:
    if not claims:
        return list(MUTATIONS)
    unknown = set(claims) - {m.claim for m in MUTATIONS}
    if unknown:
        raise SystemExit(f"no mutation for: {', '.join(sorted(unknown))}")
    return [m for m in MUTATIONS if m.claim in claims]


def render(report: dict) -> str:
    lines = []
    per_claim: dict[str, list] = {}
    for r in report["results"]:
        per_claim.setdefault(r["claim"], []).append(r)
    for claim, rs in per_claim.items():
        n = sum(r["outcome"] == "flipped" for r in rs)
        lines.append(f"{claim:36s} {n}/{len(rs)} flipped  "
                     f"({max(r['seconds'] for r in rs):.1f} s max)")
    lines.append("")
    lines.append(f"flip rate: {report['flipped']}/{report['total']} = "
                 f"{report['flip_rate']:.1%} over {len(report['claims'])} claims, "
                 f"{report['seconds']:.0f} s with {report['workers']} worker(s)")
    for kind in ("survived", "errors"):
        if report[kind]:
            lines.append(f"{kind}:")
            for r in report[kind]:
                lines.append(f"  {r['claim']} {' '.join(r['params'])}: {r['what']} "
                             f"[{r['file']}] -> exit {r['exit']}: {r['summary']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", nargs="*", help="only the mutations of these claims")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="seconds per verify (default %(default)s)")
    parser.add_argument("--json", metavar="OUT", help="write the full record as JSON")
    parser.add_argument("--baseline", action="store_true",
                        help="also verify each unmutated claim at the mutation's parameters")
    parser.add_argument("--list", action="store_true", help="print the table and stop")
    args = parser.parse_args(argv)
    mutations = select(args.claims)
    if args.list:
        for m in mutations:
            print(f"{m.claim} {' '.join(m.params)}: {m.what} [{m.file}] -> {m.expect}")
        print(f"{len(mutations)} mutations of {len({m.claim for m in mutations})} claims")
        return 0
    stale = [m for m in mutations if snippet_count(m) != 1]
    for m in stale:
        print(f"stale: {m.name}: old snippet occurs {snippet_count(m)} times in {m.file}",
              file=sys.stderr)

    def progress(done, total, record):
        print(f"[{done}/{total}] {record['outcome']:8s} {record['claim']}: {record['what']} "
              f"({record['seconds']} s)", file=sys.stderr, flush=True)

    report = run_audit(mutations, args.workers, args.timeout, args.baseline, progress)
    print(render(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0 if report["flipped"] == report["total"] else 1


if __name__ == "__main__":
    sys.exit(main())

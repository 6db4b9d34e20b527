"""HMK claims about fibres and the singular locus of one layer: Lemma 3.1, Thm 3.2, Thm 3.4
with Lemma A.3 and Corollaries A.1-A.6 (deep networks: :mod:`.hmk_deep_fibres`).

Exact checks run over F_p (p = 2^31 - 1) at random points: identities by evaluation (with
nonzero controls, so no check passes on the zero polynomial), local fibre dimensions as
Jacobian kernels (:mod:`attngeom.kernels.jacobian`); SymPy identities where the method is symbolic.
"""

from __future__ import annotations

import math

import numpy as np
import sympy

from attngeom.core.claim import Claim
from attngeom.core.errors import BadInput
from attngeom.core.erratum import Erratum, ErrorKind
from attngeom.kernels.jacobian import jacobian_mod_p
from attngeom.kernels.primefield import matmul_mod_p, rank_mod_p
from attngeom.core.verdict import Verdict, combine, proved, refuted, verified
from attngeom.lightning_alg.claims.hmk_support import (
    INPUTS_PER_POINT, IDENTITY_POINTS, PRIME, A, D, SingleLayerClaim, equal_values,
    formula_show, identity_verdict, minor_degree, mod_p, prime_inputs, rank_verdict,
    single_layer_dims)
from attngeom.lightning_alg.hmk.fibres import (
    critical_kernel_vector, factor_from_rows, gauge_action, gauge_between, rank_one_swap,
    symmetry_tangents)
from attngeom.lightning_alg.model import lightning_attention


class MatmulFibreClaim(Claim):
    """HMK Lemma 3.1 and the dimension a(2d - a) of the determinantal variety.

    Checked over F_p at random (Q, K) in F_p^{a x d} with rank K^T Q = a: (1) the action
    (Q, K) -> (C^{-T} Q, C K) fixes A = K^T Q for random C in GL_a; (2) the converse: a second
    factorization A = K'^T Q' is read off A alone (a independent rows of A and their
    coordinates), the lemma's C is computed from an invertible a x a block of K, and
    K' = C K, Q' = C^{-T} Q are checked in full (C is unique since rank K = a); (3) the
    Jacobian of (Q, K) -> K^T Q has rank a(2d - a) and its kernel contains the a^2 tangents
    of the GL_a orbit (rank = 2ad - a^2 = P - a^2: certified).
    """

    id = "matmul-fibre"
    source = "HMK Lemma 3.1"
    statement = ("Two factorizations K^T Q = K'^T Q' of a rank-a matrix (a <= d) differ by a unique "
                 "C in GL_a (K' = C K, Q' = C^{-T} Q); the determinantal variety has dimension a(2d - a).")
    params = (D, A)
    methods = ("exact",)
    examples = ({"d": 3, "a": 2}, {"d": 5, "a": 3})

    def validate(self, params):
        for name in ("d", "a"):
            if params[name] is None or len(params[name]) != 1:
                raise BadInput(f"matmul-fibre takes one integer --{name}")

    def hypothesis_violation(self, params):
        d, a = params["d"][0], params["a"][0]
        if a > d:
            return f"HMK Lemma 3.1 needs rk(A) = a <= d; got a={a}, d={d}"
        return None

    def check_exact(self, params, context):
        d, a = params["d"][0], params["a"][0]
        points = context.samples or IDENTITY_POINTS
        failures, checked = [], 0
        for b in range(points):
            s = context.sampler.spawn(b)
            Q, K, C = (s.prime_field(shape, PRIME) for shape in ((a, d), (a, d), (a, a)))
            A_ = matmul_mod_p(K.T.copy(), Q, PRIME)
            if rank_mod_p(A_, PRIME) < a or rank_mod_p(C, PRIME) < a:
                continue                        # outside the hypothesis (probability ~ a/p)
            point = {"Q": Q.tolist(), "K": K.tolist()}
            Q1, K1 = gauge_action(Q, K, C, PRIME)
            if not equal_values(matmul_mod_p(K1.T.copy(), Q1, PRIME), A_):
                failures.append({"why": "(C^{-T} Q, C K) changes K^T Q", "C": C.tolist(), **point})
            Q2, K2 = factor_from_rows(A_, PRIME)
            C2 = gauge_between(K, K2, PRIME)
            if not equal_values(matmul_mod_p(K2.T.copy(), Q2, PRIME), A_):
                failures.append({"why": "the factorization read off A is not one", **point})
            elif not (equal_values(matmul_mod_p(C2, K, PRIME), K2)
                      and equal_values(matmul_mod_p(C2.T.copy(), Q2, PRIME), Q)):
                failures.append({"why": "no C with K' = C K and Q' = C^{-T} Q",
                                 "K2": K2.tolist(), "Q2": Q2.tolist(), **point})
            checked += 1
        orbit = identity_verdict(
            "Lemma 3.1", failures, checked, degree=8 * a + 4, points=checked,
            summary=f"at {checked} random rank-{a} points the second factorization is (C^-T Q, C K)",
            evidence={"points": checked, "degree_note": "8a+4 bounds the identities' degree "
                      "after clearing determinant denominators"})
        s = context.sampler.spawn(points)
        Q, K = s.prime_field((a, d), PRIME), s.prime_field((a, d), PRIME)
        J = jacobian_mod_p(lambda w, X, be: w[1].T @ w[0], [Q, K], None, PRIME)
        tangents = symmetry_tangents([Q, K, np.zeros((0, d), dtype=np.int64)],
                                     lambda x: (-x) % PRIME, rescaling=False)
        in_kernel = not np.any(matmul_mod_p(J, tangents.T.copy(), PRIME))
        orbit_dim = rank_mod_p(tangents, PRIME)
        rank = rank_mod_p(J, PRIME)
        dimension = rank_verdict(
            "determinantal variety", rank, a * (2 * d - a), degree=1,
            what="rank of the Jacobian of (Q, K) -> K^T Q",
            evidence={"parameters": 2 * a * d, "gl_a_orbit_dimension": orbit_dim,
                      "orbit_in_kernel": in_kernel, "certified": in_kernel and rank == 2 * a * d - orbit_dim},
            counterexample={"Q": Q.tolist(), "K": K.tolist()})
        return combine({"lemma3.1": orbit, "dimension": dimension}, summary=(
            f"{orbit.summary}; {dimension.summary} = a(2d - a)"))

    def show(self, params, fmt="text", limit=None):
        d, a = params["d"][0], params["a"][0]
        return formula_show([("Lemma 3.1", "K' = C K, Q' = C^{-T} Q, C in GL_a", None),
                              ("generic fibre dimension", "dim GL_a = a^2", a * a),
                              ("determinantal variety", "a(2d - a)", a * (2 * d - a))], fmt)


# -- Thm 3.2 -------------------------------------------------------------------------------------
def _phi(X, A_, V):
    return lightning_attention(X, mod_p(A_), mod_p(V)).value


class FibreSingleLayerClaim(SingleLayerClaim):
    """HMK Thm 3.2 (t >= 2): fibres of (A, V) -> phi_W.

    (1) (lambda A, V / lambda) gives phi_W; (2) for A = k (x) q, V = h (x) v the second
    preimage W' = (v (x) q, h (x) k) gives phi_W and is not a rescaling of W (d >= 2);
    (3) phi_W = 0 for A = 0 or V = 0 and phi_W != 0 for nonzero rank-one A, V (a witness X);
    (4) generic fibres are one-dimensional: the Jacobian of (A, V) -> phi has rank
    d^2 + dd' - 1 and its kernel contains (A, -V).  ``exact``: F_p at random points;
    ``symbolic``: (1)-(3) as SymPy identities in generic vectors and X (small sizes), (4) exact.
    """

    id = "fibre-single-layer"
    source = "HMK Thm 3.2"
    statement = ("Fibres of (A, V) -> phi_W are the rescalings (lambda A, V/lambda), plus the swap "
                 "W' = (v⊗q, h⊗k) when A = k⊗q, V = h⊗v; phi_W = 0 iff A = 0 or V = 0.")
    methods = ("exact", "symbolic")
    examples = ({"d": [2], "dprime": 1, "t": 2}, {"d": [3], "dprime": 2, "t": 3})
    #: symbolic expansion is refused above this many entries of X
    MAX_SYMBOLIC_INPUT = 12

    def _exact_identities(self, d, dp, t, context) -> dict[str, Verdict]:
        points = context.samples or IDENTITY_POINTS
        failures = {"rescaling": [], "swap": [], "zero": []}
        witnesses = []
        for b in range(points):
            s = context.sampler.spawn(b)
            X = prime_inputs(s, INPUTS_PER_POINT, d, t)
            A_, V = s.prime_field((d, d), PRIME), s.prime_field((dp, d), PRIME)
            lam = int(s.prime_field((), PRIME - 1)) + 1
            lam_inv = pow(lam, -1, PRIME)
            base = _phi(X, A_, V)
            if not base.any() or not equal_values(_phi(X, A_ * lam % PRIME, V * lam_inv % PRIME), base):
                failures["rescaling"].append({"why": "(lambda A, V/lambda) changes phi",
                                              "lambda": lam, "A": A_.tolist(), "V": V.tolist()})
            k, q, v = (s.prime_field(d, PRIME) for _ in range(3))
            h = s.prime_field(dp, PRIME)
            (A1, V1), (A2, V2) = rank_one_swap(k, q, h, v, PRIME)
            if not equal_values(_phi(X, A1, V1), _phi(X, A2, V2)):
                failures["swap"].append({"why": "W' = (v⊗q, h⊗k) has another phi",
                                         **{n: x.tolist() for n, x in zip("kqhv", (k, q, h, v))}})
            if d >= 2 and rank_mod_p(np.stack([A1.ravel(), A2.ravel()]), PRIME) < 2:
                failures["swap"].append({"why": "W' is a rescaling of W", "k": k.tolist(),
                                         "v": v.tolist()})
            zero_A, zero_V = np.zeros_like(A_), np.zeros_like(V)
            if np.any(_phi(X, zero_A, V)) or np.any(_phi(X, A_, zero_V)):
                failures["zero"].append({"why": "phi_W != 0 with A = 0 or V = 0"})
            nonzero = _phi(X, A1, V1)
            if not np.any(nonzero):
                failures["zero"].append({"why": "phi_W = 0 for nonzero rank-one A, V",
                                         "A": A1.tolist(), "V": V1.tolist(), "X": X.value.tolist()})
            else:
                witnesses.append(int(np.count_nonzero(nonzero)))
        degree = 7  # 3 in X, at most 4 in (k, q, h, v) or (A, V, lambda, 1/lambda) cleared
        return {
            "rescaling": identity_verdict(
                "rescaling", failures["rescaling"], points, degree, points,
                f"phi(lambda A, V/lambda) = phi(A, V) at {points} random points"),
            "rank-one-swap": identity_verdict(
                "rank-one swap", failures["swap"], points, degree, points,
                f"phi(v⊗q, h⊗k) = phi(k⊗q, h⊗v) at {points} random points"),
            "zero-fibre": identity_verdict(
                "zero fibre", failures["zero"], points, degree, points,
                "phi = 0 for A = 0 or V = 0; nonzero rank-one (A, V) give phi != 0",
                {"nonzero_output_entries": witnesses})}

    def _symbolic_identities(self, d, dp, t) -> dict[str, Verdict]:
        if d * t > self.MAX_SYMBOLIC_INPUT:
            raise BadInput(f"symbolic expansion with d*t = {d * t} > {self.MAX_SYMBOLIC_INPUT} "
                           "input entries is refused; use --method exact")
        vec = lambda name, n: sympy.Matrix(sympy.symbols(f"{name}1:{n + 1}"))
        k, q, v, h = vec("k", d), vec("q", d), vec("v", d), vec("h", dp)
        X = sympy.Matrix(d, t, lambda i, j: sympy.Symbol(f"x{i + 1}_{j + 1}"))
        A_ = sympy.Matrix(d, d, lambda i, j: sympy.Symbol(f"a{i + 1}_{j + 1}"))
        V = sympy.Matrix(dp, d, lambda i, j: sympy.Symbol(f"w{i + 1}_{j + 1}"))
        lam = sympy.Symbol("lambda")
        phi = lambda A_, V: lightning_attention(X, A_, V).applyfunc(sympy.expand)
        out = {}
        for key, name, lhs, rhs in [
                ("rescaling", "rescaling", phi(lam * A_, V / lam), phi(A_, V)),
                ("rank-one-swap", "rank-one swap", phi(v * q.T, h * k.T), phi(k * q.T, h * v.T))]:
            difference = (lhs - rhs).applyfunc(sympy.expand)
            terms = sum(len(sympy.Add.make_args(e)) for e in rhs)
            if difference != sympy.zeros(dp, t):
                out[key] = refuted(method="symbolic", summary=f"{name}: the identity fails",
                                   counterexample={"difference": str(difference)})
            else:
                out[key] = proved(checked=dp * t, summary=f"{name}: proved in Q[weights, X]",
                                  evidence={"terms_per_side": terms, "terms_after": 0})
        rank_one = phi(k * q.T, h * v.T)
        zero = phi(sympy.zeros(d, d), V) == sympy.zeros(dp, t) == phi(A_, sympy.zeros(dp, d))
        if zero and rank_one != sympy.zeros(dp, t):
            out["zero-fibre"] = proved(checked=3, summary="zero fibre: phi = 0 for A = 0 or V = 0; "
                                       "phi(k⊗q, h⊗v) is a nonzero polynomial",
                                       evidence={"terms_rank_one": sum(len(sympy.Add.make_args(e))
                                                                       for e in rank_one)})
        else:
            out["zero-fibre"] = refuted(method="symbolic", summary="zero fibre: the statement fails",
                                        counterexample={"phi_rank_one": str(rank_one)})
        return out

    def _generic_fibre(self, d, dp, t, context) -> Verdict:
        s = context.sampler.spawn(10_000)
        A_, V = s.prime_field((d, d), PRIME), s.prime_field((dp, d), PRIME)
        P = d * d + dp * d
        count = math.ceil((P + 8) / (dp * t))
        X = s.prime_field((count, d, t), PRIME)
        J = jacobian_mod_p(lambda w, X, be: lightning_attention(X, w[0], w[1]), [A_, V], X, PRIME)
        scaling = np.concatenate([A_.ravel(), (-V.ravel()) % PRIME])
        if np.any(matmul_mod_p(J, scaling[:, None].copy(), PRIME)):
            return refuted(method="exact", summary="generic fibre: (A, -V) is not in the kernel",
                           counterexample={"A": A_.tolist(), "V": V.tolist()})
        rank = rank_mod_p(J, PRIME)
        return rank_verdict("generic fibre", rank, P - 1, degree=4,
                            what="rank of the Jacobian of (A, V) -> phi",
                            evidence={"parameters": P, "kernel_dimension": P - rank,
                                       "rescaling_in_kernel": True, "samples": count},
                            counterexample={"A": A_.tolist(), "V": V.tolist()})

    def check(self, method, params, context):
        d, dp, _ = single_layer_dims(params)
        t = params["t"]
        parts = (self._symbolic_identities(d, dp, t) if method == "symbolic"
                 else self._exact_identities(d, dp, t, context))
        return combine({**parts, "generic-fibre": self._generic_fibre(d, dp, t, context)})

    def show(self, params, fmt="text", limit=None):
        d, dp, _ = single_layer_dims(params)
        return formula_show([("rescaling", "(A, V) ~ (lambda A, V/lambda)", None),
                              ("rank-one swap", "(k⊗q, h⊗v) ~ (v⊗q, h⊗k)", None),
                              ("generic fibre dimension", "1", 1),
                              ("generic rank of d phi", "d^2 + dd' - 1", d * d + d * dp - 1)], fmt)


# -- Thm 3.4, Lemma A.3, Cor A.1-A.6 ------------------------------------------------------------------
def _of_printed_critical_form(A_, V) -> bool:
    """Whether A = k⊗q and V = h⊗k for some vectors (HMK Lemma A.3 as printed): both of rank
    <= 1 and, when both are nonzero, the column space of A is the row space of V."""
    rank = lambda M: rank_mod_p(M, PRIME)
    if rank(A_) > 1 or rank(V) > 1:
        return False
    if not A_.any() or not V.any():
        return True
    return rank(np.concatenate([A_, V.T], axis=1)) == 1


def _lemma_a3_erratum(corrected: Verdict) -> Erratum:
    """Lemma A.3 as printed omits the strata A = 0 and V = 0 that its proof's first case
    covers: a misprinted statement when the corrected form holds at every stratum
    (``corrected``), else a false statement."""
    printed = "W is critical iff A = k⊗q and V = h⊗k"
    if corrected.status.holds:
        return Erratum(ErrorKind.MISPRINTED_FORMULA, "HMK Lemma A.3", printed,
                       "W is critical iff A = 0, or V = 0, or A = k⊗q and V = h⊗k (the proof's "
                       "first case)", "part lemmaA.3-corrected: " + corrected.status.value)
    return Erratum(ErrorKind.FALSE_STATEMENT, "HMK Lemma A.3", printed)


class SingularLocusClaim(SingleLayerClaim):
    """HMK Thm 3.4 with Lemma A.3 and Corollaries A.1-A.6 (one layer, A unconstrained).

    At points W of each stratum the exact rank of the Jacobian of (A, V) -> phi (F_p, random
    vectors) is compared with the generic rank d^2 + dd' - 1 (kernel dimension 1 = non-critical):

    * critical form A = k⊗q, V = h⊗k: the kernel is larger and contains (p⊗q, -h⊗p)
      (Lemma A.3's proof);
    * A = 0 or V = 0: the proof of Lemma A.3 calls these critical, its statement as printed
      does not contain them (A = 0 with rank V >= 2, or V = 0 with rank A >= 2, is not
      k⊗q, h⊗k): the check reports the printed lemma ``refuted`` and the corrected statement
      "critical iff A = 0, or V = 0, or (A, V) = (k⊗q, h⊗k)";
    * rank-one points (k⊗q, h⊗v) with v not parallel to k: not critical, yet singular
      (Cor A.4): the second preimage W' of Thm 3.2 gives the same phi and a different tangent
      space (rank [J(W) J(W')] > rank J(W)), so two branches meet;
    * points with rk(A) rk(V) >= 2 and generic points: not critical;
    * Prop A.5: the part (x_2^T A x_1) V x_2 of phi alone has the generic Jacobian rank
      d^2 + dd' - 1 (phi is determined by it, locally);
    * boundary (Cor A.6): for complex k = u + iw, (k⊗q, h⊗k̄) gives a real phi (checked
      exactly with Gaussian integers) whose only preimages are non-real (k, k̄ independent);
      as w -> 0 it tends to the critical form.
    """

    id = "singular-locus"
    source = "HMK Thm 3.4, Lemma A.3, Cor A.1-A.6"
    statement = ("The differential of (A, V) -> phi drops rank exactly at A = k⊗q, V = h⊗k "
                 "(Lemma A.3); phi_W is singular iff rk(A) rk(V) <= 1; boundary points are the "
                 "critical values.")
    methods = ("exact",)
    examples = ({"d": [2], "dprime": 1, "t": 2}, {"d": [3], "dprime": 2, "t": 2})


    def hypothesis_violation(self, params):
        d, dp, _ = single_layer_dims(params)
        if params["t"] < 2 or d < 2:
            return f"HMK §3.2 assumes t >= 2 and d >= 2 (A unconstrained); got d={d}, t={params['t']}"
        return None

    def check_exact(self, params, context):
        d, dp, _ = single_layer_dims(params)
        t = params["t"]
        s = context.sampler
        P = d * d + dp * d
        count = math.ceil((P + 8) / (dp * t))
        X = s.spawn(0).prime_field((count, d, t), PRIME)
        jac = lambda A_, V: jacobian_mod_p(lambda w, X, be: lightning_attention(X, w[0], w[1]),
                                           [A_, V], X, PRIME)
        rank = lambda M: rank_mod_p(M, PRIME)
        vec = lambda key, n: s.spawn(key).prime_field(n, PRIME)
        k, q, v = vec(1, d), vec(2, d), vec(3, d)
        h = vec(5, dp)
        A_gen, V_gen = s.spawn(6).prime_field((d, d), PRIME), s.spawn(7).prime_field((dp, d), PRIME)
        outer = lambda x, y: np.outer(x, y) % PRIME
        generic = P - 1
        strata = {
            "generic": (A_gen, V_gen),
            "rank-one A, generic V": (outer(k, q), V_gen),
            "generic A, rank-one V": (A_gen, outer(h, v)),
            "rank-one (k⊗q, h⊗v), v not parallel to k": (outer(k, q), outer(h, v)),
            "critical form (k⊗q, h⊗k)": (outer(k, q), outer(h, k)),
            "A = 0, generic V": (np.zeros((d, d), dtype=np.int64), V_gen),
            "generic A, V = 0": (A_gen, np.zeros((dp, d), dtype=np.int64)),
        }
        ranks = {name: rank(jac(*W)) for name, W in strata.items()}
        table = {name: {"rank": r, "kernel_dimension": P - r, "critical": r < generic,
                        "rk_A": rank(W[0]), "rk_V": rank(W[1]),
                        "printed_critical_form": _of_printed_critical_form(*W)}
                 for (name, W), r in zip(strata.items(), ranks.values())}
        evidence = {"parameters": P, "generic_rank_expected": generic, "samples": count,
                    "strata": table}
        parts = {}
        # Lemma A.3 in the corrected form (A = 0 or V = 0 added) ...
        corrected_wrong = [n for n, row in table.items() if row["critical"] != (
            row["printed_critical_form"] or row["rk_A"] == 0 or row["rk_V"] == 0)]
        A1, V1 = strata["critical form (k⊗q, h⊗k)"]
        J_crit = jac(A1, V1)
        kernel_vectors = np.stack([critical_kernel_vector(q, h, vec(20 + i, d), PRIME)
                                   for i in range(d)])
        vectors_in_kernel = not np.any(matmul_mod_p(J_crit, kernel_vectors.T.copy(), PRIME))
        vector_rank = rank(kernel_vectors)
        if corrected_wrong or not vectors_in_kernel or ranks["generic"] != generic:
            parts["lemmaA.3-corrected"] = refuted(method="exact", evidence={"strata": table}, summary=(
                "Lemma A.3 (corrected): criticality differs from 'A = 0 or V = 0 or "
                f"(k⊗q, h⊗k)' at {corrected_wrong or 'the kernel vectors (p⊗q, -h⊗p)'}"),
                counterexample={"strata": corrected_wrong, "kernel_vectors_in_kernel": vectors_in_kernel})
        else:
            parts["lemmaA.3-corrected"] = verified(
                checked=len(table), degree=minor_degree(generic, 4), prime=PRIME, points=1,
                evidence={"kernel_vectors_rank": vector_rank},
                summary=("Lemma A.3 (corrected): with 'A = 0 or V = 0' added, exactly the strata "
                         "of that form are critical; (p⊗q, -h⊗p) span a "
                         f"{vector_rank}-dimensional part of the kernel"))
        # ... and as printed
        printed_wrong = [n for n, row in table.items() if row["critical"] != row["printed_critical_form"]]
        if printed_wrong:
            name = printed_wrong[-1]
            W = strata[name]
            parts["lemmaA.3-printed"] = refuted(method="exact", summary=(
                f"Lemma A.3 as printed: '{name}' is critical (Jacobian rank {ranks[name]} < "
                f"{generic}) but not of the form A = k⊗q, V = h⊗k (rk A = {table[name]['rk_A']}, "
                f"rk V = {table[name]['rk_V']}); corrected: W is critical iff A = 0, or V = 0, or "
                "A = k⊗q and V = h⊗k (the proof's 'first case')"),
                counterexample={"field": f"F_{PRIME}", "A": W[0].tolist(), "V": W[1].tolist(),
                                "jacobian_rank": ranks[name], "generic_rank": generic,
                                "inputs_seed": context.seed},
                erratum=_lemma_a3_erratum(parts["lemmaA.3-corrected"]))
        parts["propA.5"] = self._segre_term(A_gen, V_gen, generic, context)
        parts["corA.4"] = self._two_branches(strata, jac, k, q, h, v, generic)
        parts["corA.6"] = self._boundary(d, dp, t, context)
        verdict = combine(parts)
        verdict.evidence.update(evidence)
        return verdict

    @staticmethod
    def _segre_term(A_, V, generic, context) -> Verdict:
        """Prop A.5: phi_W is determined by its part linear in x_1 and quadratic in x_2,
        (x_2^T A x_1) V x_2; locally: that part alone has the generic Jacobian rank."""
        d = A_.shape[0]
        P = A_.size + V.size
        count = math.ceil((P + 8) / V.shape[0])
        X = context.sampler.spawn(50).prime_field((count, d, 2), PRIME)

        def term(w, X, be):
            x1, x2 = X[:, 0:1], X[:, 1:2]
            return (w[1] @ x2) @ (x2.T @ w[0] @ x1)

        rank = rank_mod_p(jacobian_mod_p(term, [A_, V], X, PRIME), PRIME)
        return rank_verdict("Prop A.5", rank, generic, degree=4,
                            what="rank of the Jacobian of (A, V) -> (x_2^T A x_1) V x_2",
                            evidence={"samples": count},
                            counterexample={"A": A_.tolist(), "V": V.tolist()})

    @staticmethod
    def _two_branches(strata, jac, k, q, h, v, generic) -> Verdict:
        (A1, V1), (A2, V2) = rank_one_swap(k, q, h, v, PRIME)
        J1, J2 = jac(A1, V1), jac(A2, V2)
        r1, r2 = rank_mod_p(J1, PRIME), rank_mod_p(J2, PRIME)
        joint = rank_mod_p(np.concatenate([J1, J2], axis=1), PRIME)
        evidence = {"rank_J_W": r1, "rank_J_W_prime": r2, "rank_of_both": joint}
        if r1 == r2 == generic and joint > generic:
            return verified(checked=2, degree=minor_degree(joint, 4), prime=PRIME, points=1,
                            evidence=evidence, summary=(
                                "Cor A.4: at (k⊗q, h⊗v) both preimages are non-critical with "
                                f"different tangent spaces (joint rank {joint} > {generic}): singular"))
        return refuted(method="exact", evidence=evidence, summary=(
            "Cor A.4: the rank-one point does not show two branches"),
            counterexample={"k": k.tolist(), "q": q.tolist(), "h": h.tolist(), "v": v.tolist(),
                            **evidence})

    @staticmethod
    def _boundary(d, dp, t, context) -> Verdict:
        s = context.sampler.spawn(99)
        u, w, q = (s.integers(d, -3, 3) for _ in range(3))
        h = s.integers(dp, -3, 3)
        w[0] = w[0] or 1            # w != 0: k = u + i w is not real
        X = s.integers((d, t), -3, 3)
        k = u + 1j * w
        phi = lightning_attention(X.astype(complex), np.outer(k, q), np.outer(h, np.conj(k)))
        independent = np.linalg.matrix_rank(np.stack([u, w]).astype(float)) == 2
        evidence = {"u": u.tolist(), "w": w.tolist(), "q": q.tolist(), "h": h.tolist(),
                    "X": X.tolist(), "max_imaginary": float(np.abs(phi.imag).max()),
                    "k_conj_k_independent": bool(independent)}
        if np.any(phi.imag != 0):
            return refuted(method="exact", evidence=evidence, counterexample=evidence,
                           summary="Cor A.6: phi(k⊗q, h⊗k̄) is not real")
        return verified(checked=1, degree=6, prime=PRIME, points=1, evidence=evidence, summary=(
            "Cor A.6: phi(k⊗q, h⊗conj k) is real (exact Gaussian-integer arithmetic)"
            + (" with k, conj k independent" if independent else "")
            + "; it tends to the critical form as Im k -> 0"))

    def show(self, params, fmt="text", limit=None):
        d, dp, _ = single_layer_dims(params)
        return formula_show([("generic rank of d phi", "d^2 + dd' - 1", d * d + d * dp - 1),
                              ("critical points (Lemma A.3 as printed)", "A = k⊗q, V = h⊗k", None),
                              ("critical points (corrected)",
                               "A = 0, or V = 0, or (A, V) = (k⊗q, h⊗k)", None),
                              ("singular points (Thm 3.4)", "rk(A) rk(V) <= 1", None),
                              ("boundary points (Cor A.6)", "phi(k⊗q, h⊗k)", None)], fmt)


CLAIMS = [MatmulFibreClaim(), FibreSingleLayerClaim(), SingularLocusClaim()]

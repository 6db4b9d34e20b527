"""HMK claims about fibres and the singular locus: Lemma 3.1, Thm 3.2, Thm 3.4 with
Lemma A.3 and Corollaries A.1-A.6, Lemmas 3.5 and 3.6 with eqs (8)-(12), Thm 3.7 with eq (13).

Exact checks run over F_p (p = 2^31 - 1) at random points: identities by evaluation (with
nonzero controls, so no check passes on the zero polynomial), local fibre dimensions as
Jacobian kernels (:mod:`kernels.jacobian`); SymPy identities where the method is symbolic.
"""

from __future__ import annotations

import math

import numpy as np
import sympy

from kernels.claim import Claim
from kernels.errors import BadInput
from kernels.jacobian import jacobian_mod_p
from kernels.primefield import matmul_mod_p, rank_mod_p
from kernels.verdict import Verdict, combine, proved, refuted, verified
from lightning_alg.claims.hmk_support import (
    INPUTS_PER_POINT, IDENTITY_POINTS, LAYERS, NETWORK_PARAMS, PRIME, A, D,
    SingleLayerClaim,
    T, equal_values, formula_show, identity_verdict, minor_degree, mod_p, prime_inputs,
    rank_verdict, single_layer_dims)
from lightning_alg.dimension import Architecture, architecture, entry_degree
from lightning_alg.fibres import (critical_kernel_vector, factor_from_rows, gauge_action,
                                  gauge_between, inverse_mod_p, rank_one_swap,
                                  symmetry_tangents)
from lightning_alg.model import (Layer, attention_matrix, deep_lightning_attention,
                                 lightning_attention)
from lightning_alg.virtual_weights import (change_of_basis, recursion_output, unrolled_factors,
                                           unrolled_output, virtual_weights)


# -- Lemma 3.1 ----------------------------------------------------------------------------------
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
        return combine([orbit, dimension], summary=(
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

    def _exact_identities(self, d, dp, t, context) -> list[Verdict]:
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
        return [
            identity_verdict("rescaling", failures["rescaling"], points, degree, points,
                             f"phi(lambda A, V/lambda) = phi(A, V) at {points} random points"),
            identity_verdict("rank-one swap", failures["swap"], points, degree, points,
                             f"phi(v⊗q, h⊗k) = phi(k⊗q, h⊗v) at {points} random points"),
            identity_verdict("zero fibre", failures["zero"], points, degree, points,
                             "phi = 0 for A = 0 or V = 0; nonzero rank-one (A, V) give phi != 0",
                             {"nonzero_output_entries": witnesses})]

    def _symbolic_identities(self, d, dp, t) -> list[Verdict]:
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
        out = []
        for name, lhs, rhs in [("rescaling", phi(lam * A_, V / lam), phi(A_, V)),
                               ("rank-one swap", phi(v * q.T, h * k.T), phi(k * q.T, h * v.T))]:
            difference = (lhs - rhs).applyfunc(sympy.expand)
            terms = sum(len(sympy.Add.make_args(e)) for e in rhs)
            if difference != sympy.zeros(dp, t):
                out.append(refuted(method="symbolic", summary=f"{name}: the identity fails",
                                   counterexample={"difference": str(difference)}))
            else:
                out.append(proved(checked=dp * t, summary=f"{name}: proved in Q[weights, X]",
                                  evidence={"terms_per_side": terms, "terms_after": 0}))
        rank_one = phi(k * q.T, h * v.T)
        zero = phi(sympy.zeros(d, d), V) == sympy.zeros(dp, t) == phi(A_, sympy.zeros(dp, d))
        if zero and rank_one != sympy.zeros(dp, t):
            out.append(proved(checked=3, summary="zero fibre: phi = 0 for A = 0 or V = 0; "
                              "phi(k⊗q, h⊗v) is a nonzero polynomial",
                              evidence={"terms_rank_one": sum(len(sympy.Add.make_args(e))
                                                              for e in rank_one)}))
        else:
            out.append(refuted(method="symbolic", summary="zero fibre: the statement fails",
                               counterexample={"phi_rank_one": str(rank_one)}))
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
        parts.append(self._generic_fibre(d, dp, t, context))
        return combine(parts, summary="; ".join(v.summary for v in parts))

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
        parts = []
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
            parts.append(refuted(method="exact", evidence={"strata": table}, summary=(
                "Lemma A.3 (corrected): criticality differs from 'A = 0 or V = 0 or "
                f"(k⊗q, h⊗k)' at {corrected_wrong or 'the kernel vectors (p⊗q, -h⊗p)'}"),
                counterexample={"strata": corrected_wrong, "kernel_vectors_in_kernel": vectors_in_kernel}))
        else:
            parts.append(verified(checked=len(table), degree=minor_degree(generic, 4), prime=PRIME,
                                  points=1, evidence={"kernel_vectors_rank": vector_rank},
                                  summary=("Lemma A.3 (corrected): with 'A = 0 or V = 0' added, "
                                           "exactly the strata of that form are critical; "
                                           f"(p⊗q, -h⊗p) span a {vector_rank}-dimensional part "
                                           "of the kernel")))
        # ... and as printed
        printed_wrong = [n for n, row in table.items() if row["critical"] != row["printed_critical_form"]]
        if printed_wrong:
            name = printed_wrong[-1]
            W = strata[name]
            parts.append(refuted(method="exact", summary=(
                f"Lemma A.3 as printed: '{name}' is critical (Jacobian rank {ranks[name]} < "
                f"{generic}) but not of the form A = k⊗q, V = h⊗k (rk A = {table[name]['rk_A']}, "
                f"rk V = {table[name]['rk_V']}); corrected: W is critical iff A = 0, or V = 0, or "
                "A = k⊗q and V = h⊗k (the proof's 'first case')"),
                counterexample={"field": f"F_{PRIME}", "A": W[0].tolist(), "V": W[1].tolist(),
                                "jacobian_rank": ranks[name], "generic_rank": generic,
                                "inputs_seed": context.seed}))
        parts.append(self._segre_term(A_gen, V_gen, generic, context))
        parts.append(self._two_branches(strata, jac, k, q, h, v, generic))
        parts.append(self._boundary(d, dp, t, context))
        verdict = combine(parts, summary="; ".join(v.summary for v in parts))
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


# -- Lemmas 3.5, 3.6, eqs 8-12 --------------------------------------------------------------------------
def _weights_degree(layers: int) -> int:
    """Degree in (A, V) of a layer-l output: 2 + 3 deg_{l-1}."""
    degree = 0
    for _ in range(layers):
        degree = 2 + 3 * degree
    return degree


class VirtualWeightsClaim(Claim):
    """HMK Lemma 3.6 (eqs 10, 11), eq (12) and eq (9) / Lemma 3.5.

    ``symbolic``: with matrix symbols X, A_i, V_i (any sizes), the layer-by-layer network,
    the recursion with D_i and the unrolled product of eq (12) (3-adic rule) reduce to the
    same word in the free algebra with transpose: an identity for all matrices; the
    change of basis (9) with symbolic C_i in GL leaves every M_i and L unchanged.
    ``exact``: the same comparisons at random points over F_p.  Both add Lemma 3.5's
    local statement when d is a bottleneck: the Jacobian of (A, V) -> (M, L) has kernel
    dimension (l - 1) delta^2 (the GL_delta orbits), exactly over F_p.
    """

    id = "virtual-weights"
    source = "HMK Lemma 3.5, Lemma 3.6, eqs (8)-(12)"
    statement = ("phi_W = L X prod (D_{l-i} X^T M_{l-i+1} X) (Lemma 3.6) = eq (12) with the 3-adic "
                 "rule; eq (9) leaves (M, L) unchanged; its orbits are the fibres of (A, V) -> (M, L).")
    params = (LAYERS, D, T)
    methods = ("symbolic", "exact")
    examples = ({"d": [3, 3, 3], "t": 3}, {"d": [3, 2, 2, 3], "t": 3, "method": "exact"})

    def validate(self, params):
        architecture(params)

    def auto_method(self, params):
        return "symbolic" if architecture(params).layers <= 2 else "exact"

    def _arch(self, params) -> Architecture:
        return architecture(params)

    def check_symbolic(self, params, context):
        arch = self._arch(params)
        d, l = arch.d, arch.layers
        X = sympy.MatrixSymbol("X", d[0], arch.t)
        As = [sympy.MatrixSymbol(f"A{i}", d[i - 1], d[i - 1]) for i in range(1, l + 1)]
        Vs = [sympy.MatrixSymbol(f"V{i}", d[i], d[i - 1]) for i in range(1, l + 1)]
        Cs = [sympy.MatrixSymbol(f"C{i}", d[i], d[i]) for i in range(1, l)]
        direct = deep_lightning_attention(X, [Layer(a, v) for a, v in zip(As, Vs)]).doit()
        Ms, L = virtual_weights(As, Vs)
        parts = []
        for name, expr in [("Lemma 3.6 (eqs 10-11)", recursion_output(Ms, L, X)),
                           ("eq (12), 3-adic rule", unrolled_output(Ms, L, X))]:
            word = expr.doit()
            if word == direct:
                parts.append(proved(checked=1, summary=f"{name}: the same word as the network",
                                    evidence={"word_length": len(direct.args)}))
            else:
                parts.append(self._exact_identity(name, arch, context))
        new_A, new_V = change_of_basis(As, Vs, Cs, [c.I for c in Cs])
        Ms2, L2 = virtual_weights(new_A, new_V)
        same = all(m2.doit() == m.doit() for m2, m in zip(Ms2, Ms)) and L2.doit() == L.doit()
        parts.append(proved(checked=l + 1, summary="eq (9) leaves M_i and L unchanged",
                            evidence={"group": "GL"}) if same else self._exact_symmetry(arch, context))
        parts += self._lemma_35(arch, context)
        return combine(parts, summary="; ".join(v.summary for v in parts))

    def check_exact(self, params, context):
        arch = self._arch(params)
        parts = [self._exact_identity("Lemma 3.6 (eqs 10-11)", arch, context),
                 self._exact_identity("eq (12), 3-adic rule", arch, context),
                 self._exact_symmetry(arch, context)]
        parts += self._lemma_35(arch, context)
        return combine(parts, summary="; ".join(v.summary for v in parts))

    @staticmethod
    def _random_network(arch, s):
        As = [s.prime_field((arch.d[i - 1],) * 2, PRIME) for i in range(1, arch.layers + 1)]
        Vs = [s.prime_field((arch.d[i], arch.d[i - 1]), PRIME) for i in range(1, arch.layers + 1)]
        return As, Vs

    def _exact_identity(self, name, arch, context) -> Verdict:
        points = context.samples or IDENTITY_POINTS
        formula = recursion_output if name.startswith("Lemma") else unrolled_output
        failures = []
        for b in range(points):
            s = context.sampler.spawn(b)
            As, Vs = self._random_network(arch, s)
            X = prime_inputs(s, INPUTS_PER_POINT, arch.d[0], arch.t)
            direct = deep_lightning_attention(X, [Layer(mod_p(a), mod_p(v)) for a, v in zip(As, Vs)])
            Ms, L = virtual_weights([mod_p(a) for a in As], [mod_p(v) for v in Vs])
            value = formula(Ms, L, X)
            if not direct.value.any():
                failures.append({"why": "the network output is zero: the check would be empty"})
            elif not equal_values(direct.value, value.value):
                failures.append({"why": "differs from the layer-by-layer network",
                                 "A": [a.tolist() for a in As], "V": [v.tolist() for v in Vs],
                                 "X": X.value.tolist()})
        return identity_verdict(name, failures, points, 3 ** arch.layers + _weights_degree(arch.layers),
                                points, f"equals the network at {points} random points")

    def _exact_symmetry(self, arch, context) -> Verdict:
        points = context.samples or IDENTITY_POINTS
        failures = []
        for b in range(points):
            s = context.sampler.spawn(100 + b)
            As, Vs = self._random_network(arch, s)
            Cs = [s.prime_field((arch.d[i],) * 2, PRIME) for i in range(1, arch.layers)]
            inverses = [inverse_mod_p(c, PRIME) for c in Cs]
            modded = lambda ms: [mod_p(m) for m in ms]
            Ms, L = virtual_weights(modded(As), modded(Vs))
            new_A, new_V = change_of_basis(modded(As), modded(Vs), modded(Cs), modded(inverses))
            Ms2, L2 = virtual_weights(new_A, new_V)
            if not (all(equal_values(a.value, b.value) for a, b in zip(Ms, Ms2)) and equal_values(L.value, L2.value)):
                failures.append({"why": "eq (9) changes (M, L)", "C": [c.tolist() for c in Cs]})
        return identity_verdict("eq (9)", failures, points, 6 * sum(arch.d) + 4 * arch.layers,
                                points, f"(M, L) unchanged at {points} random points and C_i")

    def _lemma_35(self, arch, context) -> list[Verdict]:
        if arch.layers < 2 or arch.bottleneck_violation():
            return []
        delta, l = arch.delta, arch.layers
        As, Vs = self._random_network(arch, context.sampler.spawn(200))

        def to_virtual(w, X, be):
            Ms, L = virtual_weights(w[:l], w[l:])
            return Ms + [L]

        J = jacobian_mod_p(to_virtual, As + Vs, None, PRIME)
        P = J.shape[1]
        return [rank_verdict("Lemma 3.5", P - rank_mod_p(J, PRIME), (l - 1) * delta ** 2,
                             degree=2 * l, what="kernel dimension of d(A, V) -> (M, L)",
                             evidence={"parameters": P, "delta": delta},
                             counterexample={"A": [a.tolist() for a in As],
                                              "V": [v.tolist() for v in Vs]})]

    def show(self, params, fmt="text", limit=None):
        arch = self._arch(params)
        factors = " ".join(f"M{a}{'^T' if tr else ''}" for a, tr in unrolled_factors(arch.layers))
        return formula_show([("eq (11)", "L X (D_{l-1} X^T M_l X) ... (D_0 X^T M_1 X)", None),
                              ("eq (12) factors Mt_1..Mt_lt", factors, None),
                              ("number of factors", "(3^l - 1)/2", (3 ** arch.layers - 1) // 2)], fmt)


# -- Thm 3.7, eq 13 -------------------------------------------------------------------------------------
class FibreDeepClaim(Claim):
    """HMK Thm 3.7 with eq (13) and the symmetries of §3.3.

    Exact over F_p: (1) eq (13): (lambda_i M_i, rho L) with prod lambda_i^{3^{l-i}} = 1/rho
    gives the same phi (eq 11), and a control with 2 rho gives 2 phi != phi; (2) the GL_{a_i}
    action of Lemma 3.1 in every layer, the GL_{d_i} changes of basis of eq (9) and the layer
    rescalings, applied to random (Q, K, V), leave the network unchanged; (3) the local form of
    Thm 3.7: at random (M, L) (M_i in F^{d_0 x d_0}, L in F^{d_l x d_0}) the Jacobian of
    (M, L) -> phi has a kernel of dimension exactly l, spanned by the eq (13) tangents
    (dM_i = M_i, dL = -3^{l-i} L).
    """

    id = "fibre-deep"
    source = "HMK Thm 3.7, eq (13)"
    statement = ("For t >= 3, rk M_i >= 2 and M_i (i > 1) not skew, the fibre of phi over (M, L) "
                 "consists of the rescalings of eq (13); GL_a and GL_delta (eq 9) leave phi unchanged.")
    params = NETWORK_PARAMS
    methods = ("exact",)
    examples = ({"d": [3, 3, 3], "a": [2, 2], "t": 3}, {"d": [3, 2, 2, 3], "a": [2], "t": 3})

    def validate(self, params):
        architecture(params)

    def hypothesis_violation(self, params):
        arch = architecture(params)
        if arch.t < 3:
            return f"HMK Thm 3.7 needs t >= 3; got t={arch.t}"
        if min(arch.d) < 2 or min(arch.a) < 2:
            return ("HMK Thm 3.7's conditions (rk M_i >= 2) are generic only for d_i, a_i >= 2; "
                    f"got d={list(arch.d)}, a={list(arch.a)}")
        return None

    def check_exact(self, params, context):
        arch = architecture(params)
        parts = [self._rescaling(arch, context), self._weight_symmetries(arch, context),
                 self._local_fibre(arch, context)]
        return combine(parts, summary="; ".join(v.summary for v in parts))

    def _rescaling(self, arch, context) -> Verdict:
        l = arch.layers
        points = context.samples or IDENTITY_POINTS
        failures = []
        for b in range(points):
            s = context.sampler.spawn(b)
            Ms = [mod_p(s.prime_field((arch.d[0],) * 2, PRIME)) for _ in range(l)]
            L = mod_p(s.prime_field((arch.d[-1], arch.d[0]), PRIME))
            X = prime_inputs(s, INPUTS_PER_POINT, arch.d[0], arch.t)
            lams = [int(x) + 1 for x in s.prime_field(l, PRIME - 1)]
            rho = 1
            for i, lam in enumerate(lams, start=1):
                rho = rho * pow(lam, -(3 ** (l - i)), PRIME) % PRIME
            base = recursion_output(Ms, L, X).value
            scaled = recursion_output([m * lam for m, lam in zip(Ms, lams)], L * rho, X).value
            control = recursion_output([m * lam for m, lam in zip(Ms, lams)], L * (2 * rho), X).value
            if not equal_values(base, scaled) or equal_values(control, base):
                failures.append({"why": "eq (13) rescaling changes phi (or the control does not)",
                                 "lambda": lams, "rho": rho})
        return identity_verdict("eq (13)", failures, points, 3 ** arch.layers + 3 ** arch.layers,
                                points, f"phi(lambda M, rho L) = phi(M, L) at {points} random points")

    def _weight_symmetries(self, arch, context) -> Verdict:
        l = arch.layers
        points = context.samples or IDENTITY_POINTS
        func = lambda weights, X: deep_lightning_attention(X, [
            Layer(attention_matrix(mod_p(weights[i]), mod_p(weights[i + 1])), mod_p(weights[i + 2]))
            for i in range(0, 3 * l, 3)]).value
        failures = []
        for b in range(points):
            s = context.sampler.spawn(500 + b)
            weights = [s.prime_field(shape, PRIME) for shape in arch.weight_shapes()]
            X = prime_inputs(s, INPUTS_PER_POINT, arch.d[0], arch.t)
            moved = [w.copy() for w in weights]
            for i in range(l):              # Lemma 3.1 in layer i and its rescaling
                C = s.prime_field((arch.a[i],) * 2, PRIME)
                moved[3 * i], moved[3 * i + 1] = gauge_action(moved[3 * i], moved[3 * i + 1], C, PRIME)
                lam = int(s.prime_field((), PRIME - 1)) + 1
                moved[3 * i] = moved[3 * i] * lam % PRIME
                moved[3 * i + 2] = moved[3 * i + 2] * pow(lam, -1, PRIME) % PRIME
            for i in range(1, l):           # eq (9) between layers i and i + 1
                C = s.prime_field((arch.d[i],) * 2, PRIME)
                C_inv = inverse_mod_p(C, PRIME)
                moved[3 * (i - 1) + 2] = matmul_mod_p(C, moved[3 * (i - 1) + 2], PRIME)
                for j in (3 * i, 3 * i + 1, 3 * i + 2):
                    moved[j] = matmul_mod_p(moved[j], C_inv, PRIME)
            base = func(weights, X)
            if not base.any() or not equal_values(base, func(moved, X)):
                failures.append({"why": "a symmetry changes phi",
                                 "weights": [w.tolist() for w in weights]})
        return identity_verdict("GL_a, GL_delta, rescalings", failures, points,
                                3 ** l + 6 * sum(arch.d) + 4 * sum(arch.a), points,
                                f"phi unchanged at {points} random points and group elements")

    def _local_fibre(self, arch, context) -> Verdict:
        l, d0, dl = arch.layers, arch.d[0], arch.d[-1]
        s = context.sampler.spawn(900)
        Ms = [s.prime_field((d0, d0), PRIME) for _ in range(l)]
        L = s.prime_field((dl, d0), PRIME)
        P = l * d0 * d0 + dl * d0
        count = math.ceil((P + 8) / (dl * arch.t))
        X = s.prime_field((count, d0, arch.t), PRIME)
        J = jacobian_mod_p(lambda w, X, be: recursion_output(w[:l], w[l], X), Ms + [L], X, PRIME)
        tangents = []
        for i in range(1, l + 1):
            blocks = [np.zeros_like(m) for m in Ms] + [(-(3 ** (l - i)) * L) % PRIME]
            blocks[i - 1] = Ms[i - 1]
            tangents.append(np.concatenate([b.ravel() for b in blocks]))
        tangents = np.stack(tangents)
        in_kernel = not np.any(matmul_mod_p(J, tangents.T.copy(), PRIME))
        rank = rank_mod_p(J, PRIME)
        return rank_verdict("Thm 3.7 (local)", P - rank, l, degree=entry_degree(arch),
                            what="kernel dimension of d(M, L) -> phi",
                            evidence={"parameters": P, "samples": count,
                                       "eq13_tangents_in_kernel": in_kernel,
                                       "eq13_tangents_rank": rank_mod_p(tangents, PRIME)},
                            counterexample={"M": [m.tolist() for m in Ms], "L": L.tolist()})

    def show(self, params, fmt="text", limit=None):
        arch = architecture(params)
        l = arch.layers
        text = " * ".join(f"lambda_{i}^{3 ** (l - i)}" for i in range(1, l + 1))
        return formula_show([("eq (13)", f"{text} = 1/rho", None),
                              ("generic fibre dimension over (M, L)", "l", l)], fmt)


CLAIMS = [MatmulFibreClaim(), FibreSingleLayerClaim(), SingularLocusClaim(), VirtualWeightsClaim(),
          FibreDeepClaim()]

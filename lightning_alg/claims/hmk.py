"""The claims of HMK (Henry, Marchetti, Kohn): fibres, singular locus, virtual weights and the
dimension of the neuromanifold of lightning and softmax self-attention networks.

Exact checks run over F_p (p = 2^31 - 1) at random points: identities by evaluation,
dimensions as Jacobian ranks (:mod:`kernels.jacobian`) bracketed by the exact upper bound
from the symmetry orbits (:mod:`lightning_alg.fibres`).  Softmax claims are float64 with the
singular-value rule of :func:`kernels.jacobian.numerical_rank`.
"""

from __future__ import annotations

import json
import math

import numpy as np
import sympy

from kernels.backend import get_backend
from kernels.claim import CheckContext, Claim, Param
from kernels.errors import BadInput
from kernels.jacobian import (jacobian_float, jacobian_mod_p, numerical_rank, residues)
from kernels.primefield import matmul_mod_p, rank_mod_p
from kernels.sampling import DEFAULT_PRIME, Sampler
from kernels.verdict import Verdict, combine, consistent, proved, refuted, verified
from lightning_alg.dimension import (
    FORMULA_TEXT, Architecture, architecture, deep_dimension_corrected, deep_dimension_printed,
    entry_degree, eq5_parameters_printed, measure_exact, measure_numeric,
    parameter_space_dimension, single_layer_dimension, softmax_dimension_printed)
from lightning_alg.fibres import (critical_kernel_vector, factor_from_rows, gauge_action,
                                  gauge_between, inverse_mod_p, rank_one_swap,
                                  symmetry_tangents)
from lightning_alg.model import (Layer, attention_matrix, deep_lightning_attention,
                                 lightning_attention, softmax_attention)
from lightning_alg.virtual_weights import (change_of_basis, recursion_output, unrolled_factors,
                                           unrolled_output, virtual_weights)

PRIME = DEFAULT_PRIME
#: Random points per exact identity check (--samples overrides).
IDENTITY_POINTS = 4
#: Inputs X per point of an identity check.
INPUTS_PER_POINT = 3

D = Param("d", "dimension(s): one integer d, or d_0,...,d_l of a network (HMK Def 2)",
          kind="intlist")
A = Param("a", "attention dimension(s): one integer or a_1,...,a_l (default a_i = d_(i-1))",
          kind="intlist")
LAYERS = Param("layers", "number of layers l (default: from --d or --a)")
T = Param("t", "sequence length t")
DPRIME = Param("dprime", "output dimension d' (= d_l when --d is one integer)")
NETWORK_PARAMS = (LAYERS, D, A, T, DPRIME)
SINGLE_LAYER_PARAMS = (D, DPRIME, T)


# -- helpers ----------------------------------------------------------------------------------
def _single_layer(params: dict, with_a: bool = False) -> tuple[int, int, int | None]:
    """(d, d', a) of a one-layer claim: --d is d (with --dprime, default d' = d) or d,d';
    --a one integer (default a = d)."""
    if params.get("layers") not in (None, 1):
        raise BadInput("this claim is about one layer: --layers must be 1")
    d, dprime, a = params.get("d"), params.get("dprime"), params.get("a")
    if not d or len(d) > 2:
        raise BadInput("give --d as one integer d or as d,d'")
    if len(d) == 2 and dprime is not None and dprime != d[1]:
        raise BadInput(f"--dprime {dprime} contradicts --d {d[0]},{d[1]}")
    d, dprime = d[0], (d[1] if len(d) == 2 else dprime or d[0])
    if not with_a:
        return d, dprime, None
    if a is not None and len(a) != 1:
        raise BadInput("a single layer takes one integer --a")
    return d, dprime, (a[0] if a else d)


def _equal(x, y) -> bool:
    return bool(np.array_equal(np.asarray(x), np.asarray(y)))


def _inputs(sampler: Sampler, count: int, d: int, t: int):
    return residues(sampler.prime_field((count, d, t), PRIME), PRIME, batch_ndim=1)


def _mod(array):
    return residues(array, PRIME)


def _identity_verdict(name: str, failures: list, checked: int, degree: int, points: int,
                      summary: str, evidence: dict | None = None) -> Verdict:
    if failures:
        return refuted(method="exact", summary=f"{name}: {failures[0].pop('why')}",
                       counterexample={"field": f"F_{PRIME}", **failures[0]},
                       evidence=evidence or {})
    return verified(checked=checked, degree=degree, prime=PRIME, points=points,
                    summary=f"{name}: {summary}", evidence=evidence or {})


def _minor_degree(rank: int, degree: int) -> int:
    return max(1, rank * degree)


def _rank_verdict(name: str, measured: int, expected: int, degree: int, evidence: dict,
                  what: str, counterexample: dict) -> Verdict:
    evidence = {"measured_rank": measured, "expected": expected, **evidence}
    if measured != expected:
        return refuted(method="exact", evidence=evidence, counterexample={
            "field": f"F_{PRIME}", "measured_rank": measured, "expected": expected,
            **counterexample}, summary=f"{name}: {what} is {measured}, not {expected}")
    return verified(checked=1, degree=_minor_degree(measured, degree), prime=PRIME, points=1,
                    evidence=evidence, summary=f"{name}: {what} = {measured}")


def _dimension_verdict(name: str, formula: int, m, arch: Architecture, seed: int,
                       evidence: dict, corrected: int | None = None,
                       other_problems: tuple = ()) -> Verdict:
    """The verdict of 'formula = dimension' from a RankMeasurement, evidence at top level
    (the ``dimension`` command prints it)."""
    ev = {"formula_name": name, "formula": formula, **m.evidence(), **evidence}
    if corrected is not None:
        ev["corrected_formula"] = corrected
    problems = list(other_problems)
    if m.method == "numeric":
        m.numerical.require_clear(f"{name} at {arch.describe()}")
    if m.rank != formula:
        if m.rank > formula:
            how = "the measured rank is a lower bound, so the formula is too small"
        elif m.certified:
            how = "the rank equals P - dim(symmetry orbit), an upper bound: the dimension is exactly it"
        else:
            how = "a rank deficiency at a random point has probability <= the Schwartz-Zippel bound"
        problems.insert(0, {"formula": name, "value": formula, "measured": m.rank, "why": how})
    if problems:
        fix = f"; corrected formula gives {corrected}" if corrected is not None else ""
        first = problems[0]
        text = f"{first['formula']} gives {first['value']}, measured {first['measured']}"
        return refuted(method=m.method, evidence=ev, backend=m.backend, device=m.device,
                       max_residual=None if m.numerical is None else m.numerical.dropped_max,
                       counterexample={"architecture": arch.describe(), "seed": seed,
                                       "problems": problems,
                                       **({"prime": m.prime} if m.prime else {})},
                       summary=f"{text} ({first['why']}){fix}")
    how = ("certified: = P - dim(symmetry orbit)" if m.certified
           else "not certified by the symmetry bound")
    summary = f"{name} = {formula} = measured rank ({how})"
    if m.method == "exact":
        return verified(checked=1, degree=_minor_degree(m.rank, entry_degree(arch)),
                        prime=m.prime, points=1, evidence=ev, summary=summary)
    return consistent(checked=1, max_residual=m.numerical.dropped_max,
                      tolerance=m.numerical.tolerance, backend=m.backend, device=m.device,
                      evidence=ev, summary=summary + f"; smallest kept sigma/sigma_1 = "
                                                     f"{m.numerical.kept_min:.3g}")


def _formula_show(rows: list[tuple[str, str, int | None]], fmt: str) -> str:
    """(name, formula, value or None) rows in text, LaTeX (\\text names), M2 comments or JSON."""
    if fmt == "json":
        return json.dumps([{"name": n, "formula": f, "value": v} for n, f, v in rows], indent=1)
    value = lambda v: "" if v is None else f" = {v}"
    if fmt == "m2":
        return "\n".join(f"-- {n}: {f}{value(v)}" for n, f, v in rows)
    if fmt == "latex":
        return "\n".join(f"\\text{{{n}}}: \\ {f}{value(v)} \\\\" for n, f, v in rows)
    return "\n".join(f"{n}: {f}{value(v)}" for n, f, v in rows)


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
            if not _equal(matmul_mod_p(K1.T.copy(), Q1, PRIME), A_):
                failures.append({"why": "(C^{-T} Q, C K) changes K^T Q", "C": C.tolist(), **point})
            Q2, K2 = factor_from_rows(A_, PRIME)
            C2 = gauge_between(K, K2, PRIME)
            if not _equal(matmul_mod_p(K2.T.copy(), Q2, PRIME), A_):
                failures.append({"why": "the factorization read off A is not one", **point})
            elif not (_equal(matmul_mod_p(C2, K, PRIME), K2)
                      and _equal(matmul_mod_p(C2.T.copy(), Q2, PRIME), Q)):
                failures.append({"why": "no C with K' = C K and Q' = C^{-T} Q",
                                 "K2": K2.tolist(), "Q2": Q2.tolist(), **point})
            checked += 1
        orbit = _identity_verdict(
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
        dimension = _rank_verdict(
            "determinantal variety", rank, a * (2 * d - a), degree=1,
            what="rank of the Jacobian of (Q, K) -> K^T Q",
            evidence={"parameters": 2 * a * d, "gl_a_orbit_dimension": orbit_dim,
                      "orbit_in_kernel": in_kernel, "certified": in_kernel and rank == 2 * a * d - orbit_dim},
            counterexample={"Q": Q.tolist(), "K": K.tolist()})
        return combine([orbit, dimension], summary=(
            f"{orbit.summary}; {dimension.summary} = a(2d - a)"))

    def show(self, params, fmt="text", limit=None):
        d, a = params["d"][0], params["a"][0]
        return _formula_show([("Lemma 3.1", "K' = C K, Q' = C^{-T} Q, C in GL_a", None),
                              ("generic fibre dimension", "dim GL_a = a^2", a * a),
                              ("determinantal variety", "a(2d - a)", a * (2 * d - a))], fmt)


# -- Thm 3.2 -------------------------------------------------------------------------------------
def _phi(X, A_, V):
    return lightning_attention(X, _mod(A_), _mod(V)).value


class FibreSingleLayerClaim(Claim):
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
    params = SINGLE_LAYER_PARAMS
    methods = ("exact", "symbolic")
    examples = ({"d": [2], "dprime": 1, "t": 2}, {"d": [3], "dprime": 2, "t": 3})
    #: symbolic expansion is refused above this many entries of X
    MAX_SYMBOLIC_INPUT = 12

    def validate(self, params):
        _single_layer(params)
        if params["t"] is None:
            raise BadInput("--t is required")

    def hypothesis_violation(self, params):
        if params["t"] < 2:
            return f"HMK Thm 3.2 needs t >= 2; got t={params['t']}"
        return None

    def _exact_identities(self, d, dp, t, context) -> list[Verdict]:
        points = context.samples or IDENTITY_POINTS
        failures = {"rescaling": [], "swap": [], "zero": []}
        witnesses = []
        for b in range(points):
            s = context.sampler.spawn(b)
            X = _inputs(s, INPUTS_PER_POINT, d, t)
            A_, V = s.prime_field((d, d), PRIME), s.prime_field((dp, d), PRIME)
            lam = int(s.prime_field((), PRIME - 1)) + 1
            lam_inv = pow(lam, -1, PRIME)
            base = _phi(X, A_, V)
            if not base.any() or not _equal(_phi(X, A_ * lam % PRIME, V * lam_inv % PRIME), base):
                failures["rescaling"].append({"why": "(lambda A, V/lambda) changes phi",
                                              "lambda": lam, "A": A_.tolist(), "V": V.tolist()})
            k, q, v = (s.prime_field(d, PRIME) for _ in range(3))
            h = s.prime_field(dp, PRIME)
            (A1, V1), (A2, V2) = rank_one_swap(k, q, h, v, PRIME)
            if not _equal(_phi(X, A1, V1), _phi(X, A2, V2)):
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
            _identity_verdict("rescaling", failures["rescaling"], points, degree, points,
                              f"phi(lambda A, V/lambda) = phi(A, V) at {points} random points"),
            _identity_verdict("rank-one swap", failures["swap"], points, degree, points,
                              f"phi(v⊗q, h⊗k) = phi(k⊗q, h⊗v) at {points} random points"),
            _identity_verdict("zero fibre", failures["zero"], points, degree, points,
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
        return _rank_verdict("generic fibre", rank, P - 1, degree=4,
                             what="rank of the Jacobian of (A, V) -> phi",
                             evidence={"parameters": P, "kernel_dimension": P - rank,
                                       "rescaling_in_kernel": True, "samples": count},
                             counterexample={"A": A_.tolist(), "V": V.tolist()})

    def _check(self, method, params, context):
        d, dp, _ = _single_layer(params)
        t = params["t"]
        parts = (self._symbolic_identities(d, dp, t) if method == "symbolic"
                 else self._exact_identities(d, dp, t, context))
        parts.append(self._generic_fibre(d, dp, t, context))
        return combine(parts, summary="; ".join(v.summary for v in parts))

    def check_exact(self, params, context):
        return self._check("exact", params, context)

    def check_symbolic(self, params, context):
        return self._check("symbolic", params, context)

    def show(self, params, fmt="text", limit=None):
        d, dp, _ = _single_layer(params)
        return _formula_show([("rescaling", "(A, V) ~ (lambda A, V/lambda)", None),
                              ("rank-one swap", "(k⊗q, h⊗v) ~ (v⊗q, h⊗k)", None),
                              ("generic fibre dimension", "1", 1),
                              ("generic rank of d phi", "d^2 + dd' - 1", d * d + d * dp - 1)], fmt)


# -- Cor 3.3 ---------------------------------------------------------------------------------------
SINGLE_LAYER_GRID = tuple((d, dp, a, t) for d in (2, 3, 4) for dp in (1, 2, 3)
                          for a in range(1, d + 2) for t in (2, 3)
                          if (dp >= 2 or a >= 2))


def _method_measure(arch, method, context, seed_key=0):
    sampler = context.sampler.spawn(seed_key)
    if method == "exact":
        return measure_exact(arch, sampler, context.samples)
    return measure_numeric(arch, sampler, context.samples, context.backend, context.device)


class SingleLayerDimensionClaim(Claim):
    """HMK Cor 3.3, eq (7): the dimension of the single-layer neuromanifold.

    Measured: the rank of the Jacobian of (Q, K, V) -> phi (Q, K in F^{a x d}, V in
    F^{d' x d}) at random weights and inputs, exactly over F_p (``exact``) or float64
    (``numeric``), bracketed by P - dim(symmetry orbit).  Without --d: the grid
    d in {2,3,4}, d' in {1,2,3}, a in {1..d+1}, t in {2,3} under the hypothesis.
    """

    id = "dimension-single-layer"
    source = "HMK Cor 3.3, eq (7)"
    statement = ("For t >= 2 and d, d' >= 2 or d, a >= 2: dim M = 2ad + dd' - a^2 - 1 if a <= d, "
                 "else d^2 + dd' - 1.")
    params = (LAYERS, D, DPRIME, A, T)
    methods = ("exact", "numeric")
    examples = ({"d": [2], "dprime": 1, "a": [2], "t": 2}, {"d": [3, 2], "a": [5], "t": 2})

    def validate(self, params):
        if params["d"] is not None:
            _single_layer(params, with_a=True)
            if params["t"] is None:
                raise BadInput("--t is required")

    def hypothesis_violation(self, params):
        if params["d"] is None:
            return None
        d, dp, a = _single_layer(params, with_a=True)
        if params["t"] < 2:
            return f"HMK Cor 3.3 needs t >= 2; got t={params['t']}"
        if not (d >= 2 and (dp >= 2 or a >= 2)):
            return f"HMK Cor 3.3 needs d, d' >= 2 or d, a >= 2; got d={d}, d'={dp}, a={a}"
        return None

    def _point(self, d, dp, a, t, method, context) -> Verdict:
        arch = Architecture((d, dp), (a,), t)
        m = _method_measure(arch, method, context)
        return _dimension_verdict("eq (7)", single_layer_dimension(d, dp, a), m, arch,
                                  context.seed, {"architecture": arch.describe()})

    def _check(self, method, params, context):
        if params["d"] is not None:
            d, dp, a = _single_layer(params, with_a=True)
            return self._point(d, dp, a, params["t"], method, context)
        parts = [self._point(*point, method, context)
                 for point in context.progress(SINGLE_LAYER_GRID, "Cor 3.3 grid")]
        return combine(parts, summary=f"eq (7) = measured rank at all {len(parts)} grid points "
                                      "(d <= 4, d' <= 3, a <= d + 1, t <= 3)")

    def check_exact(self, params, context):
        return self._check("exact", params, context)

    def check_numeric(self, params, context):
        return self._check("numeric", params, context)

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formula")
        d, dp, a = _single_layer(params, with_a=True)
        return _formula_show([("eq (7)", FORMULA_TEXT["eq7"], single_layer_dimension(d, dp, a)),
                              ("parameters", "2ad + dd'", 2 * a * d + d * dp)], fmt)


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


class SingularLocusClaim(Claim):
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
    params = SINGLE_LAYER_PARAMS
    methods = ("exact",)
    examples = ({"d": [2], "dprime": 1, "t": 2}, {"d": [3], "dprime": 2, "t": 2})

    def validate(self, params):
        _single_layer(params)
        if params["t"] is None:
            raise BadInput("--t is required")

    def hypothesis_violation(self, params):
        d, dp, _ = _single_layer(params)
        if params["t"] < 2 or d < 2:
            return f"HMK §3.2 assumes t >= 2 and d >= 2 (A unconstrained); got d={d}, t={params['t']}"
        return None

    def check_exact(self, params, context):
        d, dp, _ = _single_layer(params)
        t = params["t"]
        s = context.sampler
        P = d * d + dp * d
        count = math.ceil((P + 8) / (dp * t))
        X = s.spawn(0).prime_field((count, d, t), PRIME)
        jac = lambda A_, V: jacobian_mod_p(lambda w, X, be: lightning_attention(X, w[0], w[1]),
                                           [A_, V], X, PRIME)
        rank = lambda M: rank_mod_p(M, PRIME)
        vec = lambda key, n: s.spawn(key).prime_field(n, PRIME)
        k, q, v, p_ = vec(1, d), vec(2, d), vec(3, d), vec(4, d)
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
            parts.append(verified(checked=len(table), degree=_minor_degree(generic, 4), prime=PRIME,
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
        return _rank_verdict("Prop A.5", rank, generic, degree=4,
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
            return verified(checked=2, degree=_minor_degree(joint, 4), prime=PRIME, points=1,
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
        d, dp, _ = _single_layer(params)
        return _formula_show([("generic rank of d phi", "d^2 + dd' - 1", d * d + d * dp - 1),
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
            X = _inputs(s, INPUTS_PER_POINT, arch.d[0], arch.t)
            direct = deep_lightning_attention(X, [Layer(_mod(a), _mod(v)) for a, v in zip(As, Vs)])
            Ms, L = virtual_weights([_mod(a) for a in As], [_mod(v) for v in Vs])
            value = formula(Ms, L, X)
            if not direct.value.any():
                failures.append({"why": "the network output is zero: the check would be empty"})
            elif not _equal(direct.value, value.value):
                failures.append({"why": "differs from the layer-by-layer network",
                                 "A": [a.tolist() for a in As], "V": [v.tolist() for v in Vs],
                                 "X": X.value.tolist()})
        return _identity_verdict(name, failures, points, 3 ** arch.layers + _weights_degree(arch.layers),
                                 points, f"equals the network at {points} random points")

    def _exact_symmetry(self, arch, context) -> Verdict:
        points = context.samples or IDENTITY_POINTS
        failures = []
        for b in range(points):
            s = context.sampler.spawn(100 + b)
            As, Vs = self._random_network(arch, s)
            Cs = [s.prime_field((arch.d[i],) * 2, PRIME) for i in range(1, arch.layers)]
            inverses = [inverse_mod_p(c, PRIME) for c in Cs]
            modded = lambda ms: [_mod(m) for m in ms]
            Ms, L = virtual_weights(modded(As), modded(Vs))
            new_A, new_V = change_of_basis(modded(As), modded(Vs), modded(Cs), modded(inverses))
            Ms2, L2 = virtual_weights(new_A, new_V)
            if not (all(_equal(a.value, b.value) for a, b in zip(Ms, Ms2)) and _equal(L.value, L2.value)):
                failures.append({"why": "eq (9) changes (M, L)", "C": [c.tolist() for c in Cs]})
        return _identity_verdict("eq (9)", failures, points, 6 * sum(arch.d) + 4 * arch.layers,
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
        return [_rank_verdict("Lemma 3.5", P - rank_mod_p(J, PRIME), (l - 1) * delta ** 2,
                              degree=2 * l, what="kernel dimension of d(A, V) -> (M, L)",
                              evidence={"parameters": P, "delta": delta},
                              counterexample={"A": [a.tolist() for a in As],
                                              "V": [v.tolist() for v in Vs]})]

    def show(self, params, fmt="text", limit=None):
        arch = self._arch(params)
        factors = " ".join(f"M{a}{'^T' if tr else ''}" for a, tr in unrolled_factors(arch.layers))
        return _formula_show([("eq (11)", "L X (D_{l-1} X^T M_l X) ... (D_0 X^T M_1 X)", None),
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
            Ms = [_mod(s.prime_field((arch.d[0],) * 2, PRIME)) for _ in range(l)]
            L = _mod(s.prime_field((arch.d[-1], arch.d[0]), PRIME))
            X = _inputs(s, INPUTS_PER_POINT, arch.d[0], arch.t)
            lams = [int(x) + 1 for x in s.prime_field(l, PRIME - 1)]
            rho = 1
            for i, lam in enumerate(lams, start=1):
                rho = rho * pow(lam, -(3 ** (l - i)), PRIME) % PRIME
            base = recursion_output(Ms, L, X).value
            scaled = recursion_output([m * lam for m, lam in zip(Ms, lams)], L * rho, X).value
            control = recursion_output([m * lam for m, lam in zip(Ms, lams)], L * (2 * rho), X).value
            if not _equal(base, scaled) or _equal(control, base):
                failures.append({"why": "eq (13) rescaling changes phi (or the control does not)",
                                 "lambda": lams, "rho": rho})
        return _identity_verdict("eq (13)", failures, points, 3 ** arch.layers + 3 ** arch.layers,
                                 points, f"phi(lambda M, rho L) = phi(M, L) at {points} random points")

    def _weight_symmetries(self, arch, context) -> Verdict:
        l = arch.layers
        points = context.samples or IDENTITY_POINTS
        func = lambda weights, X: deep_lightning_attention(X, [
            Layer(attention_matrix(_mod(weights[i]), _mod(weights[i + 1])), _mod(weights[i + 2]))
            for i in range(0, 3 * l, 3)]).value
        failures = []
        for b in range(points):
            s = context.sampler.spawn(500 + b)
            weights = [s.prime_field(shape, PRIME) for shape in arch.weight_shapes()]
            X = _inputs(s, INPUTS_PER_POINT, arch.d[0], arch.t)
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
            if not base.any() or not _equal(base, func(moved, X)):
                failures.append({"why": "a symmetry changes phi",
                                 "weights": [w.tolist() for w in weights]})
        return _identity_verdict("GL_a, GL_delta, rescalings", failures, points,
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
        return _rank_verdict("Thm 3.7 (local)", P - rank, l, degree=entry_degree(arch),
                             what="kernel dimension of d(M, L) -> phi",
                             evidence={"parameters": P, "samples": count,
                                       "eq13_tangents_in_kernel": in_kernel,
                                       "eq13_tangents_rank": rank_mod_p(tangents, PRIME)},
                             counterexample={"M": [m.tolist() for m in Ms], "L": L.tolist()})

    def show(self, params, fmt="text", limit=None):
        arch = architecture(params)
        l = arch.layers
        text = " * ".join(f"lambda_{i}^{3 ** (l - i)}" for i in range(1, l + 1))
        return _formula_show([("eq (13)", f"{text} = 1/rho", None),
                              ("generic fibre dimension over (M, L)", "l", l)], fmt)


# -- Cor 3.8, eqs 5, 14, 32 -----------------------------------------------------------------------------
DEEP_GRID = (((3, 3), (2,)), ((4, 3), (2,)), ((3, 3, 3), (2, 2)), ((4, 2, 3), (2, 2)),
             ((3, 2, 4), (3, 2)), ((3, 2, 2, 3), (2, 2, 2)), ((2, 2, 2, 2), (2, 2, 2)),
             ((2, 2, 2, 2, 2), (2, 2, 2, 2)), ((3, 2, 2, 2, 3), (2, 2, 2, 2)))


def _cor38_violation(arch: Architecture) -> str | None:
    if arch.t < 3:
        return f"HMK Cor 3.8 needs t >= 3; got t={arch.t}"
    if min(arch.a) < 2:
        return f"HMK Cor 3.8 needs a_i >= 2; got a={list(arch.a)}"
    violation = arch.bottleneck_violation()
    if violation:
        return f"HMK Cor 3.8: {violation}"
    if arch.delta < 2:
        return f"HMK Cor 3.8 needs delta >= 2; got delta={arch.delta}"
    return None


def parameter_space_rank(arch: Architecture, context: CheckContext) -> int:
    """Rank over F_p of the Jacobian of (Q, K, V) -> (A_1, V_1, ..., A_l, V_l): the dimension
    of the parameter space (A, V) with rank A_i <= a_i (HMK eq 32)."""
    weights = [context.sampler.spawn(7).prime_field(s, PRIME) for s in arch.weight_shapes()]

    def to_attention(w, X, be):
        return [m for i in range(0, len(w), 3) for m in (attention_matrix(w[i], w[i + 1]), w[i + 2])]

    return rank_mod_p(jacobian_mod_p(to_attention, weights, None, PRIME), PRIME)


class DeepDimensionClaim(Claim):
    """HMK Cor 3.8, eq (14), with eq (5) (parameter count) and eq (32) (App. A.7).

    Measured exactly over F_p (or float64 with --method numeric): the rank of the Jacobian of
    (Q, K, V) -> phi, bracketed by P - dim(symmetry orbit); the rank of (Q, K, V) -> (A, V)
    for eq (32); the parameter count for eq (5).  eq (14) as printed counts the first layer's
    attention matrix twice (its sum runs over 1 <= i <= l; App. A.7 derives it as eq (32)
    - (l-1) delta^2 - l, i.e. the sum over 1 < i <= l): the check reports ``refuted`` with the
    corrected value.  eq (5) as printed uses Q_i, K_i in R^{a_i x d_i}; it is wrong whenever
    sum_i a_i (d_i - d_{i-1}) != 0.  Without --d: a grid of l = 1..4.
    """

    id = "dimension-deep"
    source = "HMK Cor 3.8, eqs (5), (14), (32)"
    statement = ("For t >= 3, a_i >= 2 and a bottleneck d_i = delta >= 2 (0 < i < l), d_0, d_l >= delta: "
                 "dim M = eq (14).")
    params = NETWORK_PARAMS
    methods = ("exact", "numeric")
    examples = ({"d": [3, 3, 3], "a": [2, 2], "t": 3}, {"d": [4, 2, 3], "a": [2, 2], "t": 3},
                {"d": [3, 2, 2, 3], "a": [2], "t": 3})

    def validate(self, params):
        if params["d"] is not None:
            architecture(params)

    def hypothesis_violation(self, params):
        return None if params["d"] is None else _cor38_violation(architecture(params))

    def _point(self, arch, method, context) -> Verdict:
        delta = arch.delta
        m = _method_measure(arch, method, context)
        problems = []
        printed_P = eq5_parameters_printed(arch)
        if printed_P != arch.parameters:
            problems.append({"formula": "eq (5)", "value": printed_P, "measured": arch.parameters,
                             "why": "Q_i, K_i must be a_i x d_(i-1): P = sum d_(i-1)(2a_i + d_i)"})
        eq32 = parameter_space_dimension(arch, delta)
        space = parameter_space_rank(arch, context)
        if eq32 != space:
            problems.append({"formula": "eq (32)", "value": eq32, "measured": space,
                             "why": "rank of (Q, K, V) -> (A, V) over F_p"})
        evidence = {"architecture": arch.describe(), "delta": delta,
                    "parameters_eq5_printed": printed_P, "eq32": eq32,
                    "parameter_space_dimension_measured": space}
        return _dimension_verdict("eq (14)", deep_dimension_printed(arch, delta), m, arch,
                                  context.seed, evidence, deep_dimension_corrected(arch, delta),
                                  tuple(problems))

    def _check(self, method, params, context):
        if params["d"] is not None:
            return self._point(architecture(params), method, context)
        parts = [self._point(Architecture(d, a, 3), method, context)
                 for d, a in context.progress(DEEP_GRID, "Cor 3.8 grid")]
        return combine(parts, summary=f"eq (14) = measured rank at all {len(parts)} grid points")

    def check_exact(self, params, context):
        return self._check("exact", params, context)

    def check_numeric(self, params, context):
        return self._check("numeric", params, context)

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formulas")
        arch = architecture(params)
        delta = arch.delta or 0
        return _formula_show([("eq (5) (printed)", FORMULA_TEXT["eq5"], eq5_parameters_printed(arch)),
                              ("parameters", "Σ_i d_{i-1}(2a_i + d_i)", arch.parameters),
                              ("eq (32)", FORMULA_TEXT["eq32"], parameter_space_dimension(arch, delta)),
                              ("eq (14) (printed)", FORMULA_TEXT["eq14"], deep_dimension_printed(arch, delta)),
                              ("eq (14) corrected", FORMULA_TEXT["eq14-corrected"],
                               deep_dimension_corrected(arch, delta))], fmt)


# -- Thm 3.9, Conjecture 3.10 --------------------------------------------------------------------------
class SoftmaxInjectiveClaim(Claim):
    """HMK Thm 3.9 (t >= 2): the softmax parametrization (A, V) -> phi (eq 15, S = exp) is
    generically one-to-one.

    float64 at N random inputs (default 250): (1) the Jacobian of (A, V) -> phi has full
    rank d^2 + dd' with a clear singular-value gap (:func:`kernels.jacobian.numerical_rank`)
    — a proof that the rank is full, up to the stated rounding bound, since nothing is
    dropped; (2) the proof's first step: for identical tokens phi = V x; (3) phi = 0 when
    V = 0 and phi != 0 otherwise.
    """

    id = "softmax-injective"
    source = "HMK Thm 3.9"
    statement = "For t >= 2: phi_W = 0 iff V = 0, and otherwise the fibre of phi_W is {W}."
    params = SINGLE_LAYER_PARAMS
    methods = ("numeric",)
    examples = ({"d": [2], "dprime": 2, "t": 2}, {"d": [3], "dprime": 2, "t": 3})

    def validate(self, params):
        _single_layer(params)
        if params["t"] is None:
            raise BadInput("--t is required")

    def hypothesis_violation(self, params):
        if params["t"] < 2:
            return f"HMK Thm 3.9 needs t >= 2; got t={params['t']}"
        return None

    def check_numeric(self, params, context):
        d, dp, _ = _single_layer(params)
        t = params["t"]
        s = context.sampler
        A_ = s.spawn(1).floats((d, d), 1 / math.sqrt(d))
        V = s.spawn(2).floats((dp, d), 1 / math.sqrt(d))
        count = context.samples or 250
        X = s.spawn(3).floats((count, d, t))
        be = get_backend(context.backend, context.device)
        func = lambda w, X, backend: softmax_attention(X, w[0], w[1], backend)
        J = jacobian_float(func, [A_, V], X, be)
        rank = numerical_rank(J, be)
        rank.require_clear("Thm 3.9 Jacobian")
        P = d * d + dp * d
        x = s.spawn(4).floats((d, 1))
        same = np.repeat(x, t, axis=1)
        tokens = softmax_attention(same, A_, V, get_backend("numpy"))
        token_residual = float(np.abs(tokens - V @ same).max() / np.abs(V @ same).max())
        zero = softmax_attention(X[0], A_, np.zeros_like(V), get_backend("numpy"))
        nonzero = softmax_attention(X[0], A_, V, get_backend("numpy"))
        evidence = {"parameters": P, "samples": count, "identical_tokens_residual": token_residual,
                    "phi_zero_when_V_zero": bool(not zero.any()),
                    "phi_nonzero_otherwise": bool(nonzero.any()), **rank.evidence()}
        tolerance = 1e-13
        if rank.rank != P or token_residual > tolerance or zero.any() or not nonzero.any():
            return refuted(method="numeric", evidence=evidence, backend=be.name, device=be.device,
                           summary=(f"Thm 3.9: Jacobian rank {rank.rank} (full: {P}), identical "
                                    f"tokens residual {token_residual:.1e}"),
                           counterexample={"A": A_.tolist(), "V": V.tolist(), "seed": context.seed,
                                           "rank": rank.rank, "parameters": P})
        return consistent(checked=3, max_residual=max(rank.dropped_max, token_residual),
                          tolerance=max(rank.tolerance, tolerance), backend=be.name, device=be.device,
                          evidence=evidence, summary=(
                              f"Thm 3.9: the Jacobian of (A, V) -> phi at {count} inputs has full "
                              f"rank {P} (smallest sigma/sigma_1 = {rank.kept_min:.3g}, rounding "
                              f"bound {rank.tolerance:.1e}); phi = Vx for identical tokens; "
                              "phi = 0 iff V = 0"))

    def show(self, params, fmt="text", limit=None):
        d, dp, _ = _single_layer(params)
        return _formula_show([("generic fibre", "{W}", None),
                              ("dimension", "d^2 + dd'", d * d + d * dp)], fmt)


FIGURE3_GRID = tuple(((delta,) * 3, (2, 2)) for delta in range(3, 11))


class SoftmaxDimensionClaim(Claim):
    """HMK Conjecture 3.10, eq (16): the dimension of the softmax neuromanifold.

    float64 Jacobian rank of (Q, K, V) -> phi (softmax layers, eq 15) at N = 250 inputs
    (HMK §3.4), with the singular-value rule of :func:`kernels.jacobian.numerical_rank` and
    the exact upper bound P - dim(GL_{a_i} and GL_delta orbits): ``consistent`` only when the
    gap is clear and the rank equals eq (16).  Without --d: HMK Figure 3 (l = 2, t = 3,
    a_i = 2, delta = 3..10).
    """

    id = "softmax-dimension"
    source = "HMK Conjecture 3.10, eq (16)"
    statement = ("Normalized deep attention: generic fibres over (M, L) are singletons, so dim M = "
                 "eq (16) = eq (14) + l.")
    params = NETWORK_PARAMS
    methods = ("numeric",)
    examples = ({"d": [3, 3, 3], "a": [2, 2], "t": 3},)

    def validate(self, params):
        if params["d"] is not None:
            architecture(params, softmax=True)

    def hypothesis_violation(self, params):
        if params["d"] is None:
            return None
        arch = architecture(params, softmax=True)
        if arch.t < 2:
            return f"HMK Thm 3.9 / Conjecture 3.10 need t >= 2; got t={arch.t}"
        violation = arch.bottleneck_violation()
        return f"HMK eq (16): {violation}" if violation else None

    def _point(self, arch, context) -> Verdict:
        m = _method_measure(arch, "numeric", context)
        delta = arch.delta
        return _dimension_verdict("eq (16)", softmax_dimension_printed(arch, delta), m, arch,
                                  context.seed, {"architecture": arch.describe(), "delta": delta})

    def check_numeric(self, params, context):
        if params["d"] is not None:
            return self._point(architecture(params, softmax=True), context)
        parts = [self._point(Architecture(d, a, 3, softmax=True), context)
                 for d, a in context.progress(FIGURE3_GRID, "Figure 3")]
        return combine(parts, summary="eq (16) = numerical rank at HMK Figure 3's delta = 3..10")

    def show(self, params, fmt="text", limit=None):
        if params["d"] is None:
            raise BadInput("give --d, --a, --t to show the formula")
        arch = architecture(params, softmax=True)
        return _formula_show([("eq (16)", FORMULA_TEXT["eq16"],
                               softmax_dimension_printed(arch, arch.delta or 0))], fmt)


# -- `attngeom dimension` -------------------------------------------------------------------------
SINGLE_LAYER_DIMENSION = SingleLayerDimensionClaim()
DEEP_DIMENSION = DeepDimensionClaim()
SOFTMAX_DIMENSION = SoftmaxDimensionClaim()


def run_dimension(raw: dict, softmax: bool, method: str, context: CheckContext) -> Verdict:
    """The check behind ``attngeom dimension``: softmax-dimension (eq 16) with --softmax,
    else dimension-single-layer (eq 7) for one layer and dimension-deep (eq 14) for more.
    ``auto`` is exact over F_p for lightning on the numpy backend, float64 otherwise."""
    if raw.get("d") is None:
        raise BadInput("--d is required (or --figure3)")
    if softmax:
        claim = SOFTMAX_DIMENSION
    else:
        layers = architecture(DEEP_DIMENSION.resolve(raw)).layers
        claim = SINGLE_LAYER_DIMENSION if layers == 1 else DEEP_DIMENSION
    if method == "auto":
        lightning_exact = not softmax and context.backend == "numpy" and context.device == "cpu"
        method = "exact" if lightning_exact else "numeric"
    if context.device == "cuda" and method == "exact":
        raise BadInput("exact ranks over F_p run on the cpu; use --method numeric on cuda")
    return claim.verify(raw, method, context)


def dimension_report(verdict: Verdict) -> dict:
    """The fields `attngeom dimension` prints (and its --json): parameters, formula,
    measured_rank, status, and the evidence behind them."""
    ev = verdict.evidence
    report = {"claim": verdict.claim, "source": verdict.source, "status": verdict.status.value,
              "method": verdict.method, "architecture": ev.get("architecture"),
              "parameters": ev.get("parameters"), "formula_name": ev.get("formula_name"),
              "formula": ev.get("formula"), "measured_rank": ev.get("measured_rank"),
              "corrected_formula": ev.get("corrected_formula"),
              "upper_bound_from_symmetries": ev.get("upper_bound_from_symmetries"),
              "certified": ev.get("certified"), "samples": ev.get("samples"),
              "summary": verdict.summary, "seconds": verdict.seconds}
    for key in ("parameters_eq5_printed", "eq32", "parameter_space_dimension_measured", "prime"):
        if key in ev:
            report[key] = ev[key]
    if "numerical_rank" in ev:
        kept, dropped = ev["sigma_kept_min_relative"], ev["sigma_dropped_max_relative"]
        report.update(gap=kept / dropped if dropped else None, sigma_kept_min_relative=kept,
                      sigma_dropped_max_relative=dropped, tolerance=ev["tolerance_relative"],
                      backend=verdict.backend, device=verdict.device)
    if verdict.counterexample:
        report["problems"] = verdict.counterexample.get("problems")
    report["verdict"] = verdict.to_json()
    return report


def dimension_lines(report: dict) -> list[str]:
    """``attngeom dimension``'s text output."""
    arch = report["architecture"]
    kind = "softmax" if arch["softmax"] else "lightning"
    lines = [f"{report['status']}  {report['claim']}  [{report['source']}]",
             f"  network        l={arch['layers']}  d={','.join(map(str, arch['d']))}  "
             f"a={','.join(map(str, arch['a']))}  t={arch['t']}  {kind}",
             f"  parameters     {report['parameters']}" + (
                 f"  (eq (5) as printed: {report['parameters_eq5_printed']})"
                 if "parameters_eq5_printed" in report else ""),
             f"  formula        {report['formula_name']} = {report['formula']}"]
    if report["method"] == "exact":
        how = f"exact rank over F_{report['prime']}, {report['samples']} inputs"
    else:
        how = (f"float64 SVD ({report['backend']}-{report['device']}), {report['samples']} inputs; "
               f"smallest kept sigma/sigma_1 {report['sigma_kept_min_relative']:.2e}, largest "
               f"dropped {report['sigma_dropped_max_relative']:.2e}, gap "
               + (f"{report['gap']:.1e}" if report["gap"] else "inf")
               + f", tolerance {report['tolerance']:.1e}")
    lines.append(f"  measured rank  {report['measured_rank']}  ({how})")
    bound = report["upper_bound_from_symmetries"]
    lines.append(f"  upper bound    {bound}  (P - dim of the symmetry orbits; "
                 f"{'meets the rank: certified' if report['certified'] else 'not met'})")
    if report.get("corrected_formula") is not None:
        lines.append(f"  corrected      {report['corrected_formula']}  (eq (14) with the sum over "
                     "1 < i <= l, as derived in HMK App. A.7)")
    if "eq32" in report:
        lines.append(f"  eq (32)        {report['eq32']}  (measured dimension of the (A, V) "
                     f"space: {report['parameter_space_dimension_measured']})")
    for problem in report.get("problems") or []:
        lines.append(f"  DOES NOT HOLD  {problem['formula']} as printed gives {problem['value']}, "
                     f"the mathematics gives {problem['measured']}")
    lines.append(f"  verdict        {report['status']}: {report['summary']}")
    return lines


CLAIMS = [MatmulFibreClaim(), FibreSingleLayerClaim(), SINGLE_LAYER_DIMENSION,
          SingularLocusClaim(), VirtualWeightsClaim(), FibreDeepClaim(), DEEP_DIMENSION,
          SoftmaxInjectiveClaim(), SOFTMAX_DIMENSION]

"""HMK claims about deep lightning networks: the virtual weights of Lemmas 3.5 and 3.6 with
eqs (8)-(12), and the fibres of Thm 3.7 with eq (13) (checked as in :mod:`.hmk_fibres`)."""

from __future__ import annotations

import math

import numpy as np
import sympy

from attngeom.core.claim import Claim
from attngeom.kernels.jacobian import jacobian_mod_p
from attngeom.kernels.primefield import matmul_mod_p, rank_mod_p
from attngeom.core.verdict import Verdict, combine, proved
from attngeom.lightning_alg.claims.hmk_support import (
    INPUTS_PER_POINT, IDENTITY_POINTS, LAYERS, NETWORK_PARAMS, PRIME, D, T, equal_values,
    formula_show, identity_verdict, mod_p, prime_inputs, rank_verdict)
from attngeom.lightning_alg.hmk.dimension import Architecture, architecture, entry_degree
from attngeom.lightning_alg.hmk.fibres import gauge_action, inverse_mod_p
from attngeom.lightning_alg.hmk.virtual_weights import (change_of_basis, recursion_output, unrolled_factors,
                                           unrolled_output, virtual_weights)
from attngeom.lightning_alg.model import Layer, attention_matrix, deep_lightning_attention


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
        parts = {}
        for key, name, expr in [("lemma3.6", "Lemma 3.6 (eqs 10-11)", recursion_output(Ms, L, X)),
                                ("eq12", "eq (12), 3-adic rule", unrolled_output(Ms, L, X))]:
            word = expr.doit()
            if word == direct:
                parts[key] = proved(checked=1, summary=f"{name}: the same word as the network",
                                    evidence={"word_length": len(direct.args)})
            else:
                parts[key] = self._exact_identity(name, arch, context)
        new_A, new_V = change_of_basis(As, Vs, Cs, [c.I for c in Cs])
        Ms2, L2 = virtual_weights(new_A, new_V)
        same = all(m2.doit() == m.doit() for m2, m in zip(Ms2, Ms)) and L2.doit() == L.doit()
        parts["eq9"] = (proved(checked=l + 1, summary="eq (9) leaves M_i and L unchanged",
                               evidence={"group": "GL"}) if same
                        else self._exact_symmetry(arch, context))
        return combine({**parts, **self._lemma_35(arch, context)})

    def check_exact(self, params, context):
        arch = self._arch(params)
        return combine({"lemma3.6": self._exact_identity("Lemma 3.6 (eqs 10-11)", arch, context),
                        "eq12": self._exact_identity("eq (12), 3-adic rule", arch, context),
                        "eq9": self._exact_symmetry(arch, context),
                        **self._lemma_35(arch, context)})

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

    def _lemma_35(self, arch, context) -> dict[str, Verdict]:
        """The kernel of d(A, V) -> (M, L) (the part ``lemma3.5``; none without a bottleneck)."""
        if arch.layers < 2 or arch.bottleneck_violation():
            return {}
        delta, l = arch.delta, arch.layers
        As, Vs = self._random_network(arch, context.sampler.spawn(200))

        def to_virtual(w, X, be):
            Ms, L = virtual_weights(w[:l], w[l:])
            return Ms + [L]

        J = jacobian_mod_p(to_virtual, As + Vs, None, PRIME)
        P = J.shape[1]
        return {"lemma3.5": rank_verdict(
            "Lemma 3.5", P - rank_mod_p(J, PRIME), (l - 1) * delta ** 2, degree=2 * l,
            what="kernel dimension of d(A, V) -> (M, L)", evidence={"parameters": P, "delta": delta},
            counterexample={"A": [a.tolist() for a in As], "V": [v.tolist() for v in Vs]})}

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
        return combine({"eq13": self._rescaling(arch, context),
                        "symmetries": self._weight_symmetries(arch, context),
                        "thm3.7-local": self._local_fibre(arch, context)})

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


CLAIMS = [VirtualWeightsClaim(), FibreDeepClaim()]

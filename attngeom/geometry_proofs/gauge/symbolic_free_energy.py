"""The free energy of GT in closed form (SymPy) for N scalar agents (K = 1, so Omega = 1),
and the printed and corrected assembled gradients (eqs 14-23, 53) built from it.

    q_i = N(m_i, s_i), p_i = N(a_i, t_i),  K_ij = KL(q_i || q_j) (K_ii = 0),
    beta_ij = exp(-K_ij/kappa) / sum_k exp(-K_ik/kappa),
    F = sum_i KL(q_i || p_i) + sum_ij beta_ij K_ij                       (eq 51; eq 9 at K = 1:
                                                                         log softmax of one class is 0)

The exact derivative is ``sympy.diff(F, ...)``; the assembled formulas are built from the
derivatives of the single KL terms and eq 15, as GT's sums prescribe.  A correct formula is
``proved`` by ``sympy.simplify`` of the difference; a wrong one is shown nonzero by
evaluation at a rational point (``evalf`` with 30 digits).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

HALF = sympy.Rational(1, 2)
#: kappa of the witness points: not 1, where a factor 1/kappa is invisible (the numeric default is 0.7 too)
GENERIC_KAPPA = sympy.Rational(7, 10)


def scalar_kl(mq, sq, mp, sp):
    """KL(N(mq, sq) || N(mp, sp)) for K = 1 (GT App. C.1)."""
    return HALF * (sq / sp + (mp - mq) ** 2 / sp - 1 + sympy.log(sp) - sympy.log(sq))


@dataclass
class ScalarSystem:
    """N scalar agents: symbols, the KL matrix, beta and F (SymPy)."""

    m: tuple
    s: tuple
    a: tuple
    t: tuple
    kappa: sympy.Symbol
    kl: list
    beta: list
    F: sympy.Expr

    def point(self) -> dict:
        """A rational point with distinct agents (for witnesses), away from the identity
        values (kappa = 7/10, variances 3/4, 5/4, ...): at kappa = 1 or s_i = 1 a missing factor
        1/kappa or 1/s_i (eq 15, eqs 24-26) would vanish from the witness."""
        values = {self.kappa: GENERIC_KAPPA}
        for k in range(len(self.m)):
            values.update({self.m[k]: sympy.Rational(k + 1, 2) * (-1) ** k, self.s[k]: sympy.Rational(2 * k + 3, 4),
                           self.a[k]: sympy.Rational(1, 3), self.t[k]: sympy.Rational(3, 2)})
        return {k: v for k, v in values.items() if isinstance(k, sympy.Symbol)}


def scalar_system(tokens: int = 2, vacuum: bool = False) -> ScalarSystem:
    """F for ``tokens`` scalar agents; ``vacuum``: priors N(0, t) shared (GT eq 52)."""
    m = sympy.symbols(f"m1:{tokens + 1}", real=True)
    s = sympy.symbols(f"s1:{tokens + 1}", positive=True)
    if vacuum:
        shared = sympy.Symbol("sigma_p2", positive=True)
        a, t = (sympy.Integer(0),) * tokens, (shared,) * tokens
    else:
        a = sympy.symbols(f"a1:{tokens + 1}", real=True)
        t = sympy.symbols(f"t1:{tokens + 1}", positive=True)
    kappa = sympy.Symbol("kappa", positive=True)
    kl = [[sympy.Integer(0) if i == j else scalar_kl(m[i], s[i], m[j], s[j]) for j in range(tokens)]
          for i in range(tokens)]
    beta = [[sympy.exp(-kl[i][j] / kappa) / sum(sympy.exp(-kl[i][k] / kappa) for k in range(tokens))
             for j in range(tokens)] for i in range(tokens)]
    F = (sum(scalar_kl(m[i], s[i], a[i], t[i]) for i in range(tokens))
         + sum(beta[i][j] * kl[i][j] for i in range(tokens) for j in range(tokens)))
    return ScalarSystem(m, s, a, t, kappa, kl, beta, F)


def assembled(system: ScalarSystem, variable: str, corrected: bool, printed_components: bool = False,
              i: int = 0) -> sympy.Expr:
    """GT's assembled gradient of F in m_i (eqs 16-19) or s_i (eqs 20-23) for K = 1.

    Components: exact derivatives of the single KL terms, or (``printed_components``, for
    s_i) the printed eqs 24 and 26: 1/2 (1/s_i - 1/t_i) and 1/2 (1/s_i) (eq 25 is exact).
    ``corrected`` adds -1/kappa sum_{k != i} beta_ki (K_ki - sum_j beta_kj K_kj) dK_ki."""
    x = (system.m if variable == "mean" else system.s)[i]
    N = len(system.m)
    kl, beta, kappa = system.kl, system.beta, system.kappa
    row = [sympy.diff(kl[i][j], x) for j in range(N)]
    col = [sympy.diff(kl[k][i], x) for k in range(N)]
    own = sympy.diff(scalar_kl(system.m[i], system.s[i], system.a[i], system.t[i]), x)
    if printed_components and variable == "variance":
        own = HALF * (1 / system.s[i] - 1 / system.t[i])                       # eq 24 as printed
        col = [0 if k == i else HALF / system.s[i] for k in range(N)]          # eq 26 as printed
    mean = sum(beta[i][k] * row[k] for k in range(N))
    dbeta = [-beta[i][j] / kappa * (row[j] - mean) for j in range(N)]          # eq 15
    total = own + sum(dbeta[j] * kl[i][j] + beta[i][j] * row[j] for j in range(N)) \
        + sum(beta[k][i] * col[k] for k in range(N))
    if corrected:
        total += sum(-beta[k][i] / kappa * (kl[k][i] - sum(beta[k][j] * kl[k][j] for j in range(N))) * col[k]
                     for k in range(N) if k != i)
    return total


def decide(difference: sympy.Expr, point, *, holds: str, fails: str, evidence: dict):
    """``refuted`` when the difference is nonzero at ``point`` (a dict, or (old, new) pairs
    substituted in order; 30-digit evaluation; the witness is the point and the value),
    else ``proved`` when ``sympy.simplify`` reduces it to 0, else ``refuted`` with the
    unreduced difference."""
    from attngeom.core.verdict import proved, refuted

    point = list(point.items()) if isinstance(point, dict) else list(point)
    value = sympy.N(difference.subs(point), 30)
    if abs(value) > sympy.Float("1e-20"):
        return refuted(method="symbolic", summary=fails, evidence=evidence, counterexample={
            "at": {str(k): str(v) for k, v in point}, "exact - formula": str(value)})
    reduced = sympy.simplify(sympy.powsimp(sympy.expand(difference)))
    if reduced == 0:
        return proved(checked=1, summary=holds, evidence={**evidence, "reduced by": "sympy.simplify"})
    return refuted(method="symbolic", summary=fails, evidence=evidence,
                   counterexample={"exact - formula": str(reduced)[:2000]})


def stationarity_eq53(system: ScalarSystem, i: int = 0) -> sympy.Expr:
    """GT eq (53) at K = 1: m_i / sigma_p^2 + sum_j beta_ij (m_i - m_j) / s_j."""
    N = len(system.m)
    return system.m[i] / system.t[i] + sum(system.beta[i][j] * (system.m[i] - system.m[j]) / system.s[j]
                                           for j in range(N))


def generic_alignment(tokens: int = 3, i: int = 0):
    """The alignment term sum_kj beta_kj K_kj with K_ij(t) and K_ki(t) (the row and the column
    of agent i) arbitrary functions of one coordinate t of theta_i, every other K_kj a
    constant symbol and K_kk = 0: the structure of eqs 17-18 / 21-22 / 28, 30 whatever
    theta_i is (mean, covariance or frame).  Returns (d/dt of the term, the printed
    assembly, the corrected assembly, kappa)."""
    t, kappa = sympy.Symbol("t", real=True), sympy.Symbol("kappa", positive=True)
    N = tokens

    def entry(k, j):
        if k == j:
            return sympy.Integer(0)
        if k == i or j == i:
            return sympy.Function(f"K{k + 1}{j + 1}")(t)
        return sympy.Symbol(f"K{k + 1}{j + 1}", real=True)

    kl = [[entry(k, j) for j in range(N)] for k in range(N)]
    beta = [[sympy.exp(-kl[k][j] / kappa) / sum(sympy.exp(-kl[k][l] / kappa) for l in range(N)) for j in range(N)]
            for k in range(N)]
    term = sum(beta[k][j] * kl[k][j] for k in range(N) for j in range(N))
    row = [sympy.diff(kl[i][j], t) for j in range(N)]
    col = [sympy.diff(kl[k][i], t) for k in range(N)]
    mean = sum(beta[i][k] * row[k] for k in range(N))
    printed = (sum(-beta[i][j] / kappa * (row[j] - mean) * kl[i][j] + beta[i][j] * row[j] for j in range(N))
               + sum(beta[k][i] * col[k] for k in range(N)))
    missing = sum(-beta[k][i] / kappa * (kl[k][i] - sum(beta[k][j] * kl[k][j] for j in range(N))) * col[k]
                  for k in range(N) if k != i)
    return sympy.diff(term, t), printed, printed + missing, kappa


def generic_point(expr: sympy.Expr, kappa: sympy.Symbol) -> list[tuple]:
    """Rational values for the derivatives dK/dt, then the functions K(t), then the constant
    K symbols and kappa of :func:`generic_alignment` (in that order of substitution)."""
    derivatives = sorted(expr.atoms(sympy.Derivative), key=str)
    functions = sorted(expr.atoms(sympy.core.function.AppliedUndef), key=str)
    constants = sorted((s for s in expr.free_symbols if s.name.startswith("K")), key=str)
    pairs = [(d, sympy.Rational(k + 1, 3) * (-1) ** k) for k, d in enumerate(derivatives)]
    pairs += [(f, sympy.Rational(k + 2, 4)) for k, f in enumerate(functions + constants)]
    return pairs + [(kappa, GENERIC_KAPPA)]

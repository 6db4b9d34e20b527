"""Virtual weights of a deep lightning network and its closed forms (HMK §3.3, eqs 8–12).

HMK eq (8): L_i = V_i V_{i-1} ... V_1, M_1 = A_1, M_i = L_{i-1}^T A_i L_{i-1}; L = L_l.

HMK Lemma 3.6, eqs (10)–(11): with G_i = X^T M_i X, D_0 = I and
D_i = D_{i-1} G_i D_{i-1} G_i^T D_{i-1},

    phi_W(X) = L X (D_{l-1} G_l) (D_{l-2} G_{l-1}) ... (D_0 G_1).

HMK eq (12): phi_W(X)_k = sum over k_1..k_lt of L x_{k_1} prod_j x_{k_j}^T Mt_j x_{k_{j+1}}
(k_{lt+1} = k, lt = (3^l - 1)/2), where Mt_j = M_alpha or M_alpha^T by the 3-adic rule
(:func:`adic_factor`).  A sum over index chains of products of entries
(X^T Mt_j X)[k_j, k_{j+1}] is a matrix product, so eq (12) is evaluated as
L X (X^T Mt_1 X) ... (X^T Mt_lt X); its last factor is X^T A_1 X, which is how eq (12)
prints it.

Everything is written with ``@`` and ``.T`` only, so the same functions run on SymPy matrix
symbols (identities in the free algebra: a proof for all sizes), on exact residues mod p
(:class:`attngeom.kernels.jacobian.Dual` constants) and on Jacobian dual numbers.
"""

from __future__ import annotations

from functools import reduce


def virtual_weights(As, Vs):
    """(M, L) of HMK eq (8) from the attention matrices A_i and value matrices V_i."""
    Ms, L = [As[0]], Vs[0]
    for A, V in zip(As[1:], Vs[1:]):
        Ms.append(L.T @ A @ L)
        L = V @ L
    return Ms, L


def _product(factors):
    """The product of the factors that are not None (None stands for an identity)."""
    return reduce(lambda left, right: left @ right, [f for f in factors if f is not None])


def recursion_output(Ms, L, X):
    """phi_W(X) by HMK Lemma 3.6 (eqs 10, 11) from the virtual weights."""
    layers = len(Ms)
    G = [X.T @ M @ X for M in Ms]
    D = [None]                                        # D_0 = I
    for i in range(1, layers):
        D.append(_product([D[-1], G[i - 1], D[-1], G[i - 1].T, D[-1]]))
    chain = _product([factor for i in range(1, layers + 1) for factor in (D[layers - i], G[layers - i])])
    return L @ X @ chain


def adic_factor(j: int) -> tuple[int, bool]:
    """HMK eq (12)'s rule for Mt_j: (alpha_j, transposed).  alpha_j is the position of the
    first nonzero base-3 digit of j from the right (3-adic valuation + 1); Mt_j is
    M_alpha if that digit is 1 and M_alpha^T if it is 2."""
    alpha = 1
    while j % 3 == 0:
        j //= 3
        alpha += 1
    return alpha, j % 3 == 2


def unrolled_factors(layers: int) -> list[tuple[int, bool]]:
    """(alpha_j, transposed) for j = 1 .. (3^l - 1)/2."""
    return [adic_factor(j) for j in range(1, (3 ** layers - 1) // 2 + 1)]


def unrolled_output(Ms, L, X, factors=None):
    """phi_W(X) by HMK eq (12) as the matrix chain L X prod_j (X^T Mt_j X)."""
    factors = factors if factors is not None else unrolled_factors(len(Ms))
    chain = [X.T @ (Ms[alpha - 1].T if transposed else Ms[alpha - 1]) @ X
             for alpha, transposed in factors]
    return L @ X @ _product(chain)


def change_of_basis(As, Vs, Cs, C_inverses):
    """HMK eq (9) for C_1..C_{l-1} (C_0 = C_l = I): V'_i = C_i V_i C_{i-1}^{-1},
    A'_{i+1} = C_i^{-T} A_{i+1} C_i^{-1}.  Returns (A', V')."""
    layers = len(As)
    C = [None] + list(Cs) + [None]
    Cinv = [None] + list(C_inverses) + [None]
    new_V = [_product([C[i], Vs[i - 1], Cinv[i - 1]]) for i in range(1, layers + 1)]
    new_A = [As[0]] + [_product([None if Cinv[i] is None else Cinv[i].T, As[i], Cinv[i]])
                       for i in range(1, layers)]
    return new_A, new_V

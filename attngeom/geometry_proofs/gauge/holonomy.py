"""Curvature of GT's connection: the cocycle Omega_ij Omega_jk = Omega_ik and holonomy around
loops of tokens (GT eq 3, §5.0.6).

GT's transport Omega_ij = exp(phi_i) exp(-phi_j) = g_i g_j^{-1} is a *pure gauge*
connection on the complete graph of tokens: the holonomy around a loop i_1 -> i_2 -> ...
-> i_k -> i_1,

    Hol = Omega_{i1 i2} Omega_{i2 i3} ... Omega_{ik i1} = g_i1 g_i2^{-1} g_i2 ... g_ik^{-1} g_ik g_i1^{-1} = I,

telescopes to the identity for every choice of frames, so its curvature (the deviation of
the holonomy from I) is identically zero.  For contrast, :func:`exp_difference_transport`
exp(phi_i - phi_j) (a connection one might write by mistake for eq 3) is curved when the
frames do not commute.

Arrays: frames (so(n) coordinates) shape=[N, n(n-1)/2]; transports shape=[N, N, n, n].
"""

from __future__ import annotations

import numpy as np
import sympy

from attngeom.kernels.backend import Backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import frame_exp, matrix_exp, skew


def pure_gauge_transport(frames, n: int, be: Backend):
    """GT eq 3: Omega_ij = exp(phi_i) exp(-phi_j) = R_i R_j^T, shape=[N, N, n, n]."""
    rotation = frame_exp(skew(frames, n, be), be)
    return rotation[:, None] @ rotation[None, :].swapaxes(-1, -2)


def exp_difference_transport(frames, n: int, be: Backend):
    """exp(phi_i - phi_j), shape=[N, N, n, n]: equal to eq 3 only when the frames commute
    (the contrast case: a curved connection)."""
    phi = skew(frames, n, be)
    return matrix_exp(phi[:, None] - phi[None, :], be)


def loop_holonomy(transport, loop):
    """Omega_{l0 l1} Omega_{l1 l2} ... Omega_{l(k-1) l0} for a loop of token indices,
    transport shape=[N, N, n, n] -> shape=[n, n] (any backend, or SymPy matrices in a
    nested list)."""
    product = transport[loop[0]][loop[1]]
    for a, b in zip(loop[1:], list(loop[2:]) + [loop[0]]):
        product = product @ transport[a][b]
    return product


def triangle_curvature(transport, be: Backend):
    """sum over ordered triangles (i, j, k) of |Omega_ij Omega_jk Omega_ki - I|_F^2: the
    discrete curvature of the connection (0 iff every holonomy is trivial on triangles,
    which generate all loops of the complete graph), a scalar."""
    n = transport.shape[-1]
    cycle = be.module.einsum("ijab,jkbc,kicd->ijkad", transport, transport, transport)
    deviation = cycle - be.asarray(np.eye(n))
    return be.sum(be.module.reshape(deviation * deviation, (-1,)), 0)


def random_loops(sampler, tokens: int, count: int, max_length: int) -> list[list[int]]:
    """``count`` seeded loops of 2 .. ``max_length`` tokens (repeats allowed, consecutive
    tokens distinct)."""
    loops = []
    for index in range(count):
        rng = sampler.spawn(index)
        length = int(rng.integers((1,), 2, max(2, max_length))[0])
        loop = [int(rng.integers((1,), 0, tokens - 1)[0])]
        while len(loop) < length:
            step = int(rng.integers((1,), 0, tokens - 1)[0])
            if step != loop[-1]:
                loop.append(step)
        loops.append(loop)
    return loops


def symbolic_skew(n: int, name: str) -> tuple[sympy.Matrix, list[sympy.Symbol]]:
    """A generic element A of so(n) with symbolic coordinates ``name``_ab (a < b)."""
    entries = sympy.zeros(n, n)
    symbols = []
    for a in range(n):
        for b in range(a + 1, n):
            s = sympy.Symbol(f"{name}{a}_{b}")
            entries[a, b], entries[b, a] = s, -s
            symbols.append(s)
    return entries, symbols


def cayley(skew_matrix: sympy.Matrix) -> sympy.Matrix:
    """(I - A)^{-1} (I + A): a rational parametrization of SO(n) (all of it but a set of
    measure zero), exact in SymPy."""
    eye = sympy.eye(skew_matrix.shape[0])
    return (eye - skew_matrix).inv(method="ADJ") * (eye + skew_matrix)


def cayley_frames(tokens: int, n: int):
    """Symbolic frames g_i = (I - A_i)^{-1} (I + A_i) in SO(n) (the Cayley chart, A_i generic
    in so(n)) as polynomial data: (numerator adj(I - A_i)(I + A_i), inverse numerator
    adj(I + A_i)(I - A_i), denominator det(I - A_i) = det(I + A_i)), so that
    g_i = N_i / d_i and g_i^{-1} = M_i / d_i exactly (no use of orthogonality).

    Returns
    -------
    (list of (N_i, M_i, d_i), list of the coordinate symbols)
    """
    frames, symbols = [], []
    eye = sympy.eye(n)
    for token in range(tokens):
        a, coordinates = symbolic_skew(n, f"a{token}_")
        symbols.extend(coordinates)
        numerator = ((eye - a).adjugate() * (eye + a)).expand()
        inverse_numerator = ((eye + a).adjugate() * (eye - a)).expand()
        frames.append((numerator, inverse_numerator, sympy.expand((eye - a).det())))
    return frames, symbols


def symbolic_edge_join(frame, transport: str = "pure-gauge") -> sympy.Matrix:
    """What two consecutive edges a -> b -> c leave at token b, minus its scalar part:
    with Omega_ab = g_a g_b^{-1} = N_a M_b / (d_a d_b) the join is M_b N_b, which must equal
    d_b^2 I for the holonomy of every loop to telescope (N_a M_a = d_a^2 I closes it).
    Returns the polynomial matrices [M N - d^2 I, N M - d^2 I] stacked (zero iff the
    connection is flat on every loop).  ``transport="no-inverse"`` (Omega_ab = g_a g_b,
    the mutation) joins N_b N_b instead."""
    numerator, inverse_numerator, det = frame
    n = numerator.shape[0]
    scalar = sympy.expand(det * det) * sympy.eye(n)
    if transport == "pure-gauge":
        joins = (inverse_numerator * numerator, numerator * inverse_numerator)
    else:
        joins = (numerator * numerator, numerator * numerator)
    return sympy.Matrix.vstack(*[(join - scalar).expand() for join in joins])

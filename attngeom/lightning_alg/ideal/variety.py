"""The attention variety's dimension: the rank of the Jacobian of mu over F_p, against
HMK Cor 3.3 (the dimension ``attngeom ideal`` reports beside the degree table)."""

from __future__ import annotations

import numpy as np

from attngeom.kernels.primefield import matmul_mod_p, rank_mod_p
from attngeom.kernels.sampling import Sampler
from attngeom.core.verdict import schwartz_zippel_bound
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.hmk.dimension import single_layer_dimension
from attngeom.lightning_alg.parametrization import (
    Parametrization, WeightBatch, sample_weights_mod_p, weight_degree)


#: Points at which the Jacobian rank is measured (the maximum is taken).
JACOBIAN_POINTS = 3
# -- dimension ------------------------------------------------------------------------------

def mu_jacobian_mod_p(param: Parametrization, weights: WeightBatch, b: int) -> np.ndarray:
    """The Jacobian of mu at weight point b, mod p, shape=[N, parameters].

    Columns: (A, V) when a >= d; (Q, K, V) when a < d, through dA_ml/dQ_rl = K_rm and
    dA_ml/dK_rm = Q_rl.  From Prop 6: y_c = (1/|Perm|) sum a_{p2 p3} v_{i p1}.
    """
    p = weights.prime
    A, V = weights.A[b], weights.V[b]
    n = len(param.orbit)
    d, dprime = A.shape[0], V.shape[0]
    rows = np.repeat(np.arange(n), param.mask.shape[1])
    mask = param.mask.ravel().astype(bool)
    rows, p1, p2, p3 = rows[mask], param.p1.ravel()[mask], param.p2.ravel()[mask], param.p3.ravel()[mask]
    out_row = param.out_row[rows]
    d_v = np.zeros((n, dprime * d), dtype=np.int64)
    np.add.at(d_v, (rows, out_row * d + p1), A[p2, p3])
    d_a = np.zeros((n, d * d), dtype=np.int64)
    np.add.at(d_a, (rows, p2 * d + p3), V[out_row, p1])
    inverse = np.array([pow(int(o), -1, p) for o in param.orbit], dtype=np.int64)[:, None]
    d_v, d_a = d_v % p * inverse % p, d_a % p * inverse % p
    if weights.Q is None:
        return np.hstack([d_a, d_v])
    Q, K = weights.Q[b], weights.K[b]
    cube = d_a.reshape(n, d, d)                                   # [c, m, l]
    d_q = matmul_mod_p(cube.transpose(0, 2, 1).reshape(n * d, d), K.T.copy(), p)  # [c,l,r]
    d_k = matmul_mod_p(cube.reshape(n * d, d), Q.T.copy(), p)     # [c, m, r]
    a = Q.shape[0]
    d_q = d_q.reshape(n, d, a).transpose(0, 2, 1).reshape(n, a * d)
    d_k = d_k.reshape(n, d, a).transpose(0, 2, 1).reshape(n, a * d)
    return np.hstack([d_q, d_k, d_v])


def variety_dimension(coords: CoordinateSystem, a: int, prime: int, sampler: Sampler,
                      points: int = JACOBIAN_POINTS) -> dict:
    """dim of the image closure of mu = the generic rank of its Jacobian, over F_p.

    The rank at a random point is at most the generic rank and smaller only if every
    maximal nonzero minor vanishes there: an r x r minor has degree r (w - 1) in the
    weights, so the maximum over ``points`` points is wrong with probability at most
    (r (w - 1) / p)^points.
    """
    param = Parametrization(coords)
    weights = sample_weights_mod_p(sampler, points, coords.d, coords.dprime, a, prime)
    ranks = [rank_mod_p(mu_jacobian_mod_p(param, weights, b), prime) for b in range(points)]
    rank = max(ranks)
    degree = rank * (weight_degree(coords.d, a) - 1)
    return {"rank": rank, "ranks": ranks, "points": points, "prime": prime,
            "failure_probability": schwartz_zippel_bound(degree, prime, points)}


def hmk_cor33_violation(d: int, dprime: int, a: int, t: int) -> str | None:
    """The hypothesis of HMK Cor 3.3 that (d, d', a, t) violate, or None."""
    if t < 2:
        return f"HMK Cor 3.3 needs t >= 2; got t={t}"
    if not ((d >= 2 and dprime >= 2) or (d >= 2 and a >= 2)):
        return f"HMK Cor 3.3 needs d, d' >= 2 or d, a >= 2; got d={d}, d'={dprime}, a={a}"
    return None


def dimension_report(d: int, t: int, a: int, dprime: int, col: int, prime: int,
                     sampler: Sampler) -> dict:
    """The measured dimension of one output coordinate's variety and of the whole output
    (HMK's neuromanifold), each beside HMK Cor 3.3.

    The formula is HMK Cor 3.3, eq (7), as printed (``attngeom.lightning_alg.hmk.dimension``):
    2ad + dd' - a^2 - 1 if a <= d, else d^2 + dd' - 1.
    HMK's neuromanifold M_{d,d',a} is the whole output phi_W; ADM's variety here is one
    output coordinate, which only sees row i of V, so its dimension is HMK's formula at
    d' = 1.  For d' = 1 and t >= 2 the two coincide: every output coordinate repeats the
    same coefficients (ADM §3 sequence-copy relations).
    """
    one = CoordinateSystem(d, t, dprime, 1, col)
    measured = variety_dimension(one, a, prime, sampler)
    violation = hmk_cor33_violation(d, 1, a, t)
    out = {"variety_dimension": measured["rank"], "jacobian": measured,
           "hmk_cor33_one_coordinate": {
               "formula": "HMK Cor 3.3 at d'=1: 2ad + d - a^2 - 1 (a <= d), d^2 + d - 1 (a > d)",
               "value": single_layer_dimension(d, 1, a), "applicable": violation is None,
               "hypothesis": violation,
               "agrees": single_layer_dimension(d, 1, a) == measured["rank"]}}
    whole_size = CoordinateSystem.size_of(d, t, dprime, all_outputs=True)
    if whole_size <= 20_000:
        whole = CoordinateSystem(d, t, dprime, all_outputs=True)
        rank = variety_dimension(whole, a, prime, sampler)
        whole_violation = hmk_cor33_violation(d, dprime, a, t)
        out["hmk_cor33_whole_output"] = {
            "formula": "HMK Cor 3.3: 2ad + dd' - a^2 - 1 (a <= d), d^2 + dd' - 1 (a > d)",
            "value": single_layer_dimension(d, dprime, a), "measured": rank["rank"],
            "failure_probability": rank["failure_probability"],
            "applicable": whole_violation is None, "hypothesis": whole_violation,
            "agrees": single_layer_dimension(d, dprime, a) == rank["rank"]}
    return out


# -- the ideal ------------------------------------------------------------------------------

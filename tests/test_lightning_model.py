"""Labels, coordinates, the lightning map, deep and softmax networks, and mu(W)."""

from math import comb

import numpy as np
import pytest
import sympy

from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.coordinates import (CoordinateSystem, per_coordinate_count,
                                       prop5_per_coordinate_formula, prop5_total_formula)
from attngeom.lightning_alg.labels import Label, distinct_permutations, orbit_size
from attngeom.lightning_alg.model import (Layer, deep_lightning_attention, layer_from_qkv,
                                 lightning_attention, softmax_attention)
from attngeom.lightning_alg.parametrization import (Parametrization, sample_weights_float,
                                           sample_weights_mod_p)


def test_labels_as_adm_writes_them():
    cross = Label.from_pairs([(1, 2), (2, 2), (2, 1)])
    assert cross.text() == "y_{(1,2),(2,2),(2,1)}" and cross.m2() == "y_((1,2),(2,2),(2,1))"
    # ADM's Macaulay2 code sorts the pairs; the same coordinate either way
    assert Label.from_pairs([(1, 2), (2, 1), (2, 2)]) == cross
    single = Label.from_pairs([(2, 1), (1, 1), (2, 1)])
    assert single.text() == "y_{(1,1),(2,1),(2,1)}" and single.is_single
    assert Label.from_pairs([(1, 2), (2, 2), (2, 1)], row=3).m2(True) == "y_(3,(1,2),(2,2),(2,1))"
    with pytest.raises(BadInput):
        Label.from_pairs([(1, 1), (1, 2), (1, 3)])


def test_orbit_sizes_are_distinct_permutation_counts():
    for K in [(1, 1, 1), (1, 1, 2), (1, 2, 3), (2, 2)]:
        assert orbit_size(K) == len(distinct_permutations(K))
    assert [orbit_size(K) for K in [(1, 1, 1), (1, 2, 2), (1, 2, 3), (1, 2), (3, 3)]] == [1, 3, 6, 2, 1]


@pytest.mark.parametrize("d,t", [(1, 1), (2, 2), (3, 2), (3, 5), (5, 3), (7, 4)])
def test_coordinate_counts_match_prop5(d, t):
    coords = CoordinateSystem(d, t)
    assert len(coords) == per_coordinate_count(d, t) == prop5_per_coordinate_formula(d, t)
    whole = CoordinateSystem(d, t, dprime=2, all_outputs=True)
    assert len(whole) == 2 * prop5_total_formula(d, t)
    assert len(set(whole.labels)) == len(whole)
    assert sum(lab.is_single for lab in coords.labels) == comb(d + 2, 3)


def test_coordinate_system_refuses_bad_and_huge_inputs():
    for kwargs in [dict(d=0, t=2), dict(d=2, t=2, row=2), dict(d=2, t=2, col=3)]:
        with pytest.raises(BadInput):
            CoordinateSystem(**kwargs)
    with pytest.raises(BadInput, match="limit"):
        CoordinateSystem(500, 10)


def _lightning_by_definition(X, A, V):
    """HMK eq (1): output i = sum_j (x_j^T A x_i) V x_j."""
    t = X.shape[1]
    return np.stack([sum((X[:, j] @ A @ X[:, i]) * (V @ X[:, j]) for j in range(t))
                     for i in range(t)], axis=1)


def test_lightning_map_matches_hmk_definition_and_deep_composes():
    s = Sampler(0)
    X, Q, K, V = s.floats((3, 4)), s.floats((2, 3)), s.floats((2, 3)), s.floats((2, 3))
    layer = layer_from_qkv(Q, K, V)
    out = lightning_attention(X, layer.A, layer.V)
    assert np.allclose(out, _lightning_by_definition(X, K.T @ Q, V))
    second = Layer(s.floats((2, 2)), s.floats((3, 2)))
    deep = deep_lightning_attention(X, [layer, second])
    assert np.allclose(deep, lightning_attention(out, second.A, second.V))
    # homogeneous of degree 3^l in X
    assert np.allclose(deep_lightning_attention(2 * X, [layer, second]), 3**0 * 2**9 * deep)
    with pytest.raises(BadInput, match="layer 2"):
        deep_lightning_attention(X, [layer, Layer(s.floats((3, 3)), s.floats((3, 3)))])


def test_lightning_map_is_exact_on_sympy_matrices():
    X = sympy.Matrix(2, 2, sympy.symbols("x1:5"))
    A = sympy.Matrix([[1, 2], [0, 1]])
    V = sympy.Matrix([[1, -1]])
    out = lightning_attention(X, A, V)
    assert out.shape == (1, 2) and sympy.Poly(out[0, 0]).total_degree() == 3


@pytest.mark.parametrize("backend", ["numpy", "torch", "jax"])
def test_softmax_attention_matches_eq15(backend):
    pytest.importorskip(backend if backend != "numpy" else "numpy")
    s = Sampler(1)
    X, A, V = s.floats((3, 4)), s.floats((3, 3)), s.floats((2, 3))
    be = get_backend(backend)
    out = be.to_numpy(softmax_attention(be.asarray(X), be.asarray(A), be.asarray(V), be))
    t = X.shape[1]
    for i in range(t):
        weights = np.array([np.exp(X[:, i] @ A @ X[:, j]) for j in range(t)])
        expected = sum(w * (V @ X[:, j]) for j, w in enumerate(weights)) / weights.sum()
        assert np.allclose(out[:, i], expected)


@pytest.mark.parametrize("d,t,dprime,a", [(2, 2, 1, 2), (3, 3, 2, 1), (4, 2, 1, 3)])
def test_mu_symbolic_exact_and_float_agree(d, t, dprime, a):
    coords = CoordinateSystem(d, t, dprime, all_outputs=True)
    param = Parametrization(coords)
    w = sample_weights_mod_p(Sampler(3), 2, d, dprime, a)
    ring, y = param.symbolic(a)
    exact = param.evaluate_mod_p(w)
    values = [int(v) for v in (w.Q[0].ravel().tolist() + w.K[0].ravel().tolist()
                               if w.Q is not None else w.A[0].ravel().tolist())] + w.V[0].ravel().tolist()
    for k in range(0, len(coords), 7):
        value = y[k](*values)
        assert (int(value.numerator) * pow(int(value.denominator), -1, DEFAULT_PRIME) - int(exact[0, k])) % DEFAULT_PRIME == 0
    wf = sample_weights_float(Sampler(4), 3, d, dprime, a)
    floats = param.evaluate_float(wf.A, wf.V)
    if wf.Q is not None:
        assert np.linalg.matrix_rank(wf.A[0]) <= a
    A0, V0 = wf.A[0], wf.V[0]
    for k, lab in enumerate(coords.labels[:20]):
        terms = param.orderings(lab)
        expected = sum(A0[p2 - 1, p3 - 1] * V0[lab.row - 1, p1 - 1] for p1, p2, p3 in terms) / lab.orbit_size
        assert floats[0, k] == pytest.approx(expected)

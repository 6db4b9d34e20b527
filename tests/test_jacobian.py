"""attngeom.kernels.jacobian: dual numbers (exact and float), autodiff backends, numerical rank."""

import math

import numpy as np
import pytest

import attngeom.kernels.jacobian as jac
from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.jacobian import (Dual, FloatField, NumericalRank, PrimeField, UnclearRank,
                              jacobian_float, jacobian_mod_p, numerical_rank, parameter_duals,
                              residues)
from attngeom.kernels.primefield import matmul_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME
from attngeom.lightning_alg.model import (Layer, attention_matrix, deep_lightning_attention,
                                 softmax_attention)

P = DEFAULT_PRIME


def lightning_network(w, X, backend):
    return deep_lightning_attention(X, [Layer(attention_matrix(w[i], w[i + 1]), w[i + 2])
                                        for i in range(0, len(w), 3)])


def softmax_network(w, X, backend):
    out = X
    for i in range(0, len(w), 3):
        out = softmax_attention(out, attention_matrix(w[i], w[i + 1]), w[i + 2], backend)
    return out


def weights(rng, d=3, a=2, layers=2, scale=1.0):
    return [rng.standard_normal(s) * scale for s in [(a, d), (a, d), (d, d)] * layers]


def finite_difference_jacobian(func, ws, X, h=1e-6):
    """Central differences, column by column (the reference for the dual numbers)."""
    be = get_backend("numpy")
    base = [w.copy() for w in ws]
    cols = []
    for k, w in enumerate(base):
        for idx in np.ndindex(w.shape):
            plus = [x.copy() for x in base]
            minus = [x.copy() for x in base]
            plus[k][idx] += h
            minus[k][idx] -= h
            f = lambda ws_: np.stack([func(ws_, x, be) for x in X])
            cols.append(((f(plus) - f(minus)) / (2 * h)).ravel())
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("func", [lightning_network, softmax_network])
def test_dual_jacobian_matches_finite_differences(func):
    rng = np.random.default_rng(0)
    ws, X = weights(rng, scale=0.5), rng.standard_normal((4, 3, 3))
    J = jacobian_float(func, ws, X)
    reference = finite_difference_jacobian(func, ws, X)
    assert J.shape == reference.shape == (4 * 3 * 3, 42)
    assert np.abs(J - reference).max() <= 1e-6 * np.abs(reference).max()


@pytest.mark.parametrize("backend", ["torch", "jax"])
@pytest.mark.parametrize("func", [lightning_network, softmax_network])
def test_autodiff_backends_agree_with_dual_numbers(backend, func):
    rng = np.random.default_rng(1)
    ws, X = weights(rng, scale=0.5), rng.standard_normal((6, 3, 3))
    J = jacobian_float(func, ws, X)
    other = jacobian_float(func, ws, X, get_backend(backend))
    assert np.abs(J - other).max() <= 1e-12 * np.abs(J).max()


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_autodiff_in_small_chunks_of_directions_is_the_same_jacobian(backend, monkeypatch):
    """Forcing one parameter direction per chunk (as a huge map on a small device would)
    gives the Jacobian of the one-chunk computation."""
    rng = np.random.default_rng(11)
    ws, X = weights(rng, scale=0.5), rng.standard_normal((4, 3, 3))
    whole = jacobian_float(softmax_network, ws, X, get_backend(backend))
    monkeypatch.setattr(jac, "CHUNK_ENTRIES", 1)
    chunked = jacobian_float(softmax_network, ws, X, get_backend(backend))
    assert chunked.shape == whole.shape
    assert np.abs(chunked - whole).max() <= 1e-14 * np.abs(whole).max()


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_autodiff_halves_a_chunk_that_runs_out_of_memory(backend, monkeypatch):
    """A chunk of directions whose intermediates do not fit (measured on an H100: a 52 GiB
    batched X^T A X at HMK delta = 48) is retried in halves; other errors propagate."""
    from attngeom.kernels.backend import Backend

    class FakeOutOfMemory(RuntimeError):
        pass

    rng = np.random.default_rng(12)
    ws, X = weights(rng, scale=0.5), rng.standard_normal((4, 3, 3))
    be = get_backend(backend)
    whole = jacobian_float(softmax_network, ws, X, be)
    sizes = []
    original = Backend.synchronize

    def tight(self, *arrays):
        sizes.append(arrays[0].shape[0])
        if arrays[0].shape[0] > 5:
            raise FakeOutOfMemory("out of memory")
        original(self, *arrays)

    monkeypatch.setattr(Backend, "synchronize", tight)
    monkeypatch.setattr(Backend, "is_out_of_memory", lambda self, e: isinstance(e, FakeOutOfMemory))
    halved = jacobian_float(softmax_network, ws, X, be)
    assert max(sizes) > 5 and sizes[-1] <= 5         # a failed chunk, then halves that fit
    assert np.abs(halved - whole).max() <= 1e-14 * np.abs(whole).max()
    monkeypatch.setattr(Backend, "is_out_of_memory", lambda self, e: False)
    with pytest.raises(FakeOutOfMemory):
        jacobian_float(softmax_network, ws, X, be)


def test_size_limit_grows_with_the_device_memory():
    class FakeDevice:
        memory_bytes = 80 * 2**30

    class Cpu:
        memory_bytes = None

    assert jac.max_entries(Cpu()) == jac.max_entries() == jac.MAX_ENTRIES
    assert jac.max_entries(FakeDevice()) == 80 * 2**30 // (8 * jac.DEVICE_SHARE)


def test_exact_jacobian_is_the_integer_jacobian_mod_p():
    rng = np.random.default_rng(2)
    ws = [rng.integers(-2, 3, s) for s in [(2, 3), (2, 3), (3, 3)] * 2]
    X = rng.integers(-2, 3, (3, 3, 3))
    J_float = jacobian_float(lightning_network, ws, X)
    assert np.abs(J_float).max() < 2 ** 50          # exact integers in float64
    J_exact = jacobian_mod_p(lightning_network, ws, X, P)
    assert np.array_equal(np.round(J_float).astype(np.int64) % P, J_exact)
    assert J_exact.any()


def test_chunked_directions_give_the_same_jacobian(monkeypatch):
    rng = np.random.default_rng(3)
    ws = [rng.integers(0, P, s) for s in [(2, 3), (2, 3), (3, 3)]]
    X = rng.integers(0, P, (5, 3, 3))
    whole = jacobian_mod_p(lightning_network, ws, X, P)
    monkeypatch.setattr(jac, "CHUNK_ENTRIES", 50)
    assert np.array_equal(jacobian_mod_p(lightning_network, ws, X, P), whole)


def test_dual_reports_one_sample_and_counts_axes_within_it():
    X = Dual(np.arange(24.0).reshape(2, 3, 4), None, FloatField, batch_ndim=1)
    assert X.shape == (3, 4) and X.T.shape == (4, 3)
    assert X.sum(axis=1).value.shape == (2, 3)
    assert np.array_equal(X.sum(axis=1)[:, None].value, X.value.sum(axis=2)[:, :, None])
    assert np.array_equal(X.max(0, keepdims=True).value, X.value.max(axis=1, keepdims=True))


def test_max_and_division_have_the_right_derivatives():
    a = np.array([[1.0, 3.0, 2.0]])
    [x] = parameter_duals([a], FloatField)
    top = x.max(1)
    assert top.value.tolist() == [3.0] and top.tangent[:, 0].tolist() == [0, 1, 0]
    q = x / x.sum(1, keepdims=True)
    # d(x_i / s)/dx_j = delta_ij / s - x_i / s^2
    s = a.sum()
    expected = np.eye(3) / s - a.T / s ** 2
    assert np.allclose(q.tangent[:, 0, :].T, expected)


def test_exact_duals_refuse_non_polynomial_operations():
    x = residues(np.array([[1, 2]]), P)
    with pytest.raises(TypeError):
        x.exp()
    with pytest.raises(TypeError):
        x / x
    with pytest.raises(BadInput):
        PrimeField(2 ** 31 + 11)


def test_residues_multiply_without_overflow():
    big = np.full((2, 3, 3), P - 1, dtype=np.int64)
    product = (residues(big, P, batch_ndim=1) @ residues(big[0], P)).value
    assert np.all(product == 3 % P)                   # (-1)(-1) * 3 terms


def test_batched_matmul_mod_p_slices_the_inner_axis():
    rng = np.random.default_rng(4)
    inner = (1 << 16) + 5                             # two chunks of the inner dimension
    left = rng.integers(0, P, (1, inner))
    right = rng.integers(0, P, (2, inner, 1))
    got = matmul_mod_p(left, right, P)
    for b in range(2):
        exact = sum(int(x) * int(y) for x, y in zip(left[0], right[b, :, 0])) % P
        assert int(got[b, 0, 0]) == exact


def test_size_guard_is_bad_input(monkeypatch):
    monkeypatch.setattr(jac, "MAX_ENTRIES", 100)
    rng = np.random.default_rng(5)
    with pytest.raises(BadInput, match="entries"):
        jacobian_mod_p(lightning_network, [rng.integers(0, P, s) for s in [(2, 3), (2, 3), (3, 3)]],
                       rng.integers(0, P, (5, 3, 3)), P)


def _matrix_with_singular_values(values, rows=40, seed=6):
    rng = np.random.default_rng(seed)
    n = len(values)
    U, _ = np.linalg.qr(rng.standard_normal((rows, n)))
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return U @ np.diag(values) @ V.T


def test_numerical_rank_reads_a_clear_gap():
    rank = numerical_rank(_matrix_with_singular_values([5, 1, 1e-3, 1e-17, 0]))
    assert rank.rank == 3 and rank.clear
    assert rank.kept_min == pytest.approx(1e-3 / 5, rel=1e-6)
    assert rank.dropped_max < rank.tolerance and rank.gap > 1e9
    assert rank.tolerance == pytest.approx(256 * np.finfo(float).eps * math.sqrt(5))


def test_numerical_rank_refuses_a_grey_zone():
    rank = numerical_rank(_matrix_with_singular_values([1, 1, 1e-11]))
    assert not rank.clear
    with pytest.raises(UnclearRank, match="no clear singular-value gap"):
        rank.require_clear("test")


def test_numerical_rank_of_zero_and_evidence_fields():
    assert numerical_rank(np.zeros((4, 3))).rank == 0
    ev = numerical_rank(np.eye(3)).evidence()
    assert ev["numerical_rank"] == 3 and ev["gap_clear"] and ev["sigma_dropped_max_relative"] == 0.0
    assert isinstance(numerical_rank(np.eye(2)), NumericalRank)


def test_cuda_is_refused_with_one_line_without_a_gpu():
    from tests.conftest import cuda_available
    if cuda_available("torch"):
        pytest.skip("a GPU is present")
    with pytest.raises(BadInput, match="CUDA"):
        get_backend("torch", "cuda")


@pytest.mark.gpu
def test_cuda_jacobian_matches_cpu():
    rng = np.random.default_rng(7)
    ws, X = weights(rng, scale=0.5), rng.standard_normal((8, 3, 3))
    cpu = jacobian_float(softmax_network, ws, X)
    gpu = jacobian_float(softmax_network, ws, X, get_backend("torch", "cuda"))
    assert np.abs(cpu - gpu).max() <= 1e-10 * np.abs(cpu).max()
    assert numerical_rank(gpu, get_backend("torch", "cuda")).rank == numerical_rank(cpu).rank

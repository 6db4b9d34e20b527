"""The compiled full-Sigma statistics of the GT structured kernel on the CPU
(attngeom.geometry_proofs.gauge.accelerated.kl_statistics_cpu, the C extension attngeom.geometry_proofs.gauge.accelerated._kl_statistics_cpu;
issue 26): when they apply, and that they are the library calls' numbers on NumPy and on
torch's CPU, float64 and float32, on the AVX2 code path and the baseline one."""

from __future__ import annotations

import os
import shutil
import sysconfig

import numpy as np
import pytest

from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla
from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_cpu as compiled
from attngeom.kernels.backend import get_backend
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import kl_attention_direct, kl_attention_structured
from tests.test_kl_statistics_triton import ROW_KEYS, _inputs

built = pytest.mark.skipif(compiled.unavailable(get_backend("numpy"), *_inputs()) is not None,
                           reason="the C extension was not built")


def _python_headers() -> bool:
    return os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")) or not _python_headers(),
                    reason="no C compiler or no Python headers: pip installs attngeom without the extension")
def test_the_extension_is_built_where_a_compiler_is():
    """With a C compiler and Python's headers, ``pip install`` builds the extension (it is
    optional: a failed build would leave the slower library calls without a word)."""
    assert compiled.instruction_set() in ("avx2+fma", "baseline")


def test_where_the_compiled_statistics_apply(monkeypatch):
    """NumPy and torch's CPU, float32/64 alike, outside autograd, 1 <= n <= MAX_N, the
    extension built; each refusal says why in a few words."""
    import types

    import torch
    numpy_be, torch_be = get_backend("numpy"), get_backend("torch")
    # the refusals below do not depend on the build: a stand-in module for where it failed
    monkeypatch.setattr(compiled, "_extension", lambda: types.SimpleNamespace(instruction_set=lambda: "baseline"))
    arrays = _inputs()
    tensors = [torch.as_tensor(x) for x in arrays]
    assert compiled.unavailable(get_backend("jax"), *arrays) == "jax is neither numpy nor torch"
    mu = tensors[0].clone().requires_grad_()
    assert compiled.unavailable(torch_be, mu, *tensors[1:]).startswith("autograd")
    with torch.no_grad():
        assert compiled.unavailable(torch_be, mu, *tensors[1:]) is None
    assert compiled.unavailable(numpy_be, arrays[0].astype(np.float32), *arrays[1:]) == "mixed dtypes"
    assert compiled.unavailable(numpy_be, *(x.astype(np.float16) for x in arrays)) == "dtype float16"
    big = np.zeros((1, 1, 1, compiled.MAX_N + 1))
    assert compiled.unavailable(numpy_be, big, big, big) == f"n = {compiled.MAX_N + 1} outside 1 .. {compiled.MAX_N}"
    assert compiled.unavailable(numpy_be, arrays[0][:, :, :0], *arrays[1:]) == "empty input"
    with compiled.disabled():
        assert not compiled.enabled() and compiled.unavailable(numpy_be, *arrays) == "disabled"
    assert compiled.enabled()
    monkeypatch.setattr(compiled, "_extension", lambda: None)
    assert compiled.unavailable(numpy_be, *arrays) == "the C extension was not built"
    assert compiled.instruction_set() is None


def _close(got, want, dtype, what):
    """float64 to 1e-12, float32 to 1e-5, relative to the array's largest entry (at least 1)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    bound = 1e-12 if dtype == "float64" else 1e-5
    difference = float(np.max(np.abs(got - want)))
    assert difference <= bound * max(1.0, float(np.max(np.abs(want)))), (what, difference)


@built
@pytest.mark.parametrize("path", [-1, 0], ids=["default", "baseline"])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("diagonal", [False, True], ids=["full", "diagonal"])
@pytest.mark.parametrize("n, shared, tokens", [(1, True, 5), (3, False, 5), (4, True, 5), (20, True, 3),
                                               (21, False, 2)])
def test_compiled_statistics_are_the_library_calls(monkeypatch, path, backend, dtype, diagonal, n, shared,
                                                   tokens):
    """The rows, K, beta and the values against the library calls (2 x 3 heads x ``tokens``
    items: counts that fill no whole group of 4 or 8 lanes), full Sigma and diagonal Sigma
    (variances, GT's configuration), float64 to 1e-12 and float32 to 1e-5; the direct kernel
    (a) within 1e-10 in float64; odd n, n = 1 and per-head frames (the zero padding of the
    work arrays); mutations (the frames' transposes, R^T for R, and frame indices shifted by
    one inside the kernel) move the rows by more than 1e-3."""
    monkeypatch.setattr(compiled, "PATH", path)
    be = get_backend(backend)
    arrays = [x.astype(dtype) for x in _inputs(n=n, shared=shared, tokens=tokens)]
    if diagonal:
        arrays[1] = np.diagonal(arrays[1], 0, -2, -1).copy()
    if backend == "torch":
        import torch
        arrays = [torch.as_tensor(x) for x in arrays]
    mu, sigma, frames = arrays
    assert compiled.unavailable(be, mu, sigma, frames) is None
    options = {"diagonal_sigma": diagonal}
    got = kla.rotated_statistics(mu, sigma, frames, be, **options)
    with compiled.disabled():
        want = kla.rotated_statistics(mu, sigma, frames, be, **options)
        library = kl_attention_structured(mu, sigma, frames, 0.7, be, causal=True, **options)
    assert "operands" in got
    for key in ROW_KEYS:
        _close(got[key], want[key], dtype, key)
    result = kl_attention_structured(mu, sigma, frames, 0.7, be, causal=True, **options)
    for name in ("kl", "beta", "values"):
        _close(getattr(result, name), getattr(library, name), dtype, name)
    if dtype == "float64":
        direct = kl_attention_direct(mu, sigma, frames, 0.7, be, causal=True, **options)
        for name in ("kl", "beta", "values"):
            assert float(np.max(np.abs(np.asarray(getattr(direct, name)) - np.asarray(getattr(result, name))))) <= 1e-10
    if n > 1:                                                   # SO(1) is trivial
        mutated = kla.rotated_statistics(mu, sigma, -frames, be, **options)
        assert max(float(np.max(np.abs(np.asarray(mutated[k]) - np.asarray(want[k]))))
                   for k in ("nu", "second", "precision")) > 1e-3
        index = compiled._frame_index
        monkeypatch.setattr(compiled, "_frame_index", lambda *shapes: np.roll(index(*shapes), 1))
        shifted = kla.rotated_statistics(mu, sigma, frames, be, **options)
        assert max(float(np.max(np.abs(np.asarray(shifted[k]) - np.asarray(want[k])))) for k in ("nu", "second")) > 1e-3


@built
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_sigma_that_is_not_positive_definite_gets_the_library_calls(backend):
    """A negative pivot or a NaN in one item: the kernel reports it and the library calls
    rerun, so the caller sees their behaviour -- the error for a negative pivot; for a NaN,
    torch's error and NumPy's NaN rows (OpenBLAS's factorization does not stop at a NaN)."""
    be = get_backend(backend)
    mu, sigma, frames = _inputs(n=4)
    for value in (-1.0, np.nan):
        broken = sigma.copy()
        broken[1, 2, 3, 0, 0] = value
        arrays = (mu, broken, frames)
        if backend == "torch":
            import torch
            arrays = tuple(torch.as_tensor(x) for x in arrays)
        assert compiled.unavailable(be, *arrays) is None
        with compiled.disabled():
            try:
                want = kl_attention_structured(*arrays, 0.7, be).kl
            except Exception as error:        # noqa: BLE001 - the library's own error type
                want = error
        assert value == -1.0 and isinstance(want, Exception) or value != value
        if isinstance(want, Exception):
            with pytest.raises(type(want)):
                kl_attention_structured(*arrays, 0.7, be)
        else:
            got = kl_attention_structured(*arrays, 0.7, be).kl
            assert np.isnan(np.asarray(want)).any()
            assert np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True)


@built
def test_strided_inputs_and_autograd():
    """Strided views (a transposed Sigma, every other token) give the numbers of their copies;
    on torch with grad the library calls run (differentiable) and the gradient flows."""
    import torch
    be = get_backend("numpy")
    mu, sigma, frames = _inputs(n=5, tokens=9)
    view = (mu[:, :, ::2], np.swapaxes(sigma, -1, -2)[:, :, ::2], frames[:, :, ::2])
    copies = tuple(np.ascontiguousarray(x) for x in view)
    got, want = kla.rotated_statistics(*view, be), kla.rotated_statistics(*copies, be)
    for key in ROW_KEYS:
        assert np.array_equal(got[key], want[key]), key
    tensors = [torch.as_tensor(x) for x in (mu, sigma, frames)]
    tensors[0].requires_grad_()
    stats = kla.rotated_statistics(*tensors, get_backend("torch"))
    assert "operands" not in stats
    stats["offset"].sum().backward()
    assert tensors[0].grad is not None and float(tensors[0].grad.abs().max()) > 0


@built
def test_the_extension_checks_its_buffers():
    """Sizes that do not match count, n and the item size, a frame index out of range and a
    bad item size raise ValueError before anything is written."""
    module = compiled._extension()
    count, n = 3, 2
    width = n * (n + 1) // 2 + n + 2
    sigma = np.tile(np.eye(n), (count, 1, 1))
    mu, frames = np.zeros((count, n)), np.tile(np.eye(n), (2, 1, 1))
    out = [np.zeros((count, width)), np.zeros((count, width)), np.zeros((count, n)), np.zeros(count)]
    index = np.zeros(count, dtype=np.int64)
    pairs = compiled._pair_table(n, False)
    order = np.array([2, 0, 1, -1])                             # one group of 4 lanes (float64)
    assert module.statistics(sigma, mu, frames, index, pairs, order, *out, n, 8) == 0
    assert np.allclose(out[1][:, :n], 1.0)                      # P = I
    with pytest.raises(ValueError, match="buffer sizes"):
        module.statistics(sigma[:2], mu, frames, index, pairs, order, *out, n, 8)
    with pytest.raises(ValueError, match="buffer sizes"):
        module.statistics(sigma, mu, frames, index, pairs[:, :2].copy(), order, *out, n, 8)
    with pytest.raises(ValueError, match="buffer sizes"):             # not whole groups
        module.statistics(sigma, mu, frames, index, pairs, order[:3].copy(), *out, n, 8)
    for wrong in ([2, 0, 0, -1], [-1, 0, 1, 2], [2, 0, -1, -1], [3, 0, 1, -1], [2, 0, 1, -2]):
        with pytest.raises(ValueError, match="order must hold every item once"):
            module.statistics(sigma, mu, frames, index, pairs, np.array(wrong), *out, n, 8)
    with pytest.raises(ValueError, match="frame index"):
        module.statistics(sigma, mu, frames, index + 2, pairs, order, *out, n, 8)
    with pytest.raises(ValueError, match="pairs must be"):
        module.statistics(sigma, mu, frames, index, pairs[::-1].copy(), order, *out, n, 8)
    with pytest.raises(ValueError, match="itemsize"):
        module.statistics(sigma, mu, frames, index, pairs, order, *out, n, 2)
    with pytest.raises(ValueError, match="n must be"):
        module.statistics(sigma, mu, frames, index, pairs, order, *out, 0, 8)


def test_the_order_puts_every_item_once_and_shares_frames_across_heads():
    """The kernel's order: every item of [B, H, N] exactly once; empty lanes only at the end
    of a group; with shared frames a group's tokens go through every head in turn (so the
    lanes' frames repeat from group to group), otherwise a head's tokens in turn."""
    shape = (2, 3, 5)
    for shared in (True, False):
        order = compiled._order(shape, shared, 4)
        groups = order.reshape(-1, 4)
        assert sorted(order[order >= 0].tolist()) == list(range(30))
        assert (groups[:, 0] >= 0).all()
        assert all(list(g) == sorted(g, key=lambda i: i < 0) for g in groups.tolist())
        items = np.unravel_index(np.where(groups >= 0, groups, groups[:, :1]), shape)
        heads, tokens = items[1], items[2]
        assert (heads == heads[:, :1]).all()                     # one head a group
        frames = np.where(groups >= 0, items[0] * 5 + tokens, -1)
        repeats = (frames[1:] == frames[:-1]).all(axis=1).sum()
        assert repeats == (2 * 2 * 2 if shared else 0)            # 2 batches x 2 token groups x (3 - 1)

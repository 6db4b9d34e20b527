"""NumPy's softmax (float64, float32) with glibc's vector exp (attngeom.kernels.softmax_cpu, the C
extension attngeom.kernels._softmax_cpu; issue 26): NumPy's numbers up to rounding, masks,
NaN and infinities as NumPy treats them, and where it applies."""

from __future__ import annotations

import numpy as np
import pytest

from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla
from attngeom.geometry_proofs.gauge.accelerated import kl_structured
from attngeom.kernels import softmax_cpu
from attngeom.kernels.backend import get_backend
from attngeom.kernels.sampling import Sampler

built = pytest.mark.skipif(not softmax_cpu.available(),
                           reason="the vector-exp softmax is not built here or this CPU lacks AVX2")


def _numpy(x, scale):
    """The formula with NumPy's exp: exp(scale (x - r)) / sum, r the row's largest exponent's x."""
    reference = x.max(-1, keepdims=True) if scale > 0 else x.min(-1, keepdims=True)
    weights = np.exp((x - reference) * scale)
    return weights / weights.sum(-1, keepdims=True)


@built
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("count", [1, 3, 4, 7, 9, 128, 131])
@pytest.mark.parametrize("scale", [1.0, -1.0, -1.0 / 0.7, 3.5])
def test_rows_are_numpys_softmax(dtype, count, scale):
    """Generic rows (tails past whole groups of four or eight lanes; exponents down to -700,
    so subnormal and zero weights occur): within 32 eps of NumPy's formula (4e-15 in float64),
    relative to the row's largest weight (a few ulp of exp plus the sums' order), rows
    summing to 1."""
    x = Sampler(count).floats((5, 6, count), 60.0).astype(dtype)
    got, want = softmax_cpu.softmax(x, scale), _numpy(x, x.dtype.type(scale))
    eps = float(np.finfo(x.dtype).eps)
    assert got.shape == x.shape and got.dtype == x.dtype
    assert float(np.max(np.abs(got - want))) <= 32 * eps
    assert float(np.max(np.abs(got.sum(-1, dtype=np.float64) - 1.0))) <= 32 * eps * count


@built
def test_the_exponentials_are_within_a_few_ulp():
    """exp(t) over [-745, 0] from rows [0, t]: the weights are 1/(1 + e^t) and e^t/(1 + e^t),
    so their ratio is e^t after three roundings (1.5 ulp): in float64 within 3 + 1.5 ulp of
    NumPy's exp where that is a normal number (measured 3.0); below log(smallest normal) the
    weight is 0 instead of NumPy's subnormal one."""
    t = np.linspace(-745.0, 0.0, 200_001)
    rows = np.stack([np.zeros_like(t), t], -1)
    got = softmax_cpu.softmax(rows, 1.0)
    exp_t = got[:, 1] / got[:, 0]
    want = np.exp(t)
    normal = want > np.finfo(np.float64).tiny * 2**4
    ulps = np.abs(exp_t[normal] - want[normal]) / np.spacing(want[normal])
    assert float(ulps.max()) <= 4.5
    tiny = np.finfo(np.float64).tiny                  # below log(tiny): 0, not a subnormal
    assert np.array_equal(got[:, 1] == 0, t < np.log(tiny))
    assert float(np.max(np.abs(got[:, 1] - want / (1 + want)))) <= 4e-16
    # float32 over its normal range, against the exact exponential (float64), the ratio taken
    # in float64 (two float32 roundings): within 3.5 float32 ulp (measured 2.8; NumPy's own
    # float32 exp 2.3 by the same measure)
    t32 = np.linspace(-87.0, 0.0, 100_001, dtype=np.float32)
    got32 = softmax_cpu.softmax(np.stack([np.zeros_like(t32), t32], -1), 1.0).astype(np.float64)
    exact = np.exp(t32.astype(np.float64))
    ulps32 = np.abs(got32[:, 1] / got32[:, 0] - exact) / np.spacing(exact.astype(np.float32))
    assert float(ulps32.max()) <= 3.5


@built
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_exponents_far_below_the_largest_give_zero_fast(dtype):
    """Rows whose exponents reach far below log(smallest normal) (GT's float32 K: 98% of them):
    those weights are 0, the others NumPy's, every weight within the smallest normal number
    of NumPy's (plus 32 eps of the row's largest weight)."""
    x = Sampler(9).floats((40, 128), 1.0).astype(dtype) * (2000.0 if dtype == "float64" else 300.0)
    got = softmax_cpu.softmax(x, -1.0)
    want = _numpy(x, x.dtype.type(-1.0))
    info = np.finfo(x.dtype)
    exponents = (x - x.min(-1, keepdims=True)) * x.dtype.type(-1.0)
    assert (exponents < np.log(info.tiny)).mean() > 0.5
    assert np.array_equal(got == 0, exponents < np.log(info.tiny))
    assert float(np.max(np.abs(got - want))) <= 32 * float(info.eps) + float(info.tiny)


@built
def test_masks_infinities_and_nan_as_numpy():
    """-inf gives 0 (a causal mask), a row of -inf and a row with +inf or NaN give NaN, as
    NumPy's formula does."""
    x = np.array([[0.0, -np.inf, 1.0, 2.0, -np.inf],
                  [-np.inf] * 5,
                  [0.0, np.inf, 1.0, 2.0, 3.0],
                  [0.0, np.nan, 1.0, 2.0, 3.0]])
    with np.errstate(invalid="ignore"):
        want = _numpy(x, 1.0)
    got = softmax_cpu.softmax(x, 1.0)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert got[0, 1] == 0.0 and got[0, 4] == 0.0
    assert float(np.nanmax(np.abs(got - want))) <= 4e-16


@built
def test_the_kernels_weights_use_it_and_keep_numpys_numbers():
    """The structured kernel's beta (no mask) and softmax_last (the standard layer, the direct
    kernel, the causal path) on NumPy float64 go through it: within 4e-15 of NumPy's exp, and
    a mutation (kappa halved) is seen."""
    be = get_backend("numpy")
    kl = np.abs(Sampler(3).floats((2, 3, 9, 9), 20.0))
    with softmax_cpu.disabled():
        want = kl_structured._attention_weights(kl, 0.7, False, be)
        assert not softmax_cpu.applies(kl)
        want_last = kla.softmax_last(-kl / 0.7, be)
    got = kl_structured._attention_weights(kl, 0.7, False, be)
    assert float(np.max(np.abs(got - want))) <= 4e-15
    assert float(np.max(np.abs(kla.softmax_last(-kl / 0.7, be) - want_last))) <= 4e-15
    assert float(np.max(np.abs(kl_structured._attention_weights(kl, 0.35, False, be) - want))) > 1e-3
    assert softmax_cpu.applies(kl.astype(np.float32)) and not softmax_cpu.applies(kl.astype(np.float16))
    assert not softmax_cpu.applies(kl[:0])


@built
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_torchs_cpu_weights_use_it_outside_autograd(dtype):
    """On torch's CPU outside autograd the structured kernel's beta is the NumPy kernel's,
    exactly (the same C function on a view); under autograd it stays torch's differentiable
    softmax (within 1e-6 relative of it in float32, 1e-14 in float64); disabled, the in-place
    chain, within the same bounds; a mutation (kappa halved) is seen."""
    import torch
    be, numpy_be = get_backend("torch"), get_backend("numpy")
    kl = np.abs(Sampler(5).floats((2, 3, 9, 9), 20.0)).astype(dtype)
    got = kl_structured._attention_weights(torch.from_numpy(kl), 0.7, False, be)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.from_numpy(kl).dtype
    assert np.array_equal(got.numpy(), kl_structured._attention_weights(kl, 0.7, False, numpy_be))
    tracked = torch.from_numpy(kl).requires_grad_()
    differentiable = kl_structured._attention_weights(tracked, 0.7, False, be)
    assert differentiable.grad_fn is not None
    bound = 1e-6 if dtype == "float32" else 1e-14
    assert float((differentiable.detach() - got).abs().max()) <= bound
    with softmax_cpu.disabled():
        chained = kl_structured._attention_weights(torch.from_numpy(kl), 0.7, False, be)
    assert float((chained - got).abs().max()) <= bound
    assert float((kl_structured._attention_weights(torch.from_numpy(kl), 0.35, False, be) - got).abs().max()) > 1e-3


@built
def test_the_extension_checks_its_arguments():
    module = softmax_cpu._extension()
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="rows of count"):
        module.rows(x, np.zeros((2, 2)), 1.0, 3)
    with pytest.raises(ValueError, match="rows of count"):
        module.rows(x, np.zeros((2, 3)), 0.0, 3)
    with pytest.raises(ValueError, match="rows of count"):
        module.rows(x, np.zeros((2, 3)), float("inf"), 3)
    with pytest.raises(ValueError, match="rows of count"):
        module.rows(x, np.zeros((2, 3)), 1.0, 4)
    with pytest.raises(ValueError, match="rows of count"):
        module.rows(x, np.zeros((2, 3)), 1.0, 3, 2)
    with pytest.raises(ValueError, match="rows of count"):                 # beyond float32
        module.rows(x.astype(np.float32), np.zeros((2, 3), np.float32), 1e300, 3, 4)


def test_where_it_applies(monkeypatch):
    """Not where the module was not built (or the CPU lacks AVX2): NumPy's exp then."""
    monkeypatch.setattr(softmax_cpu, "_extension", lambda: None)
    assert not softmax_cpu.available() and not softmax_cpu.applies(np.zeros(3))
    be = get_backend("numpy")
    x = np.array([[0.0, 1.0, 2.0]])
    assert np.array_equal(kla.softmax_last(x, be), _numpy(x, 1.0))

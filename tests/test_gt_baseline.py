"""GT's public code as a baseline (issue 26, ask 4): the conversion helpers and the 'not
available' path, without their code.  The comparison itself (their code imported) is
tests/benchmarks/test_gt_baseline.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attngeom.geometry_proofs.gauge import gt_baseline
from attngeom.geometry_proofs.gauge.attention_benchmark import BenchmarkConfig, sample_inputs
from attngeom.geometry_proofs.gauge.gt_code import GTCodeUnavailable, load_gt_code, locate
from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import (frame_exp, gaussian_kl, kl_attention_structured, skew,
                                           so_basis)

NUMPY = get_backend("numpy")


@pytest.fixture
def no_gt_code(monkeypatch, tmp_path):
    monkeypatch.delenv("ATTNGEOM_GT_CODE", raising=False)
    monkeypatch.setenv("ATTNGEOM_GT_MIRROR", str(tmp_path / "absent"))


def test_frame_coordinates_in_any_basis():
    n, rng = 5, np.random.default_rng(0)
    coords = rng.standard_normal((3, 4, n * (n - 1) // 2))
    frames = skew(coords, n, NUMPY)
    found, residual = gt_baseline.frame_coordinates(frames, so_basis(n))
    assert np.allclose(found, coords, atol=1e-13) and residual < 1e-13
    basis = 2.0 * so_basis(n)[::-1]                   # another order and scale: other coordinates
    found, residual = gt_baseline.frame_coordinates(frames, basis)
    assert residual < 1e-13 and np.allclose(np.einsum("...a,aij->...ij", found, basis), frames)


def test_gt_layout_and_temperature():
    config = BenchmarkConfig(tokens=6, dim=8, heads=2, batch=2)
    inputs = sample_inputs(config)
    layout = gt_baseline.gt_layout(inputs, 4, so_basis(4))
    assert len(layout["mu"]) == 2 and layout["mu"][1].shape == (2, 6, 4)
    assert np.array_equal(layout["Sigma"][1], inputs["Sigma"][:, 1])
    assert layout["phi"].shape == (2, 6, 6) and np.allclose(layout["phi"], inputs["frame_coordinates"][:, 0])
    assert gt_baseline.gt_temperature(2.0, 16) == 8.0 and gt_baseline.gt_kl_ceiling(20) == 100.0


def test_diagonal_transport_kl_keeps_only_the_diagonal():
    """The cut KL equals the KL against diag(Omega D Omega^T) computed with full matrices,
    equals the exact KL for isotropic variances (Omega s I Omega^T = s I) and differs from it
    otherwise."""
    config = BenchmarkConfig(tokens=5, dim=8, heads=2, batch=1, diagonal=True)
    inputs = sample_inputs(config)
    cut = gt_baseline.diagonal_transport_kl(inputs, 4)
    rotation = frame_exp(skew(inputs["frame_coordinates"], 4, NUMPY), NUMPY)[0, 0]
    mu, var = inputs["mu"][0, 1], inputs["Sigma"][0, 1]
    i, j = 3, 1
    omega = rotation[i] @ rotation[j].T
    moved = omega @ np.diag(var[j]) @ omega.T
    expected = gaussian_kl(mu[i], np.diag(var[i]), omega @ mu[j], np.diag(np.diag(moved)), NUMPY)
    assert abs(cut[0, 1, i, j] - expected) < 1e-12
    exact = kl_attention_structured(inputs["mu"], inputs["Sigma"], skew(inputs["frame_coordinates"], 4, NUMPY),
                                    1.0, NUMPY, diagonal_sigma=True).kl
    assert np.max(np.abs(cut - exact)) > 1e-3
    isotropic = dict(inputs, Sigma=np.broadcast_to(inputs["Sigma"][..., :1], inputs["Sigma"].shape).copy())
    exact = kl_attention_structured(isotropic["mu"], isotropic["Sigma"], skew(inputs["frame_coordinates"], 4, NUMPY),
                                    1.0, NUMPY, diagonal_sigma=True).kl
    assert np.max(np.abs(gt_baseline.diagonal_transport_kl(isotropic, 4) - exact)) < 1e-10


def test_not_available_is_one_line(no_gt_code, monkeypatch, tmp_path):
    with pytest.raises(GTCodeUnavailable) as missing:
        load_gt_code()
    assert len(str(missing.value).splitlines()) == 1
    report, text = gt_baseline.gt_baseline_section(BenchmarkConfig(tokens=4, dim=4, heads=2, batch=1))
    assert report["available"] is False and "not available" in text and len(text.splitlines()) == 1
    monkeypatch.setenv("ATTNGEOM_GT_CODE", str(tmp_path))
    with pytest.raises(GTCodeUnavailable, match="has no transformer/core/attention.py"):
        locate()


def test_bad_settings_are_one_line():
    for config in (BenchmarkConfig(dtype="float32"), BenchmarkConfig(device="cuda"),
                   BenchmarkConfig(tokens=2048)):
        with pytest.raises(BadInput) as bad:
            gt_baseline.validate_gt_config(config)
        assert len(str(bad.value).splitlines()) == 1
    with pytest.raises(BadInput):
        gt_baseline.validate_gt_config(BenchmarkConfig(), repeats=0)


def test_cli_gt_code_flag(run_cli, no_gt_code):
    args = ("benchmark", "gauge-attention", "--n", 4, "--k", 4, "--heads", 2, "--batch", 1,
            "--no-direct", "--repeats", 1, "--gt-code")
    code, out, _ = run_cli(*args)
    assert code == 0 and sum("GT baseline: not available" in line for line in out.splitlines()) == 1
    code, out, _ = run_cli(*args, "--json")
    assert code == 0 and json.loads(out)["gt_baseline"]["available"] is False
    code, _, err = run_cli(*args, "--dtype", "float32")
    assert code == 2 and "float64" in err and len(err.strip().splitlines()) == 1

"""Shared fixtures: running the CLI in-process and skipping GPU tests cleanly."""

from __future__ import annotations

import pytest

from attngeom import cli


@pytest.fixture
def run_cli(capsys):
    """run_cli(*args) -> (exit code, stdout, stderr) of `attngeom ARGS`."""

    def run(*args):
        with pytest.raises(SystemExit) as stop:
            cli.main([str(a) for a in args])
        out, err = capsys.readouterr()
        return stop.value.code, out, err

    return run


@pytest.fixture
def compiled_torch():
    """torch's CPU backend with :mod:`attngeom.kernels.torch_compile`'s caches and counters
    emptied before and after the test (skipped where torch.compile cannot run)."""
    from attngeom.kernels import torch_compile
    from attngeom.kernels.backend import get_backend
    be = get_backend("torch")
    if torch_compile.unavailable(be):
        pytest.skip(torch_compile.unavailable(be))
    torch_compile.clear()
    torch_compile.reset_stats()
    yield be
    torch_compile.clear()


def cuda_available(backend: str = "torch") -> bool:
    try:
        from attngeom.kernels.backend import get_backend
        get_backend(backend, "cuda")
        return True
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if cuda_available("torch") or cuda_available("jax"):
        return
    skip = pytest.mark.skip(reason="no CUDA device on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

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

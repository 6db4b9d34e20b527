"""The wheel installs one import name, ``attngeom`` (issue 25).

Until issue 25 ``pip install attngeom`` put four top-level names in site-packages
(``kernels``, ``lightning_alg``, ``geometry_proofs``, ``cli``); ``kernels`` is also the import
name of the PyPI package ``kernels`` (compute kernels for transformers), and with both
installed ``import kernels`` gave the other package's ``__init__`` while ``kernels.backend``
came from attngeom.

* Default suite (a wheel build without build isolation, a few seconds, no index): the wheel
  holds only ``attngeom/`` and ``attngeom-*.dist-info/`` at its top level, and every file of
  the package in the tree (``py.typed``, the GEC experiment's data) is in it.
* ``-m slow`` (``python3 -m pytest -m slow tests/test_wheel.py``; needs a package index, skips
  without one): the wheel and ``kernels`` are installed side by side in a fresh virtual
  environment (no system site packages); the ``attngeom`` command, ``python -m attngeom`` and
  ``attngeom.verify`` run there, and ``import kernels`` is the other package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the other package of the issue, installed beside attngeom (the version the issue names).
KERNELS = "kernels==0.17.2"
#: How long the package index may take to answer before the venv test skips (no index here).
PROBE_SECONDS = 300
GEC_DATA = "attngeom/geometry_proofs/gating/experiment/data"
#: files of the tree that never go into a wheel (the compiled extension: the build makes its own).
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".*", "*.so", "*.pyd")


def _copy_source(dest: Path) -> Path:
    """What the wheel is built from, copied out of the shared tree (an in-tree build would
    leave build/ and *.egg-info there, and a stale build/lib can leak deleted files into the
    next wheel)."""
    src = dest / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "attngeom", src / "attngeom", ignore=_IGNORED)
    return src


def build_wheel(dest: Path, *, isolated: bool) -> Path:
    """Build attngeom's wheel into dest/wheel with pip (``pip wheel --no-deps``); isolated:
    the build requirements come from the index, as for a user's ``pip install``."""
    src = _copy_source(dest)
    command = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q",
               "-w", str(dest / "wheel"), "--disable-pip-version-check"]
    if not isolated:
        command.append("--no-build-isolation")
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, f"pip wheel failed:\n{done.stdout}\n{done.stderr}"
    (wheel,) = (dest / "wheel").glob("attngeom-*.whl")
    return wheel


def package_files(src: Path) -> set[str]:
    """Every file of the package in the source the wheel was built from (the copy, so that
    files others add to the tree meanwhile do not count), as wheel paths (attngeom/...)."""
    files = set()
    for path in (src / "attngeom").rglob("*"):
        relative = path.relative_to(src)
        if path.is_file() and not any(part == "__pycache__" or part.startswith(".")
                                      for part in relative.parts) and path.suffix != ".pyc":
            files.add(relative.as_posix())
    return files


def check_wheel_contents(wheel: Path) -> None:
    """(d): one import name at the top level, and the whole package (data included) inside.
    The wheel lies in DEST/wheel beside its source DEST/src (build_wheel)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        top_level = archive.read(f"{dist_info}/top_level.txt").decode().split()
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    tops = {PurePosixPath(n).parts[0] for n in names}
    assert dist_info.startswith("attngeom-")
    assert tops == {"attngeom", dist_info}, f"top-level entries of the wheel: {sorted(tops)}"
    assert top_level == ["attngeom"], f"top_level.txt: {top_level}"
    assert "attngeom = attngeom.cli:main" in entry_points
    inside = {n for n in names if n.startswith("attngeom/") and not n.endswith("/")}
    assert "attngeom/py.typed" in inside
    data = {n for n in inside if n.startswith(GEC_DATA + "/")}
    assert any(n.endswith(".csv") for n in data) and any(n.endswith(".npz") for n in data), data
    missing = package_files(wheel.parent.parent / "src") - inside
    assert not missing, f"files of attngeom/ missing from the wheel (package-data?): {sorted(missing)}"


# --- default suite: the wheel's contents, no index, no venv ------------------------------

@pytest.fixture(scope="module")
def local_wheel(tmp_path_factory) -> Path:
    try:
        import setuptools
    except ImportError:
        pytest.skip("setuptools is not installed (needed to build without build isolation)")
    if int(setuptools.__version__.split(".")[0]) < 68:
        pytest.skip(f"setuptools {setuptools.__version__} < 68 (pyproject's build requirement)")
    return build_wheel(tmp_path_factory.mktemp("wheel"), isolated=False)


def test_wheel_installs_only_the_attngeom_import_name(local_wheel):
    check_wheel_contents(local_wheel)


def test_the_contents_check_sees_a_second_top_level_name(tmp_path, local_wheel):
    """Mutation: a wheel that also carries a top-level ``kernels/`` fails the check."""
    bad = tmp_path / local_wheel.name
    shutil.copy2(local_wheel, bad)
    with zipfile.ZipFile(bad, "a") as archive:
        archive.writestr("kernels/backend.py", "")
    with pytest.raises(AssertionError, match="top-level entries"):
        check_wheel_contents(bad)


# --- -m slow: a fresh virtual environment with attngeom and kernels side by side ---------

def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(command: list[str], cwd: Path, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``command``; no time limit unless ``timeout`` (a slow machine is not a failure)."""
    return subprocess.run(command, cwd=cwd, env=_clean_env(), capture_output=True, text=True,
                          timeout=timeout)


class Venv:
    def __init__(self, root: Path, work: Path, wheel: Path, timings: dict[str, float]):
        self.root, self.work, self.wheel, self.timings = root, work, wheel, timings
        self.python = root / "bin" / "python"
        self.attngeom = root / "bin" / "attngeom"

    def run(self, *args: str) -> subprocess.CompletedProcess:
        # cwd outside the repository: nothing of the tree is importable from there.
        return _run([str(a) for a in args], self.work)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Venv:
    work = tmp_path_factory.mktemp("venv-test")
    start = time.perf_counter()
    try:       # a package index that does not answer is a skip (no index here), not a failure
        probe = _run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                      "--disable-pip-version-check", "-d", str(work / "probe"), KERNELS], work,
                     timeout=PROBE_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.skip(f"no package index answered for {KERNELS} in {PROBE_SECONDS} s")
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"pip cannot reach a package index for {KERNELS}: {last}")
    timings: dict[str, float] = {"probe": time.perf_counter() - start}
    start = time.perf_counter()
    wheel = build_wheel(work, isolated=True)
    timings["build"] = time.perf_counter() - start

    start = time.perf_counter()
    root = work / "venv"
    made = _run([sys.executable, "-m", "venv", str(root)], work)   # no system site packages
    assert made.returncode == 0, made.stderr
    timings["venv"] = time.perf_counter() - start

    start = time.perf_counter()
    installed = _run([str(root / "bin" / "python"), "-m", "pip", "install", "-q",
                      "--disable-pip-version-check", str(wheel), KERNELS], work)
    assert installed.returncode == 0, f"pip install failed:\n{installed.stdout}\n{installed.stderr}"
    timings["install"] = time.perf_counter() - start
    yield Venv(root, work, wheel, timings)
    print("\nwheel test timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))


def _timed(venv: Venv, name: str):
    class Timer:
        def __enter__(self):
            self.start = time.perf_counter()

        def __exit__(self, *exc):
            venv.timings[name] = time.perf_counter() - self.start
    return Timer()


@pytest.mark.slow
def test_venv_is_fresh(venv):
    """No system site packages: the venv sees only what was installed into it."""
    config = (venv.root / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in config
    done = venv.run(venv.python, "-c", "import sys; print(sys.prefix != sys.base_prefix)")
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.slow
def test_wheel_contents(venv):
    """(d) on the wheel built with build isolation, as pip builds it for a user."""
    check_wheel_contents(venv.wheel)


@pytest.mark.slow
def test_console_script_verifies_linear(venv):
    """(a) ``attngeom verify linear --d 3 --t 2 --a 3`` exits 0 with ``proved``."""
    with _timed(venv, "verify"):
        done = venv.run(venv.attngeom, "verify", "linear", "--d", "3", "--t", "2", "--a", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split()[:2] == ["proved", "linear"], done.stdout


@pytest.mark.slow
def test_python_m_attngeom_lists_claims(venv):
    """(b) ``python -m attngeom list`` lists the claims of every area."""
    with _timed(venv, "list"):
        done = venv.run(venv.python, "-m", "attngeom", "list")
    assert done.returncode == 0, done.stdout + done.stderr
    ids = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert {"linear", "monomial-count"} <= ids, done.stdout[:2000]
    assert any(i.startswith("gec-") for i in ids), done.stdout[:2000]


_IMPORTS = r"""
import importlib.metadata as md, importlib.util, json, sys, sysconfig
import kernels
import attngeom, attngeom.kernels.backend, attngeom.core.verdict
from attngeom.cli import REGISTRY
import kernels as again
site = sysconfig.get_paths()["purelib"]
print(json.dumps({
    "site": site,
    "kernels_file": kernels.__file__,
    "kernels_dist_version": md.version("kernels"),
    "kernels_has_get_kernel": hasattr(kernels, "get_kernel"),
    "kernels_same_object": again is kernels and sys.modules["kernels"] is kernels,
    "kernels_is_ours": kernels is attngeom.kernels,
    "other_has_ours": {m: importlib.util.find_spec("kernels." + m) is not None
                       for m in ("backend", "verdict", "claim", "primefield")},
    "old_top_level": {m: importlib.util.find_spec(m) is not None
                      for m in ("lightning_alg", "geometry_proofs", "cli")},
    "attngeom_file": attngeom.__file__,
    "backend_file": attngeom.kernels.backend.__file__,
    "registry_has_linear": REGISTRY.get("linear").id == "linear" and len(REGISTRY) > 50,
    "attngeom_files": sorted(str(f) for f in md.files("attngeom")),
    "has_verify": hasattr(attngeom, "verify"),
}))
"""


@pytest.fixture(scope="module")
def imports(venv) -> dict:
    with _timed(venv, "imports"):
        done = venv.run(venv.python, "-c", _IMPORTS)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_import_kernels_is_the_other_package(imports):
    """(c) ``import kernels`` is PyPI's kernels, with none of attngeom's modules inside."""
    site = Path(imports["site"])
    assert Path(imports["kernels_file"]) == site / "kernels" / "__init__.py"
    assert imports["kernels_dist_version"] == KERNELS.split("==")[1]
    assert imports["kernels_has_get_kernel"] and imports["kernels_same_object"]
    assert not imports["kernels_is_ours"]
    assert not any(imports["other_has_ours"].values()), imports["other_has_ours"]
    assert not any(imports["old_top_level"].values()), imports["old_top_level"]


@pytest.mark.slow
def test_attngeom_kernels_is_ours(imports):
    """(c) ``attngeom.kernels.backend`` is attngeom's, from the installed wheel (not the tree)."""
    site = Path(imports["site"])
    assert Path(imports["attngeom_file"]) == site / "attngeom" / "__init__.py"
    assert Path(imports["backend_file"]) == site / "attngeom" / "kernels" / "backend.py"
    assert imports["registry_has_linear"]
    # what pip installed for attngeom: its package, its dist-info and the console script
    tops = {PurePosixPath(f).parts[0] for f in imports["attngeom_files"]}
    outside = tops - {"attngeom", ".."} - {t for t in tops if t.endswith(".dist-info")}
    assert not outside, f"attngeom installed top-level names besides attngeom: {outside}"
    scripts = [f for f in imports["attngeom_files"] if f.startswith("..")]
    assert all(PurePosixPath(f).name == "attngeom" for f in scripts), scripts


@pytest.mark.slow
def test_attngeom_verify_function(venv, imports):
    """(e) ``import attngeom; attngeom.verify('linear', d=3, t=2, a=3)`` (once the API exists)."""
    if not imports["has_verify"]:
        pytest.skip("attngeom.verify does not exist yet (attngeom/api.py)")
    with _timed(venv, "api-verify"):
        done = venv.run(venv.python, "-c",
                        "import attngeom; verdict = attngeom.verify('linear', d=3, t=2, a=3); "
                        "print(verdict.status.value)")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["proved"], done.stdout

"""Finding and importing GT's public code (cdenn016/Gauge-Transformer), never copying it.

GT (Dennis, *Gauge-theoretic transformers*, ``shared/seeds/002_b70b40093652efcf.txt``
§4.2: "Code available at https://github.com/cdenn016/Gauge-Transformer") computes its
attention in ``transformer/core/attention.py``:

    beta_ij = softmax_j(-KL(q_i || Omega_ij q_j) / (kappa sqrt(n))),
    Omega_ij = exp(phi_i . G) exp(-phi_j . G)

(``compute_attention_weights``; ``IrrepMultiHeadAttention.forward`` calls it once per head
with that head's block of the generators).  attngeom does not ship that code: it is
imported at run time from

1. the checkout named by the environment variable ``ATTNGEOM_GT_CODE`` (a directory
   holding ``transformer/core/attention.py`` and ``math_utils/``), else
2. a local git mirror of the repository (``ATTNGEOM_GT_MIRROR``, default
   :data:`DEFAULT_MIRROR`), from which the two needed paths are extracted with
   ``git archive HEAD transformer/core/attention.py math_utils`` into a temporary directory
   (removed at exit).

Otherwise :func:`load_gt_code` raises :class:`GTCodeUnavailable` with one line.
``attention.py`` is loaded from its file (``importlib``), not through the ``transformer``
package, whose ``__init__`` imports their whole training stack (``transformer.train``,
``gradients``, data sets); nothing of theirs is replaced.  Their optional Numba kernels are
reported (one line) when missing: the PyTorch path is what the baseline times anyway.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

#: where a mirror of cdenn016/Gauge-Transformer is looked for when ATTNGEOM_GT_MIRROR is unset.
DEFAULT_MIRROR = "/work/.mirror/cdenn016+Gauge-Transformer/repo"

#: the files of theirs the baseline needs (attention.py imports math_utils, inside try blocks).
ATTENTION_FILE = "transformer/core/attention.py"
GENERATORS_FILE = "math_utils/generators.py"


class GTCodeUnavailable(RuntimeError):
    """GT's code cannot be found or imported here; the message is one line."""


@dataclass
class GTCode:
    """GT's imported code: their attention module, their SO(n) generator function, where it
    came from (``source``: the checkout or ``mirror:<path>``), its commit (or None) and
    one-line notes (missing optional dependencies)."""

    attention: ModuleType
    generate_son_generators: object
    source: str
    commit: str | None
    notes: list[str] = field(default_factory=list)


def _git(directory: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", directory, *args], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess(args, 1, b"", str(error).encode())


def locate(environ=os.environ) -> tuple[str, str]:
    """(kind, path): ``("checkout", dir)`` from ATTNGEOM_GT_CODE, or ``("mirror", gitdir)``;
    GTCodeUnavailable (one line) when neither is there."""
    checkout = environ.get("ATTNGEOM_GT_CODE")
    if checkout:
        if not (Path(checkout) / ATTENTION_FILE).is_file():
            raise GTCodeUnavailable(f"ATTNGEOM_GT_CODE={checkout} has no {ATTENTION_FILE}")
        return "checkout", checkout
    mirror = environ.get("ATTNGEOM_GT_MIRROR", DEFAULT_MIRROR)
    if mirror and Path(mirror).is_dir():
        return "mirror", mirror
    raise GTCodeUnavailable("GT's code is not available: set ATTNGEOM_GT_CODE to a checkout of "
                            "github.com/cdenn016/Gauge-Transformer")


def _extract(mirror: str) -> str:
    """``git archive HEAD transformer/core/attention.py math_utils`` of the mirror into a
    temporary directory removed at exit."""
    target = tempfile.mkdtemp(prefix="attngeom-gt-")
    atexit.register(shutil.rmtree, target, True)
    archive = _git(mirror, "archive", "--format=tar", "HEAD", ATTENTION_FILE, "math_utils")
    if archive.returncode:
        raise GTCodeUnavailable(f"git archive of {mirror} failed: "
                                f"{archive.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    unpack = subprocess.run(["tar", "-x", "-C", target], input=archive.stdout, capture_output=True)
    if unpack.returncode:
        raise GTCodeUnavailable(f"could not unpack GT's code into {target}")
    return target


def _commit(directory: str) -> str | None:
    result = _git(directory, "log", "-1", "--format=%H")
    if result.returncode:
        return None
    return result.stdout.decode().strip() or None


def _load_file(root: str, relative: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, relative))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _missing_notes(printed: str, caught) -> list[str]:
    """One line per optional dependency their modules reported missing (they print or warn)."""
    notes = []
    if "numba" in printed.lower() or any("numba" in str(w.message).lower() for w in caught):
        notes.append("numba is not installed: GT's Numba kernels are unavailable (their "
                     "PyTorch path, the one timed here, is used)")
    return notes


_CACHE: dict[tuple[str, str], GTCode] = {}


def load_gt_code(environ=os.environ) -> GTCode:
    """Import GT's ``attention.py`` and ``math_utils.generators`` (see the module docstring);
    GTCodeUnavailable (one line) when the code is absent or its imports fail."""
    kind, path = locate(environ)
    if (kind, path) in _CACHE:
        return _CACHE[kind, path]
    root = _extract(path) if kind == "mirror" else path
    commit = _commit(path)
    printed = io.StringIO()
    sys.path.insert(0, root)                       # their attention.py imports math_utils.*
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
            warnings.simplefilter("always")
            attention = _load_file(root, ATTENTION_FILE, "_attngeom_gt_attention")
            generators = _load_file(root, GENERATORS_FILE, "_attngeom_gt_generators")
    except ImportError as error:
        raise GTCodeUnavailable(f"GT's code at {path} needs {error.name or error}, which is not "
                                f"installed") from None
    except Exception as error:                     # their module failed to run here
        first = (str(error).splitlines() or [""])[0]
        raise GTCodeUnavailable(f"importing GT's code at {path} failed: {type(error).__name__}: "
                                f"{first}") from None
    finally:
        sys.path.remove(root)
    source = f"mirror:{path}" if kind == "mirror" else path
    code = GTCode(attention, generators.generate_soN_generators, source, commit,
                  _missing_notes(printed.getvalue(), caught))
    _CACHE[kind, path] = code
    return code

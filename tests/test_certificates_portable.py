"""The committed certificates check out under several CPU kernel configurations (issue 23).

A certificate promises the same verdict and the same exact evidence on any machine, with
any BLAS kernel, SIMD instruction set or thread count.  The libraries pick their kernels
by CPU, and environment variables force a choice, so one machine can play several: each
configuration below re-checks the whole committed suite in a fresh process (the
variables are read when the libraries load):

* ``OPENBLAS_CORETYPE``: OpenBLAS's kernels (numpy's and scipy's BLAS / LAPACK);
* ``NPY_DISABLE_CPU_FEATURES``: numpy's own SIMD loops (exp, log, sum, ...), which differ
  between x86-64-v2, v3 (AVX2) and v4 (AVX-512) machines;
* ``ATEN_CPU_CAPABILITY``: torch's CPU kernels.

Haswell (AVX2, no AVX-512), Sandybridge (AVX, no AVX2) and Prescott (SSE3) run on every
x86-64 CPU that CI uses; a configuration whose instructions this CPU lacks is skipped, by
name.

The first configuration re-checks every certificate; the others re-check those whose
verdict was reached in floating point (method ``numeric``, or none recorded).  A
``symbolic`` or ``exact`` certificate is decided in rational and integer arithmetic (SymPy,
python-flint, int64 NumPy: :func:`attngeom.kernels.primefield.matmul_mod_p` splits into
16-bit limbs, no float BLAS), which no kernel choice can change; re-checking those 154
files three times took a third of the default suite's time.
"""

from __future__ import annotations

import os
import json
import platform
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: (OPENBLAS_CORETYPE, the CPU flag it needs, BLAS threads, worker processes, the other
#: libraries' kernels): Sandybridge runs in one process with two BLAS threads; Haswell and
#: Prescott in two worker processes with one thread each (workers always start with one:
#: attngeom.core.executor).  Prescott changes the BLAS kernel alone (numpy's and torch's
#: own loops as this CPU picks them), the mix of the before-stop check
#: (``OPENBLAS_CORETYPE=Sandybridge attngeom check-certificates``): a certificate that
#: failed only there (2026-11-25, hierarchy-preservation) passed the three mixes that
#: changed every library at once.
CONFIGURATIONS = [
    ("Haswell", "avx2", 1, 2, {"NPY_DISABLE_CPU_FEATURES": "X86_V4",
                               "ATEN_CPU_CAPABILITY": "avx2"}),
    ("Sandybridge", "avx", 2, 1, {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4",
                                  "ATEN_CPU_CAPABILITY": "default"}),
    ("Prescott", "pni", 1, 2, {}),      # SSE3 is "pni"
]


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((l for l in text.splitlines() if l.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


@pytest.mark.parametrize("coretype,flag,threads,workers,kernels", CONFIGURATIONS,
                         ids=[c[0] for c in CONFIGURATIONS])
def test_committed_suite_checks_out_under_kernel_configuration(coretype, flag, threads, workers,
                                                              kernels, tmp_path):
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip(f"OPENBLAS_CORETYPE={coretype} is an x86-64 kernel")
    flags = _cpu_flags()
    if flags and flag not in flags:
        pytest.skip(f"this CPU lacks {flag}, which OPENBLAS_CORETYPE={coretype} needs")
    preset = os.environ.get("OPENBLAS_CORETYPE")
    if preset and preset.lower() != coretype.lower():
        pytest.skip(f"this machine sets OPENBLAS_CORETYPE={preset} (its OpenBLAS needs it); "
                    f"the suite runs under that kernel only")
    junit = tmp_path / f"{coretype}.xml"
    files = sorted((REPO / "certificates").glob("*.json"))
    folder = REPO / "certificates"
    if coretype != CONFIGURATIONS[0][0]:
        files = [f for f in files if _decided_in_floating_point(f)]
        folder = tmp_path / "certificates"
        folder.mkdir()
        for f in files:
            shutil.copy(f, folder / f.name)
    env = {**os.environ, "OPENBLAS_CORETYPE": coretype, **kernels}
    command = [sys.executable, "-m", "attngeom", "--threads", str(threads), "check-certificates",
               str(folder), "--workers", str(workers), "--junit", str(junit)]
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    failing = [line for line in run.stdout.splitlines() if not line.startswith("ok ")]
    assert run.returncode == 0, "\n".join(failing[-40:]) + run.stderr[-2000:]
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert len(cases) == len(files)
    assert not [c for c in cases if len(c)]


def _decided_in_floating_point(path: Path) -> bool:
    return json.loads(path.read_text())["verdict"].get("method") not in ("symbolic", "exact")


def test_the_float_selection_keeps_every_certificate_with_float_evidence():
    """The later configurations re-check every certificate that holds a measured error held
    to a bound (evidence kind ``bound``: a float compared with a threshold, what a kernel
    choice could move), and leave out only symbolic and exact ones."""
    files = sorted((REPO / "certificates").glob("*.json"))
    verdicts = {f.name: json.loads(f.read_text())["verdict"] for f in files}
    chosen = {f.name for f in files if _decided_in_floating_point(f)}
    with_bounds = {name for name, v in verdicts.items() if "bound" in json.dumps(v.get("kinds"))}
    assert with_bounds and with_bounds <= chosen
    assert {verdicts[name]["method"] for name in set(verdicts) - chosen} <= {"symbolic", "exact"}

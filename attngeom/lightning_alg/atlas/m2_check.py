"""Macaulay2 as an independent check of the atlas: the minimal generators of the vanishing
ideal to degree K, by elimination of the parametrization (``attngeom atlas --check-m2``).

The script is generated from :class:`~attngeom.lightning_alg.parametrization.Parametrization`
alone (integers and indices, never outside text), so it shares nothing with the
interpolation but the definition of mu (ADM Prop 6, eq 3): in the ring QQ[a, v, y] with the
entries a of A and v of row 1 of V of degree 1 and the coordinates y of degree 2, the ideal

    I = ( |Perm_c| y_c - sum_{(p1,p2,p3)} a_{p2 p3} v_{p1} : every coordinate c )
        + ( the (a+1)-minors of A, when a < d )

is homogeneous, and J = I cap QQ[y] (ADM Def 8): the (a+1)-minors generate the prime ideal
of the matrices of rank <= a (Eagon-Hochster), which are exactly the K^T Q, so I is the
ideal of the graph of mu over that irreducible variety and its elimination ideal is the
ideal of the image closure.  (Parametrizing A = K^T Q instead, with coordinates of degree
3, is far slower: at (3, 2, 2) to degree 4, 208 s against 4.6 s.)  A Groebner basis of I
in an elimination order for (a, v), truncated at degree 2K (``gb(I, DegreeLimit => 2K)``,
exact up to that degree for a homogeneous ideal), gives every element of J of degree <= K
(``selectInSubring``); ``mingens`` of the ideal they generate, in QQ[y] with y of degree 2,
counts the minimal generators of J in each degree k <= K.  Those counts are compared with
the interpolation's (:func:`compare_counts`).

Without Macaulay2 (no ``M2`` on the PATH) the check is skipped with one line.  Each run
has a time budget in seconds; a run that exceeds it is stopped (its process group killed)
and reported as ``timeout``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from attngeom.core.errors import BadInput

#: Seconds one point's Macaulay2 run may take (``--m2-budget``).
DEFAULT_M2_BUDGET = 120.0
#: The marker of the lines the script prints: ``atlas-m2 K COUNT``, then ``atlas-m2 done``.
MARKER = "atlas-m2"
_COUNT_LINE = re.compile(rf"^{MARKER} (\d{{1,3}}) (\d{{1,9}})$")
_M2_VERSION = re.compile(r"(\d+(?:\.\d+)+)")


def m2_executable() -> str | None:
    """The path of ``M2``, or None when Macaulay2 is not installed."""
    return shutil.which("M2")


def m2_version() -> str | None:
    """Macaulay2's version (``M2 --version``), or None."""
    executable = m2_executable()
    if executable is None:
        return None
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = _M2_VERSION.search(out)
    return match.group(1) if match else None


def graph_relations(d: int, t: int, dprime: int = 1, col: int = 1):
    """The weights' names (the entries a_(m,l) of A, then v_i of row 1 of V), the number of
    coordinates, and for every coordinate c its orbit size |Perm_c| and the terms of mu_c
    (ADM Prop 6: a_{p2 p3} v_{1 p1} over the orderings), as weight-name pairs."""
    from attngeom.lightning_alg.coordinates import CoordinateSystem
    from attngeom.lightning_alg.parametrization import Parametrization

    coords = CoordinateSystem(d, t, dprime, 1, col)
    param = Parametrization(coords)
    names = [f"a_({m},{l})" for m in range(d) for l in range(d)] + [f"v_{i}" for i in range(d)]
    relations = []
    for c in range(len(coords)):
        terms = [(f"v_{int(param.p1[c, j])}", f"a_({int(param.p2[c, j])},{int(param.p3[c, j])})")
                 for j in range(int(param.mask[c].sum()))]
        relations.append((int(param.orbit[c]), terms))
    return names, len(coords), relations


def m2_script(d: int, t: int, a: int, max_degree: int, dprime: int = 1, col: int = 1) -> str:
    """The Macaulay2 script that prints the number of minimal generators of J in each degree
    k <= ``max_degree`` (``atlas-m2 k count`` lines, then ``atlas-m2 done``)."""
    names, n_coords, relations = graph_relations(d, t, dprime, col)
    n_weights = len(names)
    # the weights are renamed w_0.. so that the ring's variable list is one range
    rename = {name: f"w_{i}" for i, name in enumerate(names)}
    lines = [
        f"-- attngeom atlas: J of d={d}, t={t}, a={a}, d'={dprime}, col={col} to degree "
        f"{max_degree} by elimination (ADM Def 8)",
        f"R = QQ[w_0..w_{n_weights - 1}, y_0..y_{n_coords - 1}, "
        f"Degrees => join(toList({n_weights}:1), toList({n_coords}:2)), "
        f"MonomialOrder => Eliminate {n_weights}];",
        "I = ideal(",
    ]
    gens = []
    for c, (orbit, terms) in enumerate(relations):
        body = " + ".join("*".join(rename[f] for f in factors) for factors in terms)
        gens.append(f"  {orbit}*y_{c} - ({body})")
    lines.append(",\n".join(gens))
    lines.append(");")
    if a < d:      # rank A <= a: the (a+1)-minors of the matrix of the a_(m,l)
        rows = ", ".join("{" + ", ".join(rename[f"a_({m},{l})"] for l in range(d)) + "}"
                         for m in range(d))
        lines.append(f"I = I + minors({a + 1}, matrix{{{rows}}});")
    lines += [
        f"G = gens gb(I, DegreeLimit => {2 * max_degree});",
        "E = selectInSubring(1, G);",
        f"S = QQ[y_0..y_{n_coords - 1}, Degrees => toList({n_coords}:2)];",
        f"f = map(S, R, join(toList({n_weights}:0_S), gens S));",
        "M = mingens ideal f E;",
        "T = tally apply(degrees source M, first);",
        f"scan(sort keys T, k -> if k <= {2 * max_degree} then "
        f"print(\"{MARKER} \" | toString(k // 2) | \" \" | toString(T#k)));",
        f"print \"{MARKER} done\";",
        "exit 0",
    ]
    return "\n".join(lines) + "\n"


def script_digest(script: str) -> str:
    """sha256 of the script text: a stored M2 result is reused only for the same script."""
    return hashlib.sha256(script.encode()).hexdigest()


def parse_m2_output(text: str, max_degree: int) -> dict[str, int]:
    """The counts of the script's ``atlas-m2 k count`` lines, by degree "1".."K" (0 where
    no line), or BadInput when the output is not what the script prints (no ``done`` line,
    a malformed or repeated line, a degree above K)."""
    counts = {str(k): 0 for k in range(1, max_degree + 1)}
    seen, done = set(), False
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith(MARKER):
            continue
        if line == f"{MARKER} done":
            done = True
            continue
        match = _COUNT_LINE.match(line)
        if match is None:
            raise BadInput(f"Macaulay2 printed an unexpected line: {line[:80]!r}")
        k, count = match.group(1), int(match.group(2))
        if k not in counts or k in seen:
            raise BadInput(f"Macaulay2 printed degree {k} {'twice' if k in seen else 'above K'}")
        seen.add(k)
        counts[k] = count
    if not done:
        raise BadInput("Macaulay2's output has no 'done' line (the script did not finish)")
    return counts


def compare_counts(ours: dict[str, int], theirs: dict[str, int]) -> dict:
    """``agrees`` and the degrees whose numbers of minimal generators differ
    (``differences``: degree -> {"attngeom": n, "m2": m})."""
    degrees = sorted(set(ours) | set(theirs), key=int)
    differences = {k: {"attngeom": ours.get(k, 0), "m2": theirs.get(k, 0)} for k in degrees
                   if ours.get(k, 0) != theirs.get(k, 0)}
    return {"agrees": not differences, "differences": differences}


def run_m2(script: str, budget: float) -> dict:
    """Run ``script`` in Macaulay2 within ``budget`` seconds: ``status`` ``finished`` (with
    its ``output``), ``timeout``, ``unavailable`` or ``error``; ``seconds`` is the wall time
    of the run, Macaulay2's start included."""
    executable = m2_executable()
    if executable is None:
        return {"status": "unavailable", "seconds": 0.0,
                "reason": "Macaulay2 (M2) is not installed; apt-get install macaulay2"}
    with tempfile.TemporaryDirectory(prefix="attngeom-m2-") as folder:
        path = Path(folder) / "atlas.m2"
        path.write_text(script, encoding="utf-8")
        start = time.perf_counter()
        process = subprocess.Popen([executable, "--script", str(path)], cwd=folder,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        try:
            output, _ = process.communicate(timeout=budget)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return {"status": "timeout", "seconds": round(time.perf_counter() - start, 2),
                    "reason": f"over the budget of {budget:g} s"}
        seconds = round(time.perf_counter() - start, 2)
    if process.returncode != 0:
        last = (output or "").strip().splitlines()[-1:] or [""]
        return {"status": "error", "seconds": seconds,
                "reason": f"M2 exited with code {process.returncode}: {last[0][:200]}"}
    return {"status": "finished", "seconds": seconds, "output": output}


def _kill_group(process: subprocess.Popen) -> None:
    """Stop the M2 process we started and its children (its own process group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.communicate()


def m2_check(d: int, t: int, a: int, max_degree: int, ours: dict[str, int],
             budget: float = DEFAULT_M2_BUDGET, dprime: int = 1, col: int = 1) -> dict:
    """The Macaulay2 check of one atlas point: the script's digest, the run's status and
    seconds, M2's counts by degree and their comparison with ``ours`` (the interpolation's
    minimal generators by degree, every k <= K)."""
    script = m2_script(d, t, a, max_degree, dprime, col)
    result = run_m2(script, budget)
    out = {"script_digest": script_digest(script), "budget": budget,
           "version": m2_version() if result["status"] != "unavailable" else None,
           "status": result["status"], "seconds": result["seconds"],
           "reason": result.get("reason")}
    if result["status"] == "finished":
        try:
            counts = parse_m2_output(result["output"], max_degree)
        except BadInput as error:
            out.update(status="error", reason=str(error))
            return out
        out["minimal_generators"] = counts
        out.update(compare_counts(ours, counts))
    return out

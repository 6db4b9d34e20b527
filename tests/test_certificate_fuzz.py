"""Issue 29: a certificate is untrusted input.  Hostile values in every field of a
certificate end in a verdict of the check (exit 0 when the value changes nothing the
re-run compares, such as the seed of a symbolic proof; 1 for a mismatch) or a named invalid
file (exit 2, one stderr line): never a traceback, a hang or code run.

Base certificates: committed ones of cheap claims whose parameters include text (an
expression, a tree spec, rationals) and numbers.  Each case replaces one field (top level,
a parameter, a verdict field) with one hostile value from tests/test_fuzz_inputs.py's list
plus JSON-only values (NaN, deep nesting, objects where numbers belong), writes the file
into a temporary folder that also holds the canary's would-be location, and runs
``attngeom check-certificates`` on it in-process under a time bound.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_fuzz_inputs import CANARY, HOSTILE, run_case, workdir  # noqa: F401 (fixture)

REPO = Path(__file__).resolve().parent.parent

#: Committed certificates of cheap claims (under 0.1 s each when re-run).
BASES = ["depth-amplification__amplitudes1,1_2,1_4,3_4__layers4.json", "poincare-clipping__curvature1_4__d16.json",
         "tree-sala-comparison__eps0.1__treestar_16.json",
         "linear__a2__d2__t2.json"]

#: Values a JSON file can hold that an option cannot.
JSON_ONLY = [float("nan"), float("inf"), -1, 0, 2**70, -(2**70), 1e308, True, None, [],
             {}, [1, [2, [3]]], {"__class__": "x"}, json.loads("[" * 45 + "]" * 45)]


def _fields(cert: dict) -> list[tuple[str, ...]]:
    """Paths of the fields to replace: every top-level field, parameter and verdict field."""
    return ([(key,) for key in cert] + [("params", key) for key in cert["params"]]
            + [("verdict", key) for key in cert["verdict"]])


def _replace(cert: dict, path: tuple[str, ...], value) -> dict:
    out = json.loads(json.dumps(cert))
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


def _check(workdir: Path, cert: dict, case: str) -> None:
    folder = workdir / "certs"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    (folder / "hostile.json").write_text(json.dumps(cert))
    code, out, err = run_case(["check-certificates", str(folder)], None, "--json")
    assert code in (0, 1, 2), f"{case}: exit {code!r}\n{out[-1000:]}"
    if code == 0:
        assert "__" not in json.dumps(cert["params"]), f"{case}: a payload checked out"
    assert "Traceback" not in out + err, f"{case}: traceback\n{err[-2000:]}"
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("attngeom: error: "), f"{case}: {err!r:.500}"
    assert not (workdir / CANARY).exists(), f"{case}: the payload ran"


def _base(name: str) -> dict:
    return json.loads((REPO / "certificates" / name).read_text())


#: Hostile values tried per field: a rotating slice of the list, so that every value meets
#: fields of every kind while one base certificate stays a few seconds.
PER_FIELD = 8


@pytest.mark.parametrize("name", BASES)
def test_hostile_value_in_every_field(workdir, name):
    cert = _base(name)
    payloads = [v for v in HOSTILE if len(v) < 600] + JSON_ONLY
    for index, path in enumerate(_fields(cert)):
        if path in {("verdict", "seconds"), ("verdict", "version"), ("toolkit_version",)}:
            continue                      # measured: any value checks out
        for k in range(PER_FIELD):
            value = payloads[(index * PER_FIELD + k) % len(payloads)]
            _check(workdir, _replace(cert, path, value), f"{name} {'.'.join(path)} = {value!r:.80}")


@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mixtures_in_parameters(workdir, data):
    name = data.draw(st.sampled_from(BASES))
    cert = _base(name)
    key = data.draw(st.sampled_from(sorted(cert["params"])))
    value = data.draw(st.one_of(st.sampled_from(HOSTILE + JSON_ONLY),
                                st.lists(st.sampled_from(["u", "(", ")", "**", "99", "__",
                                                          "'", ":", "\u0443"]),
                                         max_size=10).map("".join)))
    _check(workdir, _replace(cert, ("params", key), value), f"{name} params.{key} = {value!r:.80}")

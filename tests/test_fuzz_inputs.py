"""Issue 29: hostile option values end in a verdict or one error line, never in code.

Every option that takes text or a number is fed code-injection payloads, huge exponents
and numbers, deep nesting, Unicode look-alikes, NaN / inf, empty and zero / negative
values (a fixed list, then Hypothesis' derandomized mixtures of them), through
``cli.main`` in-process, in a temporary directory, each case under a time bound.  It
must exit 0, 1 or 2; exit 2 with exactly one stderr line starting ``attngeom: ``; no
traceback; and the canary file the payloads try to create must not exist.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attngeom import cli

CANARY = "CANARY"
#: Seconds one case may take (the CLI's own work on the cheap sizes below is < 1 s).
CASE_SECONDS = 20

HOSTILE = [
    # code injection
    f"__import__('os').system('touch {CANARY}')",
    f"__import__('os').system('touch {CANARY}') + u**2",
    f"(lambda: __import__('os').system('touch {CANARY}'))()",
    "().__class__.__bases__[0].__subclasses__()",
    "u.__class__", "u.__dict__", f"f'{{open(\"{CANARY}\", \"w\")}}'",
    f"open('{CANARY}', 'w')", f"exec('open(\"{CANARY}\", \"w\")')", "eval('1')",
    "\\x41", "u\\\nv", "1; import os", "Symbol('x')", "Integer(1)", "I", "E",
    # huge exponents and numbers
    "2**999999999", "u**999999999", "y_((1,1),(1,1),(1,1))^999999999 - 1",
    "10**10**10", "(u**8)**16", "u**2*exp(10**10)", "u*exp(exp(exp(exp(10))))", "9" * 5000, "1e999999999", "1e-999999999",
    "y_((99999999999999999999,1),(1,1),(1,1))",
    # deep nesting
    "(" * 3000 + "u" + ")" * 3000, "-" * 3000 + "u", "exp(" * 200 + "u" + ")" * 200,
    # Unicode look-alikes and control characters
    "u\uff0bv", "\u0443 + v", "\u2212u", "\uff11", "y\u2080", "u\u200b", "\x00", "u\nv",
    # not numbers
    "nan", "NaN", "inf", "-inf", "oo", "zoo", "1/0", "0/0",
    # empty, zero, negative, malformed lists and specs
    "", " ", "0", "-1", "-0", "0.0", "99999999999999999999", "3:3", "1,2", ",", ":", "=",
    "a:b=c", "path:0", "path:-1", "balanced:999999999:999999999", "random:99999999999",
    "star:1e9", "%s", "{}", "[]",
]

#: (command words, option) for each option that takes text or a number, at cheap sizes;
#: the value goes right after the option (or stands alone when option is None).
TARGETS = [
    (["verify-poly", "--d", "2", "--t", "2"], None),
    (["verify", "depth-amplification"], "--psi"),
    (["verify", "depth-amplification"], "--amplitudes"),
    (["curvature", "normal-form", "--points", "2"], "--psi"),
    (["curvature", "sphere", "--points", "2"], "--gate-strength"),
    (["verify", "monomial-count", "--t", "2"], "--d"),
    (["verify", "linear", "--d", "2", "--t", "2"], "--samples"),
    (["verify", "linear", "--d", "2", "--t", "2"], "--seed"),
    (["verify", "resultant", "--d", "2", "--t", "2"], "--line"),
    (["verify", "veronese", "--d", "3", "--t", "2"], "--context-indices"),
    (["verify", "poincare-distance-geodesic"], "--radius"),
    (["verify", "poincare-distance-geodesic"], "--curvature"),
    (["verify", "poincare-distance-geodesic"], "--point"),
    (["verify", "frechet-algorithm-1"], "--eta"),
    (["verify", "gt-gaussian-kl"], "--sigma"),
    (["verify", "gt-kl-attention"], "--kappa"),
    (["verify", "gt-dirac-limit"], "--coupling"),
    (["verify", "tree-euclidean-depth-bound"], "--distortion"),
    (["verify", "tree-hyperbolic-distortion"], "--tree"),
    (["embed-tree", "path:4"], "--eps"),
    (["embed-tree"], None),
    (["dimension", "--a", "2", "--t", "2"], "--d"),
    (["ideal", "--d", "2", "--t", "2", "--a", "2", "--max-degree", "1"], "--family-param"),
    (["ideal", "--d", "2", "--t", "2", "--a", "2", "--max-degree", "1"], "--attribution-budget"),
    (["atlas", "--max-degree", "1", "--families", "none", "--out", "atlas"], "--grid"),
    (["atlas", "--grid", "2,1,1", "--max-degree", "1", "--families", "none", "--out", "atlas"],
     "--m2-budget"),
    (["experiment", "gec", "--epochs", "-1", "--out", "out"], "--seeds"),
    (["list"], "--threads"),
]


class _TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise _TooSlow


@pytest.fixture(scope="module")
def workdir():
    """A temporary working directory for the whole module (the canary would land here)."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield Path(folder)
        finally:
            os.chdir(before)


def run_case(words: list[str], option: str | None, value: str) -> tuple[int, str, str]:
    """``attngeom WORDS [OPTION] VALUE`` in-process under CASE_SECONDS: (code, out, err)."""
    argv = ([option, value] + words) if option == "--threads" else \
        words + ([option, value] if option else [value])
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main(argv)
                code = 0
            except SystemExit as stop:
                code = stop.code
    except _TooSlow:
        pytest.fail(f"attngeom {argv!r:.300} took more than {CASE_SECONDS} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def check_case(workdir: Path, words: list[str], option: str | None, value: str) -> None:
    code, out, err = run_case(words, option, value)
    case = f"{' '.join(words)} {option or ''} {value!r:.200}"
    assert code in (0, 1, 2), f"{case}: exit code {code!r}"
    assert "Traceback" not in out + err, f"{case}: traceback\n{err[-2000:]}"
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("attngeom: "), f"{case}: stderr {err!r:.500}"
    assert not (workdir / CANARY).exists(), f"{case}: the payload ran"


@pytest.mark.parametrize("words,option", TARGETS, ids=[" ".join(w[:2]) + f" {o}" for w, o in TARGETS])
def test_every_hostile_value_of_the_list(workdir, words, option):
    for value in HOSTILE:
        check_case(workdir, words, option, value)


_PIECES = st.sampled_from(["u", "v", "y_((1,1),(1,1),(1,1))", "2", "0", "1e308", "**", "^",
                           "*", "/", "+", "-", "(", ")", "exp(", "__", ".", "'", ",", ":",
                           "=", "\uff0b", "\u0443", "nan", "inf", "999999999", " "])


@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.lists(_PIECES, max_size=12).map("".join))
@pytest.mark.parametrize("words,option", [t for t in TARGETS if t[1] in
                                          (None, "--psi", "--d", "--eps", "--radius", "--line",
                                                           "--grid")],
                         ids=lambda x: str(x))
def test_mixtures_of_hostile_pieces(workdir, words, option, value):
    check_case(workdir, words, option, value)

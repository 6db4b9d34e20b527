"""The points of ``attngeom atlas``: the grid grammar of ``--grid`` and the default grid.

A point is (d, t, a, d') with the largest degree K of its table (ADM Def 8: the vanishing
ideal of one output coordinate's attention variety, :mod:`attngeom.lightning_alg.ideal`).

Grammar (parsed by hand, never evaluated)::

    SPEC  := TERM (';' TERM)*                  terms may also be separated by spaces
    TERM  := FIELD ',' FIELD ',' FIELD [',' FIELD] ['@' INT]     d, t, a [, d'] [@ K]
    FIELD := INT | INT '..' INT | INT ('|' INT)+                one value, a range, a list

A term stands for every combination of its fields' values (d' defaults to 1, K to
``--max-degree``); ``default`` stands for :data:`DEFAULT_GRID`.  Every value is an
integer >= 1 of at most :data:`MAX_DIGITS` digits, a range runs upwards, and a grid holds
at most :data:`MAX_POINTS` points: anything else is one line of BadInput.  Points repeat
only once (the first occurrence keeps its place).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attngeom.core.errors import BadInput

#: Digits of one value (the ideal itself refuses sizes far below 10^3).
MAX_DIGITS = 3
#: Points of one grid.
MAX_POINTS = 500
#: Largest degree of a table (the interpolation's own limits stop far earlier).
MAX_DEGREE = 12
FIELD_NAMES = ("d", "t", "a", "d'")

#: The default atlas (docs/atlas.md, "Grid grammar and the default grid").  The rule: a
#: point is in when its table to degree 4, every registered family attributed, took at most
#: a few minutes and about 1 GiB in one process on the 2-core, 24 GiB development machine
#: (load 2-4 from other jobs).  Measured with the families of ADM (issue 28, before the new
#: families of its ask 3, which add attribution time: docs/atlas.md has the seconds of the
#: committed run): every d <= 3 with t <= 4, 1-2.2 s, under 0.1 GiB;
#: d = 4 at t = 1, about 1 s; d = 4 at t = 2, 3 (every a) and (4, 4, 4), 17-57 s, 0.83-0.88
#: GiB peak; d = 5 at t = 1 (every a), about 10 s, 0.14 GiB.  d = 5 at t = 2 is out: (5, 2, 5)
#: has 110 coordinates, 75 pivots and 1.4 million degree-4 monomials, and its table alone
#: (--families none) took 210 s of CPU and 3.9 GiB (35 linear, 3500 cubic and 35000
#: quartic minimal generators); ``--grid 5,2,5`` computes it.
#: d' = 2 is added at two points: one output coordinate sees only row 1 of V, so its ideal
#: is that of d' = 1; the whole output's dimension (HMK Cor 3.3 at d') is what changes.
DEFAULT_GRID = ("2,1..3,1..2; 3,1..3,1..3; 3,4,3; 4,1..3,1..4; 4,4,4; 5,1,1..5; "
                "3,2,3,2; 4,2,4,2")

_INT = r"(\d{1,%d})" % MAX_DIGITS
_FIELD = re.compile(rf"^{_INT}(?:\.\.{_INT})?$")
_LIST = re.compile(rf"^{_INT}(?:\|{_INT})+$")
_DEGREE = re.compile(rf"^@{_INT}$")


@dataclass(frozen=True, order=True)
class AtlasPoint:
    """One point of the atlas: the variety of (d, t, a, d') to degree ``max_degree``."""

    d: int
    t: int
    a: int
    dprime: int = 1
    max_degree: int = 4

    @property
    def name(self) -> str:
        """``d=3,t=2,a=3,d'=1,K=4``: how tables, bars and errors name the point."""
        return f"d={self.d},t={self.t},a={self.a},d'={self.dprime},K={self.max_degree}"

    @property
    def filename(self) -> str:
        """The point's JSON file: ``d3-t2-a3-dp1-K4.json``."""
        return f"d{self.d}-t{self.t}-a{self.a}-dp{self.dprime}-K{self.max_degree}.json"

    def params(self) -> dict:
        return {"d": self.d, "t": self.t, "a": self.a, "dprime": self.dprime,
                "max_degree": self.max_degree}


def _field_values(text: str, name: str, term: str) -> list[int]:
    text = text.strip()
    if _LIST.match(text):
        values = [int(v) for v in text.split("|")]
    else:
        match = _FIELD.match(text)
        if not match:
            raise BadInput(f"--grid: {name} must be an integer >= 1, a range LO..HI or a list "
                           f"X|Y; got {text!r} in term {term!r}")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if high < low:
            raise BadInput(f"--grid: the range {text!r} of {name} runs downwards in term {term!r}")
        values = list(range(low, high + 1))
    if min(values) < 1:
        raise BadInput(f"--grid: {name} must be >= 1; got {text!r} in term {term!r}")
    return values


def _term_points(term: str, max_degree: int) -> list[AtlasPoint]:
    body, at, degree_text = term.partition("@")
    degree = max_degree
    if at:
        if not _DEGREE.match("@" + degree_text.strip()):
            raise BadInput(f"--grid: the degree after '@' must be an integer; got {term!r}")
        degree = int(degree_text)
    if not 1 <= degree <= MAX_DEGREE:
        raise BadInput(f"--grid: the degree K must be in 1..{MAX_DEGREE}; got {degree} in "
                       f"term {term!r}")
    fields = body.split(",")
    if len(fields) not in (3, 4):
        raise BadInput(f"--grid: a term is d,t,a[,d'][@K]; got {term!r}")
    values = [_field_values(text, name, term) for text, name in zip(fields, FIELD_NAMES)]
    if len(values) == 3:
        values.append([1])
    count = 1
    for v in values:
        count *= len(v)
    if count > MAX_POINTS:
        raise BadInput(f"--grid: term {term!r} has {count} points, more than {MAX_POINTS}")
    return [AtlasPoint(d, t, a, dprime, degree) for d in values[0] for t in values[1]
            for a in values[2] for dprime in values[3]]


def parse_grid(spec: str | None, max_degree: int = 4) -> list[AtlasPoint]:
    """The points of ``--grid SPEC`` (None or ``default``: :data:`DEFAULT_GRID`), each to
    degree ``max_degree`` unless its term says ``@K``."""
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or \
            not 1 <= max_degree <= MAX_DEGREE:
        raise BadInput(f"--max-degree must be an integer in 1..{MAX_DEGREE}; got {max_degree!r}")
    spec = "default" if spec is None else str(spec)
    if len(spec) > 2000:
        raise BadInput("--grid: the specification is longer than 2000 characters")
    terms = [t for t in re.split(r"[;\s]+", spec.strip()) if t]
    if not terms:
        raise BadInput("--grid: no points given")
    points: list[AtlasPoint] = []
    for term in terms:
        if term == "default":
            expanded = parse_grid(DEFAULT_GRID, max_degree)
        else:
            expanded = _term_points(term, max_degree)
        points.extend(p for p in expanded if p not in points)
        if len(points) > MAX_POINTS:
            raise BadInput(f"--grid: more than {MAX_POINTS} points")
    return points

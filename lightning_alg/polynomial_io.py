"""Reading polynomials in the coefficient coordinates (Macaulay2 syntax) for ``verify-poly``.

Grammar (whitespace ignored)::

    expr   := term (('+' | '-') term)*
    term   := factor (('*' | '/')? factor)*       -- '/' only by a nonzero constant;
                                                    juxtaposition multiplies (as printed)
    factor := ('+' | '-') factor | atom ('^' INTEGER)?
    atom   := INTEGER | LABEL | '(' expr ')'

A LABEL is a coordinate as ``show`` prints it: Macaulay2 ``y_((1,2),(2,2),(2,1))``, with
an optional leading output row ``y_(2,(1,2),(2,2),(2,1))``, or the text form
``y_{(1,2),(2,2),(2,1)}`` / ``y^{[2]}_{...}``.  The three pairs may come in any order
(ADM's Macaulay2 code sorts them; the paper writes context pairs first).  Errors are
:class:`~kernels.errors.BadInput` with the column where reading stopped.
"""

from __future__ import annotations

import re

import sympy

from kernels.errors import BadInput
from lightning_alg.coordinates import CoordinateSystem
from lightning_alg.labels import Label

_PAIR = r"\(\s*\d+\s*,\s*\d+\s*\)"
_M2_LABEL = rf"y_\(\s*(?:(?P<m2row>\d+)\s*,\s*)?(?P<m2pairs>{_PAIR}(?:\s*,\s*{_PAIR}){{2}})\s*\)"
_TEXT_LABEL = rf"y(?:\^\{{\[(?P<txtrow>\d+)\]\}})?_\{{(?P<txtpairs>{_PAIR}(?:\s*,\s*{_PAIR}){{2}})\}}"
_TOKEN = re.compile(rf"\s*(?:(?P<label>{_M2_LABEL}|{_TEXT_LABEL})|(?P<int>\d+)|(?P<op>[-+*/^()]))")


def _tokens(source: str):
    pos = 0
    out = []
    while pos < len(source):
        if source[pos:].strip() == "":
            break
        match = _TOKEN.match(source, pos)
        if not match:
            snippet = source[pos:].strip()[:20]
            raise BadInput(f"syntax error at column {pos + 1}: cannot read {snippet!r}")
        start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
        out.append((match, start + 1))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, source: str, coords: CoordinateSystem):
        self.source = source
        self.coords = coords
        self.tokens = _tokens(source)
        self.pos = 0

    def peek_op(self):
        if self.pos < len(self.tokens):
            return self.tokens[self.pos][0].group("op")
        return None

    def column(self) -> int:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else len(self.source) + 1

    def fail(self, what: str):
        raise BadInput(f"syntax error at column {self.column()}: {what}")

    def parse(self) -> sympy.Expr:
        if not self.tokens:
            raise BadInput("empty polynomial")
        expr = self.expr()
        if self.pos != len(self.tokens):
            self.fail("unexpected token")
        return sympy.expand(expr)

    def expr(self):
        value = self.term()
        while self.peek_op() in ("+", "-"):
            op = self.peek_op()
            self.pos += 1
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def starts_atom(self) -> bool:
        if self.pos >= len(self.tokens):
            return False
        match = self.tokens[self.pos][0]
        return match.group("op") == "(" or match.group("op") is None

    def term(self):
        value = self.factor()
        while self.peek_op() in ("*", "/") or self.starts_atom():
            op = self.peek_op() or "*"
            if self.peek_op():
                self.pos += 1
            column = self.column()
            rhs = self.factor()
            if op == "*":
                value = value * rhs
            else:
                if rhs.free_symbols or rhs == 0:
                    raise BadInput(f"syntax error at column {column}: "
                                   "division only by a nonzero constant")
                value = value / rhs
        return value

    def factor(self):
        op = self.peek_op()
        if op in ("+", "-"):
            self.pos += 1
            inner = self.factor()
            return -inner if op == "-" else inner
        base = self.atom()
        if self.peek_op() == "^":
            self.pos += 1
            if self.pos >= len(self.tokens) or self.tokens[self.pos][0].group("int") is None:
                self.fail("'^' needs a non-negative integer exponent")
            exponent = int(self.tokens[self.pos][0].group("int"))
            self.pos += 1
            base = base ** exponent
        return base

    def atom(self):
        if self.pos >= len(self.tokens):
            self.fail("unexpected end of input")
        match, _ = self.tokens[self.pos]
        if match.group("op") == "(":
            self.pos += 1
            inner = self.expr()
            if self.peek_op() != ")":
                self.fail("missing ')'")
            self.pos += 1
            return inner
        if match.group("int") is not None:
            self.pos += 1
            return sympy.Integer(match.group("int"))
        if match.group("label") is not None:
            self.pos += 1
            return self.coords.symbol(self.label(match))
        self.fail(f"unexpected {match.group('op')!r}")

    def label(self, match) -> Label:
        row_text = match.group("m2row") or match.group("txtrow")
        pairs_text = match.group("m2pairs") or match.group("txtpairs")
        pairs = [tuple(int(v) for v in p) for p in re.findall(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", pairs_text)]
        if row_text is None and self.coords.all_outputs and self.coords.dprime > 1:
            raise BadInput(f"label {match.group('label')} needs its output row: y_(i,(..),(..),(..))")
        row = int(row_text) if row_text is not None else self.coords.row
        return Label.from_pairs(pairs, row)


def parse_polynomial(source: str, coords: CoordinateSystem) -> sympy.Expr:
    """Parse a Macaulay2-syntax polynomial in the coordinates of ``coords``."""
    return _Parser(source, coords).parse()

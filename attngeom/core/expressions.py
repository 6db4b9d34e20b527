"""Reading arithmetic from untrusted text by a small grammar, never by ``eval``.

Issue 29, "Untrusted input never runs code" (``SECURITY.md``): every expression a user
types (``--psi``, a polynomial of ``verify-poly``) is read here, token by token, and the
value is built from the tokens by an *algebra* (SymPy expressions, or a sparse
polynomial ring): no text ever reaches ``sympify``, ``parse_expr``, ``eval`` or ``exec``.

Grammar (whitespace ignored; :class:`Grammar` switches the optional parts)::

    expr     := term (('+' | '-') term)*
    term     := unary (('*' | '/') unary | unary)*     -- juxtaposition only if enabled
    unary    := ('+' | '-') unary | power
    power    := atom (POW exponent)?                   -- POW: '^', and '**' if enabled
    exponent := INTEGER                                -- integer_exponents
              | unary                                  -- otherwise (right-associative)
    atom     := NUMBER | ATOM | NAME | NAME '(' expr ')' | '(' expr ')'

NUMBER is an integer, or with ``decimals`` a decimal such as ``0.5`` or ``1e-3``, read
as an exact rational.  ATOM is a grammar's own token (the coordinate labels of
``attngeom.lightning_alg.polynomial_io``).  NAME is an ASCII identifier, resolved by the algebra.

Bounded work: the limits below are checked before any value is built, so hostile text
ends in one :class:`~attngeom.core.errors.BadInput` line, never in a hang, a RecursionError or
an exhausted memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from attngeom.core.errors import BadInput

#: Longest expression text (characters) a grammar reads unless it sets its own limit.
MAX_TEXT_LENGTH = 4000
#: Deepest nesting of parentheses, signs, exponents and function calls.
MAX_DEPTH = 50
#: Largest |integer exponent| (and numerator / denominator of a rational one): enough
#: for every invariant and formula of the papers (degree <= ~10), small enough that a
#: power of a sum stays a modest expansion.
MAX_EXPONENT = 64
#: Longest number literal (characters, digits and exponent together).
MAX_NUMBER_LENGTH = 100
#: Largest |decimal exponent| e of a literal such as 1e-3 (so 1e999999 is not 10^999999).
MAX_DECIMAL_EXPONENT = 100

_NUMBER = re.compile(r"(?P<digits>\d+(?:\.\d*)?|\.\d+)(?:[eE](?P<exp>[-+]?\d+))?")


def check_text(text: str, what: str, max_length: int = MAX_TEXT_LENGTH) -> None:
    """Refuse empty text, text longer than ``max_length`` and non-ASCII characters
    (Unicode look-alikes such as U+FF0B '＋' or a Cyrillic 'u'), naming the column."""
    if not str(text).strip():
        raise BadInput(f"empty {what}")
    if len(text) > max_length:
        raise BadInput(f"the {what} has {len(text):,} characters; the limit is {max_length:,}")
    for column, char in enumerate(text, 1):
        if not char.isascii():
            raise BadInput(f"the {what} has the non-ASCII character {ascii(char)} at column "
                           f"{column}; write it in ASCII")


def exact_number(text: str, what: str = "number") -> Fraction:
    """An exact rational from an integer or decimal literal (``2``, ``0.5``, ``1e-3``,
    ``1/2`` is not a literal), refusing literals longer than MAX_NUMBER_LENGTH characters
    or with a decimal exponent beyond MAX_DECIMAL_EXPONENT."""
    text = str(text).strip()
    match = _NUMBER.fullmatch(text)
    if not match:
        raise BadInput(f"{what}: {ascii(text[:40])} is not a number")
    if len(text) > MAX_NUMBER_LENGTH:
        raise BadInput(f"{what}: a number of {len(text):,} characters; the limit is "
                       f"{MAX_NUMBER_LENGTH}")
    exponent = int(match.group("exp") or 0)
    if abs(exponent) > MAX_DECIMAL_EXPONENT:
        raise BadInput(f"{what}: the decimal exponent {exponent} is beyond "
                       f"+-{MAX_DECIMAL_EXPONENT}")
    whole, _, fraction = match.group("digits").partition(".")
    value = Fraction(int(whole or "0") * 10 ** len(fraction) + int(fraction or "0"),
                     10 ** len(fraction))
    return value * Fraction(10) ** exponent


def parse_rational(text: Any, what: str) -> Fraction:
    """An exact rational from an option value: a signed literal of :func:`exact_number`
    or a quotient of two (``-0.5``, ``1/2``, ``1e-3``), with the same limits; BadInput
    (one line naming ``what``) otherwise.  Never ``Fraction(text)``, which would compute
    10^999999999 for ``1e999999999``."""
    body = str(text).strip()
    check_text(body, what, MAX_NUMBER_LENGTH * 2 + 2)
    sign = -1 if body[:1] == "-" else 1
    numerator, slash, denominator = body[1 if body[:1] in "+-" else 0:].partition("/")
    try:
        value = exact_number(numerator, what) / (exact_number(denominator, what) if slash else 1)
    except ZeroDivisionError:
        raise BadInput(f"{what}: division by zero in {ascii(body)}") from None
    except BadInput as error:
        if "is not a number" not in str(error):
            raise
        raise BadInput(f"{what} must be a number such as 0.5 or 1/2; got {ascii(body[:40])}") from None
    return sign * value


@dataclass(frozen=True)
class Token:
    """kind: 'number' (value a Fraction), 'name', 'atom' (value: the regex match), 'op'."""

    kind: str
    text: str
    column: int
    value: Any = None


@dataclass(frozen=True)
class Grammar:
    """The optional parts of the grammar (module docstring) and the text limit.

    atom: a regex of the grammar's own atoms, tried before everything else.
    """

    what: str = "expression"
    decimals: bool = True
    names: bool = True
    star_star: bool = True
    juxtaposition: bool = False
    integer_exponents: bool = False
    atom: re.Pattern | None = None
    max_length: int = MAX_TEXT_LENGTH

    def token_pattern(self) -> re.Pattern:
        parts = []
        if self.atom is not None:
            parts.append(f"(?P<atom>{self.atom.pattern})")
        parts.append(r"(?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)" if self.decimals
                     else r"(?P<number>\d+)")
        if self.names:
            parts.append(r"(?P<name>[A-Za-z_][A-Za-z_0-9]*)")
        parts.append(r"(?P<op>\*\*|[-+*/^()])" if self.star_star else r"(?P<op>[-+*/^()])")
        return re.compile(r"\s*(?:" + "|".join(parts) + ")")


def tokenize(text: str, grammar: Grammar) -> list[Token]:
    """The tokens of ``text`` (after :func:`check_text`), each with its 1-based column."""
    check_text(text, grammar.what, grammar.max_length)
    pattern = grammar.token_pattern()
    tokens, pos = [], 0
    while text[pos:].strip():
        match = pattern.match(text, pos)
        if not match:
            column = pos + len(text[pos:]) - len(text[pos:].lstrip()) + 1
            raise BadInput(f"syntax error at column {column}: cannot read "
                           f"{ascii(text[column - 1:column + 19])}")
        groups = match.groupdict()
        kind = next(k for k in ("atom", "number", "name", "op") if groups.get(k) is not None)
        column = match.start(kind) + 1
        body = match.group(kind)
        value = (exact_number(body, f"the number at column {column}") if kind == "number"
                 else match if kind == "atom" else None)
        tokens.append(Token(kind, body, column, value))
        pos = match.end()
    return tokens


class Parser:
    """Recursive descent over the tokens of one text, building values with ``algebra``.

    The algebra provides ``number(Fraction)``, ``atom(token)``, ``name(token)``,
    ``call(name_token, argument)``, ``add``, ``subtract``, ``negate``, ``multiply``,
    ``divide(a, b, column)`` and ``power(base, exponent, column)``; it refuses what its
    domain cannot hold (an unknown name, a symbolic exponent, too many terms) with
    BadInput.  ``prefix`` starts every syntax error (it says what was being read).
    """

    def __init__(self, text: str, grammar: Grammar, algebra, prefix: str = ""):
        self.text, self.grammar, self.algebra, self.prefix = text, grammar, algebra, prefix
        try:
            self.tokens = tokenize(text, grammar)
        except BadInput as error:
            raise BadInput(f"{prefix}{error}") from None
        self.pos = 0
        self.depth = 0

    # -- reading tokens ---------------------------------------------------------------
    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def peek_op(self) -> str | None:
        token = self.peek()
        return token.text if token is not None and token.kind == "op" else None

    def column(self) -> int:
        token = self.peek()
        return token.column if token is not None else len(self.text) + 1

    def fail(self, what: str):
        raise BadInput(f"{self.prefix}syntax error at column {self.column()}: {what}")

    def nested(self, read: Callable[[], Any]):
        """``read()`` one level deeper, refusing nesting beyond MAX_DEPTH."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH} levels")
        try:
            return read()
        finally:
            self.depth -= 1

    # -- the grammar ------------------------------------------------------------------
    def parse(self):
        value = self.expr()
        if self.pos != len(self.tokens):
            self.fail("unexpected token")
        return value

    def expr(self):
        value = self.term()
        while self.peek_op() in ("+", "-"):
            op = self.peek_op()
            self.pos += 1
            rhs = self.term()
            value = self.algebra.add(value, rhs) if op == "+" else self.algebra.subtract(value, rhs)
        return value

    def starts_atom(self) -> bool:
        token = self.peek()
        return token is not None and (token.kind != "op" or token.text == "(")

    def term(self):
        value = self.unary()
        while self.peek_op() in ("*", "/") or (self.grammar.juxtaposition and self.starts_atom()):
            op = self.peek_op() or "*"
            if self.peek_op():
                self.pos += 1
            column = self.column()
            rhs = self.unary()
            value = (self.algebra.multiply(value, rhs) if op == "*"
                     else self.algebra.divide(value, rhs, column))
        return value

    def unary(self):
        op = self.peek_op()
        if op in ("+", "-"):
            self.pos += 1
            inner = self.nested(self.unary)
            return self.algebra.negate(inner) if op == "-" else inner
        return self.power()

    def power(self):
        base = self.atom()
        if self.peek_op() not in ("^", "**"):
            return base
        self.pos += 1
        column = self.column()
        if self.grammar.integer_exponents:
            token = self.peek()
            if token is None or token.kind != "number" or token.value.denominator != 1:
                self.fail("'^' needs a non-negative integer exponent")
            self.pos += 1
            exponent = self.algebra.number(token.value)
        else:
            exponent = self.nested(self.unary)
        return self.algebra.power(base, exponent, column)

    def atom(self):
        token = self.peek()
        if token is None:
            self.fail("unexpected end of input")
        if token.kind == "op":
            if token.text != "(":
                self.fail(f"unexpected {token.text!r}")
            self.pos += 1
            inner = self.nested(self.expr)
            self.close()
            return inner
        self.pos += 1
        if token.kind == "number":
            return self.algebra.number(token.value)
        if token.kind == "atom":
            return self.algebra.atom(token)
        if self.peek_op() == "(":
            self.pos += 1
            argument = self.nested(self.expr)
            self.close()
            return self.algebra.call(token, argument)
        return self.algebra.name(token)

    def close(self):
        if self.peek_op() != ")":
            self.fail("missing ')'")
        self.pos += 1


def check_exponent(exponent: Fraction, column: int) -> None:
    """Refuse exponents whose numerator or denominator exceeds MAX_EXPONENT."""
    if abs(exponent.numerator) > MAX_EXPONENT or exponent.denominator > MAX_EXPONENT:
        shown = str(exponent) if len(str(exponent)) <= 20 else f"of {len(str(exponent))} digits"
        raise BadInput(f"the exponent {shown} at column {column} is beyond the limit "
                       f"|e| <= {MAX_EXPONENT}")


class SympyAlgebra:
    """Values as SymPy expressions, for formulas such as GEC's psi(u, v).

    symbols: the variables by name; functions: the allowed one-argument functions by name
    (SymPy callables); constants: named constants (``pi``).  Exponents must be rational
    constants within MAX_EXPONENT; a power of a number stays below MAX_CONSTANT_BITS.
    """

    #: Largest size (bits of numerator plus denominator) of a number raised to a power,
    #: counted through nested powers and products ((2 u)^64)^64 holds 2^4096).
    MAX_CONSTANT_BITS = 10_000
    #: Largest degree of a power after SymPy merges powers of powers and of products
    #: (((u^64)^64) is u^4096): a polynomial psi of degree 256 is far beyond any paper's.
    MAX_DEGREE = 256

    def size(self, expr) -> tuple[int, int]:
        """(degree, bits): an upper bound on the degree of ``expr`` in its variables (a
        function of u counts as degree 1 in u) and on the bits of the numbers in it, read
        from the expression tree without expanding anything."""
        sympy = self.sympy
        if expr.is_Rational:
            return 0, abs(int(expr.p)).bit_length() + int(expr.q).bit_length()
        if expr.is_Symbol:
            return 1, 0
        if expr.is_Pow and expr.exp.is_Rational:
            degree, bits = self.size(expr.base)
            times = abs(int(expr.exp.p))
            return degree * times, bits * times
        parts = [self.size(arg) for arg in expr.args]
        if not parts:
            return 0, 64                      # pi, E and other named constants
        if expr.is_Mul:
            return sum(d for d, _ in parts), sum(b for _, b in parts)
        if expr.is_Add:
            return max(d for d, _ in parts), max(b for _, b in parts) + len(parts).bit_length()
        if isinstance(expr, sympy.Function):
            return max(1, max(d for d, _ in parts)), max(b for _, b in parts)
        return max(d for d, _ in parts), sum(b for _, b in parts)

    def __init__(self, symbols: dict, functions: dict, constants: dict, describe: str):
        import sympy
        self.sympy = sympy
        self.symbols, self.functions, self.constants = symbols, functions, constants
        self.describe = describe

    def number(self, value: Fraction):
        return self.sympy.Rational(value.numerator, value.denominator)

    def atom(self, token: Token):
        raise BadInput(f"{self.describe}: unexpected {token.text!r} at column {token.column}")

    def name(self, token: Token):
        if token.text in self.symbols:
            return self.symbols[token.text]
        if token.text in self.constants:
            return self.constants[token.text]
        if token.text in self.functions:
            raise BadInput(f"{self.describe}: {token.text} at column {token.column} is a "
                           f"function; write {token.text}(...)")
        raise BadInput(f"{self.describe} uses {token.text}; only "
                       f"{', '.join(self.symbols)} are allowed")

    #: Functions that grow like exp, and how deeply they may nest: exp(exp(u)) is
    #: allowed, exp(exp(exp(u))) is not (its values need numbers of ~10^43 digits and
    #: SymPy's evaluation of them runs without end).
    EXPONENTIAL = ("exp", "sinh", "cosh")
    MAX_EXPONENTIAL_NESTING = 2

    def exponential_nesting(self, expr) -> int:
        """How deeply exp-like functions nest in ``expr``."""
        inner = max((self.exponential_nesting(arg) for arg in expr.args), default=0)
        name = getattr(getattr(expr, "func", None), "__name__", "")
        return inner + (1 if name in self.EXPONENTIAL and expr.is_Function else 0)

    def call(self, token: Token, argument):
        if token.text not in self.functions:
            raise BadInput(f"{self.describe} uses {token.text}; allowed functions: "
                           + ", ".join(sorted(self.functions)))
        if (token.text in self.EXPONENTIAL
                and self.exponential_nesting(argument) >= self.MAX_EXPONENTIAL_NESTING):
            raise BadInput(f"{self.describe}: {token.text} at column {token.column} nests "
                           f"exp-like functions {self.exponential_nesting(argument) + 1} deep; "
                           f"the limit is {self.MAX_EXPONENTIAL_NESTING}")
        return self.functions[token.text](argument)

    def add(self, a, b):
        return a + b

    def subtract(self, a, b):
        return a - b

    def negate(self, a):
        return -a

    def multiply(self, a, b):
        return a * b

    def divide(self, a, b, column: int):
        if b == 0:
            raise BadInput(f"{self.describe}: division by zero at column {column}")
        return a / b

    def power(self, base, exponent, column: int):
        if not exponent.is_Rational:
            raise BadInput(f"{self.describe}: the exponent at column {column} must be a "
                           f"rational constant")
        value = Fraction(int(exponent.p), int(exponent.q))
        check_exponent(value, column)
        if base == 0 and value < 0:
            raise BadInput(f"{self.describe}: division by zero at column {column}")
        degree, bits = self.size(base)
        times = abs(value.numerator)
        if bits * times > self.MAX_CONSTANT_BITS:
            raise BadInput(f"{self.describe}: the power at column {column} holds a number "
                           f"of about {bits * times:,} bits; the limit is "
                           f"{self.MAX_CONSTANT_BITS:,}")
        if degree * times > self.MAX_DEGREE:
            raise BadInput(f"{self.describe}: the power at column {column} has degree about "
                           f"{degree * times:,} (powers of powers multiply); the limit is "
                           f"{self.MAX_DEGREE:,}")
        result = base ** exponent
        if result.is_Pow and result.exp.is_Rational:
            # SymPy merges (u**a)**b into u**(a*b): the merged exponent obeys the same limit
            check_exponent(Fraction(int(result.exp.p), int(result.exp.q)), column)
        return result


def parse_sympy(text: str, symbols: dict, functions: dict, constants: dict,
                describe: str, hint: str = "") -> Any:
    """A SymPy expression from ``text`` in the default :class:`Grammar` (decimals, '^'
    and '**'), with variables ``symbols`` and the one-argument ``functions``.

    Errors are BadInput lines starting with ``describe`` (and ending with ``hint`` for
    syntax errors)."""
    algebra = SympyAlgebra(symbols, functions, constants, describe)
    try:
        expr = Parser(text, Grammar(), algebra, prefix=f"{describe}: ").parse()
    except BadInput as error:
        if hint and "syntax error" in str(error):
            raise BadInput(f"{error} ({hint})") from None
        raise
    check_real_finite(expr, describe)
    return expr


def check_real_finite(expr, describe: str) -> None:
    """Refuse an expression that is infinite, undefined or complex where it is written:
    ``log(0)`` (zoo), ``1/0``-like limits, ``log(-1)`` and ``sqrt(-1)`` (I), and a root
    of a negative number such as ``(-8)^(1/3)`` (SymPy's principal root is complex)."""
    import sympy

    bad = [atom for atom in (sympy.zoo, sympy.oo, -sympy.oo, sympy.nan, sympy.I) if expr.has(atom)]
    negative_root = any(p.base.is_number and p.base.is_negative and p.exp.is_Rational
                        and not p.exp.is_Integer for p in expr.atoms(sympy.Pow))
    if bad or negative_root:
        what = ("a root of a negative number" if negative_root and not bad
                else "infinite or undefined" if bad[0] is not sympy.I else "complex")
        raise BadInput(f"{describe}: the value is {what} ({str(expr)[:60]}); only finite real "
                       f"expressions are allowed")

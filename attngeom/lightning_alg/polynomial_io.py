"""Reading polynomials in the coefficient coordinates (Macaulay2 syntax) for ``verify-poly``.

Grammar (whitespace ignored; the shared reader of :mod:`attngeom.core.expressions`)::

    expr   := term (('+' | '-') term)*
    term   := factor (('*' | '/')? factor)*       -- '/' only by a nonzero constant;
                                                    juxtaposition multiplies (as printed)
    factor := ('+' | '-') factor | atom ('^' INTEGER)?
    atom   := INTEGER | LABEL | '(' expr ')'

A LABEL is a coordinate as ``show`` prints it: Macaulay2 ``y_((1,2),(2,2),(2,1))``, with
an optional leading output row ``y_(2,(1,2),(2,2),(2,1))``, or the text form
``y_{(1,2),(2,2),(2,1)}`` / ``y^{[2]}_{...}``.  The three pairs may come in any order
(ADM's Macaulay2 code sorts them; the paper writes context pairs first).  Errors are
:class:`~attngeom.core.errors.BadInput` with the column where reading stopped.

Bounded work (issue 29): the polynomial is multiplied out in a sparse ring over QQ whose
generators are the labels of the text, and every product is refused *before* it is
computed when its total degree would exceed :data:`MAX_DEGREE`, its number of term pairs
:data:`MAX_PRODUCT_PAIRS`, or its number of terms (bounded by min(|f| |g|, the number of
monomials of that degree)) :data:`MAX_TERMS`.  ADM's invariants have degree <= ~10 and
at most tens of thousands of terms; the limits leave room above that.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import sympy
from sympy.polys.domains import QQ
from sympy.polys.rings import ring

from attngeom.core.errors import BadInput
from attngeom.core.expressions import Grammar, Parser, check_exponent
from attngeom.lightning_alg.coordinates import CoordinateSystem
from attngeom.lightning_alg.labels import Label

#: Largest total degree of a polynomial (and of every product built while reading it).
MAX_DEGREE = 64
#: Largest number of terms of the polynomial (and of every partial result).
MAX_TERMS = 200_000
#: Largest number of term pairs one product multiplies (|f| |g|), about 2 s of work.
MAX_PRODUCT_PAIRS = 4_000_000
#: Longest polynomial text: room for an invariant of ~MAX_TERMS / 4 printed terms.
MAX_LENGTH = 2_000_000
#: Largest coefficient (bits of numerator plus denominator) a product may create: ADM's
#: invariants have coefficients of a few bits; (((2^64)^64)^64) would have 262,144.
MAX_COEFFICIENT_BITS = 10_000
#: Most distinct coordinates (labels) in one polynomial: the sparse ring has one generator
#: each (4,902 labels ended in a RecursionError inside SymPy); ADM's largest invariants use
#: a few hundred.
MAX_LABELS = 2_000

_INDEX = r"\d{1,9}"
_PAIR = rf"\(\s*{_INDEX}\s*,\s*{_INDEX}\s*\)"
_M2_LABEL = rf"y_\(\s*(?:(?P<m2row>{_INDEX})\s*,\s*)?(?P<m2pairs>{_PAIR}(?:\s*,\s*{_PAIR}){{2}})\s*\)"
_TEXT_LABEL = rf"y(?:\^\{{\[(?P<txtrow>{_INDEX})\]\}})?_\{{(?P<txtpairs>{_PAIR}(?:\s*,\s*{_PAIR}){{2}})\}}"

GRAMMAR = Grammar(what="polynomial", decimals=False, names=False, star_star=False,
                  juxtaposition=True, integer_exponents=True,
                  atom=re.compile(f"{_M2_LABEL}|{_TEXT_LABEL}"), max_length=MAX_LENGTH)


def _label(match: re.Match, coords: CoordinateSystem) -> Label:
    row_text = match.group("m2row") or match.group("txtrow")
    pairs_text = match.group("m2pairs") or match.group("txtpairs")
    pairs = [tuple(int(v) for v in p) for p in re.findall(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", pairs_text)]
    if row_text is None and coords.all_outputs and coords.dprime > 1:
        raise BadInput(f"label {match.group(0)} needs its output row: y_(i,(..),(..),(..))")
    row = int(row_text) if row_text is not None else coords.row
    return Label.from_pairs(pairs, row)


class _RingAlgebra:
    """The values of the parser: elements of QQ[the labels of the text], every product's
    size checked before it is computed (module docstring)."""

    def __init__(self, tokens, coords: CoordinateSystem):
        symbols = {token.column: coords.symbol(_label(token.value, coords))
                   for token in tokens if token.kind == "atom"}
        distinct = list(dict.fromkeys(symbols.values())) or [sympy.Dummy("constant")]
        if len(distinct) > MAX_LABELS:
            raise BadInput(f"the polynomial uses {len(distinct):,} distinct coordinates; the "
                           f"limit is {MAX_LABELS:,}")
        self.ring, *gens = ring(distinct, QQ)
        generator = dict(zip(distinct, gens))
        self.by_column = {column: generator[symbol] for column, symbol in symbols.items()}

    def number(self, value: Fraction):
        return self.ring(QQ(value.numerator, value.denominator))

    def atom(self, token):
        return self.by_column[token.column]

    def add(self, f, g):
        return self._checked(f + g)

    def subtract(self, f, g):
        return self._checked(f - g)

    def negate(self, f):
        return -f

    def multiply(self, f, g):
        degree = _degree(f) + _degree(g)
        if degree > MAX_DEGREE:
            raise BadInput(f"the polynomial reaches total degree {degree}; the limit is {MAX_DEGREE}")
        pairs = len(f) * len(g)
        if pairs > MAX_PRODUCT_PAIRS:
            raise BadInput(f"a product of {len(f):,} by {len(g):,} terms; the limit is "
                           f"{MAX_PRODUCT_PAIRS:,} term pairs")
        bound = min(pairs, math.comb(self.ring.ngens + degree, degree))
        if bound > MAX_TERMS:
            raise BadInput(f"a product may have {bound:,} terms; the limit is {MAX_TERMS:,}")
        bits = _coefficient_bits(f) + _coefficient_bits(g) + pairs.bit_length()
        if bits > MAX_COEFFICIENT_BITS:
            raise BadInput(f"a product may have coefficients of {bits:,} bits; the limit is "
                           f"{MAX_COEFFICIENT_BITS:,}")
        return self._checked(f * g)

    def divide(self, f, g, column: int):
        if not g.is_ground or not g:
            raise BadInput(f"syntax error at column {column}: division only by a nonzero constant")
        return f.quo_ground(g.LC)

    def power(self, base, exponent, column: int):
        """base^k by repeated squaring, each product checked by :meth:`multiply`."""
        k = int(exponent.LC)
        check_exponent(Fraction(k), column)
        result, square = self.ring.one, base
        while k:
            if k & 1:
                result = self.multiply(result, square)
            k >>= 1
            if k:
                square = self.multiply(square, square)
        return result

    def _checked(self, f):
        if len(f) > MAX_TERMS:
            raise BadInput(f"the polynomial has more than {MAX_TERMS:,} terms; the limit is "
                           f"{MAX_TERMS:,}")
        return f


def _coefficient_bits(f) -> int:
    """The most bits (numerator plus denominator) of a coefficient of ``f``."""
    return max((abs(int(c.numerator)).bit_length() + int(c.denominator).bit_length()
                for c in f.itercoeffs()), default=0)


def _degree(f) -> int:
    return max((sum(monomial) for monomial in f.itermonoms()), default=0)


def parse_polynomial(source: str, coords: CoordinateSystem) -> sympy.Expr:
    """Parse a Macaulay2-syntax polynomial in the coordinates of ``coords``, expanded.

    Exponents are at most :data:`~attngeom.core.expressions.MAX_EXPONENT`; the sizes of the
    module docstring bound the work before it is done."""
    parser = Parser(source, GRAMMAR, None)
    parser.algebra = _RingAlgebra(parser.tokens, coords)
    return parser.parse().as_expr()

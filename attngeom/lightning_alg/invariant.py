"""An invariant: a polynomial over Q in the coefficient coordinates, with its provenance,
and the text / LaTeX / Macaulay2 / JSON renderings used by ``attngeom show``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy

from attngeom.lightning_alg.coordinates import CoordinateSystem


@dataclass(frozen=True)
class Invariant:
    """A polynomial in the y-coordinates claimed to vanish on the attention variety.

    Attributes
    ----------
    poly : sympy.Expr in the symbols of a CoordinateSystem
    family : e.g. 'sequence-copy', 'internal-symmetrization'
    source : paper short name and number, e.g. 'ADM Prop 9'
    indices : what picks this member out of its family (K, context column, ...)
    """

    poly: sympy.Expr
    family: str
    source: str
    indices: dict = field(default_factory=dict)

    @property
    def degree(self) -> int:
        return int(sympy.Poly(self.poly, *sorted(self.poly.free_symbols, key=str)).total_degree()) \
            if self.poly.free_symbols else 0


class SparseInvariant(Invariant):
    """An :class:`Invariant` given by its integer terms, e.g. a minor expanded with FLINT.

    ``terms`` is {exponent vector over ``symbols``: integer coefficient} of the polynomial
    before ``sign``; the invariant is ``sign`` times it.  The SymPy expression ``poly`` is
    built only when asked for (it is the same expression as
    ``sign * Poly.from_dict(terms, *symbols).as_expr()``); printing and the degree go
    through the terms directly (a single 8x8 minor has 40320 terms, whose SymPy expansion
    takes over a minute to build and to read back).
    """

    def __init__(self, terms: dict, symbols, sign: int, family: str, source: str,
                 indices: dict | None = None):
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "symbols", tuple(symbols))
        object.__setattr__(self, "sign", sign)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "indices", {} if indices is None else indices)

    @property
    def poly(self) -> sympy.Expr:
        cached = self.__dict__.get("_poly")
        if cached is None:
            expression = (sympy.Poly.from_dict(self.terms, *self.symbols).as_expr()
                          if self.terms else sympy.Integer(0))
            cached = self.sign * expression
            object.__setattr__(self, "_poly", cached)
        return cached

    @property
    def degree(self) -> int:
        return max((sum(exps) for exps in self.terms), default=0)

    def ordered_terms(self, coords: CoordinateSystem):
        """:func:`ordered_terms` of ``poly``, from the terms (no SymPy expansion)."""
        return sparse_ordered_terms(self.terms, self.symbols, coords, self.sign)


def ordered_terms(poly: sympy.Expr, coords: CoordinateSystem):
    """[(coefficient, [(label, exponent), ...]), ...] with the coordinates in their order."""
    gens = sorted(poly.free_symbols, key=lambda s: coords.symbol_index[s])
    if not gens:
        return [(sympy.Rational(poly), [])] if poly != 0 else []
    labels = [coords.labels[coords.symbol_index[g]] for g in gens]
    return [(coeff, [(lab, e) for lab, e in zip(labels, exps) if e])
            for exps, coeff in sympy.Poly(poly, *gens).terms()]


def sparse_ordered_terms(terms: dict, symbols, coords: CoordinateSystem, sign: int = 1):
    """:func:`ordered_terms` of ``sign * sum(c * prod(symbols[k] ** exps[k]))`` for
    ``terms`` = {exps: c} (integer c, none zero), without building the SymPy expression:
    the same terms in the same order (``Poly.terms()``: lexicographic, largest first, in
    the coordinates' order) with the same SymPy Integer coefficients."""
    if not terms:
        return []
    exps, rank, labels = _lex_order(terms, symbols, coords)
    coefficients = list(terms.values())
    ordered = exps[rank]
    rows, columns = np.nonzero(ordered)
    powers = ordered[rows, columns].tolist()
    names = [labels[k] for k in columns.tolist()]
    ends = np.cumsum(np.count_nonzero(ordered, axis=1)).tolist()
    out, begin = [], 0
    for t, end in zip(rank.tolist(), ends):
        out.append((sympy.Integer(sign * coefficients[t]),
                    list(zip(names[begin:end], powers[begin:end]))))
        begin = end
    return out


def leading_coefficient(terms: dict, symbols, coords: CoordinateSystem) -> int:
    """The coefficient of the first of :func:`sparse_ordered_terms` (0 for no terms)."""
    if not terms:
        return 0
    _, rank, _ = _lex_order(terms, symbols, coords)
    return list(terms.values())[int(rank[0])]


def _lex_order(terms: dict, symbols, coords: CoordinateSystem):
    """(exponents [T, n] with the columns in the coordinates' order, the term indices
    largest first in lexicographic order, the labels of the columns)."""
    positions = [coords.symbol_index[s] for s in symbols]
    order = sorted(range(len(symbols)), key=positions.__getitem__)
    exps = np.array(list(terms), dtype=np.int64).reshape(len(terms), len(symbols))[:, order]
    rank = np.lexsort(exps.T[::-1])[::-1] if len(order) else np.arange(len(terms))
    return exps, rank, [coords.labels[positions[k]] for k in order]


def format_polynomial(poly: sympy.Expr, coords: CoordinateSystem, fmt: str) -> str:
    """Render ``poly`` in 'text' (as the paper prints), 'latex' or 'm2' (Macaulay2) syntax."""
    return format_terms(ordered_terms(poly, coords), coords, fmt)


def format_invariant(inv: Invariant, coords: CoordinateSystem, fmt: str) -> str:
    """:func:`format_polynomial` of ``inv.poly`` (from the terms of a SparseInvariant)."""
    if isinstance(inv, SparseInvariant):
        return format_terms(inv.ordered_terms(coords), coords, fmt)
    return format_polynomial(inv.poly, coords, fmt)


def format_terms(terms, coords: CoordinateSystem, fmt: str) -> str:
    """Render :func:`ordered_terms` output in 'text', 'latex' or 'm2' syntax."""
    with_row = coords.with_row
    names: dict = {}
    pieces = []
    for coeff, factors in terms:
        if fmt == "m2":
            monomial = "*".join(_name(names, lab, with_row, "m2") + (f"^{e}" if e > 1 else "")
                                for lab, e in factors)
            joiner = "*"
        elif fmt == "latex":
            monomial = " ".join(_name(names, lab, with_row, "text") + (f"^{{{e}}}" if e > 1 else "")
                                for lab, e in factors)
            joiner = "\\,"
        else:
            monomial = " ".join(_name(names, lab, with_row, "text") + (f"^{e}" if e > 1 else "")
                                for lab, e in factors)
            joiner = " "
        magnitude = abs(coeff)
        if fmt == "latex" and magnitude.q != 1:
            number = f"\\frac{{{magnitude.p}}}{{{magnitude.q}}}"
        else:
            number = str(magnitude)
        body = monomial if (magnitude == 1 and monomial) else (
            f"{number}{joiner}{monomial}" if monomial else number)
        sign = "-" if coeff < 0 else "+"
        pieces.append((sign, body))
    if not pieces:
        return "0"
    first_sign, first = pieces[0]
    out = [("-" if first_sign == "-" else "") + first]
    for sign, body in pieces[1:]:
        out.append(f" {sign} {body}")
    return "".join(out)


def _name(names: dict, label, with_row: bool, style: str) -> str:
    """``label.m2(with_row)`` or ``label.text(with_row)``, memoised in ``names``."""
    key = (label, style)
    name = names.get(key)
    if name is None:
        name = names[key] = label.m2(with_row) if style == "m2" else label.text(with_row)
    return name


def invariant_json(inv: Invariant, coords: CoordinateSystem) -> dict:
    return {"family": inv.family, "source": inv.source, "degree": inv.degree,
            "indices": {k: (list(v) if isinstance(v, tuple) else v) for k, v in inv.indices.items()},
            "m2": format_invariant(inv, coords, "m2"),
            "text": format_invariant(inv, coords, "text")}

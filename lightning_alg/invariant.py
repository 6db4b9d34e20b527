"""An invariant: a polynomial over Q in the coefficient coordinates, with its provenance,
and the text / LaTeX / Macaulay2 / JSON renderings used by ``attngeom show``."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from lightning_alg.coordinates import CoordinateSystem


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


def ordered_terms(poly: sympy.Expr, coords: CoordinateSystem):
    """[(coefficient, [(label, exponent), ...]), ...] with the coordinates in their order."""
    gens = sorted(poly.free_symbols, key=lambda s: coords.symbol_index[s])
    if not gens:
        return [(sympy.Rational(poly), [])] if poly != 0 else []
    labels = [coords.labels[coords.symbol_index[g]] for g in gens]
    return [(coeff, [(lab, e) for lab, e in zip(labels, exps) if e])
            for exps, coeff in sympy.Poly(poly, *gens).terms()]


def format_polynomial(poly: sympy.Expr, coords: CoordinateSystem, fmt: str) -> str:
    """Render ``poly`` in 'text' (as the paper prints), 'latex' or 'm2' (Macaulay2) syntax."""
    with_row = coords.with_row
    pieces = []
    for coeff, factors in ordered_terms(poly, coords):
        if fmt == "m2":
            monomial = "*".join(lab.m2(with_row) + (f"^{e}" if e > 1 else "") for lab, e in factors)
            joiner = "*"
        elif fmt == "latex":
            monomial = " ".join(lab.text(with_row) + (f"^{{{e}}}" if e > 1 else "") for lab, e in factors)
            joiner = "\\,"
        else:
            monomial = " ".join(lab.text(with_row) + (f"^{e}" if e > 1 else "") for lab, e in factors)
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
    out = ("-" if first_sign == "-" else "") + first
    for sign, body in pieces[1:]:
        out += f" {sign} {body}"
    return out


def invariant_json(inv: Invariant, coords: CoordinateSystem) -> dict:
    return {"family": inv.family, "source": inv.source, "degree": inv.degree,
            "indices": {k: (list(v) if isinstance(v, tuple) else v) for k, v in inv.indices.items()},
            "m2": format_polynomial(inv.poly, coords, "m2"),
            "text": format_polynomial(inv.poly, coords, "text")}

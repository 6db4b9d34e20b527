"""The rule "generic parameters" as a test (issue 48; the charter: "never kappa = 1, c = 1,
unit amplitudes or coordinate lines unless the claim is about them").

At an identity value a factor or an exponent on a parameter is invisible: a claim that
checks beta = softmax(-K / kappa) only at kappa = 1 holds just as well for a paper-side
formula softmax(-K / kappa^2), and one that checks K(0) = (sum_l a_l)^2 det only at a_l = 1
holds for (sum_l a_l^2)^2 det.  So every registered claim's defaults (``Param.default``,
after the claim's ``validate`` fills the derived ones) and every paper example
(``claim.examples``, the parameter sets of the committed certificates) are read here, and a
*scale-like* parameter at its identity value fails the test, unless the claim declares why
it is about that value in ``Claim.identity_values`` (parameter name -> reason;
:mod:`attngeom.core.claim`; read only here, it changes no output).

The scale-like parameters, taken from every ``Param(`` of the registry (the test below fails
when a new text parameter is in neither list, so each new one is decided):

===============  =======================================================  ================
name             what (claims)                                            identity value
===============  =======================================================  ================
kappa            attention temperature of GT eq 13 (gt-*)                 1
coupling         c = sigma^2 tau of GT's Dirac limit (gt-dirac-limit)     1
curvature        c of the Poincare ball B_c^d (RGT)                       |c| = 1
radius           geodesic radius of the sampled points (RGT)              1
eta              step size of RGT Algorithm 1                             1
lr               learning rate of Riemannian SGD (RGT)                    1
distortion       distortion bound D of RGT Thm 3.4                        1
amplitudes       layer amplitudes a_l of GEC §3.3                         all 1, or all equal (L > 1)
sigma            an explicit covariance of every GT belief                the identity matrix
point            a point of the Poincare ball (RGT)                       the origin
temperature,     (no claim has them yet; listed so that a new one is      1
scale, beta       checked from the start)
===============  =======================================================  ================

Not scale-like (``NOT_SCALE_LIKE``, with the reason): indices, sizes, trees, variants and
choices, psi (an expression), and eps (a target distortion 1 + eps whose identity 0 the
claims forbid).  The integer sizes of ADM / HMK (d, t, a, ...) are not scales: out of
scope (no lightning claim has a weight parameter).
"""

from __future__ import annotations

import copy
import dataclasses
from fractions import Fraction
from typing import Any

import pytest

from attngeom.core.errors import BadInput
from attngeom.registry import full_registry

#: Parameters whose value 1 (or the stated identity) hides a factor or exponent on them.
UNIT_SCALES = ("kappa", "coupling", "radius", "eta", "lr", "distortion", "temperature",
               "scale", "beta")
SCALE_LIKE = set(UNIT_SCALES) | {"curvature", "amplitudes", "sigma", "point"}

#: Text and list parameters that are not scales, and why.
NOT_SCALE_LIKE = {
    "context_indices": "indices", "target_indices": "indices", "factor_dims": "sizes",
    "d": "sizes", "a": "sizes", "line": "a line of integer vectors (its genericity is ADM's)",
    "skip": "a choice", "variant": "a choice", "covariance": "a choice",
    "key_norms": "a choice", "measure": "a choice", "results": "a data source",
    "tree": "a tree", "psi": "an expression, not a scale",
    "eps": "a target distortion 1 + eps; its identity 0 is excluded by the claims",
}

#: keys of an example that are the certificate's context, not the claim's parameters
CONTEXT_KEYS = ("method", "samples", "seed", "backend", "device")

REGISTRY = full_registry()


def _number(value: Any) -> Fraction | None:
    """An exact number from a parameter value (int, float, Fraction, or text such as '1/2',
    '0.7'), or None when it is not one."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Fraction(value) if not isinstance(value, str) else Fraction(value.strip())
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _numbers(text: Any, row: str = ",") -> list[Fraction] | None:
    if text is None:
        return None
    parts = [_number(x) for x in str(text).split(row) if x.strip()]
    return None if not parts or any(x is None for x in parts) else parts


def identity_reason(name: str, value: Any) -> str | None:
    """Why ``value`` is the identity value of the scale-like parameter ``name``, or None."""
    if name in UNIT_SCALES:
        return f"{name} = 1" if _number(value) == 1 else None
    if name == "curvature":
        number = _number(value)
        return "|curvature| = 1" if number is not None and abs(number) == 1 else None
    if name == "amplitudes":
        values = _numbers(value)
        if values and all(x == 1 for x in values):
            return "unit amplitudes"
        if values and len(values) > 1 and len(set(values)) == 1:
            return f"all amplitudes equal ({values[0]})"
        return None
    if name == "sigma":
        rows = [_numbers(r) for r in str(value).split(";")] if value is not None else None
        if rows and all(r is not None and len(r) == len(rows) for r in rows):
            if all(rows[i][j] == (i == j) for i in range(len(rows)) for j in range(len(rows))):
                return "identity covariance"
        return None
    if name == "point":
        values = _numbers(value)
        return "the origin" if values and all(x == 0 for x in values) else None
    return None


def parameter_sets(claim) -> list[tuple[str, dict]]:
    """('defaults', {}) and ('example k', example without its context keys)."""
    sets = [("defaults", {})]
    for k, example in enumerate(claim.examples):
        sets.append((f"example {k + 1} {example}", {n: v for n, v in example.items()
                                                     if n not in CONTEXT_KEYS}))
    return sets


def violations(claim) -> list[str]:
    """Every default / example of ``claim`` with an undeclared scale-like parameter at its
    identity value (the values after ``validate``: derived defaults count)."""
    found = []
    declared = getattr(claim, "identity_values", {}) or {}
    for label, raw in parameter_sets(claim):
        try:
            values = claim.resolve(raw)
        except BadInput as error:
            if raw or label != "defaults":             # an example must resolve
                found.append(f"{label}: does not resolve ({error})")
                continue
            # a required size (ADM's --d): the defaults as declared
            values = {p.name: p.default for p in claim.params}
        for name, value in values.items():
            if name not in SCALE_LIKE or name in declared:
                continue
            reason = identity_reason(name, value)
            if reason:
                found.append(f"{label}: {reason} (--{name.replace('_', '-')} {value})")
    return found


CLAIM_IDS = sorted(claim.id for claim in REGISTRY)


@pytest.mark.parametrize("claim_id", CLAIM_IDS)
def test_defaults_and_examples_are_generic(claim_id):
    claim = REGISTRY.get(claim_id)
    found = violations(claim)
    assert not found, (f"{claim_id}: a scale-like parameter at its identity value (a factor or "
                       f"exponent on it is invisible there); move it to a generic value or "
                       f"declare the claim's reason in identity_values:\n  " + "\n  ".join(found))


def test_every_text_parameter_is_classified():
    """A new str / list parameter must be put in SCALE_LIKE or NOT_SCALE_LIKE (with a reason)."""
    names = {p.name for claim in REGISTRY for p in claim.params if p.kind in ("str", "intlist")}
    unclassified = sorted(names - SCALE_LIKE - set(NOT_SCALE_LIKE))
    assert not unclassified, f"classify these parameters in {__name__}: {unclassified}"
    assert not SCALE_LIKE & set(NOT_SCALE_LIKE)


def test_declarations_name_parameters_with_reasons():
    for claim in REGISTRY:
        declared = getattr(claim, "identity_values", {}) or {}
        params = {p.name for p in claim.params}
        for name, reason in declared.items():
            assert name in params, f"{claim.id}: identity_values names {name!r}, not a parameter"
            assert isinstance(reason, str) and reason.strip(), f"{claim.id}: give a reason for {name}"


@pytest.mark.parametrize("name, value, expected", [
    ("kappa", 1.0, True), ("kappa", "0.7", False), ("curvature", "1", True),
    ("curvature", "-1", True), ("curvature", "1/2", False), ("amplitudes", "1", True),
    ("amplitudes", "1/2,1/2,1/2", True), ("amplitudes", "3/4,1/2,5/4", False),
    ("amplitudes", "1/2", False), ("sigma", "1,0;0,1", True), ("sigma", "2,1;1,2", False),
    ("point", "0,0", True), ("point", "0.3,-0.2", False), ("radius", "1", True),
    ("eta", "1.5", False), ("psi", "1", False),
])
def test_identity_values_are_recognised(name, value, expected):
    assert (identity_reason(name, value) is not None) is expected


def test_rule_has_teeth():
    """A claim moved back to kappa = 1 / unit amplitudes fails (checked on copies)."""
    for claim_id, param, old in (("gt-kl-attention", "kappa", "1"),
                                 ("depth-amplification", "amplitudes", "1")):
        claim = copy.copy(REGISTRY.get(claim_id))
        claim.params = tuple(dataclasses.replace(p, default=old) if p.name == param else p
                             for p in claim.params)
        assert any(v.startswith("defaults") for v in violations(claim)), claim_id

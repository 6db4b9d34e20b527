"""What the GEC claims share: their parameters, tolerances, the claim base class and the
helpers that sample points, build immersions and render verdicts and ``show`` output."""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import LimitedClaim
from attngeom.geometry_proofs.ops import SymbolicOps
from attngeom.geometry_proofs.riemann import Immersion, coordinates, vanishes_identically
from attngeom.core.claim import CheckContext, Param
from attngeom.core.errors import BadInput
from attngeom.core.expressions import MAX_TEXT_LENGTH, parse_rational
from attngeom.kernels.sampling import Sampler
from attngeom.core.verdict import Verdict, proved, refuted

AMBIENT = Param("ambient", "decoder dimension D of N(mu, I_D) (GEC)", default=3)
AFFINE_DIM = Param("k", "dimension k of the affine chart a + B phi (GEC Thm 3.1)", default=2)
DOMAIN_DIM = Param("domain_dim", "dimension d of the parameter domain U (GEC Lemma 3.5, "
                   "Thm 3.21)", default=2)
LAYERS = Param("layers", "number L of gated layers (GEC §3.3)", default=4)
#: The default layer amplitudes, repeated over the L layers: not all 1 and not all equal, so
#: that A_L = sum_l a_l is neither L nor L a_0 and a factor, exponent or index on a_l shows.
GENERIC_AMPLITUDES = ("3/4", "1/2", "5/4")
AMPLITUDES = Param("amplitudes", "layer amplitudes a_l > 0: one value for every layer or a "
                   "comma list, rationals allowed (1/2); default 3/4, 1/2, 5/4, 3/4, ... "
                   "(one per layer)", default=None, kind="str")
#: default psi: a cross term and unequal curvatures, so that D^2 psi(0) is not a multiple of
#: the identity (f_uv = 0 and f_uu = f_vv hide a wrong determinant)
PSI = Param("psi", "psi(u, v) of GEC Lemma 3.11-3.12, SymPy syntax, grad psi(0) = 0",
            default="1/2 + u**2/8 + u*v/16 + v**2/6", kind="str")
VARIANT = Param("variant", "printed: the statement as printed; corrected: the repaired one",
                default="printed", kind="str")

#: |K - 1| allowed for the sphere witness (the issue's target, float64 autodiff gives ~1e-12).
SPHERE_TOLERANCE = 1e-10
#: |K| / (|H|^2 / det g) below which a computed curvature is rounding noise.
FLAT_TOLERANCE = 1e-9
#: |K| / (|H|^2 / det g) above which a curvature is counted as nonzero.
NONZERO_MARGIN = 1e-6


# --------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------

#: Most points a numeric check evaluates (the jets are B x D x d x d float64 arrays).
MAX_SAMPLES = 100_000


def sample_count(context: CheckContext, default: int) -> int:
    count = context.samples or default
    if count > MAX_SAMPLES:
        raise BadInput(f"--samples {count} is more than a curvature check evaluates "
                       f"(at most {MAX_SAMPLES:,})")
    return count


class GECClaim(LimitedClaim):
    """A GEC claim (parameter limits as :class:`~attngeom.geometry_proofs.claim_support.LimitedClaim`)."""


def uniform_points(sampler: Sampler, count: int, low: float, high: float, dim: int = 2) -> np.ndarray:
    """``count`` seeded points uniform in the open box (low, high)^dim."""
    grid = 2 ** 52
    unit = (sampler.integers((count, dim), 0, grid - 1) + 0.5) / grid
    return low + (high - low) * unit


def named_immersion(name: str, function, dim: int = 2) -> Immersion:
    return Immersion(name, dim, function)


def symbolic_vector(function, dim: int = 2) -> tuple[list, tuple]:
    coords = coordinates(dim)
    return list(function(np.array(coords, dtype=object), SymbolicOps())), coords


def zero_differences(left, right) -> list[int]:
    """Indices where left - right is not identically 0 (exact, trig-aware; a nonzero value
    at a point when no canonical form exists)."""
    pairs = [sympy.sympify(a - b, strict=True) for a, b in zip(left, right)]
    symbols = sorted(set().union(*(p.free_symbols for p in pairs)), key=str)
    return [i for i, diff in enumerate(pairs) if not vanishes_identically(diff, symbols)]


def named_checks_verdict(checks: dict[str, bool], evidence: dict, summary: str,
                          counterexample: Callable[[list[str]], dict]) -> Verdict:
    """Exact checks by name: ``proved`` (``summary``) when all hold, else ``refuted`` at
    the first that fails; ``counterexample(failed)`` gets the names of all that fail."""
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        return refuted(method="symbolic", summary=f"fails: {failed[0]}", evidence=evidence,
                       counterexample=counterexample(failed))
    return proved(checked=len(checks), evidence=evidence, summary=summary)


def default_amplitudes(layers: int) -> str:
    """GENERIC_AMPLITUDES repeated over ``layers`` layers, as the comma list --amplitudes takes."""
    return ",".join(GENERIC_AMPLITUDES[l % len(GENERIC_AMPLITUDES)] for l in range(layers))


def fill_amplitudes(params: dict) -> None:
    """Set params["amplitudes"] to :func:`default_amplitudes` when it was not given."""
    if params.get("amplitudes") is None:
        params["amplitudes"] = default_amplitudes(params["layers"])


def parse_amplitudes(text: str, layers: int) -> list[Fraction]:
    if len(str(text)) > MAX_TEXT_LENGTH:
        raise BadInput(f"--amplitudes has {len(str(text)):,} characters; the limit is "
                       f"{MAX_TEXT_LENGTH:,}")
    values = [parse_rational(part, "--amplitudes") for part in str(text).split(",") if part.strip()]
    if len(values) == 1:
        values = values * layers
    if len(values) != layers:
        raise BadInput(f"--amplitudes gives {len(values)} values for {layers} layers; give one "
                       f"value or one per layer")
    return values


U_SYMBOL, V_SYMBOL = sympy.Symbol("u", real=True), sympy.Symbol("v", real=True)


def psi_facts(psi: sympy.Expr) -> dict:
    """grad psi(0) and det D^2 psi(0), exactly."""
    at0 = {U_SYMBOL: 0, V_SYMBOL: 0}
    gradient = [sympy.diff(psi, x).subs(at0) for x in (U_SYMBOL, V_SYMBOL)]
    hessian = sympy.hessian(psi, (U_SYMBOL, V_SYMBOL)).subs(at0)
    return {"gradient": gradient, "hessian": hessian, "det": hessian.det()}


def sampled_affine(sampler: Sampler, D: int, d: int):
    """A seeded integer affine map phi -> offset + slope phi, R^d -> R^D, with rank(slope) = d
    (the Y = a + B phi of GEC Lemma 3.5 and Thm 3.18)."""
    while True:
        slope = sampler.integers((D, d), -3, 3)
        if np.linalg.matrix_rank(slope) == d:
            return sampler.integers(D, -3, 3), slope

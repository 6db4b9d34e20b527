"""What the GT claims share: parameters, sampled systems, and the decision rule for
"printed formula against its reference at sampled points".

Decision rule (numeric): at every sampled point the relative error
|printed - reference| / |reference| (Frobenius) is computed; the claim is ``consistent``
when the largest is <= the tolerance, else ``refuted`` with the worst point as witness
(seed, sample index, the parameters, the printed value and the reference value), which
``attngeom verify`` re-creates from the same seed.  Tolerances: 1e-8 for float64
closed forms against autodiff (both are exact up to rounding; the observed errors are
1e-15 .. 1e-13, condition numbers of the sampled covariances are below 1e2), 1e-6 for
central finite differences (GT §2.4.4's own threshold; observed about 1e-10).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy

from attngeom.geometry_proofs.claim_support import LimitedClaim
from attngeom.geometry_proofs.gauge.beliefs import validate_covariance
from attngeom.geometry_proofs.gauge.free_energy import GaugeSystem, sample_system
from attngeom.geometry_proofs.gauge.transport import head_size
from attngeom.core.claim import CheckContext, Param
from attngeom.core.errors import BadInput
from attngeom.core.evidence import Bound
from attngeom.core.verdict import Verdict, consistent, proved, refuted

TOKENS = Param("tokens", "number N of agents (tokens), N >= 1 (GT)", default=3)
DIM = Param("dim", "belief dimension K of N(mu, Sigma) (GT)", default=4)
HEAD_DIM = Param("head_dim", "dimension n of the fundamental representation of SO(n); K = H n "
                 "(GT eqs 36-37; default n = K)", default=None)
#: default 0.7, not 1: at kappa = 1 a factor or exponent on kappa (-K / kappa^2, -K kappa) is invisible
KAPPA = Param("kappa", "attention temperature kappa > 0 of GT eq 13 (a number)", default="0.7", kind="str")
COVARIANCE = Param("covariance", "full or diagonal belief covariances (GT)", default="full", kind="str")
SIGMA = Param("sigma", "an explicit covariance for every belief, rows separated by ';' "
              "(e.g. '2,1;1,2'); must be symmetric positive definite", default=None, kind="str")
VARIANT = Param("variant", "printed: the statement as printed; corrected: the repaired one",
                default="printed", kind="str")

#: relative error allowed between a float64 closed form and autodiff (see module doc)
AUTODIFF_TOLERANCE = 1e-8
#: relative error allowed against central finite differences (GT §2.4.4)
FD_TOLERANCE = 1e-6
TOLERANCE_WHY = ("float64 closed form against float64 autodiff of the same smooth function: "
                 "both exact up to rounding, sampled covariances have condition number < 1e2")


def require_interacting_agents(claim_id: str, tokens: int) -> None:
    """BadInput for N = 1 in the numeric checks of a gradient that vanishes identically with
    one agent (beta_11 = 1 for every theta; F does not depend on the frames, K_ii = 0): the
    relative error against a zero reference has no scale, so no verdict is possible."""
    if tokens < 2:
        raise BadInput(f"{claim_id} --method numeric needs --tokens >= 2: with one agent beta = 1 and "
                       "the frames do not enter F, so the gradient is identically 0")


def parse_sigma(text: str) -> np.ndarray:
    """'a,b;c,d' -> [[a, b], [c, d]], validated SPD (BadInput otherwise)."""
    try:
        rows = [[float(x) for x in row.split(",")] for row in text.split(";")]
        matrix = np.array(rows, dtype=float)
    except ValueError:
        raise BadInput(f"--sigma must be rows of numbers like '2,1;1,2'; got {text!r}") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise BadInput(f"--sigma must be a square matrix; got shape {matrix.shape}")
    return validate_covariance(matrix, "--sigma")


class GaugeClaim(LimitedClaim):
    """A GT claim on sampled systems of N agents (parameters tokens, dim, head_dim, kappa,
    covariance, sigma when listed in ``params``)."""

    #: largest allowed values (time and memory of the checks)
    limits: dict[str, int] = {"tokens": 12, "dim": 24}
    #: default number of sampled points
    default_samples: int = 3

    def validate(self, params):
        super().validate(params)
        if "kappa" in params:
            try:
                params["kappa"] = float(params["kappa"])
            except (TypeError, ValueError):
                raise BadInput(f"--kappa must be a number; got {params['kappa']!r}") from None
            if not params["kappa"] > 0 or not np.isfinite(params["kappa"]):
                raise BadInput(f"--kappa must be > 0; got {params['kappa']}")
        if params.get("covariance", "full") not in ("full", "diagonal"):
            raise BadInput(f"--covariance is full or diagonal; got {params['covariance']!r}")
        if params.get("sigma") is not None:
            matrix = parse_sigma(params["sigma"])
            if "dim" in params and params["dim"] != DIM.default and params["dim"] != matrix.shape[0]:
                raise BadInput(f"--sigma is {matrix.shape[0]} x {matrix.shape[0]} but --dim is {params['dim']}")
            if "dim" in params:
                params["dim"] = matrix.shape[0]
        if "dim" in params:
            head_size(params["dim"], params.get("head_dim"))
        if "variant" in params and params["variant"] not in ("printed", "corrected"):
            raise BadInput(f"--variant for {self.id} is printed or corrected; got {params['variant']!r}")

    def auto_method(self, params):
        """``symbolic`` (SymPy, at K = 2) when --dim is 2 or the claim has no numeric check,
        else ``numeric`` (sampled points at the requested K)."""
        if "symbolic" in self.methods and (params.get("dim") == 2 or "numeric" not in self.methods):
            return "symbolic"
        return "numeric" if "numeric" in self.methods else self.methods[0]

    # -- sampled systems ---------------------------------------------------------------
    def sample_count(self, context: CheckContext) -> int:
        return context.samples or self.default_samples

    def systems(self, params, context: CheckContext, observed: bool = True) -> list[GaugeSystem]:
        """The sampled systems, one per sample, seeded from (seed, sample index)."""
        out = []
        for index in range(self.sample_count(context)):
            system = sample_system(context.sampler.spawn(index), params.get("tokens", 3), params["dim"],
                                   params.get("head_dim"), params.get("kappa", 1.0),
                                   params.get("covariance", "full") == "diagonal", observed)
            if params.get("sigma") is not None:
                system.Sigma = np.broadcast_to(parse_sigma(params["sigma"]), system.Sigma.shape).copy()
            out.append(system)
        return out

    # -- verdicts ----------------------------------------------------------------------
    def compare(self, rows: list[dict], *, tolerance: float, backend: str, device: str,
                holds: str, fails: str, why: str = TOLERANCE_WHY, context: CheckContext,
                method: str = "numeric", evidence: dict | None = None) -> Verdict:
        """``rows``: dicts with 'error' (relative), 'printed', 'reference' and locating keys
        (sample, agent, ...).  consistent if every error <= tolerance, else refuted at the
        worst row."""
        worst = worst_row(rows)
        errors = [r["error"] for r in rows]
        if worst["error"] > tolerance or not np.isfinite(worst["error"]):
            worst = witness_row(rows, tolerance)
            witness = {"seed": context.seed, **{k: _plain(v) for k, v in worst.items()}}
            largest = worst["error"] if not np.isfinite(worst["error"]) else max(errors)
            return refuted(method=method, counterexample=witness, checked=len(rows),
                           max_residual=float(largest), backend=backend, device=device,
                           summary=f"{fails} (relative error {worst['error']:.3g} > {tolerance:g} "
                                   f"at sample {worst.get('sample', 0)})",
                           evidence={"tolerance": tolerance, **(evidence or {})})
        return consistent(checked=len(rows), max_residual=float(max(errors)), tolerance=tolerance,
                          backend=backend, device=device,
                          summary=f"{holds} (within {tolerance:g})",
                          evidence={"why the tolerance": why, "largest error": Bound(max(errors), tolerance),
                                    **(evidence or {})})


#: errors within this relative distance of the largest count as tied for the witness.
WITNESS_TIE = 1e-9


def worst_row(rows: list[dict]) -> dict:
    """The witness among ``rows`` (dicts with 'error'): the first with a non-finite error,
    else the first whose error is within a relative ``WITNESS_TIE`` of the largest.  Errors
    that differ only by rounding (one quantity along a path on which it is constant, as
    beta along GT's Dirac path) then give the same witness on every machine and BLAS,
    not the row that the last bits favour."""
    for row in rows:
        if not np.isfinite(row["error"]):
            return row
    largest = max(row["error"] for row in rows)
    return next(row for row in rows if row["error"] >= largest * (1.0 - WITNESS_TIE))


#: A reference whose norm is below this fraction of the largest one counts as zero (the
#: floor of the relative errors, see :func:`attngeom.geometry_proofs.gauge.autodiff.relative_error`).
ZERO_REFERENCE = 1e-3


def witness_row(rows: list[dict], tolerance: float) -> dict:
    """The witness of a failed comparison: the worst failing row whose reference is not
    zero, when there is one (there the relative error compares two sizable gradients, the
    convincing case), else the worst row (:func:`worst_row`).  A zero reference (the
    gradient of K_ii, say) turns the relative error into a ratio to the floor."""
    scales = [_norm(row.get("reference")) for row in rows]
    top = max((x for x in scales if x is not None), default=None)
    telling = [row for row, scale in zip(rows, scales)
               if not row["error"] <= tolerance and scale is not None and top
               and scale > ZERO_REFERENCE * top]
    return worst_row(telling or rows)


def _norm(value) -> float | None:
    if isinstance(value, (np.ndarray, list, tuple, int, float, np.floating)):
        return float(np.linalg.norm(np.asarray(value, dtype=float)))
    return None


def symbolic_identity(differences: list[sympy.Expr], symbols: list[sympy.Symbol], *, holds: str,
                      fails: str, evidence: dict, witness_point: dict | None = None) -> Verdict:
    """``proved`` when every difference cancels to 0 (sympy.cancel of the rational
    function), else ``refuted`` with the first nonzero difference (as passed: the GT
    claims pass reference - formula) and its value at ``witness_point`` (exact)."""
    for index, difference in enumerate(differences):
        reduced = sympy.cancel(sympy.together(difference))
        if reduced != 0:
            point = witness_point or {s: sympy.Rational(k + 2, 3) for k, s in enumerate(symbols)}
            value = sympy.nsimplify(reduced.subs(point))
            return refuted(method="symbolic", summary=fails, evidence=evidence, counterexample={
                "entry": index, "difference": str(reduced),
                "at": {str(k): str(v) for k, v in point.items() if k in reduced.free_symbols},
                "value": str(value)})
    return proved(checked=len(differences), summary=holds, evidence=evidence)


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return np.round(value, 12).tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value



"""The curvature of GT's connection Omega_ij = exp(phi_i) exp(-phi_j) (GT eq 3, §5.0.6).

* ``gt-cocycle``: Omega_ij Omega_jk = Omega_ik.
* ``gt-holonomy``: the holonomy around every loop of tokens is the identity (the connection
  is flat).
* ``gt-curvature-minimization``: GT §5.0.6 hypothesizes that language "evolves gauge
  configurations that minimize connection curvature"; for GT's own connection the
  curvature is identically zero in the frames, so there is nothing for training to
  minimize: the check evaluates the curvature and its autodiff gradient at sampled frames.

Symbolic proofs use the Cayley chart g = (I - A)^{-1}(I + A) of SO(n) with generic A in
so(n) as polynomial data (numerators and denominators, :mod:`attngeom.geometry_proofs.gauge.holonomy`):
every loop's holonomy telescopes once the join M_b N_b at each token equals d_b^2 I, which
is expanded to zero.  Numeric checks use the matrix exponential of sampled frames.
"""

from __future__ import annotations

import numpy as np

from attngeom.geometry_proofs.claim_support import render_items
from attngeom.geometry_proofs.gauge import holonomy
from attngeom.geometry_proofs.gauge.autodiff import autodiff_backend, gradient
from attngeom.geometry_proofs.gauge.claim_base import DIM, TOKENS, GaugeClaim
from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.geometry_proofs.gauge.accelerated.kl_attention import so_dimension
from attngeom.core.verdict import consistent, proved, refuted

#: |Hol - I| for products of up to ~10 float64 orthogonal matrices of norm 1
HOLONOMY_TOLERANCE = 1e-12
#: the transport the checks evaluate; the mutation tests swap it
TRANSPORT = {"numeric": "pure-gauge", "symbolic": "pure-gauge"}
#: largest n of the symbolic join identity (n = 4 takes ~2 s)
SYMBOLIC_MAX_DIM = 4


def _transport(frames, n, be):
    if TRANSPORT["numeric"] == "pure-gauge":
        return holonomy.pure_gauge_transport(frames, n, be)
    return holonomy.exp_difference_transport(frames, n, be)


def _sample_frames(context, sample: int, tokens: int, n: int) -> np.ndarray:
    return context.sampler.spawn(sample).floats((tokens, so_dimension(n)), 0.7)


class _LoopClaim(GaugeClaim):
    """Shared: the symbolic join identity and numeric loop products."""

    limits = {"tokens": 64, "dim": 40}
    default_samples = 3

    def auto_method(self, params):
        return "symbolic" if params["dim"] <= 3 else "numeric"

    def check_symbolic(self, params, context):
        n = params["dim"]
        if n > SYMBOLIC_MAX_DIM:
            raise BadInput(f"{self.id} --method symbolic runs for --dim <= {SYMBOLIC_MAX_DIM} (use --method numeric)")
        frames, symbols = holonomy.cayley_frames(1, n)
        join = holonomy.symbolic_edge_join(frames[0], TRANSPORT["symbolic"])
        nonzero = [(index, entry) for index, entry in enumerate(join) if entry != 0]
        evidence = {"n": n, "chart": "g = (I - A)^{-1}(I + A) = N / d, g^{-1} = M / d, A generic in so(n)",
                    "identity": "M N = N M = d^2 I (expanded)", "symbols": len(symbols),
                    "entries": len(join)}
        if nonzero:
            index, entry = nonzero[0]
            return refuted(method="symbolic", summary=f"the join at a token is not scalar: {self.fails}",
                           evidence=evidence, counterexample={"entry": index, "value": str(entry)[:400]})
        return proved(checked=len(join), evidence=evidence,
                      summary=f"{self.holds} for every loop and every frame in the Cayley chart of SO({n}) "
                              "(each loop's holonomy telescopes: N_a (M_b N_b) ... M_a = prod d^2 I)")

    def loop_rows(self, params, context, loops_of):
        be = get_backend(context.backend, context.device)
        n, tokens = params["dim"], params["tokens"]
        rows = []
        for sample in range(self.sample_count(context)):
            frames = _sample_frames(context, sample, tokens, n)
            omega = be.to_numpy(_transport(be.asarray(frames), n, be))
            for loop in loops_of(context.sampler.spawn(1000 + sample), tokens):
                defect = np.abs(holonomy.loop_holonomy(omega, loop) - np.eye(n)).max()
                rows.append({"sample": sample, "loop": loop, "error": float(defect),
                             "printed": "I", "reference": "Hol", "frames": frames})
        return be, rows


class CocycleClaim(_LoopClaim):
    """GT eq (3): Omega_ij = exp(phi_i) exp(-phi_j) satisfies the cocycle identity
    Omega_ij Omega_jk = Omega_ik for all tokens i, j, k (equivalently, the holonomy around
    every triangle i -> j -> k -> i is I).  Symbolic (n <= 4): the join identity in the
    Cayley chart.  Numeric: every ordered triple of N tokens at sampled frames."""

    id = "gt-cocycle"
    source = "GT eq (3)"
    statement = "Omega_ij Omega_jk = Omega_ik for Omega_ij = exp(phi_i) exp(-phi_j)."
    params = (TOKENS, DIM)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 3}, {"dim": 20, "tokens": 6})
    holds = "Omega_ij Omega_jk = Omega_ik"
    fails = "Omega_ij Omega_jk != Omega_ik"

    def check_numeric(self, params, context):
        def triples(sampler, tokens):
            return [[i, j, k] for i in range(tokens) for j in range(tokens) for k in range(tokens)]
        be, rows = self.loop_rows(params, context, triples)
        return self.compare(rows, tolerance=HOLONOMY_TOLERANCE, backend=be.name, device=be.device,
                            context=context, holds=f"{self.holds} for every triple of tokens",
                            fails=self.fails, why="products of three float64 orthogonal matrices")

    def show(self, params, fmt="text", limit=None):
        return render_items([("eq 3", "Omega_ij = exp(phi_i) exp(-phi_j) = g_i g_j^{-1}"),
                       ("cocycle", "Omega_ij Omega_jk = g_i g_j^{-1} g_j g_k^{-1} = Omega_ik")], fmt)


class HolonomyClaim(_LoopClaim):
    """GT §5.0.6 speaks of the curvature of the transport between tokens.  For GT's
    connection Omega_ij = exp(phi_i) exp(-phi_j) the holonomy around every loop of tokens
    i_1 -> ... -> i_k -> i_1 is the identity: the connection is flat for every choice of
    frames.  Symbolic (n <= 4): the join identity in the Cayley chart.  Numeric: seeded
    random loops of length 2 .. 8 at sampled frames (the contrast connection
    exp(phi_i - phi_j) fails this check: see the mutation test)."""

    id = "gt-holonomy"
    source = "GT §5.0.6"
    statement = "The holonomy of Omega_ij = exp(phi_i) exp(-phi_j) around every loop of tokens is I (zero curvature)."
    params = (TOKENS, DIM)
    methods = ("symbolic", "numeric")
    examples = ({"dim": 2}, {"dim": 4, "method": "symbolic"}, {"dim": 20, "tokens": 8})
    holds = "the holonomy is I"
    fails = "the holonomy around a loop is not I"

    def check_numeric(self, params, context):
        def loops(sampler, tokens):
            return holonomy.random_loops(sampler, tokens, 40, 8)
        be, rows = self.loop_rows(params, context, loops)
        return self.compare(rows, tolerance=HOLONOMY_TOLERANCE, backend=be.name, device=be.device,
                            context=context, holds=f"{self.holds} around every sampled loop (length 2..8)",
                            fails=self.fails, why="products of up to 8 float64 orthogonal matrices")

    def show(self, params, fmt="text", limit=None):
        return render_items([("holonomy", "Omega_{i1 i2} Omega_{i2 i3} ... Omega_{ik i1} = g_i1 g_i2^{-1} g_i2 ... g_i1^{-1} = I"),
                       ("curvature", "0 for every frame configuration (pure gauge)")], fmt)


class CurvatureMinimizationClaim(GaugeClaim):
    """GT §5.0.6 (curvature minimization hypothesis): effective communication "evolves gauge
    configurations that minimize connection curvature"; GT suggests measuring the learned
    curvature.  Applied to GT's own connection, the hypothesis needs the curvature to be a
    non-constant function of the frames that training could lower.

    The check evaluates the discrete curvature C(phi) = sum_(i,j,k) |Omega_ij Omega_jk Omega_ki - I|_F^2
    over all ordered triangles (triangles generate every loop of the complete token graph)
    and its autodiff gradient with respect to the frames, at sampled frames.  If C and
    grad C vanish at every sample (to rounding), the claim is ``refuted``: the curvature
    of exp(phi_i) exp(-phi_j) is identically zero, so "curvature minimization" cannot be
    what training does with this connection (witness: the frames, C, |grad C|).  A curved
    connection (e.g. exp(phi_i - phi_j), the mutation test) makes it ``consistent``:
    C > 0 and a gradient step lowers it."""

    id = "gt-curvature-minimization"
    source = "GT §5.0.6"
    statement = ("Training can lower the curvature of the transport Omega_ij = exp(phi_i) exp(-phi_j) "
                 "(curvature minimization hypothesis).")
    params = (TOKENS, DIM)
    methods = ("numeric",)
    examples = ({"tokens": 4, "dim": 3}, {"tokens": 6, "dim": 20})
    limits = {"tokens": 16, "dim": 24}
    default_samples = 3

    def check_numeric(self, params, context):
        be = autodiff_backend(context)
        n, tokens = params["dim"], params["tokens"]
        tolerance = HOLONOMY_TOLERANCE * tokens ** 3
        parts, witness = [], None
        for sample in range(self.sample_count(context)):
            frames = _sample_frames(context, sample, tokens, n)
            curvature_of = lambda f: holonomy.triangle_curvature(_transport(f, n, be), be)
            value = float(be.to_numpy(curvature_of(be.asarray(frames))))
            (grad,) = gradient(be, curvature_of, frames)
            grad_norm = float(np.linalg.norm(grad))
            step = frames - 1e-3 * grad / max(grad_norm, 1e-300)
            lowered = float(be.to_numpy(curvature_of(be.asarray(step))))
            parts.append({"sample": sample, "curvature": value, "gradient_norm": grad_norm,
                          "after_step": lowered})
            if witness is None and value <= tolerance and grad_norm <= tolerance:
                witness = {"seed": context.seed, "sample": sample, "frames": np.round(frames, 12).tolist(),
                           "curvature": value, "gradient_norm": grad_norm}
        largest = max(max(p["curvature"], p["gradient_norm"]) for p in parts)
        evidence = {"samples": parts, "tolerance": tolerance, "transport": TRANSPORT["numeric"],
                    "implication": ("exp(phi_i) exp(-phi_j) is pure gauge: every holonomy is I, so its "
                                    "curvature cannot be minimized (it is zero for all frames); a hypothesis "
                                    "about curvature needs a connection that is not of this form")}
        if largest <= tolerance:
            return refuted(method="numeric", counterexample=witness, checked=len(parts), max_residual=largest,
                           backend=be.name, device=be.device, evidence=evidence,
                           summary=(f"the curvature of Omega_ij and its gradient vanish at every sample "
                                    f"(max {largest:.2g}): there is no curvature to minimize"))
        stuck = [p for p in parts if not (p["curvature"] > tolerance and p["after_step"] < p["curvature"])]
        if stuck:
            return refuted(method="numeric", counterexample={"seed": context.seed, **stuck[0]},
                           checked=len(parts), backend=be.name, device=be.device, evidence=evidence,
                           summary="at some sampled frames the curvature is zero or a gradient step does not lower it")
        ratio = max(p["after_step"] / p["curvature"] for p in parts)
        evidence["residual"] = "largest C(after a 1e-3 gradient step) / C(before); < 1 means lowered"
        return consistent(checked=len(parts), max_residual=ratio, tolerance=1.0, backend=be.name,
                          device=be.device, evidence=evidence,
                          summary=(f"the curvature is positive (up to {largest:.3g}) and a gradient step "
                                   "lowers it at every sample: curvature minimization is possible for this transport"))

    def show(self, params, fmt="text", limit=None):
        return render_items([("C(phi)", "sum_(i,j,k) |Omega_ij Omega_jk Omega_ki - I|_F^2"),
                       ("GT transport", "Omega_ij = exp(phi_i) exp(-phi_j): C = 0, grad C = 0 for all phi"),
                       ("curved contrast", "exp(phi_i - phi_j): C > 0 when the frames do not commute")], fmt)


CLAIMS = [CocycleClaim(), HolonomyClaim(), CurvatureMinimizationClaim()]

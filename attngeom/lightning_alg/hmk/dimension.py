"""Dimension of the neuromanifold: the printed formulas and the measured Jacobian rank (HMK).

Architecture.  A network has layers i = 1..l with dimensions d = (d_0, ..., d_l), attention
dimensions a = (a_1, ..., a_l) and sequence length t.  Layer i has Q_i, K_i of shape
a_i x d_{i-1} and V_i of shape d_i x d_{i-1}: A_i = K_i^T Q_i must act on R^{d_{i-1}} (HMK
Def 2 prints Q_i, K_i in R^{a_i x d_i}, which does not compose; see ``model.py``).  So the
network has P = sum_i d_{i-1} (2 a_i + d_i) parameters, while HMK eq (5) prints
sum_i d_i (2 a_i + d_{i-1}); the two differ by 2 sum_i a_i (d_i - d_{i-1}).

Formulas (alpha_i = min(a_i, d_{i-1}); delta the bottleneck width, d_i = delta for 0 < i < l):

* HMK Cor 3.3, eq (7), one layer: 2ad + dd' - a^2 - 1 if a <= d, else d^2 + dd' - 1.
* HMK Cor 3.8, eq (14), as printed: 2 alpha_1 d_0 - alpha_1^2 + delta (d_0 + d_l) - delta^2 - l
  + sum_{1 <= i <= l} (2 alpha_i delta - alpha_i^2).
* HMK eq (32), the dimension of the (A, V) parameter space: 2 alpha_1 d_0 - alpha_1^2
  + delta (d_0 + d_l) + (l - 2) delta^2 + sum_{1 < i <= l} (2 alpha_i delta - alpha_i^2).
* HMK eq (16) (Conjecture 3.10, softmax): eq (32) - (l - 1) delta^2.
* The proof of Cor 3.8 (App. A.7) subtracts (l - 1) delta^2 (Lemma 3.5) and l (Thm 3.7)
  from eq (32), which gives eq (16) - l: eq (14) as printed adds the layer-1 term
  2 alpha_1 delta - alpha_1^2 a second time (its sum should run over 1 < i <= l, as in eqs 16
  and 32).  :func:`deep_dimension_corrected` is that value.
* For l = 1 the hypothesis "d_i = delta for 0 < i < l" is empty and eqs (14), (16), (32)
  depend on delta; they count V_1's d_0 d_1 entries as delta (d_0 + d_1) - delta^2, which is
  right only for delta = min(d_0, d_1), the value used here.

Measurement.  The dimension is the generic rank of the Jacobian of (Q, K, V) -> phi, with
phi restricted to N inputs X (HMK §3.4's finite-sample approach; for polynomial maps the
restriction loses nothing once enough inputs are taken).  Exact: over F_p at random weights
and inputs (a certified lower bound); floating point: SVD with the rule of
:func:`attngeom.kernels.jacobian.numerical_rank`.  The known symmetries (:mod:`attngeom.lightning_alg.hmk.fibres`)
give the exact upper bound P - s; when the two meet the dimension is determined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from attngeom.kernels.backend import get_backend
from attngeom.core.errors import BadInput
from attngeom.kernels.jacobian import (NumericalRank, check_size, jacobian_float, jacobian_mod_p,
                              numerical_rank)
from attngeom.kernels.primefield import matmul_mod_p, rank_mod_p, rank_reaches_mod_p
from attngeom.kernels.sampling import DEFAULT_PRIME, Sampler
from attngeom.lightning_alg.hmk.fibres import symmetry_tangents
from attngeom.lightning_alg.model import (Layer, attention_matrix, deep_lightning_attention,
                                 softmax_attention)

#: HMK §3.4: the number of sampled inputs of the softmax experiment.
HMK_SOFTMAX_SAMPLES = 250
#: Exact ranks: the sampled Jacobian gets at least this many rows more than P.
EXTRA_ROWS = 8
#: Exact ranks: how often the number of inputs is doubled while the rank is below P - s.
DOUBLINGS = 3


@dataclass(frozen=True)
class Architecture:
    """d = (d_0, ..., d_l), a = (a_1, ..., a_l), sequence length t; lightning or softmax."""

    d: tuple
    a: tuple
    t: int
    softmax: bool = False

    def __post_init__(self):
        if len(self.d) != len(self.a) + 1 or not self.a:
            raise BadInput(f"a network with {len(self.a)} layer(s) needs {len(self.a) + 1} "
                           f"dimensions d_0..d_l; got d = {list(self.d)}")
        if min(self.d + self.a + (self.t,)) < 1:
            raise BadInput("all dimensions must be positive")

    @property
    def layers(self) -> int:
        return len(self.a)

    def alpha(self, i: int) -> int:
        """alpha_i = min(a_i, d_{i-1}), 1-based."""
        return min(self.a[i - 1], self.d[i - 1])

    def weight_shapes(self) -> list[tuple[int, int]]:
        """[Q_1, K_1, V_1, Q_2, ...]: Q_i, K_i are a_i x d_{i-1}, V_i is d_i x d_{i-1}."""
        out = []
        for i in range(1, self.layers + 1):
            out += [(self.a[i - 1], self.d[i - 1])] * 2 + [(self.d[i], self.d[i - 1])]
        return out

    @property
    def parameters(self) -> int:
        """P = sum_i d_{i-1} (2 a_i + d_i)."""
        return sum(r * c for r, c in self.weight_shapes())

    @property
    def delta(self) -> int | None:
        """The bottleneck width of HMK Lemma 3.5 / Cor 3.8 (None if the middle widths
        differ); min(d_0, d_1) for one layer."""
        if self.layers == 1:
            return min(self.d)
        middle = set(self.d[1:-1])
        return middle.pop() if len(middle) == 1 else None

    def bottleneck_violation(self) -> str | None:
        """Why d is not of HMK Cor 3.8's form (d_i = delta for 0 < i < l, d_0, d_l >= delta)."""
        delta = self.delta
        if delta is None:
            return f"the middle dimensions d_1..d_(l-1) must be equal; got {list(self.d)}"
        if self.d[0] < delta or self.d[-1] < delta:
            return f"d_0, d_l >= delta = {delta} is needed; got d = {list(self.d)}"
        return None

    def describe(self) -> dict:
        return {"layers": self.layers, "d": list(self.d), "a": list(self.a), "t": self.t,
                "softmax": self.softmax}

    @property
    def slug(self) -> str:
        """``d=3,3,3/a=2,2/t=3``: the name of this point's part in a grid's verdict."""
        return "/".join(f"{name}={','.join(map(str, value))}" for name, value in
                        (("d", self.d), ("a", self.a), ("t", (self.t,))))


def architecture(params: dict, softmax: bool = False) -> Architecture:
    """An Architecture from claim / CLI parameters ``layers``, ``d`` (one integer or
    d_0,...,d_l), ``a`` (one integer or a_1,...,a_l; default a_i = d_{i-1}), ``t``,
    ``dprime`` (d_l when ``d`` is one integer)."""
    d, a = tuple(params.get("d") or ()), params.get("a")
    layers, dprime, t = params.get("layers"), params.get("dprime"), params.get("t")
    if not d:
        raise BadInput("--d is required")
    if t is None:
        raise BadInput("--t is required")
    a = tuple(a) if a else None
    if layers is None:
        layers = len(d) - 1 if len(d) > 1 else (len(a) if a else 1)
    if len(d) == 1:
        d = (d[0],) * layers + (dprime if dprime is not None else d[0],)
    elif dprime is not None and dprime != d[-1]:
        raise BadInput(f"--dprime {dprime} contradicts d_l = {d[-1]} of --d")
    if len(d) != layers + 1:
        raise BadInput(f"--layers {layers} needs {layers + 1} dimensions in --d; got {len(d)}")
    if a is None:
        a = d[:-1]
    elif len(a) == 1:
        a = a * layers
    if len(a) != layers:
        raise BadInput(f"--layers {layers} needs one --a or {layers} of them; got {len(a)}")
    return Architecture(d, a, t, softmax)


# -- formulas --------------------------------------------------------------------------------
def eq5_parameters_printed(arch: Architecture) -> int:
    """HMK eq (5) as printed: sum_i d_i (2 a_i + d_{i-1})."""
    return sum(arch.d[i] * (2 * arch.a[i - 1] + arch.d[i - 1]) for i in range(1, arch.layers + 1))


def single_layer_dimension(d: int, dprime: int, a: int) -> int:
    """HMK Cor 3.3, eq (7)."""
    if a <= d:
        return 2 * a * d + d * dprime - a * a - 1
    return d * d + d * dprime - 1


def _first_layer_and_ends(arch: Architecture, delta: int) -> int:
    alpha1 = arch.alpha(1)
    return 2 * alpha1 * arch.d[0] - alpha1 ** 2 + delta * (arch.d[0] + arch.d[-1])


def _later_layers(arch: Architecture, delta: int, first: int) -> int:
    return sum(2 * arch.alpha(i) * delta - arch.alpha(i) ** 2 for i in range(first, arch.layers + 1))


def deep_dimension_printed(arch: Architecture, delta: int) -> int:
    """HMK Cor 3.8, eq (14), exactly as printed (sum over 1 <= i <= l)."""
    return _first_layer_and_ends(arch, delta) - delta ** 2 - arch.layers + _later_layers(arch, delta, 1)


def parameter_space_dimension(arch: Architecture, delta: int) -> int:
    """HMK eq (32): the dimension of the space of (A, V) with rank A_i <= a_i."""
    return (_first_layer_and_ends(arch, delta) + (arch.layers - 2) * delta ** 2
            + _later_layers(arch, delta, 2))


def softmax_dimension_printed(arch: Architecture, delta: int) -> int:
    """HMK eq (16) as printed (Conjecture 3.10)."""
    return _first_layer_and_ends(arch, delta) - delta ** 2 + _later_layers(arch, delta, 2)


def deep_dimension_corrected(arch: Architecture, delta: int) -> int:
    """eq (32) - (l - 1) delta^2 - l: App. A.7's own derivation (eq 14 with 1 < i <= l)."""
    return parameter_space_dimension(arch, delta) - (arch.layers - 1) * delta ** 2 - arch.layers


FORMULA_TEXT = {
    "eq7": "2ad + dd' - a^2 - 1 (a <= d), d^2 + dd' - 1 (a > d)",
    "eq14": "2α1·d0 - α1² + δ(d0 + dl) - δ² - l + Σ_{1≤i≤l} (2αi·δ - αi²)",
    "eq16": "2α1·d0 - α1² + δ(dl + d0) - δ² + Σ_{1<i≤l} (2αi·δ - αi²)",
    "eq32": "2α1·d0 - α1² + δ(d0 + dl) + (l-2)δ² + Σ_{1<i≤l} (2αi·δ - αi²)",
    "eq14-corrected": "2α1·d0 - α1² + δ(d0 + dl) - δ² - l + Σ_{1<i≤l} (2αi·δ - αi²)",
    "eq5": "Σ_i d_i (2a_i + d_{i-1})",
}


# -- the network as a map of its weights -------------------------------------------------------
def network_function(arch: Architecture):
    """func(weights, X, backend) -> phi_W(X) for weights [Q_1, K_1, V_1, ...] (HMK Def 2;
    softmax layers per HMK eq 15)."""
    def lightning(weights, X, backend):
        layers = [Layer(attention_matrix(weights[i], weights[i + 1]), weights[i + 2])
                  for i in range(0, len(weights), 3)]
        return deep_lightning_attention(X, layers)

    def softmax(weights, X, backend):
        out = X
        for i in range(0, len(weights), 3):
            out = softmax_attention(out, attention_matrix(weights[i], weights[i + 1]),
                                    weights[i + 2], backend)
        return out

    return softmax if arch.softmax else lightning


def sample_weights(arch: Architecture, sampler: Sampler, prime: int | None) -> list[np.ndarray]:
    """Uniform residues mod p, or normal floats with variance 1/d_{i-1}.

    The float scaling keeps the scores x^T A y of order one.  With unit-variance weights the
    softmax saturates (scores of order d) and the smallest nonzero singular value of the
    Figure 3 Jacobian falls to about 6e-7 sigma_1 at delta = 10: still clear in float64, lost
    in float32; with this scaling it stays above 3e-4 sigma_1 (docs/hmk.md).
    """
    if prime is not None:
        return [sampler.prime_field(shape, prime) for shape in arch.weight_shapes()]
    return [sampler.floats(shape, 1 / math.sqrt(shape[1])) for shape in arch.weight_shapes()]


def entry_degree(arch: Architecture) -> int:
    """A bound on the degree in (W, X) of a Jacobian entry of (Q, K, V) -> phi_W(X): layer i
    has degree 3 + 3 deg_{i-1} in the weights and 3^i in X; differentiating removes one."""
    weight_degree = 0
    for _ in range(arch.layers):
        weight_degree = 3 + 3 * weight_degree
    return weight_degree - 1 + 3 ** arch.layers


@dataclass
class RankMeasurement:
    """The measured rank of the Jacobian of (Q, K, V) -> phi at one random point.

    ``symmetry_rank`` s: rank of the symmetry tangents (None when too large to form), so
    P - s is an exact upper bound on the dimension; ``kernel_residual``: |J T^T| (0 over F_p;
    relative Frobenius norm in floating point) checks that the tangents are in the kernel.
    ``adaptive``: the number of inputs was doubled until the rank stopped growing.
    """

    rank: int
    parameters: int
    samples: int
    rows: int
    method: str
    symmetry_rank: int | None
    kernel_residual: float | None
    prime: int | None = None
    numerical: NumericalRank | None = None
    backend: str | None = None
    device: str | None = None
    attempts: list = field(default_factory=list)
    adaptive: bool = False

    @property
    def upper_bound(self) -> int | None:
        return None if self.symmetry_rank is None else self.parameters - self.symmetry_rank

    @property
    def ample(self) -> bool:
        """Whether a rank below the bound is trusted to be the map's, not the sample's: the
        inputs were doubled until the rank stopped growing, or the Jacobian has >= 2P rows."""
        return self.adaptive or self.rows >= 2 * self.parameters

    @property
    def certified(self) -> bool:
        """Lower and upper bound meet, and the symmetries are in the kernel."""
        return self.upper_bound == self.rank and self.kernel_residual is not None \
            and self.kernel_residual <= (0 if self.method == "exact" else 1e-10)

    def evidence(self) -> dict:
        out = {"measured_rank": self.rank, "parameters": self.parameters,
               "samples": self.samples, "jacobian_rows": self.rows,
               "symmetry_orbit_dimension": self.symmetry_rank,
               "upper_bound_from_symmetries": self.upper_bound,
               "symmetries_in_kernel_residual": self.kernel_residual,
               "certified": self.certified}
        if self.prime is not None:
            out["prime"] = self.prime
            out["ranks_by_samples"] = self.attempts
        if self.numerical is not None:
            out.update(self.numerical.evidence())
        return out


def core_directions(arch: Architecture) -> tuple[int, int]:
    """(n, r): n directions of the weights that one input shows only through the core of
    its output, and the dimension r of what the core adds to the Jacobian per input.

    Layer i sees a change dA_i of its attention matrix only as Y^T dA_i Y, Y its input.
    When rank Y <= alpha_i (every layer i >= 2 of equal a_i, and layer 1 when a_1 >=
    min(d_0, t)), Y = B C with B of rank Y columns, and Y^T dA_i Y = C^T (B^T dA_i B) C:
    per input the change enters only through a small square matrix, and all of them end
    in the kappa x kappa core M of the output L M C (L = d_l x kappa, C = kappa x t, kappa
    the rank of the last layer's Y^T A_l Y).  So one input adds at most r = rank L * kappa
    of those directions; the changes of A_i are the tangent space of the rank-alpha_i
    matrices, n = sum of 2 alpha_i d_(i-1) - alpha_i^2 over those layers.
    """
    rank, directions = min(arch.d[0], arch.t), 0        # rank of the layer's input
    for i in range(1, arch.layers + 1):
        alpha = arch.alpha(i)
        if rank <= alpha:
            directions += 2 * alpha * arch.d[i - 1] - alpha ** 2
        kappa = min(rank, arch.a[i - 1])
        rank = min(kappa, arch.d[i])
    return directions, rank * kappa


def initial_inputs(arch: Architecture) -> int:
    """The number of inputs the exact rank starts with.

    At least (P + EXTRA_ROWS) / (d_l t), so that the Jacobian has more rows than P, and
    enough for the :func:`core_directions`, which one input shows only r at a time: n / r
    inputs and one more.  The second count is why a first attempt reaches the symmetry
    bound for deep networks: at Figure 3's t = 3, a = 2, the rows-only count fell short from
    l = 2, delta = 12 on (14 inputs at delta = 16, where 16 are needed), while n / r + 1
    is the least sufficient number or one above it at delta = 4..20, l = 2..4.  It is a
    measured law, not a theorem; :func:`measure_exact` doubles the inputs when it is short.
    """
    count = math.ceil((arch.parameters + EXTRA_ROWS) / (arch.d[-1] * arch.t))
    directions, per_input = core_directions(arch)
    if directions:
        count = max(count, math.ceil(directions / per_input) + 1)
    return count


def _inputs(arch: Architecture, sampler: Sampler, count: int, prime: int | None) -> np.ndarray:
    shape = (count, arch.d[0], arch.t)
    return sampler.prime_field(shape, prime) if prime is not None else sampler.floats(shape)


def measure_exact(arch: Architecture, sampler: Sampler, samples: int | None = None,
                  prime: int = DEFAULT_PRIME) -> RankMeasurement:
    """Rank over F_p of the Jacobian at random weights and inputs.

    Without ``samples`` the number of inputs starts at :func:`initial_inputs` and doubles
    (at most DOUBLINGS times) while the rank stays below the symmetry bound P - s and grows;
    each doubling adds fresh inputs to those already taken, so only the new Jacobian rows are
    computed.  Whether the rank meets the bound is first decided on a (P - s) x (P - s)
    sketch (:func:`attngeom.kernels.primefield.rank_reaches_mod_p`, exact when it says yes); the
    Jacobian itself is ranked only when the sketch does not reach the bound.
    """
    if arch.softmax:
        raise BadInput("softmax attention is not polynomial: no exact Jacobian over F_p; "
                       "use --method numeric")
    # the first attempt's Jacobian, refused before any work when it would not fit
    check_size((samples or initial_inputs(arch)) * arch.d[-1] * arch.t, arch.parameters)
    weights = sample_weights(arch, sampler.spawn(1), prime)
    tangents = symmetry_tangents(weights, lambda x: (-x) % prime, rescaling=True)
    return rank_by_doubling(network_function(arch), weights, tangents, arch.parameters,
                            samples or initial_inputs(arch), lambda s, n: _inputs(arch, s, n, prime),
                            sampler, bool(samples), prime)


def rank_by_doubling(func, weights, tangents, parameters: int, count: int, draw_inputs,
                     sampler: Sampler, fixed: bool, prime: int) -> RankMeasurement:
    """The exact rank of the Jacobian of W -> (func(W, X_1), ..., func(W, X_N)) at
    ``weights``, with ``count`` inputs from ``draw_inputs(sampler, n)``, doubled (at most
    DOUBLINGS times, unless ``fixed``) while the rank is below P - rank(tangents) and grows;
    ``tangents`` (rows, or None) are symmetry directions, checked to lie in the kernel."""
    sym_rank = None if tangents is None else rank_mod_p(tangents, prime)
    bound = None if sym_rank is None else parameters - sym_rank
    attempts, blocks, taken = [], [], 0
    for attempt in range(DOUBLINGS + 1):
        X = draw_inputs(sampler.spawn(2 + attempt), count - taken)
        blocks.append(jacobian_mod_p(func, weights, X, prime))
        taken = count
        J = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
        if bound is not None and rank_reaches_mod_p(J, bound, prime, sampler.spawn(0).spawn(attempt)):
            rank = bound
        else:
            rank = rank_mod_p(J, prime)
        attempts.append([count, rank])
        if fixed or rank == bound or (attempt and rank == attempts[-2][1]):
            break
        count *= 2
    residual = None
    if tangents is not None:
        residual = float(np.count_nonzero(matmul_mod_p(J, np.ascontiguousarray(tangents.T), prime)))
    return RankMeasurement(rank, parameters, count, J.shape[0], "exact", sym_rank,
                           residual, prime=prime, attempts=attempts, adaptive=not fixed)


def measure_numeric(arch: Architecture, sampler: Sampler, samples: int | None = None,
                    backend: str = "numpy", device: str = "cpu") -> RankMeasurement:
    """float64 Jacobian rank by SVD at N inputs (default HMK's N = 250)."""
    be = get_backend(backend, device)
    count = samples or HMK_SOFTMAX_SAMPLES
    check_size(count * arch.d[-1] * arch.t, arch.parameters, be)
    weights = sample_weights(arch, sampler.spawn(1), None)
    X = _inputs(arch, sampler.spawn(2), count, None)
    J = jacobian_float(network_function(arch), weights, X, be)
    rank = numerical_rank(J, be)
    tangents = symmetry_tangents(weights, np.negative, rescaling=not arch.softmax)
    sym_rank = residual = None
    if tangents is not None:
        sym = numerical_rank(tangents.T, be)
        sym_rank = sym.rank if sym.clear else None
        residual = float(np.linalg.norm(J @ tangents.T)
                         / (np.linalg.norm(J) * np.linalg.norm(tangents)))
    return RankMeasurement(rank.rank, arch.parameters, count, J.shape[0], "numeric", sym_rank,
                           residual, numerical=rank, backend=be.name, device=be.device)

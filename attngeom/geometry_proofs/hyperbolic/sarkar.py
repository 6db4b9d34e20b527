"""Sarkar's construction: any tree in the Poincare disk H^2 with distortion 1 + eps
(RGT Thm 3.4 (2), Thm 8.1), its all-pairs distortion at a stated precision, and the
precision (bits) it needs.

The construction (Sarkar 2011, "Low distortion Delaunay embedding of trees in hyperbolic
plane"): the root sits at the origin of the disk (curvature -1, c = 1); a node of degree
deg spreads its edges evenly, 2 pi / deg apart, the edge to its parent being one of them
(so the parent direction is excluded from the children's); every edge has hyperbolic
length tau.  Each node carries the disk isometry g_v (an SU(1,1) matrix
[[a, b], [conj(b), conj(a)]], z -> (a z + b) / (conj(b) z + conj(a))) that maps 0 to f(v)
and the direction pi to its parent: g_child = g_v R(pi + 2 pi k / deg) T_tau with the
rotation R and the translation T_tau along the real axis.  Composing matrices never
subtracts nearly equal numbers, so f(v) = b / conj(a) and 1 - |f(v)|^2 = 1 / |a|^2 come out
at full working precision however close to the boundary v lies.

Distortion of an embedding f (Sala et al. 2018's worst-case distortion):
D_wc = max_{u != v} rho(u, v) / min_{u != v} rho(u, v) with rho = d_H(f u, f v) / d_T(u, v);
the average distortion is the mean of |d_H / (tau d_T) - 1| over all pairs.

Precision: the stored embedding is the disk coordinates rounded to ``bits`` binary digits
after the point (fixed point, X = round(x 2^bits)).  All-pairs distances of the stored
points are then computed exactly in integers (|x - y|^2 and 1 - |x|^2 scaled by 4^bits),
and only the final logarithms are float64 (relative error below 1e-15, so distortions are
exact to about 1e-13): d = arcosh(1 + 2 |x - y|^2 / ((1 - |x|^2)(1 - |y|^2))) (RGT eq 10
at c = 1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import mpmath
import networkx as nx
import numpy as np

from attngeom.geometry_proofs.hyperbolic.trees import depths, parents, tree_distances
from attngeom.core.errors import BadInput

#: Bits kept beyond the largest hyperbolic radius (in bits) while building the embedding.
GUARD_BITS = 64
#: Largest tree whose all-pairs distortion is measured (n^2 / 2 pairs, int32 tree distances).
MAX_PAIR_NODES = 5000
#: A worst-case distortion is "stable" at a precision when it agrees with the one at the
#: reference precision (working precision) to this relative tolerance.
STABLE_RTOL = 1e-9


def _no_progress(iterable: Iterable, label: str = "", length: int | None = None) -> Iterable:
    return iterable


def sarkar_tau(max_degree: int, eps: float) -> float:
    """The edge scaling tau for distortion <= 1 + eps (this module's choice).

    With edges 2 pi / deg_max apart at least, a path of the tree turns by an angle
    alpha >= 2 pi / deg_max at each inner node; a hyperbolic triangle with sides a, b at
    angle alpha has third side c >= a + b - nu, nu = ln 2 - 2 ln sin(alpha / 2)
    (cosh c >= cosh(a + b) sin^2(alpha / 2)).  Then tau d_T >= d_H >= (tau - nu) d_T and the
    distortion is at most tau / (tau - nu) = 1 + eps for tau = nu (1 + eps) / eps.
    """
    if not eps > 0:
        raise BadInput(f"eps must be > 0; got {eps}")
    alpha = 2 * math.pi / max(max_degree, 2)
    nu = math.log(2.0) - 2.0 * math.log(math.sin(alpha / 2))
    return nu * (1 + eps) / eps


@dataclass
class TreeEmbedding:
    """A tree embedded in the Poincare disk (c = 1) by Sarkar's construction.

    ``a``, ``b``: the isometries g_v as mpmath complex numbers (node v at index v);
    ``points``: f(v) = b / conj(a) (mpc); ``boundary_gap``: 1 - |f(v)|^2 = 1 / |a|^2 (mpf);
    ``work_bits``: the working precision they were computed at.
    """

    tree: nx.Graph
    root: int
    tau: float
    eps: float | None
    a: list
    b: list
    work_bits: int
    variant: str = "sarkar"
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return self.tree.number_of_nodes()

    @property
    def height(self) -> int:
        return int(depths(self.tree, self.root).max())

    @property
    def max_radius(self) -> float:
        """The largest hyperbolic distance from the origin, tau * height."""
        return self.tau * self.height

    def coordinates(self) -> np.ndarray:
        """The disk coordinates as float64, shape=[n, 2] (for plots; not for distances)."""
        with mpmath.workprec(self.work_bits):
            return np.array([[float(p.real), float(p.imag)] for p in self.points()])

    def points(self) -> list:
        with mpmath.workprec(self.work_bits):
            return [b / mpmath.conj(a) for a, b in zip(self.a, self.b)]

    def fixed_point(self, bits: int) -> tuple[np.ndarray, np.ndarray]:
        """The coordinates rounded to ``bits`` fractional binary digits: integer arrays
        X, Y (dtype object, Python ints), x = X / 2^bits, shape=[n] each."""
        key = ("fixed", bits)
        if key not in self.cache:
            with mpmath.workprec(self.work_bits):
                scale = mpmath.ldexp(1, bits)
                xs, ys = [], []
                for p in self.points():
                    xs.append(int(mpmath.nint(p.real * scale)))
                    ys.append(int(mpmath.nint(p.imag * scale)))
            self.cache[key] = (np.array(xs, dtype=object), np.array(ys, dtype=object))
        return self.cache[key]

    def bits_to_separate(self) -> int:
        """log2 of 1 / min_v (1 - |f(v)|^2), rounded up: below this many fractional bits the
        deepest node rounds onto the boundary circle."""
        with mpmath.workprec(self.work_bits):
            smallest = min(1 / abs(a) ** 2 for a in self.a)
            return int(mpmath.ceil(-mpmath.log(smallest, 2)))


def _product(m1, m2):
    (a1, b1), (a2, b2) = m1, m2
    return (a1 * a2 + b1 * mpmath.conj(b2), a1 * b2 + b1 * mpmath.conj(a2))


def sarkar_embedding(tree: nx.Graph, eps: float | None = 0.1, *, root: int | None = None,
                     tau: float | None = None, variant: str = "sarkar") -> TreeEmbedding:
    """Embed ``tree`` in the Poincare disk by Sarkar's construction (RGT Thm 3.4 (2)).

    Parameters
    ----------
    tree : networkx.Graph on nodes 0..n-1 (see :mod:`attngeom.geometry_proofs.hyperbolic.trees`).
    eps : target distortion 1 + eps; sets tau = :func:`sarkar_tau` unless ``tau`` is given.
    root : the node placed at the origin (default ``tree.graph["root"]``).
    tau : the hyperbolic edge length (overrides ``eps``).

    Returns
    -------
    TreeEmbedding with the node isometries at working precision
    ceil(tau * height / ln 2) + GUARD_BITS bits.
    """
    root = tree.graph.get("root", 0) if root is None else root
    if tau is None:
        degree = max((d for _, d in tree.degree), default=0)
        tau = sarkar_tau(degree, eps)
    if not tau > 0:
        raise BadInput(f"tau must be > 0; got {tau}")
    parent = parents(tree, root)
    height = max(nx.single_source_shortest_path_length(tree, root).values())
    work_bits = int(math.ceil(tau * height / math.log(2))) + GUARD_BITS
    n = tree.number_of_nodes()
    a, b = [None] * n, [None] * n
    with mpmath.workprec(work_bits):
        half = mpmath.mpf(tau) / 2
        translation = (mpmath.mpc(mpmath.cosh(half)), mpmath.mpc(mpmath.sinh(half)))
        steps: dict[tuple[int, int, bool], tuple] = {}

        def step(k: int, deg: int, at_root: bool):
            # rotation by phi, then translation by tau along the new direction
            if (k, deg, at_root) not in steps:
                phi = 2 * mpmath.pi * k / deg + (0 if at_root else mpmath.pi)
                rotation = (mpmath.expj(phi / 2), mpmath.mpc(0))
                steps[k, deg, at_root] = _product(rotation, translation)
            return steps[k, deg, at_root]

        a[root], b[root] = mpmath.mpc(1), mpmath.mpc(0)
        for node in nx.bfs_tree(tree, root):
            children = [v for v in tree.neighbors(node) if v != parent[node]]
            deg = tree.degree(node)
            first = 0 if parent[node] is None else 1
            for k, child in enumerate(sorted(children), start=first):
                a[child], b[child] = _product((a[node], b[node]), step(k, deg, first == 0))
    return TreeEmbedding(tree, root, float(tau), eps, a, b, work_bits, variant)


def _log_int(values: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.log, 1, 1)(values).astype(np.float64)


def _arcosh_one_plus_exp(s: np.ndarray) -> np.ndarray:
    """arcosh(1 + e^s) for float64 s without overflow (s = ln(A - 1) of eq 10)."""
    out = np.empty_like(s)
    small = s < 0
    t = np.exp(s[small])
    out[small] = np.log1p(t + np.sqrt(t * t + 2 * t))
    big = ~small
    u = np.exp(-s[big])
    out[big] = s[big] + np.log(u + 1 + np.sqrt(1 + 2 * u))
    return out


@dataclass
class DistortionReport:
    """Worst-case and average distortion of a stored embedding over all pairs."""

    bits: int
    pairs: int
    worst: float
    average: float
    max_ratio: float
    min_ratio: float
    worst_pair_max: tuple[int, int]
    worst_pair_min: tuple[int, int]
    seconds: float
    valid: bool = True
    reason: str = ""

    def to_json(self) -> dict:
        return {"bits": self.bits, "pairs": self.pairs, "worst_distortion": self.worst,
                "average_distortion": self.average, "max_ratio": self.max_ratio,
                "min_ratio": self.min_ratio, "max_ratio_pair": list(self.worst_pair_max),
                "min_ratio_pair": list(self.worst_pair_min), "valid": self.valid,
                "reason": self.reason, "seconds": round(self.seconds, 3)}


def hyperbolic_distances_fixed_point(X: np.ndarray, Y: np.ndarray, bits: int,
                                     progress: Callable = _no_progress) -> tuple[list, np.ndarray]:
    """All-pairs disk distances (eq 10, c = 1) of the fixed-point points (X + iY) / 2^bits.

    Returns (rows, gaps): rows[i] = float64 distances from i to i+1..n-1 (shape=[n-1-i]),
    NaN where a point lies on or outside the unit circle; gaps = 1 - |x|^2 scaled by 4^bits
    (Python ints).  |x - y|^2 and 1 - |x|^2 are exact integers; only the logs are float64.
    """
    n = len(X)
    scale = 1 << (2 * bits)
    gaps = scale - (X * X + Y * Y)
    inside = np.array([g > 0 for g in gaps])
    log_gaps = np.full(n, np.nan)
    log_gaps[inside] = _log_int(gaps[inside])
    const = math.log(2.0) + 2 * bits * math.log(2.0)
    rows = []
    for i in progress(range(n - 1), label="all-pairs distances", length=n - 1):
        dx = X[i + 1:] - X[i]
        dy = Y[i + 1:] - Y[i]
        sq = dx * dx + dy * dy
        log_sq = _log_int_safe(sq)
        s = const + log_sq - log_gaps[i] - log_gaps[i + 1:]
        row = np.full(len(s), np.nan)
        ok = np.isfinite(s)
        row[ok] = _arcosh_one_plus_exp(s[ok])
        row[np.isneginf(s)] = 0.0          # two nodes rounded to one point
        rows.append(row)
    return rows, gaps


def _log_int_safe(values: np.ndarray) -> np.ndarray:
    out = np.full(len(values), -np.inf)
    nonzero = np.array([v != 0 for v in values], dtype=bool)
    out[nonzero] = _log_int(values[nonzero])
    return out


def measure_distortion(embedding: TreeEmbedding, bits: int | None = None,
                       progress: Callable = _no_progress) -> DistortionReport:
    """Worst-case and average distortion over all n (n - 1) / 2 pairs of the embedding stored
    at ``bits`` fractional bits (default: the working precision minus 8)."""
    start = time.perf_counter()
    bits = embedding.work_bits - 8 if bits is None else int(bits)
    if bits < 1:
        raise BadInput(f"bits must be >= 1; got {bits}")
    n = embedding.n
    if n > MAX_PAIR_NODES:
        raise BadInput(f"the all-pairs distortion is measured for trees of at most "
                       f"{MAX_PAIR_NODES} nodes; this one has {n}")
    if n < 2:
        return DistortionReport(bits, 0, 1.0, 0.0, 1.0, 1.0, (0, 0), (0, 0),
                                time.perf_counter() - start)
    key = ("report", bits)
    if key in embedding.cache:
        return embedding.cache[key]
    X, Y = embedding.fixed_point(bits)
    rows, _ = hyperbolic_distances_fixed_point(X, Y, bits, progress)
    d_tree = embedding.cache.get("d_tree")
    if d_tree is None:
        d_tree = embedding.cache["d_tree"] = tree_distances(embedding.tree)
    upper = np.triu_indices(n, 1)
    d_h = np.concatenate(rows)
    ratio = d_h / d_tree[upper]
    pairs = len(ratio)
    if not np.all(np.isfinite(ratio)) or ratio.min() <= 0:
        bad = int(np.flatnonzero(~(np.isfinite(ratio) & (ratio > 0)))[0])
        pair = (int(upper[0][bad]), int(upper[1][bad]))
        reason = (f"at {bits} bits node(s) {pair} round onto the boundary or onto one point")
        report = DistortionReport(bits, pairs, math.inf, math.inf, math.inf, 0.0, pair, pair,
                                  time.perf_counter() - start, valid=False, reason=reason)
    else:
        hi, lo = int(ratio.argmax()), int(ratio.argmin())
        worst = float(ratio[hi] / ratio[lo])
        average = float(np.mean(np.abs(ratio / embedding.tau - 1)))
        report = DistortionReport(
            bits, pairs, worst, average, float(ratio[hi]), float(ratio[lo]),
            (int(upper[0][hi]), int(upper[1][hi])), (int(upper[0][lo]), int(upper[1][lo])),
            time.perf_counter() - start)
    embedding.cache[key] = report
    return report


def bits_needed(embedding: TreeEmbedding, criterion: str = "stable", rtol: float = STABLE_RTOL,
                step: int = 4, progress: Callable = _no_progress) -> tuple[int, DistortionReport, list]:
    """The fewest fractional bits at which the stored embedding passes ``criterion``:

    ``"stable"``: its worst-case distortion equals, to relative ``rtol``, the one at the
    reference precision (working precision - 8 bits);
    ``"target"``: its worst-case distortion is at most 1 + eps (the embedding's eps).

    Searched by bisection on multiples of ``step`` between the bits that separate the
    deepest node from the boundary and the reference precision (the distortion need not be
    monotone in the bits; the trail of evaluations is returned).

    Returns (bits, report at those bits, [(bits, worst distortion), ...]).
    """
    if criterion not in ("stable", "target"):
        raise BadInput(f"criterion must be 'stable' or 'target'; got {criterion!r}")
    if criterion == "target" and embedding.eps is None:
        raise BadInput("criterion 'target' needs an embedding built for a given eps")
    reference = measure_distortion(embedding, None, progress)
    trail = [(reference.bits, reference.worst)]

    def passes(bits: int) -> bool:
        report = measure_distortion(embedding, bits)
        trail.append((bits, report.worst))
        if not report.valid:
            return False
        if criterion == "target":
            return report.worst <= 1 + embedding.eps
        return abs(report.worst - reference.worst) <= rtol * reference.worst

    lo = max(1, embedding.bits_to_separate() - step)
    hi = reference.bits
    while hi - lo > step:
        mid = lo + max(step, ((hi - lo) // 2 // step) * step)
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return hi, measure_distortion(embedding, hi), trail


def fixed_point_distance_arb(embedding: TreeEmbedding, bits: int, u: int, v: int,
                             prec: int | None = None):
    """d_H between the stored (fixed-point, ``bits``) points of nodes u and v as a
    python-flint ``arb`` ball (rigorous: the inputs are exact integers), eq (10) at c = 1."""
    import flint
    X, Y = embedding.fixed_point(bits)
    old = flint.ctx.prec
    flint.ctx.prec = prec or 4 * bits + 64
    try:
        scale = flint.arb(1 << (2 * bits))
        gap_u = scale - flint.arb(X[u] * X[u] + Y[u] * Y[u])
        gap_v = scale - flint.arb(X[v] * X[v] + Y[v] * Y[v])
        sq = flint.arb((X[u] - X[v]) ** 2 + (Y[u] - Y[v]) ** 2)
        return (1 + 2 * sq * scale / (gap_u * gap_v)).acosh()
    finally:
        flint.ctx.prec = old


def rigorous_worst(embedding: TreeEmbedding, report: DistortionReport) -> tuple[float, float]:
    """An enclosure [lower, upper] of rho(max pair) / rho(min pair) for the two extremal pairs
    of ``report`` (arb ball arithmetic on the exact stored coordinates)."""
    d_tree = embedding.cache["d_tree"]
    (a, b), (c, d) = report.worst_pair_max, report.worst_pair_min
    hi = fixed_point_distance_arb(embedding, report.bits, a, b) / int(d_tree[a, b])
    lo = fixed_point_distance_arb(embedding, report.bits, c, d) / int(d_tree[c, d])
    ball = hi / lo
    return float(ball.lower()), float(ball.upper())


def disk_distance_mp(x, y, c=1, prec: int = 256):
    """RGT eq (10) at high precision: d_c(x, y) = arcosh(1 + 2 c |x - y|^2 /
    ((1 - c|x|^2)(1 - c|y|^2))) / sqrt(c), evaluated in mpmath at ``prec`` bits.

    x, y: sequences of d coordinates (numbers or strings); returns an mpmath mpf.
    """
    with mpmath.workprec(prec):
        c = mpmath.mpf(c)
        xs = [mpmath.mpf(v) for v in x]
        ys = [mpmath.mpf(v) for v in y]
        nx_ = c * sum(v * v for v in xs)
        ny_ = c * sum(v * v for v in ys)
        if nx_ >= 1 or ny_ >= 1:
            raise BadInput("points must lie inside the ball |x| < 1/sqrt(c)")
        diff = c * sum((u - v) ** 2 for u, v in zip(xs, ys))
        return mpmath.acosh(1 + 2 * diff / ((1 - nx_) * (1 - ny_))) / mpmath.sqrt(c)


def distortion_by_depth(embedding: TreeEmbedding, bits: int | None = None) -> list[dict]:
    """For each depth h, the worst-case distortion over the pairs whose deeper node has
    depth h (ratios normalised by the global min ratio), for the notebook's plot."""
    bits = embedding.work_bits - 8 if bits is None else bits
    measure_distortion(embedding, bits)          # fills the tree distances
    X, Y = embedding.fixed_point(bits)
    rows, _ = hyperbolic_distances_fixed_point(X, Y, bits)
    n = embedding.n
    upper = np.triu_indices(n, 1)
    ratio = np.concatenate(rows) / embedding.cache["d_tree"][upper]
    depth = depths(embedding.tree, embedding.root)
    deeper = np.maximum(depth[upper[0]], depth[upper[1]])
    out = []
    for h in range(1, int(depth.max()) + 1):
        chosen = ratio[deeper == h]
        out.append({"depth": h, "pairs": int(len(chosen)),
                    "worst_distortion": float(chosen.max() / chosen.min()),
                    "max_ratio_over_tau": float(chosen.max() / embedding.tau),
                    "min_ratio_over_tau": float(chosen.min() / embedding.tau)})
    return out

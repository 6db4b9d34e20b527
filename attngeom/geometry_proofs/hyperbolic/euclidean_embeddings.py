"""Explicit Euclidean embeddings of trees and their exact distortion (RGT Thm 3.4 (1),
Thm 8.1 first bullet, §1).

RGT's wording: Thm 3.4 "Let T be a tree with n nodes and maximum depth L.  (1) Any
embedding f: T -> R^d with distortion D requires d = Omega(L / log D)"; Thm 8.1 "To embed a
tree of depth L with bounded distortion D: Euclidean space requires d = Omega(L)"; §1
"embedding a tree with n nodes requires Omega(sqrt n) dimensions to achieve bounded
distortion".  Here n = number of nodes, L = the largest depth below the root (the height),
D = distortion = max_{u != v} rho / min_{u != v} rho with rho = |f u - f v| / d_T(u, v).

Embeddings with integer coordinates have exact integer squared distances, so their
distortion is computed exactly (``Fraction``): D^2 = max(|f u - f v|^2 / d_T^2) /
min(|f u - f v|^2 / d_T^2).

What holds instead (checked by :func:`packing_dimension_bound`): if every node lies within
tree distance L of the root and f has distortion D, scale f so that it never contracts;
then the n images are >= 1 apart and lie in a ball of radius D L, so the disjoint balls of
radius 1/2 around them fit in a ball of radius D L + 1/2 and n <= (2 D L + 1)^d:
d >= ln n / ln(2 D L + 1).  For the complete r-ary tree of depth L this is
Omega(L log r / log(D L)); for the path it is below 1 (and d = 1, D = 1 is attained).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx
import numpy as np

from attngeom.geometry_proofs.hyperbolic.trees import depths, parents, tree_distances
from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler


@dataclass
class EuclideanDistortion:
    """Distortion of an embedding: exact ``squared`` = D^2 as a Fraction when the
    coordinates are integers (else None), and ``value`` = D as float."""

    dim: int
    nodes: int
    value: float
    squared: Fraction | None
    max_pair: tuple[int, int]
    min_pair: tuple[int, int]

    def to_json(self) -> dict:
        return {"dim": self.dim, "nodes": self.nodes, "distortion": self.value,
                "distortion_squared": None if self.squared is None else str(self.squared),
                "max_ratio_pair": list(self.max_pair), "min_ratio_pair": list(self.min_pair)}


def euclidean_distortion(coords: np.ndarray, tree: nx.Graph,
                         d_tree: np.ndarray | None = None) -> EuclideanDistortion:
    """Distortion of f: node i -> coords[i] (shape=[n, dim]) over all pairs of ``tree``;
    exact (integer arithmetic) when ``coords`` has an integer dtype."""
    coords = np.asarray(coords)
    n, dim = coords.shape
    if n < 2:
        return EuclideanDistortion(dim, n, 1.0, Fraction(1), (0, 0), (0, 0))
    d_tree = tree_distances(tree) if d_tree is None else d_tree
    exact = np.issubdtype(coords.dtype, np.integer)
    if exact:
        c = coords.astype(np.int64)
        norms = (c * c).sum(axis=1)
        sq = norms[:, None] + norms[None, :] - 2 * (c @ c.T)
    else:
        c = coords.astype(np.float64)
        norms = (c * c).sum(axis=1)
        sq = np.maximum(norms[:, None] + norms[None, :] - 2 * (c @ c.T), 0.0)
    upper = np.triu_indices(n, 1)
    sq = sq[upper]
    t2 = d_tree[upper].astype(np.int64) ** 2
    ratio = sq / t2
    if ratio.min() <= 0:
        k = int(ratio.argmin())
        pair = (int(upper[0][k]), int(upper[1][k]))
        return EuclideanDistortion(dim, n, math.inf, None, pair, pair)
    hi, lo = _exact_extreme(ratio, sq, t2, max), _exact_extreme(ratio, sq, t2, min)
    if exact:
        squared = Fraction(int(sq[hi]), int(t2[hi])) / Fraction(int(sq[lo]), int(t2[lo]))
        value = math.sqrt(squared)
    else:
        squared, value = None, math.sqrt(float(ratio[hi] / ratio[lo]))
    return EuclideanDistortion(dim, n, value, squared,
                               (int(upper[0][hi]), int(upper[1][hi])),
                               (int(upper[0][lo]), int(upper[1][lo])))


def _exact_extreme(ratio, sq, t2, pick) -> int:
    """Index of the max (pick=max) or min ratio sq / t2, decided exactly among the float
    near-ties."""
    target = ratio.max() if pick is max else ratio.min()
    near = np.flatnonzero(np.abs(ratio - target) <= 1e-12 * target)
    if np.issubdtype(np.asarray(sq).dtype, np.integer) and \
            float(sq[near].max()) * (float(t2[near].max()) + 1) < 2.0 ** 62:
        keys = sq[near].astype(np.int64) * (int(t2[near].max()) + 1) + t2[near]
        _, first = np.unique(keys, return_index=True)
    else:
        _, first = np.unique(np.stack([sq[near], t2[near]]), axis=1, return_index=True)
    return int(pick(near[first], key=lambda k: Fraction(int(sq[k]), int(t2[k]))))


def path_embedding(tree: nx.Graph) -> np.ndarray:
    """A path on nodes 0..n-1 (networkx path_graph order) on the integer line, shape=[n, 1]:
    an isometry, distortion exactly 1 in one dimension."""
    ends = [v for v, d in tree.degree if d <= 1]
    if max((d for _, d in tree.degree), default=0) > 2 or tree.number_of_nodes() < 1:
        raise BadInput("path_embedding needs a path")
    order = nx.single_source_shortest_path_length(tree, min(ends))
    return np.array([[order[v]] for v in range(tree.number_of_nodes())], dtype=np.int64)


def edge_indicator_embedding(tree: nx.Graph) -> np.ndarray:
    """Node v -> the 0/1 indicator of the edges on its root path, shape=[n, n-1] (integers):
    |f u - f v|^2 = d_T(u, v), so the distortion is sqrt(diameter) exactly (l_1 would be
    isometric)."""
    n = tree.number_of_nodes()
    parent = parents(tree)
    coords = np.zeros((n, max(n - 1, 1)), dtype=np.int64)
    edge_index = {}
    for v in nx.bfs_tree(tree, tree.graph.get("root", 0)):
        p = parent[v]
        if p is not None:
            edge_index[v] = len(edge_index)
            coords[v] = coords[p]
            coords[v, edge_index[v]] = 1
    return coords


def multiscale_ramp_embedding(tree: nx.Graph) -> np.ndarray:
    """Node v -> one block per scale s = 0 .. ceil(log2 L): in block s, the coordinate of
    the edge e above node w on v's root path is min(depth(v) - depth(w) + 1, 2^s) / 2^(s/2)
    (how far below e the node lies, capped at 2^s).  shape=[n, (n - 1) S], float64.  A
    Bourgain-type multi-scale embedding: on complete binary trees its measured distortion
    grows much more slowly than the sqrt(2 L) of :func:`edge_indicator_embedding` (the best
    possible is Theta(sqrt(log L)), Bourgain 1986)."""
    n = tree.number_of_nodes()
    parent, depth = parents(tree), depths(tree)
    scales = int(math.ceil(math.log2(max(int(depth.max()), 1)))) + 1
    below = np.zeros((n, n))
    for v in range(n):
        w = v
        while parent[w] is not None:
            below[v, w] = depth[v] - depth[w] + 1
            w = parent[w]
    blocks = [np.minimum(below, 2 ** s) / 2 ** (s / 2) for s in range(scales)]
    keep = [w for w in range(n) if parent[w] is not None]
    return np.hstack([block[:, keep] for block in blocks])


def star_code_embedding(tree: nx.Graph, dim: int, seed: int = 0) -> np.ndarray:
    """A star (centre = root) in R^dim: centre at 0, leaves at independent random sign
    vectors in {-1, +1}^dim (``Sampler(seed)``), shape=[n, dim] (integers).  With
    dim = O(log n) the leaves are nearly orthogonal and the distortion stays bounded."""
    root = tree.graph.get("root", 0)
    if any(d > 1 for v, d in tree.degree if v != root):
        raise BadInput("star_code_embedding needs a star rooted at its centre")
    coords = 2 * Sampler(seed).integers((tree.number_of_nodes(), dim), 0, 1) - 1
    coords[root] = 0
    return coords


def height(tree: nx.Graph) -> int:
    """L of RGT Thm 3.4: the largest depth below ``tree.graph['root']``."""
    return int(depths(tree).max()) if tree.number_of_nodes() > 1 else 0


def printed_dimension_bound(depth: int, distortion: float) -> float:
    """RGT Thm 3.4 (1) without its constant: L / ln D (+inf at D = 1)."""
    return math.inf if distortion <= 1 else depth / math.log(distortion)


def packing_dimension_bound(nodes: int, depth: int, distortion: float) -> float:
    """The dimension every embedding of a tree with n nodes and height L with distortion D
    needs: d >= ln n / ln(2 D L + 1) (volume packing; module docstring)."""
    if nodes <= 1:
        return 0.0
    return math.log(nodes) / math.log(2 * distortion * depth + 1)

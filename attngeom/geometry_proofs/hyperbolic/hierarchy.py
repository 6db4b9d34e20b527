"""Poincare embeddings of trees trained by Riemannian SGD (RGT Prop 9.2, eq 30).

Loss (Nickel & Kiela 2017, eq 6): for every related pair (u, v) of the transitive closure
of the tree (v an ancestor of u or u of v), with negatives N(u) = the nodes unrelated to u,

    L = sum_{(u, v)} -log( e^{-d(u, v)} / sum_{v' in N(u) + {v}} e^{-d(u, v')} ),

d the disk distance of RGT eq (10) (c = 1).  Full-batch Riemannian SGD (RGT eq 21,
:func:`attngeom.geometry_proofs.hyperbolic.poincare.rsgd_step`): x <- exp_x(-lr g^{-1} grad),
with the Euclidean gradient of d (Nickel & Kiela eq 4):

    d/dx d(x, y) = 4 / (b sqrt(g^2 - 1)) ((|y|^2 - 2<x, y> + 1) / a^2 x - y / a),
    a = 1 - |x|^2, b = 1 - |y|^2, g = 1 + 2 |x - y|^2 / (a b).

Prop 9.2 (eq 30) as printed: after convergence d(o, p_i) < d(o, c_i) for every
parent-child pair, o the origin.  The loss depends on distances only, so it is invariant
under every isometry of the disk: :func:`isometric_copy` moves a trained embedding so that
a chosen node sits at the origin, with the same loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from attngeom.geometry_proofs.hyperbolic import poincare
from attngeom.geometry_proofs.hyperbolic.trees import parents
from attngeom.kernels.sampling import Sampler


def closure_mask(tree: nx.Graph) -> np.ndarray:
    """related[u, v] = True when u is a proper ancestor or descendant of v (shape=[n, n])."""
    n = tree.number_of_nodes()
    parent = parents(tree)
    related = np.zeros((n, n), dtype=bool)
    for v in range(n):
        p = parent[v]
        while p is not None:
            related[v, p] = related[p, v] = True
            p = parent[p]
    return related


def _distance_and_gradient(x: np.ndarray):
    """All-pairs disk distances D (shape=[n, n]) and G[i, j] = d/dx_i d(x_i, x_j)
    (shape=[n, n, d]) for points x (shape=[n, d])."""
    sq = (x * x).sum(-1)
    a = 1 - sq
    diff = x[:, None, :] - x[None, :, :]
    dist2 = (diff * diff).sum(-1)
    gamma = 1 + 2 * dist2 / (a[:, None] * a[None, :])
    root = np.sqrt(np.maximum(gamma * gamma - 1, 1e-300))
    D = np.arccosh(np.maximum(gamma, 1.0))
    inner = x @ x.T
    coef = 4 / (a[None, :] * root)
    term = ((sq[None, :] - 2 * inner + 1) / a[:, None] ** 2)[..., None] * x[:, None, :] \
        - x[None, :, :] / a[:, None, None]
    G = coef[..., None] * term
    np.einsum("iik->ik", G)[:] = 0.0
    return D, G


def hierarchy_loss(x: np.ndarray, related: np.ndarray):
    """Nickel & Kiela's loss at points x (shape=[n, d]) and its Euclidean gradient."""
    n = len(x)
    D, G = _distance_and_gradient(x)
    negatives = ~related & ~np.eye(n, dtype=bool)
    loss = 0.0
    dL_dD = np.zeros((n, n))
    for u in range(n):
        positives = np.flatnonzero(related[u])
        if len(positives) == 0:
            continue
        neg = np.flatnonzero(negatives[u])
        # one softmax per positive v over {v} + N(u)
        logits = -np.concatenate([D[u, positives][:, None],
                                  np.broadcast_to(D[u, neg], (len(positives), len(neg)))], 1)
        top = logits.max(1, keepdims=True)
        weights = np.exp(logits - top)
        total = weights.sum(1, keepdims=True)
        loss += float(np.sum(-(logits[:, 0] - top[:, 0] - np.log(total[:, 0]))))
        prob = weights / total
        dL_dD[u, positives] += 1 - prob[:, 0]
        if len(neg):
            dL_dD[u, neg] -= prob[:, 1:].sum(0)
    # d D[u, v] / d x_u = G[u, v]; d D[u, v] / d x_v = G[v, u]
    grad = np.einsum("uv,uvk->uk", dL_dD, G) + np.einsum("uv,vuk->vk", dL_dD, G)
    return loss, grad


@dataclass
class HierarchyTraining:
    """A trained embedding and what eq (30) says about it."""

    points: np.ndarray
    loss: float
    gradient_norm: float
    epochs: int
    pairs: list
    satisfied: int
    violations: list

    @property
    def fraction(self) -> float:
        return self.satisfied / max(1, len(self.pairs))


def parent_child_pairs(tree: nx.Graph) -> list[tuple[int, int]]:
    """(parent, child) for every edge of ``tree`` hung from its root."""
    return [(p, v) for v, p in parents(tree).items() if p is not None]


def check_eq30(points: np.ndarray, pairs: list, origin: np.ndarray | None = None) -> list:
    """The pairs (p, c) with d(o, p) >= d(o, c) (violations of RGT eq 30), each with both
    distances; o = origin (default 0)."""
    o = np.zeros(points.shape[1]) if origin is None else origin
    d = poincare.distance(np.broadcast_to(o, points.shape), points, 1.0)
    return [{"parent": p, "child": c, "d_o_parent": float(d[p]), "d_o_child": float(d[c])}
            for p, c in pairs if not d[p] < d[c]]


def train_hierarchy(tree: nx.Graph, dim: int = 2, epochs: int = 400, lr: float = 0.1,
                    burn_in: int = 40, seed: int = 0) -> HierarchyTraining:
    """Train a Poincare embedding of ``tree`` (Nickel & Kiela's loss on the transitive
    closure, full-batch RSGD, initial points uniform in [-1e-3, 1e-3]^dim drawn by
    ``Sampler(seed)``, learning rate lr / 10 for the first ``burn_in`` epochs)."""
    related = closure_mask(tree)
    n = tree.number_of_nodes()
    rng = Sampler(seed).spawn(0)
    x = (rng.integers((n, dim), -1000, 1000) / 1e6).astype(np.float64)
    for epoch in range(epochs):
        _, grad = hierarchy_loss(x, related)
        step = lr / 10 if epoch < burn_in else lr
        x = np.asarray(poincare.rsgd_step(x, grad, step, 1.0))
    loss, grad = hierarchy_loss(x, related)
    pairs = parent_child_pairs(tree)
    violations = check_eq30(x, pairs)
    return HierarchyTraining(x, loss, riemannian_gradient_norm(x, grad), epochs, pairs,
                             len(pairs) - len(violations), violations)


def riemannian_gradient_norm(x: np.ndarray, grad: np.ndarray) -> float:
    """The metric norm of the Riemannian gradient of the loss on the product of disks:
    sqrt(sum_i |g^{-1} grad_i|_{g_{x_i}}^2) = sqrt(sum_i ((1 - |x_i|^2) / 2)^2 |grad_i|^2)
    (RGT eqs 8, 22); invariant under isometries, unlike the Euclidean norm."""
    rgrad = np.asarray(poincare.riemannian_gradient(x, grad, 1.0))
    lam = np.asarray(poincare.conformal_factor(x, 1.0))
    return float(np.sqrt(np.sum((lam * np.linalg.norm(rgrad, axis=-1)) ** 2)))


def clipped_nodes(points: np.ndarray, eps: float = poincare.PAPER_EPS) -> list[int]:
    """Nodes held on the clipping sphere |x| = 1 - eps of RGT eq (28) (to 1e-12)."""
    radius = np.linalg.norm(points, axis=-1)
    return [int(i) for i in np.flatnonzero(radius >= 1 - eps - 1e-12)]


def isometric_copy(points: np.ndarray, node: int) -> np.ndarray:
    """The disk isometry x -> (-p) (+) x (Mobius translation, RGT eq 9) applied to every
    point, p = points[node]: the same pairwise distances, with ``node`` at the origin."""
    p = np.broadcast_to(points[node], points.shape)
    return np.asarray(poincare.mobius_add(-p, points, 1.0))

"""The combinatorial construction of Sala, De Sa, Gu and Re (ICML 2018, "Representation
tradeoffs for hyperbolic embeddings", §3) and its comparison with this package's Sarkar
embedding (RGT Thm 3.4 (2) / Thm 8.1).

Sala et al.'s variant is Sarkar's construction (children spread evenly, the parent's
direction excluded: :func:`attngeom.geometry_proofs.hyperbolic.sarkar.sarkar_embedding`) with

* the root at a node of largest degree;
* the scaling tau = (1 + eps) / eps * nu, nu = -2 ln tan(beta / 2), beta = pi / (1.2 deg_max)
  (cones of half-angle beta around each edge; at least the length
  -2 ln tan(alpha / 2), alpha = 2 pi / deg_max - 2 beta, that separates neighbouring
  cones), the constants as in their released implementation (HazyResearch/hyperbolics,
  ``combinatorial/utilities.jl``, ``get_emb_par``; the paper's text was not at hand, so the
  paper's O(.) statements are taken in that concrete form);
* their precision estimate: a point at hyperbolic distance R from the origin has
  1 - |x| ~ 2 e^{-R}, so the construction, whose points reach R = tau * l on a longest
  path of l edges, needs about tau l / ln 2 = O((1/eps) l log deg_max) bits.

:func:`compare_constructions` embeds one tree both ways and measures worst-case and
average distortion and the bits each needs (:func:`~attngeom.geometry_proofs.hyperbolic.sarkar.bits_needed`).
"""

from __future__ import annotations

import math
import time

import networkx as nx

from attngeom.geometry_proofs.hyperbolic.sarkar import (TreeEmbedding, bits_needed, measure_distortion,
                                               sarkar_embedding, sarkar_tau)
from attngeom.core.errors import BadInput


def sala_tau(max_degree: int, eps: float) -> float:
    """Sala et al.'s scaling factor for distortion 1 + eps (module docstring)."""
    if not eps > 0:
        raise BadInput(f"eps must be > 0; got {eps}")
    degree = max(max_degree, 2)
    beta = math.pi / (1.2 * degree)
    nu = -2 * math.log(math.tan(beta / 2))
    alpha = 2 * math.pi / degree - 2 * beta
    separation = -2 * math.log(math.tan(alpha / 2))
    return max((1 + eps) / eps * nu, separation)


def sala_bits_estimate(tau: float, longest_path: int) -> float:
    """Sala et al.'s precision estimate tau * l / ln 2 bits for a longest path of l edges."""
    return tau * longest_path / math.log(2)


def sala_root(tree: nx.Graph) -> int:
    """Sala et al.'s root: the (smallest) node of largest degree."""
    return max(sorted(tree.nodes), key=tree.degree)


def sala_embedding(tree: nx.Graph, eps: float) -> TreeEmbedding:
    """Sala et al.'s combinatorial construction of ``tree`` for distortion 1 + eps."""
    degree = max((d for _, d in tree.degree), default=0)
    return sarkar_embedding(tree, eps, root=sala_root(tree), tau=sala_tau(degree, eps),
                            variant="sala")


def construction_row(embedding: TreeEmbedding, find_bits: bool = True) -> dict:
    """Measured figures of one embedding: tau, root, height, worst / average distortion at
    working precision, the bits it needs (when ``find_bits``: for a worst-case distortion
    <= 1 + eps, and for one stable to 1e-9) and the time."""
    start = time.perf_counter()
    report = measure_distortion(embedding)
    row = {"construction": embedding.variant, "root": embedding.root,
           "tau": embedding.tau, "height": embedding.height,
           "max_radius": embedding.max_radius, "work_bits": embedding.work_bits,
           "worst_distortion": report.worst, "average_distortion": report.average,
           "bits_at": report.bits}
    if find_bits:
        stable, _, _ = bits_needed(embedding, "stable")
        target, at_target, _ = bits_needed(embedding, "target")
        row.update(bits_stable=stable, bits_for_target=target,
                   worst_at_bits_for_target=at_target.worst,
                   bits_radius_estimate=math.ceil(embedding.max_radius / math.log(2)))
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def compare_constructions(tree: nx.Graph, eps: float, find_bits: bool = True) -> dict:
    """This package's Sarkar embedding against Sala et al.'s on the same tree.

    Returns {"nodes", "max_degree", "longest_path", "eps", "sarkar": row, "sala": row,
    "sala_bits_estimate"} with rows from :func:`construction_row`.
    """
    degree = max((d for _, d in tree.degree), default=0)
    longest = nx.diameter(tree) if tree.number_of_nodes() > 1 else 0
    ours = construction_row(sarkar_embedding(tree, eps), find_bits)
    theirs = construction_row(sala_embedding(tree, eps), find_bits)
    return {"nodes": tree.number_of_nodes(), "max_degree": degree, "longest_path": longest,
            "eps": eps, "sarkar": ours, "sala": theirs,
            "sarkar_tau_formula": sarkar_tau(degree, eps),
            "sala_bits_estimate": sala_bits_estimate(theirs["tau"], longest)}

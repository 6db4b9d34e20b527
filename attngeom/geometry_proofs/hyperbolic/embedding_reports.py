"""Reports on tree embeddings in H^2 (RGT Thm 3.4 (2), Thm 8.1): what
``attngeom embed-tree`` prints, the tables and the figure of the docs and the notebook.

* :func:`embed_tree`: one tree spec -> Sarkar (or Sala et al.) embedding, worst-case and
  average distortion over all pairs at the precision used, optionally the bits needed;
* :func:`distortion_table`: one row per tree spec (the notebook's table);
* :func:`precision_growth`: bits needed against the height of complete r-ary trees;
* :func:`plot_tree_embedding`: the embedded tree in the Poincare disk (matplotlib, Agg).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Iterable

from attngeom.geometry_proofs.hyperbolic.sala import sala_bits_estimate, sala_embedding
from attngeom.geometry_proofs.hyperbolic.sarkar import (TreeEmbedding, bits_needed, measure_distortion,
                                               rigorous_worst, sarkar_embedding)
from attngeom.geometry_proofs.hyperbolic.trees import parse_tree
from attngeom.core.errors import BadInput

CONSTRUCTIONS = ("sarkar", "sala")


def _no_progress(iterable: Iterable, label: str = "", length: int | None = None) -> Iterable:
    return iterable


#: Smallest eps: the construction's scale tau grows like 1/eps and the work with it
#: (balanced:2:6 takes 1.3 s at eps = 1e-3, 32 s at 1e-4; eps = 1e-100 ran without end).
MIN_EPS = 1e-4


def parse_eps(eps) -> float:
    """eps as a float in [MIN_EPS, inf), else BadInput."""
    try:
        value = float(eps)
    except (TypeError, ValueError):
        raise BadInput(f"--eps must be a number; got {eps!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise BadInput(f"--eps must be > 0 (distortion 1 + eps); got {eps}")
    if value < MIN_EPS:
        raise BadInput(f"--eps {eps} is below {MIN_EPS:g}: the embedding's scale grows like "
                       f"1/eps and its work with it")
    return value


def build_embedding(spec: str, eps, construction: str = "sarkar", dim: int = 2) -> TreeEmbedding:
    """Parse ``spec`` and embed it (Sarkar's or Sala et al.'s construction) in H^2."""
    if dim != 2:
        raise BadInput(f"--dim {dim} is not supported: the construction embeds in H^2 only "
                       "(RGT Thm 3.4 (2)); use --dim 2")
    if construction not in CONSTRUCTIONS:
        raise BadInput(f"construction must be one of {', '.join(CONSTRUCTIONS)}; got {construction!r}")
    eps = parse_eps(eps)
    tree = parse_tree(spec)
    return sarkar_embedding(tree, eps) if construction == "sarkar" else sala_embedding(tree, eps)


def embed_tree(spec: str, eps=0.1, dim: int = 2, construction: str = "sarkar",
               bits: int | None = None, find_bits: bool = False,
               progress: Callable = _no_progress) -> dict:
    """Embed the tree ``spec`` with distortion target 1 + eps and measure it over all pairs.

    bits: fractional bits of the stored coordinates (default: working precision - 8);
    find_bits: also search the fewest bits for a stable and for a <= 1 + eps distortion.
    Returns a JSON-ready dict (the figures ``attngeom embed-tree`` prints).
    """
    start = time.perf_counter()
    embedding = build_embedding(spec, eps, construction, dim)
    if bits is not None and bits < 1:
        raise BadInput(f"--bits must be >= 1; got {bits}")
    report = measure_distortion(embedding, bits, progress)
    tree = embedding.tree
    out = {"tree": spec, "nodes": embedding.n, "edges": tree.number_of_edges(),
           "max_degree": max((d for _, d in tree.degree), default=0),
           "root": embedding.root, "height": embedding.height, "construction": construction,
           "eps": embedding.eps, "dim": dim, "tau": embedding.tau,
           "max_radius": embedding.max_radius, "work_bits": embedding.work_bits,
           **report.to_json(),
           "holds": bool(report.valid and report.worst <= 1 + embedding.eps)}
    if report.valid and report.pairs:
        out["worst_distortion_enclosure"] = list(rigorous_worst(embedding, report))
    if find_bits:
        stable, _, _ = bits_needed(embedding, "stable")
        target, at_target, _ = bits_needed(embedding, "target")
        out.update(bits_stable=stable, bits_for_target=target,
                   worst_at_bits_for_target=at_target.worst)
    if construction == "sala":
        import networkx as nx
        longest = nx.diameter(tree) if embedding.n > 1 else 0
        out["sala_bits_estimate"] = sala_bits_estimate(embedding.tau, longest)
    out["seconds"] = round(time.perf_counter() - start, 3)
    out["_embedding"] = embedding
    return out


def distortion_table(specs: Iterable[str], eps=0.1, construction: str = "sarkar",
                     find_bits: bool = True) -> list[dict]:
    """One row per tree spec: nodes, height, tau, worst / average distortion, bits needed,
    seconds (for the notebook and docs)."""
    rows = []
    for spec in specs:
        row = embed_tree(spec, eps, construction=construction, find_bits=find_bits)
        row.pop("_embedding")
        rows.append(row)
    return rows


def precision_growth(arity: int = 2, depths: Iterable[int] = range(1, 7), eps=0.1) -> list[dict]:
    """Bits needed (for worst-case distortion <= 1 + eps) against the height h of the
    complete ``arity``-ary tree, for both constructions, with tau h / ln 2 beside them."""
    rows = []
    for depth in depths:
        spec = f"balanced:{arity}:{depth}"
        row = {"tree": spec}
        for construction in CONSTRUCTIONS:
            embedding = build_embedding(spec, eps, construction)
            target, report, _ = bits_needed(embedding, "target")
            row[construction] = {"tau": embedding.tau, "height": embedding.height,
                                 "bits_for_target": target, "worst": report.worst,
                                 "radius_bits": embedding.max_radius / math.log(2)}
        rows.append(row)
    return rows


def plot_tree_embedding(embedding: TreeEmbedding, path: str, title: str | None = None) -> str:
    """Draw the embedded tree in the Poincare disk (edges as chords) to ``path`` (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xy = embedding.coordinates()
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.add_patch(plt.Circle((0, 0), 1, fill=False, color="0.5"))
    for u, v in embedding.tree.edges:
        ax.plot(xy[[u, v], 0], xy[[u, v], 1], color="tab:blue", lw=0.6)
    ax.scatter(xy[:, 0], xy[:, 1], s=4, color="tab:red", zorder=3)
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"{embedding.tree.graph.get('spec', '')}  tau={embedding.tau:.2f}")
    try:
        fig.savefig(path, dpi=100, bbox_inches="tight")
    except OSError as error:
        raise BadInput(f"cannot write {path!r}: {error}") from None
    finally:
        plt.close(fig)
    return path

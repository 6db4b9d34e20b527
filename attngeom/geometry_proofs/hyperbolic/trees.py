"""Trees for the embedding claims of RGT (Thm 3.4, Thm 8.1, Prop 9.2): parsing, validation,
rooting and exact tree distances.

A tree is a :class:`networkx.Graph` on the nodes ``0 .. n-1`` with ``graph["root"]`` set
and ``graph["spec"]`` naming where it came from; the original labels of an edge-list file
are kept in the node attribute ``label``.

Specs (``attngeom embed-tree TREE``):

``path:N``            the path on N nodes;
``star:N``            the star on N nodes (one centre, N - 1 leaves);
``balanced:R:DEPTH``  the complete R-ary tree of depth DEPTH ((R^(DEPTH+1) - 1)/(R - 1) nodes);
``random:N[:SEED]``   a uniformly random labelled tree on N nodes (Pruefer sequence drawn
                      by ``attngeom.kernels.sampling.Sampler(SEED)``);
a file name           an edge list, one edge ``u v`` per line (``#`` starts a comment).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np

from attngeom.core.errors import BadInput
from attngeom.kernels.sampling import Sampler

#: Largest tree the parser builds (all-pairs work is quadratic in n).
MAX_NODES = 200_000
#: Longest integer of a spec (a seed included).
MAX_DIGITS = 30
#: Largest edge-list file read (bytes): MAX_NODES edges of long labels.
MAX_FILE_BYTES = 20_000_000

SPEC_HELP = "path:N, star:N, balanced:R:DEPTH, random:N[:SEED] or an edge-list file"


def _int(text: str, what: str, minimum: int) -> int:
    try:
        value = int(text) if len(text) <= MAX_DIGITS else None
    except ValueError:
        value = None
    if value is None:
        raise BadInput(f"{what} must be an integer of at most {MAX_DIGITS} digits; "
                       f"got {_shown(text)}")
    if value < minimum:
        raise BadInput(f"{what} must be at least {minimum}; got {value}")
    return value


def _nodes(n: int, spec: str) -> int:
    """``n``, or BadInput when a tree of ``n`` nodes is beyond MAX_NODES (checked before
    the tree is built)."""
    if n > MAX_NODES:
        raise BadInput(f"tree {_shown(spec)} has {n if n < 10**12 else 'more than 10^12'} "
                       f"nodes; at most {MAX_NODES}")
    return n


def balanced_size(r: int, depth: int) -> int:
    """Nodes of the complete r-ary tree of depth ``depth``, counted only up to just past
    MAX_NODES (so balanced:999999999:999999999 is not a billion-digit power)."""
    size, level = 0, 1
    for _ in range(depth + 1):
        size += level
        level *= r
        if size > MAX_NODES:
            break
    return size


def _is_file(spec: str) -> bool:
    """Whether ``spec`` names a file; False for names no file system takes (too long,
    a NUL byte), which Path.is_file raises on."""
    try:
        return Path(spec).is_file()
    except (OSError, ValueError):
        return False


def _shown(spec: str) -> str:
    return ascii(spec if len(spec) <= 60 else spec[:57] + "...")


def _finish(tree: nx.Graph, spec: str, root: int | None = None) -> nx.Graph:
    if tree.number_of_nodes() > MAX_NODES:
        raise BadInput(f"tree {spec!r} has {tree.number_of_nodes()} nodes; at most {MAX_NODES}")
    tree.graph["spec"] = spec
    tree.graph["root"] = tree_center(tree) if root is None else root
    return tree


def tree_center(tree: nx.Graph) -> int:
    """The smallest centre of ``tree`` (a node of least eccentricity: rooting there gives
    the least height, hence the least precision for a Sarkar embedding)."""
    if tree.number_of_nodes() == 1:
        return next(iter(tree.nodes))
    return min(nx.center(tree))


def random_tree(n: int, seed: int = 0) -> nx.Graph:
    """A uniformly random labelled tree on ``n`` nodes: a Pruefer sequence of length n - 2
    with entries drawn by ``Sampler(seed)``, decoded by networkx."""
    if n <= 2:
        return nx.path_graph(n)
    sequence = Sampler(seed).integers((n - 2,), 0, n - 1).tolist()
    return nx.from_prufer_sequence(sequence)


GENERATED_KINDS = ("path", "star", "balanced", "random")


def is_generated_spec(spec: str) -> bool:
    """Whether ``spec`` (as :func:`parse_tree` reads it, surrounding whitespace stripped)
    names a generated tree (path:N, star:N, balanced:R:DEPTH, random:N[:SEED]) and no file
    that happens to carry such a name."""
    text = str(spec).strip()
    return text.partition(":")[0] in GENERATED_KINDS and not _is_file(text)


def parse_tree(spec: str) -> nx.Graph:
    """The tree named by ``spec`` (see the module docstring); BadInput for anything else.

    Returns a networkx Graph on nodes 0..n-1 with ``graph["root"]`` and ``graph["spec"]``.
    """
    spec = str(spec).strip()
    kind, _, rest = spec.partition(":")
    fields = rest.split(":") if rest else []
    if kind in GENERATED_KINDS and not _is_file(spec):
        if kind == "path" and len(fields) == 1:
            n = _nodes(_int(fields[0], "path:N", 1), spec)
            return _finish(nx.path_graph(n), spec)
        if kind == "star" and len(fields) == 1:
            n = _nodes(_int(fields[0], "star:N", 1), spec)
            return _finish(nx.star_graph(n - 1), spec, root=0)
        if kind == "balanced" and len(fields) == 2:
            r = _int(fields[0], "balanced:R:DEPTH's R", 1)
            depth = _int(fields[1], "balanced:R:DEPTH's DEPTH", 0)
            _nodes(balanced_size(r, depth), spec)
            return _finish(nx.balanced_tree(r, depth), spec, root=0)
        if kind == "random" and len(fields) in (1, 2):
            n = _nodes(_int(fields[0], "random:N", 1), spec)
            seed = _int(fields[1], "random:N:SEED's SEED", 0) if len(fields) == 2 else 0
            return _finish(random_tree(n, seed), spec)
        raise BadInput(f"bad tree spec {_shown(spec)}; expected {SPEC_HELP}")
    if _is_file(spec):
        return read_edge_list(spec)
    raise BadInput(f"unknown tree {_shown(spec)}: not a file and not one of {SPEC_HELP}")


def read_edge_list(path: str | Path) -> nx.Graph:
    """An edge-list file (``u v`` per line, ``#`` comments) as a tree on 0..n-1; the file's
    labels are kept in the node attribute ``label``.  BadInput when it is not a tree."""
    edges = []
    try:
        size = Path(path).stat().st_size
        if size > MAX_FILE_BYTES:
            raise BadInput(f"edge list {str(path)!r} has {size:,} bytes; the limit is "
                           f"{MAX_FILE_BYTES:,}")
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read edge list {str(path)!r}: {error}") from None
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 2:
            raise BadInput(f"{path}:{number}: an edge needs two nodes; got {line.strip()!r}")
        edges.append((words[0], words[1]))
    graph = nx.Graph()
    graph.add_edges_from(edges)
    check_tree(graph, str(path), edges=len(edges))
    tree = nx.convert_node_labels_to_integers(graph, label_attribute="label")
    return _finish(tree, str(path))


def check_tree(graph: nx.Graph, name: str = "graph", edges: int | None = None) -> None:
    """BadInput unless ``graph`` is a tree (nonempty, connected, n - 1 distinct edges, no
    loops); ``edges`` is the number of edge lines read (to catch repeated edges)."""
    n = graph.number_of_nodes()
    if n == 0:
        raise BadInput(f"{name} has no edges: not a tree")
    loops = list(nx.selfloop_edges(graph))
    if loops:
        raise BadInput(f"{name} is not a tree: self-loop at {loops[0][0]!r}")
    if edges is not None and edges != graph.number_of_edges():
        raise BadInput(f"{name} is not a tree: an edge is listed twice")
    if not nx.is_connected(graph):
        parts = nx.number_connected_components(graph)
        raise BadInput(f"{name} is not a tree: it has {parts} connected components")
    if graph.number_of_edges() != n - 1:
        cycle = nx.find_cycle(graph)
        raise BadInput(f"{name} is not a tree: it has a cycle through {cycle[0][0]!r}")


def parents(tree: nx.Graph, root: int | None = None) -> dict[int, int | None]:
    """The parent of every node when ``tree`` hangs from ``root`` (BFS order of insertion)."""
    root = tree.graph.get("root", 0) if root is None else root
    out: dict[int, int | None] = {root: None}
    for parent, child in nx.bfs_edges(tree, root):
        out[child] = parent
    return out


def depths(tree: nx.Graph, root: int | None = None) -> np.ndarray:
    """Depth of every node below ``root``, shape=[n] (int64, node i at index i)."""
    root = tree.graph.get("root", 0) if root is None else root
    lengths = nx.single_source_shortest_path_length(tree, root)
    return np.array([lengths[v] for v in range(tree.number_of_nodes())], dtype=np.int64)


def tree_distances(tree: nx.Graph) -> np.ndarray:
    """All-pairs tree distances d_T, shape=[n, n] (int32; exact: breadth-first search in
    scipy.sparse.csgraph, node i at index i)."""
    import scipy.sparse.csgraph as csgraph
    n = tree.number_of_nodes()
    adjacency = nx.to_scipy_sparse_array(tree, nodelist=range(n), format="csr")
    return csgraph.shortest_path(adjacency, directed=False, unweighted=True).astype(np.int32)

"""Breadth-first search and unweighted shortest paths, in the order networkx visits nodes.

Every function here runs :func:`._kernels.bfs` (or :func:`._kernels.bidirectional_bfs`) over the
adjacency in networkx's order, so its answers are networkx's to the order of dict keys, the
choice among equally short paths and the parent of each tree node; generators stay generators
(networkx's errors for a missing node come when they are first advanced, as networkx's do).
"""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from ._nxver import _nxver
from .functions import _nx, networkx_function, node_set

INF = float("inf")


def _no_sort_neighbors(arguments):
    if arguments.get("sort_neighbors") is not None:
        return "sort_neighbors is not supported (a function of each node's neighbours)"
    return True


def search(G, sources, cutoff=None, reverse: bool = False):
    """BFS from the ids ``sources`` (expanding nodes at depth below ``cutoff``) over the
    out-neighbours, or the in-neighbours with ``reverse`` on a directed graph:
    ``(order, parent, depth)`` as :func:`._kernels.bfs` gives them."""
    side = G.pred if reverse else G.succ
    limit = INF if cutoff is None else float(cutoff)
    return K.bfs(side.indptr, side.indices, np.asarray(sources, np.int64), limit)


def _missing(G, node):
    """networkx's error where ``G.neighbors(node)`` finds no such node."""
    kind = "digraph" if G.is_directed() else "graph"
    return _nx().NetworkXError(f"The node {node} is not in the {kind}.")


def _tree(G, source, reverse, depth_limit):
    """The BFS tree of networkx's ``bfs_edges``: ``(children, parents)``, ids in discovery order."""
    if source not in G:
        raise _missing(G, source)
    order, parent, _ = search(G, [G.id_of(source)], depth_limit, reverse and G.is_directed())
    children = order[1:]
    return children, parent[children]


# -- networkx.algorithms.traversal.breadth_first_search --------------------------------------------
@networkx_function(_no_sort_neighbors, one_pass=True)
def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    children, parents = _tree(G, source, reverse, depth_limit)
    yield from zip(G.labels(parents), G.labels(children))


@networkx_function(_no_sort_neighbors, one_pass=True)
def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    T = _nx().DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, reverse=reverse, depth_limit=depth_limit))
    return T


@networkx_function(_no_sort_neighbors, one_pass=True)
def bfs_predecessors(G, source, depth_limit=None, sort_neighbors=None):
    children, parents = _tree(G, source, False, depth_limit)
    yield from zip(G.labels(children), G.labels(parents))


@networkx_function(_no_sort_neighbors, one_pass=True)
def bfs_successors(G, source, depth_limit=None, sort_neighbors=None):
    children, parents = _tree(G, source, False, depth_limit)
    if not len(children):
        yield (source, [])
        return
    cuts = np.flatnonzero(np.diff(parents)) + 1  # a parent's children are consecutive in discovery order
    heads = G.labels(parents[np.concatenate(([0], cuts))])
    yield from zip(heads, (G.labels(group) for group in np.split(children, cuts)))


@networkx_function(one_pass=True)
def bfs_layers(G, sources):
    if sources in G:
        sources = [sources]
    visited = set(sources)
    current = list(visited) if _nxver >= (3, 5) else list(sources)  # networkx 3.5 took the set's order
    for source in current:
        if source not in G:
            raise _nx().NetworkXError(f"The node {source} is not in the graph.")
    order, _, depth = search(G, G.ids_of(current))
    if not len(order):
        return
    cuts = np.flatnonzero(np.diff(depth[order])) + 1
    first, *rest = np.split(order, cuts)
    yield current  # networkx's own list of the sources
    for layer in rest:
        yield G.labels(layer)


@networkx_function(one_pass=True)
def descendants_at_distance(G, source, distance):
    if source not in G:
        raise _nx().NetworkXError(f"The node {source} is not in the graph.")
    if distance < 0:
        return set()
    order, _, depth = search(G, [G.id_of(source)], distance)
    return node_set(G, order[depth[order] == distance])


# -- networkx.algorithms.dag -----------------------------------------------------------------------
@networkx_function(one_pass=True)
def descendants(G, source):
    children, _ = _tree(G, source, False, None)
    return node_set(G, children)


@networkx_function(one_pass=True)
def ancestors(G, source):
    children, _ = _tree(G, source, True, None)
    return node_set(G, children)


# -- networkx.algorithms.shortest_paths.unweighted ------------------------------------------------
def lengths(G, source, cutoff, reverse=False, what="Source"):
    """``{node: hops}`` in discovery order (``single_source_shortest_path_length``'s dict)."""
    if source not in G:
        raise _nx().NodeNotFound(f"{what} {source} is not in G")
    order, _, depth = search(G, [G.id_of(source)], cutoff, reverse and G.is_directed())
    labels = G.labels(order)
    labels[0] = source  # networkx's dicts are keyed by the source as given
    return dict(zip(labels, depth[order].tolist()))


def paths(G, source, cutoff, reverse=False, what="Source", backwards=False):
    """``{node: path}`` in discovery order (``single_source_shortest_path``'s dict; with
    ``backwards`` each path runs towards ``source``, as ``single_target_shortest_path``'s)."""
    if source not in G:
        raise _nx().NodeNotFound(f"{what} {source} not in G")
    order, parent, _ = search(G, [G.id_of(source)], cutoff, reverse and G.is_directed())
    return _grow(G, source, order, parent, backwards)


def _grow(G, source, order, parent, backwards=False, sources=1):
    """Paths along ``parent`` for the nodes of ``order`` (the first ``sources`` of them roots,
    ``source`` the root's own label when there is one), each its parent's path plus itself."""
    labels = G.labels(order)
    ids = order.tolist()
    up = parent[order].tolist()
    by_id = {}
    out = {}
    for k, (i, v, p) in enumerate(zip(ids, labels, up)):
        if k < sources:
            path = [source if sources == 1 else v]
            key = source if sources == 1 else v
        else:
            path = [v] + by_id[p] if backwards else by_id[p] + [v]
            key = v
        by_id[i] = path
        out[key] = path
    return out


@networkx_function(one_pass=True)
def single_source_shortest_path_length(G, source, cutoff=None):
    return lengths(G, source, cutoff)


@networkx_function(one_pass=True)
def single_target_shortest_path_length(G, target, cutoff=None):
    found = lengths(G, target, cutoff, reverse=True, what="Target")
    if _nxver >= (3, 5):
        return found
    import warnings  # networkx 3.3 and 3.4: an iterator of pairs, with this warning
    warnings.warn("\n\nsingle_target_shortest_path_length will return a dict instead of\nan iterator in version 3.5",
                  FutureWarning, stacklevel=3)
    return iter(found.items())


@networkx_function()
def all_pairs_shortest_path_length(G, cutoff=None):
    for n in G.nodes:
        yield (n, lengths(G, n, cutoff))


@networkx_function(one_pass=True)
def single_source_shortest_path(G, source, cutoff=None):
    return paths(G, source, cutoff)


@networkx_function(one_pass=True)
def single_target_shortest_path(G, target, cutoff=None):
    return paths(G, target, cutoff, reverse=True, what="Target", backwards=True)


@networkx_function()
def all_pairs_shortest_path(G, cutoff=None):
    for n in G.nodes:
        yield (n, paths(G, n, cutoff))


def meet(G, source, target):
    """networkx's ``_bidirectional_pred_succ``: the path as a list of ids, or None."""
    s, t = G.id_of(source), G.id_of(target)
    pred, succ, w = K.bidirectional_bfs(G.succ.indptr, G.succ.indices, G.pred.indptr, G.pred.indices, s, t)
    if w == K.NONE:
        return None
    path = []
    while w != K.NONE:
        path.append(w)
        w = pred[w]
    path.reverse()
    w = succ[path[-1]]
    while w != K.NONE:
        path.append(w)
        w = succ[w]
    return path


def _ends(G, source, target):
    nx = _nx()
    if _nxver < (3, 4) and (source not in G or target not in G):
        raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")


@networkx_function(one_pass=True)
def bidirectional_shortest_path(G, source, target):
    _ends(G, source, target)
    path = meet(G, source, target)
    if path is None:
        raise _nx().NetworkXNoPath(f"No path between {source} and {target}.")
    return G.labels(path)


@networkx_function(one_pass=True)
def has_path(G, source, target):
    _ends(G, source, target)
    return meet(G, source, target) is not None


@networkx_function(one_pass=True)
def predecessor(G, source, target=None, cutoff=None, return_seen=None):
    if source not in G:
        raise _nx().NodeNotFound(f"Source {source} not in G")
    # networkx stops after the level where `cutoff <= level` (a falsy cutoff: never): depth 0 always expands
    limit = max(cutoff, 1) if cutoff else None
    order, _, depth = search(G, [G.id_of(source)], limit)
    expanded = (depth >= 0) & (depth < (INF if limit is None else limit))
    src, dst = G.arc_src, G.succ.indices
    tight = np.flatnonzero(expanded[src] & (depth[dst] == depth[src] + 1))
    rank = np.empty(len(G), np.int64)
    rank[order] = np.arange(len(order))
    tight = tight[np.argsort(rank[src[tight]], kind="stable")]  # by the BFS order of the tail, then adjacency
    tight = tight[np.argsort(rank[dst[tight]], kind="stable")]  # grouped by head, heads in discovery order
    counts = np.bincount(rank[dst[tight]], minlength=len(order))
    tails = G.labels(src[tight])
    labels = G.labels(order)
    labels[0] = source  # networkx's dicts are keyed by the source as given
    pred, at = {}, 0
    for v, c in zip(labels, counts.tolist()):
        pred[v] = tails[at:at + c]
        at += c
    seen = dict(zip(labels, depth[order].tolist()))
    if target is not None:
        if return_seen:
            return ([], -1) if target not in pred else (pred[target], seen[target])
        return [] if target not in pred else pred[target]
    return (pred, seen) if return_seen else pred

"""Isolates, self-loops, reciprocity and emptiness (networkx.algorithms.isolate,
algorithms.reciprocity, classes.function): counts over the converted arrays."""

from __future__ import annotations

import numpy as np

from .centrality import degrees
from .functions import _nx, networkx_function


def _isolated(G) -> np.ndarray:
    return degrees(G) == 0


@networkx_function(one_pass=True)
def isolates(G):
    return iter(G.labels(np.flatnonzero(_isolated(G))))


@networkx_function(one_pass=True)
def is_isolate(G, n):
    if n not in G:
        return G.graph.degree(n) == 0  # networkx's own answer (or error) for what is not a node
    return bool(degrees(G)[G.id_of(n)] == 0)


@networkx_function(one_pass=True)
def number_of_isolates(G):
    return int(_isolated(G).sum())


@networkx_function(one_pass=True)
def number_of_selfloops(G):
    return int(np.count_nonzero(G.arc_src == G.succ.indices))


@networkx_function(one_pass=True)
def is_empty(G):
    return not len(G.succ.indices)


def _reciprocated(G) -> np.ndarray:
    """For each arc u→v, whether v→u is an arc too (a self-loop is its own reverse)."""
    n = max(len(G), 1)
    src, dst = G.arc_src, G.succ.indices
    keys = np.sort(src * n + dst)
    back = dst * n + src
    at = np.searchsorted(keys, back)
    return (at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == back)


# networkx refuses undirected graphs and multigraphs before dispatching
@networkx_function(one_pass=True)
def overall_reciprocity(G):
    m = G.number_of_edges()
    if m == 0:
        raise _nx().NetworkXError("Not defined for empty graphs")
    if not G.is_directed():
        return 0 / m  # networkx: an undirected graph's edges are its undirected edges, none counted twice
    src, dst = G.arc_src, G.succ.indices
    both = int(np.count_nonzero(_reciprocated(G) & (src != dst)))
    return both / m


@networkx_function(one_pass=True)
def reciprocity(G, nodes=None):
    if nodes is None:
        return overall_reciprocity(G)
    if not G.is_directed():  # networkx asks an undirected graph for its predecessors
        raise AttributeError(f"'{type(G.graph).__name__}' object has no attribute 'predecessors'")
    n = len(G)
    both = np.bincount(G.arc_src[_reciprocated(G)], minlength=n)
    total = np.diff(G.succ.indptr) + np.bincount(G.succ.indices, minlength=n)

    def value(i):
        return None if total[i] == 0 else 2 * int(both[i]) / int(total[i])
    if nodes in G:
        r = value(G.id_of(nodes))
        if r is None:
            raise _nx().NetworkXError("Not defined for isolated nodes.")
        return r
    return {v: value(G.id_of(v)) for v in G.graph.nbunch_iter(nodes)}

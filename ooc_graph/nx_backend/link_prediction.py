"""Link prediction scores (networkx.algorithms.link_prediction): common neighbours of each pair by
merging sorted neighbour arrays, in batches, lazily as networkx's generators.

networkx sums ``1 / degree`` (resource allocation) and ``1 / log(degree)`` (Adamic-Adar) over a
set of common neighbours, in that set's order; the sums here run in node order, so they may
differ from networkx's in the last bit."""

from __future__ import annotations

import itertools

import numpy as np

from . import _kernels_structure as K
from .centrality import degrees
from .functions import _nx, networkx_function

BATCH = 4096


def _pairs(G, ebunch):
    """networkx's ``_apply_prediction``: every non-edge, or ``ebunch`` checked first (which, as in
    networkx, uses up an iterator ``ebunch``)."""
    nx = _nx()
    if ebunch is None:
        return nx.non_edges(G.graph)
    for u, v in ebunch:
        if u not in G:
            raise nx.NodeNotFound(f"Node {u} not in G.")
        if v not in G:
            raise nx.NodeNotFound(f"Node {v} not in G.")
    return ebunch


def _sorted_rows(G):
    order = np.lexsort((G.succ.indices, G.arc_src))
    return G.succ.indptr, G.succ.indices[order]


def _scores(G, ebunch, score, want=0):
    return _generate(G, iter(_pairs(G, ebunch)), score, want)  # the pairs are checked now, as networkx does


def _generate(G, pairs, score, want):
    indptr, indices = _sorted_rows(G)
    degree = degrees(G)
    while True:
        batch = list(itertools.islice(pairs, BATCH))
        if not batch:
            return
        us, vs = G.ids_of(u for u, _ in batch), G.ids_of(v for _, v in batch)
        count, union, total = K.common_neighbours(indptr, indices, degree, us, vs, want)
        values = score(us, vs, count, union, total, degree)
        yield from ((u, v, s) for (u, v), s in zip(batch, values))


@networkx_function()
def jaccard_coefficient(G, ebunch=None):
    def score(us, vs, count, union, total, degree):
        return [0 if b == 0 else a / b for a, b in zip(count.tolist(), union.tolist())]
    return _scores(G, ebunch, score)


@networkx_function()
def preferential_attachment(G, ebunch=None):
    def score(us, vs, count, union, total, degree):
        return (degree[us] * degree[vs]).tolist()
    return _scores(G, ebunch, score)


@networkx_function()
def resource_allocation_index(G, ebunch=None):
    def score(us, vs, count, union, total, degree):
        return [0 if c == 0 else t for c, t in zip(count.tolist(), total.tolist())]
    return _scores(G, ebunch, score, want=1)


@networkx_function()
def adamic_adar_index(G, ebunch=None):
    def score(us, vs, count, union, total, degree):
        if (count < 0).any():
            raise ZeroDivisionError("float division by zero")  # a common neighbour of degree 1: 1 / log(1)
        return [0 if c == 0 else t for c, t in zip(count.tolist(), total.tolist())]
    return _scores(G, ebunch, score, want=2)

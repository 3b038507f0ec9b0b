"""Triangles, clustering and transitivity (networkx.algorithms.cluster) on ooc_graph's
``triangle_count`` and ``lcc``."""

from __future__ import annotations

import numpy as np

import ooc_graph

from .functions import _options, networkx_function, undirected_unweighted


def per_node(G, nodes, values, zero=None):
    """networkx's ``nodes=`` convention: one node -> its value; an iterable -> a dict of those
    in the graph; None -> a dict of all."""
    def value(i):
        v = values[i]
        return zero if zero is not None and v == 0 else v
    if nodes is not None and nodes in G:
        return value(G.id_of(nodes))
    if nodes is None:
        return {v: value(i) for i, v in enumerate(G.nodes)}
    return {v: value(G.id_of(v)) for v in G.graph.nbunch_iter(nodes)}


def triangle_counts(G) -> np.ndarray:
    return ooc_graph.triangle_count(G.store(), **_options()).counts


@networkx_function()
def triangles(G, nodes=None):
    return per_node(G, nodes, triangle_counts(G).tolist())


@networkx_function(undirected_unweighted)
def clustering(G, nodes=None, weight=None):
    values = ooc_graph.lcc(G.store(), **_options()).values.tolist()
    return per_node(G, nodes, values, zero=0)  # networkx gives int 0 where there is no triangle


@networkx_function(undirected_unweighted)
def average_clustering(G, nodes=None, weight=None, count_zeros=True):
    c = clustering(G, nodes)
    c = list(c.values()) if isinstance(c, dict) else [c]
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


def _undirected(arguments):
    if arguments["G"].is_directed():
        return "directed graphs are not supported (networkx's transitivity then counts out-neighbours only)"
    return True


@networkx_function(_undirected)
def transitivity(G):
    if not len(G):
        return 0
    triangles = 2 * int(triangle_counts(G).sum())  # networkx counts each triangle at a node twice
    if triangles == 0:
        return 0
    loops = G.arc_src == G.succ.indices
    d = np.bincount(G.arc_src[~loops], minlength=len(G))  # neighbours other than the node itself
    return triangles / int((d * (d - 1)).sum())

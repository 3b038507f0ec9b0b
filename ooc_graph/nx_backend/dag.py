"""Topological order and longest paths of directed acyclic graphs (networkx.algorithms.dag), in
networkx's order: :func:`._kernels_structure.generations` removes nodes as networkx's Kahn search does."""

from __future__ import annotations

import numpy as np

from . import _kernels_structure as K
from .functions import _nx, networkx_function, numbers, weight_is_name


def _generations(G):
    nx = _nx()
    if not G.is_directed():
        raise nx.NetworkXError("Topological sort not defined on undirected graphs.")
    order, starts, left = K.generations(G.succ.indptr, G.succ.indices)
    for a, b in zip(starts[:-1].tolist(), starts[1:].tolist()):
        yield G.labels(order[a:b])
    if left:
        raise nx.NetworkXUnfeasible("Graph contains a cycle or graph changed during iteration")


@networkx_function(one_pass=True)
def topological_generations(G):
    yield from _generations(G)


@networkx_function(one_pass=True)
def topological_sort(G):
    for generation in _generations(G):
        yield from generation


@networkx_function(one_pass=True)
def is_directed_acyclic_graph(G):
    if not G.is_directed():
        return False
    return K.generations(G.succ.indptr, G.succ.indices)[2] == 0


def _longest_can_run(arguments):
    if arguments.get("topo_order") is not None:
        return "topo_order is not supported (the order is networkx's topological_sort)"
    return weight_is_name(arguments)


def _longest(G, weight, default_weight):
    nx = _nx()
    order, _, left = K.generations(G.succ.indptr, G.succ.indices)
    if left:
        raise nx.NetworkXUnfeasible("Graph contains a cycle or graph changed during iteration")
    pred = G.pred
    if weight is None:
        w = np.full(len(pred.indices), default_weight)
    else:
        info = numbers(G, weight, "sum", default=default_weight, side="pred")
        w = info.ints if info.integral else info.values
    parent, end = K.longest_path(order, pred.indptr, pred.indices, np.asarray(w))
    path = [end]
    while parent[path[-1]] != K.NONE:
        path.append(int(parent[path[-1]]))
    path.reverse()
    return G.labels(path)


@networkx_function(_longest_can_run, one_pass=True)
def dag_longest_path(G, weight="weight", default_weight=1, topo_order=None):
    if not len(G):
        return []
    return _longest(G, weight, default_weight)


@networkx_function(_longest_can_run, one_pass=True)
def dag_longest_path_length(G, weight="weight", default_weight=1):
    path = dag_longest_path(G, weight, default_weight)
    data = G.graph._adj
    length = 0
    for u, v in zip(path, path[1:]):
        length += data[u][v].get(weight, default_weight)
    return length

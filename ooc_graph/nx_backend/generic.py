"""networkx.algorithms.shortest_paths.generic: ``shortest_path``, ``shortest_path_length`` and
``average_shortest_path_length``, each choosing, as networkx does, among the breadth-first searches
(:mod:`.traversal`) and the weighted ones (:mod:`.weighted`) by ``method`` and ``weight``."""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from . import traversal as T
from ._nxver import _nxver
from .functions import _nx, networkx_function
from .weighted import (_arrays, _can_run, _dijkstra_paths, _distances, _first_paths, _labels, _sources,
                       all_pairs_bellman_ford_path, all_pairs_bellman_ford_path_length, all_pairs_dijkstra_path,
                       all_pairs_dijkstra_path_length, bellman_ford, bellman_ford_path, bellman_ford_path_length,
                       bidirectional_dijkstra, dijkstra, dijkstra_path_length, single_source_bellman_ford_path,
                       single_source_bellman_ford_path_length, single_source_dijkstra_path,
                       single_source_dijkstra_path_length)


def _method(method, weight):
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    return "unweighted" if weight is None else method


def _towards(G, target, weight, method, lengths: bool):
    """Paths (or lengths) from every node that reaches ``target``: networkx searches the reversed
    graph from ``target`` (``G.reverse(copy=False)`` on a directed graph) and turns the paths round."""
    reverse = G.is_directed()
    if method == "unweighted":
        if lengths:
            return T.lengths(G, target, None, reverse=reverse)
        found = T.paths(G, target, None, reverse=reverse)
    elif method == "dijkstra":
        _sources(G, [target])
        run = dijkstra(G, [target], weight, reverse=reverse)
        if lengths:
            return _distances(G, run, {G.id_of(target): target})
        found = _dijkstra_paths(G, [target], None, weight, reverse=reverse)[1]
    else:
        run = bellman_ford(G, [target], weight, reverse=reverse)
        given = {G.id_of(target): target}
        if lengths:
            return _distances(G, run, given)
        ids = _first_paths(G, run, target, run.order.tolist())
        found = {v: ids[i] for i, v in zip(run.order.tolist(), _labels(G, run.order, given))}
    return {v: list(reversed(p)) for v, p in found.items()}


@networkx_function(_can_run, one_pass=True)
def shortest_path(G, source=None, target=None, weight=None, method="dijkstra"):
    method = _method(method, weight)
    if source is None:
        if target is None:
            if method == "unweighted":
                paths = T.all_pairs_shortest_path(G)
            elif method == "dijkstra":
                paths = all_pairs_dijkstra_path(G, weight=weight)
            else:
                paths = all_pairs_bellman_ford_path(G, weight=weight)
            if _nxver >= (3, 5):
                return paths
            import warnings  # networkx 3.3 and 3.4: a dict, with this warning
            warnings.warn("\n\nshortest_path will return an iterator that yields\n(node, path) pairs instead of a "
                          "dictionary when source\nand target are unspecified beginning in version 3.5\n\nTo keep the "
                          "current behavior, use:\n\n\tdict(nx.shortest_path(G))", FutureWarning, stacklevel=3)
            return dict(paths)
        return _towards(G, target, weight, method, lengths=False)
    if target is None:
        if method == "unweighted":
            return T.paths(G, source, None)
        if method == "dijkstra":
            return single_source_dijkstra_path(G, source, weight=weight)
        return single_source_bellman_ford_path(G, source, weight=weight)
    if method == "unweighted":
        return T.bidirectional_shortest_path(G, source, target)
    if method == "dijkstra":
        return bidirectional_dijkstra(G, source, target, weight)[1]
    return bellman_ford_path(G, source, target, weight)


@networkx_function(_can_run, one_pass=True)
def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra"):
    method = _method(method, weight)
    if source is None:
        if target is None:
            if method == "unweighted":
                return T.all_pairs_shortest_path_length(G)
            if method == "dijkstra":
                return all_pairs_dijkstra_path_length(G, weight=weight)
            return all_pairs_bellman_ford_path_length(G, weight=weight)
        return _towards(G, target, weight, method, lengths=True)
    if target is None:
        if method == "unweighted":
            return T.lengths(G, source, None)
        if method == "dijkstra":
            return single_source_dijkstra_path_length(G, source, weight=weight)
        return single_source_bellman_ford_path_length(G, source, weight=weight)
    if method == "unweighted":
        return len(T.bidirectional_shortest_path(G, source, target)) - 1
    if method == "dijkstra":
        return dijkstra_path_length(G, source, target, weight)
    return bellman_ford_path_length(G, source, target, weight)


def _average_can_run(arguments):
    if arguments.get("method") in ("floyd-warshall", "floyd-warshall-numpy"):
        return "the Floyd-Warshall methods are not supported (their sums run in another order)"
    return _can_run(arguments)


@networkx_function(_average_can_run)
def average_shortest_path_length(G, weight=None, method=None):
    nx = _nx()
    if method is None:
        method = "unweighted" if weight is None else "dijkstra"
    if method not in ("unweighted", "dijkstra", "bellman-ford", "floyd-warshall", "floyd-warshall-numpy"):
        raise ValueError(f"method not supported: {method}")
    n = len(G)
    if n == 0:
        raise nx.NetworkXPointlessConcept("the null graph has no paths, thus there is no average shortest path "
                                          "length")
    if n == 1:
        return 0
    from .components import _components, _condensed
    if G.is_directed() and len(_condensed(G)[0]) != 1:
        raise nx.NetworkXError("Graph is not strongly connected.")
    if not G.is_directed() and len(_components(G)) != 1:
        raise nx.NetworkXError("Graph is not connected.")
    if method == "unweighted":
        s = K.hop_sum(G.succ.indptr, G.succ.indices)
    else:
        adjacency, w, floats = _arrays(G, weight)
        if w.dtype.kind == "i" and len(w) and float(np.abs(w).max()) * n**3 >= 2**62:
            raise NotImplementedError("ooc_graph: integer weights whose sum over all pairs may pass 64 bits")
        status, s = K.distance_sum(adjacency.indptr, adjacency.indices, w, floats, method == "bellman-ford")
        if status:
            if method == "bellman-ford":
                raise nx.NetworkXUnbounded("Negative cycle detected.")
            raise ValueError("Contradictory paths found:", "negative weights?")
    return s / (n * (n - 1))

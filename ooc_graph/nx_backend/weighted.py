"""Weighted shortest paths (Dijkstra, bidirectional Dijkstra, Bellman-Ford), in the order networkx
settles nodes (networkx's generic ``shortest_path`` and its kin, built on them, are :mod:`.generic`).

The kernels (:mod:`._kernels`) replay networkx's own searches over its adjacency order, so dict
order, the path chosen among equal ones, the type of each distance (an int where the path's
weights are all ints) and networkx's errors for negative weights ("Contradictory paths found",
``NetworkXUnbounded``) are networkx's. Integer weights are summed in int64 (exactly, as Python's
ints, up to 2**62 in all); weights that are not numbers raise what networkx's sums raise; a
weight given as a function is left to networkx (``can_run``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _kernels as K
from . import traversal as T
from ._nxver import _nxver
from .functions import _nx, networkx_function, numbers, weight_is_name

INF = float("inf")
_NO_FLOATS = np.zeros(0, bool)


def _can_run(arguments):
    return weight_is_name(arguments)


# -- the searches ----------------------------------------------------------------------------------
def _arrays(G, weight, reverse=False):
    """``(adjacency, weights, floats)`` for a kernel: the weights as int64 when all are ints, else
    float64 with the mask of floats (which decides each sum's type)."""
    side = "pred" if reverse and G.is_directed() else "succ"
    adjacency = G.pred if side == "pred" else G.succ
    if weight is None:  # networkx's data.get(None, 1)
        return adjacency, np.ones(len(adjacency.indices), np.int64), _NO_FLOATS
    w = numbers(G, weight, "sum", side=side)
    if w.integral:
        return adjacency, w.ints, _NO_FLOATS
    return adjacency, w.values, (w.floats if w.floats is not None else np.ones(len(w.values), bool))


class Search(NamedTuple):
    order: np.ndarray  # settled (Dijkstra) or first reached (Bellman-Ford): networkx's dist order
    first: np.ndarray  # first reached (Dijkstra's predecessor dict order)
    dist: np.ndarray
    parent: np.ndarray  # Dijkstra: networkx's path predecessor; Bellman-Ford: the first of each list
    is_float: np.ndarray
    head: np.ndarray
    nxt: np.ndarray
    val: np.ndarray

    def values(self, ids) -> list:
        """The distances of ``ids`` as networkx's sums give them (ints where every weight summed was an int)."""
        out = self.dist[ids].tolist()
        if self.dist.dtype.kind == "f":
            for k in np.flatnonzero(~self.is_float[ids]).tolist():
                out[k] = int(out[k])
        return out

    def preds(self, v) -> list:
        """Node id ``v``'s predecessor list (ids), as networkx appends them."""
        out, k = [], self.head[v]
        while k >= 0:
            out.append(int(self.val[k]))
            k = self.nxt[k]
        return out


def dijkstra(G, sources, weight, cutoff=None, target=None, preds=False, reverse=False) -> Search:
    """networkx's ``_dijkstra_multisource`` from the nodes ``sources`` (each in ``G``)."""
    adjacency, w, floats = _arrays(G, weight, reverse)
    ids = G.ids_of(sources)
    t = G.id_of(target) if target is not None and target in G else K.NONE
    status, order, first, dist, parent, is_float, head, nxt, val = K.dijkstra(
        adjacency.indptr, adjacency.indices, w, floats, ids, INF if cutoff is None else float(cutoff), t, preds)
    if status:
        raise ValueError("Contradictory paths found:", "negative weights?")
    return Search(order, first, dist, parent, is_float, head, nxt, val)


def bellman_ford(G, sources, weight, heuristic=True, reverse=False) -> Search:
    """networkx's ``_inner_bellman_ford`` from the nodes ``sources``."""
    nx = _nx()
    for s in sources:
        if s not in G:
            raise nx.NodeNotFound(f"Source {s} not in G")
    adjacency, w, floats = _arrays(G, weight, reverse)
    status, order, dist, is_float, head, nxt, val = K.bellman_ford(adjacency.indptr, adjacency.indices, w, floats,
                                                                   G.ids_of(sources), heuristic)
    if status:
        raise nx.NetworkXUnbounded("Negative cycle detected.")
    parent = np.where(head >= 0, val[np.maximum(head, 0)], K.NONE)
    return Search(order, order, dist, parent, is_float, head, nxt, val)


def _labels(G, ids, given: dict) -> list:
    """Labels of ``ids``, the sources as the caller gave them (networkx keys its dicts so)."""
    labels = G.labels(ids)
    if given:
        for k in np.flatnonzero(np.isin(ids, np.fromiter(given, np.int64, len(given)))).tolist():
            labels[k] = given[int(ids[k])]
    return labels


def _given(G, sources) -> dict:
    return {G.id_of(s): s for s in sources}


def _distances(G, run: Search, given) -> dict:
    return dict(zip(_labels(G, run.order, given), run.values(run.order)))


def _chain(run: Search, t) -> list:
    """Ids from the root to ``t`` along ``parent``."""
    path = [t]
    while run.parent[path[-1]] != K.NONE:
        path.append(int(run.parent[path[-1]]))
    path.reverse()
    return path


# -- Dijkstra --------------------------------------------------------------------------------------
def _sources(G, sources):
    nx = _nx()
    if not sources:
        raise ValueError("sources must not be empty")
    for s in sources:
        if s not in G:
            raise nx.NodeNotFound(f"Node {s} not found in graph")
    return list(sources)


@networkx_function(_can_run)
def multi_source_dijkstra_path_length(G, sources, cutoff=None, weight="weight"):
    sources = _sources(G, sources)
    return _distances(G, dijkstra(G, sources, weight, cutoff), _given(G, sources))


def _dijkstra_paths(G, sources, cutoff, weight, reverse=False):
    """``(dist, paths)`` of networkx's ``multi_source_dijkstra`` without a target."""
    given = _given(G, sources)
    run = dijkstra(G, sources, weight, cutoff, reverse=reverse)
    labels = _labels(G, run.order, given)
    distances = dict(zip(labels, run.values(run.order)))
    by_id = {i: [s] for i, s in given.items()}
    paths = {s: [s] for s in sources}
    if _nxver < (3, 6):  # networkx grew each path as it reached a node: its dict is in that order
        for i, v in zip(run.first.tolist(), _labels(G, run.first, given)):
            if i not in by_id:
                chain = _chain(run, i)  # ids from the root
                k = max(j for j, u in enumerate(chain) if u in by_id)
                for u in chain[k + 1:]:
                    by_id[u] = by_id[int(run.parent[u])] + [G.nodes[u]]
            paths[v] = by_id[i]
        return distances, paths
    skip = len(given)  # networkx skips as many settled nodes as there are sources
    for i, v, p in zip(run.order.tolist()[skip:], labels[skip:], run.parent[run.order[skip:]].tolist()):
        by_id[i] = path = by_id[p] + [v]
        paths[v] = path
    return distances, paths


@networkx_function(_can_run)
def multi_source_dijkstra(G, sources, target=None, cutoff=None, weight="weight"):
    sources = _sources(G, sources)
    if target in sources:
        return (0, [target])
    if target is None:
        return _dijkstra_paths(G, sources, cutoff, weight)
    run = dijkstra(G, sources, weight, cutoff, target)
    t = G.id_of(target) if target in G else None
    if t is None or t not in set(run.order[-1:].tolist()):
        raise _nx().NetworkXNoPath(f"No path to {target}.")
    path = _labels(G, np.asarray(_chain(run, t)), _given(G, sources))
    return (run.values([t])[0], path)


@networkx_function(_can_run)
def multi_source_dijkstra_path(G, sources, cutoff=None, weight="weight"):
    return multi_source_dijkstra(G, sources, cutoff=cutoff, weight=weight)[1]


@networkx_function(_can_run, one_pass=True)
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    return multi_source_dijkstra_path_length(G, {source}, cutoff=cutoff, weight=weight)


@networkx_function(_can_run, one_pass=True)
def single_source_dijkstra(G, source, target=None, cutoff=None, weight="weight"):
    return multi_source_dijkstra(G, {source}, target=target, cutoff=cutoff, weight=weight)


@networkx_function(_can_run, one_pass=True)
def single_source_dijkstra_path(G, source, cutoff=None, weight="weight"):
    return multi_source_dijkstra(G, {source}, cutoff=cutoff, weight=weight)[1]


@networkx_function(_can_run, one_pass=True)
def dijkstra_path(G, source, target, weight="weight"):
    return single_source_dijkstra(G, source, target=target, weight=weight)[1]


@networkx_function(_can_run, one_pass=True)
def dijkstra_path_length(G, source, target, weight="weight"):
    nx = _nx()
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return 0
    run = dijkstra(G, [source], weight, target=target)
    if target not in G or run.order[-1] != G.id_of(target):
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return run.values(run.order[-1:])[0]


@networkx_function(_can_run)
def all_pairs_dijkstra(G, cutoff=None, weight="weight"):
    for n in G.nodes:
        yield (n, _dijkstra_paths(G, [n], cutoff, weight))


@networkx_function(_can_run)
def all_pairs_dijkstra_path_length(G, cutoff=None, weight="weight"):
    for n in G.nodes:
        yield (n, _distances(G, dijkstra(G, [n], weight, cutoff), {G.id_of(n): n}))


@networkx_function(_can_run)
def all_pairs_dijkstra_path(G, cutoff=None, weight="weight"):
    for n in G.nodes:
        yield (n, _dijkstra_paths(G, [n], cutoff, weight)[1])


@networkx_function(_can_run, one_pass=True)
def dijkstra_predecessor_and_distance(G, source, cutoff=None, weight="weight"):
    if source not in G:
        raise _nx().NodeNotFound(f"Node {source} is not found in the graph")
    given = {G.id_of(source): source}
    run = dijkstra(G, [source], weight, cutoff, preds=True)
    labels = _labels(G, run.first, given)
    pred = {v: G.labels(run.preds(i)) for i, v in zip(run.first.tolist(), labels)}
    return (pred, _distances(G, run, given))


@networkx_function(_can_run, one_pass=True)
def bidirectional_dijkstra(G, source, target, weight="weight"):
    nx = _nx()
    T._ends(G, source, target)
    if source == target:
        return (0, [source])
    succ, w, floats = _arrays(G, weight)
    pred, rw, rfloats = _arrays(G, weight, reverse=True)
    if len(floats) and not floats.all():
        raise NotImplementedError("ooc_graph: bidirectional Dijkstra over weights that mix ints and floats "
                                  "(the type of networkx's sum depends on which searches meet)")
    status, length, meet, fwd, back = K.bidirectional_dijkstra(succ.indptr, succ.indices, w, pred.indptr, pred.indices,
                                                               rw, G.id_of(source), G.id_of(target))
    if status == 2:
        raise ValueError("Contradictory paths found: negative weights?")
    if status == 1:
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    path, v = [], meet
    while v != K.NONE:
        path.append(int(v))
        v = fwd[v]
    path.reverse()
    v = back[meet]
    while v != K.NONE:
        path.append(int(v))
        v = back[v]
    return (length.item() if hasattr(length, "item") else length, G.labels(path))


# -- Bellman-Ford ----------------------------------------------------------------------------------
def _first_paths(G, run: Search, source, targets) -> dict:
    """networkx's ``next(_build_paths_from_predecessors({source}, t, pred))`` for each id of
    ``targets``: the chain of each node's first predecessor (networkx's depth-first search takes
    the first predecessor first), or that search itself where the chain meets itself."""
    nx = _nx()
    s = G.id_of(source)
    known = {s: [source]}
    out = {}
    for t in targets:
        if t != s and run.head[t] < 0:
            raise nx.NetworkXNoPath(f"Target {G.nodes[t]} cannot be reached from given sources")
        chain, v, on = [], t, set()
        while v not in known and v not in on:
            on.add(v)
            chain.append(v)
            v = int(run.parent[v])
        if v in known:
            path = known[v]
            for u in reversed(chain):
                path = path + [G.nodes[u]]
                known[u] = path
            out[t] = known[t]
        else:  # the first predecessors go round: networkx's search, as it runs
            out[t] = _depth_first_path(G, run, s, t)
    return out


def _depth_first_path(G, run: Search, s, t):
    stack, seen = [[t, 0]], {t}
    while stack:
        node, i = stack[-1]
        if node == s:
            return G.labels([n for n, _ in reversed(stack)])
        preds = run.preds(node)
        if i < len(preds):
            stack[-1][1] = i + 1
            if preds[i] not in seen:
                seen.add(preds[i])
                stack.append([preds[i], 0])
        else:
            seen.discard(node)
            stack.pop()
    raise _nx().NetworkXNoPath(f"Target {G.nodes[t]} cannot be reached from given sources")


def _bf(G, source, weight, reverse=False):
    return bellman_ford(G, [source], weight, reverse=reverse)


@networkx_function(_can_run, one_pass=True)
def single_source_bellman_ford_path_length(G, source, weight="weight"):
    run = _bf(G, source, weight)
    return _distances(G, run, {G.id_of(source): source})


def _bellman_ford_paths(G, source, target, weight, reverse=False):
    nx = _nx()
    if source == target:
        if source not in G:
            raise nx.NodeNotFound(f"Node {source} is not found in the graph")
        return (0, [source])
    run = _bf(G, source, weight, reverse)
    given = {G.id_of(source): source}
    if target is not None:
        if target not in G:
            raise nx.NetworkXNoPath(f"Target {target} cannot be reached from given sources")
        t = G.id_of(target)
        path = _first_paths(G, run, source, [t])[t]
        return (run.values([t])[0], path)
    found = _first_paths(G, run, source, run.order.tolist())
    labels = _labels(G, run.order, given)
    return (dict(zip(labels, run.values(run.order))), {v: found[i] for i, v in zip(run.order.tolist(), labels)})


@networkx_function(_can_run, one_pass=True)
def single_source_bellman_ford(G, source, target=None, weight="weight"):
    return _bellman_ford_paths(G, source, target, weight)


@networkx_function(_can_run, one_pass=True)
def single_source_bellman_ford_path(G, source, weight="weight"):
    return _bellman_ford_paths(G, source, None, weight)[1]


@networkx_function(_can_run, one_pass=True)
def bellman_ford_path(G, source, target, weight="weight"):
    return _bellman_ford_paths(G, source, target, weight)[1]


@networkx_function(_can_run, one_pass=True)
def bellman_ford_path_length(G, source, target, weight="weight"):
    nx = _nx()
    if source == target:
        if source not in G:
            raise nx.NodeNotFound(f"Node {source} not found in graph")
        return 0
    run = _bf(G, source, weight)
    if target not in G or (G.id_of(target) != G.id_of(source) and run.head[G.id_of(target)] < 0):
        raise nx.NetworkXNoPath(f"node {target} not reachable from {source}")
    return run.values([G.id_of(target)])[0]


@networkx_function(_can_run, one_pass=True)
def bellman_ford_predecessor_and_distance(G, source, target=None, weight="weight", heuristic=False):
    nx = _nx()
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} is not found in the graph")
    if weight is not None:
        w = numbers(G, weight, "sum")
        loops = G.arc_src == G.succ.indices
        if (w.values[loops] < 0).any():
            raise nx.NetworkXUnbounded("Negative cycle detected.")
    if len(G) == 1:
        return {source: []}, {source: 0}
    run = bellman_ford(G, [source], weight, heuristic=heuristic)
    given = {G.id_of(source): source}
    labels = _labels(G, run.order, given)
    pred = {v: G.labels(run.preds(i)) for i, v in zip(run.order.tolist(), labels)}
    return (pred, dict(zip(labels, run.values(run.order))))


@networkx_function(_can_run)
def all_pairs_bellman_ford_path_length(G, weight="weight"):
    for n in G.nodes:
        yield (n, single_source_bellman_ford_path_length(G, n, weight=weight))


@networkx_function(_can_run)
def all_pairs_bellman_ford_path(G, weight="weight"):
    for n in G.nodes:
        yield (n, single_source_bellman_ford_path(G, n, weight=weight))


@networkx_function()
def is_negatively_weighted(G, edge=None, weight="weight"):
    if edge is not None:
        data = G.graph.get_edge_data(*edge)
        if data is None:
            raise _nx().NetworkXError(f"Edge {edge!r} does not exist.")
        return weight in data and data[weight] < 0
    w = G.weights(weight, 0)
    if w.bad is not None:
        if w.bad[0] is None:
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        raise TypeError(f"'<' not supported between instances of '{type(w.bad[0]).__name__}' and 'int'")
    return bool(w.negative)

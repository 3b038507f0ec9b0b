"""Louvain communities (networkx.algorithms.community.louvain) on ooc_graph's ``louvain``, and the
modularity of a partition (community.quality)."""

from __future__ import annotations

import numpy as np

import ooc_graph

from .components import groups
from .functions import _options, networkx_function, node_set, numbers, weight_is_name


def _louvain_can_run(arguments):
    if arguments["G"].is_directed():
        return "directed modularity is not supported (ooc_graph.louvain takes undirected graphs)"
    resolution = arguments.get("resolution", 1)
    if isinstance(resolution, (int, float)) and not resolution > 0:
        return "a resolution of zero or less is not supported (ooc_graph.louvain takes a positive one)"
    return weight_is_name(arguments)


def _louvain(G, weight, resolution, threshold, max_level, seed):
    """ooc_graph.louvain for networkx's arguments, or None where networkx's answer is every node
    alone (an infinite resolution: no move gains)."""
    if seed is not None and hasattr(seed, "randrange"):  # networkx hands a random.Random
        seed = seed.randrange(2**32)
    if resolution == np.inf:
        return None
    if not threshold >= 0:  # NaN or negative: networkx's levels go on while vertices move, as with 0
        threshold = 0.0
    if weight is not None:
        w = numbers(G, weight, "sum", negative_ok=False)
        with np.errstate(over="ignore"):  # the total is looked at, not warned about
            if not np.isfinite(w.values.sum()):  # left to networkx (NotImplementedError: its fallback)
                raise NotImplementedError("ooc_graph: edge weights whose total passes the float range")
    return ooc_graph.louvain(G.store(weight), resolution=resolution, threshold=threshold, max_level=max_level,
                             seed=seed, weight=weight is not None, **_options())


def _partition(G, labels):
    return [node_set(G, part) for part in groups(labels)]


@networkx_function(_louvain_can_run)
def louvain_communities(G, weight="weight", resolution=1, threshold=1e-07, max_level=None, seed=None):
    if max_level is not None and max_level <= 0:
        raise ValueError("max_level argument must be a positive integer or None")
    if not len(G):
        return []
    r = _louvain(G, weight, resolution, threshold, max_level, seed)
    return [{v} for v in G.nodes] if r is None else _partition(G, r.labels)


@networkx_function(_louvain_can_run)
def louvain_partitions(G, weight="weight", resolution=1, threshold=1e-07, seed=None):
    if not len(G):
        return iter([])
    r = _louvain(G, weight, resolution, threshold, None, seed)
    if r is None:
        return iter([[{v} for v in G.nodes]])
    return (_partition(G, labels) for labels in r.levels)


@networkx_function(weight_is_name)
def modularity(G, communities, weight="weight", resolution=1):
    if not isinstance(communities, list):
        communities = list(communities)
    covered = {v for c in communities for v in c if v in G}
    if not len(G) == len(covered) == sum(len(c) for c in communities):
        from networkx.algorithms.community.quality import NotAPartition
        raise NotAPartition(G.graph, communities)
    n = len(G)
    label = np.empty(n, np.int64)
    for i, c in enumerate(communities):
        label[G.ids_of(c)] = i
    src, dst = G.arc_src, G.succ.indices
    if weight is None:
        w = np.ones(len(dst), np.int64)
    else:
        info = numbers(G, weight, "sum")
        w = info.ints if info.integral else info.values
    k = len(communities)
    directed = G.is_directed()
    py = (lambda a: a.astype(np.int64).tolist()) if w.dtype.kind == "i" else (lambda a: a.tolist())
    out_deg = np.bincount(src, weights=w, minlength=n)
    if directed:
        in_deg = np.bincount(dst, weights=w, minlength=n)
        m = sum(py(out_deg))
        norm = 1 / m**2
        keep = np.ones(len(dst), bool)
    else:
        loops = src == dst
        out_deg = out_deg + np.bincount(src[loops], weights=w[loops], minlength=n)  # a self-loop counts twice
        in_deg = out_deg
        deg_sum = sum(py(out_deg))
        m = deg_sum / 2
        norm = 1 / deg_sum**2
        keep = src <= dst  # each edge once
    inside = keep & (label[src] == label[dst])
    L = py(np.bincount(label[src[inside]], weights=w[inside], minlength=k))
    out_sum = py(np.bincount(label, weights=out_deg, minlength=k))
    in_sum = py(np.bincount(label, weights=in_deg, minlength=k))
    return sum(L[c] / m - resolution * out_sum[c] * in_sum[c] * norm for c in range(k))

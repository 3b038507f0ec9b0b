"""The centralities this backend serves: degree, HITS, Katz, eigenvector and betweenness centrality
(networkx.algorithms.centrality and link_analysis.hits_alg). Where networkx raises before or
instead of iterating (an empty graph, a bad ``beta`` or ``nstart``, ``k`` out of range), so does
each function here."""

from __future__ import annotations

import numpy as np

import ooc_graph

from ._nxver import _nxver
from .functions import _nx, _options, by_node, networkx_function, numbers, scale_of, vertex_function, weight_is_name
from .graph import StoreGraph


def _has_edges(G) -> bool:
    return bool(len(G.succ.indices)) if isinstance(G, StoreGraph) else any(True for _ in G.edges())


# -- degree ----------------------------------------------------------------------------------------
def degrees(G, which: str = "both") -> np.ndarray:
    """networkx's ``G.degree`` (a self-loop counts twice on an undirected graph), ``in_degree`` or
    ``out_degree`` of every node, as an int64 array."""
    n = len(G)
    out = np.diff(G.succ.indptr)
    if which == "out":
        return out
    into = np.bincount(G.succ.indices, minlength=n)
    if which == "in":
        return into
    if G.is_directed():
        return out + into
    return out + np.bincount(G.arc_src[G.arc_src == G.succ.indices], minlength=n)


def _degree_centrality(G, which):
    n = len(G)
    if n <= 1:
        return {v: 1 for v in G.nodes}
    return by_node(G, degrees(G, which) * (1.0 / (n - 1.0)))


@networkx_function()
def degree_centrality(G):
    return _degree_centrality(G, "both")


@networkx_function()
def in_degree_centrality(G):  # networkx refuses undirected graphs before dispatching
    return _degree_centrality(G, "in")


@networkx_function()
def out_degree_centrality(G):
    return _degree_centrality(G, "out")


# -- HITS, Katz and eigenvector centrality: power iterations ---------------------------------------
def _hits_can_run(arguments):
    G = arguments["G"]
    if not arguments["normalized"]:
        return ("normalized=False is not supported (networkx then returns svds's unit singular vector and the "
                "adjacency matrix times it; ooc_graph's power iteration scales both to a largest value of 1)")
    if len(G) and (len(G) < 2 or not _has_edges(G)):
        return "a graph of one node or without edges (networkx's hits raises there: svds finds no singular vector)"
    return True


# networkx's hits reads the "weight" attribute (default 1) without a keyword for it
vertex_function("hits", ("hubs", "authorities"), weight="weight", can_run=_hits_can_run, scale_free=True)


def _katz_arguments(G, arguments):
    """networkx's ``beta``: a number, or a dict with a value for every node (checked once the graph
    is not empty; networkx returns ``{}`` first)."""
    beta = arguments["beta"]
    try:
        arguments["beta"] = float(beta)
    except (TypeError, ValueError, AttributeError) as err:
        if len(G) and set(beta) != set(G):
            raise _nx().NetworkXError("beta dictionary must have a value for every node") from err
        arguments["beta"] = np.array([float(beta[v]) for v in G.nodes])


vertex_function("katz_centrality", "values", prepare=_katz_arguments, can_run=weight_is_name)


def _eigenvector_arguments(G, arguments):
    nx = _nx()
    if not len(G):
        raise nx.NetworkXPointlessConcept("cannot compute centrality for the null graph")
    nstart = arguments["nstart"]
    if nstart is not None and all(v == 0 for v in nstart.values()):
        raise nx.NetworkXError("initial vector cannot have all zero values")
    if nstart is not None and sum(nstart.values()) == 0:
        raise ZeroDivisionError("division by zero")  # networkx divides nstart by its sum
    arguments["weight"] = arguments["weight"] or None  # networkx: `if weight`


vertex_function("eigenvector_centrality", "values", prepare=_eigenvector_arguments, can_run=weight_is_name,
                scale_free=True)


# -- betweenness -----------------------------------------------------------------------------------
def _positive(G, weight):
    """The weight attribute for betweenness: positive finite numbers, sums that stay finite."""
    if weight is None:
        return None
    w = numbers(G, weight, "sum", negative_ok=False)
    if w.zero:
        raise NotImplementedError("ooc_graph: zero edge weights are not supported (networkx's path counts over them "
                                  "depend on the order its Dijkstra visits nodes)")
    scale_of(G, w, scale_free=False)  # path lengths that overflow: networkx's infinities are its own
    return weight


def _betweenness_can_run(arguments):
    """Node and edge betweenness alike."""
    k = arguments.get("k")
    if _nxver < (3, 6) and k is not None and k != len(arguments["G"]):
        return "k sampled sources on networkx before 3.6 (its rescaling of a sample changed in 3.6; this is 3.6's)"
    return weight_is_name(arguments)


@networkx_function(_betweenness_can_run)
def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False, seed=None):
    n = len(G)
    if k == n:
        k = None  # as networkx: every node, the seed left alone
    if k is not None and not 0 < k <= n:
        if not 0 <= k <= n:
            raise ValueError("Sample larger than population or is negative")  # networkx's random.sample
        if (n if endpoints else n - 1) >= 2:
            raise ZeroDivisionError("division by zero")  # networkx rescales by the k = 0 sources
        return dict.fromkeys(G.nodes, 0.0)
    if not n:
        return {}
    weight = _positive(G, weight)
    # seed: the random.Random networkx's py_random_state made, which draws the k sources as networkx's does
    r = ooc_graph.betweenness_centrality(G.store(weight), k=k, normalized=normalized, weight=weight,
                                         endpoints=endpoints, seed=seed, **_options())
    return by_node(G, r.values)


# -- edge betweenness ------------------------------------------------------------------------------
@networkx_function(_betweenness_can_run)  # the same sources and checks as betweenness_centrality's
def edge_betweenness_centrality(G, k=None, normalized=True, weight=None, seed=None):
    """networkx's own computation (:func:`._kernels_brandes.edge_brandes`), compiled: the same sources (drawn
    by networkx's ``random.Random``), sums and rescaling, keyed by ``G.edges()``."""
    from . import _kernels_brandes as K
    n = len(G)
    keep = G.edge_mask()
    src, dst = G.arc_src, G.succ.indices
    edges = np.flatnonzero(keep)  # networkx's G.edges() order: each undirected edge from its first end
    arc_edge = np.empty(len(dst), np.int64)
    arc_edge[edges] = np.arange(len(edges))
    if not G.is_directed():  # the arc v->u of an edge u-v (u first) is that edge too
        key = np.minimum(src, dst) * max(n, 1) + np.maximum(src, dst)
        order = np.argsort(key[edges], kind="stable")
        other = np.flatnonzero(~keep)
        arc_edge[other] = order[np.searchsorted(key[edges][order], key[other])]
    sources = np.arange(n, dtype=np.int64) if k is None else G.ids_of(seed.sample(list(G.nodes), k))
    if weight is None:
        w = np.ones(len(dst), np.int64)
    else:
        info = numbers(G, weight, "sum")
        w = info.ints if info.integral else info.values
    bc = K.edge_brandes(G.succ.indptr, dst, w, weight is not None, arc_edge, sources, len(edges))
    labels = zip(G.labels(src[edges]), G.labels(dst[edges]))
    N = n  # networkx's rescaling of edge betweenness (endpoints counted)
    if N >= 2:
        K_source = N if k is None else k
        if normalized:
            scale = 1 / (K_source * (N - 1))
        else:
            scale = N / (K_source * (1 if G.is_directed() else 2))
        if scale != 1:
            bc = bc * scale
    return dict(zip(labels, bc.tolist()))

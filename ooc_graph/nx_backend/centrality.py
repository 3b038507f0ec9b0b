"""The centralities this backend serves: HITS, Katz, eigenvector and betweenness centrality, core
numbers (registered in :data:`~ooc_graph.nx_backend.functions.FUNCTIONS` as the other functions).
Where networkx raises before or instead of iterating (an empty graph, a bad ``beta`` or
``nstart``, self-loops for core numbers, ``k`` out of range), so does each function here."""

from __future__ import annotations

import numpy as np

import ooc_graph

from .functions import _by_node, _edge_values, _nonnegative, _nx, _options, _weight_is_name, networkx_function, \
    vertex_function
from .graph import StoreGraph


def _has_edges(G) -> bool:
    return bool(len(G.src)) if isinstance(G, StoreGraph) else any(True for _ in G.edges())


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
vertex_function("hits", ("hubs", "authorities"), weight="weight", can_run=_hits_can_run)


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


vertex_function("katz_centrality", "values", prepare=_katz_arguments, can_run=_weight_is_name)


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


vertex_function("eigenvector_centrality", "values", prepare=_eigenvector_arguments, can_run=_weight_is_name)


# -- core numbers ----------------------------------------------------------------------------------
def _no_self_loops(G, arguments):
    if np.any(G.src == G.dst):
        raise _nx().NetworkXNotImplemented("Input graph has self loops which is not permitted; "
                                           "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")


vertex_function("core_number", "core", prepare=_no_self_loops)


# -- betweenness -----------------------------------------------------------------------------------
def _betweenness_can_run(arguments):
    reason = _nonnegative(arguments)
    if reason is True and arguments.get("weight") is not None and \
            np.any(_edge_values(arguments["G"], arguments["weight"]) == 0):
        return ("zero edge weights are not supported (networkx's path counts over them depend on the order "
                "its Dijkstra visits nodes)")
    return reason


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
    # seed: the random.Random networkx's py_random_state made, which draws the k sources as networkx's does
    r = ooc_graph.betweenness_centrality(G.store(weight), k=k, normalized=normalized, weight=weight,
                                         endpoints=endpoints, seed=seed, **_options())
    return _by_node(G, r.values)

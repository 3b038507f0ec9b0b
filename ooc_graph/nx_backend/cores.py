"""Core numbers and the subgraphs networkx derives from them (k-core, k-shell, k-crust,
k-corona; networkx.algorithms.core) on ooc_graph's ``core_number``, and the k-truss."""

from __future__ import annotations

import numpy as np

import ooc_graph

from . import _kernels_structure as K
from .functions import _nx, _options, by_node, networkx_function

_SELF_LOOPS = ("Input graph has self loops which is not permitted; "
               "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")


def _no_self_loops(G):
    if np.any(G.arc_src == G.succ.indices):
        raise _nx().NetworkXNotImplemented(_SELF_LOOPS)


def core_numbers(G) -> np.ndarray:
    _no_self_loops(G)
    if not len(G):
        return np.zeros(0, np.int64)
    return ooc_graph.core_number(G.store(), **_options()).core


@networkx_function()
def core_number(G):
    return by_node(G, core_numbers(G))


def _subgraph(G, keep):
    """networkx's ``G.subgraph(nodes).copy()`` of the nodes where ``keep`` is true."""
    return G.graph.subgraph(G.labels(np.flatnonzero(keep))).copy()


def _cores(G, core_number):
    """Core numbers as an array: networkx's ``core_number`` argument if given, else computed."""
    if core_number is None:
        return core_numbers(G)
    return np.array([core_number[v] for v in G.nodes])


@networkx_function()
def k_core(G, k=None, core_number=None):
    c = _cores(G, core_number)
    if k is None:
        k = c.max() if len(c) else max([])
    return _subgraph(G, c >= k)


@networkx_function()
def k_shell(G, k=None, core_number=None):
    c = _cores(G, core_number)
    if k is None:
        k = c.max() if len(c) else max([])
    return _subgraph(G, c == k)


@networkx_function()
def k_crust(G, k=None, core_number=None):
    c = _cores(G, core_number)
    if k is None:
        k = (c.max() if len(c) else max([])) - 1
    return _subgraph(G, c <= k)


@networkx_function()
def k_corona(G, k, core_number=None):
    c = _cores(G, core_number)
    dst = G.succ.indices
    strong = np.bincount(G.arc_src[c[dst] >= k], minlength=len(G))  # neighbours in the k-core
    return _subgraph(G, (c == k) & (strong == k))


# networkx refuses directed graphs and multigraphs before dispatching
@networkx_function()
def k_truss(G, k):
    _no_self_loops(G)
    order = np.lexsort((G.succ.indices, G.arc_src))  # rows sorted by neighbour
    eu, ev, alive = K.truss(G.succ.indptr, G.succ.indices[order], k)
    # networkx's own result: a copy of G less the dropped edges and the nodes they leave isolated
    H = G.graph.copy()
    H.remove_edges_from(zip(G.labels(eu[~alive]), G.labels(ev[~alive])))
    H.remove_nodes_from([v for v, d in H.degree() if d == 0])
    return H

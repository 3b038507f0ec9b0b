"""Conversions and subgraphs from the converted arrays: ``to_scipy_sparse_array`` (networkx's
own algorithms build their matrices with it), ``to_dict_of_lists`` and ``ego_graph``."""

from __future__ import annotations

import numpy as np

from . import traversal as T
from . import weighted as W
from .functions import _nx, networkx_function, weight_is_name


@networkx_function(weight_is_name)
def to_scipy_sparse_array(G, nodelist=None, dtype=None, weight="weight", format="csr"):
    import scipy.sparse
    nx = _nx()
    n = len(G)
    if n == 0:
        raise nx.NetworkXError("Graph has no nodes or edges")
    src, dst = G.arc_src, G.succ.indices
    if nodelist is None:
        size, row, col = n, src, dst
        keep = None
    else:
        size = len(nodelist)
        if size == 0:
            raise nx.NetworkXError("nodelist has no nodes")
        members = set(G.graph.nbunch_iter(nodelist))
        if size != len(members):
            for v in nodelist:
                if v not in G:
                    raise nx.NetworkXError(f"Node {v} in nodelist is not in G")
            raise nx.NetworkXError("nodelist contains duplicates.")
        position = np.full(n, -1, np.int64)
        position[G.ids_of(nodelist)] = np.arange(size)
        keep = (position[src] >= 0) & (position[dst] >= 0)
        row, col = position[src[keep]], position[dst[keep]]
    if weight is None:
        data = np.ones(len(row), np.int64)
    else:
        w = G.weights(weight, 1)
        if w.bad is not None:
            raise ValueError(f"scipy.sparse does not support the weight {w.bad[0]!r} (not a number)")
        data = w.ints if w.integral else w.values
        data = data if keep is None else data[keep]
    A = scipy.sparse.coo_array((data, (row, col)), shape=(size, size), dtype=dtype)
    try:
        return A.asformat(format)
    except ValueError as err:
        raise nx.NetworkXError(f"Unknown sparse matrix format: {format}") from err


@networkx_function()
def to_dict_of_lists(G, nodelist=None):
    nx = _nx()
    labels = G.labels(G.succ.indices)
    indptr = G.succ.indptr.tolist()
    if nodelist is None:
        return {v: labels[indptr[i]:indptr[i + 1]] for i, v in enumerate(G.nodes)}
    wanted = np.zeros(len(G), bool)
    inside = [v for v in nodelist if v in G]
    wanted[G.ids_of(inside)] = True
    out = {}
    for v in nodelist:
        if v not in G:
            kind = "digraph" if G.is_directed() else "graph"
            raise nx.NetworkXError(f"The node {v} is not in the {kind}.")
        i = G.id_of(v)
        row = G.succ.indices[indptr[i]:indptr[i + 1]]
        out[v] = G.labels(row[wanted[row]])
    return out


def _ego_can_run(arguments):
    if arguments.get("undirected") and arguments["G"].is_directed():
        return "undirected=True on a directed graph is not supported (networkx searches G.to_undirected())"
    return weight_is_name(arguments, "distance")


@networkx_function(_ego_can_run)
def ego_graph(G, n, radius=1, center=True, undirected=False, distance=None):
    if distance is not None:
        reached, _ = W.single_source_dijkstra(G, n, cutoff=radius, weight=distance)
    else:
        reached = T.lengths(G, n, radius)
    H = G.graph.subgraph(reached).copy()
    if not center:
        H.remove_node(n)
    return H


# -- networkx.relabel ------------------------------------------------------------------------------
def _relabel_can_run(arguments):
    if not arguments.get("copy", True):
        return "copy=False relabels networkx's graph in place: left to networkx"
    return True


def _relabelled(G, new: list):
    """networkx's ``_relabel_copy`` of ``G`` with node ``i`` renamed ``new[i]``: nodes, then edges in
    networkx's ``G.edges`` order (taken from the arrays: no lookup per edge), each with a copy of
    its data."""
    import itertools
    import operator
    H = G.graph.__class__()
    H.add_nodes_from(new)
    node_data = G.graph._node
    H._node.update(zip(new, map(dict.copy, map(node_data.__getitem__, G.nodes))))
    keep = G.edge_mask()
    data = itertools.chain.from_iterable(map(operator.methodcaller("values"), G.succ.rows))
    H.add_edges_from(zip(map(new.__getitem__, G.arc_src[keep].tolist()),
                         map(new.__getitem__, G.succ.indices[keep].tolist()),
                         map(dict.copy, itertools.compress(data, keep.tolist()))))
    H.graph.update(G.graph.graph)
    return H


@networkx_function(_relabel_can_run)
def relabel_nodes(G, mapping, copy=True):
    m = {n: mapping(n) for n in G.nodes} if callable(mapping) else mapping
    return _relabelled(G, [m.get(n, n) for n in G.nodes])


@networkx_function()
def convert_node_labels_to_integers(G, first_label=0, ordering="default", label_attribute=None):
    nx = _nx()
    N = len(G) + first_label
    if ordering == "default":
        mapping = dict(zip(G.nodes, range(first_label, N)))
    elif ordering == "sorted":
        mapping = dict(zip(sorted(G.nodes), range(first_label, N)))
    elif ordering in ("increasing degree", "decreasing degree"):
        from .centrality import degrees
        pairs = sorted(zip(degrees(G).tolist(), G.nodes))
        if ordering == "decreasing degree":
            pairs.reverse()
        mapping = dict(zip([n for _, n in pairs], range(first_label, N)))
    else:
        raise nx.NetworkXError(f"Unknown node ordering: {ordering}")
    H = _relabelled(G, [mapping.get(n, n) for n in G.nodes])
    if label_attribute is not None:
        nx.set_node_attributes(H, {v: k for k, v in mapping.items()}, label_attribute)
    return H

"""Connected, weakly and strongly connected and attracting components, the condensation, and
networkx's tree recognition, on ooc_graph's ``wcc`` and ``scc``.

Components come in the order of their first node (networkx's ``connected_components`` order);
strongly connected ones sinks first, as networkx's Tarjan yields them and ``condensation``
numbers them.
"""

from __future__ import annotations

import numpy as np

import ooc_graph

from .functions import _nx, _options, networkx_function, node_set


def groups(labels):
    """Internal ids grouped by label, groups in label order: for components (labelled with their
    smallest internal id), the order of their first node."""
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    return np.split(order, cuts) if len(order) else []


def weak_labels(G) -> np.ndarray:
    """Each node's (weakly) connected component, as the smallest id in it: ooc_graph's union-find
    kernel (the one ``wcc`` runs on the CPU) over the converted arrays, with no store to build, or
    ``ooc_graph.wcc`` on a store where a GPU is asked for or numba is missing."""
    options = _options()
    if options["device"] != "gpu":
        try:
            from ooc_graph.kernels.cpu_compiled import hook_min
        except ImportError:  # no numba
            hook_min = None
        if hook_min is not None:
            n = len(G)
            parent = np.arange(n, dtype=np.int64)
            hook_min(G.succ.indptr, G.succ.indices, np.arange(n, dtype=np.int64), 0, parent)
            while True:  # pointer jumping: every node to its root
                up = parent[parent]
                if np.array_equal(up, parent):
                    return parent
                parent = up
    return ooc_graph.wcc(G.store(), **options).labels


def _components(G):
    """The (weakly) connected components as arrays of internal ids, in the order of their first node."""
    return groups(weak_labels(G)) if len(G) else []


def _condensed(G):
    """``(components, component of each node)``: the strongly connected components as arrays of
    ids, sinks first (:func:`_sinks_first` on the components in the order of their first node)."""
    if not len(G):
        return [], np.zeros(0, np.int64)
    labels = ooc_graph.scc(G.store(), **_options()).labels  # smallest internal id = first node
    parts = groups(labels)
    component = np.unique(labels, return_inverse=True)[1].reshape(-1)  # index into parts
    src, dst = component[G.arc_src], component[G.succ.indices]
    across = src != dst
    order = _sinks_first(len(parts), src[across], dst[across])
    where = np.empty(len(parts), np.int64)
    where[order] = np.arange(len(parts))
    return [parts[c] for c in order], where[component]


def _sinks_first(count, src, dst) -> list:
    """The vertices ``0..count−1`` of a DAG (arcs ``src → dst``) in depth-first postorder, roots
    and successors in order: every vertex after all it reaches (a reverse topological order)."""
    order = np.argsort(src, kind="stable")
    succ = dst[order].tolist()
    start = np.searchsorted(src[order], np.arange(count + 1)).tolist()
    seen, out = bytearray(count), []
    for root in range(count):
        if seen[root]:
            continue
        seen[root] = 1
        stack = [[root, start[root]]]
        while stack:
            top = stack[-1]
            v, i = top
            while i < start[v + 1] and seen[succ[i]]:
                i += 1
            if i < start[v + 1]:
                top[1] = i + 1
                seen[succ[i]] = 1
                stack.append([succ[i], start[succ[i]]])
            else:
                stack.pop()
                out.append(v)
    return out


def _sets(G, parts):
    return (node_set(G, part) for part in parts)


def _one_component(G, number) -> bool:
    """Whether ``number(G)`` (a ``number_*_components``) is 1; networkx's error for the null graph."""
    if not len(G):
        raise _nx().NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return number(G) == 1


# -- networkx.algorithms.components ----------------------------------------------------------------
@networkx_function(one_pass=True)
def connected_components(G):
    return _sets(G, _components(G))


@networkx_function(one_pass=True)
def number_connected_components(G):
    return len(_components(G))


@networkx_function(one_pass=True)
def is_connected(G):
    return _one_component(G, number_connected_components)


@networkx_function(one_pass=True)
def node_connected_component(G, n):
    if n not in G:
        raise KeyError(n)
    labels = weak_labels(G)
    return node_set(G, np.flatnonzero(labels == labels[G.id_of(n)]))


# weakly_*: the same components (networkx's weak ones of a directed graph are those of its undirected
# view, which _components finds), the same null-graph error; networkx refuses undirected graphs first
for _name, _fn in (("weakly_connected_components", connected_components),
                   ("number_weakly_connected_components", number_connected_components),
                   ("is_weakly_connected", is_connected)):
    networkx_function(one_pass=True, name=_name)(_fn)
del _name, _fn


# networkx's not_implemented_for("undirected") refuses undirected graphs before dispatching
@networkx_function(one_pass=True)
def strongly_connected_components(G):
    return _sets(G, _condensed(G)[0])


@networkx_function(one_pass=True)
def number_strongly_connected_components(G):
    return ooc_graph.scc(G.store(), **_options()).num_components if len(G) else 0


@networkx_function(one_pass=True)
def is_strongly_connected(G):
    return _one_component(G, number_strongly_connected_components)


def _sinks(G):
    """The attracting components (no arc leaves them), in the condensation's order."""
    parts, component = _condensed(G)
    leaves = np.zeros(len(parts), bool)
    src, dst = component[G.arc_src], component[G.succ.indices]
    leaves[src[src != dst]] = True
    return [part for part, out in zip(parts, leaves.tolist()) if not out]


@networkx_function(one_pass=True)
def attracting_components(G):
    yield from _sets(G, _sinks(G))


@networkx_function(one_pass=True)
def number_attracting_components(G):
    return len(_sinks(G))


@networkx_function(one_pass=True)
def is_attracting_component(G):
    sinks = _sinks(G)
    return len(sinks) == 1 and len(sinks[0]) == len(G)


def _condensation_can_run(arguments):
    if arguments.get("scc") is not None:
        return "scc is not supported (the components are computed here)"
    return True


@networkx_function(_condensation_can_run, one_pass=True)
def condensation(G, scc=None):
    nx = _nx()
    C = nx.DiGraph()
    mapping = C.graph["mapping"] = {}
    if not len(G):
        return C
    parts, component = _condensed(G)
    members = {i: node_set(G, part) for i, part in enumerate(parts)}
    for i, nodes in members.items():
        mapping.update((n, i) for n in nodes)
    C.add_nodes_from(range(len(parts)))
    src, dst = component[G.arc_src], component[G.succ.indices]
    across = src != dst
    C.add_edges_from(zip(src[across].tolist(), dst[across].tolist()))
    nx.set_node_attributes(C, members, "members")
    return C


# -- networkx.algorithms.tree.recognition ----------------------------------------------------------
def _nonempty(G):
    if not len(G):
        raise _nx().NetworkXPointlessConcept("G has no nodes.")


@networkx_function(one_pass=True)
def is_tree(G):
    _nonempty(G)
    return len(G) - 1 == G.number_of_edges() and len(_components(G)) == 1


@networkx_function(one_pass=True)
def is_forest(G):
    _nonempty(G)
    labels = weak_labels(G)
    keep = G.edge_mask()
    edges = np.bincount(labels[G.arc_src[keep]], minlength=len(G))
    nodes = np.bincount(labels, minlength=len(G))
    roots = np.unique(labels)
    return bool(np.all(nodes[roots] - 1 == edges[roots]))


def _in_degree_at_most_one(G) -> bool:
    return bool(np.bincount(G.succ.indices, minlength=len(G)).max() <= 1)


@networkx_function(one_pass=True)
def is_arborescence(G):
    return is_tree(G) and _in_degree_at_most_one(G)


@networkx_function(one_pass=True)
def is_branching(G):
    return is_forest(G) and _in_degree_at_most_one(G)

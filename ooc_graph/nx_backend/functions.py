"""The networkx functions this backend serves: each one a networkx signature on top of an
ooc_graph algorithm, returning what networkx returns. Link analysis, traversal, components,
clustering and communities are here; the centralities (HITS, Katz, eigenvector, betweenness,
core numbers) in :mod:`.centrality`, which registers them here when this module is imported.

Adding one is :func:`networkx_function` on a function named as networkx names it (and its name
in ``_ooc_graph_nx.FUNCTIONS``; a test checks both lists agree); ``can_run`` takes the call's
arguments, bound to the function's signature (the graph is still a networkx graph or already a
:class:`StoreGraph`), and returns ``True`` or the reason it cannot serve the call. A function that
returns ``{node: value}`` from an ooc_graph algorithm of the same name and keywords is one line of
:func:`vertex_function`, e.g. ``vertex_function("katz_centrality", "values", prepare=...)``.
"""

from __future__ import annotations

import inspect

import numpy as np

import ooc_graph
from ooc_graph import registry
from ooc_graph.algorithms import UNREACHABLE

from .graph import StoreGraph

__all__ = ["FUNCTIONS", "networkx_function", "vertex_function", "centrality"]

FUNCTIONS: dict = {}  # networkx name -> function (its ``can_run`` attached)


def networkx_function(can_run=None):
    """Register ``fn`` under its name; ``can_run(arguments)`` returns True or a reason."""
    def register(fn):
        fn.can_run = can_run or (lambda arguments: True)
        fn.signature = inspect.signature(fn)
        FUNCTIONS[fn.__name__] = fn
        return fn
    return register


def vertex_function(name: str, array, *, algorithm: str | None = None, prepare=None, weight=None, can_run=None):
    """Register networkx's ``name`` (with networkx's own signature) as ``{node: value}`` of array
    ``array`` of ``ooc_graph.<algorithm or name>`` (a tuple of names: a tuple of dicts), called
    with the same keywords: ``weight`` picks the store's weight attribute (and is passed on: the
    attribute name, or None; ``weight=`` here names the attribute a function without that keyword
    reads, as networkx's ``hits`` reads ``"weight"``), an ``nstart`` dict becomes an array in node
    order, a ``random.Random`` seed an int, ``tol`` becomes ``n·tol`` (networkx's power iterations
    stop when the L1 change falls below it); ``max_iter < 1`` (networkx's loop runs no iteration)
    and a result that did not converge raise networkx's ``PowerIterationFailedConvergence``. An
    empty graph gives empty dicts. ``prepare(G, arguments)``, if given, runs first: it raises
    networkx's errors for the call and may rewrite the arguments."""
    import networkx as nx
    sig = inspect.signature(getattr(nx, name))
    sig = sig.replace(parameters=[p for p in sig.parameters.values()
                                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "backend"])
    target = (algorithm or name, array, prepare, weight)

    def fn(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return _call_vertex(target, dict(bound.arguments))

    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = sig
    return networkx_function(can_run)(fn)


def _call_vertex(target, arguments):
    algorithm, array, prepare, weight = target
    G = arguments.pop("G")
    if prepare is not None:
        prepare(G, arguments)
    if not len(G):
        return tuple({} for _ in array) if isinstance(array, tuple) else {}
    max_iter = arguments.get("max_iter")
    if max_iter is not None and max_iter < 1:
        raise _nx().PowerIterationFailedConvergence(max_iter)
    if "tol" in arguments:
        arguments["tol"] = len(G) * arguments["tol"]
    if arguments.get("nstart") is not None:
        arguments["nstart"] = np.array([float(arguments["nstart"].get(v, 0)) for v in G.nodes])
    if hasattr(arguments.get("seed"), "randrange"):
        arguments["seed"] = arguments["seed"].randrange(2**32)
    if "raise_on_nonconvergence" in registry.get(algorithm).parameters:  # raised as networkx does, below
        arguments["raise_on_nonconvergence"] = False
    r = getattr(ooc_graph, algorithm)(G.store(arguments.get("weight", weight)), **arguments, **_options())
    if not r.converged:
        raise _nx().PowerIterationFailedConvergence(max_iter)
    if isinstance(array, tuple):
        return tuple(_by_node(G, getattr(r, a)) for a in array)
    return _by_node(G, getattr(r, array))


def _by_node(G, values) -> dict:
    """``{node: value}`` of a per-vertex array, as Python numbers."""
    return dict(zip(G.nodes, values.tolist()))


def _options() -> dict:
    import networkx as nx
    cfg = getattr(nx.config.backends, "ooc_graph", None)
    get = (lambda k, d: getattr(cfg, k, d)) if cfg is not None else (lambda k, d: d)
    return {"device": get("device", "auto"), "memory": get("memory", None), "device_memory": get("device_memory", None),
            "progress": get("progress", False)}


def _nx():
    import networkx as nx
    return nx


# -- checks shared by can_run --------------------------------------------------------------------
def _edge_values(G, weight):
    if weight is None:
        return np.ones(0)
    if isinstance(G, StoreGraph):
        w, _ = G.weight_array(weight)
        return np.ones(0) if w is None else w
    return np.asarray([d.get(weight, 1) for _, _, d in G.edges(data=True)], dtype=np.float64)


def _weight_is_name(arguments, name="weight"):
    w = arguments.get(name)
    if w is not None and not isinstance(w, str):
        return f"{name} must be an attribute name (a function of the edge is not supported)"
    return True


def _nonnegative(arguments, name="weight"):
    reason = _weight_is_name(arguments, name)
    if reason is not True:
        return reason
    values = _edge_values(arguments["G"], arguments.get(name))
    if not np.all(np.isfinite(values)):
        return "edge weights must be numbers (not NaN or infinite)"
    if np.any(values < 0):
        return "negative edge weights are not supported"
    return True


def _undirected_unweighted(arguments):
    if arguments["G"].is_directed():
        return "directed clustering (networkx's definition) is not supported; ooc_graph.lcc gives LDBC's"
    if arguments.get("weight") is not None:
        return "weighted clustering is not supported"
    return True


# -- link analysis ---------------------------------------------------------------------------------
def _pagerank_can_run(arguments):
    if arguments.get("nstart") is not None:
        return "nstart is not supported (the iteration starts from the teleport distribution)"
    if arguments.get("dangling") is not None:
        return "dangling is not supported (dangling mass follows personalization, as by default)"
    return _nonnegative(arguments)


@networkx_function(_pagerank_can_run)
def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None, weight="weight",
             dangling=None):
    nx = _nx()
    n = len(G)
    if n == 0:
        return {}
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    p = None
    if personalization is not None:
        p = np.array([float(personalization.get(v, 0)) for v in G.nodes])
        if p.sum() == 0:
            raise ZeroDivisionError("float division by zero (the personalization sums to 0)")
    # networkx stops when the L1 change falls below n * tol
    weighted = weight if G.weight_array(weight)[0] is not None else None
    r = ooc_graph.pagerank(G.store(weighted), alpha=alpha, tol=n * tol, max_iter=max_iter, personalization=p,
                           weight=weighted, raise_on_nonconvergence=False, **_options())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return _by_node(G, r.values)


# -- traversal and shortest paths ------------------------------------------------------------------
def _reached(G, source, cutoff, values, unreached, integral=True):
    """``{node: value}`` of the vertices reached within ``cutoff``, nearest first."""
    keep = values != unreached
    if cutoff is not None:
        keep &= values <= cutoff
    keep[source] = True
    at = np.flatnonzero(keep)
    at = at[np.argsort(values[at], kind="stable")]
    vals = values[at].astype(np.int64) if integral else values[at]
    out = {G.nodes[i]: v for i, v in zip(at.tolist(), vals.tolist())}
    out[G.nodes[source]] = 0  # an int, as networkx's
    return out


@networkx_function()
def single_source_shortest_path_length(G, source, cutoff=None):
    s = G.vertex(source)
    r = ooc_graph.bfs(G.store(), s, **_options())
    return _reached(G, s, cutoff, r.depth, UNREACHABLE)


@networkx_function()
def descendants(G, source):
    if source not in G:
        raise _nx().NetworkXError(f"The node {source} is not in the graph.")
    s = G.index[source]
    depth = ooc_graph.bfs(G.store(), s, **_options()).depth
    return {G.nodes[i] for i in np.flatnonzero((depth != UNREACHABLE) & (depth > 0)).tolist()}


@networkx_function()
def has_path(G, source, target):
    s, t = G.vertex(source), G.vertex(target, "Target")
    return bool(ooc_graph.bfs(G.store(), s, **_options()).depth[t] != UNREACHABLE)


def _distances(G, source, weight):
    s = G.vertex(source)
    distance = ooc_graph.sssp(G.store(weight), s, **_options()).distance
    return s, distance, G.weight_array(weight)[1]


@networkx_function(_nonnegative)
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    s, distance, integral = _distances(G, source, weight)
    return _reached(G, s, cutoff, distance, np.inf, integral)


@networkx_function(_nonnegative)
def single_source_bellman_ford_path_length(G, source, weight="weight"):
    s, distance, integral = _distances(G, source, weight)
    return _reached(G, s, None, distance, np.inf, integral)


def _path_length(G, source, target, weight):
    nx = _nx()
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return 0
    if target not in G:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    s, distance, integral = _distances(G, source, weight)
    d = distance[G.index[target]]
    if not np.isfinite(d):
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return int(d) if integral else float(d)


@networkx_function(_nonnegative)
def dijkstra_path_length(G, source, target, weight="weight"):
    return _path_length(G, source, target, weight)


@networkx_function(_nonnegative)
def bellman_ford_path_length(G, source, target, weight="weight"):
    return _path_length(G, source, target, weight)


# -- components ------------------------------------------------------------------------------------
def _groups(labels):
    """Internal ids grouped by label, groups in label order: for components (labelled with their
    smallest internal id), the order of their first node."""
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    return np.split(order, cuts) if len(order) else []


def _components(G):
    """The (weakly) connected components as arrays of internal ids, in the order of their first node."""
    return _groups(ooc_graph.wcc(G.store(), **_options()).labels) if len(G) else []


def _strong_components(G):
    """The strongly connected components as arrays of internal ids, sinks first as networkx's
    Tarjan yields them (``condensation`` numbers them so): :func:`_sinks_first` on the
    components, in the order of their first node."""
    if not len(G):
        return []
    labels = ooc_graph.scc(G.store(), **_options()).labels  # smallest internal id = first node
    parts = _groups(labels)
    component = np.unique(labels, return_inverse=True)[1].reshape(-1)  # index into parts
    src, dst = component[G.src], component[G.dst]
    across = src != dst
    return [parts[c] for c in _sinks_first(len(parts), src[across], dst[across])]


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
    return ({G.nodes[i] for i in part.tolist()} for part in parts)


def _one_component(G, number) -> bool:
    """Whether ``number(G)`` (a ``number_*_components``) is 1; networkx's error for the null graph."""
    if not len(G):
        raise _nx().NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return number(G) == 1


@networkx_function()
def connected_components(G):
    return _sets(G, _components(G))


@networkx_function()
def number_connected_components(G):
    return len(_components(G))


@networkx_function()
def is_connected(G):
    return _one_component(G, number_connected_components)


@networkx_function()
def node_connected_component(G, n):
    if n not in G:
        raise KeyError(n)
    labels = ooc_graph.wcc(G.store(), **_options()).labels
    return {G.nodes[i] for i in np.flatnonzero(labels == labels[G.index[n]]).tolist()}


@networkx_function()
def weakly_connected_components(G):
    return _sets(G, _components(G))


@networkx_function()
def number_weakly_connected_components(G):
    return len(_components(G))


@networkx_function()
def is_weakly_connected(G):
    return _one_component(G, number_weakly_connected_components)


# networkx's not_implemented_for("undirected") refuses undirected graphs before dispatching
@networkx_function()
def strongly_connected_components(G):
    return _sets(G, _strong_components(G))


@networkx_function()
def number_strongly_connected_components(G):
    return ooc_graph.scc(G.store(), **_options()).num_components if len(G) else 0


@networkx_function()
def is_strongly_connected(G):
    return _one_component(G, number_strongly_connected_components)


# -- clustering and communities --------------------------------------------------------------------
def _per_node(G, nodes, values, zero=None):
    """networkx's ``nodes=`` convention: one node -> its value; an iterable -> a dict of those
    in the graph; None -> a dict of all."""
    def value(i):
        v = values[i]
        return zero if zero is not None and v == 0 else v
    if nodes is not None and nodes in G:
        return value(G.index[nodes])
    at = range(len(G)) if nodes is None else [G.index[v] for v in nodes if v in G]
    return {G.nodes[i]: value(i) for i in at}


@networkx_function()
def triangles(G, nodes=None):
    counts = ooc_graph.triangle_count(G.store(), **_options()).counts.tolist()
    return _per_node(G, nodes, counts)


@networkx_function(_undirected_unweighted)
def clustering(G, nodes=None, weight=None):
    values = ooc_graph.lcc(G.store(), **_options()).values.tolist()
    return _per_node(G, nodes, values, zero=0)  # networkx gives int 0 where there is no triangle


@networkx_function(_undirected_unweighted)
def average_clustering(G, nodes=None, weight=None, count_zeros=True):
    c = clustering(G, nodes)
    c = list(c.values()) if isinstance(c, dict) else [c]
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


def _louvain_can_run(arguments):
    if arguments["G"].is_directed():
        return "directed modularity is not supported (ooc_graph.louvain takes undirected graphs)"
    resolution = arguments.get("resolution", 1)
    if isinstance(resolution, (int, float)) and not resolution > 0:
        return "a resolution of zero or less is not supported (ooc_graph.louvain takes a positive one)"
    reason = _nonnegative(arguments)
    if reason is True:
        with np.errstate(over="ignore"):  # the total is looked at, not warned about
            total = _edge_values(arguments["G"], arguments.get("weight", "weight")).sum()
        if not np.isfinite(total):
            return "edge weights whose total passes the float range are not supported"
    return reason


def _louvain(G, weight, resolution, threshold, max_level, seed):
    """ooc_graph.louvain for networkx's arguments, or None where networkx's answer is every node
    alone (an infinite resolution: no move gains)."""
    if seed is not None and hasattr(seed, "randrange"):  # networkx hands a random.Random
        seed = seed.randrange(2**32)
    if resolution == np.inf:
        return None
    if not threshold >= 0:  # NaN or negative: networkx's levels go on while vertices move, as with 0
        threshold = 0.0
    return ooc_graph.louvain(G.store(weight), resolution=resolution, threshold=threshold, max_level=max_level,
                             seed=seed, weight=weight is not None, **_options())


def _partition(G, labels):
    return list(_sets(G, _groups(labels)))


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


# -- centrality: its own module (it imports the helpers above, so it comes last) -------------------
from . import centrality  # noqa: E402

"""The registry of the networkx functions this backend serves, and what they share.

Each function is a networkx signature on top of the converted graph (:class:`~.graph.StoreGraph`),
returning what networkx returns. They live in modules named after networkx's
(:mod:`.traversal`, :mod:`.weighted`, :mod:`.generic`, :mod:`.components`, :mod:`.dag`,
:mod:`.link_analysis`, :mod:`.centrality`, :mod:`.cluster`, :mod:`.community`, :mod:`.cores`,
:mod:`.structure`, :mod:`.link_prediction`, :mod:`.convert`), each registering its functions here
when imported; their compiled kernels are in :mod:`._kernels` (searches), :mod:`._kernels_structure`
and :mod:`._kernels_brandes`.

Adding one is :func:`networkx_function` on a function named as networkx names it (and its name in
``_ooc_graph_nx.FUNCTIONS``; a test checks both lists agree). ``can_run`` takes the call's
arguments bound to the function's signature (the graph still a networkx graph, or already a
:class:`StoreGraph`) and returns ``True`` or the reason it cannot serve the call; it looks at the
arguments only, never at every edge. What depends on the edges (weights that are not numbers,
negative weights where an algorithm needs them positive) is checked once on the converted arrays
(:class:`~.graph.Weights`); a call it rules out raises ``NotImplementedError`` with the reason,
which networkx treats as ``can_run`` being false (it falls back to networkx where configured).
``one_pass=True`` marks a function that costs networkx about one look at each edge, so that
``should_run`` leaves it to networkx on a graph not yet converted. A function that returns
``{node: value}`` from an ooc_graph algorithm of the same name and keywords is one line of
:func:`vertex_function`, e.g. ``vertex_function("katz_centrality", "values", prepare=...)``.
"""

from __future__ import annotations

import inspect

import numpy as np

import ooc_graph
from ooc_graph import registry

__all__ = ["FUNCTIONS", "networkx_function", "vertex_function"]

FUNCTIONS: dict = {}  # networkx name -> function (its ``can_run`` and ``one_pass`` attached)


def networkx_function(can_run=None, *, one_pass: bool = False, name: str | None = None):
    """Register ``fn`` under its name (or ``name``); ``can_run(arguments)`` returns True or a reason."""
    def register(fn):
        fn.can_run = can_run or (lambda arguments: True)
        fn.signature = inspect.signature(fn)
        fn.one_pass = one_pass
        FUNCTIONS[name or fn.__name__] = fn
        return fn
    return register


def vertex_function(name: str, array, *, algorithm: str | None = None, prepare=None, weight=None, can_run=None,
                    scale_free: bool = False):
    """Register networkx's ``name`` (with networkx's own signature) as ``{node: value}`` of array
    ``array`` of ``ooc_graph.<algorithm or name>`` (a tuple of names: a tuple of dicts), called
    with the same keywords: ``weight`` picks the store's weight attribute (and is passed on: the
    attribute name, or None; ``weight=`` here names the attribute a function without that keyword
    reads, as networkx's ``hits`` reads ``"weight"``), an ``nstart`` dict becomes an array in node
    order, a ``random.Random`` seed an int, ``tol`` becomes ``n·tol`` (networkx's power iterations
    stop when the L1 change falls below it); ``max_iter < 1`` (networkx's loop runs no iteration)
    and a result that did not converge raise networkx's ``PowerIterationFailedConvergence``. An
    empty graph gives empty dicts. ``prepare(G, arguments)``, if given, runs first: it raises
    networkx's errors for the call and may rewrite the arguments. ``scale_free``: the answer does
    not change when every weight is scaled, so weights whose sums would overflow are scaled down
    (:func:`scale_of`)."""
    import networkx as nx
    sig = inspect.signature(getattr(nx, name))
    sig = sig.replace(parameters=[p for p in sig.parameters.values()
                                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "backend"])
    target = (algorithm or name, array, prepare, weight, scale_free)

    def fn(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return _call_vertex(target, dict(bound.arguments))

    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = sig
    return networkx_function(can_run)(fn)


def _call_vertex(target, arguments):
    algorithm, array, prepare, weight, scale_free = target
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
    name = arguments.get("weight", weight)
    scale = 1.0
    if name is not None:
        scale = scale_of(G, numbers(G, name, "array"), scale_free)
    if "raise_on_nonconvergence" in registry.get(algorithm).parameters:  # raised as networkx does, below
        arguments["raise_on_nonconvergence"] = False
    r = getattr(ooc_graph, algorithm)(G.store(name, scale=scale), **arguments, **_options())
    if not r.converged:
        raise _nx().PowerIterationFailedConvergence(max_iter)
    if isinstance(array, tuple):
        return tuple(by_node(G, getattr(r, a)) for a in array)
    return by_node(G, getattr(r, array))


# -- results ---------------------------------------------------------------------------------------
def by_node(G, values) -> dict:
    """``{node: value}`` of a per-vertex array, as Python numbers."""
    return dict(zip(G.nodes, values.tolist()))


def node_set(G, ids) -> set:
    return set(map(G.nodes.__getitem__, ids.tolist()))


def _options() -> dict:
    import networkx as nx
    backends = getattr(getattr(nx, "config", None), "backends", None)
    cfg = getattr(backends, "ooc_graph", None)
    get = (lambda k, d: getattr(cfg, k, d)) if cfg is not None else (lambda k, d: d)
    return {"device": get("device", "auto"), "memory": get("memory", None), "device_memory": get("device_memory", None),
            "progress": get("progress", False)}


def _nx():
    import networkx as nx
    return nx


# -- weights: checked once, on the converted arrays -----------------------------------------------
# What networkx raises where an edge weight is not a number: its Python sums raise TypeError
# (Dijkstra, Bellman-Ford, betweenness, Louvain, Katz, eigenvector), its scipy matrices ValueError.
def _not_a_number(bad, family: str):
    if family == "sum":
        return TypeError(f"unsupported operand type(s) for +: 'int' and '{type(bad).__name__}'")
    return ValueError(f"could not convert {type(bad).__name__} to float: {bad!r}")


def numbers(G, name, family: str = "sum", *, negative_ok: bool = True, default=1, side: str = "succ"):
    """Edge attribute ``name`` of ``G`` (:class:`~.graph.Weights`), as networkx reads it: a value
    that is not a number raises networkx's error for the ``family`` of algorithm ("sum" or "array");
    None (which networkx's Dijkstra takes as a hidden edge), NaN, infinities, integers beyond exact
    sums, and negative values (unless ``negative_ok``) raise ``NotImplementedError`` with the reason."""
    w = G.weights(name, default, side)
    if w.bad is not None and w.bad[0] is not None:
        raise _not_a_number(w.bad[0], family)
    reason = w.unsupported(negative_ok, name)
    if reason is not None:
        raise NotImplementedError(f"ooc_graph: {reason}")
    return w


# Sums of weights up to this (times the node count) cannot overflow float64 (max ~1.8e308).
HUGE = 1e300


def scale_of(G, w, scale_free: bool) -> float:
    """What to divide the weights ``w`` by in the store: 1, or, where sums of them could overflow
    float64 (1e308 weights), their largest magnitude if the algorithm's answer does not change when
    every weight is scaled (eigenvectors, PageRank, HITS: each iteration is normalised); otherwise
    ``NotImplementedError`` (networkx's Python floats overflow in ways a store's sums need not)."""
    top = float(np.abs(w.values).max()) if len(w.values) else 0.0
    if top * max(len(G), 1) <= HUGE:
        return 1.0
    if scale_free:
        return top
    raise NotImplementedError(f"ooc_graph: edge weights up to {top:g}: sums of them overflow float64")


def weight_is_name(arguments, name="weight"):
    w = arguments.get(name)
    if w is not None and not isinstance(w, str):
        return f"{name} must be an attribute name (a function of the edge is not supported)"
    return True


def undirected_unweighted(arguments):
    if arguments["G"].is_directed():
        return "directed clustering (networkx's definition) is not supported; ooc_graph.lcc gives LDBC's"
    if arguments.get("weight") is not None:
        return "weighted clustering is not supported"
    return True


# -- the functions: one module per networkx family (each registers its own) ----------------------
from . import (centrality, cluster, community, components, convert, cores, dag, generic, link_analysis,  # noqa: E402
               link_prediction, structure, traversal, weighted)

FAMILIES = (centrality, cluster, community, components, convert, cores, dag, generic, link_analysis, link_prediction,
            structure, traversal, weighted)  # imported for the functions each registers

"""networkx's entry into the backend (the ``networkx.backends`` entry point)."""

from __future__ import annotations

from ._nxver import _nxver, unsupported
from .functions import FUNCTIONS
from .graph import StoreGraph

# Below this many nodes a call is over before converting the graph would be (should_run).
SMALL = 64


class BackendInterface:
    """What networkx calls: conversions, ``can_run``/``should_run``, and one attribute per
    function it may dispatch here (set from :data:`~ooc_graph.nx_backend.functions.FUNCTIONS`)."""

    @staticmethod
    def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                        preserve_graph_attrs=False, preserve_all_attrs=False, name=None, graph_name=None):
        """A networkx graph as a :class:`StoreGraph`, with the edge attributes the function reads
        (``edge_attrs``: ``{name: default}``) read and checked now; others (``preserve_*``) are
        read from ``G`` when a function asks. A conversion networkx cached for another call on
        the same graph (with other attributes) is reused: the nodes and adjacency are not read again."""
        if isinstance(G, StoreGraph):
            return G
        if unsupported is not None:  # networkx before 3.3 does not ask can_run where backend= is given
            raise NotImplementedError(unsupported)
        converted = _cached(G)
        if converted is None:
            return StoreGraph(G, weights=edge_attrs)
        for attr, default in (edge_attrs or {}).items():
            if attr is not None:
                converted.weights(attr, 1 if default is None else default)
        return converted

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """The networkx graph a :class:`StoreGraph` was made from; results pass unchanged (they are
        already what networkx returns)."""
        return obj.graph if isinstance(obj, StoreGraph) else obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or why this call cannot be served, from the arguments alone (no edge is read)."""
        if unsupported is not None:
            return False
        fn = FUNCTIONS.get(name)
        if fn is None:
            return f"{name} is not implemented by ooc_graph"
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as err:
            return f"unsupported arguments ({err})"
        bound.apply_defaults()
        G = bound.arguments["G"]
        owner = getattr(G, "__networkx_backend__", "networkx")
        if owner not in ("networkx", "ooc_graph"):  # networkx 3.3 hands such graphs over unconverted
            return f"a graph of the {owner!r} backend (not converted to ooc_graph)"
        if G.is_multigraph():
            return "multigraphs are not supported"
        view = _own_view(G)
        if view is not None:
            return (f"{type(G).__name__} overrides networkx's {view!r}, so its views of the edges may disagree (as "
                    "networkx's _AntiGraph, whose adjacency is the complement of its edge view), and networkx's "
                    "functions read them in different ways")
        return fn.can_run(bound.arguments)

    @staticmethod
    def should_run(name, args, kwargs):
        """False (with the reason) where networkx is likely faster: a tiny graph, or an algorithm that
        looks at each edge about once (a search, components) on a graph not converted yet, since the
        conversion reads every edge too. Consulted by networkx's automatic dispatch only, not
        where ``backend="ooc_graph"`` is given."""
        fn = FUNCTIONS.get(name)
        G = args[0] if args else kwargs.get("G")
        if fn is None or G is None or isinstance(G, StoreGraph):
            return True
        from ._kernels import COMPILED
        if fn.__module__.endswith(("traversal", "weighted")) and not COMPILED:
            return "numba is not installed: the traversals would run as Python, slower than networkx's"
        if len(G) < SMALL:
            return f"a graph of {len(G)} nodes: networkx answers before a conversion would be done"
        if fn.one_pass and _cached(G) is None:
            return (f"{name} looks at each edge about once, as converting the graph does; with the graph converted "
                    "(nx.config.cache_converted_graphs and an earlier call) it runs here")
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark the networkx tests this backend is known not to pass, each with its reason."""
        from ._xfail import mark_known_failures
        mark_known_failures(items)


def _cached(G):
    """A :class:`StoreGraph` networkx cached for ``G`` (any attributes), or None."""
    cache = getattr(G, "__networkx_cache__", None)
    if not isinstance(cache, dict):
        return None
    mine = cache.get("backends", {}).get("ooc_graph")
    if not isinstance(mine, dict):
        return None
    return next((g for g in list(mine.values()) if isinstance(g, StoreGraph)), None)


# What networkx's functions read a graph through: a class that overrides one of them may show
# different edges to different functions.
_VIEWS = ("adj", "succ", "pred", "edges", "out_edges", "in_edges", "degree", "in_degree", "out_degree",
          "neighbors", "successors", "predecessors", "adjacency", "__getitem__", "__iter__", "__len__",
          "number_of_edges", "size")


def _own_view(G):
    """The first of :data:`_VIEWS` that ``G``'s class overrides, or None (also for a graph already
    converted)."""
    import networkx as nx
    base = nx.DiGraph if G.is_directed() else nx.Graph
    if isinstance(G, StoreGraph) or not isinstance(G, base):
        return None
    return next((v for v in _VIEWS if getattr(type(G), v, None) is not getattr(base, v, None)), None)


for _name, _fn in FUNCTIONS.items():
    setattr(BackendInterface, _name, staticmethod(_fn))
del _name, _fn

__all__ = ["BackendInterface", "_nxver"]

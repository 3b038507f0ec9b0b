"""networkx's entry into the backend (the ``networkx.backends`` entry point)."""

from __future__ import annotations

from .functions import FUNCTIONS
from .graph import StoreGraph


class BackendInterface:
    """What networkx calls: conversions, ``can_run``/``should_run``, and one attribute per
    function it may dispatch here (set from :data:`~ooc_graph.nx_backend.functions.FUNCTIONS`)."""

    @staticmethod
    def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                        preserve_graph_attrs=False, preserve_all_attrs=False, name=None, graph_name=None):
        """A networkx graph as a :class:`StoreGraph`, with the edge attributes the function reads
        (``edge_attrs``: ``{name: default}``; with ``preserve_edge_attrs``, ``weight`` if present)."""
        if isinstance(G, StoreGraph):
            return G
        weights = dict(edge_attrs or {})
        if (preserve_edge_attrs or preserve_all_attrs) and not weights:
            weights = {"weight": 1}
        return StoreGraph(G, weights=weights)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """The networkx graph a :class:`StoreGraph` was made from; results pass unchanged (they are
        already what networkx returns)."""
        return obj.graph if isinstance(obj, StoreGraph) else obj

    @staticmethod
    def can_run(name, args, kwargs):
        fn = FUNCTIONS.get(name)
        if fn is None:
            return f"{name} is not implemented by ooc_graph"
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as err:
            return f"unsupported arguments ({err})"
        bound.apply_defaults()
        G = bound.arguments["G"]
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
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark the networkx tests this backend is known not to pass, each with its reason."""
        from ._xfail import mark_known_failures
        mark_known_failures(items)


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

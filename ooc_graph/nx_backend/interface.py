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
        return fn.can_run(bound.arguments)

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark the networkx tests this backend is known not to pass, each with its reason."""
        from ._xfail import mark_known_failures
        mark_known_failures(items)


for _name, _fn in FUNCTIONS.items():
    setattr(BackendInterface, _name, staticmethod(_fn))
del _name, _fn

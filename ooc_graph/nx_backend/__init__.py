"""A networkx backend: ``nx.pagerank(G, backend="ooc_graph")`` and friends run here.

networkx finds it through the ``networkx.backends`` entry point
(:class:`~ooc_graph.nx_backend.interface.BackendInterface`) and the ``networkx.backend_info``
one (``_ooc_graph_nx.get_info``). A networkx graph is converted into a
:class:`~ooc_graph.nx_backend.graph.StoreGraph` (its nodes numbered in networkx's order, the
store written to a temporary folder on first use), the ooc_graph algorithm runs, and the answer
comes back as networkx gives it (dicts keyed by node, sets, Python numbers, networkx's
exceptions). ``can_run`` says why a call cannot be served (a multigraph, weights an algorithm
does not take, options it lacks); with ``nx.config.fallback_to_nx`` networkx then runs it itself.
Settings: ``nx.config.backends.ooc_graph.device`` (``"auto"``, ``"cpu"``, ``"gpu"``), ``.memory``,
``.device_memory``. See ``docs/networkx-backend.md``.
"""

from .graph import StoreGraph
from .interface import BackendInterface

__all__ = ["BackendInterface", "StoreGraph"]

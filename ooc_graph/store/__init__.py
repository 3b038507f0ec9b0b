"""The HDF5 graph store (layout: partitioning/FORMAT.md).

``SavedResult`` and ``read_result_file`` come from :mod:`.results`, and the submodules not used to
open a graph (``results``, ``compact``, ``writer``...) are imported the first time they are used
(PEP 562): opening a graph to compute on it loads neither the result files' code nor the writers.
"""

import sys

from .graph import Graph, as_graph, open_graph

__all__ = ["Graph", "as_graph", "open_graph", "SavedResult", "read_result_file"]

# The submodules, imported on first access as attributes (a test checks the list).
_SUBMODULES = frozenset({"chunks", "compact", "contents", "direct", "graph", "labels", "locking", "memory",
                         "results", "stamps", "temporary", "writer", "_format", "_graph_results", "_structure",
                         "_validate"})


def __getattr__(name: str):
    if name in ("SavedResult", "read_result_file"):
        from . import results
        return getattr(results, name)
    if name in _SUBMODULES:
        __import__(f"{__name__}.{name}")  # the import statement's path (-X importtime lists it)
        return sys.modules[f"{__name__}.{name}"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)

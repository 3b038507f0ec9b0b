"""One module per algorithm; each is a small program on the engine's operators (or, where the
algorithm cannot stream, an in-memory one that says so and refuses what does not fit), and each
registers itself with :func:`ooc_graph.registry.algorithm` when it is imported.

An algorithm's module, which defines its result class too, is imported the first time its name
or its result's is used (PEP 562), so that a PageRank call loads ``pagerank.py`` and not the 13
others (issue 31); :data:`ALGORITHMS` and :data:`RESULTS` name each one's module, the former in
the order the command line lists them, and :func:`ooc_graph.registry.algorithms` imports them all. ``ooc_graph.algorithms.bfs`` is the function, as ``ooc_graph.bfs``, however ``bfs.py``
came to be imported (:class:`_Package`).
"""

import sys
import types

from ._result import UNREACHABLE, CentralityResult, Result

# An algorithm's public name -> its module here, in the registry's order.
ALGORITHMS = {"pagerank": "pagerank", "bfs": "bfs", "sssp": "sssp", "wcc": "wcc", "hits": "hits",
              "katz_centrality": "katz", "eigenvector_centrality": "eigenvector", "cdlp": "cdlp",
              "core_number": "core_number", "scc": "scc", "betweenness_centrality": "betweenness",
              "triangle_count": "triangle_count", "lcc": "lcc", "louvain": "louvain"}
# A result class -> the algorithm's module that defines it (CentralityResult, shared, is _result's).
RESULTS = {"PageRankResult": "pagerank", "BFSResult": "bfs", "SSSPResult": "sssp", "WCCResult": "wcc",
           "HITSResult": "hits", "CDLPResult": "cdlp", "CoreResult": "core_number", "SCCResult": "scc",
           "TriangleCountResult": "triangle_count", "LCCResult": "lcc", "LouvainResult": "louvain"}

__all__ = [*ALGORITHMS, "UNREACHABLE", "Result", "PageRankResult", "BFSResult", "SSSPResult", "WCCResult",
           "CentralityResult", "HITSResult", "CDLPResult", "CoreResult", "SCCResult", "TriangleCountResult",
           "LCCResult", "LouvainResult"]


# The submodules not named as their algorithm, imported on first access as attributes (a test
# checks the list).
_SUBMODULES = frozenset({"katz", "eigenvector", "betweenness", "_common", "_inmemory", "_options",
                         "_pagerank_steps", "_result", "_wedges"})


def __getattr__(name: str):
    module = ALGORITHMS.get(name) or RESULTS.get(name) or (name if name in _SUBMODULES else None)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__, the import statement's path: -X importtime lists the module under its own name
    __import__(f"{__name__}.{module}")
    value = sys.modules[f"{__name__}.{module}"]
    if name in ALGORITHMS or name in RESULTS:
        value = getattr(value, name)
    globals()[name] = value  # once: later look-ups do not come here
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)


class _Package(types.ModuleType):
    """The package's class: the import system binds a submodule on its package once it has run it
    (``algorithms.bfs = <module bfs>``); where the module is named as its algorithm, the package's
    name stays the function (as when this package imported every algorithm itself)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and ALGORITHMS.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

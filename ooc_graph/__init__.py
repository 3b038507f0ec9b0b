"""ooc_graph: out-of-core, multi-GPU graph processing for Python.

>>> import ooc_graph
>>> G = ooc_graph.convert("edges.txt", "g.h5", directed=False)   # doctest: +SKIP
>>> ooc_graph.pagerank(G).values                                 # doctest: +SKIP

``import ooc_graph`` loads only the exceptions: every other name (and every submodule, as
``ooc_graph.runtime`` or ``ooc_graph.generate``) is imported the first time it is used (PEP 562),
so that a process imports what its call needs, no more (issue 31: ``ooc_graph.pagerank`` loads
the engine and the store, not ingestion nor the distributed runtime).
"""

__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it (dynamic version)

import sys  # noqa: E402

# typing.TYPE_CHECKING without importing typing (with re, enum and functools: ~20 ms of a bare
# interpreter, what `ooc-graph --version` would spend on it); type checkers take any TYPE_CHECKING
TYPE_CHECKING = False

from .errors import (ConvergenceError, DeviceError, FormatVersionError, InputError, JobCancelled,  # noqa: E402
                     JobError, OocGraphError, ParameterError, StoreError)

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ below imports these
    from . import generate
    from .algorithms import (UNREACHABLE, betweenness_centrality, bfs, cdlp, core_number, eigenvector_centrality,
                             hits, katz_centrality, lcc, louvain, pagerank, scc, sssp, triangle_count, wcc)
    from .ingest import convert
    from .runtime import Job, submit
    from .store import Graph, open_graph as open  # noqa: A001

__all__ = ["convert", "open", "Graph", "generate", "pagerank", "bfs", "sssp", "wcc", "hits", "katz_centrality",
           "eigenvector_centrality", "cdlp", "core_number", "scc", "betweenness_centrality", "triangle_count", "lcc",
           "louvain", "UNREACHABLE", "submit", "Job",
           "OocGraphError", "InputError", "StoreError", "FormatVersionError", "ParameterError", "DeviceError",
           "JobError", "JobCancelled", "ConvergenceError"]

# A public name -> (the module that defines it, its name there).
_LAZY = {name: ("ooc_graph.algorithms", name) for name in (
    "pagerank", "bfs", "sssp", "wcc", "hits", "katz_centrality", "eigenvector_centrality", "cdlp", "core_number",
    "scc", "betweenness_centrality", "triangle_count", "lcc", "louvain", "UNREACHABLE")} | {
    "convert": ("ooc_graph.ingest", "convert"), "Graph": ("ooc_graph.store", "Graph"),
    "open": ("ooc_graph.store", "open_graph"), "submit": ("ooc_graph.runtime", "submit"),
    "Job": ("ooc_graph.runtime", "Job")}
# The submodules and subpackages, imported on first access as attributes (a test checks the list).
_SUBMODULES = frozenset({"algorithms", "cli", "config", "engine", "errors", "generate", "ingest", "kernels",
                         "nx_backend", "partitioning", "profile", "registry", "runtime", "store",
                         "_cuda_start", "_memory", "_parallel", "_progress", "_records", "_signals"})


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(_imported(module), attribute)
    elif name in _SUBMODULES:
        value = _imported(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # once: later look-ups do not come here
    return value


def _imported(module: str):
    # __import__, the import statement's path, not importlib.import_module: -X importtime lists
    # only what comes that way (else a module's time shows as its importer's own)
    __import__(module)
    return sys.modules[module]


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)

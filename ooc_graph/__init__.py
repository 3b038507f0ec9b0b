"""ooc_graph: out-of-core, multi-GPU graph processing for Python.

>>> import ooc_graph
>>> G = ooc_graph.convert("edges.txt", "g.h5", directed=False)   # doctest: +SKIP
>>> ooc_graph.pagerank(G).values                                 # doctest: +SKIP
"""

__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it (dynamic version)

from . import generate  # noqa: E402
from .algorithms import (UNREACHABLE, betweenness_centrality, bfs, cdlp, core_number,  # noqa: E402
                         eigenvector_centrality, hits, katz_centrality, lcc, louvain, pagerank, scc, sssp,
                         triangle_count, wcc)
from .errors import (ConvergenceError, DeviceError, FormatVersionError, InputError, JobCancelled,  # noqa: E402
                     JobError, OocGraphError, ParameterError, StoreError)
from .ingest import convert  # noqa: E402
from .runtime import Job, submit  # noqa: E402
from .store import Graph, open_graph as open  # noqa: E402,A001

__all__ = ["convert", "open", "Graph", "generate", "pagerank", "bfs", "sssp", "wcc", "hits", "katz_centrality",
           "eigenvector_centrality", "cdlp", "core_number", "scc", "betweenness_centrality", "triangle_count", "lcc",
           "louvain", "UNREACHABLE", "submit", "Job",
           "OocGraphError", "InputError", "StoreError", "FormatVersionError", "ParameterError", "DeviceError",
           "JobError", "JobCancelled", "ConvergenceError"]

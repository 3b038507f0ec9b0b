"""One module per algorithm; each is a small program on the engine's operators (or, where the
algorithm cannot stream, an in-memory one that says so and refuses what does not fit), and each
registers itself with :func:`ooc_graph.registry.algorithm` (imported here in the order the
command line lists them)."""

from ._result import (UNREACHABLE, BFSResult, CDLPResult, CentralityResult, CoreResult, HITSResult, LCCResult,
                      LouvainResult, PageRankResult, Result, SCCResult, SSSPResult, TriangleCountResult,
                      WCCResult)
from .pagerank import pagerank  # noqa: I001 - the registry's order
from .bfs import bfs
from .sssp import sssp
from .wcc import wcc
from .hits import hits
from .katz import katz_centrality
from .eigenvector import eigenvector_centrality
from .cdlp import cdlp
from .core_number import core_number
from .scc import scc
from .betweenness import betweenness_centrality
from .triangle_count import triangle_count
from .lcc import lcc
from .louvain import louvain

__all__ = ["pagerank", "bfs", "sssp", "wcc", "hits", "katz_centrality", "eigenvector_centrality", "cdlp",
           "core_number", "scc", "betweenness_centrality", "triangle_count", "lcc", "louvain",
           "UNREACHABLE", "Result", "PageRankResult", "BFSResult", "SSSPResult", "WCCResult", "CentralityResult",
           "HITSResult", "CDLPResult", "CoreResult", "SCCResult", "TriangleCountResult", "LCCResult",
           "LouvainResult"]

"""One module per algorithm; each is a small program on the engine's operators (or, where the
algorithm cannot stream, an in-memory one that says so and refuses what does not fit)."""

from ._result import (UNREACHABLE, BFSResult, CDLPResult, CentralityResult, CoreResult, HITSResult, LCCResult,
                      LouvainResult, PageRankResult, Result, SCCResult, SSSPResult, TriangleCountResult,
                      WCCResult)
from .betweenness import betweenness_centrality
from .bfs import bfs
from .cdlp import cdlp
from .core_number import core_number
from .eigenvector import eigenvector_centrality
from .hits import hits
from .katz import katz_centrality
from .lcc import lcc
from .louvain import louvain
from .pagerank import pagerank
from .scc import scc
from .sssp import sssp
from .triangle_count import triangle_count
from .wcc import wcc

ALGORITHMS = {"pagerank": pagerank, "bfs": bfs, "sssp": sssp, "wcc": wcc, "hits": hits,
              "katz_centrality": katz_centrality, "eigenvector_centrality": eigenvector_centrality, "cdlp": cdlp,
              "core_number": core_number, "scc": scc, "betweenness_centrality": betweenness_centrality,
              "triangle_count": triangle_count, "lcc": lcc, "louvain": louvain}

__all__ = ["pagerank", "bfs", "sssp", "wcc", "hits", "katz_centrality", "eigenvector_centrality", "cdlp",
           "core_number", "scc", "betweenness_centrality", "triangle_count", "lcc", "louvain", "ALGORITHMS",
           "UNREACHABLE", "Result", "PageRankResult", "BFSResult", "SSSPResult", "WCCResult", "CentralityResult",
           "HITSResult", "CDLPResult", "CoreResult", "SCCResult", "TriangleCountResult", "LCCResult",
           "LouvainResult"]

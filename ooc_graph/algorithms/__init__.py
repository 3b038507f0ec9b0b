"""One module per algorithm; each is a small program on the engine's operators."""

from ._result import (UNREACHABLE, BFSResult, CDLPResult, CentralityResult, CoreResult, HITSResult, PageRankResult,
                      Result, SCCResult, SSSPResult, WCCResult)
from .betweenness import betweenness_centrality
from .bfs import bfs
from .cdlp import cdlp
from .core_number import core_number
from .eigenvector import eigenvector_centrality
from .hits import hits
from .katz import katz_centrality
from .pagerank import pagerank
from .scc import scc
from .sssp import sssp
from .wcc import wcc

ALGORITHMS = {"pagerank": pagerank, "bfs": bfs, "sssp": sssp, "wcc": wcc, "hits": hits,
              "katz_centrality": katz_centrality, "eigenvector_centrality": eigenvector_centrality, "cdlp": cdlp,
              "core_number": core_number, "scc": scc, "betweenness_centrality": betweenness_centrality}

__all__ = ["pagerank", "bfs", "sssp", "wcc", "hits", "katz_centrality", "eigenvector_centrality", "cdlp",
           "core_number", "scc", "betweenness_centrality", "ALGORITHMS", "UNREACHABLE", "Result",
           "PageRankResult", "BFSResult", "SSSPResult", "WCCResult", "CentralityResult", "HITSResult", "CDLPResult",
           "CoreResult", "SCCResult"]

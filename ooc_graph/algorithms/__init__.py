"""One module per algorithm; each is a small program on the engine's operators."""

from ._result import UNREACHABLE, BFSResult, PageRankResult, Result, SSSPResult, WCCResult
from .bfs import bfs
from .pagerank import pagerank
from .sssp import sssp
from .wcc import wcc

ALGORITHMS = {"pagerank": pagerank, "bfs": bfs, "sssp": sssp, "wcc": wcc}

__all__ = ["pagerank", "bfs", "sssp", "wcc", "ALGORITHMS", "UNREACHABLE", "Result", "PageRankResult",
           "BFSResult", "SSSPResult", "WCCResult"]

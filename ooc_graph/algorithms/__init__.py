"""One module per algorithm; each is a small program on the engine's operators (or, where the
algorithm cannot stream, an in-memory one that says so and refuses what does not fit)."""

from ._result import (UNREACHABLE, BFSResult, LCCResult, LouvainResult, PageRankResult, Result, SSSPResult,
                      TriangleCountResult, WCCResult)
from .bfs import bfs
from .lcc import lcc
from .louvain import louvain
from .pagerank import pagerank
from .sssp import sssp
from .triangle_count import triangle_count
from .wcc import wcc

ALGORITHMS = {"pagerank": pagerank, "bfs": bfs, "sssp": sssp, "wcc": wcc, "triangle_count": triangle_count,
              "lcc": lcc, "louvain": louvain}

__all__ = ["pagerank", "bfs", "sssp", "wcc", "triangle_count", "lcc", "louvain", "ALGORITHMS", "UNREACHABLE", "Result",
           "PageRankResult", "BFSResult", "SSSPResult", "WCCResult", "TriangleCountResult", "LCCResult",
           "LouvainResult"]

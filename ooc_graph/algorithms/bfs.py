"""Breadth-first search as a min-relaxation of depths (one pass per level at most)."""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import algorithm

from . import _options as _o
from ._common import Run, as_graph, unreached
from ._result import UNREACHABLE, Result

__all__ = ["bfs", "BFSResult"]


@record(repr=False)  # the short __repr__ of Result
class BFSResult(Result):
    """``depth`` is ``UNREACHABLE`` (2**63 - 1, as Graphalytics) where no path exists;
    ``parent`` (internal ids) is -1 for the source and unreachable vertices: ``to_dict``,
    ``to_pandas`` and ``to_arrow`` give original ids, and None / null there."""

    depth: np.ndarray = None
    parent: np.ndarray = None
    _arrays: tuple = ("depth", "parent")
    _vertex_arrays: tuple = ("parent",)

    @property
    def reachable(self) -> np.ndarray:
        return self.depth != UNREACHABLE


@algorithm(result=BFSResult, options=[_o.SOURCE, _o.EXECUTION])
def bfs(G, source, *, memory=None, device: str = "auto", device_memory=None,
        execution: str = "auto", profile: bool = False, store=False, output: str = "numpy") -> BFSResult:
    """Depth (hops from ``source`` along out-arcs) and a BFS-tree parent of every vertex.

    ``source`` is an original vertex id. Unreachable vertices have depth ``UNREACHABLE``
    (2**63 - 1) and parent -1; so has the source's parent. ``parent[v]`` is the smallest vertex
    one level above v with an arc to v, so results are deterministic. ``execution="async"``
    iterates each loaded chunk to local convergence within a pass (WolfGraph); ``"auto"`` does so
    once a streamed traversal has needed many passes; ``"sync"`` never. ``memory``, ``device``,
    ``device_memory``, ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2], [3, 2]]), os.path.join(tempfile.mkdtemp(), "p.h5"),
    ...                       progress=False)
    >>> r = ooc_graph.bfs(G, source=0, device="cpu")
    >>> r.depth.tolist()[:3], r.reachable.tolist(), r.parent.tolist()
    ([0, 1, 2], [True, True, True, False], [-1, 0, 1, -1])
    """
    g = as_graph(G)
    s = g.vertex_id(source)  # validated before any chunk is read
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.int64, np.int64))
    eng, xp = run.engine, run.engine.backend.xp
    depth = unreached(eng, s)
    levels, parent = eng.shortest_paths(depth, plus=1.0, source=s, execution=execution,
                                        int_unreachable=UNREACHABLE)
    # Depths to int64 on the backend's device: on a GPU the host-side conversion made BFS several
    # times slower than the identical SSSP on R-MAT-25 (benchmarks/RESULTS.md).
    # One temporary, not four (3 ms of a 50 ms BFS on road FLA on the CPU); with the compiled CPU
    # kernels none, in place, and none after their whole BFS, which wrote them so.
    convert = getattr(eng.backend.kernels, "int_levels", None)
    out = None if convert is None else convert(depth, UNREACHABLE)
    if out is None:
        out = xp.full(g.num_vertices, UNREACHABLE, dtype=np.int64)
        xp.copyto(out, depth, casting="unsafe", where=xp.isfinite(depth))
    return run.finish(BFSResult, "bfs", {"source": source if isinstance(source, str) else int(source),
                                                 "execution": execution}, levels, True, store,
                      depth=eng.result(out), parent=eng.result(parent, gathered=False))

"""Triangle counting, global and per vertex, by oriented wedge intersection (in memory)."""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record
from ooc_graph.errors import ParameterError
from ooc_graph.registry import algorithm

from . import _wedges
from ._inmemory import InMemoryRun
from ._result import Result

__all__ = ["triangle_count", "TriangleCountResult"]
# Working set: the CSR read whole, every arc as int64 ids and keys, the sorted pairs.
BYTES_PER_ARC, BYTES_PER_VERTEX = 96, 64


@record(repr=False)  # the short __repr__ of Result
class TriangleCountResult(Result):
    """``counts[v]``: the triangles that contain v; ``total``: the triangles of the graph."""

    counts: np.ndarray = None
    _arrays: tuple = ("counts",)

    @property
    def total(self) -> int:
        return int(self.counts.sum()) // 3

    def _details(self) -> str:
        return f", {self.total:,} triangles"


@algorithm(result=TriangleCountResult, options=())
def triangle_count(G, *, memory=None, device: str = "auto", device_memory=None,
                   store=False) -> TriangleCountResult:
    """Triangles of an undirected graph, per vertex and in total.

    ``counts[v]`` is how many triangles contain v; ``total`` the number of triangles (as
    networkx's ``triangles`` and cuGraph's ``triangle_count``). Self-loops and repeated edges are ignored. A directed store is refused (as networkx does);
    :func:`~ooc_graph.lcc` covers directed graphs. Runs **in memory**: the CSR is read whole
    onto the device and the neighbour pairs are kept there, about ``BYTES_PER_ARC`` bytes per
    stored arc; a graph that does not fit ``memory`` (``device_memory`` on a GPU) is refused
    before anything is read. Wedges are then checked in blocks within what is left. With
    ``gpus=``/``workers=``/``client=`` every worker holds the graph and checks a share of them.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]),
    ...                       os.path.join(tempfile.mkdtemp(), "t.h5"), directed=False, progress=False)
    >>> r = ooc_graph.triangle_count(G, device="cpu")
    >>> r.counts.tolist(), r.total
    ([1, 1, 1, 0], 1)
    """
    run = InMemoryRun(G, "triangle_count", memory=memory, device=device, device_memory=device_memory,
                      per_arc=BYTES_PER_ARC, per_vertex=BYTES_PER_VERTEX)
    g, xp = run.graph, run.xp
    if g.directed:
        raise ParameterError(f"{g.path}: triangle_count needs an undirected graph (this store is directed; "
                             "convert with directed=False, or use lcc())")
    src, dst = run.arcs()
    a, b, arcs = _wedges.neighbour_pairs(xp, src, dst, g.num_vertices)
    del src, dst
    counts, _, wedges = _wedges.count(xp, g.num_vertices, a, b, arcs, spare=run.spare, comm=run.comm,
                                      kernels=run.backend.kernels, report=run.listened())
    run.stats.update(arcs_processed=int(g.num_arcs), wedges=wedges)
    return run.finish(TriangleCountResult, {}, 1, True, store, counts=counts)

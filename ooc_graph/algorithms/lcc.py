"""Local clustering coefficient (LDBC Graphalytics LCC), by oriented wedge intersection (in memory)."""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import algorithm

from . import _wedges
from ._inmemory import InMemoryRun
from ._result import Result
from .triangle_count import BYTES_PER_ARC, BYTES_PER_VERTEX

__all__ = ["lcc", "LCCResult"]


@record(repr=False)  # the short __repr__ of Result
class LCCResult(Result):
    """``values[v]``: v's local clustering coefficient (LDBC Graphalytics definition)."""

    values: np.ndarray = None
    _arrays: tuple = ("values",)

    def _details(self) -> str:
        return f", average {float(self.values.mean()):.4f}" if len(self.values) else ""


@algorithm(result=LCCResult, options=())
def lcc(G, *, memory=None, device: str = "auto", device_memory=None, store=False) -> LCCResult:
    """Local clustering coefficient of every vertex, as LDBC Graphalytics defines it.

    ``N(v)`` is the set of v's neighbours over arcs in either direction, v itself excluded, and
    ``d = |N(v)|``. ``values[v]`` is the number of arcs ``u→w`` with ``u, w ∈ N(v)``, divided by
    ``d (d − 1)``; 0 where ``d < 2``. On an undirected graph each edge is two arcs, so this is
    networkx's ``clustering`` (2 triangles / d (d − 1)); on a directed graph an arc counts once
    per direction. Repeated arcs and self-loops are ignored, weights too.

    Runs **in memory** like :func:`~ooc_graph.triangle_count` (same budget rule, same
    distribution over workers).

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]),
    ...                       os.path.join(tempfile.mkdtemp(), "t.h5"), directed=False, progress=False)
    >>> np.round(ooc_graph.lcc(G, device="cpu").values, 4).tolist()
    [1.0, 1.0, 0.3333, 0.0]
    """
    run = InMemoryRun(G, "lcc", memory=memory, device=device, device_memory=device_memory,
                      per_arc=BYTES_PER_ARC, per_vertex=BYTES_PER_VERTEX)
    g, xp = run.graph, run.xp
    n = g.num_vertices
    src, dst = run.arcs()
    a, b, arcs = _wedges.neighbour_pairs(xp, src, dst, n)
    del src, dst
    _, closing, wedges = _wedges.count(xp, n, a, b, arcs, spare=run.spare, comm=run.comm,
                                       kernels=run.backend.kernels, report=run.listened())
    d = (xp.bincount(a, minlength=n) + xp.bincount(b, minlength=n)).astype(np.float64)
    values = xp.where(d > 1, closing / xp.maximum(d * (d - 1), 1.0), 0.0)
    run.stats.update(arcs_processed=int(g.num_arcs), wedges=wedges)
    return run.finish(LCCResult, {}, 1, True, store, values=values)

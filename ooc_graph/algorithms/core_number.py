"""Core numbers (k-cores) by peeling, with frontier sums on the operator."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import algorithm

from ._common import Run
from ._result import Result, on_host

__all__ = ["core_number", "CoreResult"]
log = logging.getLogger("ooc_graph.core_number")


@record(repr=False)  # the short __repr__ of Result
class CoreResult(Result):
    """``core[v]``: the largest k such that v belongs to the k-core."""

    core: np.ndarray = None
    _arrays: tuple = ("core",)

    def k_core(self, k: int | None = None) -> np.ndarray:
        """Original ids of the vertices of the k-core (default: the main core, the largest k)."""
        core = on_host(self.core)
        if k is None:
            k = int(core.max()) if core.size else 0
        return self.vertices[core >= k]


@algorithm(result=CoreResult, options=())
def core_number(G, *, memory=None, device: str = "auto", device_memory=None, profile: bool = False,
                store=False, output: str = "numpy") -> CoreResult:
    """Core number of every vertex (the largest k whose k-core holds it), as networkx's ``core_number``.

    The k-core is the largest subgraph in which every vertex has degree at least k.

    Degrees count neighbours over arcs; on a directed graph in- and out-arcs both (networkx's
    ``in + out`` degree). Self-loops are ignored (networkx refuses graphs with them). Parallel arcs
    of a store built with ``dedupe=False`` count once each. Peeling: at level k, every remaining
    vertex of degree ≤ k gets core number k and leaves, and one frontier pass of the edge operator
    (``"src != dst"`` summed from the vertices that left; skipping chunks without one) lowers
    their neighbours' degrees, until none is left at k; then k rises to the smallest remaining
    degree. ``result.k_core(k)`` lists a k-core's vertices. ``memory``, ``device``,
    ``device_memory``, ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> edges = np.array([[0, 1], [1, 2], [2, 0], [2, 3]])
    >>> G = ooc_graph.convert(edges, os.path.join(tempfile.mkdtemp(), "k.h5"), directed=False, progress=False)
    >>> r = ooc_graph.core_number(G, device="cpu")
    >>> r.core.tolist(), r.k_core(2).tolist()
    ([2, 2, 2, 1], [0, 1, 2])
    """
    run = Run(G, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.int64,))
    g, eng, xp = run.graph, run.engine, run.engine.backend.xp
    n = g.num_vertices
    ids = xp.arange(n, dtype=np.float64)  # "src != dst" over ids: 1 except on self-loops
    degree = eng.edge_map("src != dst", ids, direction="both")
    core = xp.zeros(n, dtype=np.int64)
    alive = xp.ones(n, dtype=bool)
    k, steps, left = 0, 0, n
    while left:
        k = max(k, int(degree[alive].min()))
        while True:
            peel = alive & (degree <= k)
            count = int(peel.sum())
            if not count:
                break
            steps += 1
            core[peel] = k
            alive &= ~peel
            left -= count
            if left:
                degree -= eng.edge_map("src != dst", ids, frontier=peel, direction="both")
            eng.report(steps, left)
            log.info("k=%d: %d vertices peeled, %d left", k, count, left)
    return run.finish(CoreResult, "core_number", {}, steps, True, store, core=eng.result(core))

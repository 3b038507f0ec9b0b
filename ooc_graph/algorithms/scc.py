"""Strongly connected components by coloring (min-label propagation) and backward reachability."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import algorithm

from ._common import Run
from ._result import LabelsResult

__all__ = ["scc", "SCCResult"]
log = logging.getLogger("ooc_graph.scc")


@record(repr=False)  # the short __repr__ of Result
class SCCResult(LabelsResult):
    """``labels[v]`` is the smallest vertex id of v's strongly connected component."""

    @property
    def num_components(self) -> int:
        return self._distinct_labels()


@algorithm(result=SCCResult, options=())
def scc(G, *, memory=None, device: str = "auto", device_memory=None, profile: bool = False,
        store=False, output: str = "numpy") -> SCCResult:
    """Label every vertex with the smallest vertex id of its strongly connected component.

    Coloring (Orzan; Slota et al.): each round, every remaining vertex takes the smallest id
    among the remaining vertices that reach it (min-label propagation along the arcs, frontier
    passes over the CEL), so a vertex whose color is its own id is the smallest of its component;
    its component is the vertices of its color that reach it, found by propagating against the
    arcs within the color (frontier passes over the out-CSR). Those components leave and the next
    round alternates the two directions, so that chains run either way finish in one round. A
    round removes at least one component; graphs whose components form long chains in both id
    orders take many rounds. Labels are original vertex ids. On an undirected graph these are the
    connected components, found as :func:`~ooc_graph.wcc` finds them (hooking and pointer jumping:
    a few passes where colouring would take two per hop of the diameter); ``result.iterations``
    then counts their passes. ``memory``, ``device``, ``device_memory``, ``profile``, ``store`` and ``output``
    are as for :func:`~ooc_graph.pagerank`.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> edges = np.array([[0, 1], [1, 0], [1, 2], [2, 3], [3, 2]])
    >>> G = ooc_graph.convert(edges, os.path.join(tempfile.mkdtemp(), "s.h5"), progress=False)
    >>> ooc_graph.scc(G, device="cpu").labels.tolist()
    [0, 0, 2, 2]
    """
    run = Run(G, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.int64,))
    g, eng, xp = run.graph, run.engine, run.engine.backend.xp
    n = g.num_vertices
    ids = xp.arange(n, dtype=np.float64)
    label = xp.full(n, -1, dtype=np.int64)
    remaining = xp.ones(n, dtype=bool)
    left, rounds = n, 0
    along, against = "in", "out"
    if not g.directed:  # the connected components: hooking and pointer jumping (as wcc), not colouring
        label, rounds = eng.hook_components()
        left = 0
    while left:
        rounds += 1
        color = xp.where(remaining, ids, np.inf)
        frontier = remaining
        while bool(frontier.any()):  # color = the smallest id that reaches the vertex
            cand = eng.edge_map("src", color, monoid="min", frontier=frontier, direction=along)
            frontier = remaining & (cand < color)
            color = xp.where(frontier, cand, color)
        marked = remaining & (color == ids)  # the roots: smallest of their components
        frontier = marked
        while bool(frontier.any()):  # the vertices of a root's color that reach it
            key = xp.where(frontier, color, -1.0)
            hit = eng.edge_map("src == dst", key, x_dst=color, monoid="or", frontier=frontier, direction=against)
            frontier = remaining & ~marked & (hit != 0)
            marked |= frontier
        label[marked] = color[marked].astype(np.int64)
        remaining &= ~marked
        left = int(remaining.sum())
        eng.report(rounds, left)
        log.info("round %d: %d vertices left", rounds, left)
        along, against = against, along
    if g.labels is not None:
        label = eng.vertex_array("labels")[label]
    return run.finish(SCCResult, "scc", {}, rounds, True, store, labels=eng.result(label))

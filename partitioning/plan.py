"""The worker partition plan: which worker owns which sub-graphs, contiguous runs of destination
intervals balanced by arcs.

Sub-graphs are consecutive in the CEL, so a worker's share is one range of CEL arcs and one range
of vertices (the destinations it alone writes). Every worker computes the same plan from the store.
"""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record
from ooc_graph.errors import ParameterError


@record(frozen=True)
class Partition:
    rank: int
    size: int
    intervals: tuple  # destination intervals [i0, i1)
    arcs: tuple       # CEL arcs [a0, a1)
    vertices: tuple   # vertices [v0, v1): the destinations this worker writes

    @property
    def num_arcs(self) -> int:
        return self.arcs[1] - self.arcs[0]


def plan(graph, parts: int) -> list[Partition]:
    """``parts`` partitions of ``graph``, each a contiguous run of whole sub-graphs whose arc
    count is as close to ``num_arcs / parts`` as interval boundaries allow (some may be empty
    when the graph has fewer intervals than parts).

    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
    ...                       os.path.join(tempfile.mkdtemp(), "c.h5"), interval_size=1, progress=False)
    >>> [(p.arcs, p.vertices) for p in plan(G, 2)]
    [((0, 2), (0, 2)), ((2, 4), (2, 4))]
    """
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ParameterError(f"the number of partitions must be a positive integer (got {parts!r})")
    bounds = np.asarray(graph.intervals, np.int64)
    k = len(bounds) - 1
    offsets, _, bdst = graph.blocks
    offsets, bdst = np.asarray(offsets, np.int64), np.asarray(bdst, np.int64)
    start = offsets[np.searchsorted(bdst, np.arange(k + 1), side="left")]  # first arc of each sub-graph
    start[k] = graph.num_arcs
    cuts = [0]
    for p in range(1, parts):
        target = graph.num_arcs * p / parts
        i = int(np.searchsorted(start, target, side="left"))
        if 0 < i <= k and target - start[i - 1] < start[i] - target:
            i -= 1  # the nearer boundary
        cuts.append(min(max(i, cuts[-1]), k))
    cuts.append(k)
    return [Partition(r, parts, (cuts[r], cuts[r + 1]), (int(start[cuts[r]]), int(start[cuts[r + 1]])),
                      (int(bounds[cuts[r]]), int(bounds[cuts[r + 1]]))) for r in range(parts)]

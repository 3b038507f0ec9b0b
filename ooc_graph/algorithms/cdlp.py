"""Community detection by label propagation (LDBC Graphalytics CDLP) on the operator."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import Option, algorithm

from ._common import Run, check_positive_int
from ._result import LabelsResult

__all__ = ["cdlp", "CDLPResult"]
log = logging.getLogger("ooc_graph.cdlp")


@record(repr=False)  # the short __repr__ of Result
class CDLPResult(LabelsResult):
    """``labels[v]``: v's community label (an original vertex id) after label propagation."""

    @property
    def num_communities(self) -> int:
        return self._distinct_labels()


@algorithm(result=CDLPResult, options=[
    Option("--max-iter", int, "the exact number of label propagation iterations", 10),
])
def cdlp(G, *, max_iter: int = 10, memory=None, device: str = "auto", device_memory=None,
         profile: bool = False, store=False, output: str = "numpy") -> CDLPResult:
    """Community labels by synchronous label propagation, as LDBC Graphalytics defines CDLP.

    Every vertex starts with its own id as label; each of exactly ``max_iter`` iterations gives
    every vertex the most frequent label among its neighbours, the smallest such label on a tie,
    all at once (from the previous iteration's labels); a vertex without neighbours keeps its
    label. On a directed graph both in- and out-neighbours count, and a neighbour joined both ways
    counts twice (the specification's rule). Labels are original vertex ids. Each iteration is one
    ``most_frequent`` pass of the edge operator (two on a directed graph: the CEL and the out-CSR).
    ``memory``, ``device``, ``device_memory``, ``profile``, ``store`` and ``output`` are as for
    :func:`~ooc_graph.pagerank`.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> edges = np.array([[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [2, 3]])
    >>> G = ooc_graph.convert(edges, os.path.join(tempfile.mkdtemp(), "c.h5"), directed=False, progress=False)
    >>> ooc_graph.cdlp(G, device="cpu", max_iter=5).labels.tolist()
    [0, 0, 0, 2, 2, 2]
    """
    max_iter = check_positive_int("max_iter", max_iter)
    run = Run(G, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.int64,))
    g, eng, xp = run.graph, run.engine, run.engine.backend.xp
    labels = xp.arange(g.num_vertices, dtype=np.float64)  # internal ids keep the original ids' order
    direction = "both" if g.directed else "in"
    for it in range(1, max_iter + 1):
        new = eng.edge_map("src", labels, monoid="most_frequent", out=labels.copy(), direction=direction)
        changed = int((new != labels).sum())
        labels = new
        eng.report(it, changed)
        log.info("iteration %d: %d labels changed", it, changed)
    out = labels.astype(np.int64)
    if g.labels is not None:
        out = eng.vertex_array("labels")[out]
    return run.finish(CDLPResult, "cdlp", {"max_iter": max_iter}, max_iter, True, store, labels=eng.result(out))

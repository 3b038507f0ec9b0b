"""PageRank's steps in the engine loop (:mod:`ooc_graph.engine.loop`): the pull over the in-arcs
and the fused update of one iteration; the teleport weights of a personalization."""

from __future__ import annotations

import numpy as np

from ooc_graph import config
from ooc_graph.engine.loop import Steps
from ooc_graph.errors import ParameterError

from ._common import initial_vector


class PageRankSteps(Steps):
    """PageRank's steps: the pull of ``x / out-degree`` (or ``* w / out-weight``) over the
    in-arcs, then one fused update of the ranks, the L1 change and the dangling mass."""

    def __init__(self, eng, alpha: float, p, weighted: bool):
        xp, n = eng.backend.xp, eng.graph.num_vertices
        # Teleport and dangling mass both follow p: the personalization (``p``, normalised here)
        # or uniform (Graphalytics mode refuses a personalization).
        p = xp.asarray(p / p.sum()) if p is not None else 1.0 / max(n, 1)
        self.eng, self.alpha, self.p, self.weighted = eng, alpha, p, weighted
        self.stripeable = not weighted
        inverse = eng.backend.kernels.inverse_degree
        if not weighted:  # kept on the device between calls
            self.inv, dangling = eng.derived("inverse_out_degree", lambda: inverse(
                eng.backend.to_device(eng.graph.out_degree)))
        else:  # the out-arc weights of every vertex: one pass against the arcs
            self.inv, dangling = inverse(eng.edge_map("w", direction="out"))
        self.x = xp.full(n, 1.0 / max(n, 1))
        self.shared = self.x * self.inv  # x[u] / out_degree(u): what u sends along each out-arc
        self.y = xp.empty(n, dtype=np.float64)
        self.lost = dangling * (1.0 / max(n, 1))  # mass on dangling vertices, spread like the teleport

    def pull(self, then=None):
        """Σ over in-arcs of shared[u] (* w) into y: the tuned pull (source-blocked on a GPU)."""
        eng = self.eng
        if then is not None:
            return eng.pull_sum(self.shared, out=self.y, gather=False, then=then,
                                stripes=config.get().algorithms.pagerank_result_stripes)
        if not self.weighted:
            return eng.pull_sum(self.shared, out=self.y, gather=False)
        lo, hi = eng.owned
        self.y[lo:hi] = 0.0
        return eng.edge_map("src * w", self.shared, out=self.y, gather=False)

    def update(self, x, out, part: slice, final: bool):
        p = self.p if np.isscalar(self.p) else self.p[part]
        return self.eng.backend.kernels.pagerank_step(
            self.y[part], x[part], p, self.inv[part], self.alpha, self.lost, None if final else self.shared[part],
            out=None if out is None else out[part])

    def carry(self, sums, late: bool) -> None:
        self.lost = sums.device[1:2] if late else float(sums.host()[1])

    def reshare(self, x, part: slice) -> None:
        self.eng.backend.xp.multiply(x[part], self.inv[part], out=self.shared[part])


def personalization_weights(g, personalization) -> np.ndarray:
    """The teleport weights as n floats: from ``{original id: weight}`` or an array."""
    p = initial_vector(g, personalization, "personalization", nonzero=False)
    if (p < 0).any() or p.sum() <= 0:
        raise ParameterError(f"personalization must be {g.num_vertices} non-negative finite values with a "
                             f"positive sum, or a dict of them by vertex id")
    return p

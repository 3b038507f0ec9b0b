"""Near-far buckets for ``propagate_min`` with arc weights (Davidson et al., "Work-efficient
parallel GPU methods for single-source shortest paths", IPDPS'14; Gunrock's SSSP).

Relaxing from every vertex that changed (Bellman-Ford with a frontier) expands a vertex again each
time its distance drops, and on a weighted graph it drops many times. Near-far expands, each
iteration, only the vertices whose distance is at most a bound (the near pile); the others wait
(the far pile). When the near pile is empty, the bound becomes the smallest waiting distance plus
``delta``. Expanding vertices roughly in order of distance means most are expanded once, at their
final distance. The fixed point is the same: every vertex whose value dropped is expanded again
after its last drop (it waits until it is), so the answer is bit for bit the answer of any other
order (min over paths of the path sums, each added as the kernels add it).

The bookkeeping is one mask of waiting vertices (``pending``) on the state's device, derived from
the state and the change flags only: in a distributed run, where every rank holds the merged state
and flags after each iteration, every rank computes the same frontier and the same bound.
"""

from __future__ import annotations

import math

import numpy as np


def near_far_delta(graph, width: float):
    """The bucket width for ``graph`` (arc weights): ``width`` times a typical weight over the mean
    out-degree (Davidson et al.'s rule with the warp width as ``width``). The store records the
    weight range, not the mean, so the typical weight is the range's midpoint (the mean of weights
    drawn uniformly). None where near-far does not apply: no arcs, a negative weight (the
    traversal then stays label-correcting), or a width that is not a positive finite number."""
    if not graph.num_arcs or not width > 0:
        return None
    lo, hi = (float(graph.attrs["min_weight"]), float(graph.attrs["max_weight"])) if graph.weighted else (1.0, 1.0)
    if lo < 0:
        return None
    delta = width * (lo + hi) / 2 / (graph.num_arcs / graph.num_vertices)
    return delta if 0 < delta < math.inf else None


class NearFar:
    """The waiting vertices of a near-far traversal and its bound. ``take`` gives each iteration's
    frontier (the near pile); the iteration then reports what it expanded and what changed."""

    def __init__(self, xp, graph, k: int, delta: float, frontier, stats):
        size = graph.interval_size
        self.xp, self.delta, self.stats, self._k, self._size = xp, float(delta), stats, k, size
        self._padded = xp.zeros(k * size, dtype=np.uint8)  # whole intervals, for expand()
        self.pending = self._padded[:graph.num_vertices]
        self.pending[frontier] = 1
        self.bound = -math.inf  # the first take() sets it from the start frontier's values

    def take(self, state):
        """The next frontier: the waiting vertices whose state is at most the bound, taken out of
        the waiting set. When there are none, the bound is raised to the smallest waiting state
        plus delta first (two more scalars from the device). Empty once nothing waits."""
        xp = self.xp
        near = xp.flatnonzero(xp.logical_and(self.pending, state <= self.bound))
        if not near.size:
            waiting = xp.flatnonzero(self.pending)
            if not waiting.size:
                return waiting
            values = state[waiting]
            self.bound = float(values.min()) + self.delta
            self.stats.near_far_bounds += 1
            near = waiting[values <= self.bound]
            if not near.size:  # NaN states compare false: take everything rather than stall
                near = waiting
        self.pending[near] = 0
        return near

    def next(self, state, changed, queued=None):
        """The next frontier (:meth:`take`) after an iteration: the vertices whose state dropped
        (``changed``, a uint8 mask) and those ``queued`` ids still to expand wait first."""
        self.pending |= changed
        if queued is not None:
            self.pending[queued] = 1
        return self.take(state)

    def expand(self, active: np.ndarray) -> None:
        """An edge-centric pass relaxed every arc leaving the ``active`` intervals (host bools):
        their waiting vertices were expanded at their current state (one that dropped during the
        pass is marked changed and waits again)."""
        rows = np.flatnonzero(active)
        if rows.size:
            self._padded.reshape(self._k, self._size)[self.xp.asarray(rows)] = 0

    def release(self, frontier):
        """Every waiting vertex and ``frontier``, as one frontier: the traversal goes on without
        buckets (asynchronous passes relax each chunk to convergence whatever the bound)."""
        self.pending[frontier] = 1
        return self.xp.flatnonzero(self.pending)

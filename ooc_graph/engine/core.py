"""The engine: streams CEL chunks through a backend's kernels in bulk-synchronous passes.

Algorithms are small programs on the operators below (``pull_sum``, ``relax_min``,
``reverse_min``, ``tight_parents``); the engine owns chunking, the cache, selective scheduling
(skipping chunks whose source intervals hold no active vertex) and the counters.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from ooc_graph._memory import budget as parse_budget
from ooc_graph.store import Graph

from .backend import get_backend
from .cache import ResidentCache

log = logging.getLogger("ooc_graph.engine")

# Bytes a prepared CPU batch holds per arc (indices, ones, weight, ordering scratch).
PREPARED_BYTES_PER_ARC = 32


@dataclass
class Stats:
    passes: int = 0
    chunks_processed: int = 0
    chunks_skipped: int = 0
    arcs_processed: int = 0
    bytes_read: int = 0
    seconds_reading: float = 0.0
    seconds_computing: float = 0.0
    per_pass: list = field(default_factory=list)

    def as_dict(self):
        d = {k: v for k, v in self.__dict__.items() if k != "per_pass"}
        return d


class Engine:
    """Streams one graph's CEL through a device backend under a host-memory budget.

    Parameters
    ----------
    graph : Graph
    memory : int or str, optional
        Host budget for state and cached chunks (default: a quarter of RAM). Tiny budgets are
        honoured by cutting the CEL into small chunks and caching none.
    device : {"cpu", "gpu", "auto"}
    state_arrays : int
        How many float64 per-vertex arrays the algorithm keeps (counted against the budget).
    """

    def __init__(self, graph: Graph, *, memory=None, device: str = "auto", state_arrays: int = 4):
        self.graph = graph
        self.backend = get_backend(device, graph)
        self.memory = parse_budget(memory)
        n, arcs = graph.num_vertices, graph.num_arcs
        state_bytes = state_arrays * 8 * n
        free = max(self.memory - state_bytes, 0)
        per_arc = PREPARED_BYTES_PER_ARC + graph.cel_nbytes_per_arc()
        # A chunk in flight may take at most half of what is left; the rest caches chunks.
        chunk = max(1, min(graph.chunk_arcs, (free // 2) // per_arc))
        self.chunk_arcs = chunk
        self.bounds = [(a, min(a + chunk, arcs)) for a in range(0, arcs, chunk)]
        self.cache = ResidentCache(free - chunk * per_arc)
        self.stats = Stats()
        offsets, bsrc, bdst = graph.blocks
        self._block_offsets = np.asarray(offsets, np.int64)
        self._block_src = np.asarray(bsrc, np.int64)
        self._block_dst = np.asarray(bdst, np.int64)
        self._k = len(graph.intervals) - 1
        # Source intervals present in each chunk, for selective scheduling.
        first = np.searchsorted(self._block_offsets, [a for a, _ in self.bounds], side="right") - 1
        last = np.searchsorted(self._block_offsets, [b for _, b in self.bounds], side="left")
        self._chunk_src = [np.unique(self._block_src[f:l]) for f, l in zip(first, last)]
        log.debug("engine: %d chunks of <= %d arcs, cache budget %d bytes", len(self.bounds), chunk,
                  self.cache.budget)

    # -- streaming ------------------------------------------------------------------------------
    def _load(self, i):
        start, stop = self.bounds[i]
        t = time.perf_counter()
        layout, src, dst, w = self.graph.read_cel(start, stop)
        self.stats.bytes_read += src.nbytes + dst.nbytes + (0 if w is None else w.nbytes)
        size = self.graph.interval_size
        dst_lo = int(layout.dst_interval[0]) * size if layout.lengths.size else 0
        dst_hi = min((int(layout.dst_interval[-1]) + 1) * size, self.graph.num_vertices) if layout.lengths.size else 0
        batch = self.backend.kernels.prepare(src, dst, w, layout.src_interval * size, layout.dst_interval * size,
                                             layout.lengths, dst_lo, dst_hi, self.graph.num_vertices,
                                             self._chunk_src[i])
        self.stats.seconds_reading += time.perf_counter() - t
        return batch

    def batches(self, active_intervals: np.ndarray | None = None):
        """Yield the prepared batches of one pass; with ``active_intervals`` (bool, one per interval)
        skip chunks that hold no arc from an active interval."""
        self.stats.passes += 1
        for i in range(len(self.bounds)):
            if active_intervals is not None and not active_intervals[self._chunk_src[i]].any():
                self.stats.chunks_skipped += 1
                continue
            batch, _ = self.cache.get(i, lambda i=i: self._load(i))
            self.stats.chunks_processed += 1
            self.stats.arcs_processed += batch.num_arcs
            yield batch

    def _intervals_of(self, vertices) -> np.ndarray:
        active = np.zeros(self._k, dtype=bool)
        if len(vertices):
            active[np.asarray(vertices) // self.graph.interval_size] = True
        return active

    # -- operators ------------------------------------------------------------------------------
    def pull_sum(self, x: np.ndarray) -> np.ndarray:
        """``y[v] = Σ_{u→v} x[u]`` over all arcs (one pass)."""
        k = self.backend.kernels
        t = time.perf_counter()
        y = np.zeros(self.graph.num_vertices, dtype=np.float64)
        for batch in self.batches():
            k.pull_sum(batch, x, y)
        self.stats.seconds_computing += time.perf_counter() - t
        return y

    def relax_min(self, state: np.ndarray, *, plus, active=None, reverse: bool = False):
        """One pass of ``state[v] = min(state[v], state[u] + plus)`` (``plus=None``: the arc weight),
        and with ``reverse`` also ``state[u] = min(state[u], state[v])``. Returns the bool interval
        mask of vertices that changed (the next pass's active set)."""
        k = self.backend.kernels
        t = time.perf_counter()
        touched = np.zeros(self._k, dtype=bool)
        for batch in self.batches(active if not reverse else None):
            touched |= self._intervals_of(k.relax_min(batch, state, plus))
            if reverse:
                touched |= self._intervals_of(k.reverse_min(batch, state))
        self.stats.seconds_computing += time.perf_counter() - t
        return touched

    def tight_parents(self, dist: np.ndarray, *, plus, root: int) -> np.ndarray:
        """A shortest-path tree of ``dist``: parent[v] is the smallest u with dist[u] + w == dist[v].

        Strictly shorter tight arcs first; vertices reached only over zero-weight arcs are then
        resolved in further passes from vertices that already have a parent. -1 marks the root and
        unreached vertices.
        """
        k = self.backend.kernels
        n = self.graph.num_vertices
        parent = np.full(n, n, dtype=np.int64)
        parent[root] = root
        for batch in self.batches():
            k.tight_parent(batch, dist, plus, parent, True)
        while True:
            missing = np.isfinite(dist) & (parent == n)
            if not missing.any():
                break
            before = int(missing.sum())
            for batch in self.batches():
                k.tight_parent(batch, dist, plus, parent, False)
            if int((np.isfinite(dist) & (parent == n)).sum()) == before:  # pragma: no cover - defensive
                break
        parent[parent == n] = -1
        parent[root] = -1
        return parent

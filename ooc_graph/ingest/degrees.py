"""Pass 1 of a build: the degrees of the arcs (before deduplication), counted chunk by chunk in
time proportional to the arcs, not to the vertices.

With the compiled kernels (numba, where ``compiled`` allows them), chunks are counted in place
into the int64 counts: on ``workers`` threads where there are at least config ``ingest.degrees_parallel_min_threads``
and a chunk has at least ``ingest.degrees_parallel_min_edges`` edges (its ids sorted by vertex range into a
buffer of the chunk's size, each range then counted by one thread: no private copies of the
counts, whose zeroing and summing would cost ``workers × n`` per side), else serially. Without
numba, a small chunk is counted by sorting its ids, a large one (at least ``n / BINCOUNT_RATIO``
ids) by ``numpy.bincount``, whose n-long result is then worth its cost. Every path gives the same
counts.

Edges arrive as mapped ids (0..n-1), not yet symmetrised: an undirected edge counts at both ends
of the in-degrees (a loop once), a directed one at its target's in-degree and its source's
out-degree; ``drop_loops`` leaves loops out.
"""

from __future__ import annotations

import numpy as np

from ooc_graph import config
from ooc_graph.kernels import cpu as cpu_kernels

# Chunks with at least n / BINCOUNT_RATIO ids are counted by bincount (without numba).
BINCOUNT_RATIO = 8
# Vertex ranges per counting thread (ranges are handed out in blocks: more evens out the load).
RANGES_PER_THREAD = 8


class Degrees:
    """In-degrees (and out-degrees when ``directed``) of ``n`` vertices: :meth:`add` each chunk,
    then :meth:`result`."""

    def __init__(self, n: int, *, directed: bool, drop_loops: bool, workers: int, compiled: bool = True):
        self.n, self.directed, self.drop_loops = int(n), bool(directed), bool(drop_loops)
        self.ins = np.zeros(self.n, np.int64)
        self.outs = np.zeros(self.n if directed else 0, np.int64)
        self._kernels = None
        self.threads = 1
        if compiled and cpu_kernels.compiled() is not None:
            from ooc_graph.kernels import cpu_ingest
            self._kernels = cpu_ingest
            self.threads = max(1, min(int(workers), cpu_ingest.max_threads()))
            if self.threads < config.get().ingest.degrees_parallel_min_threads:
                self.threads = 1
            ranges = min(max(1, self.n), self.threads * RANGES_PER_THREAD)
            self._shift = max(0, (self.n - 1).bit_length() - (ranges - 1).bit_length())
            self._hist = np.zeros((self.threads, ((self.n - 1) >> self._shift) + 1 if self.n else 1), np.int64)
            self._bounds = np.zeros(self._hist.shape[1] + 1, np.int64)
            self._buf = None

    @staticmethod
    def compiled_for(arcs: int, memory: int) -> bool:
        """Whether a build of ``arcs`` arcs in a budget of ``memory`` bytes counts with the compiled
        kernels (where numba is installed): from config ``ingest.degrees_compiled_min_arcs`` arcs and
        ``ingest.compiled_min_budget`` bytes up."""
        cfg = config.get().ingest
        return arcs >= cfg.degrees_compiled_min_arcs and memory >= cfg.compiled_min_budget

    def add(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Count a chunk of edges (ids in ``[0, n)``, one dtype)."""
        if not len(src):
            return
        k = self._kernels
        if k is None:
            self._add_numpy(src, dst)
            return
        src, dst = _unsigned(src), _unsigned(dst)
        if self.threads == 1 or len(src) < config.get().ingest.degrees_parallel_min_edges:
            k.count_arcs(src, dst, self.ins, self.outs if self.directed else self.ins[:0], self.directed,
                         self.drop_loops)
            return
        need = len(src) * (1 if self.directed else 2)
        if self._buf is None or self._buf.dtype != src.dtype or len(self._buf) < need:
            self._buf = None
            self._buf = np.empty(need, src.dtype)
        with k.threads(self.threads):
            k.count_side(dst, src, not self.directed, self.drop_loops, self.ins, self._shift, self._buf,
                         self._hist, self._bounds)
            if self.directed:
                k.count_side(src, dst, False, self.drop_loops, self.outs, self._shift, self._buf, self._hist,
                             self._bounds)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(in-degrees, out-degrees: empty when undirected); the buffer is freed."""
        self._buf = None
        return self.ins, self.outs

    def _add_numpy(self, src, dst) -> None:
        if self.drop_loops or not self.directed:
            other = src != dst
            if self.drop_loops:
                src, dst = src[other], dst[other]
            if not self.directed:  # the reverse arcs of the edges that are not loops
                _count(self.ins, dst)
                _count(self.ins, src if self.drop_loops else src[other])
                return
        _count(self.ins, dst)
        _count(self.outs, src)


def _count(counts: np.ndarray, ids: np.ndarray) -> None:
    """``counts[v] += (ids == v).sum()``, in O(len(ids)) for short ``ids``."""
    if not len(ids):
        return
    if len(ids) * BINCOUNT_RATIO >= len(counts):
        counts += np.bincount(ids, minlength=len(counts))
        return
    ids = np.sort(ids)
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
    counts[ids[starts]] += np.diff(np.append(starts, len(ids)))


def _unsigned(ids: np.ndarray) -> np.ndarray:
    """int32 ids as uint32 (never negative: unsigned indexing skips numba's wraparound test)."""
    return ids.view(np.uint32) if ids.dtype == np.int32 else ids

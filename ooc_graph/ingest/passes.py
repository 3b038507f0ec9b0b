"""The builder's passes over the spilled input once every edge has arrived: the sizes the memory
budget allows (:class:`Layout`), the degree pass that decides the buckets, and the scatter of the
arcs into them (:class:`Buckets`); sorting and writing them is ``writing.py``."""

from __future__ import annotations

import time

import numpy as np

from ooc_graph._memory import release_free_memory
from ooc_graph._parallel import ordered_map
from ooc_graph._records import record
from ooc_graph.partitioning.intervals import global_id_dtype, interval_bounds, local_id_dtype
from ooc_graph.store import _format as F

from . import buckets as B
from . import footprint as M
from .degrees import Degrees
from .scratch import Spill

_INT32_MAX = np.iinfo(np.int32).max


@record
class Layout:
    """The store's shape and the passes' memory: ``n`` vertices (``labels``: their original ids,
    or None), intervals ``bounds`` of ``size`` vertices (``k`` of them), the id types (``sdt``
    while partitioning, ``ldt`` local and ``gdt`` global in the store), ``total_in`` arcs, the
    ``data`` bytes the passes may use, whether the buckets stay ``in_memory`` (holding ``held``
    bytes of input and ``bucket_bytes`` of buckets) and the arcs of a scatter read
    (``read_step``)."""

    n: int
    labels: object
    sdt: np.dtype
    bounds: np.ndarray
    size: int
    k: int
    ldt: np.dtype
    gdt: np.dtype
    total_in: int
    data: int
    held: int
    bucket_bytes: int
    in_memory: bool
    read_step: int

    @property
    def narrow(self) -> bool:
        return self.sdt == np.int32


@record
class Buckets:
    """The scattered arcs: the in-side buckets (and the out side's of a directed graph) with the
    vertex bounds of each (``in_edges[b]`` to ``in_edges[b + 1]``)."""

    in_buckets: list
    in_edges: np.ndarray
    out_buckets: list
    out_edges: np.ndarray | None


class Passes:
    """The passes of :class:`~.builder.GraphBuilder` (a mixin: it reads the builder's options,
    spill, id mapping and stages)."""

    def _layout(self, n: int, labels) -> Layout:
        """The sizes the budget allows once the ids are settled; sets the id lookup table."""
        data = M.data_bytes(self.memory) - M.BYTES_PER_VERTEX * n
        sdt = np.dtype(np.int32 if n <= _INT32_MAX + 1 else np.int64)
        self._lut, self._lut_base = self._lookup_table(labels, sdt, data // 4)
        data -= 0 if self._lut is None else self._lut.nbytes
        total_in = self._spill.count * (1 if self.directed else 2)
        # Buckets stay in memory too where they and the input take at most half of it.
        held = self._spill.nbytes if self._spill.in_memory else 0
        per_item = 2 * sdt.itemsize + (self.weight_dtype.itemsize if self.weighted else 0)
        bucket_bytes = per_item * total_in * (2 if self.directed else 1)
        in_memory = bool(held) and held + bucket_bytes <= data // 2
        if not in_memory:
            self._spill.to_disk()
            held = bucket_bytes = 0
        # Symmetrising doubles a spill chunk on its way to the buckets.
        read_step = max(1024, (data - held - bucket_bytes) // M.PASS_BYTES_PER_ARC // (1 if self.directed else 2))
        bounds = interval_bounds(n, self.interval_size)
        size = int(bounds[1] - bounds[0]) if n else int(self.interval_size or 1)
        return Layout(n, labels, sdt, bounds, size, len(bounds) - 1, local_id_dtype(bounds), global_id_dtype(n),
                      total_in, data, held, bucket_bytes, in_memory, read_step)

    @property
    def _wide_reads(self) -> bool:
        """Whether the spill is read as int64 ids (labels mapped without a lookup table)."""
        return self._label_map is not None and self._lut is None

    def _degree_pass(self, lay: Layout, bar) -> tuple:
        """Pass 1: degrees (before deduplication) decide the buckets; returns the in and out
        buckets' vertex bounds (None out for an undirected graph). A chunk takes far less here
        than on its way to the buckets (ids mapped, the counting threads' buffer: degrees.py)."""
        t = time.perf_counter()
        compiled = Degrees.compiled_for(lay.total_in, self.memory)  # the degree pass's rule, and the scatter's
        degrees = Degrees(lay.n, directed=self.directed, drop_loops=self.drop_self_loops, workers=self.workers,
                          compiled=compiled)
        step = max(1024, (lay.data - lay.held - lay.bucket_bytes) // M.PASS_BYTES_PER_ARC)
        fast = B.compiled_kernels() if compiled else None
        for src, dst, _ in self._spill.read(step, wide=self._wide_reads):
            src, dst = self._map_ids(src, dst, lay.sdt, fast)
            degrees.add(src, dst)
            bar.update(len(src) * (1 if self.directed else 2))
            del src, dst, _
        in_counts, out_counts = degrees.result()
        del degrees
        weights = [self.weight_dtype.itemsize] if self.weighted else []
        writes = M.write_buffers(self.chunk_arcs, lay.total_in, [lay.ldt.itemsize] + weights,
                                 [lay.gdt.itemsize] + weights, F.HDF5_CHUNK_ELEMENTS)
        limit = self._limit = self._plan(lay.data - writes - lay.bucket_bytes, lay.n,
                                         [in_counts, out_counts] if self.directed else [in_counts], writes)
        in_edges = B.bucket_bounds(in_counts, lay.bounds, limit)
        out_edges = B.bucket_bounds(out_counts, lay.bounds, limit) if self.directed else None
        self.stages.add("degrees", time.perf_counter() - t)
        self._compiled = compiled
        return in_edges, out_edges

    def _plan(self, data: int, n: int, counts: list, writes: int) -> int:
        """Arcs per bucket (and ``self._sorters``) within what the per-vertex arrays and HDF5's
        write buffers (``writes``) leave."""
        per_arc = B.bytes_per_arc(weighted=self.weighted, augment=self.augment, wide=n > _INT32_MAX,
                                  weight_size=self.weight_dtype.itemsize)
        largest, vertex = max((int(c.max()), int(c.argmax())) if c.size else (0, 0) for c in counts)
        M.check_fullest(self.memory, data, n, writes, vertex, largest, per_arc)
        limit, self._sorters = B.plan(data, largest, int(counts[0].sum()), per_arc, self.workers)
        return limit

    def _scatter_pass(self, lay: Layout, in_edges, out_edges, bar) -> Buckets:
        """Pass 2: the arcs scattered into bucket spills, in input order; the input spill is
        removed once everything is in the buckets."""
        t = time.perf_counter()

        def spills(side, edges):
            return [Spill(self._scratch, f"{side}{b}", self.weighted, lay.narrow, self.weight_dtype,
                          in_memory=lay.in_memory) for b in range(len(edges) - 1)]
        out = Buckets(spills("in", in_edges), in_edges, spills("out", out_edges) if self.directed else [], out_edges)
        self.stages.add("in_memory", float(lay.in_memory))
        threads = B.scatter_threads(self._compiled, self.workers)

        def mapped(chunk):  # on a worker thread: the chunk as internal arcs
            return self._map(*chunk, lay.sdt)

        def partition(src, dst, w):  # the arcs by bucket, on each side
            return [B.partition(in_edges, dst, src, dst, w, threads=threads)] + (
                [B.partition(out_edges, src, src, dst, w, threads=threads)] if self.directed else [])

        # Chunks alive at once: one per worker, the results waiting in order, the one being read.
        # With NumPy a chunk is split on its worker; the compiled kernel splits it here, on numba's
        # threads (one call at a time: not every threading layer of numba takes concurrent calls).
        chunks = self._spill.read(max(1024, lay.read_step // (self.workers + 2)), wide=self._wide_reads)
        results = (ordered_map(lambda chunk: partition(*mapped(chunk)), chunks, self.workers) if threads is None
                   else ordered_map(mapped, chunks, self.workers))
        # Several buckets: the parts are new arrays, each bucket keeping its own without a copy (the
        # kernel's parts of a chunk are views of arrays they cover whole, freed once the side's last
        # bucket is loaded: the sort's budget counts the buckets in full, bucket_bytes, till then).
        owned = [len(in_edges) > 2] + ([len(out_edges) > 2] if self.directed else [])
        for item in results:  # appended in input order
            sides = item if threads is None else partition(*item)
            del item
            for buckets, parts, own in zip((out.in_buckets, out.out_buckets), sides, owned):
                for i, s, d, x in parts:
                    buckets[i].append(s, d, x, owned=own)
            bar.update(sum(len(s) for _, s, _, _ in sides[0]))
            del sides
        self._spill.remove()  # everything is in the buckets now
        release_free_memory()
        self.stages.add("scatter", time.perf_counter() - t)
        return out

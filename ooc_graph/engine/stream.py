"""Streaming the CEL: budgets, chunking, the chunk caches, the reader thread and the pass loop.

A :class:`ChunkStream` serves one range of the CEL — the whole graph in one process, or the
sub-graphs one worker owns in a distributed run — as batches prepared for a backend's kernels.
It owns what moves bytes (reading, host and device caches, the copy pipeline, the CSR on the
device) and records every pass; the operators built on it live in :mod:`.core`.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from ooc_graph import config
from ooc_graph._memory import budget as parse_budget
from ooc_graph._memory import human
from ooc_graph._records import record
from ooc_graph.errors import DeviceError, ParameterError
from ooc_graph.partitioning.chunks import chunk_intervals, cut
from ooc_graph.store import Graph

from .backend import get_backend
from .cache import ResidentCache
from .csrs import Csrs
from .stats import Stats
from .trace import PassTrace

log = logging.getLogger("ooc_graph.engine")

# Bytes a prepared CPU batch holds per arc (indices, ones, weight, ordering scratch).
PREPARED_BYTES_PER_ARC = 32
_STATS_LOCK = threading.Lock()


@record
class RawChunk:
    layout: object
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray | None

    @property
    def nbytes(self) -> int:
        return self.src.nbytes + self.dst.nbytes + (0 if self.weight is None else self.weight.nbytes)


class ChunkStream(Csrs):
    """Streams CEL arcs ``arc_range`` (default: all) of ``graph`` through a device backend.

    Parameters
    ----------
    graph : Graph
    memory : int or str, optional
        Host budget for state and cached chunks (default: a quarter of RAM). A budget that leaves
        room only for tiny chunks (more than config ``stream.max_chunks_per_pass`` per pass) is refused with the
        smallest budget that works.
    device : {"cpu", "gpu", "auto"}
    device_memory : int or str, optional
        GPU only: budget for vertex state, the device chunk cache and a device CSR (a quarter of
        it, where the CSR fits there; default: 80% of the free device memory). Chunks beyond it
        are streamed again on every pass.
    profile : bool
        Wait for the device at the end of every pass, so that per-pass seconds are exact, and
        trace when each chunk was read, copied and computed (:mod:`.trace`).
    state_arrays : int
        How many float64 per-vertex arrays the algorithm keeps (counted against the budget).
    arc_range : (int, int), optional
        The CEL arcs to serve (a worker's sub-graphs); chunks are cut on the store's chunk grid.
    """

    def __init__(self, graph: Graph, *, memory=None, device: str = "auto", state_arrays: int = 4,
                 device_memory=None, profile: bool = False, arc_range=None):
        self.graph = graph
        self.profile = profile
        self.backend = get_backend(device, graph)
        self.memory = parse_budget(memory)
        start, stop = (0, graph.num_arcs) if arc_range is None else (int(arc_range[0]), int(arc_range[1]))
        self.arc_range = (start, stop)
        state_bytes = state_arrays * 8 * graph.num_vertices + graph.num_vertices  # float64 arrays, change flags
        free_device = self._fit_device(state_bytes, device, device_memory)
        chunk, free, cached_arc, flight_arc = self._size_chunks(state_bytes, free_device, stop - start)
        self.chunk_arcs = chunk
        self.bounds = cut(start, stop, chunk, graph.chunk_arcs)
        self.cache = ResidentCache(free - chunk * flight_arc)
        # What the chunks in flight take during a pass: idle during a whole traversal (no pass
        # runs then), which may use it for its scratch (Traversals._scratch).
        self.flight_bytes = chunk * flight_arc
        # On a GPU the device cache above holds decoded chunks; this host cache keeps raw chunks in
        # pinned memory so that chunks streamed again on every pass come at bus speed, not disk speed.
        # Where the device cache holds every chunk, a raw copy would only cost pinned allocations
        # (cudaHostAlloc took ~0.34 s of a 1.7 s first call on R-MAT-24): reads then go through the
        # pinned pool (kernels/gpu_pinned.py), whose few blocks are reused chunk after chunk.
        holds_all = self.cache.budget >= (stop - start) * cached_arc and not graph.augmented
        self.host_cache = None if free_device is None or holds_all else ResidentCache(self.memory)
        self.stats = Stats()
        offsets, bsrc, bdst = graph.blocks
        self._block_offsets = np.asarray(offsets, np.int64)
        self._block_src = np.asarray(bsrc, np.int64)
        self._block_dst = np.asarray(bdst, np.int64)
        self._k = len(graph.intervals) - 1
        # Source intervals present in each chunk (selective scheduling), its first and last sub-graph.
        self._chunk_src, self._chunk_dst = chunk_intervals(self._block_offsets, self._block_src, self._block_dst,
                                                           self.bounds)
        self._csr = {}
        self._mapped_bytes = 0  # host bytes of the CSR sides read in place (zero-copy)
        self._vertex = {}  # per-vertex arrays of the store kept on the backend's device between calls
        self._whole = None  # the whole graph in one source-blocked batch (GPU), False if unavailable
        self._own_cut = None  # (that batch, its arcs from this rank's sources and the others)
        self._stripe_cut = None  # (that batch, stripes, its arcs by destination stripe)
        self._reader = None  # the thread that reads chunks ahead, made on first need
        self._trace = None  # the current pass's PassTrace while profiling
        self._compute_start = {}  # chunk -> marker where its (fresh) preparation began, while profiling
        self.joined = 0  # chunks the last pass took in through ``live`` (see batches)
        log.debug("engine: %d chunks of <= %d arcs, cache budget %d bytes", len(self.bounds), chunk,
                  self.cache.budget)

    def _fit_device(self, state_bytes: int, device: str, device_memory) -> int | None:
        """The GPU's free bytes (None on the CPU), and ``self.device_memory``, its budget; with
        ``device="auto"`` a vertex state larger than the budget runs on the CPU instead."""
        free_device = self.backend.free_memory()
        if free_device is None:
            return None
        self.device_memory = parse_budget(device_memory) if device_memory is not None else int(0.8 * free_device)
        room = min(self.device_memory, free_device)
        if state_bytes > room and device == "auto":
            log.warning("%s: the vertex state (%s) does not fit the GPU budget (%s); running on the CPU",
                        self.graph.path, human(state_bytes), human(room))
            self.backend = get_backend("cpu")
            return None
        if state_bytes > room:
            raise DeviceError(f"{self.graph.path}: the vertex state needs {human(state_bytes)} of device memory "
                              f"but the budget is {human(room)}")
        return free_device

    def _size_chunks(self, state_bytes: int, free_device, arcs: int) -> tuple:
        """``(chunk arcs, bytes for the chunks, bytes an arc takes cached, in flight)`` within the
        budget (the device's on a GPU), refusing one that leaves room only for tiny chunks; on a
        GPU also the room of a CSR on the device (``_csr_budget``) or of the offsets of one read in
        place (``_offset_room``)."""
        graph, cfg = self.graph, config.get().stream
        self._csr_budget = self.memory // 4
        self._offset_room = 0  # device bytes set aside for the offsets of CSRs read in place
        # A chunk in flight (with its CEL augmentation, at most as large, on an augmented store):
        # the chunks in flight and one cached chunk must fit what is left; the rest caches chunks.
        in_flight = 2 if graph.augmented else 1
        grid = largest = graph.chunk_arcs  # the store's chunk; the largest the engine takes at a time
        smallest = min(grid, max(1, -(-arcs // cfg.max_chunks_per_pass)))
        # Bytes an arc takes in a cached chunk, and in the chunks in flight. A pass's consumer
        # still holds the last batch while the next is made, so two are in flight: on the CPU two
        # prepared chunks, the raw one being prepared and the raw ones read ahead (``stream.prefetch``);
        # on a GPU two decoded chunks (int32 ids, weights) and the raw copy in every slot of the
        # copy ring (``STAGING_SLOTS``: copies run ahead).
        raw = graph.cel_nbytes_per_arc()
        if free_device is None:
            cached_arc = PREPARED_BYTES_PER_ARC + raw
            flight_arc = in_flight * (PREPARED_BYTES_PER_ARC + cached_arc) + cfg.prefetch * raw
            free = self.memory - state_bytes
            self._refuse_small("memory", self.memory, state_bytes + smallest * (cached_arc + flight_arc), smallest)
        else:
            cached_arc = 8 + (np.dtype(graph.attrs["weight_dtype"]).itemsize if graph.weighted else 0)
            flight_arc = (in_flight + 1) * cached_arc + getattr(self.backend.kernels, "STAGING_SLOTS", 1) * raw
            scratch = min(cfg.device_scratch_bytes, self.device_memory // 1024)
            spare = self.device_memory - state_bytes - scratch
            self._refuse_small("device_memory", self.device_memory,
                               state_bytes + scratch + smallest * (cached_arc + flight_arc), smallest)
            if grid >= cfg.coalesce_min_arcs and not graph.augmented:
                largest = max(1, cfg.stream_chunk_arcs // grid) * grid
            # The device CSR (frontier advance only) takes a quarter of the budget, but never the
            # room that full-size chunks in flight need: streaming comes first. Where one side of
            # the CSR is larger than that room, it could never be held: the chunks get the room.
            room = min(self.device_memory // 4, max(spare - largest * (cached_arc + flight_arc), 0))
            self._csr_budget = room if self._csr_nbytes() <= room else 0
            # A CSR read in place from host memory (zero-copy) keeps its offsets on the device: their
            # room is set aside here where the CSR cannot be held, if the chunks can spare it.
            offsets = 8 * (graph.num_vertices + 1) * (2 if graph.directed else 1)
            if not self._csr_budget and self._zero_copy() and \
                    spare - offsets >= smallest * (cached_arc + flight_arc):
                self._offset_room = offsets
            free = spare - self._csr_budget - self._offset_room
        chunk = max(smallest, min(largest, free // (cached_arc + flight_arc)))
        if chunk > grid:  # whole store chunks
            chunk -= chunk % grid
        return chunk, free, cached_arc, flight_arc

    def _refuse_small(self, name: str, given: int, needed: int, smallest: int) -> None:
        if given < needed:
            raise ParameterError(
                f"{self.graph.path}: {name}={human(given)} is below what this graph needs ({human(needed)}: "
                f"the vertex state of {self.graph.num_vertices:,} vertices and chunks of at least {smallest:,} "
                f"arcs); use {name}='{_round_up(needed)}' or more")

    def reset_stats(self):
        self.stats = Stats()

    def release(self):
        """Drop the cached chunks, CSR and vertex arrays (host and device memory)."""
        self.cache.clear()
        if self.host_cache is not None:
            self.host_cache.clear()
        self._csr.clear()
        self._vertex.clear()
        self._whole = self._own_cut = self._stripe_cut = None
        if self._reader is not None:
            self._reader.shutdown(wait=True)
            self._reader = None

    def vertex_array(self, name: str, dtype=None):
        """A per-vertex array of the store (``out_degree``, ``in_degree``, ``labels``) on the
        backend's device, uploaded once and kept between calls (a warm call uploads nothing it
        already has)."""
        key = (name, None if dtype is None else np.dtype(dtype).str)
        if key not in self._vertex:
            values = getattr(self.graph, name)
            self._vertex[key] = self.backend.to_device(values if dtype is None else values.astype(dtype))
        return self._vertex[key]

    def derived(self, name: str, make):
        """What ``make()`` computes from the store's per-vertex arrays (PageRank's inverse
        out-degrees, say), made on the first call and kept between calls like
        :meth:`vertex_array`: a warm call neither uploads nor recomputes it."""
        key = ("derived", name)
        if key not in self._vertex:
            self._vertex[key] = make()
        return self._vertex[key]

    # -- reading and preparing chunks -----------------------------------------------------------
    def _raw(self, i, trace: PassTrace | None = None, back: bool = False) -> RawChunk:
        """Chunk i as stored (narrow local ids), read into the backend's host memory (pinned on a
        GPU); ``back``: its CEL augmentation instead, the arcs from its sub-graphs' vertices back
        into earlier sub-graphs (at most a chunk's worth)."""
        t = time.perf_counter()
        empty = getattr(self.backend.kernels, "empty_host", None)
        if back:
            first, last = self._chunk_dst[i]
            layout, src, dst, w = self.graph.read_back_arcs(first, last, first, self.chunk_arcs, empty)
        else:
            layout, src, dst, w = self.graph.read_cel(*self.bounds[i], empty)
        raw = RawChunk(layout, src, dst, w)
        with _STATS_LOCK:  # reader threads count too
            self.stats.bytes_read += raw.nbytes
        if trace is not None:
            trace.host("read", i, t, time.perf_counter())
        return raw

    def _load(self, i, raw=None, back: bool = False):
        """Chunk i (``back``: its CEL augmentation) prepared for the backend; ``raw`` is the stored
        chunk if the reader has it."""
        t = time.perf_counter()
        trace, k = self._trace, self.backend.kernels
        read = partial(self._raw, i, trace, back)
        if self.host_cache is None:
            raw = raw if raw is not None else read()
            if self.backend.xp is not np:
                self.stats.bytes_to_device += raw.nbytes
        else:
            raw, _ = self.host_cache.get(("back", i) if back else i, (lambda: raw) if raw is not None else read)
            self.stats.bytes_to_device += raw.nbytes
        start = k.marker() if trace is not None else None
        layout, size = raw.layout, self.graph.interval_size
        if layout.lengths.size:
            dst_lo = int(layout.dst_interval.min()) * size
            dst_hi = min((int(layout.dst_interval.max()) + 1) * size, self.graph.num_vertices)
        else:
            dst_lo = dst_hi = 0
        batch = k.prepare(raw.src, raw.dst, raw.weight, layout.src_interval * size, layout.dst_interval * size,
                          layout.lengths, dst_lo, dst_hi, self.graph.num_vertices)
        if trace is not None:
            events = getattr(batch, "events", {})
            if "copy" in events:
                trace.device("copy", i, *events["copy"])
            if not back:  # an augmentation is loaded inside its chunk's compute span
                self._compute_start[i] = events.get("compute_start", start)
        self.stats.seconds_reading += time.perf_counter() - t
        return batch

    def back_batch(self, i):
        """The prepared CEL augmentation of chunk i (cached like chunks), or None if it has no arc."""
        first, last = self._chunk_dst[i]
        if ("back", i) not in self.cache and not self.graph.count_back_arcs(first, last, first, self.chunk_arcs):
            return None
        batch, _ = self.cache.get(("back", i), lambda: self._load(i, back=True),
                                  getattr(self.backend.kernels, "resident", None))
        return batch

    # -- passes ---------------------------------------------------------------------------------
    def batches(self, active_intervals: np.ndarray | None = None, *, indexed: bool = False, live=None,
                reverse: bool = False):
        """Yield the prepared batches of one pass (``indexed``: ``(chunk, batch)`` pairs); with
        ``active_intervals`` (bool, one per interval) skip chunks that hold no arc from an active
        interval. ``live()``, if given, returns the active intervals as they are now: a chunk
        inactive at the start of the pass is processed if an earlier chunk of the pass activated it
        (asynchronous execution; such chunks are read without the reader thread). ``reverse``
        visits the chunks last to first."""
        self.stats.passes += 1
        before, t = self.stats.as_dict(), time.perf_counter()
        k = self.backend.kernels
        trace = self._trace = PassTrace(k) if self.profile else None
        self._compute_start.clear()
        every = range(len(self.bounds) - 1, -1, -1) if reverse else range(len(self.bounds))
        order = [i for i in every if active_intervals is None or active_intervals[self._chunk_src[i]].any()]
        scheduled = set(order)
        processed = 0
        self.joined = 0  # chunks that joined this pass through ``live``
        # Chunks no cache holds are read from the store by the reader threads, ``stream.prefetch`` ahead, so
        # that reading chunk i+1 overlaps preparing and processing chunk i.
        cfg = config.get().stream
        misses = [] if self.chunk_arcs < cfg.prefetch_min_arcs else \
            [i for i in order if i not in self.cache and (self.host_cache is None or i not in self.host_cache)]
        pending, submitted = {}, 0
        resident = getattr(self.backend.kernels, "resident", None)
        try:
            for i in order if live is None else every:
                if i not in scheduled:
                    if not live()[self._chunk_src[i]].any():
                        continue
                    self.joined += 1
                while submitted < len(misses) and len(pending) < cfg.prefetch:
                    j = misses[submitted]
                    pending[j] = self._reader_pool().submit(config.carried(self._raw), j, trace)
                    submitted += 1
                raw = pending.pop(i).result() if i in pending else None
                batch, _ = self.cache.get(i, lambda i=i, raw=raw: self._load(i, raw), resident)
                self.stats.chunks_processed += 1
                processed += 1
                self.stats.arcs_processed += batch.num_arcs
                start = None if trace is None else self._compute_start.pop(i, None)
                if trace is not None and start is None:  # a cached chunk: its compute starts now
                    start = k.marker()
                yield (i, batch) if indexed else batch
                if trace is not None:
                    trace.device("compute", i, start, k.marker())
        finally:
            for future in pending.values():  # a consumer stopped early: let the reads finish
                future.cancel()
                if not future.cancelled():
                    future.exception()
            self.stats.chunks_skipped += len(self.bounds) - processed
        self._sync()
        self._trace = None
        self.stats.record("pass", time.perf_counter() - t, before, trace=trace, clock=self.clock)

    def _whole_graph(self):
        """Every arc in one cache-blocked batch (the backend's ``source_blocked``), built once all
        chunks are resident on the device and if the cache has room for this second copy; None
        until then or where the backend has no such layout."""
        if self._whole is not None:
            return self._whole or None
        build = getattr(self.backend.kernels, "source_blocked", None)
        if build is None or not self.bounds or not all(i in self.cache for i in range(len(self.bounds))):
            return None  # not (yet) everything resident: stream chunks
        need = 8 * (self.arc_range[1] - self.arc_range[0])
        free = self.backend.free_memory()  # building takes ~3x the copy for a moment
        if (free is not None and free < 3 * need) or not self.cache.reserve(need):
            self._whole = False
            return None
        t = time.perf_counter()
        self._whole = build([self.cache.peek(i) for i in range(len(self.bounds))], self.graph.num_vertices)
        if self._whole is None:
            self.cache.used -= need
            self._whole = False
            return None
        log.info("built the source-blocked layout of %d arcs in %.3f s", need // 8, time.perf_counter() - t)
        return self._whole

    def _own_sources(self, whole):
        """``(own, others)``: the arcs of the cache-blocked batch whose sources lie in source
        segments within this rank's range (one slice of it), and the rest (slices): a pull over
        ``own`` needs no other rank's values. Cut once per layout."""
        if self._own_cut is None or self._own_cut[0] is not whole:
            self._own_cut = (whole, self.backend.kernels.split_sources(whole, *self.owned))
        return self._own_cut[1]

    def _stripes(self, whole, stripes: int):
        """The cache-blocked copy by destination stripes (:func:`kernels.gpu.destination_stripes`),
        cut once per layout; None where a pull runs whole (several stripes not asked for, no such
        copy, a distributed run, or a profiled one, whose pass seconds are the sums alone)."""
        if stripes <= 1 or whole is None or self.comm.size > 1 or self.profile:
            return None
        if self._stripe_cut is None or self._stripe_cut[0] is not whole or self._stripe_cut[1] != stripes:
            cut = self.backend.kernels.destination_stripes(whole, self.graph.num_vertices, stripes)
            self._stripe_cut = (whole, stripes, cut)
        return self._stripe_cut[2]

    def _whole_pass(self, batch):
        """Yield ``batch`` (the whole graph) as one pass over every chunk."""
        self.stats.passes += 1
        before, t = self.stats.as_dict(), time.perf_counter()
        self.stats.chunks_processed += len(self.bounds)
        self.stats.arcs_processed += batch.num_arcs
        yield batch
        self._sync()
        self.stats.record("pass", time.perf_counter() - t, before, clock=self.clock)

    def _reader_pool(self) -> ThreadPoolExecutor:
        if self._reader is None:
            self._reader = ThreadPoolExecutor(max_workers=config.get().stream.reader_threads,
                                              thread_name_prefix="ooc-graph-reader")
        return self._reader

    @property
    def clock(self) -> str:
        """What pass seconds measure: ``device`` where passes end with the device idle (the CPU,
        or a profiled GPU run), else ``host`` (the time to issue the pass)."""
        return "device" if self.profile or self.backend.xp is np else "host"

    def _sync(self):
        """Wait for the device (only where per-pass timing asks for it: profiling)."""
        if self.profile and self.backend.xp is not np:
            self.backend.xp.cuda.get_current_stream().synchronize()


def _round_up(nbytes: int) -> str:
    """A budget string at least ``nbytes``, in two significant figures."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if nbytes >= size:
            value = nbytes / size
            digits = max(0, 1 - int(np.floor(np.log10(value))))
            step = 10.0 ** -digits
            return f"{np.ceil(value / step) * step:.{digits}f}{unit}"
    return f"{int(nbytes)}B"

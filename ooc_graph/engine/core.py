"""The engine: streams CEL chunks through a backend's kernels in bulk-synchronous passes.

Algorithms are small programs on four operators: ``pull_sum`` (one pass of a sum over in-arcs),
``propagate_min`` (min-relaxation to a fixed point), ``tight_parents`` (a shortest-path tree) and
``hook_components`` (connected components by hooking and pointer jumping).
The engine owns the loop, chunking, the cache, selective scheduling (skipping chunks whose source
intervals hold no changed vertex) and the per-iteration choice between an edge-centric pass over
the CEL and a frontier advance over the CSR (Gunrock/GSWITCH: cheap when few vertices changed).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ooc_graph._memory import budget as parse_budget
from ooc_graph._memory import human
from ooc_graph.errors import DeviceError, choice
from ooc_graph.store import Graph

from .backend import get_backend
from .cache import ResidentCache
from .trace import PassTrace, summarize

log = logging.getLogger("ooc_graph.engine")

# Bytes a prepared CPU batch holds per arc (indices, ones, weight, ordering scratch).
PREPARED_BYTES_PER_ARC = 32
# Advance over the CSR when the frontier's arcs are fewer than this fraction of all arcs.
ADVANCE_FRACTION = 1 / 16
# Asynchronous mode: at most this many relaxations of one loaded chunk before moving on.
MAX_LOCAL_ITERATIONS = 256
# execution="auto" turns asynchronous after this many passes, if chunks are being streamed.
# Measured (benchmarks/RESULTS.md, "Synchronous against asynchronous execution"): on a road graph
# async cuts streamed passes 24x (612 -> 26); on R-MAT (5-12 passes) it saves none and costs up to 2x.
ASYNC_AFTER_PASSES = 16
EXECUTIONS = ("auto", "sync", "async")
# Asynchronous sweeps turn round after this many passes in a row that no chunk joined (measured
# in propagate_min's comment).
SWEEP_PATIENCE = 2
# Chunks the reader thread reads ahead of the one being processed; smaller chunks are read inline,
# where a read costs less than handing it to a thread.
PREFETCH = 2
PREFETCH_MIN_ARCS = 1 << 16


@dataclass
class RawChunk:
    layout: object
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray | None

    @property
    def nbytes(self) -> int:
        return self.src.nbytes + self.dst.nbytes + (0 if self.weight is None else self.weight.nbytes)


@dataclass
class Stats:
    passes: int = 0
    advances: int = 0
    local_iterations: int = 0  # relaxations of a loaded chunk beyond the first (async mode)
    back_arcs: int = 0  # arcs of the CEL augmentation relaxed (async mode, augmented stores)
    chunks_processed: int = 0
    chunks_skipped: int = 0
    arcs_processed: int = 0
    bytes_read: int = 0
    bytes_to_device: int = 0
    seconds_reading: float = 0.0
    seconds_computing: float = 0.0
    per_pass: list = field(default_factory=list)     # one record per pass or advance
    convergence: list = field(default_factory=list)  # (iteration, measure) the algorithm reports
    # Profiling only: {"pass": index into per_pass, "spans": [[lane, chunk, start, stop], ...]}.
    timeline: list = field(default_factory=list)

    def as_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("per_pass", "convergence", "timeline")}

    def record(self, kind, seconds, before: dict, arcs=None, trace: PassTrace | None = None):
        """Append a pass record: what moved since ``before`` (a snapshot of the counters); with a
        ``trace`` (profiling) also the busy time of each lane and the overlap ratios."""
        moved = self.bytes_to_device - before["bytes_to_device"]
        self.per_pass.append({
            "kind": kind, "seconds": seconds,
            "chunks": self.chunks_processed - before["chunks_processed"],
            "skipped": self.chunks_skipped - before["chunks_skipped"],
            "arcs": self.arcs_processed - before["arcs_processed"] if arcs is None else arcs,
            "bytes_read": self.bytes_read - before["bytes_read"], "bytes_to_device": moved,
            "GBps_to_device": moved / seconds / 1e9 if seconds > 0 else 0.0,
            "seconds_reading": self.seconds_reading - before["seconds_reading"],
        })
        if trace is not None:
            spans = trace.resolve()
            self.per_pass[-1].update(summarize(spans, seconds))
            self.timeline.append({"pass": len(self.per_pass) - 1, "spans": spans})


class Engine:
    """Streams one graph's CEL through a device backend under a host-memory budget.

    Parameters
    ----------
    graph : Graph
    memory : int or str, optional
        Host budget for state and cached chunks (default: a quarter of RAM). Tiny budgets are
        honoured by cutting the CEL into small chunks and caching none.
    device : {"cpu", "gpu", "auto"}
    device_memory : int or str, optional
        GPU only: budget for vertex state, the device chunk cache and a device CSR (default: 80%
        of the free device memory). Chunks beyond it are streamed again on every pass.
    profile : bool
        Wait for the device at the end of every pass, so that per-pass seconds are exact, and
        trace when each chunk was read, copied and computed (:mod:`.trace`).
    state_arrays : int
        How many float64 per-vertex arrays the algorithm keeps (counted against the budget).
    """

    def __init__(self, graph: Graph, *, memory=None, device: str = "auto", state_arrays: int = 4,
                 device_memory=None, profile: bool = False):
        self.graph = graph
        self.profile = profile
        self.backend = get_backend(device, graph)
        self.memory = parse_budget(memory)
        n, arcs = graph.num_vertices, graph.num_arcs
        state_bytes = state_arrays * 8 * n + n  # float64 arrays and the change flags
        per_arc = PREPARED_BYTES_PER_ARC + graph.cel_nbytes_per_arc()
        self._csr_budget = self.memory // 4
        free_device = self.backend.free_memory()
        if free_device is not None:
            self.device_memory = parse_budget(device_memory) if device_memory is not None else int(0.8 * free_device)
            room = min(self.device_memory, free_device)
            if state_bytes > room and device == "auto":
                log.warning("%s: the vertex state (%s) does not fit the GPU budget (%s); running on the CPU",
                            graph.path, human(state_bytes), human(room))
                self.backend, free_device = get_backend("cpu"), None
            elif state_bytes > room:
                raise DeviceError(f"{graph.path}: the vertex state needs {human(state_bytes)} of device memory "
                                  f"but the budget is {human(room)}")
        # A chunk in flight (with its CEL augmentation, at most as large, on an augmented store)
        # may take at most half of what is left; the rest caches chunks.
        in_flight = 2 if graph.augmented else 1
        if free_device is None:
            free = max(self.memory - state_bytes, 0)
        else:
            per_arc = 8 + graph.cel_nbytes_per_arc()  # int32 ids on the device + the raw copy
            spare = max(self.device_memory - state_bytes, 0)
            # The device CSR (frontier advance only) takes a quarter of the budget, but never the
            # room that full-size chunks in flight need: streaming comes first.
            self._csr_budget = min(self.device_memory // 4,
                                   max(spare - (1 + in_flight) * graph.chunk_arcs * per_arc, 0))
            free = spare - self._csr_budget
        chunk = max(1, min(graph.chunk_arcs, (free // (1 + in_flight)) // per_arc))
        self.chunk_arcs = chunk
        self.bounds = [(a, min(a + chunk, arcs)) for a in range(0, arcs, chunk)]
        self.cache = ResidentCache(free - in_flight * chunk * per_arc)
        # On a GPU the device cache above holds decoded chunks; this host cache keeps raw chunks in
        # pinned memory so that chunks streamed again on every pass come at bus speed, not disk speed.
        self.host_cache = None if free_device is None else ResidentCache(self.memory)
        self.stats = Stats()
        offsets, bsrc, bdst = graph.blocks
        self._block_offsets = np.asarray(offsets, np.int64)
        self._block_src = np.asarray(bsrc, np.int64)
        self._block_dst = np.asarray(bdst, np.int64)
        self._k = len(graph.intervals) - 1
        # Source intervals present in each chunk, for selective scheduling.
        first = np.searchsorted(self._block_offsets, [a for a, _ in self.bounds], side="right") - 1
        last = np.searchsorted(self._block_offsets, [b for _, b in self.bounds], side="left")
        self._chunk_src = [np.unique(self._block_src[f:e]) for f, e in zip(first, last)]
        # First and last sub-graph (destination interval) of each chunk.
        self._chunk_dst = [(int(self._block_dst[f]), int(self._block_dst[e - 1])) for f, e in zip(first, last)]
        self._csr = {}
        self._degree = None
        self._whole = None  # the whole graph in one source-blocked batch (GPU), False if unavailable
        self._reader = None  # the thread that reads chunks ahead, made on first need
        self._trace = None  # the current pass's PassTrace while profiling
        self._compute_start = {}  # chunk -> marker where its (fresh) preparation began, while profiling
        self.joined = 0  # chunks the last pass took in through ``live`` (see batches)
        log.debug("engine: %d chunks of <= %d arcs, cache budget %d bytes", len(self.bounds), chunk,
                  self.cache.budget)

    def reset_stats(self):
        self.stats = Stats()

    def release(self):
        """Drop the cached chunks and CSR (host and device memory)."""
        self.cache.clear()
        if self.host_cache is not None:
            self.host_cache.clear()
        self._csr.clear()
        self._degree = None
        self._whole = None
        if self._reader is not None:
            self._reader.shutdown(wait=True)
            self._reader = None

    # -- streaming ------------------------------------------------------------------------------
    def _raw(self, i, trace: PassTrace | None = None, back: bool = False) -> "RawChunk":
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
        # Chunks no cache holds are read from the store by the reader thread, PREFETCH ahead, so
        # that reading chunk i+1 overlaps preparing and processing chunk i.
        misses = [] if self.chunk_arcs < PREFETCH_MIN_ARCS else \
            [i for i in order if i not in self.cache and (self.host_cache is None or i not in self.host_cache)]
        pending, submitted = {}, 0
        resident = getattr(self.backend.kernels, "resident", None)
        try:
            for i in order if live is None else every:
                if i not in scheduled:
                    if not live()[self._chunk_src[i]].any():
                        continue
                    self.joined += 1
                while submitted < len(misses) and len(pending) < PREFETCH:
                    j = misses[submitted]
                    pending[j] = self._reader_pool().submit(self._raw, j, trace)
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
        self.stats.record("pass", time.perf_counter() - t, before, trace=trace)

    def _whole_graph(self):
        """Every arc in one cache-blocked batch (the backend's ``source_blocked``), built once all
        chunks are resident on the device and if the cache has room for this second copy; None
        until then or where the backend has no such layout."""
        if self._whole is not None:
            return self._whole or None
        build = getattr(self.backend.kernels, "source_blocked", None)
        if build is None or not self.bounds or not all(i in self.cache for i in range(len(self.bounds))):
            return None  # not (yet) everything resident: stream chunks
        need = 8 * self.graph.num_arcs
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
        log.info("built the source-blocked layout of %d arcs in %.3f s", self.graph.num_arcs,
                 time.perf_counter() - t)
        return self._whole

    def _whole_pass(self, batch):
        """Yield ``batch`` (the whole graph) as one pass over every chunk."""
        self.stats.passes += 1
        before, t = self.stats.as_dict(), time.perf_counter()
        self.stats.chunks_processed += len(self.bounds)
        self.stats.arcs_processed += batch.num_arcs
        yield batch
        self._sync()
        self.stats.record("pass", time.perf_counter() - t, before)

    def _reader_pool(self) -> ThreadPoolExecutor:
        if self._reader is None:
            self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ooc-graph-reader")
        return self._reader

    def _sync(self):
        """Wait for the device (only where per-pass timing asks for it: profiling)."""
        if self.profile and self.backend.xp is not np:
            self.backend.xp.cuda.get_current_stream().synchronize()

    def csr(self, side: str):
        """The ``side`` CSR on the backend's device, or ``None`` when it does not fit the budget."""
        if side not in self._csr:
            g = self.graph
            nbytes = 8 * (g.num_vertices + 1) + g.num_arcs * (g.id_dtype.itemsize + (8 if g.weighted else 0))
            if nbytes > self._csr_budget - sum(c[3] for c in self._csr.values() if c):
                self._csr[side] = None
            else:
                xp = self.backend.xp
                indptr, indices, w = g.csr(side)
                self.stats.bytes_read += indptr.nbytes + indices.nbytes + (0 if w is None else w.nbytes)
                self._csr[side] = (xp.asarray(indptr), xp.asarray(indices),
                                   None if w is None else xp.asarray(w, dtype=np.float64), nbytes)
        return self._csr[side]

    # -- operators ------------------------------------------------------------------------------
    def pull_sum(self, x):
        """``y[v] = Σ_{u→v} x[u]`` over all arcs (one pass). On a GPU holding every chunk, passes
        after the first run over one cache-blocked copy of the graph (:func:`kernels.gpu.source_blocked`)."""
        k, xp = self.backend.kernels, self.backend.xp
        t = time.perf_counter()
        y = xp.zeros(self.graph.num_vertices, dtype=np.float64)
        whole = self._whole_graph()
        for batch in self.batches() if whole is None else self._whole_pass(whole):
            k.pull_sum(batch, x, y)
        self.stats.seconds_computing += time.perf_counter() - t
        return y

    def propagate_min(self, state, *, plus, frontier, execution: str = "auto") -> int:
        """Relax ``state[v] = min(state[v], state[u] + w)`` over every arc u→v (``plus=None``: the
        arc weight, else that constant) until nothing changes, starting from the vertices in
        ``frontier``. Returns the number of iterations.

        Each iteration is either an edge-centric pass over the chunks whose source intervals hold a
        changed vertex, or — when the changed vertices have few arcs and the CSR fits in the budget
        — a frontier advance over the CSR. The frontier stays on the device; each iteration syncs
        two scalars (its size and its arc count) and, for a pass, its intervals.

        ``execution="async"`` (WolfGraph): within a pass, each loaded chunk is relaxed again until
        it changes nothing, so arcs inside a chunk carry updates many hops per pass; this costs
        one device→host flag per extra relaxation. A chunk that an earlier chunk of the same pass
        activated is processed in that pass, so a wave crosses every chunk in one pass; after
        ``SWEEP_PATIENCE`` passes in which no chunk joined that way the sweep direction turns
        round, so a wave travelling towards lower ids does too. On a store with the CEL
        augmentation a forward sweep relaxes each chunk's arcs back into earlier sub-graphs with
        it. ``"auto"`` runs synchronously and turns
        asynchronous once ``ASYNC_AFTER_PASSES`` passes have been needed while chunks are streamed
        (the cache does not hold them all): a high-diameter graph out of core.
        """
        if execution not in EXECUTIONS:
            raise choice("execution", execution, EXECUTIONS)
        g, k, xp = self.graph, self.backend.kernels, self.backend.xp
        if self._degree is None:
            self._degree = xp.asarray(g.out_degree)
        frontier = xp.asarray(np.asarray(frontier, dtype=np.int64))
        changed = xp.zeros(g.num_vertices, dtype=np.uint8)
        iterations = cel_passes = 0
        backward, idle = False, 0  # the direction of asynchronous sweeps, passes no chunk joined
        t = time.perf_counter()
        while frontier.size:
            iterations += 1
            changed.fill(0)
            arcs = int(self._degree[frontier].sum())
            advance = arcs < ADVANCE_FRACTION * g.num_arcs and self.csr("out") is not None
            if advance:
                self.stats.advances += 1
                self.stats.arcs_processed += arcs
                indptr, indices, w, _ = self.csr("out")
                before, ta = self.stats.as_dict(), time.perf_counter()
                k.advance_min(indptr, indices, w, frontier, state, plus, changed)
                self._sync()
                self.stats.record("advance", time.perf_counter() - ta, before, arcs=arcs)
            else:
                active = np.zeros(self._k, dtype=bool)
                active[self.backend.to_host(xp.unique(frontier // g.interval_size))] = True
                flag = xp.zeros(1, dtype=np.uint8)
                cel_passes += 1
                local = execution == "async" or (execution == "auto" and cel_passes > ASYNC_AFTER_PASSES
                                                 and self.cache.refused > 0)
                live = self._live_intervals(active, changed) if local else None
                # Asynchronous sweeps keep their direction while waves run along it (chunks join
                # the pass) and turn round after SWEEP_PATIENCE passes that none joined. BFS passes
                # measured on road NY from three sources: forwards only 23/16/25, strict alternation
                # 35/23/39, this rule 26/20/26; on a 60x20 mesh from its last vertex forwards only
                # takes 82, this rule 5.
                for i, batch in self.batches(active, indexed=True, live=live, reverse=backward):
                    if not local:
                        k.relax_min(batch, state, plus, changed)
                        continue
                    # The augmentation reaches sub-graphs processed earlier in a forward sweep.
                    back = self.back_batch(i) if g.augmented and not backward else None
                    for _ in range(MAX_LOCAL_ITERATIONS):  # to local convergence
                        flag.fill(0)
                        k.relax_min(batch, state, plus, changed, flag)
                        if back is not None:
                            k.relax_min(back, state, plus, changed, flag)
                            self.stats.back_arcs += back.num_arcs
                            self.stats.arcs_processed += back.num_arcs
                        if not int(flag[0]):
                            break
                        self.stats.local_iterations += 1
                        self.stats.arcs_processed += batch.num_arcs
                idle = idle + 1 if local and not self.joined else 0
                if idle >= SWEEP_PATIENCE:
                    backward, idle = not backward, 0
            frontier = xp.flatnonzero(changed)
            self.stats.convergence.append((iterations, int(frontier.size)))
            log.info("iteration %d: %s, %d vertices changed", iterations, "advance" if advance else "pass",
                     int(frontier.size))
        self.stats.seconds_computing += time.perf_counter() - t
        return iterations

    def _live_intervals(self, active: np.ndarray, changed):
        """``live()`` for :meth:`batches`: the intervals active at the start of the pass or holding
        a vertex changed since (one small device→host copy per call)."""
        size, n = self.graph.interval_size, self.graph.num_vertices
        xp = self.backend.xp
        padded = xp.zeros(len(active) * size, dtype=np.uint8)

        def live():
            padded[:n] = changed
            return active | self.backend.to_host(padded.reshape(len(active), size).any(axis=1))
        return live

    def hook_components(self):
        """Connected components by hooking and pointer jumping (Gunrock CC): each pass hangs the
        larger root of every arc's two trees under the smaller, then every vertex jumps to its root.
        Pointers only decrease, so the root of a component is its smallest vertex. Arcs count in
        both directions. Returns (root of every vertex, passes)."""
        k, xp = self.backend.kernels, self.backend.xp
        parent = xp.arange(self.graph.num_vertices, dtype=np.int64)
        changed = xp.zeros(1, dtype=np.uint8)
        passes = 0
        t = time.perf_counter()
        while self.graph.num_arcs:
            passes += 1
            changed.fill(0)
            for batch in self.batches():
                k.hook_min(batch, parent, changed)
            while True:  # pointer jumping, in memory: trees become stars
                up = parent[parent]
                if bool((up == parent).all()):
                    break
                parent[:] = up
            self.stats.convergence.append((passes, int(changed[0])))
            log.info("hooking pass %d: %s", passes, "trees merged" if int(changed[0]) else "stable")
            if not int(changed[0]):
                break
        self.stats.seconds_computing += time.perf_counter() - t
        return parent, passes

    def tight_parents(self, dist, *, plus, root: int):
        """A shortest-path tree of ``dist``: parent[v] is the smallest u with dist[u] + w == dist[v].

        Strictly shorter tight arcs first; vertices reached only over zero-weight arcs are then
        resolved in further passes, each from the vertices resolved before it. -1 marks the root
        and unreached vertices.
        """
        k, xp = self.backend.kernels, self.backend.xp
        n = self.graph.num_vertices
        parent = xp.full(n, n, dtype=np.int64)
        parent[root] = root
        for batch in self.batches():
            k.tight_parent(batch, dist, plus, parent, None)
        reached = xp.isfinite(dist)
        while True:
            resolved = parent < n
            missing = int((reached & ~resolved).sum())
            if not missing:
                break
            for batch in self.batches():
                k.tight_parent(batch, dist, plus, parent, resolved)
            if int((reached & (parent == n)).sum()) == missing:  # pragma: no cover - defensive
                break
        parent[parent == n] = -1
        parent[root] = -1
        return parent

"""The library's tunables: one typed, validated configuration, set for a block or for the process.

Every threshold and switch that decides *how* a call computes (never *what* it computes) lives
here, each with the measurement behind its default. Code reads them where it decides
(``config.get().traversal.advance_fraction``); nothing reads a module constant. A setting is
changed for a block — this thread or task only, and whatever it starts through the engine's
thread pools (:func:`carried`) —

>>> from ooc_graph import config
>>> with config.set(traversal={"bottom_up": False}, stream={"prefetch": 2}):
...     config.get().traversal.bottom_up
False
>>> config.get().traversal.bottom_up
True

or for the whole process with :func:`update`. A distributed job carries the configuration of the
call that submitted it to every worker, so its ranks compute as the caller asked. Unknown names
and values of the wrong type are a :class:`~ooc_graph.errors.ParameterError` naming the valid
choices. (The models: networkx's ``nx.config`` and ``dask.config.set``.)

This module imports nothing of the library but its errors and :mod:`ooc_graph._records`: every
layer, the kernels included, may read it.
"""

# No ``from __future__ import annotations`` here: dataclasses reads string annotations slowly (three
# regular-expression look-ups a field, for ClassVar, InitVar and KW_ONLY), ~1 ms over these 90
# settings at import; the fields' types are the classes (bool, int, float).
import contextvars
import dataclasses
import functools
import math
import os
import threading
from contextlib import contextmanager
from dataclasses import field

from ooc_graph._records import record
from ooc_graph.errors import ParameterError

__all__ = ["Config", "get", "set", "update", "carried", "Traversal", "Stream", "CPU", "GPU", "Store", "Ingest",
           "Algorithms"]


class _Section:
    """Checks a section's fields against their annotated types when it is made."""

    # fields that must be at least 1 (counts, sizes); the other numbers must be at least 0
    _AT_LEAST_ONE: tuple = ()

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value, kind = getattr(self, f.name), f.type
            where = f"{_SECTIONS[type(self)]}.{f.name}"
            if kind is bool:
                if not isinstance(value, bool):
                    raise ParameterError(f"config {where} must be True or False (got {value!r})")
                continue
            if kind is int:
                ok = isinstance(value, int) and not isinstance(value, bool)
            else:  # float: an int is taken too, and inf (e.g. "every frontier advances")
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
            least = 1 if f.name in self._AT_LEAST_ONE else 0
            if not ok or value < least:
                raise ParameterError(f"config {where} must be {'an integer' if kind is int else 'a number'} "
                                     f"of at least {least} (got {value!r})")


def _cores(most: int, least: int = 1, share: int = 1) -> int:
    return max(least, min(most, (os.cpu_count() or 2) // share))


@record(frozen=True)
class Traversal(_Section):
    """How ``propagate_min`` (BFS, SSSP, components by minimum) and betweenness traverse."""

    # Advance over the CSR when the frontier's arcs are fewer than this fraction of all arcs.
    advance_fraction: float = 1 / 16
    # Where the backend has whole traversals (the compiled CPU kernels) and the CSR is in memory,
    # propagate_min runs in one call instead of a loop of levels (False: always the loop).
    whole_traversal: bool = True
    # Where one process holds the out-CSR and the backend has ``brandes`` (numba's kernels; hops
    # only on a GPU), betweenness runs each source's traversal and sums there (Engine.brandes),
    # this many sources a call, reported between calls (False: level sweeps on edge_map).
    whole_brandes: bool = True
    brandes_sources_per_call: int = 64
    # Asynchronous mode: at most this many relaxations of one loaded chunk before moving on.
    max_local_iterations: int = 256
    # execution="auto" turns asynchronous after this many passes, if chunks are being streamed.
    # Measured (benchmarks/RESULTS.md, "Synchronous against asynchronous execution"): on a road
    # graph async cuts streamed passes 24x (612 -> 26); on R-MAT (5-12 passes) it saves none and
    # costs up to 2x.
    async_after_passes: int = 16
    # On one GPU, run levels of small frontier advances back to back on the device (kernels.gpu
    # advance_levels); False looks at every level from the host.
    queued_levels: bool = True
    # Frontiers with more arcs than this advance one level at a time, arc-balanced, not queued.
    queued_max_arcs: int = 1 << 16
    # Asynchronous sweeps turn round after this many passes in a row that no chunk joined
    # (measured in propagate_min's comment).
    sweep_patience: int = 2
    # Direction optimisation (Beamer et al., SC'12), its published constants: go bottom-up once
    # the frontier's arcs exceed 1/alpha of the arcs of unvisited vertices, back top-down once the
    # frontier holds fewer than 1/beta of the vertices. bottom_up False: never.
    bottom_up: bool = True
    bottom_up_alpha: int = 14
    bottom_up_beta: int = 24
    # Near-far buckets for arc weights (Davidson et al., IPDPS'14, Gunrock's SSSP): each iteration
    # expands only the changed vertices within the bound; False: every changed vertex, each
    # iteration. The bucket width is near_far_width x a typical weight / the mean out-degree (the
    # paper's rule; see nearfar.near_far_delta). 128, measured on an H200 (benchmarks/RESULTS.md,
    # near-far): NY in memory 83 ms at 32 (50 bound raises, each a look from the host), 54 ms at
    # 128 (13), 139 ms without buckets; the 300x300 grid 59 / 40 ms (15 ms without).
    near_far: bool = True
    near_far_width: float = 128
    # The same rule's width for a whole traversal on one GPU (kernels/gpu_whole.cu), whose iterations
    # cost a grid barrier, not a look from the host: narrower buckets, fewer vertices expanded again.
    whole_near_far_width: float = 2
    # A distributed level-synchronous traversal runs advances of at most this many arcs on every
    # rank over the whole frontier (no level merge; the tree on the way), larger ones split.
    replicated_max_arcs: int = 1 << 24
    # Such levels agree on stopping (a cancel; an all-reduce and its host wait, 0.2-0.7 ms on two
    # H200s) only every this many in a row.
    replicated_agree_every: int = 16
    # Starting frontiers up to this size have their distinct vertices counted on the host.
    host_unique: int = 1 << 16
    # Shortest-path parents from the in-arc CSR where it is on the device (one thread a vertex,
    # stopping at its first tight in-arc) instead of a pass over every arc; False: always the pass.
    csr_parents: bool = True
    # BFS and SSSP with a constant increment build their tree during the traversal's
    # level-synchronous levels (kernels with LEVEL_PARENTS) instead of after it; False: after.
    tree_on_the_way: bool = True

    _AT_LEAST_ONE = ("brandes_sources_per_call", "max_local_iterations", "sweep_patience", "bottom_up_alpha",
                     "bottom_up_beta", "replicated_agree_every")


@record(frozen=True)
class Stream(_Section):
    """How the engine streams chunks and hands results over."""

    # Chunks the reader threads read ahead of the one being processed; smaller chunks are read
    # inline, where a read costs less than handing it to a thread.
    prefetch: int = 4
    prefetch_min_arcs: int = 1 << 16
    # Threads reading chunks ahead: several read in parallel where the store is read directly
    # (store/direct.py); through h5py they take turns.
    reader_threads: int = 4
    # A budget so small that a pass would take more chunks than this is refused (naming the
    # smallest budget that works) instead of crawling through one-arc chunks.
    max_chunks_per_pass: int = 4096
    # On a GPU the engine streams up to this many arcs at a time (whole store chunks, several
    # where the store's are smaller) where the store's chunks hold at least coalesce_min_arcs (and
    # it has no CEL augmentation): with the default store chunk (4 Mi arcs, 16 MB a transfer) the
    # copy engine idled while the host issued each chunk's work. Streamed PageRank at 25% budget on
    # R-MAT-25, H200: 76-87% of the pinned ceiling with 4 Mi-arc chunks, 96% with 16 Mi.
    stream_chunk_arcs: int = 1 << 24
    coalesce_min_arcs: int = 1 << 20
    # Device memory kept back from the chunks for the kernels' small scratch (reductions' partial
    # sums, scalars; CuPy rounds blocks up to 512 bytes): a thousandth of the budget, at most this.
    # Without it a streamed PageRank took its 302 MB budget and 30 KB more.
    device_scratch_bytes: int = 256 << 10
    # Results smaller than this are copied into fresh memory: preparing them gains nothing.
    prepare_min_bytes: int = 8 << 20
    # Large result parts are faulted in by several threads at once (shared memory faults in at
    # ~2.4 GB/s a thread: a distributed BFS of R-MAT-24 on two H200s spent 55 of its 108 ms
    # waiting for its rank's 134 MB of results).
    populate_threads: int = field(default_factory=lambda: _cores(8, share=2))

    _AT_LEAST_ONE = ("prefetch", "reader_threads", "max_chunks_per_pass", "stream_chunk_arcs", "populate_threads")


@record(frozen=True)
class CPU(_Section):
    """The CPU kernels."""

    # Whether to use the compiled kernels where numba is installed (the environment variable
    # OOC_GRAPH_CPU_KERNELS=numpy sets the default to False: NumPy's, the reference).
    compiled: bool = field(default_factory=lambda: os.environ.get("OOC_GRAPH_CPU_KERNELS", "compiled") != "numpy")
    # Batches with at least this many arcs share a pull-sum among numba's threads, where there are
    # at least parallel_min_threads (NUMBA_NUM_THREADS); the whole kernels below take the same
    # threshold. Two threads of the 2-core development machine against one, quiet (R-MAT-20 /
    # R-MAT-18, warm): BFS 1.5x / 1.2x faster, SSSP 1.4-2.1x / 1.3-1.5x, WCC 1.7x / 1.4-1.7x,
    # PageRank 1.8-2.6x / 1.2-1.6x (the whole pull); with one other busy process there, the same
    # within noise; with two (3 on 2 cores), BFS 1.7x slower, the others within noise. An older
    # kernel set measured two threads slower than one (a pull-sum 0.8x, up to 8x when the other
    # core was busy): the threads now take work in chunks from a counter.
    parallel_min_arcs: int = 1 << 16
    parallel_min_threads: int = 2
    # Direction-optimising BFS (kernels.cpu.bfs_tree; Beamer, Asanovic and Patterson, SC'12): a
    # level goes bottom-up when its frontier's out-arcs exceed the arcs still unexplored /
    # bfs_alpha and the vertices / bfs_min_frontier, and back top-down once a bottom-up level
    # looked at more than bfs_leave_bottom_up times the next frontier's arcs. Top-down levels
    # branch on the data only after a level that found fewer than one new vertex per bfs_branchy
    # arcs. Measured against csgraph on road NY/FLA, soc-Slashdot0902, ego-Twitter and cit-HepPh
    # (benchmarks/RESULTS.md): alpha 14 (GAP uses 15) was 13% slower than 8 on ego-Twitter and
    # 30% on cit-HepPh, 6 to 10 within noise; branchy 2 slowed road graphs by a quarter, 3 to 8
    # within noise; min-frontier and leave-bottom-up within noise over 4 to 32 and 1 to 8.
    bfs_alpha: int = 8
    bfs_min_frontier: int = 16
    bfs_branchy: int = 4
    bfs_leave_bottom_up: int = 2
    # Whole kernels over a CSR in memory (BFS, SSSP, components, PageRank's pull and step) run on
    # numba's threads where the CSR has at least whole_parallel_min_arcs arcs and numba has at
    # least parallel_min_threads; inside them, a BFS level with fewer than level_parallel_min_arcs
    # arcs runs on the calling thread (a road graph's thousands of small levels cost no
    # fork-join), and an SSSP round with fewer than that many times 2 / threads
    # (kernels.cpu_whole.round_parallel_min_arcs).
    whole_parallel_min_arcs: int = 1 << 16
    level_parallel_min_arcs: int = 1 << 14
    # Whole min-relaxations with arc weights (SSSP) by delta-stepping, buckets delta_width typical
    # weights over the mean out-degree wide, also on one thread (False: Dijkstra there).
    delta_stepping: bool = True
    delta_width: float = 2.0
    # Afforest (whole components over a CSR in memory): out-arcs a vertex links before the
    # largest component is sampled (GAP's neighbor_rounds).
    afforest_rounds: int = 2
    # PageRank's pull over the whole in-CSR, one call per pass (kernels.cpu.pull_rows), in place of
    # the cached chunks, where the in-CSR fits and the pull runs on numba's threads (at least
    # parallel_min_threads): on 16 threads of a 32-core host it took 459 ms against the chunks' 563
    # (the anchors' R-MAT-22, 18 iterations; benchmarks/RESULTS.md), and a first call prepares no
    # chunk. On one thread the chunks measured faster (R-MAT-18, 15 iterations, the 2-core machine:
    # 107 ms to 123; their cache-blocked copy keeps the sources' values in cache): whole_pull True
    # takes the in-CSR there too.
    whole_pull: bool = False

    _AT_LEAST_ONE = ("parallel_min_threads", "bfs_alpha", "bfs_min_frontier")


@record(frozen=True)
class GPU(_Section):
    """The GPU kernels."""

    # Re-sort chunks that stay resident by destination, so pull_sum reduces whole runs in the warp
    # instead of issuing about one float64 atomic per arc. Measured on an H100, R-MAT scale 22
    # (benchmarks/results/gpu-rmat22-h100.json): 1.42 ms per pass sorted, 1.40 ms in CEL order,
    # so the gather of x[src], not the atomics, bounds the pass: CEL order (no sort).
    sort_resident: bool = False
    # GraphCage cache blocking for passes over every arc (pull_sum): the arcs in one batch ordered
    # by (source segment, destination), so the thread blocks running at once gather x from one
    # segment of 2**segment_bits vertices that stays in L2. Measured on an H100 (50 MB L2),
    # R-MAT-25 (benchmarks/results/gpu-rmat25.json): a pass takes 10.4 ms in CEL order, 4.66 ms
    # with segments of 16 MiB of float64 (5.13 ms at 8 MiB, 5.14 at 32, 6.25 at 64), against
    # 11.4 ms for cupyx's CSR SpMV. A blocked layout keeps the bits it was made with.
    segment_bits: int = 21
    # Advances hand rows with many arcs to an arc-balanced kernel (the frontier's arcs cut evenly
    # among thread blocks) instead of one warp a vertex, which left one warp to relax a hub's arcs:
    # the first BFS level from the top vertex of R-MAT-24 took 9.8 ms on an H200 that way.
    balanced: bool = True
    # csr_parents: arcs of a row one thread looks at before the row goes to the arc-balanced kernel.
    parent_first_arcs: int = 32
    # Whole traversals (kernels/gpu_whole.cu): a frontier vertex with more arcs than this has them
    # spread over the whole grid instead of one warp (a hub's hundred thousand arcs took one warp
    # 3.8 ms of a 7 ms BFS of R-MAT-22 on an H100 in the level loop's first advance).
    heavy_arcs: int = 2048
    # ... and one with at most this many arcs is taken by a single thread (a warp would leave most
    # of its lanes idle on R-MAT's many small rows); rows read from host memory always take a warp.
    thread_arcs: int = 16
    # Whole BFS, bottom-up levels: lanes that look through one unreached vertex's in-row together
    # (1: a thread a vertex, the most vertices in flight; rows read from host memory take 32: whole
    # 128-byte lines). A power of two up to 32.
    bottom_up_group: int = 1
    # Frontier queues for advance_levels: vertices a level may hand on without the host, and how
    # many levels run between two looks from the host.
    queue_capacity: int = 1 << 16
    levels_per_sync: int = 64
    # A CSR too large for the device budget is read by the traversal kernels in place, from
    # page-locked host memory (zero-copy, EMOGI), its offsets on the device; False: chunks stream.
    zero_copy: bool = True
    # Results of a one-process GPU run up to this share of physical memory live in page-locked
    # memory from the pinned pool (copied into at bus speed; fresh pageable memory is bound by its
    # page faults: ~9 GB/s for BFS's two 33 MB arrays on an H100 host); larger ones pageable.
    pinned_results_share: float = 1 / 16
    # Page-locked arrays of at least this many bytes take blocks of kernels/gpu_pinned.py (huge
    # pages registered with CUDA: four of 66 MiB in 0.06 s against cudaHostAlloc's 0.19-0.26 s on
    # an H100 host); smaller ones CuPy's pinned pool (a block each would hold more than budgets count).
    pinned_min_bytes: int = 1 << 20

    _AT_LEAST_ONE = ("segment_bits", "queue_capacity", "levels_per_sync", "heavy_arcs", "bottom_up_group")

    def __post_init__(self):
        super().__post_init__()
        if self.bottom_up_group not in (1, 2, 4, 8, 16, 32):
            raise ParameterError(f"config gpu.bottom_up_group must be a power of two up to 32 "
                                 f"(got {self.bottom_up_group!r})")


@record(frozen=True)
class Store(_Section):
    """Reading and writing stores."""

    # Read the large datasets' chunks straight from the file on several threads (store/direct.py);
    # False reads everything through h5py (one thread).
    direct_reads: bool = True
    # Smaller datasets are read through h5py (2-core machine, a fresh reader: 1 MB 2.0 ms through
    # h5py against 2.4 directly, 4 MB 6.1 against 4.2, 16 MB 14.2 against 9.4).
    direct_min_bytes: int = 4 << 20
    # Threads reading a dataset's chunks directly.
    readers: int = field(default_factory=lambda: _cores(8, least=2))
    # Write large datasets chunk by chunk, checksummed on threads (store/chunks.py); False:
    # every dataset is appended through h5py.
    chunk_writer: bool = True
    # Datasets expected to fill fewer chunks are appended through h5py.
    chunk_writer_min_chunks: int = 2
    # Arrays of at least this many chunks written at once go through the chunk writer too.
    write_array_min_chunks: int = 4
    # Threads computing checksums: the checksum runs at ~2.5 GB/s a thread (NumPy, without the
    # GIL), the calling thread's copies and writes at ~4 GB/s (2-core development machine).
    checksum_threads: int = field(default_factory=lambda: _cores(4, least=2))
    # Compact a store by itself when its unused bytes pass this share of the bytes in use and at
    # least auto_compact_min_bytes (0: never; the environment variable OOC_GRAPH_AUTO_COMPACT=off
    # or a fraction overrides it).
    auto_compact_fraction: float = 0.25
    auto_compact_min_bytes: int = 1 << 20

    _AT_LEAST_ONE = ("readers", "checksum_threads")


@record(frozen=True)
class Ingest(_Section):
    """Converting and generating."""

    # Threads by default: the cores, at most this many. At 8, R-MAT-25 on a 16-core GPU machine
    # kept the store's writer waiting 6.1 s of its 14.8 for the sorting threads; past 16 the serial
    # stages around them (adding the input, appending the scattered arcs, the HDF5 writes: ~20 s
    # of R-MAT-25) dominate.
    max_workers: int = 16
    # numba and the compiled kernels it loads add ~110 MiB to the program (measured: 66 MiB with
    # the package imported, 118 with numba, 176 with one cached kernel loaded): the degree pass,
    # the generators and the chunk writer use them from this budget up (NumPy, or h5py, below).
    compiled_min_budget: int = 2 << 30
    # pyarrow's CSV reader (when installed) reads text on all cores, but its library adds ~50 MiB
    # to the program: it is used from this budget up (numpy.loadtxt below).
    arrow_min_budget: int = 2 << 30
    # Chunks of input with fewer edges have their ids checked and marked by NumPy (a fork-join
    # of numba's threads costs more).
    id_kernel_min_edges: int = 1 << 16
    # Buckets are sorted on worker threads; each holds at least this many arcs when the budget
    # allows, so that a small graph is not scattered into many buckets for nothing.
    min_bucket_arcs: int = 1 << 20
    # Chunks with fewer arcs are split by bucket on one of numba's threads (a fork-join costs more).
    bucket_parallel_min_arcs: int = 1 << 16
    # Builds of fewer arcs count degrees with NumPy (under a tenth of a second; loading numba's
    # kernels takes more).
    degrees_compiled_min_arcs: int = 1 << 22
    # Degree chunks with fewer edges are counted on one thread (a fork-join costs more than it
    # saves); the parallel count needs this many threads to pay (4M edges into 2**25 vertices:
    # 66 ms against 33 on the development machine).
    degrees_parallel_min_edges: int = 1 << 16
    degrees_parallel_min_threads: int = 4
    # Buckets smaller than this are sorted on the CPU: the transfers would cost more than they save.
    gpu_sort_min_arcs: int = 1 << 16
    # Generators draw fewer edges with NumPy: under a second, less than loading numba's kernels or
    # compiling the GPU's the first time in a process.
    generate_kernel_min_edges: int = 1 << 22
    # Bytes of text read at a time.
    text_block_bytes: int = 64 << 20
    # Edges the R-MAT and uniform generators draw per step (a task of the drawing threads). The
    # graph does not depend on it: edge e is drawn from e alone.
    generate_step: int = 1 << 22
    # Edges per block of NumPy's draw: a block's temporaries stay in the processor's cache between
    # the dozens of passes over them (4x faster than whole 4M-edge steps on the development
    # machine). The graph does not depend on it.
    generate_block: int = 1 << 17

    _AT_LEAST_ONE = ("max_workers", "degrees_parallel_min_threads", "text_block_bytes", "generate_step",
                     "generate_block")


@record(frozen=True)
class Algorithms(_Section):
    """Choices inside the algorithms that do not change their answers."""

    # Stripes of PageRank's last pull whose results go to the host as each is done (one GPU): the
    # copy of the last stripe, an eighth of the result's, is what is left after the pass.
    pagerank_result_stripes: int = 8
    # Triangles and LCC: blocks of rows per rank (rank r of a job takes blocks r, r + size, ...;
    # numba's threads share a rank's blocks the same way), and the wedges a block holds.
    wedge_blocks_per_rank: int = 256
    min_block_wedges: int = 1 << 12
    max_block_wedges: int = 1 << 24
    # Louvain on the CPU: on a level with at least this many arcs a sweep visits only the vertices
    # next to a move since their last visit (Ozaki et al.'s pruning: 1.6 times less work on
    # R-MAT-18, same modularity). It may settle in another local optimum, so smaller levels, cheap
    # to sweep whole, are swept whole (on the tests' small graphs that found 0.4% more modularity).
    louvain_prune_min_arcs: int = 1 << 20

    _AT_LEAST_ONE = ("pagerank_result_stripes", "wedge_blocks_per_rank", "min_block_wedges", "max_block_wedges")


_SECTIONS = {Traversal: "traversal", Stream: "stream", CPU: "cpu", GPU: "gpu", Store: "store", Ingest: "ingest",
             Algorithms: "algorithms"}


@record(frozen=True)
class Config:
    """Every section; ``Config()`` holds the defaults."""

    traversal: Traversal = field(default_factory=Traversal)
    stream: Stream = field(default_factory=Stream)
    cpu: CPU = field(default_factory=CPU)
    gpu: GPU = field(default_factory=GPU)
    store: Store = field(default_factory=Store)
    ingest: Ingest = field(default_factory=Ingest)
    algorithms: Algorithms = field(default_factory=Algorithms)
    # "section.name" of every setting made (by set or update) rather than defaulted
    made: frozenset = field(default=frozenset(), compare=False, repr=False)

    def replace(self, changes: dict | None = None, /, **sections) -> "Config":
        """A copy with ``changes``: ``{"section.name": value}`` and/or ``section={name: value}``."""
        merged: dict = {}
        for key, value in (changes or {}).items():
            section, _, name = str(key).partition(".")
            if not name:
                raise ParameterError(f"config key {key!r} must be 'section.name' (sections: {', '.join(_NAMES)})")
            merged.setdefault(section, {})[name] = value
        for section, values in sections.items():
            if not isinstance(values, dict):
                raise ParameterError(f"config {section}= must be a dict of settings (got {values!r})")
            merged.setdefault(section, {}).update(values)
        out = {}
        for section, values in merged.items():
            if section not in _NAMES:
                raise ParameterError(f"unknown config section {section!r} (valid: {', '.join(_NAMES)})")
            current = getattr(self, section)
            valid = [f.name for f in dataclasses.fields(current)]
            unknown = sorted(k for k in values if k not in valid)
            if unknown:
                raise ParameterError(f"config {section} has no setting {', '.join(map(repr, unknown))} "
                                     f"(valid: {', '.join(valid)})")
            out[section] = dataclasses.replace(current, **values)
        made = self.made | {f"{section}.{name}" for section, values in merged.items() for name in values}
        return dataclasses.replace(self, made=made, **out)

    def changes(self) -> dict:
        """``{"section.name": value}`` of the settings made here, default or not (what a job carries
        to its workers: a worker's own process settings stand where the caller made none)."""
        return {key: getattr(getattr(self, key.split(".")[0]), key.split(".")[1]) for key in sorted(self.made)}


_NAMES = tuple(_SECTIONS.values())
_lock = threading.Lock()
_process = Config()
_local: contextvars.ContextVar = contextvars.ContextVar("ooc_graph_config", default=None)


def get() -> Config:
    """The configuration in force here: a block's (:func:`set`), else the process's."""
    return _local.get() or _process


@contextmanager
def set(changes: dict | Config | None = None, /, **sections):  # noqa: A001 - as dask.config.set
    """Change settings for the block (this thread or task, and the work it hands to the engine's
    threads): ``set({"traversal.bottom_up": False})``, ``set(traversal={"bottom_up": False})``, or
    a whole :class:`Config` (a job's, on a worker). Yields the configuration in force."""
    cfg = changes if isinstance(changes, Config) and not sections else get().replace(changes, **sections)
    token = _local.set(cfg)
    try:
        yield cfg
    finally:
        _local.reset(token)


def update(changes: dict | None = None, /, **sections) -> Config:
    """Change settings for the whole process (blocks inside :func:`set` keep theirs); returns the new
    process configuration."""
    global _process
    with _lock:
        _process = _process.replace(changes, **sections)
        return _process


def reset() -> None:
    """The defaults again for the whole process."""
    global _process
    with _lock:
        _process = Config()


def carried(fn):
    """``fn`` to run on another thread with the configuration in force here (threads start with
    the process's): pass what a pool runs through this."""
    cfg = _local.get()
    if cfg is None:
        return fn

    @functools.wraps(fn)
    def run(*args, **kwargs):
        token = _local.set(cfg)
        try:
            return fn(*args, **kwargs)
        finally:
            _local.reset(token)
    return run

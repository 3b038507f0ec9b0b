"""Every offset, count and id computation past 2**31 arcs and 2**30 vertices, on the CPU in seconds
(issue 28, item 3): the target is R-MAT scale 30 (2**30 vertices, 2**34 = 17.2 billion arcs),
Friendster 3.6 billion arcs, and no graph of more than 2**31 arcs has been through the code yet.

Nothing here allocates anything of the graph's size. The tests feed each computation small arrays
holding large values: block tables whose offsets pass 2**31 and 2**32, a stand-in graph exposing
only the attributes a function reads (``num_arcs``, ``intervals``, ``blocks``, ``chunk_arcs``...)
with R-MAT-30's sizes, ids next to 2**31 and 2**32, degrees whose sums pass 2**32, edge counters
past 2**32, an HDF5 dataset of 2**34 elements with three chunks written. Expected values are
worked out independently, in Python integers, and compared exactly: an int32 cast, a wrapped
cumulative sum or an int32 ``searchsorted`` anywhere on the way changes them.
"""

import bisect
import contextlib
import gc
import os
from fractions import Fraction
from types import SimpleNamespace

import h5py
import numpy as np
import pytest

from ooc_graph.algorithms import _wedges
from ooc_graph.engine import edge_map
from ooc_graph.engine.backend import INT32_MAX, get_backend
from ooc_graph.engine.cache import ResidentCache
from ooc_graph.engine.stats import Stats
from ooc_graph.engine.stream import ChunkStream
from ooc_graph.errors import StoreError
from ooc_graph.generate import _id_dtype as generator_id_dtype
from ooc_graph.ingest import buckets as B
from ooc_graph.ingest import sorting
from ooc_graph.kernels import cpu as cpu_kernels
from ooc_graph.kernels import cpu_generate
from ooc_graph.partitioning.cel import blocks_of_sorted, chunk_layout, sort_arcs, to_global
from ooc_graph.partitioning.chunks import chunk_intervals, cut
from ooc_graph.partitioning.intervals import global_id_dtype, interval_bounds, local_id_dtype
from ooc_graph.partitioning.plan import plan
from ooc_graph.runtime import segments
from ooc_graph.store import Graph, contents, direct
from ooc_graph.store._validate import check_block_table
from ooc_graph.store.chunks import fletcher32

N30 = 1 << 30        # R-MAT scale 30: vertices
A30 = 1 << 34        # and arcs (edge factor 16, directed)
SIZE = 1 << 16       # the default interval
K30 = N30 // SIZE    # 16,384 intervals (sub-graphs)
GRID = 1 << 22       # the default store chunk (arcs)
PER_SUBGRAPH = A30 // K30  # 2**20 arcs each
U64 = (1 << 64) - 1


# -- a stand-in for R-MAT-30 ---------------------------------------------------------------------
def _rmat30_blocks():
    """Sub-graph d (2**20 arcs) as two blocks: sources d // 2 (2**19 - 1 arcs) and 16383 - d // 2
    (2**19 + 1 arcs), so block offsets are not aligned to anything. Python lists."""
    offsets, src, dst = [0], [], []
    for d in range(K30):
        for s, length in ((d // 2, (1 << 19) - 1), (K30 - 1 - d // 2, (1 << 19) + 1)):
            src.append(s)
            dst.append(d)
            offsets.append(offsets[-1] + length)
    return offsets, src, dst


RMAT30_TABLE = _rmat30_blocks()


class StubGraph:
    """Just what the partition plan, the engine's chunking and its budget read from a store."""

    def __init__(self, n=N30, table=RMAT30_TABLE, *, chunk_arcs=GRID, interval_size=SIZE, directed=True,
                 weighted=False):
        offsets, src, dst = table
        self.num_vertices, self.num_arcs = n, int(offsets[-1])
        self.intervals = interval_bounds(n, interval_size)
        self.interval_size = interval_size
        self.blocks = (np.array(offsets, np.int64), np.array(src, np.int64), np.array(dst, np.int64))
        self.chunk_arcs = chunk_arcs
        self.directed, self.weighted, self.augmented = directed, weighted, False
        self.id_dtype = global_id_dtype(n)
        self.attrs = {"local_id_dtype": local_id_dtype(self.intervals).name,
                      "weight_dtype": "float32" if weighted else ""}
        self.path = "r-mat-30 (stand-in)"

    def cel_nbytes_per_arc(self) -> int:
        return Graph.cel_nbytes_per_arc(self)


def _graph_stub(**attributes) -> Graph:
    """A :class:`Graph` with no file: its methods run on the attributes given (cached properties
    and methods included)."""
    g = object.__new__(Graph)
    g.__dict__.update(path="stub.h5", **attributes)
    return g


def _covering(offsets, start, stop):
    """The blocks a CEL range [start, stop) holds arcs of and how many of each: a plain loop."""
    out = []
    for b in range(len(offsets) - 1):
        taken = min(offsets[b + 1], stop) - max(offsets[b], start)
        if taken > 0:
            out.append((b, taken))
    return out


# -- vertex intervals and id types ---------------------------------------------------------------
def test_interval_bounds_and_id_types_at_2_30_and_2_31_vertices():
    bounds = interval_bounds(N30, SIZE)
    assert bounds.dtype == np.int64 and len(bounds) == K30 + 1
    assert bounds[-1] == N30 and bounds[K30 // 2] == 1 << 29 and bounds[K30 - 1] == N30 - SIZE
    n = (1 << 32) + 5  # ids past 2**32: the last interval holds 5
    bounds = interval_bounds(n, SIZE)
    assert len(bounds) == (1 << 16) + 2 and bounds[-2] == 1 << 32 and bounds[-1] == n
    assert bounds[1 << 15] == 1 << 31
    # A local id is below its interval's length.
    assert local_id_dtype(np.array([0, 1 << 16])) == np.uint16
    assert local_id_dtype(np.array([0, (1 << 16) + 1])) == np.uint32
    assert local_id_dtype(np.array([0, 1 << 32])) == np.uint32
    assert local_id_dtype(np.array([0, 5, (1 << 32) + 6])) == np.uint64
    # Every rule choosing 32-bit ids for n vertices holds ids 0..n-1 (FORMAT.md: int32 when n <= 2**31-1).
    assert global_id_dtype(INT32_MAX) == np.int32 and global_id_dtype(1 << 31) == np.int64
    for n in (INT32_MAX, 1 << 31, (1 << 31) + 1, 1 << 32):
        for dt in (global_id_dtype(n), generator_id_dtype(n)):
            assert np.iinfo(dt).max >= n - 1, (n, dt)


# -- the block table and chunk layouts -----------------------------------------------------------
# Blocks across 2**31 and 2**32, in intervals whose global ids pass 2**31 (interval 32768 starts there).
OFFSETS = [0, (1 << 31) - 3, (1 << 31) + 5, (1 << 32) - 1, (1 << 32) + 2, A30]
BSRC = [16383, 32768, 3, 40000, 65535]
BDST = [0, 0, 1, 1, 65535]


@pytest.mark.parametrize("start,stop", [((1 << 31) - 8, (1 << 31) + 10), ((1 << 32) - 1, (1 << 32) + 2),
                                        ((1 << 32) - 4, (1 << 32) + 3), (A30 - 7, A30), (0, A30)])
def test_chunk_layout_with_offsets_past_2_32(start, stop):
    layout = chunk_layout(np.array(OFFSETS, np.int64), np.array(BSRC, np.int64), np.array(BDST, np.int64), start, stop)
    covered = _covering(OFFSETS, start, stop)
    assert (layout.start, layout.stop, layout.first_block) == (start, stop, covered[0][0])
    assert layout.lengths.tolist() == [taken for _, taken in covered]
    assert layout.src_interval.tolist() == [BSRC[b] for b, _ in covered]
    assert layout.dst_interval.tolist() == [BDST[b] for b, _ in covered]
    assert int(layout.lengths.sum()) == stop - start


def test_to_global_ids_past_2_31_and_2_32():
    start, stop = (1 << 31) - 4, (1 << 31) + 7  # blocks 0, 1 and 2
    layout = chunk_layout(np.array(OFFSETS, np.int64), np.array(BSRC, np.int64), np.array(BDST, np.int64), start, stop)
    src_local = np.array([65535, 0, 1, 2, 3, 4, 5, 6, 7, 65534, 9], np.uint16)
    dst_local = np.array([7, 65535, 1, 2, 3, 4, 5, 6, 7, 8, 65535], np.uint16)
    src, dst = to_global(layout, src_local, dst_local, SIZE)
    blocks = [b for b, taken in _covering(OFFSETS, start, stop) for _ in range(taken)]
    assert src.tolist() == [BSRC[b] * SIZE + int(x) for b, x in zip(blocks, src_local)]
    assert dst.tolist() == [BDST[b] * SIZE + int(x) for b, x in zip(blocks, dst_local)]
    assert src.tolist()[1] == 1 << 31  # interval 32768's first id
    big = chunk_layout(np.array(OFFSETS, np.int64), np.array(BSRC, np.int64), np.array(BDST, np.int64),
                       A30 - 2, A30)
    src, dst = to_global(big, np.array([0, 65535], np.uint16), np.array([1, 2], np.uint16), SIZE)
    assert src.tolist() == [(1 << 32) - SIZE, (1 << 32) - 1] and dst.tolist() == [(1 << 32) - SIZE + 1,
                                                                                    (1 << 32) - SIZE + 2]


def test_block_table_checks_name_offsets_past_2_32():
    offsets = np.array(OFFSETS, np.int64)
    check_block_table(offsets, np.array(BSRC), np.array(BDST), 1 << 16, "s.h5", "cel", source_major=False)
    offsets[4] = (1 << 32) - 2  # below the offset before it
    with pytest.raises(StoreError, match=r"holds 4294967294 at position 4, below the offset before it"):
        check_block_table(offsets, np.array(BSRC), np.array(BDST), 1 << 16, "s.h5", "cel", source_major=False)


# -- chunk cutting and what each chunk covers ----------------------------------------------------
def test_cut_on_the_store_grid_past_2_32():
    start, stop = (1 << 32) - 150, (1 << 32) + 1000
    assert cut(start, stop, 300, 100) == [(4294967146, 4294967200), (4294967200, 4294967500),
                                          (4294967500, 4294967800), (4294967800, 4294968100),
                                          (4294968100, 4294968296)]
    chunks = cut(0, A30, GRID, GRID)
    assert len(chunks) == A30 // GRID == 4096 and chunks[-1] == (A30 - GRID, A30)
    assert all(b - a == GRID and a % GRID == 0 for a, b in chunks)
    worker = cut((1 << 33) + 12345, 3 << 32, 1 << 24, GRID)  # a worker's range, cut on the grid
    assert worker[0] == ((1 << 33) + 12345, (1 << 33) + GRID) and worker[1] == ((1 << 33) + GRID, (1 << 33) + GRID
                                                                                + (1 << 24))
    assert worker[-1][1] == 3 << 32 and all(b == c for (_, b), (c, _) in zip(worker, worker[1:]))
    assert all(a % GRID == 0 for a, _ in worker[1:])


def test_chunk_intervals_past_2_32():
    chunks = [(0, 1 << 31), ((1 << 31) - 3, (1 << 31) + 6), ((1 << 32) - 1, (1 << 32) + 2), ((1 << 32) + 1, A30)]
    sources, subgraphs = chunk_intervals(np.array(OFFSETS, np.int64), np.array(BSRC, np.int64),
                                         np.array(BDST, np.int64), chunks)
    for (a, b), got, ends in zip(chunks, sources, subgraphs):
        covered = [blk for blk, _ in _covering(OFFSETS, a, b)]
        assert got.tolist() == sorted({BSRC[blk] for blk in covered})
        assert ends == (BDST[covered[0]], BDST[covered[-1]])


@pytest.mark.parametrize("seed", range(6))
def test_chunk_intervals_equal_the_sorted_distinct_sources(seed):
    """Random block tables (runs of ascending source intervals, empty blocks, chunks cutting blocks
    anywhere): each chunk's source intervals are the distinct sources of the blocks it touches."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    bsrc = np.concatenate([np.sort(rng.choice(k, int(rng.integers(1, k + 1)), replace=False)) for _ in range(k)])
    sizes = rng.integers(0, 50, bsrc.size)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    bdst = np.arange(bsrc.size) // max(1, bsrc.size // k)
    m = int(offsets[-1])
    cuts = np.unique(np.concatenate([[0, m], rng.integers(0, m + 1, int(rng.integers(0, 12)))]))
    chunks = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if a < b]
    sources, _ = chunk_intervals(offsets, bsrc, bdst, chunks)
    for (a, b), got in zip(chunks, sources):
        f = np.searchsorted(offsets, a, side="right") - 1
        e = np.searchsorted(offsets, b, side="left")
        np.testing.assert_array_equal(got, np.unique(bsrc[f:e]))


# -- the partition plan ----------------------------------------------------------------------------
@pytest.mark.parametrize("parts", [2, 3, 4, 7])
def test_partition_plan_of_r_mat_30(parts):
    G = StubGraph()
    got = plan(G, parts)
    starts = [d * PER_SUBGRAPH for d in range(K30 + 1)]  # each sub-graph's first arc
    cuts = [0]
    for p in range(1, parts):  # the sub-graph boundary nearest A * p / parts (the upper one on a tie)
        target = Fraction(A30 * p, parts)
        i = bisect.bisect_left(starts, target)
        if target - starts[i - 1] < starts[i] - target:
            i -= 1
        cuts.append(i)
    cuts.append(K30)
    assert [p.intervals for p in got] == list(zip(cuts, cuts[1:]))
    assert [p.arcs for p in got] == [(starts[a], starts[b]) for a, b in zip(cuts, cuts[1:])]
    assert [p.vertices for p in got] == [(a * SIZE, b * SIZE) for a, b in zip(cuts, cuts[1:])]
    assert sum(p.num_arcs for p in got) == A30
    if parts == 4:
        assert [p.arcs for p in got] == [(0, 1 << 32), (1 << 32, 1 << 33), (1 << 33, 3 << 32), (3 << 32, A30)]


# -- the engine: budget, chunk sizes, chunks ------------------------------------------------------
def _stream_config(configure):
    configure(stream={"prefetch": 4, "max_chunks_per_pass": 4096, "stream_chunk_arcs": 1 << 24,
                      "coalesce_min_arcs": 1 << 20, "device_scratch_bytes": 256 << 10}, gpu={"zero_copy": True})


@pytest.mark.parametrize("arc_range", [None, (1 << 32, 1 << 33), ((1 << 32) + 12345, A30 - 7)])
def test_chunk_stream_of_r_mat_30_on_the_cpu(configure, arc_range):
    _stream_config(configure)
    G = StubGraph()
    stream = ChunkStream(G, memory=64 * 10**9, device="cpu", arc_range=arc_range)
    start, stop = arc_range or (0, A30)
    state = 4 * 8 * N30 + N30  # four float64 arrays and the change flags: 33 GiB
    cached, flight = 32 + 4, (32 + 36) + 4 * 4  # a prepared chunk and two uint16 ids; in flight (prefetch 4)
    free = 64 * 10**9 - state
    assert free // (cached + flight) > GRID and stream.chunk_arcs == GRID  # the store's chunk bounds it
    assert stream.cache.budget == free - GRID * flight == 28_214_198_272
    # The chunks: cut on the grid, covering the range once.
    assert stream.bounds[0][0] == start and stream.bounds[-1][1] == stop
    assert all(b == c for (_, b), (c, _) in zip(stream.bounds, stream.bounds[1:]))
    assert all(a % GRID == 0 and b - a <= GRID for a, b in stream.bounds[1:])
    assert len(stream.bounds) == -(-stop // GRID) - start // GRID
    # What each covers: 4 sub-graphs of 2 blocks a chunk (sources d // 2 and 16383 - d // 2).
    for i in (0, 1, len(stream.bounds) // 2, len(stream.bounds) - 1):
        a, b = stream.bounds[i]
        first, last = a // PER_SUBGRAPH, (b - 1) // PER_SUBGRAPH
        assert stream._chunk_dst[i] == (first, last)
        offsets = RMAT30_TABLE[0]
        blocks = [blk for blk, _ in _covering(offsets, a, b)]
        assert stream._chunk_src[i].tolist() == sorted({RMAT30_TABLE[1][blk] for blk in blocks})
    assert stream._csr_nbytes() == 8 * (N30 + 1) + A30 * 4 == 77_309_411_336


def _gpu_sizing(G, device_memory):
    """A stream's ``_size_chunks`` on a GPU of ``device_memory`` bytes, its host-side arithmetic
    alone (the backend's kernels stand in: three staging slots, zero-copy reads possible)."""
    stream = object.__new__(ChunkStream)
    stream.graph, stream.memory, stream.device_memory = G, 256 * 10**9, device_memory
    stream.backend = SimpleNamespace(kernels=SimpleNamespace(STAGING_SLOTS=3, mapped=lambda a: a), xp=None)
    state = 4 * 8 * G.num_vertices + G.num_vertices
    return stream, stream._size_chunks(state, device_memory, G.num_arcs)


def test_gpu_chunk_sizes_and_csr_room_for_r_mat_30(configure):
    """An H100's 64 GB budget: the out-CSR of R-MAT-30 (77 GB) cannot be held, its offsets are set
    aside for zero-copy reads, the chunks take the rest."""
    _stream_config(configure)
    stream, (chunk, free, cached, flight) = _gpu_sizing(StubGraph(), 64 * 10**9)
    state, scratch = 33 * N30, 256 << 10
    spare = 64 * 10**9 - state - scratch
    assert (cached, flight) == (8, 2 * 8 + 3 * 4)  # int32 ids decoded; two in flight, three raw copies
    assert stream._csr_nbytes() == 77_309_411_336 and stream._csr_budget == 0
    assert stream._offset_room == 2 * 8 * (N30 + 1) == 17_179_869_200
    assert free == spare - 17_179_869_200 == 11_386_388_464
    assert chunk == 1 << 24  # four store chunks at a time


def test_gpu_csr_room_for_just_over_2_31_arcs(configure):
    """A graph of 2**31 + 5 arcs: its CSR (8.7 GB) fits a quarter of an 80 GB budget."""
    _stream_config(configure)
    n = 1 << 24
    table = ([0, (1 << 31) - 1, (1 << 31) + 5], [0, 255], [0, 255])
    stream, (chunk, free, _, _) = _gpu_sizing(StubGraph(n, table), 80 * 10**9)
    assert stream._csr_nbytes() == 8 * (n + 1) + ((1 << 31) + 5) * 4 == 8_724_152_348
    assert stream._csr_budget == 20 * 10**9 and stream._offset_room == 0
    assert free == 80 * 10**9 - 33 * n - (256 << 10) - 20 * 10**9 and chunk == 1 << 24


@pytest.mark.parametrize("last,narrow", [(INT32_MAX, True), (1 << 31, False), ((1 << 32) + 3, False)])
def test_cpu_csr_offsets_narrowed_only_below_2_31(last, narrow):
    """The engine keeps a CSR's offsets as int32 on the CPU where its arcs allow (half the bytes a
    traversal reads): only while the last offset fits."""
    indptr = np.array([0, 5, last], np.int64)
    G = SimpleNamespace(num_vertices=2, num_arcs=last, id_dtype=np.dtype(np.int32), weighted=False,
                        csr=lambda side: (indptr, np.zeros(3, np.int32), None))
    stream = object.__new__(ChunkStream)
    stream.graph, stream.backend, stream.stats, stream._csr, stream._csr_budget = \
        G, get_backend("cpu"), Stats(), {}, 1 << 62
    got = stream.csr("out")[0]
    assert got.dtype == (np.int32 if narrow else np.int64) and got.tolist() == [0, 5, last]


# -- the engine's reverse passes over the out-CSR ---------------------------------------------------
def test_reverse_passes_over_out_csr_rows_past_2_32():
    """``edge_map``'s transposed batches: the rows of arcs [a, b) of the out-CSR found by binary
    search in offsets past 2**32, and each arc's two ends."""
    indptr = [0, (1 << 32) - 3, (1 << 32) - 3, (1 << 32) + 2, (1 << 32) + 4, (1 << 32) + 9, (1 << 32) + 9]
    n = len(indptr) - 1

    def read(name, sel=slice(None)):
        if name.endswith("indptr"):
            return np.array(indptr, np.int64)
        return (np.arange(sel.start, sel.stop, dtype=np.int64) % n).astype(np.int32)  # arc p goes to p % n
    G = SimpleNamespace(num_vertices=n, weighted=False, _read=read)
    engine = SimpleNamespace(graph=G, backend=get_backend("cpu"), stats=Stats(), owned=(1, n), chunk_arcs=5,
                             cache=ResidentCache(1 << 30), _sync=lambda: None, clock="device")
    a, b = indptr[1], indptr[n]
    assert edge_map._reverse_plan(engine)[1] == [(a, a + 5), (a + 5, a + 10), (a + 10, b)]
    row = lambda p: bisect.bisect_right(indptr, p) - 1  # noqa: E731  (the row arc p lies in)
    got = list(edge_map.reverse_batches(engine, indexed=True))
    chunks = [(a, a + 5), (a + 5, a + 10), (a + 10, b)]
    for j, ((first, nxt), batch) in enumerate(got):
        s, e = chunks[j]
        assert first == row(s) and nxt == (row(chunks[j + 1][0]) if j + 1 < len(chunks) else n)
        assert batch.matrix.indices.tolist() == [p % n for p in range(s, e)]  # the head of each arc
        assert batch.dst().tolist() == [row(p) for p in range(s, e)]      # its tail
    assert engine.stats.arcs_processed == b - a


# -- the store's reads ------------------------------------------------------------------------------
def test_read_cel_ranges_past_2_32():
    calls = []

    def read_ranges(name, ranges, empty):
        calls.append((name, ranges))
        return np.zeros(0, np.uint16)
    g = _graph_stub(attrs={"weighted": False}, blocks=(np.array(OFFSETS, np.int64), np.array(BSRC, np.int64),
                                                       np.array(BDST, np.int64)), _read_ranges=read_ranges)
    start, stop = (1 << 32) - 4, (1 << 32) + 3
    layout, _, _, w = g.read_cel(start, stop)
    assert w is None and calls == [("cel/src", [(start, 7)]), ("cel/dst", [(start, 7)])]
    assert layout.lengths.tolist() == [taken for _, taken in _covering(OFFSETS, start, stop)] == [3, 3, 1]
    assert Graph.num_chunks.fget(SimpleNamespace(num_arcs=A30 + 1, chunk_arcs=GRID)) == 4097


@pytest.mark.parametrize("limit", [A30, (1 << 32) + 5])
def test_augmentation_selection_past_2_32(limit):
    """The CEL augmentation's blocks from source intervals 1..3 into destinations before 1, whole
    blocks first up to ``limit`` arcs, and the ranges read for them."""
    offsets = [0, (1 << 31) + 1, (1 << 32) + 3, (1 << 32) + 10, 1 << 33, A30]
    bsrc, bdst = [1, 2, 2, 3, 3], [0, 0, 1, 0, 2]  # source-major; blocks 2 and 4 reach sub-graph 1 and 2
    calls = []

    def read_ranges(name, ranges, empty):
        calls.append((name, ranges))
        return np.zeros(0, np.uint16)
    g = _graph_stub(attrs={"augmented": True, "weighted": False}, _read_ranges=read_ranges,
                    back_blocks=tuple(np.array(x, np.int64) for x in (offsets, bsrc, bdst)))
    picked, left = [], limit
    for blk in (0, 1, 3):  # the blocks into destinations < 1, in store order
        take = min(offsets[blk + 1] - offsets[blk], left)
        left -= take
        if take:
            picked.append((blk, take))
    assert g.count_back_arcs(1, 3, 1, limit) == sum(t for _, t in picked) == min(limit, (1 << 33) - 7)
    layout, _, _, _ = g.read_back_arcs(1, 3, 1, limit)
    assert layout.lengths.tolist() == [t for _, t in picked] and layout.stop == sum(t for _, t in picked)
    assert layout.src_interval.tolist() == [bsrc[blk] for blk, _ in picked]
    runs = [(0, picked[0][1] + picked[1][1]), (offsets[3], picked[2][1])]  # blocks 0 and 1 are one run
    assert calls == [("cel_aug/src", runs), ("cel_aug/dst", runs)]


def test_h5py_range_reads_of_a_sparse_dataset_past_2_32(tmp_path):
    """A dataset of 2**34 elements (three of its chunks written: the file stays small) read through
    h5py, as the store reads ranges where direct reads do not apply."""
    path = tmp_path / "sparse.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("cel/src", shape=(A30,), dtype="<u2", chunks=(1 << 16,), fletcher32=True)
        ds[(1 << 32) - 3:(1 << 32) + 3] = np.arange(1, 7, dtype=np.uint16)  # across a chunk boundary at 2**32
        ds[A30 - 2:] = [65535, 7]
    assert path.stat().st_size < 1 << 20
    with h5py.File(path, "r") as f:
        with pytest.raises(direct.Unsupported):  # unwritten chunks: the direct reader leaves it to h5py
            direct.ChunkTable(f["cel/src"])
        g = _graph_stub(_file=lambda: contextlib.nullcontext(f), _direct_table=lambda h5, name: None)
        got = g._fetch_ranges("cel/src", [((1 << 32) - 3, 6), (1 << 33, 2), (A30 - 2, 2)], np.empty)
    assert got.tolist() == [1, 2, 3, 4, 5, 6, 0, 0, 65535, 7]


def test_direct_reader_element_offsets_past_2_32(tmp_path):
    """Reading ranges of a 2**33-element dataset straight from the file: the chunk and the place in
    it of each element from Python integers. The stand-in table points chunk i at one of three
    stored chunks (i mod 3: a chunk index taken mod 2**20, 2**32 elements, reads another one)."""
    chunk = 4096
    stored = [np.arange(chunk, dtype=np.uint16) + 10000 * j for j in range(3)]
    path = tmp_path / "chunks.bin"
    with open(path, "wb") as f:
        for values in stored:
            f.write(values.tobytes() + np.array([fletcher32(values.view(np.uint8))], "<u4").tobytes())
    size = (1 << 33) + 100
    table = object.__new__(direct.ChunkTable)
    table.dtype, table.chunk, table.size = np.dtype(np.uint16), chunk, size
    table.offset = np.arange(-(-size // chunk), dtype=np.int64) % 3 * (chunk * 2 + direct.FLETCHER)

    def want(start, count):
        return [int(stored[(p // chunk) % 3][p % chunk]) for p in range(start, start + count)]
    reader = direct.DirectReader(path)
    try:
        for start, count in [((1 << 32) + chunk - 6, 12), ((1 << 33) - chunk, chunk), ((1 << 31) - 1, 2),
                             (size - 10, 10), ((1 << 32) - 3, 2 * chunk + 6)]:
            out = np.empty(count, np.uint16)
            reader.read(table, start, count, out)
            assert out.tolist() == want(start, count), (start, count)
        with pytest.raises(ValueError):
            reader.read(table, size - 1, 2, np.empty(2, np.uint16))
    finally:
        reader.close()


# -- the checks before first use ---------------------------------------------------------------------
def test_cel_check_names_a_bad_id_past_2_32():
    """The CEL check, range by range over 2**34 arcs: only ranges holding a block of the short
    last interval are read, and a bad id past 2**32 is named at its exact position."""
    n = N30 + 1000  # the last interval (16384) has 1000 vertices
    offsets = [0, (1 << 32) + 5, (1 << 32) + 105, A30]
    bsrc, bdst = [0, K30, 1], [0, 0, 1]
    bad_at = (1 << 32) + 5 + 77
    reads = []

    def fetch(name, ranges, empty):
        (a, count), = ranges
        reads.append((name, a, count))
        ids = np.zeros(count, np.uint16)
        if name == "cel/src" and a <= bad_at < a + count:
            ids[bad_at - a] = 1000
        return ids
    G = SimpleNamespace(blocks=tuple(np.array(x, np.int64) for x in (offsets, bsrc, bdst)),
                        intervals=interval_bounds(n, SIZE), attrs={"local_id_dtype": "uint16"},
                        chunk_arcs=GRID, weighted=False, path="stub.h5", _fetch_ranges=fetch)
    with pytest.raises(StoreError, match=r"dataset cel/src holds 1000 at position 4294967378, outside its "
                                         r"interval's local ids 0\.\.999"):
        contents._cel(G)
    assert reads == [("cel/src", 1 << 32, GRID)]  # the one range (a store chunk) holding block 1, nothing else


def test_degree_check_with_offsets_past_2_32():
    """Vertex 0 has 2**32 + 3 arcs: every offset after it passes 2**32; a wrong degree is named."""
    n = 3 * (1 << 20) + 5
    wrong = (1 << 21) + 7

    def fetch(name, ranges, empty):
        (a, count), = ranges
        v = np.arange(a, a + count, dtype=np.int64)
        if name == "csr/out/indptr":
            return np.where(v > 0, (1 << 32) + 3 * v, 0)
        degree = np.where(v == 0, (1 << 32) + 3, 3)
        return np.where(v == wrong, 4, degree)
    G = SimpleNamespace(directed=True, num_vertices=n, path="stub.h5", _fetch_ranges=fetch)
    with pytest.raises(StoreError, match=r"dataset vertex/out_degree holds 4 at position 2097159, but "
                                         r"csr/out/indptr gives that vertex 3 arcs"):
        contents._degrees(G, "out")


# -- building a store: degrees, buckets, sorting, blocks ----------------------------------------------
def _bucket_bounds_reference(counts, bounds, limit):
    """Runs of whole intervals of at most ``limit`` arcs; an interval with more cut into runs of its
    vertices (each at least one vertex, as long as it stays within ``limit``). Python integers."""
    edges, acc = [0], 0
    for lo, hi in zip(bounds, bounds[1:]):
        c = sum(counts[lo:hi])
        if c > limit:
            if acc:
                edges.append(lo)
                acc = 0
            run, first = 0, lo
            for v in range(lo, hi):
                if v > first and run + counts[v] > limit:
                    edges.append(v)
                    run, first = 0, v
                run += counts[v]
            edges.append(hi)
            continue
        if acc and acc + c > limit:
            edges.append(lo)
            acc = 0
        acc += c
    if edges[-1] != bounds[-1]:
        edges.append(bounds[-1])
    return edges


@pytest.mark.parametrize("limit", [1 << 32, (1 << 32) + 8, (1 << 33) + 10, 1 << 31])
def test_bucket_bounds_with_degree_sums_past_2_32(limit):
    counts = [1 << 31, 1 << 31, 1, 1, 1 << 32, 3, 0, 0, 1, 1, 1, 1]
    bounds = [0, 4, 8, 12]
    got = B.bucket_bounds(np.array(counts, np.int64), np.array(bounds, np.int64), limit)
    assert got.tolist() == _bucket_bounds_reference(counts, bounds, limit)
    if limit == 1 << 32:
        assert got.tolist() == [0, 2, 4, 5, 8, 12]


def test_bucket_offsets_rows_and_plan_past_2_32():
    counts = np.array([1 << 31, (1 << 31) + 7, 0, 1 << 32, 5], np.int64)
    assert B.indptr(counts).tolist() == [0, 1 << 31, (1 << 32) + 7, (1 << 32) + 7, (1 << 33) + 7, (1 << 33) + 12]
    rows = np.array([(1 << 31) - 4, (1 << 31) - 4, (1 << 31) - 2], np.int32)  # int32 ids of n = 2**31 - 1
    assert B.degrees(rows, (1 << 31) - 5, (1 << 31) - 1).tolist() == [0, 2, 0, 1]
    # A hub of 2**33 arcs in R-MAT-30's 2**34: two sorters of buckets of 2**33 arcs.
    assert B.plan(100 * A30, 1 << 33, A30, 40, 8) == (1 << 33, 2)


@pytest.mark.parametrize("compiled", [False, True])
def test_scatter_into_buckets_with_ids_near_2_31(compiled):
    """Arcs split by bucket on int32 ids of n = 2**31 vertices (buckets starting near 2**31)."""
    edges = np.array([0, 1 << 30, (1 << 31) - 3, 1 << 31], np.int64)
    key = np.array([(1 << 31) - 1, 0, (1 << 30) - 1, 1 << 30, (1 << 31) - 3, (1 << 31) - 4], np.int32)
    other = np.arange(6, dtype=np.int32)
    if compiled:
        pytest.importorskip("numba")
        parts = B.partition(edges, key, other, key, None, threads=2)
    else:
        parts = B.partition(edges, key, other, key, None)
    want = {}
    for i, k in enumerate(key.tolist()):
        want.setdefault(bisect.bisect_right(edges.tolist(), k) - 1, []).append(i)
    assert [(b, s.tolist(), d.tolist()) for b, s, d, _ in parts] == \
        [(b, ids, key[ids].tolist()) for b, ids in sorted(want.items())]


@pytest.mark.parametrize("n,lo,hi,id_dtype", [
    (1 << 31, (1 << 31) - 8, 1 << 31, np.int64),                 # int32 ids spilled, one key per arc
    (1 << 32, 0, (1 << 31) - 1, np.int64),                       # keys up to 2**63 - 2**32 - 1
    (1 << 32, 0, (1 << 31) + 1, np.int64),                       # keys past 2**63: sorted without them
    ((1 << 31) - 1, (1 << 31) - 9, (1 << 31) - 1, np.int32),      # the largest int32 store
])
def test_sorting_a_bucket_with_ids_near_2_31_and_2_32(n, lo, hi, id_dtype):
    top = hi - 1
    rows = [top, lo, top, top - 1, lo, top]
    cols = [n - 1, 5, 0, n - 2, 5, n - 1]  # two repeats
    narrow = np.int32 if n <= 1 << 31 else np.int64
    arcs = [np.array(rows, narrow), np.array(cols, narrow), None]
    got_rows, got_cols, _, where = sorting.sort_bucket(arcs, lo, hi, n, dedupe=True, id_dtype=id_dtype)
    assert where == "cpu" and got_rows.dtype == id_dtype
    assert list(zip(got_rows.tolist(), got_cols.tolist())) == sorted(set(zip(rows, cols)))


@pytest.mark.parametrize("n", [1 << 31, 3_037_000_499, 3_037_000_500, 1 << 40])
def test_sort_arcs_with_ids_near_the_key_limit(n):
    """One int64 key ``major * n + minor`` up to n = 3,037,000,499 (n**2 < 2**63), a lexsort above."""
    major = [n - 1, 0, n - 1, n - 2, n - 1]
    minor = [n - 1, n - 1, 0, 7, n - 1]
    w = np.array([5.0, 1.0, 2.0, 3.0, 4.0])
    got = sort_arcs(np.array(major, np.int64), np.array(minor, np.int64), w, n, dedupe=True)
    pairs = sorted(set(zip(major, minor)))
    assert list(zip(got[0].tolist(), got[1].tolist())) == pairs
    assert got[2].tolist() == [min(float(x) for a, b, x in zip(major, minor, w) if (a, b) == p) for p in pairs]


@pytest.mark.parametrize("n,dtype", [((1 << 31) - 1, np.int32), ((1 << 32) + (1 << 17), np.int64)])
def test_blocks_of_sorted_ids_near_2_31_and_past_2_32(n, dtype):
    """Sorted arcs laid out as CEL blocks (rows are destinations): intervals near the top of the ids."""
    hi = n - 1
    rows = [hi - SIZE - 3, hi - SIZE - 3, hi - 2, hi - 2, hi - 1, hi]
    cols = [hi, 0, 5, hi - SIZE, hi, (1 << 31) + 9 if n > 1 << 31 else 9]
    order = sorted(range(len(rows)), key=lambda i: (rows[i], cols[i]))
    rows, cols = [rows[i] for i in order], [cols[i] for i in order]
    laid = blocks_of_sorted(np.array(rows, dtype), np.array(cols, dtype), None, SIZE, np.uint16, rows_are_dst=True)
    want = {}  # destination interval -> source interval -> [(local source, local destination)]
    for r, c in zip(rows, cols):
        want.setdefault(r // SIZE, {}).setdefault(c // SIZE, []).append((c % SIZE, r % SIZE))
    assert [int(b.block_dst[0]) for b in laid] == sorted(want)
    for b in laid:
        blocks = want[int(b.block_dst[0])]
        assert b.block_src.tolist() == sorted(blocks) and set(b.block_dst.tolist()) == {int(b.block_dst[0])}
        assert b.block_len.tolist() == [len(blocks[s]) for s in sorted(blocks)]
        arcs = [arc for s in sorted(blocks) for arc in blocks[s]]
        assert list(zip(b.src_local.tolist(), b.dst_local.tolist())) == arcs


# -- generators: edge counters past 2**32 -------------------------------------------------------------
def _hash(key, counter):
    z = (key + counter * cpu_generate.GAMMA) & U64
    z = ((z ^ (z >> 30)) * cpu_generate.MIX1) & U64
    z = ((z ^ (z >> 27)) * cpu_generate.MIX2) & U64
    return z ^ (z >> 31)


def _rmat_edge(key, e, scale, limits, keys):
    t1, t2, t3 = limits
    s = d = 0
    for level in range(scale):
        h = _hash(key, e * cpu_generate.STRIDE + level // 2)
        u = (h >> 32) if level % 2 else (h & 0xFFFFFFFF)
        s |= (u >= t2) << level
        d |= ((u >= t1) ^ (u >= t2) ^ (u >= t3)) << level
    mask, shift = (1 << scale) - 1, (scale + 1) // 2
    out = []
    for x in (s, d):
        for k, mult in zip(keys, (cpu_generate.MIX1, cpu_generate.MIX2, cpu_generate.GAMMA)):
            x = (x + k) & mask
            x ^= x >> shift
            x = (x * mult) & mask
        out.append(x ^ (x >> shift))
    return tuple(out)


@pytest.mark.parametrize("kernels", ["numpy", "compiled"])
def test_r_mat_30_edges_numbered_past_2_32(kernels):
    """R-MAT-30's edges around 2**32 and its last ones (2**34 - 1), and edges near 2**40, as a
    per-edge reference in Python integers draws them."""
    if kernels == "compiled":
        pytest.importorskip("numba")
        from ooc_graph.kernels import cpu_ingest as k
    else:
        k = cpu_generate
    keys = cpu_generate.seed_keys(30)
    limits = cpu_generate.thresholds(0.57, 0.19, 0.19)
    perm = cpu_generate.permutation(30, keys[1:])
    for start, count in (((1 << 32) - 3, 6), (A30 - 4, 4), ((1 << 40) - 2, 4)):
        src, dst = k.rmat_edges(keys[0], start, count, 30, limits, perm, dtype=np.int32)
        assert list(zip(src.tolist(), dst.tolist())) == \
            [_rmat_edge(keys[0], e, 30, limits, keys[1:]) for e in range(start, start + count)]
        src, dst = k.urand_edges(keys[0], start, count, 30, dtype=np.int32)
        base = [e * cpu_generate.STRIDE for e in range(start, start + count)]
        assert src.tolist() == [_hash(keys[0], c) >> 34 for c in base]
        assert dst.tolist() == [_hash(keys[0], c + 1) >> 34 for c in base]
        w = k.edge_weights(keys[0], start, count)
        assert w.tolist() == [((_hash(keys[0], c + cpu_generate.WEIGHT_SLOT) >> 11) + 1) * 2.0**-53 for c in base]


# -- kernels' index widths ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [INT32_MAX, (1 << 31) + SIZE])
def test_cpu_batch_ids_near_2_31(n):
    """A chunk decoded into a CPU batch: int32 column ids up to n = 2**31 - 1, int64 above."""
    top = (n - 1) // SIZE  # the last interval
    src_local = np.array([(n - 1) % SIZE, 0, 3], np.uint16)
    dst_local = np.array([1, 2, 2], np.uint16)
    batch = cpu_kernels.prepare(src_local, dst_local, None, np.array([top * SIZE, 0]), np.array([0, top * SIZE]),
                                np.array([1, 2]), 0, n, n)
    want = sorted([(1, n - 1), (top * SIZE + 2, 0), (top * SIZE + 2, 3)])  # (destination, source)
    assert batch.matrix.indices.dtype == (np.int32 if n <= INT32_MAX else np.int64)
    assert list(zip(batch.dst().tolist(), batch.matrix.indices.tolist())) == want
    assert batch.num_arcs == 3


def test_compiled_bfs_refuses_2_31_vertices_before_touching_them():
    """The compiled BFS keeps parents in 32 bits: from 2**31 vertices it leaves the traversal to the
    engine (the state is looked at only for its size)."""
    pytest.importorskip("numba")
    state = SimpleNamespace(size=1 << 31)
    assert cpu_kernels.bfs_tree(np.zeros(2, np.int64), np.zeros(1, np.int32), 0, state) is None


@pytest.mark.parametrize("n", [1 << 31, 3_037_000_499])
def test_triangle_neighbour_pairs_with_ids_near_the_key_limit(n):
    """Pair keys ``2 (a n + b) + direction`` in uint64 (2 n**2 < 2**64 up to n = 3,037,000,499)."""
    src = [n - 1, n - 2, n - 1, 0, n - 1, 5]
    dst = [n - 2, n - 1, 0, n - 1, n - 1, 5]  # (n-2, n-1) both ways, (0, n-1) both ways, two loops
    a, b, arcs = _wedges.neighbour_pairs(np, np.array(src, np.int64), np.array(dst, np.int64), n)
    want = {}
    for u, v in set(zip(src, dst)):
        if u != v:
            want[(min(u, v), max(u, v))] = want.get((min(u, v), max(u, v)), 0) + 1
    assert list(zip(a.tolist(), b.tolist(), arcs.tolist())) == [(x, y, c) for (x, y), c in sorted(want.items())]


# -- result segments -----------------------------------------------------------------------------------
@pytest.mark.skipif(not segments.SHARED_DIR.is_dir(), reason="no /dev/shm")
def test_result_segment_for_2_30_vertices():
    """A result of 2**30 + 3 float64 values: the segment (sparse, nothing written) holds exactly
    its 8 GiB and 24 bytes."""
    pool = segments.Pool()  # its own: the allocator is given its key
    empty, find, made = segments.allocator("job-large-offsets", pool.key, [], lock_pages=False)
    try:
        array = empty(((1 << 30) + 3,), np.float64)
        shared = find(array)
        assert array.shape == ((1 << 30) + 3,) and shared.shape == ((1 << 30) + 3,)
        assert os.stat(shared.path).st_size == 8 * ((1 << 30) + 3)
        assert made() == [shared.path]
        del array
    finally:
        segments.remove_made("job-large-offsets")
        gc.collect()
        segments.prune()
        pool.close()

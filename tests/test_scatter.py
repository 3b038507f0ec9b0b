"""The scatter of arcs into buckets: the compiled partition gives the NumPy reference's parts (the
same buckets, the same order within each), as views that cover their arrays whole; bucket spills
keep owned parts without a copy; and conversions write the same store, byte for byte, with the
compiled scatter or without it, on any number of workers."""

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.ingest import buckets as B
from ooc_graph.ingest.scratch import Spill
from ooc_graph.kernels import cpu

from conftest import random_edges
from test_ingest_paths import assert_same_store


@pytest.fixture
def kernels():
    if cpu.compiled() is None:
        pytest.skip("numba is not installed")
    from ooc_graph.kernels import cpu_ingest
    return cpu_ingest


def _edges(rng, n, buckets):
    """Vertex boundaries of ``buckets`` buckets of [0, n): distinct cuts at random places."""
    cuts = rng.choice(np.arange(1, n), buckets - 1, replace=False) if buckets > 1 else []
    return np.concatenate([[0], np.sort(cuts), [n]]).astype(np.int64)


def _chunk(rng, n, k, id_dtype, weight_dtype):
    src = rng.integers(0, n, k).astype(id_dtype)
    dst = rng.integers(0, n, k).astype(id_dtype)
    w = None if weight_dtype is None else rng.random(k).astype(weight_dtype)
    return src, dst, w


def _assert_same_parts(got, want):
    """The same buckets, with the same arcs in the same order (whole columns compared at once)."""
    assert [(p[0], len(p[1])) for p in got] == [(p[0], len(p[1])) for p in want]
    for c in range(1, 4):
        if not want or want[0][c] is None:
            assert all(p[c] is None for p in got)
            continue
        assert {p[c].dtype for p in got} == {want[0][c].dtype}
        np.testing.assert_array_equal(np.concatenate([p[c] for p in got]), np.concatenate([p[c] for p in want]))


def _assert_cover_whole(parts, k):
    """The parts' columns are views of one array each, which they cover whole, in bucket order."""
    for c in range(1, 4):
        cols = [p[c] for p in parts]
        if cols[0] is None:
            continue
        base = cols[0].base
        assert base is not None and len(base) == k
        assert all(col.base is base for col in cols)
        assert sum(len(col) for col in cols) == k
        starts = [col.__array_interface__["data"][0] for col in cols]
        assert starts == sorted(starts)


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("weight_dtype", [None, np.float32, np.float64])
# Buckets found by comparing with every start up to LINEAR_MAX_BUCKETS (256), by binary search
# above; bucket numbers past int16 from 2**15.
@pytest.mark.parametrize("buckets", [2, 7, 256, 257, 40000])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_compiled_partition_equals_numpy(kernels, monkeypatch, configure, id_dtype, weight_dtype, buckets, threads):
    configure({"ingest.bucket_parallel_min_arcs": 0})
    rng = np.random.default_rng([buckets, threads])
    n, k = 100_000, 50_000
    edges = _edges(rng, n, buckets)
    src, dst, w = _chunk(rng, n, k, id_dtype, weight_dtype)
    for key in (dst, src):
        want = B.partition(edges, key, src, dst, w)
        got = B.partition(edges, key, src, dst, w, threads=threads)
        _assert_same_parts(got, want)
        _assert_cover_whole(got, k)


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_partition_edge_cases(kernels, monkeypatch, configure, id_dtype, weighted):
    configure({"ingest.bucket_parallel_min_arcs": 0})
    rng = np.random.default_rng(5)
    wdt = np.float32 if weighted else None
    n = 1000
    for buckets in (40, 300):  # compared with every start, or by binary search
        edges = _edges(rng, n, buckets)
        # Keys equal to every bucket's first and last vertex, in both orders, few arcs per thread.
        keys = np.concatenate([edges[:-1], edges[1:] - 1, edges[-2::-1]]).astype(id_dtype)
        other = rng.integers(0, n, len(keys)).astype(id_dtype)
        w = None if wdt is None else rng.random(len(keys)).astype(wdt)
        for threads in (1, 2, 5, len(keys) + 3):  # more threads than arcs: empty slices
            want = B.partition(edges, keys, other, keys, w)
            got = B.partition(edges, keys, other, keys, w, threads=threads)
            assert [p[0] for p in got] == list(range(buckets))
            _assert_same_parts(got, want)
    # Empty buckets: the keys in a few buckets only, and none in the first or the last.
    src, dst, _ = _chunk(rng, 300, 20_000, id_dtype, None)
    dst = dst + 200  # in [200, 500) of [0, 1000)
    many = np.array([0, 50, 100, 199, 200, 260, 300, 301, 420, 499, 500, 700, 1000])
    got = B.partition(many, dst, src, dst, None if wdt is None else src.astype(wdt), threads=3)
    want = B.partition(many, dst, src, dst, None if wdt is None else src.astype(wdt))
    assert [p[0] for p in got] == [4, 5, 6, 7, 8, 9]
    _assert_same_parts(got, want)
    _assert_cover_whole(got, len(dst))
    # An empty chunk: no parts; one bucket: the chunk itself, with NumPy or the kernel.
    empty = np.zeros(0, id_dtype)
    ew = None if wdt is None else np.zeros(0, wdt)
    assert B.partition(edges, empty, empty, empty, ew, threads=2) == []
    assert B.partition(np.array([0, n]), empty, empty, empty, ew, threads=2) == []
    (b, s, d, x), = B.partition(np.array([0, n]), other, other, keys, w, threads=2)
    assert b == 0 and s is other and d is keys and x is w


def test_small_chunks_are_split_on_one_thread(kernels, monkeypatch):
    calls = []
    monkeypatch.setattr(kernels, "threads", lambda n, real=kernels.threads: calls.append(n) or real(n))
    rng = np.random.default_rng(2)
    edges = _edges(rng, 1000, 8)
    for k in (config.Config().ingest.bucket_parallel_min_arcs - 1, config.Config().ingest.bucket_parallel_min_arcs):
        src, dst, _ = _chunk(rng, 1000, k, np.int32, None)
        _assert_same_parts(B.partition(edges, dst, src, dst, None, threads=4), B.partition(edges, dst, src, dst, None))
    assert calls == [1, 4]


def test_scatter_threads_follow_the_compiled_rule(monkeypatch, configure):
    assert B.scatter_threads(False, 4) is None
    configure({"cpu.compiled": False})
    assert B.scatter_threads(True, 4) is None
    configure({"cpu.compiled": True})
    if cpu.compiled() is None:
        pytest.skip("numba is not installed")
    from ooc_graph.kernels import cpu_ingest
    assert B.scatter_threads(True, 1) == 1
    assert B.scatter_threads(True, 10_000) == cpu_ingest.max_threads()


def test_owned_parts_are_kept_without_a_copy(tmp_path):
    ids = np.arange(10, dtype=np.int32)
    w = np.linspace(0.5, 1, 10).astype(np.float32)
    spill = Spill(tmp_path, "b", True, narrow=True, weight_dtype=np.float32, in_memory=True)
    spill.append(ids[:4], ids[4:8], w[:4], owned=True)
    spill.append(ids[:4], ids[4:8], w[:4])
    kept, copied = spill.pieces
    assert all(np.shares_memory(v, a) for v, a in zip(kept.values(), (ids, ids, w)))
    assert not any(np.shares_memory(v, a) for v, a in zip(copied.values(), (ids, ids, w)))
    assert spill.nbytes == 2 * 4 * (4 + 4 + 4)
    # The types held: an owned array of another type is converted (once), as a copied one is.
    wide = Spill(tmp_path, "c", False, narrow=False, in_memory=True)
    big = np.arange(6, dtype=np.int64)
    wide.append(big, big[::-1], owned=True)
    wide.append(big, big[::-1], fits_int32=True, owned=True)
    held, narrowed = wide.pieces
    assert held["src"] is big and held["src"].dtype == np.int64
    assert narrowed["src"].dtype == np.int32 and not np.shares_memory(narrowed["src"], big)
    assert wide.nbytes == 6 * 2 * 8 + 6 * 2 * 4
    src, dst, _ = wide.load()
    assert src.dtype == np.int64
    np.testing.assert_array_equal(src, np.tile(big, 2))
    np.testing.assert_array_equal(dst, np.tile(big[::-1], 2))


def test_builder_keeps_owned_input_without_a_copy(tmp_path):
    """``GraphBuilder.add(owned=True)`` (the generators' steps) holds the arrays themselves; a
    plain add copies them (the caller may reuse its arrays); the stores are the same."""
    from ooc_graph.ingest.builder import GraphBuilder
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 50, 400).astype(np.int32), rng.integers(0, 50, 400).astype(np.int32)
    stores = []
    for owned in (True, False):
        out = tmp_path / f"g{int(owned)}.h5"
        with GraphBuilder(out, directed=True, weighted=False, num_vertices=50, progress=False) as b:
            b.add(src, dst, owned=owned)
            piece = b._spill.pieces[0]
            assert np.shares_memory(piece["src"], src) == owned and np.shares_memory(piece["dst"], dst) == owned
            b.finish()
        G = ooc_graph.open(out)
        stores.append([np.asarray(a).tolist() for a in G.csr("out")[:2]])
        G.close()
    assert stores[0] == stores[1]


def _convert(path, edges, *, directed, memory, workers, **opts):
    ooc_graph.convert(edges, path, directed=directed, memory=memory, workers=workers, interval_size=256,
                      progress=False, **opts).close()


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_scatter_writes_the_same_store(kernels, tmp_path, monkeypatch, configure, directed, weighted):
    rng = np.random.default_rng(11)
    src, dst, w = random_edges(rng, n=3000, m=40000, weighted=weighted)
    edges = (src, dst, w) if weighted else (src, dst)
    configure({"ingest.compiled_min_budget": 0})  # the compiled kernels at any budget and size
    configure({"ingest.degrees_compiled_min_arcs": 0})
    configure({"ingest.bucket_parallel_min_arcs": 0})
    split, held = [], []  # held: (build, bucket, in memory, owned) of each append to a bucket
    monkeypatch.setattr(kernels, "partition_arcs", lambda *a, real=kernels.partition_arcs: split.append(a[-1])
                        or real(*a))
    append = Spill.append

    def note(self, *args, **kwargs):
        if self.paths["src"].stem != "input":
            held.append((build, self.paths["src"].stem, self.in_memory, kwargs.get("owned", False)))
        append(self, *args, **kwargs)
    monkeypatch.setattr(Spill, "append", note)
    for memory in ("4MB", "2MB", None):  # several buckets in memory or in scratch files, or one bucket
        build = memory, 0
        with monkeypatch.context() as m:
            m.setattr(B, "scatter_threads", lambda compiled, workers: None)
            _convert(tmp_path / f"numpy-{memory}.h5", edges, directed=directed, memory=memory, workers=2)
        assert not split
        for workers in (1, 2, 3):
            build = memory, workers
            _convert(tmp_path / f"compiled-{memory}-{workers}.h5", edges, directed=directed, memory=memory,
                     workers=workers)
            assert set(split) <= {min(workers, kernels.max_threads())}
            if workers > 1:  # (one sorter may take the arcs in one bucket: then nothing is split)
                assert bool(split) == (memory is not None)  # one bucket: nothing to split
            split.clear()
    # The buckets keep their parts (the kernel's views, or NumPy's arrays) where their side has
    # several (the flag is moot on disk); one bucket copies the chunk, which is not its own.
    sides = {(b, name.rstrip("0123456789")): set() for b, name, _, _ in held}
    for b, name, _, _ in held:
        sides[b, name.rstrip("0123456789")].add(name)
    for b, name, in_memory, owned in held:
        assert in_memory == (b[0] != "2MB")
        assert owned == (len(sides[b, name.rstrip("0123456789")]) > 1), (b, name)
    assert {(True, True), (True, False)} <= {(in_memory, owned) for _, _, in_memory, owned in held}
    for memory in ("4MB", "2MB", None):
        for name in [f"numpy-{memory}"] + [f"compiled-{memory}-{workers}" for workers in (1, 2, 3)]:
            assert_same_store(tmp_path / "numpy-None.h5", tmp_path / f"{name}.h5")


def test_relabelled_and_wide_ids_write_the_same_store(kernels, tmp_path, monkeypatch, configure):
    """Ids relabelled by a table or by binary search (read as int64) go through the compiled scatter
    as through NumPy."""
    from ooc_graph.ingest import builder as builder_module

    rng = np.random.default_rng(4)
    src, dst, w = random_edges(rng, n=4000, m=30000, weighted=True, big_ids=True)
    configure({"ingest.compiled_min_budget": 0})
    configure({"ingest.degrees_compiled_min_arcs": 0})
    configure({"ingest.bucket_parallel_min_arcs": 0})
    for search in (False, True):
        with monkeypatch.context() as m:
            if search:
                m.setattr(builder_module.GraphBuilder, "_lookup_table", staticmethod(lambda *a: (None, 0)))
            with monkeypatch.context() as off:
                off.setattr(B, "scatter_threads", lambda compiled, workers: None)
                _convert(tmp_path / f"numpy-{search}.h5", (src, dst, w), directed=False, memory="4MB", workers=2)
            _convert(tmp_path / f"compiled-{search}.h5", (src, dst, w), directed=False, memory="4MB", workers=2)
        assert_same_store(tmp_path / f"numpy-{search}.h5", tmp_path / f"compiled-{search}.h5")

"""GPU backend: parity with the CPU backend (integer results bit-identical), budgets that force
streaming and eviction, the LDBC set. Skipped where CuPy finds no device.

These tests are of the engine's level loop as a GPU runs it (streamed, or on several GPUs): BFS and
SSSP in GPU memory (or read in place from host memory) take a whole traversal by default, tested in
``test_gpu_whole.py``; here the loop and chunk streaming are forced (``traversal.whole_traversal``
and ``gpu.zero_copy`` off) unless a test says otherwise."""

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.errors import DeviceError

from conftest import hub_edges, random_degrees, random_edges

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _level_loop(configure):
    configure({"traversal.whole_traversal": False, "gpu.zero_copy": False})


def _pair(G, algo, **kw):
    fn = getattr(ooc_graph, algo)
    return fn(G, device="cpu", **kw), fn(G, device="gpu", **kw)


def _same(first, second, algo):
    for name, a in first.arrays().items():
        b = second.arrays()[name]
        if algo == "pagerank":
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-15)
        else:
            np.testing.assert_array_equal(b, a)  # depths, parents, labels, distances: bit-identical


@pytest.mark.parametrize("whole", [False, True], ids=["level-loop", "whole"])
@pytest.mark.parametrize("seed", range(24))
def test_parity_random_graphs(tmp_path, monkeypatch, configure, seed, whole):
    configure({"traversal.advance_fraction": [0.0, config.Config().traversal.advance_fraction, np.inf][seed % 3],
               "traversal.whole_traversal": whole})
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 300))
    src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 6 * n)), weighted=seed % 2 == 0)
    G = ooc_graph.convert((src, dst) if w is None else (src, dst, w), tmp_path / "g.h5",
                          directed=seed % 4 < 2, num_vertices=n, interval_size=[7, 64, 256][seed % 3],
                          chunk_arcs=[16, 100, 4096][seed % 3], progress=False)
    s = int(rng.integers(0, n))
    for algo, kw in (("pagerank", {"tol": 1e-12, "max_iter": 500}), ("bfs", {"source": s}),
                     ("sssp", {"source": s}), ("wcc", {})):
        cpu, gpu = _pair(G, algo, **kw)
        assert (cpu.device, gpu.device) == ("cpu", "gpu")
        _same(cpu, gpu, algo)


@pytest.mark.parametrize("seed", range(6))
def test_pagerank_looking_one_step_late_stops_where_the_cpu_stops(tmp_path, seed):
    """One GPU queues step i + 1 before looking at step i's change: iterations, convergence and
    values are still the CPU's, whether tol or max_iter ends the run (max_iter 1 too)."""
    rng = np.random.default_rng(40 + seed)
    n = int(rng.integers(1, 2000))
    src, dst, _ = random_edges(rng, n=n, m=int(rng.integers(0, 8 * n)))
    G = ooc_graph.convert((src, dst), tmp_path / "g.h5", directed=seed % 2 == 0, num_vertices=n,
                          interval_size=256, chunk_arcs=1024, progress=False)
    p = {int(v): float(w) for v, w in zip(rng.integers(0, n, 5), rng.random(5) + 0.1)} if seed % 3 == 0 else None
    for kw in ({"tol": 1e-6}, {"tol": 1e-10, "max_iter": 1000}, {"tol": 1e-12, "max_iter": 7}, {"max_iter": 1},
               {"mode": "graphalytics", "max_iter": 5}):
        kw = dict(kw, personalization=p) if p is not None and "mode" not in kw else kw
        cpu, gpu = _pair(G, "pagerank", raise_on_nonconvergence=False, **kw)
        assert (gpu.iterations, gpu.converged) == (cpu.iterations, cpu.converged), kw
        np.testing.assert_allclose(gpu.values, cpu.values, rtol=1e-10, atol=1e-15)


@pytest.fixture(scope="module")
def rmat(tmp_path_factory):
    return ooc_graph.generate.rmat(tmp_path_factory.mktemp("g") / "r.h5", 14, 8, seed=5, weighted=True,
                                   interval_size=1024, chunk_arcs=8192, progress=False)


@pytest.mark.parametrize("algo,kw", [("pagerank", {}), ("bfs", {"source": 7}), ("sssp", {"source": 7}),
                                     ("wcc", {}), ("bfs", {"source": 7, "execution": "async"}),
                                     ("sssp", {"source": 7, "execution": "async"})])
def test_device_budget_forces_streaming(rmat, monkeypatch, configure, algo, kw):
    configure({"stream.prefetch_min_arcs": 1})  # the reader thread fills pinned buffers too
    rmat.release()
    fn = getattr(ooc_graph, algo)
    full = fn(rmat, device="gpu", **kw)
    state = 6 * 8 * rmat.num_vertices
    small = fn(rmat, device="gpu", device_memory=state + 512 * 1024, **kw)
    assert small.stats["bytes_to_device"] > full.stats["bytes_to_device"]  # chunks re-sent every pass
    _same(full, small, algo)
    cpu = fn(rmat, device="cpu", **kw)
    _same(cpu, small, algo)


@pytest.mark.parametrize("algo,kw", [("pagerank", {}), ("bfs", {"source": 7}), ("sssp", {"source": 7}), ("wcc", {})])
def test_streaming_several_store_chunks_at_a_time(rmat, monkeypatch, configure, algo, kw):
    """Store chunks streamed two at a time (STREAM_CHUNK_ARCS; one upload and one kernel each):
    the CPU's answers."""
    configure({"stream.coalesce_min_arcs": 1})
    configure({"stream.stream_chunk_arcs": 3 * rmat.chunk_arcs})
    configure({"stream.prefetch_min_arcs": 1})
    rmat.release()
    fn = getattr(ooc_graph, algo)
    state = 6 * 8 * rmat.num_vertices
    # Room for two store chunks at a time: cached, and in flight (two decoded, three raw copies).
    r = fn(rmat, device="gpu", device_memory=state + 1024 * 1024, profile=True, **kw)
    passes = [p for p in r.passes if p["kind"] == "pass"]
    assert passes and r.stats["bytes_to_device"] > 0
    assert max(p["chunks"] for p in passes) <= -(-rmat.num_arcs // (2 * rmat.chunk_arcs))  # 2 store chunks each
    _same(fn(rmat, device="cpu", **kw), r, algo)
    rmat.release()


def test_state_larger_than_budget_is_refused(rmat):
    with pytest.raises(DeviceError, match="vertex state needs"):
        ooc_graph.pagerank(rmat, device="gpu", device_memory=1024)
    assert ooc_graph.pagerank(rmat, device="auto", device_memory=1024).device == "cpu"  # auto falls back


def test_selective_scheduling_on_gpu(tmp_path, monkeypatch, configure):
    configure({"traversal.advance_fraction": 0.0})
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 512, 8, interval_size=256, chunk_arcs=256, progress=False)
    r = ooc_graph.bfs(G, 0, device="gpu")
    assert r.stats["chunks_skipped"] > r.stats["chunks_processed"]
    assert r.depth.max() == 511 + 7


def test_auto_picks_the_gpu(rmat):
    assert ooc_graph.wcc(rmat, device="auto").device == "gpu"


def test_profile_traces_copies_and_kernels(rmat, monkeypatch, configure):
    configure({"stream.prefetch_min_arcs": 1})
    rmat.release()
    state = 6 * 8 * rmat.num_vertices
    r = ooc_graph.pagerank(rmat, device="gpu", device_memory=state + 512 * 1024, max_iter=4, tol=1e-300,
                           raise_on_nonconvergence=False, profile=True)
    for entry in r.timeline:
        record, spans = r.passes[entry["pass"]], entry["spans"]
        copies = sorted(s[1] for s in spans if s[0] == "copy")
        assert copies and set(copies) <= set(range(record["chunks"]))
        assert sorted(s[1] for s in spans if s[0] == "compute") == list(range(record["chunks"]))
        assert all(-1e-3 <= a <= b <= record["seconds"] + 1e-3 for _, _, a, b in spans)
        assert record["busy_copy"] > 0 and 0 <= record["overlap_copy_compute"] <= 1
    assert r.passes[-1]["bytes_to_device"] > 0  # streamed again on the last pass


@pytest.mark.parametrize("algo", ["bfs", "sssp"])
def test_async_with_augmentation_matches_cpu(tmp_path, monkeypatch, configure, algo):
    configure({"traversal.advance_fraction": 0.0})
    configure({"traversal.whole_traversal": False})  # the CPU reference counts its passes too
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 80, 24, weighted=True, interval_size=64, chunk_arcs=256,
                                augment=True, progress=False)
    fn = getattr(ooc_graph, algo)
    for source in (0, G.num_vertices - 1):
        cpu = fn(G, source, device="cpu", execution="sync")
        gpu = fn(G, source, device="gpu", execution="async", device_memory=6 * 8 * G.num_vertices + 40_000)
        _same(cpu, gpu, algo)
        assert gpu.stats["back_arcs"] > 0 and gpu.stats["passes"] < cpu.stats["passes"]


@pytest.mark.parametrize("packed", [True, False], ids=["packed-keys", "argsort"])
def test_source_blocked_pagerank_matches_cpu(rmat, monkeypatch, configure, packed):
    from ooc_graph.kernels import gpu as kgpu
    configure({"gpu.segment_bits": 9})  # many segments on a small graph
    if not packed:
        monkeypatch.setattr(kgpu, "_KEY_BITS", 0)
    rmat.release()
    cpu = ooc_graph.pagerank(rmat, device="cpu", tol=1e-12, max_iter=200)
    gpu = ooc_graph.pagerank(rmat, device="gpu", tol=1e-12, max_iter=200)
    engine = next(e for e in rmat.engines.values() if e.backend.name == "gpu")
    assert engine._whole and engine._whole.num_arcs == rmat.num_arcs
    segments = engine._whole.src.get() >> 9
    assert (np.diff(segments) >= 0).all()  # ordered by source segment
    _same(cpu, gpu, "pagerank")
    rmat.release()


@pytest.mark.parametrize("seed", range(4))
def test_split_sources_cuts_whole_segments_of_a_rank(monkeypatch, configure, seed):
    """A rank's own slice of the source-blocked batch holds only arcs from source segments within
    its range, and with the other slices every arc once."""
    import cupy as cp

    from ooc_graph.kernels import gpu as kgpu
    configure({"gpu.segment_bits": 4})
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 400))
    src, dst = (cp.asarray(rng.integers(0, n, 3000), dtype=cp.int32) for _ in range(2))
    whole = kgpu.source_blocked([kgpu.Batch(0, n, src, dst, None)], n)
    for lo, hi in [(0, n), (0, n // 2), (n // 2, n), tuple(sorted(rng.integers(0, n + 1, 2))), (5, 9)]:
        own, others = kgpu.split_sources(whole, int(lo), int(hi))
        s = own.src.get()
        first, last = -(-lo // 16), hi // 16
        assert ((s >> 4 >= first) & (s >> 4 < last)).all()
        assert own.num_arcs == int(((src.get() >> 4 >= first) & (src.get() >> 4 < last)).sum())
        pairs = lambda bs: sorted(zip(np.concatenate([b.src.get() for b in bs]).tolist(),
                                      np.concatenate([b.dst.get() for b in bs]).tolist()))
        assert pairs([own] + others) == sorted(zip(src.get().tolist(), dst.get().tolist()))


@pytest.mark.parametrize("seed", range(4))
def test_source_blocked_packs_every_batch_in_order(configure, seed):
    """Several batches (one empty) become one batch sorted by (source segment, destination,
    source): the packing kernels against NumPy's sort of the same arcs."""
    import cupy as cp

    from ooc_graph.kernels import gpu as kgpu
    configure({"gpu.segment_bits": 3})
    rng = np.random.default_rng(seed)
    n = int(rng.integers(9, 5000))
    sizes = [int(rng.integers(0, 3000)), 0, int(rng.integers(1, 3000))]
    parts = [(rng.integers(0, n, m).astype(np.int32), rng.integers(0, n, m).astype(np.int32)) for m in sizes]
    whole = kgpu.source_blocked([kgpu.Batch(0, n, cp.asarray(s), cp.asarray(d), None) for s, d in parts], n)
    src, dst = np.concatenate([s for s, _ in parts]), np.concatenate([d for _, d in parts])
    order = np.lexsort((src, dst, src >> 3))
    assert whole.num_arcs == src.size and whole.segment_bits == 3
    np.testing.assert_array_equal(whole.src.get(), src[order])
    np.testing.assert_array_equal(whole.dst.get(), dst[order])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
@pytest.mark.parametrize("n", [0, 1, 7, 300_001])
def test_inverse_degree_matches_the_cpu_bit_for_bit(dtype, n):
    import cupy as cp

    from ooc_graph.kernels import cpu, gpu
    degree = random_degrees(dtype, n)
    inv, dangling = gpu.inverse_degree(cp.asarray(degree))
    want, want_dangling = cpu.inverse_degree(degree)
    assert inv.dtype == np.float64 and dangling == want_dangling == int((degree == 0).sum())
    np.testing.assert_array_equal(inv.get(), want)


@pytest.mark.parametrize("nbytes", [0, 8, (8 << 20) - 8, 16 << 20, (16 << 20) + 8, 100 << 20, (200 << 20) + 24])
def test_results_come_back_whole_through_the_staging_ring(nbytes, tmp_path):
    import cupy as cp

    from ooc_graph.engine import hostbuf
    from ooc_graph.kernels import gpu
    n = nbytes // 8
    a = cp.arange(n, dtype=np.int64) * 3 - 7
    np.testing.assert_array_equal(gpu.to_host(a), cp.asnumpy(a))
    out = np.lib.format.open_memmap(tmp_path / "r.npy", mode="w+", dtype=np.int64, shape=(n,))
    hostbuf.populate(out[n // 3:])
    gpu.to_host(a[n // 3:], out[n // 3:])  # a slice of a memory map, as a distributed rank writes
    np.testing.assert_array_equal(out[n // 3:], cp.asnumpy(a[n // 3:]))


def test_large_results_come_back_in_page_locked_memory(tmp_path):
    """Results of 8 MB and more are copied straight into page-locked memory from the pinned pool
    (reused once the user drops them); the answers stay the CPU's."""
    from ooc_graph.kernels import gpu_transfer
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 20, 2, seed=1, progress=False)
    for algo, kw in (("bfs", {"source": 0}), ("pagerank", {"tol": 1e-10}), ("bfs", {"source": 5})):
        cpu, gpu_result = _pair(G, algo, **kw)
        _same(cpu, gpu_result, algo)
        assert all(gpu_transfer.page_locked(a) for a in gpu_result.arrays().values())
    G.release()  # frees the pool's unused blocks
    G.close()


@pytest.mark.parametrize("balanced", [True, False], ids=["arc-balanced", "warp-per-vertex"])
@pytest.mark.parametrize("seed", range(6))
def test_direction_optimised_traversals_match_the_cpu(tmp_path, monkeypatch, configure, seed, balanced):
    """Bottom-up levels over the in-CSR on the GPU: the CPU's
    depths, distances and parents bit for bit, with either top-down advance; queued levels stop
    at a frontier with many arcs so that the host can turn bottom-up."""
    configure({"gpu.balanced": balanced})
    configure({"traversal.queued_max_arcs": 16})
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(100, 5000))
    src, dst, w = hub_edges(rng, n=n, weighted=seed % 2 == 1)
    G = ooc_graph.convert((src, dst) if w is None else (src, dst, w), tmp_path / "g.h5", num_vertices=n + 3,
                          directed=seed % 4 < 2, interval_size=[64, 1024][seed % 2], progress=False)
    for source in (0, int(rng.integers(1, n))):
        for algo in ("bfs", "sssp"):
            cpu, gpu_result = _pair(G, algo, source=source)
            _same(cpu, gpu_result, algo)
            if algo == "bfs" and source == 0:
                assert gpu_result.stats["bottom_up"] >= 1
            if algo == "bfs":  # every level built its part of the tree
                assert gpu_result.stats["tree_levels"] == gpu_result.iterations
    configure({"traversal.bottom_up": False})
    _same(cpu, ooc_graph.sssp(G, source, device="gpu"), "sssp")
    G.close()


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 2047, 2048, 2049, 1_000_003])
def test_flatnonzero_of_flags_is_cupys(n):
    import cupy as cp
    from ooc_graph.kernels import gpu
    rng = np.random.default_rng(n)
    for density in (0.0, 0.001, 0.5, 1.0):
        flags = cp.asarray((rng.random(n) < density).astype(np.uint8) * rng.integers(1, 256, n).astype(np.uint8))
        np.testing.assert_array_equal(gpu.flatnonzero(flags).get(), np.flatnonzero(flags.get()))
        if n > 9:  # a view that does not start on 8 bytes
            np.testing.assert_array_equal(gpu.flatnonzero(flags[3:]).get(), np.flatnonzero(flags.get()[3:]))


@pytest.mark.parametrize("first", [1, 32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_parents_from_the_in_csr_match_the_cpu(tmp_path, monkeypatch, configure, seed, weighted, first):
    """BFS and SSSP parents found from the in-CSR (one thread a vertex, long rows arc-balanced)
    are the CPU's bit for bit: hubs whose only tight in-arc comes last in a row of thousands
    (the source has the largest id), duplicates, self-loops; also with the pass over every arc."""
    from ooc_graph.kernels import gpu, gpu_traversal
    configure({"gpu.parent_first_arcs": first})
    configure({"traversal.tree_on_the_way": False})  # the tree after the traversal
    calls = []
    monkeypatch.setattr(gpu, "csr_parents", lambda *a: calls.append(a[-2:]) or gpu_traversal.csr_parents(*a))
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(2000, 6000))
    s = n - 1
    hubs = np.arange(1, 6)
    src = np.concatenate([np.repeat(np.arange(6, n), hubs.size), np.full(hubs.size, s), rng.integers(0, n, 4 * n),
                          np.arange(n)])
    dst = np.concatenate([np.tile(hubs, n - 6), hubs, rng.integers(0, n, 4 * n), np.arange(n)])
    w = rng.integers(1, 65, src.size) / 8.0 if weighted else None
    G = ooc_graph.convert((src, dst) if w is None else (src, dst, w), tmp_path / "g.h5", progress=False,
                          directed=seed != 2)
    for source in (s, 0):
        for algo in ("bfs", "sssp"):
            calls.clear()
            cpu, gpu_result = _pair(G, algo, source=source)
            _same(cpu, gpu_result, algo)
            assert calls == [(0, G.num_vertices)]  # the parents came from the in-CSR
    configure({"traversal.csr_parents": False})
    _same(cpu, ooc_graph.sssp(G, 0, device="gpu"), "sssp")
    configure({"traversal.tree_on_the_way": True})  # the tree on the way: the same, csr_parents idle
    for source in (s, 0):
        calls.clear()
        cpu, gpu_result = _pair(G, "bfs", source=source)
        _same(cpu, gpu_result, "bfs")
        assert not calls and gpu_result.stats["tree_levels"] == gpu_result.iterations
    G.close()


def test_parents_from_the_in_csr_complete_a_partial_tree(tmp_path):
    """csr_parents fills only the vertices whose parent is unset (the vertex count): parents
    found during the traversal stay as they are, and the rest are those of a fresh tree."""
    import cupy as cp

    from ooc_graph.kernels import gpu_traversal
    rng = np.random.default_rng(5)
    n = 3000
    src, dst = rng.integers(0, n, 12 * n), rng.integers(0, n, 12 * n)
    G = ooc_graph.convert((src, dst), tmp_path / "g.h5", num_vertices=n, progress=False)
    depth = ooc_graph.bfs(G, 0, device="cpu").depth
    dist = cp.asarray(np.where(depth == np.iinfo(np.int64).max, np.inf, depth.astype(np.float64)))
    indptr, indices = (cp.asarray(a) for a in G.csr("in")[:2])
    full = cp.full(n, n, dtype=np.int64)
    full[0] = 0
    gpu_traversal.csr_parents(indptr, indices, None, dist, 1.0, full, 0, n)
    partial = cp.where(cp.asarray(rng.random(n) < 0.5), full, n)
    partial[0] = 0  # the root, as the engine starts it
    partial[7] = n + 5  # set: left alone, whatever it holds
    gpu_traversal.csr_parents(indptr, indices, None, dist, 1.0, partial, 0, n)
    expect = full.get()
    expect[7] = n + 5
    np.testing.assert_array_equal(partial.get(), expect)
    G.close()


@pytest.mark.parametrize("nbytes", [0, 8, (16 << 20) - 8, 16 << 20, (100 << 20) + 24])
def test_host_arrays_reach_the_device_whole_through_the_staging_ring(nbytes):
    import cupy as cp

    from ooc_graph.kernels import gpu
    host = np.arange(nbytes // 8, dtype=np.int64) * 5 + 1
    dev = gpu.to_device(host[1:] if host.size else host)
    np.testing.assert_array_equal(cp.asnumpy(dev), host[1:] if host.size else host)
    assert dev.dtype == np.int64


@pytest.mark.parametrize("capacity", [8, 1 << 16])
@pytest.mark.parametrize("weighted", [False, True])
def test_levels_queued_on_the_device_give_the_cpu_answers(tmp_path, monkeypatch, configure, capacity, weighted):
    """Small frontiers advance many levels without the host (kernels.gpu.advance_levels); a
    frontier that outgrows the queue (capacity 8) hands over to the host loop exactly."""
    configure({"gpu.queue_capacity": capacity})
    rng = np.random.default_rng(capacity + weighted)
    side = 40  # a grid: ~80 levels of small frontiers, then a random graph: frontiers that explode
    grid = [(r * side + c, r * side + c + 1) for r in range(side) for c in range(side - 1)] + \
           [(r * side + c, (r + 1) * side + c) for r in range(side - 1) for c in range(side)]
    n = side * side + 2000
    extra = rng.integers(side * side, n, (8000, 2))
    edges = np.vstack([np.array(grid), extra, [[side * side - 1, side * side]]])
    data = np.column_stack([edges, rng.integers(1, 9, len(edges))]).astype(np.float64) if weighted else edges
    G = ooc_graph.convert(data, tmp_path / "g.h5", num_vertices=n, directed=False, progress=False)
    for source in (0, side * side + 5, n - 1):
        for algo in ("bfs", "sssp"):
            cpu, gpu_result = _pair(G, algo, source=source)
            _same(cpu, gpu_result, algo)
            configure({"traversal.queued_levels": False})
            _same(cpu, getattr(ooc_graph, algo)(G, device="gpu", source=source), algo)
            configure({"traversal.queued_levels": True})
    assert gpu_result.stats["advances"] >= 1


@pytest.mark.parametrize("capacity", [8, 1 << 16])
@pytest.mark.parametrize("seed", range(9))
def test_near_far_sssp_matches_the_cpu(tmp_path, monkeypatch, configure, seed, capacity):
    """Weighted SSSP with near-far buckets on the GPU: levels queued on the device leave the
    vertices beyond the bound to the host (marked in the change flags; a queue of 8 overflows
    with such marks among its own), passes take the near pile's intervals. The CPU's compiled
    Dijkstra bit for bit, in memory and streamed, synchronous or "auto", and the GPU without
    buckets too."""
    configure({"gpu.queue_capacity": capacity})
    configure({"traversal.advance_fraction": [0.0, config.Config().traversal.advance_fraction, np.inf][seed % 3]})
    configure({"traversal.async_after_passes": 4})
    rng = np.random.default_rng(400 + seed)
    if seed < 3:  # a mesh: many buckets of small frontiers
        G = ooc_graph.generate.grid(tmp_path / "g.h5", 60, 30, weighted=True, seed=seed, interval_size=128,
                                    chunk_arcs=256, progress=False)
    else:  # zero weights (0..63/8), self-loops, duplicates, unreachable vertices
        n = int(rng.integers(100, 2000))
        src, dst, w = random_edges(rng, n=n - 5, m=int(rng.integers(n, 6 * n)), weighted=True)
        G = ooc_graph.convert((src, dst, w), tmp_path / "g.h5", directed=seed % 2 == 0, num_vertices=n,
                              interval_size=[64, 256][seed % 2], chunk_arcs=[128, 1024][seed % 2], progress=False)
    s = int(rng.integers(0, G.num_vertices))
    cpu = ooc_graph.sssp(G, s, device="cpu")
    tight = 6 * 8 * G.num_vertices + 40_000  # no CSR, chunks streamed
    for device_memory, execution in ((None, "sync"), (tight, "sync"), (tight, "auto")):
        gpu_result = ooc_graph.sssp(G, s, device="gpu", device_memory=device_memory, execution=execution)
        _same(cpu, gpu_result, "sssp")
        assert gpu_result.stats["near_far_bounds"] >= 1
    configure({"traversal.near_far": False})
    off = ooc_graph.sssp(G, s, device="gpu")
    _same(cpu, off, "sssp")
    assert off.stats["near_far_bounds"] == 0
    G.close()


def test_near_far_relaxes_fewer_arcs_on_a_mesh(tmp_path, monkeypatch, configure):
    """A weighted 100x100 mesh in device memory: with buckets the advances relax fewer arcs than
    without (on the CPU's loop about 6x fewer, benchmarks/near_far.py); the answers are the CPU's."""
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 100, 100, weighted=True, seed=7, progress=False)
    cpu = ooc_graph.sssp(G, 0, device="cpu")
    on = ooc_graph.sssp(G, 0, device="gpu")
    configure({"traversal.near_far": False})
    off = ooc_graph.sssp(G, 0, device="gpu")
    _same(cpu, on, "sssp")
    _same(cpu, off, "sssp")
    assert on.stats["near_far_bounds"] > 1 and on.stats["advances"] > 0
    assert on.stats["arcs_processed"] < off.stats["arcs_processed"]
    G.close()


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_merge_level_kernel_ors_flags_and_sets_the_level(ranks):
    import cupy as cp

    from ooc_graph.kernels import gpu as kgpu
    rng = np.random.default_rng(ranks)
    n = 1001
    state = np.where(rng.random(n) < 0.5, 2.0, np.inf)
    changed = (rng.random(n) < 0.1).astype(np.uint8)
    flags = [(rng.random(n) < 0.2).astype(np.uint8) for _ in range(ranks)]
    bits = cp.asarray(np.concatenate([np.packbits(f) for f in flags]))
    s, c = cp.asarray(state), cp.asarray(changed)
    kgpu.merge_level(s, c, bits, ranks, 1.0)
    anyone = np.maximum.reduce(flags).astype(bool)
    np.testing.assert_array_equal(c.get(), changed | anyone)
    np.testing.assert_array_equal(s.get(), np.where(anyone, np.minimum(state, 1.0), state))


def test_release_gives_device_memory_back(rmat):
    """G.release() hands CuPy's pooled free blocks back to the driver: another process on the GPU
    (a worker of a multi-GPU call) sees the memory free and sizes its budget by it. (A block split
    from a larger allocation still partly in use stays pooled: the test frees one of its own.)"""
    import cupy as cp
    pool = cp.get_default_memory_pool()
    block = cp.empty(256 << 20, dtype=cp.uint8)
    del block  # pooled, not returned
    held = pool.total_bytes()
    ooc_graph.pagerank(rmat, device="gpu")
    rmat.release()
    assert pool.total_bytes() <= held - (256 << 20)
    from ooc_graph.kernels import gpu_pinned
    assert cp.get_default_pinned_memory_pool().n_free_blocks() == 0 and gpu_pinned.free_blocks() == 0


def test_streamed_calls_keep_to_device_memory_and_release_frees_the_copy_ring(tmp_path):
    """What a streamed call allocates on the device (CuPy's pool, from empty) stays within its
    device_memory: the next decoded chunk and the copy ring's slots are counted (they once took it
    ~24% past the budget on R-MAT-22; measured here: 0.75-0.985 of it). Releasing
    the graph lets go of the slots too (they stayed held, outside any budget, sized to the largest
    chunk ever uploaded)."""
    import cupy as cp
    from ooc_graph.kernels import gpu_transfer
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 18, 16, seed=1, directed=True, chunk_arcs=1 << 16,
                                progress=False)
    pool = cp.get_default_memory_pool()
    n = G.num_vertices
    budget = 5 * 8 * n + n + G.num_arcs * 8 // 4  # the vertex state and a quarter of the decoded arcs
    for algo, kw in (("pagerank", {"max_iter": 5, "tol": 1e-300, "raise_on_nonconvergence": False}),
                     ("bfs", {"source": 0}), ("wcc", {})):
        G.release()
        pool.free_all_blocks()
        base = pool.total_bytes()
        r = getattr(ooc_graph, algo)(G, device="gpu", device_memory=budget, **kw)
        assert r.stats["bytes_to_device"] > G.num_arcs * r.stats["passes"]  # streamed on every pass
        assert pool.total_bytes() - base <= budget, (algo, pool.total_bytes() - base, budget)
    G.release()
    assert all(not slot.buffers for slot in gpu_transfer._stager().slots)
    G.close()


@pytest.mark.parametrize("algo,kw", [("pagerank", {}), ("bfs", {"source": 0}), ("sssp", {"source": 0}), ("wcc", {}),
                                     ("cdlp", {}), ("core_number", {}), ("scc", {}), ("katz_centrality", {}),
                                     ("eigenvector_centrality", {}), ("hits", {}),
                                     ("betweenness_centrality", {"k": 8, "seed": 1})])
def test_results_left_on_the_device(tmp_path, algo, kw):
    """``output="cupy"``: the same arrays, as CuPy arrays on the device, and the result's methods
    (frames, saving, counts) work on them as on host arrays."""
    import cupy as cp
    rng = np.random.default_rng(11)
    src, dst, _ = random_edges(rng, n=300, m=1500)
    G = ooc_graph.convert((src + 10, dst + 10), tmp_path / "g.h5", directed=algo != "core_number",
                          interval_size=64, chunk_arcs=256, progress=False)
    fn = getattr(ooc_graph, algo)
    kw = {k: int(G.vertices[v]) if k == "source" else v for k, v in kw.items()}  # an original id
    host = fn(G, device="gpu", **kw)
    dev = fn(G, device="gpu", output="cupy", **kw)
    for name, a in host.arrays().items():
        b = dev.arrays()[name]
        assert isinstance(a, np.ndarray) and isinstance(b, cp.ndarray), name
        if a.dtype.kind == "f":
            np.testing.assert_allclose(b.get(), a, rtol=1e-10, atol=1e-15)
        else:
            np.testing.assert_array_equal(b.get(), a)
    first = host._arrays[0]
    assert dev.to_dict(first).keys() == host.to_dict(first).keys()
    if algo in ("bfs", "wcc"):
        assert dev.to_pandas().equals(host.to_pandas())
    saved = dev.save("on_device")
    assert saved.in_store
    for name, a in host.arrays().items():
        np.testing.assert_array_equal(G.load_result("on_device")[name], dev.arrays()[name].get())

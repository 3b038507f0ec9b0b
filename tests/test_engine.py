"""Budgets, the chunk cache and selective scheduling."""


import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.engine import Engine, get_backend, stream
from ooc_graph.engine.cache import ResidentCache
from ooc_graph.errors import DeviceError, ParameterError
from ooc_graph.kernels import cpu
from ooc_graph.partitioning.chunks import cut

from conftest import hub_edges


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    path = tmp_path_factory.mktemp("e") / "g.h5"
    return ooc_graph.generate.rmat(path, 9, 8, seed=2, weighted=True, interval_size=32, chunk_arcs=512,
                                   progress=False)


@pytest.mark.parametrize("algo,kw", [("pagerank", {}), ("bfs", {"source": 3}), ("sssp", {"source": 3}), ("wcc", {})])
def test_tiny_budget_same_results(graph, algo, kw):
    fn = getattr(ooc_graph, algo)
    big = fn(graph, device="cpu", **kw)
    small = fn(graph, device="cpu", memory="48KiB", **kw)  # 24KiB: chunks of ~20 arcs, 28 s for PageRank
    assert small.stats["chunks"] > 2 * big.stats["chunks"]
    for name, a in big.arrays().items():
        b = small.arrays()[name]
        if algo == "pagerank":
            np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            np.testing.assert_array_equal(a, b)
    assert small.bytes_read > big.bytes_read  # nothing cached: every pass reads again


def test_cache_keeps_a_resident_region():
    cache = ResidentCache(100)

    class Item:
        nbytes = 40

    loads = []
    for _ in range(3):
        for key in range(4):
            cache.get(key, lambda: loads.append(key) or Item())
    assert len(cache) == 2 and loads == [0, 1, 2, 3, 2, 3, 2, 3]


def test_whole_graph_read_once_when_it_fits(graph, configure):
    G = ooc_graph.open(graph.path)
    with config.set(traversal={"whole_traversal": False}):  # the chunks, streamed once and cached
        r = ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=50)
        assert r.iterations > 3
        assert r.bytes_read == G.num_arcs * G.cel_nbytes_per_arc()
        again = ooc_graph.wcc(G, device="cpu")  # the open graph keeps its engine: nothing read again
        assert again.bytes_read == 0 and again.stats["arcs_processed"] > 0
        G.release()
        assert ooc_graph.wcc(G, device="cpu").bytes_read == r.bytes_read
    G.release()
    # whole kernels over the CSR in memory: its offsets and ids read once (an undirected graph's
    # in-CSR is its out-CSR; weights are not read)
    configure({"cpu.whole_pull": True})
    r = ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=50)
    csr_bytes = 8 * (G.num_vertices + 1) + G.num_arcs * G.id_dtype.itemsize
    assert r.bytes_read == csr_bytes and r.stats["passes"] == r.iterations
    again = ooc_graph.wcc(G, device="cpu")
    assert again.bytes_read == 0 and again.stats["traversals"] == 1
    G.close()


def test_selective_scheduling_skips_inactive_chunks(tmp_path, monkeypatch, configure):
    configure({"traversal.advance_fraction": 0.0})  # edge-centric passes only
    configure({"traversal.whole_traversal": False})
    # A tall, narrow mesh: the BFS frontier lies in one or two intervals at a time.
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 512, 8, interval_size=256, chunk_arcs=256, progress=False)
    r = ooc_graph.bfs(G, 0, device="cpu")
    assert r.stats["chunks_skipped"] > r.stats["chunks_processed"] and r.stats["advances"] == 0


def test_small_frontiers_advance_over_the_csr(tmp_path, monkeypatch, configure):
    configure({"traversal.whole_traversal": False})  # the level loop, not one compiled traversal
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 300, 300, interval_size=4096, progress=False)
    r = ooc_graph.bfs(G, 0, device="cpu")
    assert r.stats["advances"] == r.iterations and r.depth.max() == 598
    assert r.stats["arcs_processed"] < 3 * G.num_arcs  # only the parent passes stream the CEL


@pytest.mark.parametrize("seed", range(8))
def test_bottom_up_levels_give_the_top_down_answers(tmp_path, monkeypatch, configure, seed):
    """Direction-optimised traversals (bottom-up levels over the in-CSR) give the top-down loop's
    depths, distances and parents bit for bit."""
    configure({"traversal.whole_traversal": False})  # the level loop, not one compiled traversal
    rng = np.random.default_rng(70 + seed)
    n = int(rng.integers(100, 1500))
    src, dst, w = hub_edges(rng, n=n, weighted=seed % 2 == 1)
    G = ooc_graph.convert((src, dst) if w is None else (src, dst, w), tmp_path / "g.h5", num_vertices=n + 3,
                          directed=seed % 4 < 2, interval_size=[32, 256][seed % 2], chunk_arcs=[64, 4096][seed % 2],
                          progress=False)
    for algo in ("bfs", "sssp"):
        fn = getattr(ooc_graph, algo)
        configure({"traversal.bottom_up": False})
        ref = fn(G, 0, device="cpu")
        configure({"traversal.bottom_up": True})
        got = fn(G, 0, device="cpu")
        assert ref.stats["bottom_up"] == 0
        for name, a in ref.arrays().items():
            np.testing.assert_array_equal(got.arrays()[name], a, err_msg=f"{algo} {name}")
        if algo == "bfs":  # and the tree was built on the way (every level), not after
            assert got.stats["bottom_up"] >= 1 and got.stats["tree_levels"] == got.iterations
            assert ref.stats["tree_levels"] == 0
    G.close()


def test_csr_over_budget_falls_back_to_passes(tmp_path):
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 16, 16, progress=False)
    r = ooc_graph.bfs(G, 0, device="cpu", memory="12KiB")
    assert r.stats["advances"] == 0 and r.depth.max() == 30


def test_per_pass_records(graph):
    r = ooc_graph.sssp(graph, 3, device="cpu", memory="24KiB", profile=True)
    kinds = {p["kind"] for p in r.passes}
    assert kinds <= {"pass", "advance"} and len(r.passes) == r.stats["passes"] + r.stats["advances"]
    assert sum(p["arcs"] for p in r.passes) == r.stats["arcs_processed"]
    assert sum(p["bytes_read"] for p in r.passes) == r.bytes_read
    assert [i for i, _ in r.stats["convergence"]] == list(range(1, r.iterations + 1))
    assert r.stats["convergence"][-1][1] == 0  # the last iteration changed nothing


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "augmented"])
def mesh(tmp_path_factory, request):
    return ooc_graph.generate.grid(tmp_path_factory.mktemp("m") / "g.h5", 60, 20, weighted=True, interval_size=64,
                                   chunk_arcs=200, augment=request.param, progress=False)


@pytest.mark.parametrize("execution", ["sync", "async", "auto"])
@pytest.mark.parametrize("far", [False, True], ids=["first", "last"])
def test_executions_agree_and_async_streams_less(mesh, monkeypatch, configure, execution, far):
    configure({"traversal.advance_fraction": 0.0})
    configure({"traversal.whole_traversal": False})
    configure({"traversal.async_after_passes": 4})
    G = mesh
    source = G.num_vertices - 1 if far else 0  # waves towards higher ids, or towards lower ones
    ref = ooc_graph.sssp(G, source, device="cpu", execution="sync")
    small = dict(memory=5 * 8 * G.num_vertices + G.num_vertices + 2 * 40 * 600)
    r = ooc_graph.sssp(G, source, device="cpu", execution=execution, **small)
    sync = ooc_graph.sssp(G, source, device="cpu", execution="sync", **small)
    np.testing.assert_array_equal(r.distance, ref.distance)
    np.testing.assert_array_equal(r.parent, ref.parent)
    assert sync.stats["chunks"] > 10
    if execution == "async":
        # Chunks activated during a pass join it, and sweeps alternate direction: a handful of
        # passes whichever way the wave runs, against one pass per hop across chunks (NumPy
        # kernels; the compiled relax_min updates a batch in place, so synchronous passes carry a
        # wave along a chunk too and need fewer: 23 here against 12).
        assert r.stats["passes"] <= 12 < sync.stats["passes"] // (1 if cpu.compiled() else 4)
    if execution != "sync":
        assert r.stats["passes"] < sync.stats["passes"] and r.bytes_read < sync.bytes_read
        assert r.stats["local_iterations"] > 0
        assert (r.stats["back_arcs"] > 0) == G.augmented
    in_memory = ooc_graph.sssp(G, source, device="cpu", execution="auto")
    assert in_memory.stats["local_iterations"] == 0  # everything fits: auto stays synchronous


def test_reader_thread_reads_ahead(tmp_path, monkeypatch, configure):
    configure({"stream.prefetch_min_arcs": 1})
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, weighted=True, chunk_arcs=500, progress=False)
    ref = ooc_graph.sssp(G, 1, device="cpu", memory="10MB")
    G.release()
    small = dict(memory=5 * 8 * G.num_vertices + G.num_vertices + 40_000)
    r = ooc_graph.sssp(G, 1, device="cpu", **small)
    np.testing.assert_array_equal(r.distance, ref.distance)
    np.testing.assert_array_equal(r.parent, ref.parent)
    engine = next(iter(G.engines.values()))
    assert engine._reader is not None and r.bytes_read > G.num_arcs * G.cel_nbytes_per_arc()
    G.release()
    assert engine._reader is None


def test_devices():
    assert get_backend("cpu").name == "cpu"
    with pytest.raises(ParameterError, match="valid: auto, cpu, gpu"):
        get_backend("tpu")


def test_gpu_without_device_is_an_error(monkeypatch):
    from ooc_graph.engine import backend
    monkeypatch.setattr(backend, "gpu_available", lambda: False)
    with pytest.raises(DeviceError, match="no CUDA device"):
        get_backend("gpu")
    assert get_backend("auto").name == "cpu"


def test_engine_budget_parsing(graph):
    with pytest.raises(ParameterError, match="cannot read memory size"):
        Engine(graph, memory="lots", device="cpu")
    assert Engine(graph, memory="1 MiB", device="cpu").memory == 2**20


def test_profile_traces_every_chunk(tmp_path, monkeypatch, configure):
    configure({"stream.prefetch_min_arcs": 1})  # chunks go through the reader thread
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, chunk_arcs=500, progress=False)
    small = dict(memory=5 * 8 * G.num_vertices + G.num_vertices + 40_000)
    plain = ooc_graph.pagerank(G, device="cpu", max_iter=3, tol=1e-300, raise_on_nonconvergence=False, **small)
    assert plain.timeline == [] and "busy_compute" not in plain.passes[0]
    r = ooc_graph.pagerank(G, device="cpu", max_iter=3, tol=1e-300, profile=True, raise_on_nonconvergence=False,
                           **small)
    np.testing.assert_array_equal(r.values, plain.values)
    assert [t["pass"] for t in r.timeline] == [i for i, p in enumerate(r.passes) if p["kind"] == "pass"]
    for entry in r.timeline:
        record, spans = r.passes[entry["pass"]], entry["spans"]
        compute = [s for s in spans if s[0] == "compute"]
        reads = [s for s in spans if s[0] == "read"]
        assert sorted(s[1] for s in compute) == list(range(record["chunks"]))
        assert len(reads) > 0 and {s[1] for s in reads} <= {s[1] for s in compute}
        assert all(0 <= a <= b <= record["seconds"] + 1e-3 for _, _, a, b in spans)
        assert 0 < record["busy_compute"] <= record["seconds"] + 1e-3
        assert record["busy_copy"] == 0 and record["overlap_copy_compute"] is None  # no copies on a CPU
        assert 0 <= record["overlap_read_compute"] <= 1
        assert record["seconds_idle"] == pytest.approx(max(0.0, record["seconds"] - record["busy_compute"]))
    r.save("traced")
    saved = G.load_result("traced")["attrs"]["stats"]
    assert "timeline" not in saved and saved["per_pass"][0]["busy_compute"] > 0


def test_device_csr_never_starves_the_chunks(graph, monkeypatch):
    """On a GPU the optional device CSR gets a quarter of the budget only when full-size chunks
    still fit beside it (a budget just above the state once gave one-arc chunks), and only when
    a CSR fits that room: else the room caches chunks (it once sat idle in every streamed pass).
    The chunks in flight count the copy ring's slots (they once went past the budget)."""
    class FakeGPU:
        name, xp = "gpu", np
        kernels = type("Kernels", (), {"STAGING_SLOTS": 3})

        def free_memory(self):
            return 80 << 30

    monkeypatch.setattr(stream, "get_backend", lambda device, graph=None: FakeGPU())
    # The vertex state, and the kernels' scratch (these budgets are under 256 MiB: a thousandth of each).
    state = 5 * 8 * graph.num_vertices + graph.num_vertices
    scratch = lambda budget: budget // 1024  # noqa: E731
    # A cached chunk: int32 ids and the weights decoded; in flight: the chunk being processed and
    # the next, decoded, and the raw copy (local ids and weights) in each of the ring's 3 slots.
    cached = graph.chunk_arcs * (8 + np.dtype(graph.attrs["weight_dtype"]).itemsize)
    flight = 2 * cached + 3 * graph.chunk_arcs * graph.cel_nbytes_per_arc()
    csr = 8 * (graph.num_vertices + 1) + graph.num_arcs * (graph.id_dtype.itemsize + 8)  # float64 weights
    assert csr > flight  # so the first budget below leaves the CSR too little room
    budget = state + cached + 2 * flight
    tight = Engine(graph, device="gpu", state_arrays=5, device_memory=budget)
    assert tight._csr_budget == 0 and tight.chunk_arcs == graph.chunk_arcs  # a CSR that could never be held
    assert tight.cache.budget == cached + flight - scratch(budget)  # ... leaves its room to the chunks
    budget = 4 * (state + cached + flight + csr)
    fits = Engine(graph, device="gpu", state_arrays=5, device_memory=budget)
    assert fits._csr_budget == budget // 4
    assert fits.cache.budget == budget - state - scratch(budget) - budget // 4 - flight
    bare = Engine(graph, device="gpu", state_arrays=5, device_memory=state + (cached + flight) // 2)
    assert bare._csr_budget == 0 and graph.chunk_arcs // 2 - 8 <= bare.chunk_arcs <= graph.chunk_arcs // 2
    roomy = Engine(graph, device="gpu", state_arrays=5, device_memory=100 * state)
    assert roomy._csr_budget == 25 * state and roomy.chunk_arcs == graph.chunk_arcs


def test_chunks_are_cut_on_the_store_grid():
    """The engine's chunks are whole store chunks (several where it takes more at a time), but
    for a worker's range that starts or ends mid-chunk; smaller ones cut anywhere."""
    assert cut(0, 1000, 300, 100) == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    assert cut(150, 1000, 300, 100) == [(150, 200), (200, 500), (500, 800), (800, 1000)]
    assert cut(150, 420, 100, 100) == [(150, 200), (200, 300), (300, 400), (400, 420)]
    assert cut(150, 420, 64, 100) == [(150, 214), (214, 278), (278, 342), (342, 406), (406, 420)]
    assert cut(5, 5, 300, 100) == []


def test_gpu_streams_several_store_chunks_at_a_time(graph, monkeypatch, configure):
    """On a GPU, a store with chunks of at least COALESCE_MIN_ARCS is streamed STREAM_CHUNK_ARCS
    at a time (whole store chunks: a copy per chunk of 4 Mi arcs left the copy engine idle while
    the host issued each one's work), as the budget allows; the CPU keeps the store's chunks."""
    class FakeGPU:
        name, xp, kernels = "gpu", np, None

        def free_memory(self):
            return 80 << 30

    configure({"stream.coalesce_min_arcs": graph.chunk_arcs})
    configure({"stream.stream_chunk_arcs": 3 * graph.chunk_arcs + 100})
    monkeypatch.setattr(stream, "get_backend", lambda device, graph=None: FakeGPU())
    grid, state = graph.chunk_arcs, 5 * 8 * graph.num_vertices + graph.num_vertices
    # An arc's bytes: cached, and in flight (two decoded chunks, one raw copy: FakeGPU's kernels
    # name no copy ring).
    per_arc = 3 * (8 + np.dtype(graph.attrs["weight_dtype"]).itemsize) + graph.cel_nbytes_per_arc()
    roomy = Engine(graph, device="gpu", state_arrays=5, device_memory=100 * state)
    assert roomy.chunk_arcs == 3 * grid and roomy.bounds[1][0] == 3 * grid
    mid = Engine(graph, device="gpu", state_arrays=5, device_memory=state + 5 * grid * per_arc // 2,
                 arc_range=(700, graph.num_arcs))
    assert mid.chunk_arcs == 2 * grid and mid.bounds[:2] == [(700, 1024), (1024, 2048)]
    configure({"stream.coalesce_min_arcs": 2 * graph.chunk_arcs})  # the store's chunks are small
    assert Engine(graph, device="gpu", state_arrays=5, device_memory=100 * state).chunk_arcs == grid
    monkeypatch.undo()
    configure({"stream.coalesce_min_arcs": 1})
    assert Engine(graph, device="cpu", state_arrays=5).chunk_arcs <= grid


def test_whole_graph_pass_where_the_backend_blocks(graph, monkeypatch, configure):
    """The engine side of the GPU's source-blocked layout, with a CPU stand-in for the kernel:
    built once every chunk is cached and the cache has room; else chunks as usual."""
    from ooc_graph.kernels import cpu
    configure({"traversal.whole_traversal": False})  # chunks, not the CPU's pull over the in-CSR

    def source_blocked(batches, n):
        src = np.concatenate([b.matrix.indices for b in batches]).astype(np.int64)
        dst = np.concatenate([b.dst() for b in batches])
        order = np.lexsort((dst, src // 64))
        return cpu.prepare(src[order], dst[order], None, [0], [0], [src.size], 0, n, n)

    ref = ooc_graph.pagerank(graph, device="cpu", tol=1e-12, store=False)
    graph.release()
    monkeypatch.setattr(cpu, "source_blocked", source_blocked, raising=False)
    r = ooc_graph.pagerank(graph, device="cpu", tol=1e-12, store=False)
    np.testing.assert_allclose(r.values, ref.values, rtol=1e-12)
    engine = next(iter(graph.engines.values()))
    assert engine._whole and engine.cache.used >= 8 * graph.num_arcs
    assert [p["chunks"] for p in r.passes] == [r.stats["chunks"]] * len(r.passes)
    assert r.stats["arcs_processed"] == r.iterations * graph.num_arcs
    graph.release()
    tight = ooc_graph.pagerank(graph, device="cpu", tol=1e-12, memory="48KiB", store=False)
    np.testing.assert_allclose(tight.values, ref.values, rtol=1e-12)
    assert not next(e for k, e in graph.engines.items() if k[1] == "48KiB")._whole  # no room: chunks
    graph.release()


def test_pull_sum_then_runs_after_the_sums_it_reads(graph):
    """``then(lo, hi)`` sees the finished sums of its range (here, where no stripes are cut, once
    for every vertex after the pass) and its values are returned."""
    e = Engine(graph, device="cpu")
    x = np.random.default_rng(0).random(graph.num_vertices)
    ref = e.pull_sum(x)
    y = np.full(graph.num_vertices, np.nan)
    seen = e.pull_sum(x, out=y, then=lambda a, b: (a, b, y[a:b].copy()), stripes=8)
    assert [s[:2] for s in seen] == [(0, graph.num_vertices)]
    np.testing.assert_allclose(seen[0][2], ref, rtol=1e-12)
    assert not e.sends_results and not e.send_result(y, 0, 1)  # the CPU has nothing to send


def test_the_last_step_is_foreseen_from_the_shrinking_changes():
    from ooc_graph.engine.loop import probably_last as _probably_last
    assert not _probably_last([], 1e-6) and not _probably_last([1e-5], 1e-6)
    seen = [1e-4, 1e-5]  # a tenth a step: the next change 1e-6, the one after 1e-7
    assert not _probably_last(seen, 1e-7) and _probably_last(seen, 1e-7, 2)
    assert _probably_last(seen, 1e-6) and not _probably_last(seen, 1e-8, 2)
    assert not _probably_last([0.0, 0.0], 1e-6)  # no ratio to go by


@pytest.mark.parametrize("algo,kw", [("pagerank", {"max_iter": 3, "tol": 1e-30, "raise_on_nonconvergence": False}),
                                     ("bfs", {"source": 0}), ("wcc", {})])
def test_streamed_cpu_calls_keep_to_memory(tmp_path, algo, kw):
    """A streamed CPU call's arrays (NumPy's, traced) stay within ``memory``: the budget counts the
    two prepared chunks a pass holds at a time and the raw chunks read ahead, not one chunk."""
    import tracemalloc
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 16, 16, seed=1, directed=True, progress=False)
    budget = 5 * 8 * G.num_vertices + G.num_vertices + 10 * G.num_arcs  # about half the arcs cached
    getattr(ooc_graph, algo)(G, device="cpu", memory=budget, **kw)  # modules imported, kernels compiled
    G.release()
    tracemalloc.start()
    try:
        r = getattr(ooc_graph, algo)(G, device="cpu", memory=budget, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    engine = next(iter(G.engines.values()))
    assert r.stats["chunks"] > 4 and engine.chunk_arcs >= config.Config().stream.prefetch_min_arcs  # streamed, read ahead
    assert peak <= budget, f"{peak:,} bytes traced for a budget of {budget:,}"
    G.close()

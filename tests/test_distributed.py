"""The distributed runtime on a dask LocalCluster of CPU worker processes (what CI runs), and on
several GPUs where there are (``multigpu``): every algorithm gives the single-process answer on
2 and 3 workers, jobs report progress, cancel, and fail promptly when a worker dies."""

import gc
import itertools
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.engine import stream
from ooc_graph.errors import JobCancelled, JobError, ParameterError
from ooc_graph.runtime import plan
from ooc_graph.runtime.cluster import cpu_worker_environment, local_cpu_client

from conftest import closed_by_peer, dask_client, edge_array, hub_edges, random_edges, stray_connections
from test_ldbc import CASES as LDBC_CASES
from test_ldbc import read_expected

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.timeout(300)
ALGORITHMS = [("pagerank", {"tol": 1e-12, "max_iter": 10_000}), ("bfs", {"source": None}),
              ("sssp", {"source": None}), ("wcc", {})]


def _worker_setting(client, key: str, value, workers=None) -> None:
    """Set ``ooc_graph.config`` setting ``key`` ("section.name") for the worker processes (all, or
    ``workers``): it stands in their jobs unless the caller changed it."""
    # a lambda: sent by value (the workers cannot import this module)
    client.run(lambda v: __import__("ooc_graph.config", fromlist=["c"]).update({key: v}), value, workers=workers)


def _whole_traversals(client, on: bool, workers=None) -> None:
    """Whether the workers run BFS/SSSP as whole compiled traversals where every rank holds the
    CSR (the default), or through the level loop a GPU takes (these tests' default: they test it)."""
    _worker_setting(client, "traversal.whole_traversal", on, workers)


@pytest.fixture(scope="module")
def client():
    with dask_client(3, 2) as c:
        _whole_traversals(c, False)
        yield c


def same(local, dist, algo):
    assert dist.iterations >= 1 or local.iterations == 0
    for name, a in local.arrays().items():
        b = dist.arrays()[name]
        if algo == "pagerank":
            assert np.abs(a - b).sum() <= 1e-12, name
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)  # depths, parents, labels: bit for bit


def test_plan_is_contiguous_and_balanced(tmp_path):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 12, 8, seed=1, interval_size=64, progress=False)
    for parts in (1, 2, 3, 5, 64, 100):
        p = plan(G, parts)
        assert p[0].arcs[0] == 0 and p[-1].arcs[1] == G.num_arcs and p[-1].vertices[1] == G.num_vertices
        assert all(a.arcs[1] == b.arcs[0] and a.vertices[1] == b.vertices[0] for a, b in zip(p, p[1:]))
        if parts <= 5:  # 64 intervals of ~1,000 arcs: shares within an interval of the ideal
            ideal = G.num_arcs / parts
            assert max(abs(x.num_arcs - ideal) for x in p) < 2 * G.num_arcs / 64
    with pytest.raises(ParameterError):
        plan(G, 0)


SEEDS = range(10)


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_graphs_match_one_process(client, tmp_path, seed, size):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(2, 300))
    src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 5 * n)), weighted=seed % 2 == 0)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=seed % 3 != 0, num_vertices=n,
                          interval_size=[4, 16, 64][seed % 3], chunk_arcs=[8, 50, 1000][seed % 3], progress=False)
    memory = [None, "24KiB", "40KiB"][seed % 3]  # tiny budgets: every worker streams its chunks (12KiB: one
    # of 269 vertices streamed chunks of ~11 arcs, 66 s for the test)
    s = int(rng.integers(0, n))
    for algo, kw in ALGORITHMS:
        kw = {k: (s if k == "source" else v) for k, v in kw.items()}
        local = getattr(ooc_graph, algo)(G, device="cpu", memory=memory, **kw)
        job = ooc_graph.submit(client, algo, G, workers=size, memory=memory, **kw)
        dist = job.result(timeout=120)
        same(local, dist, algo)
        assert dist.stats["workers"] == size and dist.device == "cpu"
        if algo in ("pagerank", "wcc") and G.num_arcs and size > 1:
            assert dist.stats["bytes_exchanged"] > 0



# The algorithms written on Engine.edge_map: every pass writes only the owned vertices and gathers.
# (whether an iteration converges is not what is compared: the values are, either way)
_KEEP = {"raise_on_nonconvergence": False}
OPERATOR_ALGORITHMS = [("pagerank", {"weight": "weight", "tol": 1e-12, "max_iter": 10_000, **_KEEP}),
                       ("hits", {"tol": 1e-10, "max_iter": 1000, **_KEEP}), ("katz_centrality", {"alpha": 0.01, **_KEEP}),
                       ("eigenvector_centrality", {"max_iter": 1000, **_KEEP}), ("cdlp", {"max_iter": 4}),
                       ("core_number", {}), ("scc", {}), ("betweenness_centrality", {"k": 5})]


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_operator_algorithms_match_one_process(client, tmp_path, seed, size):
    rng = np.random.default_rng(700 + seed)
    n = int(rng.integers(6, 120))
    src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 4 * n)), weighted=seed % 2 == 0)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=seed % 3 != 0, num_vertices=n,
                          interval_size=[4, 16, 64][seed % 3], chunk_arcs=[8, 50, 1000][seed % 3], progress=False)
    memory = [None, "12KiB", "40KiB"][seed % 3]
    for algo, kw in OPERATOR_ALGORITHMS:
        local = getattr(ooc_graph, algo)(G, device="cpu", memory=memory, seed=seed, **kw) if algo.startswith(
            "betweenness") else getattr(ooc_graph, algo)(G, device="cpu", memory=memory, **kw)
        if algo.startswith("betweenness"):
            kw = dict(kw, seed=seed)
        dist = ooc_graph.submit(client, algo, G, workers=size, memory=memory, **kw).result(timeout=120)
        assert dist.stats["workers"] == size, algo
        # (Hooking, scc's way on an undirected graph, may take another pass on more workers.)
        assert dist.iterations == local.iterations or (algo == "scc" and not G.directed), algo
        for name, a in local.arrays().items():
            np.testing.assert_allclose(dist.arrays()[name], a, rtol=1e-9, atol=1e-13, err_msg=f"{algo} {name}")
    # No seed: rank 0 draws one for all ranks, and the result says which.
    r = ooc_graph.submit(client, "betweenness_centrality", G, workers=size, k=3).result(timeout=120)
    assert r.parameters["seed"] is not None
    again = ooc_graph.betweenness_centrality(G, device="cpu", k=3, seed=r.parameters["seed"])
    np.testing.assert_allclose(r.values, again.values, rtol=1e-9, atol=1e-13)


def _positive_weights(tmp_path, seed, n, **kw):
    """A random store with positive weights: small integers (equal path lengths) or uniform."""
    rng = np.random.default_rng(seed)
    src, dst, _ = random_edges(rng, n=n, m=int(rng.integers(n, 4 * n)))
    w = rng.integers(1, 4, src.size) / 2 if seed % 2 == 0 else rng.uniform(0.1, 2.0, src.size)
    return ooc_graph.convert((src, dst, w), tmp_path / "w.h5", num_vertices=n, weight_dtype="float64", progress=False,
                             **kw)


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_weighted_betweenness_matches_one_process(client, tmp_path, seed, size):
    """Weighted betweenness (SSSP, then sums over the tight arcs) on workers, streamed too."""
    n = int(np.random.default_rng(800 + seed).integers(6, 120))
    G = _positive_weights(tmp_path, 800 + seed, n, directed=seed != 1, interval_size=[4, 16, 64][seed % 3],
                          chunk_arcs=[8, 50, 1000][seed % 3])
    memory = [None, "12KiB", "40KiB"][seed % 3]
    kw = dict(weight="weight", k=6, seed=seed, endpoints=seed == 2)
    local = ooc_graph.betweenness_centrality(G, device="cpu", memory=memory, **kw)
    dist = ooc_graph.submit(client, "betweenness_centrality", G, workers=size, memory=memory, **kw).result(timeout=120)
    assert dist.stats["workers"] == size and dist.iterations == local.iterations
    np.testing.assert_allclose(dist.values, local.values, rtol=1e-9, atol=1e-13)

def test_frontier_advance_and_async_across_workers(client, tmp_path, monkeypatch):
    """A mesh (high diameter): frontier advances split across workers, and asynchronous passes
    over streamed chunks, give the one-process depths and parents."""
    G = ooc_graph.generate.grid(tmp_path / "m.h5", 40, 12, weighted=True, interval_size=32, chunk_arcs=64,
                                progress=False)
    for execution in ("sync", "async"):
        local = ooc_graph.sssp(G, 5, device="cpu", execution=execution)
        dist = ooc_graph.submit(client, "sssp", G, workers=3, source=5, execution=execution,
                                memory="30KiB").result(timeout=120)
        same(local, dist, "sssp")
    local = ooc_graph.bfs(G, 0, device="cpu")
    dist = ooc_graph.submit(client, "bfs", G, workers=2, source=0).result(timeout=120)
    same(local, dist, "bfs")
    assert dist.stats["advances"] > 0  # small frontiers went over the CSR, split between the ranks


@pytest.mark.parametrize("seed", range(4))
def test_whole_traversals_on_every_worker(client, tmp_path, seed):
    """CPU workers that all hold the CSR run BFS and SSSP (unit and weighted) as one compiled
    traversal each, alike, with nothing to exchange: the one-process answers; where one worker
    cannot (its setting off), every rank takes the level loop."""
    rng = np.random.default_rng(40 + seed)
    n = int(rng.integers(50, 2000))
    src, dst, w = hub_edges(rng, n=n, weighted=seed % 2 == 1)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", num_vertices=n + 2, directed=seed < 2,
                          interval_size=64, chunk_arcs=512, progress=False)
    _whole_traversals(client, True)
    try:
        for algo in ("bfs", "sssp"):
            local = getattr(ooc_graph, algo)(G, 0, device="cpu")
            dist = ooc_graph.submit(client, algo, G, workers=[2, 3][seed % 2], source=0).result(timeout=120)
            same(local, dist, algo)
            assert dist.iterations == local.iterations
            for rank in dist.stats["ranks"]:
                st = rank["stats"]
                assert st["traversals"] == 1 and st["advances"] == st["bottom_up"] == st["passes"] == 0, st
        one = sorted(client.scheduler_info()["workers"])[0]
        _whole_traversals(client, False, workers=[one])
        dist = ooc_graph.submit(client, "bfs", G, workers=3, source=0).result(timeout=120)
        same(ooc_graph.bfs(G, 0, device="cpu"), dist, "bfs")
        assert all(rank["stats"]["traversals"] == 0 for rank in dist.stats["ranks"])
    finally:
        _whole_traversals(client, False)


def test_pagerank_pulls_over_the_whole_in_csr_on_every_worker(client, tmp_path):
    """CPU workers that pull PageRank's sums over their rows of the in-CSR (config cpu.whole_pull;
    the default where numba has parallel_min_threads threads) give the one-process answer; each
    reads the in-CSR instead of its chunks."""
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, seed=3, directed=True, interval_size=64, chunk_arcs=1024,
                                progress=False)
    local = ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=500)
    csr_bytes = 8 * (G.num_vertices + 1) + G.num_arcs * G.id_dtype.itemsize
    with config.set(cpu={"whole_pull": True}, traversal={"whole_traversal": True}):
        dist = ooc_graph.submit(client, "pagerank", G, workers=2, tol=1e-12, max_iter=500).result(timeout=120)
    assert dist.iterations == local.iterations
    assert np.abs(dist.values - local.values).max() <= 1e-15
    assert [rank["stats"]["bytes_read"] for rank in dist.stats["ranks"]] == [csr_bytes, csr_bytes]


def test_a_job_carries_the_settings_its_caller_made(client, tmp_path):
    """The settings a caller made (ooc_graph.config) reach every rank of its job, even where they
    are the defaults; a worker's own settings stand where the caller made none."""
    G = ooc_graph.generate.grid(tmp_path / "m.h5", 30, 10, interval_size=32, chunk_arcs=64, progress=False)
    local = ooc_graph.bfs(G, 3, device="cpu")
    with config.set(traversal={"whole_traversal": True}):  # the default, off on these workers
        dist = ooc_graph.submit(client, "bfs", G, workers=2, source=3).result(timeout=120)
    same(local, dist, "bfs")
    assert [rank["stats"]["traversals"] for rank in dist.stats["ranks"]] == [1, 1]
    dist = ooc_graph.submit(client, "bfs", G, workers=2, source=3).result(timeout=120)
    same(local, dist, "bfs")
    assert [rank["stats"]["traversals"] for rank in dist.stats["ranks"]] == [0, 0]


def test_small_levels_run_whole_on_every_worker(client, tmp_path):
    """A level-synchronous BFS on workers: frontiers of few arcs advance whole on every rank
    (nothing to merge, the tree built on the way), larger ones split between the ranks (the tree
    found after): the one-process answers either way."""
    G = ooc_graph.generate.grid(tmp_path / "m.h5", 40, 12, interval_size=32, chunk_arcs=64, progress=False)
    local = ooc_graph.bfs(G, 3, device="cpu")
    default = config.Config().traversal.replicated_max_arcs
    try:
        for limit in (default, 0):
            _worker_setting(client, "traversal.replicated_max_arcs", limit)
            for size in (2, 3):
                dist = ooc_graph.submit(client, "bfs", G, workers=size, source=3).result(timeout=120)
                same(local, dist, "bfs")
                for rank in dist.stats["ranks"]:
                    st = rank["stats"]
                    assert st["advances"] + st["bottom_up"] == dist.iterations and st["advances"] > st["bottom_up"]
                    # whole: every level built its part of the tree; split: only the bottom-up ones
                    assert st["tree_levels"] == (dist.iterations if limit else st["bottom_up"]), st
    finally:
        _worker_setting(client, "traversal.replicated_max_arcs", default)


@pytest.mark.parametrize("size", [2, 3])
def test_bottom_up_levels_across_workers(client, tmp_path, size):
    """Direction-optimised BFS split across workers: each looks for parents of its own unreached
    vertices over the in-CSR."""
    rng = np.random.default_rng(size)
    src, dst, w = hub_edges(rng, n=900, weighted=True)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "h.h5", num_vertices=902, interval_size=64,
                          chunk_arcs=256, progress=False)
    for algo in ("bfs", "sssp"):
        local = getattr(ooc_graph, algo)(G, 0, device="cpu")
        dist = ooc_graph.submit(client, algo, G, workers=size, source=0).result(timeout=120)
        same(local, dist, algo)
        if algo == "bfs":  # every rank took the bottom-up levels, and found their parents on the way
            assert dist.stats["bottom_up"] >= size and dist.stats["tree_levels"] >= dist.stats["bottom_up"]


@pytest.mark.parametrize("seed", range(6))
def test_near_far_sssp_on_two_workers(client, tmp_path, seed):
    """Weighted SSSP with near-far buckets split over two workers: every rank takes the same near
    pile and raises the same bound from the merged state and flags, so the answers are the one
    process's bit for bit, whether the levels are advances split between the ranks or streamed
    passes, synchronous, "auto" or asynchronous (which runs without buckets)."""
    rng = np.random.default_rng(800 + seed)
    if seed < 2:  # a mesh: many buckets, small frontiers advanced over the CSR
        G = ooc_graph.generate.grid(tmp_path / "m.h5", 30 + 10 * seed, 12, weighted=True, seed=seed,
                                    interval_size=32, chunk_arcs=64, progress=False)
    else:  # zero weights (0..63/8), self-loops, duplicates, unreachable vertices
        n = int(rng.integers(50, 300))
        src, dst, w = random_edges(rng, n=n - 3, m=int(rng.integers(n, 5 * n)), weighted=True)
        G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=seed % 2 == 0, num_vertices=n,
                              interval_size=[16, 64][seed % 2], chunk_arcs=[32, 200][seed % 2], progress=False)
    s = int(rng.integers(0, G.num_vertices))
    local = ooc_graph.sssp(G, s, device="cpu")
    per_arc = stream.PREPARED_BYTES_PER_ARC + G.cel_nbytes_per_arc()
    tight = 5 * 8 * G.num_vertices + G.num_vertices + 6 * per_arc * G.chunk_arcs  # no CSR, chunks streamed
    for memory, execution in ((None, "sync"), (tight, "sync"), (tight, "auto"), (tight, "async")):
        dist = ooc_graph.submit(client, "sssp", G, workers=2, source=s, memory=memory,
                                execution=execution).result(timeout=120)
        same(local, dist, "sssp")
        if local.distance[np.isfinite(local.distance)].size > 1:
            assert (dist.stats["near_far_bounds"] > 0) == (execution != "async"), (memory, execution)
        if seed < 2 and memory is None:
            assert dist.stats["advances"] > 0

@pytest.mark.parametrize("case,inp,fmt,directed,algo,params,expected", LDBC_CASES, ids=[c[0] for c in LDBC_CASES])
def test_graphalytics_on_three_workers(client, tmp_path, data_dir, case, inp, fmt, directed, algo, params, expected):
    ldbc = data_dir / "ldbc"
    G = ooc_graph.convert(ldbc / inp, tmp_path / "g.h5", format=fmt, directed=directed, weighted=(algo == "sssp"),
                          weight_dtype="float64", interval_size=2, chunk_arcs=4, progress=False)
    r = ooc_graph.submit(client, algo, G, workers=3, **params).result(timeout=120)
    want = read_expected(ldbc / expected)
    got = r.to_dict({"bfs": "depth", "sssp": "distance", "wcc": "labels", "cdlp": "labels",
                     "pagerank": "values", "lcc": "values"}[algo])
    assert set(got) == set(want)
    for v, text in want.items():
        if algo in ("bfs", "wcc", "cdlp"):
            assert got[v] == int(text), v
        elif algo == "sssp":
            assert got[v] == pytest.approx(float(text), rel=1e-9) if text != "Infinity" else np.isinf(got[v]), v
        else:
            assert got[v] == pytest.approx(float(text), rel=1e-6), v


def test_results_reach_the_client_with_and_without_shared_memory(client, tmp_path, monkeypatch):
    # 1.1M vertices: result memory is prepared while the workers compute (engine.hostbuf), and
    # each worker writes its own vertices into the client's shared-memory arrays.
    from ooc_graph.runtime import segments, worker
    pool = segments.pool()
    before = set(segments.SHARED_DIR.glob(f"{segments.PREFIX}-*"))
    rng = np.random.default_rng(7)
    n = 1_100_000
    src, dst = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    G = ooc_graph.convert(edge_array(src, dst, None), tmp_path / "g.h5", num_vertices=n, directed=False,
                          progress=False)
    s = int(src[0])
    for algo, kw in (("wcc", {}), ("bfs", {"source": s})):
        local = getattr(ooc_graph, algo)(G, device="cpu", **kw)
        dist = ooc_graph.submit(client, algo, G, workers=3, **kw).result(timeout=120)
        same(local, dist, algo)
        assert all(segments.mapped(a) for a in dist.arrays().values())  # mapped, not sent
        assert dist.stats["handover"] == "direct"  # rank 0 connected to this client itself
        free = len(pool.free)
        del dist  # no reference cycle holds it: its segments are free at once, for the next call
        assert len(pool.free) > free
    # Rank 0 cannot reach the client's listener: the result comes back through dask instead.
    from ooc_graph.runtime import reply
    closed = socket.create_server(("127.0.0.1", 0))
    nowhere = closed.getsockname()[:2]
    closed.close()
    monkeypatch.setattr(reply, "new_route", lambda job_id, secret: nowhere)
    dist = ooc_graph.submit(client, "bfs", G, workers=3, source=s).result(timeout=120)
    same(ooc_graph.bfs(G, s, device="cpu"), dist, "bfs")
    assert dist.stats["handover"] == "dask"
    monkeypatch.undo()
    # A client on another host gets rank 0's arrays whole, by value.
    monkeypatch.setattr(worker, "host_identity", lambda: "another-host")
    small = ooc_graph.convert(edge_array(*random_edges(np.random.default_rng(3), n=300, m=2000)), tmp_path / "s.h5",
                              interval_size=32, progress=False)
    for graph, algo, kw in ((G, "wcc", {}), (G, "sssp", {"source": s}), (small, "pagerank", {"tol": 1e-12})):
        local = getattr(ooc_graph, algo)(graph, device="cpu", **kw)
        dist = ooc_graph.submit(client, algo, graph, workers=3, **kw).result(timeout=120)
        same(local, dist, algo)  # (PageRank: only its own vertices are current on each rank until the end)
        assert not any(segments.mapped(a) for a in dist.arrays().values())
        assert dist.stats["handover"] == "dask"
    del local, dist
    gc.collect()
    # nothing left behind but the client's free segments, which the next job is offered
    assert set(segments.SHARED_DIR.glob(f"{segments.PREFIX}-*")) <= before | {Path(p) for p in pool.free}
    assert all(pool.key in p for p in pool.free)


def test_algorithm_keywords_and_results_in_the_store(client, tmp_path):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 9, 8, seed=4, progress=False)
    local = ooc_graph.pagerank(G, device="cpu")
    r = ooc_graph.pagerank(G, client=client, store="pr_dist")  # client=: the same call on the cluster
    same(local, r, "pagerank")
    assert r.graph is G and "pr_dist" in G.results()
    job = ooc_graph.submit(client, "wcc", G, store=True)  # saved by rank 0 on a worker; G lets go of the file
    labels = job.result(timeout=120).labels
    G.close()
    G = ooc_graph.open(G.path)
    np.testing.assert_array_equal(G.load_result("wcc")["labels"], labels)
    assert job.status() == "finished" and job.progress()["state"] == "finished"


def test_cpu_workers_share_the_cores_unless_told(monkeypatch):
    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    assert cpu_worker_environment(1) == {"NUMBA_NUM_THREADS": str(cores)}
    assert cpu_worker_environment(cores + 5) == {"NUMBA_NUM_THREADS": "1"}
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert cpu_worker_environment(2) == {}  # the user's, inherited as it is


def test_workers_keyword_starts_a_local_cluster(tmp_path, monkeypatch):
    """workers=N starts a LocalCluster of N CPU processes once, whose compiled kernels share this
    machine's cores among them (numba took every core in each); a NUMBA_NUM_THREADS of the user's
    is passed on as it is."""
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0], [3, 4]]), tmp_path / "g.h5", interval_size=2,
                          progress=False)
    r = ooc_graph.wcc(G, workers=2)
    assert r.labels.tolist() == [0, 0, 0, 3, 3] and r.stats["workers"] == 2
    assert ooc_graph.bfs(G, 0, workers=2).depth.tolist()[:3] == [0, 1, 2]  # the cluster is kept: no new start
    def numba_threads():  # (defined here: the workers get it by value, not by importing this file)
        import numba
        return numba.get_num_threads()
    threads = local_cpu_client(2).run(numba_threads)
    assert sorted(threads.values()) == [max(1, len(os.sched_getaffinity(0)) // 2)] * 2  # the cores shared
    with pytest.raises(ParameterError, match="contradicts"):
        ooc_graph.wcc(G, workers=2, device="gpu")
    with pytest.raises(ParameterError, match="one of"):
        ooc_graph.wcc(G, workers=2, gpus=[0])


def test_a_script_with_workers_exits_quietly(tmp_path):
    """A script's last calls may end before dask hears of their tasks: the cluster closing at exit
    then finishes them, and nothing may be printed about it (their callbacks once ran on a thread
    pool already shut down, one traceback each)."""
    script = tmp_path / "s.py"
    script.write_text(f"""
import numpy as np, ooc_graph
if __name__ == "__main__":
    G = ooc_graph.convert(np.random.default_rng(1).integers(0, 500, (3000, 2)), {str(tmp_path / "g.h5")!r},
                          progress=False)
    for _ in range(12):
        r = ooc_graph.wcc(G, workers=2)
    print("done", r.stats["handover"])
""")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and "done direct" in r.stdout, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "Error" not in r.stderr, r.stderr[-2000:]


def test_bad_parameters_fail_before_or_like_a_local_call(client, tmp_path):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False)
    with pytest.raises(ParameterError, match="no parameter 'alpha'"):
        ooc_graph.submit(client, "bfs", G, source=0, alpha=0.5)
    with pytest.raises(ParameterError, match="needs source"):
        ooc_graph.submit(client, "bfs", G)
    with pytest.raises(ParameterError, match="unknown algorithm"):
        ooc_graph.submit(client, "nope", G)
    with pytest.raises(ParameterError, match="not in the graph"):  # raised on the workers, as locally
        ooc_graph.submit(client, "bfs", G, source=7).result(timeout=120)
    with pytest.raises(ParameterError, match="workers=9"):
        ooc_graph.submit(client, "wcc", G, workers=9)


@pytest.fixture(scope="module")
def slow_graph(tmp_path_factory):
    """A graph whose PageRank, held to an unreachable tolerance, runs until stopped."""
    return ooc_graph.generate.rmat(tmp_path_factory.mktemp("s") / "slow.h5", 11, 8, seed=7, interval_size=128,
                                   chunk_arcs=1024, progress=False)


def _running(job, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = job.progress()
        if p and p.get("iteration", 0) >= 2:
            return p
        time.sleep(0.1)
    raise AssertionError(f"job never ran: {job.status()}")


def test_progress_and_cancel(client, slow_graph):
    job = ooc_graph.submit(client, "pagerank", slow_graph, workers=2, tol=1e-300, max_iter=10**9, memory="200KiB")
    p = _running(job)
    assert job.status() == "running" and p["measure"] > 0 and p["seconds"] > 0
    job.cancel()
    t = time.monotonic()
    with pytest.raises(JobCancelled, match=job.id):
        job.result(timeout=60)
    assert time.monotonic() - t < 20 and job.status() == "cancelled"
    # The workers are free again: the next job runs.
    assert ooc_graph.submit(client, "wcc", slow_graph, workers=2).result(timeout=120).num_components >= 1


def test_done_and_exception_as_a_dask_future(client, slow_graph):
    """A Job has ``done()`` (never waits) and ``exception(timeout=)`` as a dask Future has."""
    job = ooc_graph.submit(client, "pagerank", slow_graph, workers=2, tol=1e-300, max_iter=10**9, memory="200KiB")
    _running(job)
    t = time.monotonic()
    assert not job.done() and time.monotonic() - t < 2
    with pytest.raises(TimeoutError):
        job.exception(timeout=0.2)
    job.cancel()
    assert isinstance(job.exception(timeout=60), JobCancelled) and job.done()
    bad = ooc_graph.submit(client, "bfs", slow_graph, workers=2, source=10**6)  # caught on the workers
    err = bad.exception(timeout=120)
    assert isinstance(err, ParameterError) and "not in the graph" in str(err) and bad.done()
    ok = ooc_graph.submit(client, "wcc", slow_graph, workers=2)
    assert ok.exception(timeout=120) is None and ok.done() and ok.result().num_components >= 1


def test_progress_after_the_end_is_final(client, slow_graph):
    """``progress()`` after a job ended showed the last report's iteration (reports are 0.2 s
    apart: a short job said iteration 0): now the final one, as finished."""
    local = ooc_graph.pagerank(slow_graph, device="cpu", tol=1e-9)
    job = ooc_graph.submit(client, "pagerank", slow_graph, workers=2, tol=1e-9)
    while not job.done():
        time.sleep(0.05)
    before = job.progress()  # from rank 0's worker, result not fetched yet
    r = job.result(timeout=120)
    after = job.progress()
    for p in (before, after):
        assert p["state"] == "finished" and p["iteration"] == r.iterations == local.iterations, p
        assert 0 < p["measure"] < 1e-9 and p["seconds"] > 0
    job.cancel()  # too late: nothing changes
    assert job.progress()["state"] == "finished" and job.status() == "finished"


def test_cancel_stops_a_level_synchronous_traversal(client, tmp_path):
    """BFS levels agree on stopping through their merges (each rank's stop request travels with
    its flags, no collective of its own), or, levels every rank runs whole (a path's), every
    REPLICATED_AGREE_EVERY of them: cancelling stops every rank within those levels."""
    n = 300_000
    G = ooc_graph.convert(np.stack([np.arange(n - 1), np.arange(1, n)], axis=1), tmp_path / "path.h5",
                          directed=True, progress=False)  # a path: one level per vertex
    job = ooc_graph.submit(client, "bfs", G, workers=2, source=0)
    p = _running(job)
    job.cancel()
    with pytest.raises(JobCancelled, match=job.id):
        job.result(timeout=60)
    assert p["iteration"] < n - 1000 and job.status() == "cancelled"


def test_a_dead_worker_fails_the_job_promptly(tmp_path, slow_graph):
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=0,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    try:
        job = ooc_graph.submit(c, "pagerank", slow_graph, tol=1e-300, max_iter=10**9, store=True,
                               memory="200KiB")
        _running(job)
        victim = job.spec.workers[1]
        pid = c.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        t = time.monotonic()
        with pytest.raises(JobError) as err:
            job.result(timeout=60)
        assert time.monotonic() - t < 30
        message, survivor = str(err.value), job.spec.workers[0]
        assert job.id in message and victim in message and "\n" not in message
        # the worker that died is named first, not the one that saw it go
        assert survivor not in message or message.index(victim) < message.index(survivor), message
        assert job.status() == "failed"
    finally:
        c.close()
        cluster.close()
    G = ooc_graph.open(slow_graph.path)  # still readable, and no result was half-written
    assert "pagerank" not in G.results() and not any(r.startswith(".") for r in G.results())
    assert G.num_arcs == slow_graph.num_arcs
    G.close()


@pytest.fixture(scope="module")
def own_cluster():
    """A cluster of two one-slot workers for tests that stop, close or kill things: each makes
    its own clients of it."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=0,
                                       dashboard_address=":0")
    yield cluster
    cluster.close()


def _within(call, seconds: float):
    """``call()``, which must return within ``seconds`` (run on a thread, so that a call that
    hangs fails the test instead of hanging it)."""
    box = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as err:  # raised here, below
            box["error"] = err
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{getattr(call, '__name__', call)} still waited after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_a_job_id_alone_does_not_join_a_job_on_a_cluster(client, tmp_path, monkeypatch):
    """Someone who knows a job's id before it starts (dask's task keys carry it) waits at rank
    0's hub as rank 1 — with the bare id, all joining took before, and with a guessed secret —
    and answers what rank 0 sends: the job still runs with its own ranks, and they are closed."""
    from ooc_graph.runtime import jobs, wire
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [3, 4]]), tmp_path / "g.h5", progress=False)
    monkeypatch.setattr(jobs, "_COUNTER", itertools.count(777))
    monkeypatch.setattr(jobs, "uuid", types.SimpleNamespace(uuid4=lambda: types.SimpleNamespace(hex="0123abcd" * 4)))
    names = sorted(client.scheduler_info()["workers"])[:2]
    rank0 = jobs.hubs(client, names)[0][0]
    job_id = "wcc-777-0123abcd"
    forged = []
    for key in (None, os.urandom(32)):
        s = socket.create_connection(rank0, timeout=5)
        try:
            if key is None:
                s.sendall(struct.pack("<q", len(job_id)) + job_id.encode() + struct.pack("<q", 1))
            else:
                wire.introduce(s, wire.MESH, job_id, 1, key)
        except OSError:
            pass  # (a hub that sends no nonce)
        forged.append(s)

    def answer(sock):  # as rank 1 would: rank 0's first message, then one of its own
        try:
            if sock.recv(1 << 16):
                sock.sendall(struct.pack("<q", 1) + b"1")
        except OSError:
            pass
    for s in forged:
        threading.Thread(target=answer, args=(s,), daemon=True).start()
    time.sleep(0.2)
    job = ooc_graph.submit(client, "wcc", G, workers=2)
    assert job.id == job_id
    assert job.result(timeout=30).labels.tolist() == [0, 0, 0, 3, 3]
    deadline = time.monotonic() + 10
    while not all(closed_by_peer(s) for s in forged) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(closed_by_peer(s) for s in forged)


def test_listeners_outlive_strays_and_jobs_run_promptly(client, tmp_path):
    """A negative length, garbage, a huge length, a silent connection and 200 idle ones, to
    every worker's hub and to this client's reply listener: the next job runs at once, started
    directly and handed back directly."""
    from ooc_graph.runtime import jobs, mesh, reply
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [3, 4]]), tmp_path / "g.h5", progress=False)
    names = sorted(client.scheduler_info()["workers"])
    addresses, _ = jobs.hubs(client, names)
    strays = [s for a in list(addresses) + [mesh.hub(reply.LOOPBACK).address] for s in stray_connections(a)]
    try:
        time.sleep(0.5)
        t = time.monotonic()
        r = ooc_graph.submit(client, "wcc", G).result(timeout=30)
        assert time.monotonic() - t < 10 and r.labels.tolist() == [0, 0, 0, 3, 3]
        assert r.stats["handover"] == "direct" and "direct" in [x["start"] for x in r.stats["ranks"]]
    finally:
        for s in strays:
            s.close()


def test_a_stopped_worker_holds_up_no_call(own_cluster, slow_graph):
    """Rank 0's worker stopped (SIGSTOP): progress() and status() say it is unresponsive, and
    cancel() returns, each within RUN_SECONDS; once it runs again the job is cancelled and its
    workers are free."""
    from ooc_graph.runtime.limits import RUN_SECONDS
    c = distributed.Client(own_cluster)
    try:
        c.wait_for_workers(2, timeout=60)
        job = ooc_graph.submit(c, "pagerank", slow_graph, workers=2, tol=1e-300, max_iter=10**9, memory="200KiB")
        _running(job)
        frozen = job.spec.workers[0]
        pid = c.run(os.getpid, workers=[frozen])[frozen]
        os.kill(pid, signal.SIGSTOP)
        try:
            record = _within(job.progress, RUN_SECONDS + 5)
            assert record["state"] == "unresponsive" and record["worker"] == frozen
            assert _within(job.status, RUN_SECONDS + 5) == "unresponsive"
            _within(job.cancel, RUN_SECONDS + 5)
            assert job.status() == "cancelled"
        finally:
            os.kill(pid, signal.SIGCONT)
        with pytest.raises(JobCancelled, match=job.id):
            job.result(timeout=60)
        assert ooc_graph.submit(c, "wcc", slow_graph, workers=2).result(timeout=120).num_components >= 1
    finally:
        c.close()


def test_a_closed_client_fails_its_job_in_one_line_and_cancels_it(own_cluster, slow_graph, tmp_path):
    from ooc_graph.runtime import worker
    path = tmp_path / "s.h5"
    shutil.copy(slow_graph.path, path)
    G = ooc_graph.open(path)
    c = distributed.Client(own_cluster)
    c.wait_for_workers(2, timeout=60)
    job = ooc_graph.submit(c, "pagerank", G, workers=2, tol=1e-300, max_iter=10**9, store=True, memory="200KiB")
    _running(job)
    c.close()
    with pytest.raises(JobError) as err:
        _within(lambda: job.result(timeout=30), 40)
    message = str(err.value)
    assert not isinstance(err.value, JobCancelled) and job.id in message and "closed" in message, message
    assert "\n" not in message and job.status() == "failed"
    # The workers were told: their ranks stop (they would run forever), and nothing is saved.
    other = distributed.Client(own_cluster)
    try:
        assert all(other.run(worker.cancelled, job.id, workers=job.spec.workers).values())
        running = lambda j: any(t.name == f"ooc-graph-{j}" for t in threading.enumerate())  # noqa: E731
        deadline = time.monotonic() + 30
        while any(other.run(running, job.id, workers=job.spec.workers).values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(other.run(running, job.id, workers=job.spec.workers).values())
    finally:
        other.close()
    G.close()
    G = ooc_graph.open(path)
    assert "pagerank" not in G.results()
    G.close()


def test_submitting_just_after_a_worker_died_names_it(own_cluster, tmp_path):
    """The scheduler may still list a worker that has just died: submit() says which one, in one
    line, or runs on the workers left."""
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [3, 4]]), tmp_path / "g.h5", progress=False)
    c = distributed.Client(own_cluster)
    try:
        for _ in range(3):
            c.wait_for_workers(2, timeout=60)
            assert ooc_graph.submit(c, "wcc", G).result(timeout=60).labels.tolist() == [0, 0, 0, 3, 3]
            deadline = time.monotonic() + 60
            while len(workers := sorted(c.scheduler_info()["workers"])) < 2:  # the last one killed may
                assert time.monotonic() < deadline, workers  # have left since wait_for_workers saw two
                c.wait_for_workers(2, timeout=60)
            victim = workers[1]
            os.kill(c.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
            try:
                job = ooc_graph.submit(c, "wcc", G)  # device="auto" asks every worker
            except JobError as err:
                assert victim in str(err) and "\n" not in str(err), str(err)
                continue
            try:
                assert job.result(timeout=60).labels.tolist() == [0, 0, 0, 3, 3]
            except JobError as err:
                assert victim in str(err) and "\n" not in str(err), str(err)
    finally:
        c.close()


_KILLED_CLIENT = """
import sys, time, distributed, ooc_graph
from ooc_graph.runtime import segments
if __name__ == "__main__":
    c = distributed.Client(sys.argv[1])
    job = ooc_graph.submit(c, "pagerank", sys.argv[2], workers=2, tol=1e-300, max_iter=int(sys.argv[3]))
    key = segments.pool().key
    while not (job.progress() or {}).get("iteration") or not list(segments.SHARED_DIR.glob(f"*-{key}-*")):
        time.sleep(0.02)
    print(job.id, key, flush=True)
    time.sleep(600)
"""


def _big_sparse_graph(path):
    """1.1M vertices, 3,000 arcs: result segments are made as a job starts (engine/hostbuf.py)."""
    rng = np.random.default_rng(7)
    n = 1_100_000
    return ooc_graph.convert((rng.integers(0, n, 3000), rng.integers(0, n, 3000)), path, num_vertices=n,
                             progress=False)


def test_a_killed_client_leaves_no_result_segments(client, tmp_path):
    """A client killed (SIGKILL) while its job runs: its ranks remove the job's result segments
    when they finish it."""
    from ooc_graph.runtime import segments, worker
    G = _big_sparse_graph(tmp_path / "g.h5")
    script = tmp_path / "client.py"
    script.write_text(_KILLED_CLIENT)
    child = subprocess.Popen([sys.executable, str(script), client.scheduler.address, str(G.path), "800"],
                             stdout=subprocess.PIPE, text=True)
    try:
        job_id, key = child.stdout.readline().split()
        assert list(segments.SHARED_DIR.glob(f"{segments.PREFIX}-{key}-*"))  # made, and the client holds them
    finally:
        child.kill()
        child.wait()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        states = [r and r.get("state") for r in client.run(worker.job_progress, job_id).values()]
        if "finished" in states and not list(segments.SHARED_DIR.glob(f"{segments.PREFIX}-{key}-*")):
            break
        time.sleep(0.2)
    assert "finished" in states, states  # the ranks ran on to the end
    assert not list(segments.SHARED_DIR.glob(f"{segments.PREFIX}-{key}-*"))


def test_a_terminated_command_removes_its_result_segments(tmp_path):
    """``ooc-graph run ... --workers 2`` stopped with SIGTERM mid-job leaves no segment behind."""
    from ooc_graph.runtime import segments
    G = _big_sparse_graph(tmp_path / "g.h5")
    G.close()
    child = subprocess.Popen([sys.executable, "-m", "ooc_graph.cli", "run", "pagerank", str(G.path), "--workers", "2",
                              "--tol", "1e-300", "--max-iter", "1000000000", "--no-store", "--quiet"],
                             stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    mine = f"{segments.PREFIX}-{child.pid}-*"
    try:
        deadline = time.monotonic() + 120
        while not list(segments.SHARED_DIR.glob(mine)) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.1)
        assert list(segments.SHARED_DIR.glob(mine)), child.stderr.read() if child.poll() is not None else ""
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
    finally:
        child.kill()
    assert child.returncode == -signal.SIGTERM
    assert not list(segments.SHARED_DIR.glob(mine))


@pytest.mark.multigpu
@pytest.mark.parametrize("seed", range(4))
def test_two_gpus_match_one(tmp_path, monkeypatch, configure, seed):
    """Several GPUs (dask-cuda, NCCL): the one-process GPU answers, with budgets that stream."""
    configure({"traversal.advance_fraction": [0.0, config.Config().traversal.advance_fraction][seed % 2]})
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(50, 3000))
    src, dst, w = random_edges(rng, n=n, m=8 * n, weighted=seed % 2 == 0)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=seed < 2, num_vertices=n,
                          interval_size=128, chunk_arcs=2048, progress=False)
    s = int(rng.integers(0, n))
    for algo, kw in ALGORITHMS:
        kw = {k: (s if k == "source" else v) for k, v in kw.items()}
        local = getattr(ooc_graph, algo)(G, device="gpu", **kw)
        for budget in (None, 5 * 8 * n + n + 3 * 2048 * 12):
            dist = getattr(ooc_graph, algo)(G, gpus=[0, 1], device_memory=budget, **kw)
            same(local, dist, algo)
            assert dist.device == "gpu" and dist.stats["workers"] == 2


@pytest.mark.multigpu
@pytest.mark.parametrize("seed", range(3))
def test_pagerank_on_two_gpus_looking_late_stops_where_one_stops(tmp_path, seed):
    """NCCL ranks queue PageRank's next step before looking at the all-reduced sums: iterations,
    convergence and values are one GPU's, whether tol or max_iter ends the run."""
    rng = np.random.default_rng(70 + seed)
    n = int(rng.integers(100, 3000))
    src, dst, _ = random_edges(rng, n=n, m=int(rng.integers(n, 8 * n)))
    G = ooc_graph.convert((src, dst), tmp_path / "g.h5", directed=seed != 1, num_vertices=n, interval_size=128,
                          chunk_arcs=2048, progress=False)
    for kw in ({"tol": 1e-6}, {"tol": 1e-11, "max_iter": 1000}, {"tol": 1e-12, "max_iter": 7}, {"max_iter": 1},
               {"mode": "graphalytics", "max_iter": 5}):
        kw = dict(kw, raise_on_nonconvergence=False)
        one = ooc_graph.pagerank(G, device="gpu", **kw)
        two = ooc_graph.pagerank(G, gpus=[0, 1], **kw)
        assert (two.iterations, two.converged) == (one.iterations, one.converged), kw
        assert np.abs(one.values - two.values).sum() <= 1e-12, kw


@pytest.mark.multigpu
def test_pagerank_on_two_gpus_pulls_own_sources_while_the_rest_arrive(tmp_path):
    """With the graph held source-blocked (small segments on the workers), each rank pulls over
    the arcs from its own sources while the others' contributions arrive on a side stream: one
    GPU's answer and iterations."""
    from ooc_graph.runtime.cluster import local_gpu_client
    client = local_gpu_client([0, 1])
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 13, 8, seed=4, directed=True, chunk_arcs=4096, progress=False)
    try:
        _worker_setting(client, "gpu.segment_bits", 6)
        for kw in ({"tol": 1e-10, "max_iter": 500}, {"mode": "graphalytics", "max_iter": 9}):
            one = ooc_graph.pagerank(G, device="gpu", **kw)
            two = ooc_graph.pagerank(G, gpus=[0, 1], **kw)
            assert (two.iterations, two.converged) == (one.iterations, one.converged), kw
            assert np.abs(one.values - two.values).sum() <= 1e-12, kw
    finally:
        _worker_setting(client, "gpu.segment_bits", config.Config().gpu.segment_bits)
        ooc_graph.runtime.release()


@pytest.mark.multigpu
def test_a_graph_too_big_for_one_gpu_budget_fits_two(tmp_path):
    """Per-GPU budgets that make one GPU stream every pass hold each half in memory on two."""
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 18, 16, seed=3, directed=True, chunk_arcs=1 << 16,
                                progress=False)
    # The engine caches decoded chunks (8 bytes an arc) in what is left of the budget after the
    # vertex state and a chunk in flight (a CSR would not fit a quarter of it: no room is kept for
    # one): room for 60% of the arcs.
    state = (5 * 8 + 1) * G.num_vertices
    budget = int(0.6 * 8 * G.num_arcs + state + 16 * 2 * (1 << 16))
    kw = dict(device_memory=budget, max_iter=6, tol=1e-300, raise_on_nonconvergence=False)
    one = ooc_graph.pagerank(G, device="gpu", **kw)
    two = ooc_graph.pagerank(G, gpus=[0, 1], **kw)
    assert np.abs(one.values - two.values).sum() <= 1e-12
    # Two GPUs copied each chunk once; one GPU copied what its cache could not hold at every pass.
    assert one.stats["bytes_to_device"] > 2 * two.stats["bytes_to_device"], (one.stats, two.stats)


@pytest.mark.multigpu
@pytest.mark.parametrize("seed", range(2))
def test_operator_algorithms_on_two_gpus(tmp_path, seed):
    """The edge_map algorithms on two GPUs (dask-cuda, NCCL) give the one-GPU answers, streamed too."""
    rng = np.random.default_rng(950 + seed)
    n = int(rng.integers(50, 1500))
    src, dst, w = random_edges(rng, n=n, m=6 * n, weighted=seed == 0)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=seed == 0, num_vertices=n,
                          interval_size=128, chunk_arcs=1024, progress=False)
    for algo, kw in OPERATOR_ALGORITHMS:
        kw = dict(kw, seed=seed) if algo.startswith("betweenness") else kw
        local = getattr(ooc_graph, algo)(G, device="gpu", **kw)
        for budget in (None, 6 * 8 * n + 3 * 1024 * 24 + 4096):
            dist = getattr(ooc_graph, algo)(G, gpus=[0, 1], device_memory=budget, **kw)
            assert dist.device == "gpu" and dist.stats["workers"] == 2
            for name, a in local.arrays().items():
                np.testing.assert_allclose(dist.arrays()[name], a, rtol=1e-9, atol=1e-13, err_msg=f"{algo} {name}")


@pytest.mark.multigpu
def test_weighted_betweenness_on_two_gpus(tmp_path):
    G = _positive_weights(tmp_path, 960, 800, directed=True, interval_size=128, chunk_arcs=1024)
    kw = dict(weight="weight", k=12, seed=1)
    local = ooc_graph.betweenness_centrality(G, device="gpu", **kw)
    for budget in (None, 10 * 8 * 800 + 3 * 1024 * 24 + 4096):
        dist = ooc_graph.betweenness_centrality(G, gpus=[0, 1], device_memory=budget, **kw)
        assert dist.device == "gpu" and dist.stats["workers"] == 2
        np.testing.assert_allclose(dist.values, local.values, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("algo", ["triangle_count", "lcc"])
def test_in_memory_algorithms_split_wedges_across_workers(client, tmp_path, algo):
    """Every worker holds the graph and checks every size-th block of rows (blocks of about equal
    wedges); the budget leaves the reference room for blocks of ~5,000 wedges."""
    from ooc_graph.algorithms.triangle_count import BYTES_PER_ARC, BYTES_PER_VERTEX
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, seed=2, progress=False)
    memory = BYTES_PER_ARC * G.num_arcs + BYTES_PER_VERTEX * G.num_vertices + (1 << 20) + 64 * 5000
    local = getattr(ooc_graph, algo)(G, device="cpu")
    assert local.stats["wedges"] > 6 * 5000
    dist = ooc_graph.submit(client, algo, G, workers=3, memory=memory).result(timeout=120)
    np.testing.assert_array_equal(local.arrays()[local._arrays[0]], dist.arrays()[dist._arrays[0]])
    assert dist.stats["workers"] == 3


def test_a_worker_does_not_reuse_a_graph_whose_store_was_replaced(tmp_path):
    from ooc_graph.runtime.worker_state import WorkerState
    worker = WorkerState()
    path = str(tmp_path / "g.h5")
    ooc_graph.convert(np.array([[0, 1], [1, 2]]), path, progress=False).close()
    g, state = worker.checkout(path)
    first = g.store_id
    worker.checkin(path, g, state)
    again, state = worker.checkout(path)
    assert again is g and g._h5 is None  # kept, caches and all; the untouched file not even reopened
    ooc_graph.pagerank(g, device="cpu").save("pr")  # the file changes but stays this graph: checked, and kept
    worker.checkin(path, g, state)
    again, state = worker.checkout(path)
    assert again is g and g._h5 is not None
    worker.checkin(path, g, state)
    ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 3]]), path, overwrite=True, progress=False).close()
    h, _ = worker.checkout(path)
    assert h is not g and h.store_id != first and h.num_arcs == 3 and g.closed
    h.close()


class _ThreadMesh:
    """The ranks of a job as threads of this process: allgather through a shared list."""

    def __init__(self, rank, slots, barrier):
        self.rank, self.size, self.slots, self.barrier, self.bytes_sent = rank, len(slots), slots, barrier, 0

    def allgather(self, payload):
        self.slots[self.rank] = bytes(payload)
        self.bytes_sent += len(self.slots[self.rank]) * (self.size - 1)
        self.barrier.wait()
        parts = list(self.slots)
        self.barrier.wait()
        return parts


def level_changes(rng, n, size, share):
    """A merged state, then each rank's copy after it relaxed some vertices to the next level."""
    import ooc_graph.runtime.host  # noqa: F401  (the import checks it needs no dask)
    base = np.where(rng.random(n) < 0.4, rng.integers(0, 3, n).astype(np.float64), np.inf)
    value = 3.0
    copies = []
    for _ in range(size):
        state, changed = base.copy(), np.zeros(n, np.uint8)
        hit = (rng.random(n) < share) & (base > value)
        state[hit], changed[hit] = value, 1
        copies.append((state, changed))
    expected = np.minimum.reduce([s for s, _ in copies]), np.maximum.reduce([c for _, c in copies])
    return copies, value, expected


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("share", [0.0, 0.001, 0.3])  # nothing, a few ids, or the bit flags
def test_merge_level_equals_merge_min(size, share):
    """A level's merge sends only flags (or the changed ids) and gives what merging the whole
    state does; a stop request of one rank travels with them to every rank."""
    import threading

    from ooc_graph.runtime.host import HostComm
    rng = np.random.default_rng(size * 10 + int(share * 1000))
    n = 5003
    copies, value, (want_state, want_changed) = level_changes(rng, n, size, share)
    slots, barrier = [None] * size, threading.Barrier(size)
    comms = [HostComm(_ThreadMesh(r, slots, barrier), [(0, n)] * size) for r in range(size)]
    sent = [0] * size
    stop = share > 0  # asked by the last rank only
    threads = [threading.Thread(target=lambda r: sent.__setitem__(
        r, comms[r].merge_level(*copies[r], value, stop and r == size - 1)), args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for state, changed in copies:
        np.testing.assert_array_equal(state, want_state)
        np.testing.assert_array_equal(changed, want_changed)
    assert max(sent) <= (size - 1) * (2 + max(n // 8 + 1, 8 * int(want_changed.sum())))
    assert [c.agreed_stop for c in comms] == [stop] * size


def test_gpus_without_a_gpu_say_so_first(tmp_path):
    """``gpus=[0, 1]`` on a machine without GPUs said "several GPUs need dask-cuda" (where
    dask-cuda was absent): the device is checked first. dask-cuda comes with the ``multigpu`` extra."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from pathlib import Path

    from ooc_graph.engine import gpu_available
    from ooc_graph.errors import DeviceError
    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(d.startswith("dask-cuda") for d in extras["multigpu"])
    if gpu_available():
        pytest.skip("CuPy sees a GPU here")
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False)
    for gpus in ([0, 1], "0,1", "all", 2):
        with pytest.raises(DeviceError, match=r"^gpus=.* but CuPy finds no CUDA device \(use workers="):
            ooc_graph.wcc(G, gpus=gpus)
    with pytest.raises(ParameterError, match="distinct non-negative device ids"):
        ooc_graph.wcc(G, gpus=[0, 0])


def test_a_store_the_workers_cannot_see_names_the_worker(client, tmp_path):
    """A store missing on the workers was reported as missing, with no word of which worker or
    why: now the worker, its host, and that every worker opens the store by its path."""
    from ooc_graph.errors import StoreError
    job = ooc_graph.submit(client, "wcc", str(tmp_path / "only-here.h5"), workers=2)
    with pytest.raises(StoreError) as err:
        job.result(timeout=120)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'only-here.h5'}: no such graph store on worker tcp://"), message
    assert any(w in message for w in job.spec.workers) and "\n" not in message
    assert "must be on a filesystem they all see" in message

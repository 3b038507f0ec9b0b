"""Whole traversals on one GPU (kernels/gpu_whole.cu: a BFS or a near-far min-propagation in one
cooperative kernel launch): the CPU's depths, distances and parents bit for bit, on random graphs,
hubs spread over the grid, both directions, near-far buckets of any width, and the edge cases.
Skipped where CuPy finds no device."""

import numpy as np
import pytest

import ooc_graph

from conftest import hub_edges, random_edges

pytestmark = pytest.mark.gpu


def _same(cpu, gpu, algo):
    for name, a in cpu.arrays().items():
        np.testing.assert_array_equal(gpu.arrays()[name], a, err_msg=f"{algo} {name}")


def _whole(r):
    """The call ran one whole traversal on the device, logged level by level (a tree found after
    it may take passes: zero weights)."""
    st = r.stats
    return (st["traversals"] == 1 and st["advances"] == st["bottom_up"] == 0
            and st["per_pass"][0]["kind"] == "traversal" and len(st["strategies"]) == r.iterations
            and all(s.endswith("/resident") for s in st["strategies"]))


@pytest.mark.parametrize("seed", range(16))
def test_random_graphs_match_the_cpu(tmp_path, configure, seed):
    rng = np.random.default_rng(7000 + seed)
    n = int(rng.integers(1, 4000))
    weighted = seed % 2 == 0
    if seed % 3 == 0:
        src, dst, w = hub_edges(rng, n=n, weighted=weighted)
        n += 3
    else:
        src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 10 * n)), weighted=weighted)
    G = ooc_graph.convert((src, dst) if w is None else (src, dst, w), tmp_path / "g.h5", num_vertices=n,
                          directed=seed % 4 < 2, progress=False)
    # hubs over the grid at once (a small threshold), or one warp each; buckets of several widths
    configure({"gpu.heavy_arcs": [4, 2048][seed % 2], "traversal.near_far_width": [1, 32, 128, 4096][seed % 4]})
    for source in {0, int(rng.integers(0, n)), n - 1}:
        for algo in ("bfs", "sssp"):
            cpu = getattr(ooc_graph, algo)(G, source, device="cpu")
            gpu = getattr(ooc_graph, algo)(G, source, device="gpu")
            _same(cpu, gpu, algo)
            assert _whole(gpu), gpu.stats
            if algo == "bfs":
                assert gpu.iterations == cpu.iterations
    G.close()


@pytest.mark.parametrize("bottom_up", [True, False])
def test_bfs_both_directions_give_one_tree(tmp_path, configure, bottom_up):
    """A hub reaching a third of the graph turns the BFS bottom-up (the in-CSR on the device); top-down
    only, the same depths and parents (the smallest vertex one level above)."""
    rng = np.random.default_rng(11)
    src, dst, _ = hub_edges(rng, n=50_000)
    G = ooc_graph.convert((src, dst), tmp_path / "h.h5", num_vertices=50_003, progress=False)
    configure({"traversal.bottom_up": bottom_up})
    cpu = ooc_graph.bfs(G, 0, device="cpu")
    gpu = ooc_graph.bfs(G, 0, device="gpu")
    _same(cpu, gpu, "bfs")
    assert _whole(gpu)
    G.close()


def test_near_far_without_buckets_and_constant_increments(tmp_path, configure):
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 60, 40, weighted=True, seed=3, progress=False)
    ref = ooc_graph.sssp(G, 7, device="cpu")
    for near_far in (True, False):
        configure({"traversal.near_far": near_far})
        r = ooc_graph.sssp(G, 7, device="gpu")
        _same(ref, r, "sssp")
        assert _whole(r)
    G.close()


@pytest.mark.parametrize("edges, n, source", [
    (np.zeros((0, 2), np.int64), 1, 0),                      # one vertex, no arc
    (np.zeros((0, 2), np.int64), 5, 3),                      # isolated vertices
    (np.array([[0, 0], [0, 0], [1, 1]]), 3, 0),               # self-loops, repeats
    (np.array([[0, 1], [1, 2], [3, 4]]), 6, 0),               # unreachable parts
    (np.array([[1, 0], [2, 0]]), 3, 0),                      # a source with no out-arc
])
def test_edge_cases(tmp_path, edges, n, source):
    for weighted in (False, True):
        w = np.arange(1, len(edges) + 1, dtype=np.float64) / 4 if weighted else None
        G = ooc_graph.convert((edges[:, 0], edges[:, 1]) if w is None else (edges[:, 0], edges[:, 1], w),
                              tmp_path / f"e{weighted}.h5", num_vertices=n, progress=False)
        for algo in ("bfs", "sssp"):
            _same(getattr(ooc_graph, algo)(G, source, device="cpu"), getattr(ooc_graph, algo)(G, source, device="gpu"),
                  algo)
        G.close()


def test_the_loop_and_the_whole_traversal_agree(tmp_path, configure):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 13, 8, weighted=True, seed=2, directed=True, progress=False)
    s = int(np.argmax(G.out_degree))
    whole = {a: getattr(ooc_graph, a)(G, s, device="gpu") for a in ("bfs", "sssp")}
    configure({"traversal.whole_traversal": False})
    for a, r in whole.items():
        loop = getattr(ooc_graph, a)(G, s, device="gpu")
        _same(loop, r, a)
        assert _whole(r) and not _whole(loop)
    G.close()


@pytest.mark.parametrize("directed", [True, False])
def test_zero_copy_rows_from_host_memory(tmp_path, directed):
    """A device budget that holds the vertex state, a quarter of the arcs and the whole traversal's
    scratch (where it lacks that, the level loop runs, over the same rows): the CSRs stay in
    page-locked host memory and the kernels read them in place; the same answers, within the
    budget, and the strategies say so."""
    import cupy as cp
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 16, 8, weighted=True, seed=5, directed=directed, progress=False)
    n, m = G.num_vertices, G.num_arcs
    budget = 41 * n + (m * 12) // 4 + 28 * n
    s = int(np.argmax(G.out_degree))
    pool = cp.get_default_memory_pool()
    for algo in ("bfs", "sssp"):
        cpu = getattr(ooc_graph, algo)(G, s, device="cpu")
        G.release()
        pool.free_all_blocks()
        base = pool.total_bytes()
        gpu = getattr(ooc_graph, algo)(G, s, device="gpu", device_memory=budget)
        assert pool.total_bytes() - base <= budget, (algo, pool.total_bytes() - base, budget)
        _same(cpu, gpu, algo)
        st = gpu.stats
        assert st["traversals"] == 1 and st["strategies"] and all(x.endswith("/zero-copy") for x in st["strategies"])
    G.close()

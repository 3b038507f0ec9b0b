"""The compiled CPU kernels (numba) against their NumPy reference and scipy.sparse.csgraph:
the same depths, parents, distances and labels bit for bit, on seeded random graphs and edge
cases, through whole compiled traversals and through the per-batch loop."""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import ooc_graph
from ooc_graph import UNREACHABLE
from ooc_graph import config
from ooc_graph.engine import Engine
from ooc_graph.kernels import cpu

from conftest import edge_array, random_degrees, random_edges

numba = pytest.importorskip("numba", reason="the compiled CPU kernels need numba (the 'cpu' extra)")

ARRAYS = {"bfs": ("depth", "parent"), "sssp": ("distance", "parent"), "wcc": ("labels",), "pagerank": ("values",)}


def _run(G, source, *, compiled: bool, whole: bool = True, memory=None):
    """Every algorithm's result arrays with the compiled kernels or the NumPy reference."""
    try:
        G.release()
        kw = dict(device="cpu", memory=memory)
        with config.set({"cpu.compiled": compiled, "traversal.whole_traversal": whole}):
            results = {"bfs": ooc_graph.bfs(G, source, **kw), "sssp": ooc_graph.sssp(G, source, **kw),
                       "wcc": ooc_graph.wcc(G, **kw), "pagerank": ooc_graph.pagerank(G, tol=1e-13, raise_on_nonconvergence=False, **kw)}
    finally:
        G.release()
    return results


def _same(a, b):
    for algo, names in ARRAYS.items():
        for name in names:
            x, y = getattr(a[algo], name), getattr(b[algo], name)
            if algo == "pagerank":  # sums in another order: the last bits may differ
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15)
            else:
                assert x.dtype == y.dtype
                np.testing.assert_array_equal(x, y, err_msg=f"{algo}.{name}")


def _check_scipy(G, source, r):
    """Depths, distances and components against csgraph on the store's own CSR."""
    n = G.num_vertices
    indptr, indices, w = G.csr("out")
    if n == 0:
        return
    ones = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n))
    hops = csgraph.shortest_path(ones, indices=source, unweighted=True)
    expect = np.full(n, UNREACHABLE, np.int64)
    expect[np.isfinite(hops)] = hops[np.isfinite(hops)]
    np.testing.assert_array_equal(r["bfs"].depth, expect)
    if w is None:
        np.testing.assert_array_equal(r["sssp"].distance, hops)
    else:
        # csgraph drops explicit zeros; shift weights so zero-weight arcs stay arcs, then compare
        # on graphs without zero weights only.
        if (w > 0).all():
            A = sp.csr_matrix((w.astype(np.float64), indices, indptr), shape=(n, n))
            np.testing.assert_allclose(r["sssp"].distance, csgraph.dijkstra(A, indices=source), rtol=1e-12)
    _, comp = csgraph.connected_components(ones, directed=True, connection="weak")
    smallest = np.full(comp.max() + 1, n)
    np.minimum.at(smallest, comp, np.arange(n))
    np.testing.assert_array_equal(r["wcc"].labels, smallest[comp])


@pytest.mark.parametrize("seed", range(24))
def test_compiled_equals_reference_on_random_graphs(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 300))
    directed, weighted = seed % 2 == 0, seed % 3 != 0
    src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 3 * n + 1)), weighted=weighted)
    if weighted and seed % 4 == 1:  # no zero weights: scipy's dijkstra then sees every arc
        w = w + 0.125
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=directed, num_vertices=n,
                          interval_size=[7, 64, None][seed % 3], chunk_arcs=[16, None][seed % 2], progress=False)
    source = int(rng.integers(0, n))
    ref = _run(G, source, compiled=False)
    whole = _run(G, source, compiled=True)
    small = 41 * n + 16_000  # the state and a few small chunks: streamed passes
    loop = _run(G, source, compiled=True, whole=False, memory=[small, None][seed % 2])
    _same(whole, ref)
    _same(loop, ref)
    _check_scipy(G, source, whole)
    # A whole traversal counts the levels a level-synchronous loop would take.
    reached = whole["bfs"].depth[whole["bfs"].depth != UNREACHABLE]
    assert whole["bfs"].stats["traversals"] == 1 and whole["bfs"].iterations == reached.max() + 1
    assert loop["bfs"].stats["traversals"] == 0


def test_zero_weight_plateaus_and_self_loops(tmp_path):
    """Vertices reached only over zero-weight arcs take the smallest resolved parent, layer by layer."""
    edges = np.array([[0, 1, 0.0], [1, 2, 0.0], [0, 3, 1.0], [3, 2, 0.0], [2, 2, 0.0], [4, 3, 0.0],
                      [2, 5, 0.5], [1, 5, 0.5], [5, 6, 0.0], [6, 5, 0.0]])
    G = ooc_graph.convert(edges, tmp_path / "z.h5", progress=False)
    ref, fast = _run(G, 0, compiled=False), _run(G, 0, compiled=True)
    _same(fast, ref)
    assert fast["sssp"].parent.tolist() == [-1, 0, 1, 0, -1, 1, 5]
    assert fast["sssp"].distance.tolist() == [0, 0, 0, 1, np.inf, 0.5, 0.5]


@pytest.mark.parametrize("case", ["empty", "one", "isolated", "loops", "unreachable", "big_ids"])
def test_edge_cases(tmp_path, case):
    rng = np.random.default_rng(7)
    kw = {}
    if case == "empty":
        edges, kw = np.zeros((0, 2), np.int64), {"num_vertices": 0}
    elif case == "one":
        edges, kw = np.zeros((0, 2), np.int64), {"num_vertices": 1}
    elif case == "isolated":
        edges, kw = np.array([[0, 1], [1, 2]]), {"num_vertices": 9}
    elif case == "loops":
        edges = np.array([[0, 0], [1, 1], [0, 1], [1, 0], [2, 2]])
    elif case == "unreachable":
        edges, kw = np.array([[1, 0], [2, 1], [3, 4], [5, 3]]), {"directed": True}
    else:
        src, dst, w = random_edges(rng, n=30, m=60, weighted=True, big_ids=True)
        edges = edge_array(src, dst, w)
    G = ooc_graph.convert(edges, tmp_path / f"{case}.h5", progress=False, **kw)
    if G.num_vertices == 0:
        ref, fast = _run_wcc_pr(G, False), _run_wcc_pr(G, True)
        assert ref == fast == ([], [])
        return
    source = int(G.labels[0]) if G.labels is not None else 0
    ref, fast = _run(G, source, compiled=False), _run(G, source, compiled=True)
    _same(fast, ref)
    if G.labels is None:
        _check_scipy(G, source, fast)


def _run_wcc_pr(G, compiled):
    with config.set({"cpu.compiled": compiled}):
        return (ooc_graph.wcc(G, device="cpu").labels.tolist(), ooc_graph.pagerank(G, device="cpu").values.tolist())


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_batch_operators_equal_reference(id_dtype):
    """Each compiled per-batch operator against its NumPy version, on 32- and 64-bit ids."""
    rng = np.random.default_rng(3)
    n, m = 500, 3000
    src, dst = rng.integers(0, n, m), np.sort(rng.integers(100, 400, m))
    order = np.lexsort((src, dst))
    src, dst, w = src[order], dst[order], rng.integers(0, 4, m) / 2.0
    batch = cpu.prepare(src, dst, w, [0], [0], [m], 100, 400, n)
    if id_dtype == np.int64:
        m64 = batch.matrix
        m64.indices, m64.indptr = m64.indices.astype(np.int64), m64.indptr.astype(np.int64)
    state0 = np.where(rng.random(n) < 0.3, rng.integers(0, 20, n) / 2.0, np.inf)
    frontier = np.flatnonzero(np.isfinite(state0))
    for plus in (None, 1.0, 0.0):
        out = []
        for compiled in (False, True):
            with config.set({"cpu.compiled": compiled}):
                # relax_min and hook_min to their fixed points (the compiled versions update in
                # place, so one call may go further than the reference's).
                state, changed, flag = state0.copy(), np.zeros(n, np.uint8), np.ones(1, np.uint8)
                while flag[0]:
                    flag[0] = 0
                    cpu.relax_min(batch, state, plus, changed, flag)
                parent = np.full(n, n, np.int64)
                cpu.tight_parent(batch, state, plus, parent, None)
                cpu.tight_parent(batch, state, plus, parent, parent < n)
                forest, joined = np.arange(n), np.ones(1, np.uint8)
                while joined[0]:
                    joined[0] = 0
                    cpu.hook_min(batch, forest, joined)
                    while not np.array_equal(forest[forest], forest):
                        forest = forest[forest]
                y = np.zeros(n)
                cpu.pull_sum(batch, np.arange(n) / n, y)
                merged, mchanged = state0.copy(), np.zeros(n, np.uint8)
                cpu.scatter_min(merged, frontier[::-1] % 50, state0[frontier] - 1, mchanged)
                out.append((state, changed, parent, forest, y, merged, mchanged))
        for a, b in zip(*out):
            np.testing.assert_array_equal(a, b)


def test_advance_min_equals_reference():
    rng = np.random.default_rng(4)
    n, m = 200, 1000
    A = sp.random(n, n, density=m / n**2, format="csr", random_state=5)
    w = rng.integers(0, 4, A.nnz) / 2.0
    frontier = rng.choice(n, 20, replace=False)
    state0 = np.full(n, np.inf)
    state0[frontier] = rng.integers(0, 5, 20)
    out = []
    for compiled in (False, True):
        with config.set({"cpu.compiled": compiled}):
            state, changed = state0.copy(), np.zeros(n, np.uint8)
            cpu.advance_min(A.indptr.astype(np.int64), A.indices, w, frontier, state, None, changed)
            out.append((state, changed))
    # The reference relaxes one level from the frontier's values; the compiled advance may carry
    # a value further within the call (Gauss-Seidel): never above the reference, and a fixed point
    # is reached either way (the engine loops until nothing changes).
    assert (out[1][0] <= out[0][0]).all() and (out[1][1] >= out[0][1]).all()


def test_pagerank_step_equals_reference():
    rng = np.random.default_rng(6)
    n = 1000
    y, x0, inv = rng.random(n), rng.random(n), np.where(rng.random(n) < 0.2, 0.0, rng.random(n))
    for p in (1.0 / n, rng.random(n) / n):
        out = []
        for compiled in (False, True):
            with config.set({"cpu.compiled": compiled}):
                x, contrib = x0.copy(), np.empty(n)
                sums = cpu.pagerank_step(y, x, p, inv, 0.85, 0.01, contrib)
                out.append((x, contrib, sums))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])
        np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-12)
        for compiled in (False, True):  # contrib=None: the same step, contributions not written
            with config.set({"cpu.compiled": compiled}):
                x = x0.copy()
                sums = cpu.pagerank_step(y, x, p, inv, 0.85, 0.01, None)
            np.testing.assert_array_equal(x, out[0][0])
            np.testing.assert_allclose(sums, out[0][2], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.float64, np.float32])
@pytest.mark.parametrize("n", [0, 1, 7, 30_001])
def test_inverse_degree_is_one_over_the_degree_in_float64_and_zero_where_it_dangles(dtype, n):
    """Float32 out-weights are divided as float64 (the GPU's inverse matches this bit for bit)."""
    degree = random_degrees(dtype, n)
    inv, dangling = cpu.inverse_degree(degree)
    live = degree != 0
    assert inv.dtype == np.float64 and inv.shape == (n,) and dangling == n - int(live.sum())
    np.testing.assert_array_equal(inv[live], [1.0 / float(d) for d in degree[live]])
    assert not inv[~live].any()


def test_without_numba_the_numpy_path_runs(tmp_path, monkeypatch):
    """numba is optional: where it cannot be imported the NumPy kernels run, with the same results."""
    import ooc_graph.kernels as kernels
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now fails
    for name in ("cpu_compiled", "_jit"):  # numba's njit comes through kernels/_jit.py
        monkeypatch.delitem(sys.modules, f"ooc_graph.kernels.{name}", raising=False)
        monkeypatch.delattr(kernels, name, raising=False)
    monkeypatch.setattr(cpu, "_compiled_module", None)
    assert cpu.compiled() is None and cpu.traverse_min(None, None, None, [0], None, 1.0) is None
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 30, 20, weighted=True, progress=False)
    r = ooc_graph.sssp(G, 0, device="cpu")
    assert r.stats["traversals"] == 0 and r.stats["advances"] + r.stats["passes"] > 0
    monkeypatch.setattr(cpu, "_compiled_module", None)
    monkeypatch.undo()
    G.release()
    fast = ooc_graph.sssp(G, 0, device="cpu")
    assert fast.stats["traversals"] == 1
    np.testing.assert_array_equal(fast.distance, r.distance)
    np.testing.assert_array_equal(fast.parent, r.parent)


def test_switched_off_by_environment(monkeypatch, configure):
    configure({"cpu.compiled": False})
    assert cpu.compiled() is None
    configure({"cpu.compiled": True})
    assert cpu.compiled() is not None


def test_deep_bfs_past_the_level_byte(tmp_path):
    """The unit-BFS marks levels modulo 255: a mesh deeper than that, with many tied parents,
    and a few chords back towards the source."""
    rng = np.random.default_rng(9)
    rows, cols = 330, 3
    v = np.arange(rows * cols).reshape(rows, cols)
    back = rng.integers(1, rows * cols, 20)  # chords towards the source: no shortcut
    src = np.concatenate([v[:-1].ravel(), v[:, :-1].ravel(), back])
    dst = np.concatenate([v[1:].ravel(), v[:, 1:].ravel(), rng.integers(0, back)])
    G = ooc_graph.convert((src, dst), tmp_path / "deep.h5", directed=True, progress=False)
    ref, fast = _run(G, 0, compiled=False), _run(G, 0, compiled=True)
    _same(fast, ref)
    _check_scipy(G, 0, fast)
    assert fast["bfs"].depth.max() > 300 and fast["bfs"].stats["traversals"] == 1


# -- the direction-optimising BFS with its tree (kernels.cpu.bfs_tree) -------------------------
def _skewed_edges(rng, n, m):
    """Arcs whose ends follow a power law (hubs, as in social graphs), with self-loops and repeats."""
    weight = 1.0 / np.arange(1, n + 1) ** 1.1
    weight = weight[rng.permutation(n)] / weight.sum()
    src, dst = rng.choice(n, m, p=weight), rng.choice(n, m, p=weight)
    k = max(1, m // 10)
    return np.concatenate([src, src[:k], np.arange(0, n, 7)]), np.concatenate([dst, dst[:k], np.arange(0, n, 7)])


def _seeded_graph(rng, seed, max_n, arcs_per_vertex):
    """(n, src, dst) as int64: below ``max_n`` vertices and ``arcs_per_vertex`` arcs per vertex,
    uniform (even seed) or skewed (odd) random arcs, undirected (each arc both ways) where the
    seed is a multiple of 3."""
    n = int(rng.integers(1, max_n))
    m = int(rng.integers(0, arcs_per_vertex * n))
    if seed % 2:
        src, dst = _skewed_edges(rng, n, m)
    else:
        src, dst, _ = random_edges(rng, n=n, m=m)
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    if seed % 3 == 0:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    return n, src, dst


def _csr(rows, cols, n, dtype):
    """CSR with each row sorted (as the store writes both of its CSRs), in ``dtype``."""
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr.astype(dtype), cols[order].astype(dtype)


def _tree_reference(n, src, dst, source):
    """Levels from csgraph, and parent[v] = the smallest u != v with an arc u->v one level above."""
    A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    hops = csgraph.shortest_path(A, indices=source, unweighted=True)
    tight = (src != dst) & np.isfinite(hops[src]) & (hops[src] + 1 == hops[dst])
    parent = np.full(n, n, np.int64)
    np.minimum.at(parent, dst[tight], src[tight])
    parent[parent == n] = -1
    parent[source] = -1
    levels = int(np.isfinite(hops).sum() and hops[np.isfinite(hops)].max() + 1)
    return hops, parent, levels


def _bfs_tree(n, src, dst, source, dtype=np.int32, bottom_up=True):
    indptr, indices = _csr(src, dst, n, dtype)
    calls = []

    def in_csr():
        calls.append(1)
        return _csr(dst, src, n, dtype)
    state = np.full(n, np.inf)
    state[source] = 0.0
    levels, arcs, parent = cpu.bfs_tree(indptr, indices, source, state, in_csr if bottom_up else None)
    return state, parent, levels, arcs, len(calls)


_BFS = ("bfs_alpha", "bfs_min_frontier", "bfs_branchy", "bfs_leave_bottom_up")
SETTINGS = {  # config cpu.bfs_alpha, bfs_min_frontier, bfs_branchy, bfs_leave_bottom_up
    "default": tuple(getattr(config.Config().cpu, name) for name in _BFS),
    "bottom-up": (2**40, 2**40, 0, 2**30),  # every level with arcs goes bottom-up, and stays
    "branchy": (1, 1, 0, 0),  # top-down with branches, bottom-up rarely
    "branch-free": (1, 1, 2**30, 0),
}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("seed", range(10))
def test_bfs_tree_equals_reference(configure, setting, seed):
    """Levels, smallest parents and level counts on uniform and skewed random graphs (self-loops,
    repeats, unreachable vertices), top-down, bottom-up and mixed, on 32- and 64-bit CSRs."""
    configure(cpu=dict(zip(_BFS, SETTINGS[setting])))
    rng = np.random.default_rng(500 + seed)
    n, src, dst = _seeded_graph(rng, seed, 3000, 12)
    for source in {0, int(rng.integers(0, n)), int(src[0]) if src.size else 0}:
        hops, parent, levels = _tree_reference(n, src, dst, source)
        for dtype in (np.int32, np.int64):
            for bottom_up in (True, False):
                state, got, got_levels, arcs, _ = _bfs_tree(n, src, dst, source, dtype, bottom_up)
                np.testing.assert_array_equal(state, hops)
                np.testing.assert_array_equal(got, parent)
                assert got_levels == levels and 0 <= arcs
                if not bottom_up:
                    assert arcs == np.isfinite(hops[src]).sum()  # top-down scans each reached row once


def test_bfs_tree_edge_cases():
    for n, src, dst in [(1, [], []), (1, [0], [0]), (5, [], []), (4, [0, 0, 0, 1], [1, 1, 1, 0]),
                        (3, [1, 2], [0, 0]), (6, [0, 1, 2, 3, 4], [1, 2, 3, 4, 5])]:
        src, dst = np.array(src, np.int64), np.array(dst, np.int64)
        for source in range(n):
            hops, parent, levels = _tree_reference(n, src, dst, source)
            state, got, got_levels, _, _ = _bfs_tree(n, src, dst, source)
            np.testing.assert_array_equal(state, hops)
            np.testing.assert_array_equal(got, parent)
            assert got_levels == levels


def test_bfs_tree_loads_the_in_csr_only_for_bottom_up_levels():
    rng = np.random.default_rng(11)
    n = 2000
    path = np.arange(n - 1)  # a path: every frontier one vertex
    *_, calls = _bfs_tree(n, np.concatenate([path, path + 1]), np.concatenate([path + 1, path]), 0)
    assert calls == 0
    src, dst = _skewed_edges(rng, n, 30 * n)  # a dense skewed graph: its widest levels go bottom-up
    hops, parent, _ = _tree_reference(n, src, dst, int(src[0]))
    state, got, _, arcs, calls = _bfs_tree(n, src, dst, int(src[0]))
    assert calls == 1 and arcs < src.size
    np.testing.assert_array_equal(got, parent)


def test_bfs_tree_takes_a_vouched_state_without_reading_it_first(monkeypatch):
    """``fresh=True`` (the engine's shortest_paths, whose callers have just made the state): the
    check that reads the whole state first is skipped, the tree the same as with it."""
    rng = np.random.default_rng(5)
    n = 400
    src, dst = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    indptr, indices = _csr(src, dst, n, np.int32)
    want = _tree_reference(n, src, dst, 7)
    fast = cpu.compiled()
    for module in (fast, fast.parallel()):
        monkeypatch.setattr(module, "fresh", lambda *a: pytest.fail("the vouched state was checked"))
    state = np.full(n, np.inf)
    state[7] = 0.0
    levels, _, parent = cpu.bfs_tree(indptr, indices, 7, state, lambda: _csr(dst, src, n, np.int32), fresh=True)
    np.testing.assert_array_equal(state, want[0])
    np.testing.assert_array_equal(parent, want[1])
    assert levels == want[2]


@pytest.mark.parametrize("ask", [2**63 - 1, -1])
def test_bfs_tree_writes_int_levels_the_conversion_then_finds(monkeypatch, ask):
    """``int_unreachable=``: the final pass writes int64 levels (BFS converts them next), and
    kernels.cpu.int_levels returns them without a pass of its own; asked for another value for
    unreached vertices, it swaps that in."""
    rng = np.random.default_rng(9)
    n = 300
    src, dst = rng.integers(0, n, 900), rng.integers(0, n, 900)
    indptr, indices = _csr(src, dst, n, np.int32)
    hops, parent_want, levels_want = _tree_reference(n, src, dst, 3)
    state = np.full(n, np.inf)
    state[3] = 0.0
    levels, _, parent = cpu.bfs_tree(indptr, indices, 3, state, lambda: _csr(dst, src, n, np.int32),
                                     int_unreachable=ask)
    assert levels == levels_want
    np.testing.assert_array_equal(parent, parent_want)
    fast = cpu.compiled()
    for module in (fast, fast.parallel()):
        monkeypatch.setattr(module, "int_levels", lambda *a: pytest.fail("converted twice"))
    unreachable = 2**63 - 1
    got = cpu.int_levels(state, unreachable)
    want = np.where(np.isfinite(hops), hops, 0).astype(np.int64)
    want[~np.isfinite(hops)] = unreachable
    np.testing.assert_array_equal(got, want)
    monkeypatch.undo()
    fresh = np.array([0.0, 2.0, np.inf])  # not written by bfs_tree: converted as before
    np.testing.assert_array_equal(cpu.int_levels(fresh, unreachable), [0, 2, unreachable])


def test_bfs_tree_declines_a_state_not_fresh():
    indptr, indices = _csr(np.array([0, 1]), np.array([1, 2]), 3, np.int32)
    state = np.array([0.0, 5.0, np.inf])
    assert cpu.bfs_tree(indptr, indices, 0, state) is None
    np.testing.assert_array_equal(state, [0.0, 5.0, np.inf])


@pytest.mark.parametrize("directed", [True, False])
def test_bfs_through_the_engine(tmp_path, monkeypatch, directed):
    """ooc_graph.bfs and sssp run the compiled tree (one traversal, the in-CSR loaded only where a
    level goes bottom-up, and not at all on an undirected graph, whose in-CSR is its out-CSR);
    without the in-CSR in the budget every level is top-down; results equal the NumPy path's."""
    rng = np.random.default_rng(12)
    n = 3000
    src, dst = _skewed_edges(rng, n, 20 * n)
    G = ooc_graph.convert((src, dst), tmp_path / "s.h5", directed=directed, num_vertices=n, progress=False)
    source = int(src[0])
    assert G.labels is None
    sides = []
    csr = Engine.csr

    def recording(self, side, **kw):
        sides.append(side)
        return csr(self, side, **kw)
    monkeypatch.setattr(Engine, "csr", recording)
    ref, fast = _run(G, source, compiled=False), _run(G, source, compiled=True)
    _same(fast, ref)
    _check_scipy(G, source, fast)
    assert fast["bfs"].stats["traversals"] == fast["sssp"].stats["traversals"] == 1
    assert ("in" in sides) == directed
    monkeypatch.setattr(Engine, "csr", lambda self, side, **kw: None if side == "in" else csr(self, side, **kw))
    G.release()
    top_down = ooc_graph.bfs(G, source, device="cpu")
    np.testing.assert_array_equal(top_down.depth, ref["bfs"].depth)
    np.testing.assert_array_equal(top_down.parent, ref["bfs"].parent)
    assert top_down.iterations == ref["bfs"].iterations


@pytest.mark.parametrize("seed", range(8))
def test_compiled_batches_are_the_argsort_batches(seed):
    """A chunk's CSR by destination from the compiled counting sort (kernels/cpu_batches.py) is
    NumPy's stable argsort's, array for array and dtype for dtype: several blocks of one or more
    destination intervals, weights or none, 32- or 64-bit ids, empty blocks and rows."""
    rng = np.random.default_rng(seed)
    size = int(rng.choice([16, 256, 65536]))
    n = int(rng.choice([5 * size, (1 << 31) + size])) if seed % 4 == 3 else 5 * size
    blocks = int(rng.integers(1, 6))
    lengths = rng.integers(0, 400, blocks)
    lengths[rng.integers(0, blocks)] = 0
    src_iv, dst_iv = rng.integers(0, n // size, blocks), rng.integers(2, 4, blocks)
    local = np.uint16 if size <= 65536 else np.uint32
    src_local = rng.integers(0, size, lengths.sum()).astype(local)
    dst_local = np.concatenate([np.sort(rng.integers(0, size, k)) for k in lengths]).astype(local)
    weight = None if seed % 2 else rng.random(lengths.sum()).astype(np.float32)
    args = (src_local, dst_local, weight, src_iv * size, dst_iv * size, lengths, 2 * size, 4 * size, n)
    from ooc_graph.kernels import cpu_batches
    with config.set({"cpu.compiled": False}):
        ref = cpu.prepare(*args)
    fast = cpu.prepare(*args)
    made = cpu_batches.csr_by_destination(*args[:-1], ref.matrix.indices.dtype)  # whatever the span
    for got in ((fast.matrix.indptr, fast.matrix.indices, fast.rows, fast.row_start, fast.weight), made):
        for a, b in zip(got, (ref.matrix.indptr, ref.matrix.indices, ref.rows, ref.row_start, ref.weight)):
            assert (a is None) == (b is None) and (a is None or (a.dtype == b.dtype and np.array_equal(a, b)))
    assert np.array_equal(fast.matrix.data, ref.matrix.data) and fast.matrix.shape == ref.matrix.shape


def test_a_chunk_with_a_destination_outside_its_range_is_sorted_by_numpy():
    """The counting sort counts only destinations inside [dst_lo, dst_hi) (it writes unchecked):
    one outside hands the chunk to the argsort, which takes any."""
    from ooc_graph.kernels import cpu_batches
    src, dst = np.array([1, 2, 3], np.uint16), np.array([0, 5, 9], np.uint16)
    assert cpu_batches.csr_by_destination(src, dst, None, [0], [0], [3], 0, 8, np.int32) is None
    batch = cpu.prepare(src, dst, None, [0], [0], [3], 0, 8, 20)
    assert batch.dst().tolist() == [0, 5, 9] and batch.matrix.indices.tolist() == [1, 2, 3]

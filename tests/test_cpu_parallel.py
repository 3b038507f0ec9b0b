"""The CPU kernels on numba's threads (kernels/cpu_parallel.py) against scipy.sparse.csgraph and
the serial compiled kernels: the same levels, smallest parents, distances, shortest-path trees and
component labels bit for bit, on seeded random graphs (uniform and skewed, self-loops, repeats,
unreachable vertices) and the edge cases, with every level and round forced onto the threads
(config ``cpu.whole_parallel_min_arcs`` and ``cpu.level_parallel_min_arcs`` 0 or small) and on
one thread. Races show as wrong answers on some seed; run with ``NUMBA_NUM_THREADS`` above the
cores to oversubscribe."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from ooc_graph import UNREACHABLE, config
from ooc_graph.kernels import cpu

from conftest import random_edges

numba = pytest.importorskip("numba", reason="the compiled CPU kernels need numba (pip install 'ooc-graph[cpu]')")

from test_cpu_kernels import _csr, _seeded_graph, _tree_reference  # noqa: E402

THREADS = sorted({1, numba.config.NUMBA_NUM_THREADS})
EDGE_CASES = [(1, [], []), (1, [0], [0]), (5, [], []), (4, [0, 0, 0, 1], [1, 1, 1, 0]), (3, [1, 2], [0, 0]),
              (6, [0, 1, 2, 3, 4], [1, 2, 3, 4, 5]), (5, [0, 0, 3], [0, 1, 4])]


@pytest.fixture(params=THREADS, ids=lambda t: f"{t}threads")
def threads(request, configure):
    """numba's threads for the test, every level and round on them where more than one."""
    configure(cpu={"whole_parallel_min_arcs": 0, "level_parallel_min_arcs": 16, "parallel_min_threads": 1})
    before = numba.get_num_threads()
    numba.set_num_threads(request.param)
    yield request.param
    numba.set_num_threads(before)


def _graph(seed, *, weighted=False):
    """(n, src, dst, w): uniform or skewed, a third undirected (each arc both ways)."""
    rng = np.random.default_rng(900 + seed)
    n, src, dst = _seeded_graph(rng, seed, 2500, 10)
    w = None
    if weighted:  # eighths (zeros included: plateaus) or arbitrary doubles (rounding)
        w = rng.integers(0, 40, src.size) / 8.0 if seed % 4 < 2 else rng.random(src.size) * 10
    return n, src, dst, w, rng


def _weighted_csr(src, dst, w, n, dtype):
    order = np.lexsort((dst, src))
    indptr, indices = _csr(src, dst, n, dtype)
    return indptr, indices, np.asarray(w, np.float64)[order]


# -- BFS, direction-optimising (kernels/cpu_bfs_parallel.py) ------------------------------------
SETTINGS = {"default": {},
            "bottom-up": dict(bfs_alpha=2**40, bfs_min_frontier=2**40, bfs_leave_bottom_up=2**30),
            "switching": dict(bfs_alpha=2, bfs_min_frontier=2**40, bfs_leave_bottom_up=1),
            "top-down": dict(bfs_alpha=1, bfs_min_frontier=1, bfs_leave_bottom_up=0)}


def _bfs(n, src, dst, source, dtype=np.int32):
    indptr, indices = _csr(src, dst, n, dtype)
    state = np.full(n, np.inf)
    state[source] = 0.0
    levels, _, parent = cpu.bfs_tree(indptr, indices, source, state, lambda: _csr(dst, src, n, dtype))
    return state, parent, levels


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("seed", range(6))
def test_bfs_equals_reference(threads, configure, setting, seed):
    configure(cpu=SETTINGS[setting])
    n, src, dst, _, rng = _graph(seed)
    for source in {0, int(rng.integers(0, n))}:
        hops, parent, levels = _tree_reference(n, src, dst, source)
        for dtype in (np.int32, np.int64):
            state, got, got_levels = _bfs(n, src, dst, source, dtype)
            np.testing.assert_array_equal(state, hops)
            np.testing.assert_array_equal(got, parent)
            assert got_levels == levels


def _blobs_on_a_path(rng, blobs=3, k=300, degree=12, path=10):
    """Dense random blobs joined by paths, undirected: a BFS from the first goes bottom-up in each
    blob and top-down along each path, so it enters bottom-up levels again and again."""
    src, dst, base = [], [], 0
    for b in range(blobs):
        src.append(rng.integers(0, k, k * degree) + base)
        dst.append(rng.integers(0, k, k * degree) + base)
        if b < blobs - 1:
            p = np.arange(base + k, base + k + path)
            src.append(np.r_[base + k - 1, p])
            dst.append(np.r_[p, base + k + path])
        base += k + path
    src, dst = np.concatenate(src), np.concatenate(dst)
    return base, np.r_[src, dst], np.r_[dst, src]


@pytest.mark.parametrize("seed", range(3))
def test_bfs_enters_bottom_up_again(threads, configure, seed):
    """From a blob at either end the levels go bottom-up three times (checked by replaying the
    kernel's rule in Python on these seeds): the vertices seen before each bottom-up stretch are
    rebuilt from the queue, those with no in-arc are skipped once met, and the answer is the
    reference's; the third source has no in-arc at all."""
    configure(cpu=dict(bfs_alpha=8, bfs_min_frontier=2**40, bfs_leave_bottom_up=1))
    n, src, dst = _blobs_on_a_path(np.random.default_rng(seed))
    dead = np.setdiff1d(np.arange(n), dst)  # no in-arc: never reached, skipped by later levels
    src, dst = np.r_[src, dead[:1]], np.r_[dst, dead[:1]]  # one of them with a self-loop
    for source in (0, n - 11, int(dead[-1])):  # the first blob's, the last's, one with no in-arc
        hops, parent, levels = _tree_reference(n, src, dst, source)
        state, got, got_levels = _bfs(n, src, dst, source)
        np.testing.assert_array_equal(state, hops)
        np.testing.assert_array_equal(got, parent)
        assert got_levels == levels


def test_bfs_edge_cases(threads):
    for n, src, dst in EDGE_CASES:
        src, dst = np.array(src, np.int64), np.array(dst, np.int64)
        for source in range(n):
            hops, parent, levels = _tree_reference(n, src, dst, source)
            state, got, got_levels = _bfs(n, src, dst, source)
            np.testing.assert_array_equal(state, hops)
            np.testing.assert_array_equal(got, parent)
            assert got_levels == levels


# -- SSSP by delta-stepping (kernels/cpu_sssp*.py) ----------------------------------------------
def _sssp(indptr, indices, w, plus, frontier, state, *, tree=True):
    """Distances and the tree (traverse_min, then tree_parents), as the engine runs them."""
    state = state.copy()
    parent = None
    if tree:
        parent = np.full(state.size, state.size, np.int64)
        parent[frontier[0]] = frontier[0]
    cpu.traverse_min(indptr, indices, w, frontier, state, plus, parent)
    if tree:
        parent = cpu.tree_parents(indptr, indices, w, state, plus, int(frontier[0]), parent)
    return state, parent


def _dijkstra(*args, **kw):
    """:func:`_sssp` by Dijkstra on the calling thread (what delta-stepping is checked against)."""
    with config.set(cpu={"delta_stepping": False, "whole_parallel_min_arcs": 2**62}):
        return _sssp(*args, **kw)


def _scipy_distances(n, src, dst, w, source):
    """csgraph's Dijkstra over the lightest of each repeated arc (positive weights)."""
    order = np.lexsort((w, dst, src))
    s, d, ws = src[order], dst[order], w[order]
    first = np.ones(s.size, bool)
    first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    A = sp.csr_matrix((ws[first], (s[first], d[first])), shape=(n, n))
    return csgraph.dijkstra(A, indices=source)


@pytest.mark.parametrize("width", [0.25, 2.0, 1e9])
@pytest.mark.parametrize("seed", range(8))
def test_sssp_equals_dijkstra_and_scipy(threads, configure, width, seed):
    """Single-source distances (scipy's, exactly) and trees (the serial Dijkstra's), with zero
    weights, rounding, and buckets narrow, typical and one bucket for everything."""
    configure(cpu={"delta_width": width})
    n, src, dst, w, rng = _graph(seed, weighted=True)
    for dtype in (np.int32, np.int64):
        indptr, indices, ws = _weighted_csr(src, dst, w, n, dtype)
        source = int(rng.integers(0, n))
        state = np.full(n, np.inf)
        state[source] = 0.0
        frontier = np.array([source])
        dist, parent = _sssp(indptr, indices, ws, None, frontier, state)
        ref_dist, ref_parent = _dijkstra(indptr, indices, ws, None, frontier, state)
        np.testing.assert_array_equal(dist, ref_dist)
        np.testing.assert_array_equal(parent, ref_parent)
        if (w > 0).all():
            np.testing.assert_allclose(dist, _scipy_distances(n, src, dst, w, source), rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_propagate_min_from_many_sources(threads, configure, seed):
    """Several frontier vertices with different values, arc weights or a constant increment (the
    engine's propagate_min; no tree)."""
    n, src, dst, w, rng = _graph(seed, weighted=True)
    indptr, indices, ws = _weighted_csr(src, dst, w, n, np.int32)
    frontier = np.unique(rng.integers(0, n, max(1, n // 50)))
    state = np.full(n, np.inf)
    state[frontier] = rng.integers(0, 20, frontier.size) / 4.0
    for weights, plus in ((ws, None), (None, 1.5), (None, 0.0)):
        got, _ = _sssp(indptr, indices, weights, plus, frontier, state, tree=False)
        ref, _ = _dijkstra(indptr, indices, weights, plus, frontier, state, tree=False)
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("width", [0.01, 2.0])
def test_buckets_narrower_than_the_values_spacing(threads, configure, width):
    """Values near 1e17 (16 apart), where a bucket's bound rounds to its lowest value plus one ulp
    and a heavy arc's sum can fall below it: the bucket then goes on (it lost those vertices)."""
    configure(cpu={"delta_width": width})
    rng = np.random.default_rng(7)
    for _ in range(6):
        n = int(rng.integers(2, 400))
        src, dst = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
        indptr, indices, ws = _weighted_csr(src, dst, rng.integers(0, 64, src.size) * 1.0, n, np.int32)
        frontier = np.unique(rng.integers(0, n, 3))
        state = np.full(n, np.inf)
        state[frontier] = 1e17 + rng.integers(0, 4, frontier.size) * 16
        got, _ = _sssp(indptr, indices, ws, None, frontier, state, tree=False)
        np.testing.assert_array_equal(got, _dijkstra(indptr, indices, ws, None, frontier, state, tree=False)[0])


def test_sssp_edge_cases(threads, configure):
    for n, src, dst in EDGE_CASES:
        src, dst = np.array(src, np.int64), np.array(dst, np.int64)
        indptr, indices, ws = _weighted_csr(src, dst, np.arange(src.size) % 2 * 1.5, n, np.int32)
        for source in range(n):
            state = np.full(n, np.inf)
            state[source] = 0.0
            args = (indptr, indices, ws, None, np.array([source]), state)
            for got, ref in zip(_sssp(*args), _dijkstra(*args)):
                np.testing.assert_array_equal(got, ref)


# -- components by Afforest (kernels/cpu_components.py) -----------------------------------------
def _weak_labels(n, src, dst):
    """Each vertex's smallest vertex of its weak component (scipy)."""
    A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    _, label = csgraph.connected_components(A, directed=True, connection="weak")
    smallest = np.full(label.max() + 1 if n else 0, n, np.int64)
    np.minimum.at(smallest, label, np.arange(n))
    return smallest[label]


@pytest.mark.parametrize("seed", range(8))
def test_components_equal_scipy(threads, configure, seed):
    """With and without the in-CSR (directed) and on an undirected graph's symmetric CSR, also with
    sparse graphs of many small components and no sampling rounds."""
    n, src, dst, _, rng = _graph(seed)
    if seed % 4 == 3:  # many components
        keep = rng.random(src.size) < 0.1
        src, dst = src[keep], dst[keep]
    expect = _weak_labels(n, src, dst)
    both_src, both_dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    for rounds in (0, 2):
        configure(cpu={"afforest_rounds": rounds})
        for dtype in (np.int32, np.int64):
            ip, ix = _csr(src, dst, n, dtype)
            for in_csr in (_csr(dst, src, n, dtype), None):
                root, arcs = cpu.components(ip, ix, in_csr, False)
                np.testing.assert_array_equal(root, expect)
                assert root.dtype == np.int64 and arcs == src.size * (1 if in_csr is None else 2)
            sym = _csr(both_src, both_dst, n, dtype)
            np.testing.assert_array_equal(cpu.components(*sym, None, True)[0], expect)


def test_components_edge_cases(threads):
    for n, src, dst in EDGE_CASES + [(0, [], [])]:
        src, dst = np.array(src, np.int64), np.array(dst, np.int64)
        ip, ix = _csr(src, dst, n, np.int32)
        root, _ = cpu.components(ip, ix, _csr(dst, src, n, np.int32), False)
        np.testing.assert_array_equal(root, _weak_labels(n, src, dst) if n else [])


@pytest.mark.parametrize("size", [0, 1, 4095, 4097, 100_003])
def test_astype_converts_on_the_threads_as_numpy_does(threads, size):
    """The CSR conversions (kernels.cpu.astype): float32 weights widened, int64 offsets narrowed,
    int32 ids widened, each NumPy's astype exactly; the same dtype comes back as it is."""
    rng = np.random.default_rng(size)
    for a, dtype in ((rng.random(size, dtype=np.float32) * 255, np.float64),
                     (rng.integers(0, 2**31 - 1, size), np.int32),
                     (rng.integers(-2**31, 2**31 - 1, size).astype(np.int32), np.int64)):
        out = cpu.astype(a, dtype)
        assert out.dtype == dtype and out.shape == a.shape
        np.testing.assert_array_equal(out, a.astype(dtype))
        assert cpu.astype(out, dtype) is out


# -- PageRank's pull and step (kernels/cpu_pull.py) --------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_pull_rows_equal_scipy(threads, seed):
    """Each row summed in CSR order: scipy's product bit for bit, on any range of rows."""
    n, src, dst, _, rng = _graph(seed)
    x = rng.random(n)
    ip, ix = _csr(dst, src, n, np.int32)  # the in-CSR
    A = sp.csr_matrix((np.ones(ix.size), ix.astype(np.int64), ip.astype(np.int64)), shape=(n, n))
    expect = A @ x
    for lo, hi in ((0, n), (n // 3, n), (0, n // 2), (n // 2, n // 2)):
        out = np.full(n, -1.0)
        assert cpu.pull_rows(ip, ix, x, out, lo, hi)
        np.testing.assert_array_equal(out[lo:hi], expect[lo:hi])
        assert (out[:lo] == -1).all() and (out[hi:] == -1).all()


def test_pagerank_step_the_same_on_any_threads():
    """The step's sums by blocks: bit for bit the same on one thread and on all, and within
    rounding of the serial kernel's."""
    from ooc_graph.kernels import cpu_pull
    rng = np.random.default_rng(3)
    n = 3 * cpu_pull.BLOCK + 17
    y, x0 = rng.random(n), rng.random(n) / n
    inv = np.where(rng.random(n) < 0.2, 0.0, 1.0 / rng.integers(1, 9, n))
    results = []
    for t in THREADS:
        numba.set_num_threads(t)
        x, contrib = x0.copy(), np.empty(n)
        sums = cpu_pull.pagerank_step(y, x, np.zeros(0), 1.0 / n, inv, 0.85, 0.1, contrib, True)
        results.append((sums, x, contrib))
    numba.set_num_threads(max(THREADS))
    for sums, x, contrib in results[1:]:
        assert sums == results[0][0]
        np.testing.assert_array_equal(x, results[0][1])
        np.testing.assert_array_equal(contrib, results[0][2])
    new = 0.85 * (y + 0.1 / n) + 0.15 / n
    np.testing.assert_allclose(results[0][1], new, rtol=1e-15)
    np.testing.assert_allclose(results[0][0], (np.abs(new - x0).sum(), new[inv == 0].sum()), rtol=1e-12)


# -- through the engine -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_whole_calls_on_threads_equal_the_reference(tmp_path, threads, seed):
    """bfs, sssp, wcc and pagerank with every whole kernel on numba's threads: the NumPy reference's
    answers (integers bit for bit, PageRank within rounding) and scipy's."""
    import ooc_graph
    from test_cpu_kernels import _check_scipy, _run, _same
    rng = np.random.default_rng(40 + seed)
    n = int(rng.integers(200, 1500))
    src, dst, w = random_edges(rng, n=n, m=8 * n, weighted=seed != 1)
    G = ooc_graph.convert((src, dst) if w is None else (src, dst, w + 0.125 * (seed == 2)), tmp_path / "g.h5",
                          directed=seed != 0, num_vertices=n, progress=False)
    source = int(src[0])
    with config.set(cpu={"whole_pull": True}):  # PageRank's pull over the in-CSR too
        fast = _run(G, source, compiled=True)
    with config.set(cpu={"whole_parallel_min_arcs": 2**62}):
        ref = _run(G, source, compiled=False)
    _same(fast, ref)
    _check_scipy(G, source, fast)
    assert fast["wcc"].stats["traversals"] == 1 and fast["bfs"].stats["traversals"] == 1
    G.close()


def test_whole_array_passes_on_threads_equal_the_serial_ones(threads):
    """kernels/cpu_fill.py: the fresh state's fill, the freshness check and levels to int64 on
    numba's threads give the serial kernels' answers, ranges of every size around its chunk."""
    from ooc_graph.kernels import cpu_compiled, cpu_fill
    rng = np.random.default_rng(5)
    for n in (1, 5, cpu_fill.CHUNK - 1, cpu_fill.CHUNK + 3, 3 * cpu_fill.CHUNK):
        state = cpu.full(n, np.inf)
        assert state.dtype == np.float64 and np.array_equal(state, np.full(n, np.inf))
        frontier = np.unique(rng.integers(0, n, 3))
        state[frontier] = 0.0
        assert cpu_fill.fresh(state, frontier) and cpu_compiled.fresh(state, frontier)
        for v in (int(rng.integers(0, n)), n - 1):
            bad = state.copy()
            bad[v] = 1.0 if bad[v] == np.inf else np.inf
            assert not cpu_fill.fresh(bad, frontier) and not cpu_compiled.fresh(bad, frontier)
        levels = np.where(rng.random(n) < 0.3, np.inf, rng.integers(0, 50, n).astype(np.float64))
        a, b = levels.copy(), levels.copy()
        cpu_fill.int_levels(a, np.int64(UNREACHABLE))
        cpu_compiled.int_levels(b, np.int64(UNREACHABLE))
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
        assert np.array_equal(cpu.int_levels(levels.copy(), UNREACHABLE), b.view(np.int64))
        ids = rng.integers(0, 2**31 - 1, n).astype(np.int32)
        wide = np.empty(n, np.int64)
        cpu_fill.widen(ids, wide)
        assert np.array_equal(wide, ids.astype(np.int64))


# -- one thread compiles none of the parallel kernels -------------------------------------------
_SERIAL_CALLS = r"""
import sys
import numpy as np
from numba.core.dispatcher import Dispatcher
from ooc_graph import config
from ooc_graph.kernels import cpu

config.update(cpu={"whole_parallel_min_arcs": 0, "whole_pull": True})  # whole kernels even here
rng = np.random.default_rng(5)
n = 300
src, dst = rng.integers(0, n, 8 * n), rng.integers(0, n, 8 * n)
order = np.lexsort((dst, src))
src, dst, w = src[order], dst[order], rng.random(src.size)
indptr = np.searchsorted(src, np.arange(n + 1)).astype(np.int32)
indices = dst.astype(np.int32)
state = np.full(n, np.inf)
state[0] = 0.0
parent = np.full(n, n, np.int64)
parent[0] = 0
cpu.traverse_min(indptr, indices, w, np.array([0]), state, None, parent)  # SSSP: delta-stepping
cpu.components(indptr, indices, (indptr, indices), False)
cpu.pull_rows(indptr, indices, rng.random(n), np.empty(n), 0, n)
state = np.full(n, np.inf)
state[0] = 0.0
cpu.bfs_tree(indptr, indices, 0, state, lambda: (indptr, indices))
kernels = {f"{m.__name__}.{k}": d for m in list(sys.modules.values()) if m.__name__.startswith("ooc_graph.kernels")
           for k, d in vars(m).items() if isinstance(d, Dispatcher)}
print("compiled", sorted(k for k, d in kernels.items() if d.overloads))
print("parallel", sorted(k for k, d in kernels.items() if d.overloads and (d.targetoptions.get("parallel")
                                                                         or k.endswith("_parallel"))))
"""


def test_one_thread_compiles_no_parallel_kernel(tmp_path):
    """numba types and compiles every function a compiled function calls, branch taken or not, and
    parallel=True kernels compile slowly: a whole kernel's one entry used to compile the whole
    parallel machinery for a call on one thread (a cold cache's first SSSP: 35 s on the 2-core
    development machine, 13 with a serial entry). A fresh process on one thread with an empty numba
    cache (so that every callee compiles, none is loaded) runs SSSP, WCC, PageRank's pull and BFS:
    no parallel kernel, nor a ``*_parallel`` entry, may have compiled."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _SERIAL_CALLS], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    for entry in ("delta_stepping_serial", "components_serial", "pull_rows_serial", "bfs_tree"):
        assert entry in lines["compiled"]  # the serial entries compiled here (the cache was empty)
    assert lines["parallel"] == "[]"


def test_pagerank_pulls_over_the_in_csr_where_the_pull_runs_on_threads(threads, tmp_path):
    """By default PageRank pulls over the whole in-CSR where that pull runs on numba's threads (it
    reads the in-CSR, not the chunks), and over the cached chunks on one thread; config
    cpu.whole_pull takes the in-CSR on one thread too. Same iterations and values either way."""
    import ooc_graph
    assert cpu.whole_pull(1 << 20) == (threads > 1)
    with config.set(cpu={"whole_pull": True}):
        assert cpu.whole_pull(1)
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 9, 8, seed=2, directed=True, chunk_arcs=512, progress=False)
    r = ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=500)
    csr_bytes = 8 * (G.num_vertices + 1) + G.num_arcs * G.id_dtype.itemsize
    assert (r.bytes_read == csr_bytes) == (threads > 1)
    G.release()
    with config.set(cpu={"whole_pull": False}, traversal={"whole_traversal": False}):
        chunks = ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=500)
    assert chunks.iterations == r.iterations and np.abs(chunks.values - r.values).max() <= 1e-15
    G.close()


def test_the_sample_sort_is_numpys():
    """Afforest's sample of component ids is sorted by a Shell sort (numba's own sort took 1.5-2 s
    of a one-thread WCC's first compile): NumPy's order, on any lengths and repeats."""
    from ooc_graph.kernels.cpu_components import _shell_sort
    rng = np.random.default_rng(1)
    for dtype in (np.int32, np.int64):
        for n in (0, 1, 2, 5, 1024, 3000):
            a = rng.integers(0, 50 if n % 2 else 2**31 - 1, n).astype(dtype)
            b = a.copy()
            _shell_sort(b)
            assert np.array_equal(b, np.sort(a))

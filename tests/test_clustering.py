"""Triangle counting and the local clustering coefficient against networkx (and, for directed
graphs, a slow and obvious implementation of the LDBC definition) on many seeded random graphs
and the edge cases, and the compiled kernels (CPU and GPU) against the array code; the LDBC
outputs are checked in test_ldbc.py."""

import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.algorithms import _wedges
from ooc_graph.errors import ParameterError
from ooc_graph.kernels import cpu as cpu_kernels

from conftest import edge_array, nx_graph, random_edges

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def reference_lcc(H):
    """LDBC Graphalytics LCC, literally: neighbours over arcs either way, arcs among them counted."""
    out = {}
    for v in H:
        nbrs = (set(H.successors(v)) | set(H.predecessors(v)) if H.is_directed() else set(H[v])) - {v}
        d = len(nbrs)
        arcs = sum(1 for u in nbrs for w in nbrs if u != w and H.has_edge(u, w))
        out[v] = arcs / (d * (d - 1)) if d > 1 else 0.0
    return out


def _random(tmp_path, seed, *, directed, big_ids=False, dedupe=True):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 6 * n + 1))
    src, dst, w = random_edges(rng, n=n, m=m, weighted=seed % 3 == 0, big_ids=big_ids)
    nodes = None if not big_ids else np.unique(np.concatenate([src, dst])).tolist()
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / f"g{seed}.h5", directed=directed,
                          num_vertices=None if big_ids else n, dedupe=dedupe, interval_size=[3, 16, None][seed % 3],
                          chunk_arcs=[1, 7, None][seed % 3], progress=False)
    return G, nx_graph(src, dst, w, directed=directed, n=None if big_ids else n, nodes=nodes)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(52))
def test_random_graphs(tmp_path, monkeypatch, configure, seed, device):
    # Tiny wedge blocks on some seeds, there the CPU runs the reference (no compiled kernels): the
    # block loop is exercised, the answer must not change.
    small = seed % 4 == 1
    configure({"cpu.compiled": not small})
    configure({"algorithms.min_block_wedges": 1 if small else config.Config().algorithms.min_block_wedges})
    configure({"algorithms.max_block_wedges": [1, 3, 64, 1 << 24][seed % 4]})
    directed = seed % 2 == 0
    G, H = _random(tmp_path, seed, directed=directed, big_ids=seed % 5 == 4)
    r = ooc_graph.lcc(G, device=device)
    ref = reference_lcc(H)
    got = r.to_dict()
    assert got.keys() == ref.keys()
    for v in ref:
        assert got[v] == pytest.approx(ref[v], rel=1e-12, abs=0), v
    if not directed:
        assert got == pytest.approx(nx.clustering(H), rel=1e-12)
        t = ooc_graph.triangle_count(G, device=device)
        assert t.to_dict() == nx.triangles(H)
        assert t.total == sum(nx.triangles(H).values()) // 3
        assert t.counts.dtype == np.int64 and r.values.dtype == np.float64
    else:
        with pytest.raises(ParameterError, match="needs an undirected graph"):
            ooc_graph.triangle_count(G, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_repeated_edges_kept_in_the_store_count_once(tmp_path, device):
    for seed in range(6):
        G, H = _random(tmp_path, 100 + seed, directed=seed % 2 == 0, dedupe=False)
        assert ooc_graph.lcc(G, device=device).to_dict() == pytest.approx(reference_lcc(H), rel=1e-12)
        if not G.directed:
            assert ooc_graph.triangle_count(G, device=device).to_dict() == nx.triangles(H)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_cases(tmp_path, device):
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", directed=False, progress=False)
    assert ooc_graph.triangle_count(G, device=device).counts.size == 0
    assert ooc_graph.lcc(G, device=device).values.size == 0
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "one.h5", num_vertices=1, directed=False,
                          progress=False)
    assert ooc_graph.triangle_count(G, device=device).counts.tolist() == [0]
    assert ooc_graph.lcc(G, device=device).values.tolist() == [0.0]
    # Self-loops only, and a triangle with loops, repeats and an isolated vertex.
    G = ooc_graph.convert(np.array([[0, 0], [1, 1]]), tmp_path / "loops.h5", directed=False, progress=False)
    assert ooc_graph.triangle_count(G, device=device).counts.tolist() == [0, 0]
    edges = np.array([[0, 1], [1, 2], [2, 0], [0, 0], [1, 0], [2, 2]])
    G = ooc_graph.convert(edges, tmp_path / "tri.h5", directed=False, num_vertices=4, dedupe=False, progress=False)
    assert ooc_graph.triangle_count(G, device=device).counts.tolist() == [1, 1, 1, 0]
    assert ooc_graph.lcc(G, device=device).values.tolist() == [1.0, 1.0, 1.0, 0.0]
    # Directed: a reciprocated arc counts twice among the neighbours of the third vertex.
    G = ooc_graph.convert(np.array([[0, 1], [1, 0], [0, 2], [2, 1]]), tmp_path / "d.h5", progress=False)
    assert ooc_graph.lcc(G, device=device).values.tolist() == [0.5, 0.5, 1.0]


def test_string_ids_and_results(tmp_path):
    H = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    G = ooc_graph.convert(H, tmp_path / "s.h5", progress=False)
    t = ooc_graph.triangle_count(G, device="cpu")
    assert t.to_dict() == {"a": 1, "b": 1, "c": 1, "d": 0}
    assert t.to_pandas()["counts"].tolist() == [1, 1, 1, 0]
    assert ooc_graph.lcc(G, device="cpu", store=True).to_dict() == pytest.approx(nx.clustering(H))
    assert G.load_result("lcc")["attrs"]["algorithm"] == "lcc"


def test_budget_refused_before_reading(tmp_path):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, seed=1, progress=False)
    with pytest.raises(ParameterError, match=r"lcc holds the graph in memory and needs about .* memory=1.0 MiB "
                                             r"is below it \(give memory='\d+MB' or more\)"):
        ooc_graph.lcc(G, device="cpu", memory="1MiB")
    with pytest.raises(ParameterError, match="triangle_count holds the graph in memory"):
        ooc_graph.triangle_count(G, device="cpu", memory="1MiB")


@pytest.mark.parametrize("device", DEVICES)
def test_rmat_against_networkx(tmp_path, device):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, seed=3, progress=False)
    indptr, indices, _ = G.csr("out")
    H = nx.Graph()
    H.add_nodes_from(range(G.num_vertices))
    H.add_edges_from(zip(np.repeat(np.arange(G.num_vertices), np.diff(indptr)).tolist(), indices.tolist()))
    t = ooc_graph.triangle_count(G, device=device)
    triangles, clustering = nx.triangles(H), nx.clustering(H)
    assert t.counts.tolist() == [triangles[v] for v in range(G.num_vertices)] and t.total > 1000
    assert t.stats["wedges"] > 0 and t.stats["bytes_read"] > 0 and t.device == device
    np.testing.assert_allclose(ooc_graph.lcc(G, device=device).values,
                               [clustering[v] for v in range(G.num_vertices)], rtol=1e-12)


def test_call_lets_go_of_the_store(tmp_path):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 6, 4, seed=1, progress=False)
    for algo in (ooc_graph.triangle_count, ooc_graph.lcc, ooc_graph.louvain):
        algo(G, device="cpu")
        assert G._h5 is None  # detached: other processes' saves need not wait; the next read reopens
    assert ooc_graph.lcc(G, device="cpu").values.shape == (64,)


def _kernel_cases():
    """``(n, src, dst)``: seeded random graphs (self-loops, repeats, one-way and two-way arcs,
    isolated vertices) and the edge cases: empty, one vertex, loops only, a clique, stars."""
    cases = [(0, [], []), (1, [], []), (1, [0], [0]), (3, [0, 0, 1], [1, 1, 1]), (4, [0, 1, 2], [1, 2, 0])]
    for k in (3, 4, 17, 40):
        src, dst = np.nonzero(~np.eye(k, dtype=bool))  # a clique, both directions
        cases.append((k, src, dst))
    leaves = np.arange(1, 60)
    cases.append((60, np.zeros(59, np.int64), leaves))  # a star: no triangle
    cases.append((62, np.concatenate([np.zeros(59, np.int64), leaves[:-1]]),
                  np.concatenate([leaves, leaves[1:]])))  # a star with a rim: a fan
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        n = int(rng.integers(2, 90))
        src, dst, _ = random_edges(rng, n=n, m=int(rng.integers(0, 10 * n)))
        if seed % 3 == 0:  # an undirected store: both directions
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        if seed % 4 == 0:  # a hub joined to most vertices
            hub = rng.choice(n, size=n // 2 + 1, replace=False)
            src, dst = np.concatenate([src, np.zeros(hub.size, np.int64)]), np.concatenate([dst, hub])
        cases.append((n + seed % 5, src, dst))  # and some isolated vertices
    return [(n, np.asarray(s, np.int64), np.asarray(d, np.int64)) for n, s, d in cases]


def _backend(device):
    if device == "gpu":
        import cupy
        from ooc_graph.kernels import gpu
        return cupy, gpu, cupy.asnumpy
    if cpu_kernels.compiled() is None:
        pytest.skip("numba is not installed")
    return np, cpu_kernels, np.asarray


class _Rank:
    """One rank of a job of ``size``, whose sums are left as they are (each rank's share)."""

    def __init__(self, rank, size):
        self.rank, self.size = rank, size

    def allreduce(self, array, op):
        return array


@pytest.mark.parametrize("device", DEVICES)
def test_kernels_equal_the_reference(monkeypatch, device):
    """The compiled kernel's counts equal the array code's, whatever the threads' copies (spare
    memory for none or many), and the ranks of a job share the work exactly."""
    xp, kernels, host = _backend(device)
    reference = _wedges._reference
    for i, (n, src, dst) in enumerate(_kernel_cases()):
        if device == "gpu":  # grids of one and of three blocks: each warp strides over many pairs
            from ooc_graph.kernels import gpu_wedges
            monkeypatch.setattr(gpu_wedges, "_BLOCKS", [1, 3, 1 << 16][i % 3])
        a, b, arcs = _wedges.neighbour_pairs(np, src, dst, n)
        want = _wedges.count_reference(np, n, a, b, arcs, spare=1 << 20)
        monkeypatch.setattr(_wedges, "_reference", None)  # the kernel runs, or this fails
        a, b, arcs = xp.asarray(a), xp.asarray(b), xp.asarray(arcs)
        for spare in (0, 1 << 30):
            got = _wedges.count(xp, n, a, b, arcs, spare=spare, kernels=kernels)
            assert got[2] == want[2], n
            for g, w in zip(got[:2], want[:2]):
                np.testing.assert_array_equal(host(g), w)
        shares = [_wedges.count(xp, n, a, b, arcs, spare=1 << 30, comm=_Rank(r, 3), kernels=kernels)
                  for r in range(3)]
        for i in (0, 1):
            np.testing.assert_array_equal(sum(host(s[i]) for s in shares), want[i])
        assert all(s[2] == want[2] for s in shares)
        monkeypatch.setattr(_wedges, "_reference", reference)


def test_reference_without_the_compiled_kernels(monkeypatch, configure):
    configure({"cpu.compiled": False})
    z = np.zeros(1, np.int64)
    assert cpu_kernels.wedge_count(z, z, z, z, np.zeros((0, 2), np.int64), z, z) is None
    for n, src, dst in _kernel_cases()[::7]:
        a, b, arcs = _wedges.neighbour_pairs(np, src, dst, n)
        got = _wedges.count(np, n, a, b, arcs, spare=0, kernels=cpu_kernels)
        want = _wedges.count_reference(np, n, a, b, arcs, spare=1 << 20)
        assert got[2] == want[2] and all(np.array_equal(g, w) for g, w in zip(got[:2], want[:2]))

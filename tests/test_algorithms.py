"""Every algorithm against networkx on many seeded random graphs and on the edge cases."""

import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph import UNREACHABLE
from ooc_graph.errors import ParameterError

from conftest import edge_array, nx_graph, random_edges

CASES = [
    # (seed, directed, weighted, interval_size, chunk_arcs, memory)
    (seed, seed % 2 == 0, seed % 3 == 0, [1, 3, 7, 16, None][seed % 5], [1, 5, 64, None][seed % 4],
     [None, "64KiB", "2KiB"][seed % 3])
    for seed in range(52)
]


def _convert(tmp_path, seed, directed, weighted, interval_size, chunk_arcs, **kw):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    m = int(rng.integers(0, 3 * n + 1))
    src, dst, w = random_edges(rng, n=n, m=m, weighted=weighted)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / f"g{seed}.h5", directed=directed,
                          num_vertices=n, interval_size=interval_size, chunk_arcs=chunk_arcs,
                          progress=False, **kw)
    return G, nx_graph(src, dst, w, directed=directed, n=n, dedupe=kw.get("dedupe", True)), n


def check_bfs(G, H, source, r):
    lengths = nx.single_source_shortest_path_length(H, source)
    n = G.num_vertices
    expect = np.full(n, UNREACHABLE, np.int64)
    for v, d in lengths.items():
        expect[v] = d
    np.testing.assert_array_equal(r.depth, expect)
    for v in range(n):
        p = r.parent[v]
        if v == source or expect[v] == UNREACHABLE:
            assert p == -1
        else:
            assert H.has_edge(p, v) and expect[p] + 1 == expect[v]
            preds = H.predecessors(v) if H.is_directed() else H.neighbors(v)
            assert p == min(u for u in preds if int(expect[u]) + 1 == expect[v])


def check_sssp(G, H, source, r):
    dist = nx.single_source_dijkstra_path_length(H, source, weight="weight")
    expect = np.full(G.num_vertices, np.inf)
    for v, d in dist.items():
        expect[v] = d
    np.testing.assert_allclose(r.distance, expect, rtol=1e-12)
    for v in range(G.num_vertices):
        p = r.parent[v]
        if v == source or not np.isfinite(expect[v]):
            assert p == -1
        else:
            w = min(d["weight"] for d in (H[p][v].values() if H.is_multigraph() else [H[p][v]]))
            assert r.distance[p] + w == r.distance[v]
    # The parents form a tree rooted at the source: follow them without cycling.
    for v in np.flatnonzero(np.isfinite(expect)):
        seen, u = 0, v
        while u != source:
            u, seen = r.parent[u], seen + 1
            assert seen <= G.num_vertices


def check_wcc(G, H, r):
    expect = np.arange(G.num_vertices)
    comps = nx.weakly_connected_components(H) if H.is_directed() else nx.connected_components(H)
    for comp in comps:
        expect[list(comp)] = min(comp)
    np.testing.assert_array_equal(r.labels, expect)


def check_pagerank(H, r, **kw):
    """networkx's PageRank run to tol 1e-15 (its criterion scales tol by n) against ours."""
    ref = nx.pagerank(H, weight=None, tol=1e-15, max_iter=100_000, **kw)
    np.testing.assert_allclose(r.values, [ref[v] for v in range(len(r.values))], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("seed,directed,weighted,interval_size,chunk_arcs,memory", CASES)
def test_random_graphs(tmp_path, monkeypatch, configure, seed, directed, weighted, interval_size, chunk_arcs, memory):
    # Per iteration strategy: edge-centric passes only, the default choice (a whole compiled
    # traversal where the CSR is in memory), or CSR advance always.
    strategy = (seed // 2) % 3
    configure({"traversal.advance_fraction": [0.0, config.Config().traversal.advance_fraction, np.inf][strategy]})
    configure({"traversal.whole_traversal": strategy == 1})
    G, H, n = _convert(tmp_path, seed, directed, weighted, interval_size, chunk_arcs)
    source = seed % n
    check_pagerank(H, ooc_graph.pagerank(G, device="cpu", memory=memory, tol=1e-12, max_iter=10_000))
    check_bfs(G, H, source, ooc_graph.bfs(G, source, device="cpu", memory=memory))
    check_sssp(G, H, source, ooc_graph.sssp(G, source, device="cpu", memory=memory))
    check_wcc(G, H, ooc_graph.wcc(G, device="cpu", memory=memory))


@pytest.mark.parametrize("seed", range(6))
def test_duplicates_kept_are_multigraph_semantics(tmp_path, seed):
    G, H, n = _convert(tmp_path, seed, seed % 2 == 0, True, 4, 3, dedupe=False)
    assert G.num_arcs == sum(1 for _ in H.edges()) * (1 if G.directed else 2) - \
        (0 if G.directed else nx.number_of_selfloops(H))
    check_pagerank(H, ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=10_000))
    check_sssp(G, H, 0, ooc_graph.sssp(G, 0, device="cpu"))


def test_personalized_pagerank(tmp_path):
    G, H, n = _convert(tmp_path, 7, True, False, 3, 4)
    p = np.random.default_rng(0).random(n)
    r = ooc_graph.pagerank(G, personalization=p, device="cpu", tol=1e-12, max_iter=10_000)
    check_pagerank(H, r, personalization=dict(enumerate(p)))


def test_pagerank_tolerance_does_not_grow_with_the_graph(tmp_path):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 12, 8, seed=1, progress=False)
    loose = ooc_graph.pagerank(G, device="cpu", tol=1e-3)
    tight = ooc_graph.pagerank(G, device="cpu", tol=1e-9)
    assert tight.iterations > loose.iterations > 1
    assert np.abs(tight.values - loose.values).sum() < 1e-2


def test_pagerank_max_iter_reports_not_converged(tmp_path):
    G, H, n = _convert(tmp_path, 8, True, False, 3, 4)
    r = ooc_graph.pagerank(G, device="cpu", tol=1e-15, max_iter=2, raise_on_nonconvergence=False)
    assert r.iterations == 2 and not r.converged


def test_empty_graph(tmp_path):
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", progress=False)
    assert G.num_vertices == 0 and G.num_arcs == 0
    assert ooc_graph.pagerank(G, device="cpu").values.size == 0
    assert ooc_graph.wcc(G, device="cpu").labels.size == 0
    with pytest.raises(ParameterError, match="not in the graph"):
        ooc_graph.bfs(G, 0, device="cpu")


def test_single_vertex_and_isolated(tmp_path):
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "one.h5", num_vertices=1, progress=False)
    assert ooc_graph.pagerank(G, device="cpu").values.tolist() == [1.0]
    r = ooc_graph.bfs(G, 0, device="cpu")
    assert r.depth.tolist() == [0] and r.parent.tolist() == [-1]
    assert ooc_graph.sssp(G, 0, device="cpu").distance.tolist() == [0.0]
    assert ooc_graph.wcc(G, device="cpu").labels.tolist() == [0]
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "iso.h5", num_vertices=5, progress=False)
    r = ooc_graph.bfs(G, 0, device="cpu")
    assert r.depth.tolist() == [0, 1] + [UNREACHABLE] * 3
    assert r.reachable.tolist() == [True, True, False, False, False]
    assert ooc_graph.wcc(G, device="cpu").labels.tolist() == [0, 0, 2, 3, 4]


def test_self_loops_only(tmp_path):
    G = ooc_graph.convert(np.array([[0, 0], [1, 1], [1, 1]]), tmp_path / "l.h5", progress=False, dedupe=False)
    H = nx_graph(np.array([0, 1, 1]), np.array([0, 1, 1]), None, directed=True, n=2, dedupe=False)
    check_pagerank(H, ooc_graph.pagerank(G, device="cpu", tol=1e-12))
    assert ooc_graph.bfs(G, 1, device="cpu").depth.tolist() == [UNREACHABLE, 0]
    D = ooc_graph.convert(np.array([[0, 0], [0, 1]]), tmp_path / "d.h5", progress=False, drop_self_loops=True)
    assert D.num_arcs == 1 and D.attrs["self_loops"] == 0


def test_zero_weight_plateau_parents_form_a_tree(tmp_path):
    # 0 -1-> 1, and 1 <-> 2 <-> 3 joined by zero-weight edges: 2 and 3 only tie with their neighbours.
    edges = np.array([[0, 1, 1.0], [1, 2, 0.0], [2, 3, 0.0], [3, 2, 0.0], [2, 1, 0.0]])
    G = ooc_graph.convert(edges, tmp_path / "z.h5", interval_size=1, chunk_arcs=1, progress=False)
    r = ooc_graph.sssp(G, 0, device="cpu")
    assert r.distance.tolist() == [0, 1, 1, 1]
    assert r.parent.tolist() == [-1, 0, 1, 2]


@pytest.mark.parametrize("seed", range(4))
def test_ids_beyond_int32_are_relabelled(tmp_path, seed):
    rng = np.random.default_rng(seed)
    src, dst, w = random_edges(rng, n=30, m=60, weighted=True, big_ids=True)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "big.h5", directed=bool(seed % 2),
                          interval_size=8, progress=False)
    labels = np.unique(np.concatenate([src, dst]))
    np.testing.assert_array_equal(G.labels, labels)
    H = nx_graph(src, dst, w, directed=bool(seed % 2), nodes=labels.tolist())
    s = int(src[0])
    r = ooc_graph.sssp(G, s, device="cpu")
    ref = nx.single_source_dijkstra_path_length(H, s)
    got = r.to_dict("distance")
    assert set(got) == set(labels.tolist())
    for v in labels.tolist():
        assert got[v] == ref.get(v, np.inf)
    comps = nx.weakly_connected_components(H) if H.is_directed() else nx.connected_components(H)
    wl = ooc_graph.wcc(G, device="cpu").to_dict()
    for comp in comps:
        assert {wl[v] for v in comp} == {min(comp)}


def test_negative_weights_are_refused_for_sssp(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1, -1.0]]), tmp_path / "neg.h5", progress=False)
    with pytest.raises(ParameterError, match="non-negative"):
        ooc_graph.sssp(G, 0, device="cpu")


@pytest.mark.parametrize("kw", [dict(alpha=0), dict(alpha=1.5), dict(tol=0), dict(max_iter=0), dict(mode="x"),
                                dict(personalization=[1.0])])
def test_pagerank_parameters_checked(tmp_path, kw):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "p.h5", progress=False)
    with pytest.raises(ParameterError):
        ooc_graph.pagerank(G, device="cpu", **kw)


# Arguments of the wrong kind are ParameterErrors naming the value, and nothing is coerced (issue 7:
# source=1.5 and source=True ran from vertex 1, source=None raised a raw TypeError).
BAD_ARGUMENTS = [  # (what, algorithm, keyword arguments, words the message must hold)
    ("source 1.5", "bfs", dict(source=1.5), ["vertex 1.5", "integers"]),
    ("source True", "sssp", dict(source=True), ["vertex True", "integers"]),
    ("source None", "bfs", dict(source=None), ["vertex None"]),
    ("source a whole float", "bfs", dict(source=np.float64(1.0)), ["vertex", "1.0"]),
    ("source a numeric string", "bfs", dict(source="1"), ["vertex '1'"]),
    ("personalization key 1.5", "pagerank", dict(personalization={1.5: 1.0}), ["vertex 1.5"]),
    ("personalization key True", "pagerank", dict(personalization={True: 1.0}), ["vertex True"]),
    ("personalization a string", "pagerank", dict(personalization="abc"), ["personalization", "'abc'"]),
    ("personalization values strings", "pagerank", dict(personalization={0: "x"}), ["personalization[0]", "'x'"]),
    ("personalization an array of strings", "pagerank", dict(personalization=["1", "1", "1"]), ["personalization"]),
    ("alpha a string", "pagerank", dict(alpha="0.85"), ["alpha must be a number", "'0.85'"]),
    ("tol a string", "pagerank", dict(tol="x"), ["tol must be a number"]),
    ("tol None", "eigenvector_centrality", dict(tol=None), ["tol must be a number", "None"]),
    ("hits tol a string", "hits", dict(tol="x"), ["tol must be a number"]),
    ("hits nstart a string", "hits", dict(nstart="x"), ["nstart", "'x'"]),
    ("katz alpha a string", "katz_centrality", dict(alpha="x"), ["alpha must be a number"]),
    ("katz beta a string", "katz_centrality", dict(beta="x"), ["beta", "'x'"]),
    ("louvain resolution a string", "louvain", dict(resolution="x"), ["resolution must be a number"]),
    ("memory a list", "wcc", dict(memory=[1]), ["memory size", "[1]"]),
    ("memory NaN", "wcc", dict(memory=float("nan")), ["memory size", "nan"]),
    ("hits normalized a string", "hits", dict(normalized="no"), ["normalized must be True or False", "'no'"]),
    ("katz normalized a string", "katz_centrality", dict(normalized="no"), ["normalized must be True or False"]),
    ("betweenness endpoints a string", "betweenness_centrality", dict(endpoints="no"), ["endpoints must be"]),
    ("profile a string", "pagerank", dict(profile="no"), ["profile must be True or False"]),
    ("bfs execution unknown", "bfs", dict(source=0, execution="fast"), ["unknown execution 'fast'"]),
    ("sssp execution not a string", "sssp", dict(source=0, execution=3), ["unknown execution 3"]),
]


@pytest.mark.parametrize("algo,kw,words", [c[1:] for c in BAD_ARGUMENTS], ids=[c[0] for c in BAD_ARGUMENTS])
def test_bad_arguments_are_parameter_errors(tmp_path, algo, kw, words):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), tmp_path / "a.h5", progress=False)
    with pytest.raises(ParameterError) as info:
        getattr(ooc_graph, algo)(G, device="cpu", **kw)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_numpy_integers_are_integers(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), tmp_path / "a.h5", progress=False)
    assert ooc_graph.bfs(G, np.int64(1), device="cpu").depth.tolist() == [UNREACHABLE, 0, 1]
    assert ooc_graph.pagerank(G, device="cpu", max_iter=np.int64(10),
                              raise_on_nonconvergence=False).parameters["max_iter"] == 10


def test_results_stored_in_the_file(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), tmp_path / "s.h5", progress=False)
    r = ooc_graph.bfs(G, 0, device="cpu", store=True)
    stored = G.load_result("bfs")
    np.testing.assert_array_equal(stored["depth"], r.depth)
    assert stored["attrs"]["algorithm"] == "bfs" and stored["attrs"]["converged"]
    ooc_graph.pagerank(G, device="cpu", store="pr_custom")
    assert G.results() == ["bfs", "pr_custom"]
    with pytest.raises(ParameterError, match="stored: bfs, pr_custom"):
        G.load_result("nope")

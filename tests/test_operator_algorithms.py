"""The algorithms written on the general edge operator, against networkx (or a plain reference)
on the seeded random graphs of test_algorithms (directed and undirected, weighted, self-loops,
duplicates, intervals from 1 vertex, budgets down to 2 KiB) and on the edge cases."""

import random
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms.link_analysis.hits_alg import _hits_python

import ooc_graph
from ooc_graph import config
from ooc_graph.errors import ParameterError

from conftest import edge_array, nx_graph, random_edges
from test_algorithms import CASES, _convert


def close(got, want, rtol=1e-8, atol=1e-12):
    np.testing.assert_allclose(got, [want[v] for v in range(len(got))], rtol=rtol, atol=atol)


def cdlp_reference(H, iterations):
    """LDBC CDLP, one vertex at a time: in- and out-neighbours on a directed graph."""
    labels = {v: v for v in H}
    for _ in range(iterations):
        new = {}
        for v in H:
            if H.is_directed():
                around = [labels[u] for u in H.predecessors(v)] + [labels[u] for u in H.successors(v)]
            else:
                around = [labels[u] for u in H.neighbors(v)]
            if not around:
                new[v] = labels[v]
                continue
            counts = Counter(around)
            best = max(counts.values())
            new[v] = min(label for label, c in counts.items() if c == best)
        labels = new
    return labels


def check_weighted_pagerank(G, H, run):
    ref = nx.pagerank(H, weight="weight", tol=1e-15, max_iter=100_000)
    r = ooc_graph.pagerank(G, **run, weight="weight", tol=1e-13, max_iter=100_000)
    close(r.values, ref, rtol=1e-7, atol=1e-11)


def check_hits(G, H, run):
    if H.number_of_edges() == 0:
        r = ooc_graph.hits(G, **run)
        assert np.allclose(r.hubs, 1 / G.num_vertices) and np.allclose(r.authorities, 1 / G.num_vertices)
        return
    r = ooc_graph.hits(G, **run, tol=1e-12, max_iter=5000)
    try:
        h, a = _hits_python(H, tol=1e-12, max_iter=5000)  # networkx's power iteration, from the same start
    except nx.PowerIterationFailedConvergence:
        assert not r.converged
        return
    assert r.converged
    close(r.hubs, h, rtol=1e-6, atol=1e-9)
    close(r.authorities, a, rtol=1e-6, atol=1e-9)


def check_katz(G, H, run):
    n = G.num_vertices
    weighted = G.weighted
    wmax = max([d["weight"] for _, _, d in H.edges(data=True)] + [1.0])
    degree = max([d for _, d in (H.in_degree() if H.is_directed() else H.degree())] + [1])
    alpha = 0.5 / (degree * wmax)  # below 1 / the largest eigenvalue: converges
    weight = "weight" if weighted else None
    ref = nx.katz_centrality(H, alpha=alpha, beta=0.7, tol=1e-14, max_iter=100_000, weight=weight)
    r = ooc_graph.katz_centrality(G, **run, alpha=alpha, beta=0.7, tol=n * 1e-14, max_iter=100_000, weight=weight)
    assert r.converged
    close(r.values, ref, rtol=1e-9, atol=1e-13)


def check_eigenvector(G, H, run):
    n = G.num_vertices
    weight = "weight" if G.weighted else None
    try:
        ref = nx.eigenvector_centrality(H, tol=1e-10, max_iter=3000, weight=weight)
    except nx.PowerIterationFailedConvergence:
        return
    r = ooc_graph.eigenvector_centrality(G, **run, tol=n * 1e-10, max_iter=3000, weight=weight)
    assert r.converged and r.iterations >= 1
    close(r.values, ref, rtol=1e-9, atol=1e-12)


def check_cdlp(G, H, run, iterations):
    r = ooc_graph.cdlp(G, **run, max_iter=iterations)
    ref = cdlp_reference(H, iterations)
    assert r.labels.tolist() == [ref[v] for v in range(G.num_vertices)]


def check_core(G, H, run):
    S = H.copy()
    S.remove_edges_from(list(nx.selfloop_edges(S)))
    ref = nx.core_number(S)
    r = ooc_graph.core_number(G, **run)
    assert r.core.tolist() == [ref[v] for v in range(G.num_vertices)]


def check_scc(G, H, run):
    comps = nx.strongly_connected_components(H) if H.is_directed() else nx.connected_components(H)
    expect = np.arange(G.num_vertices)
    for comp in comps:
        expect[list(comp)] = min(comp)
    np.testing.assert_array_equal(ooc_graph.scc(G, **run).labels, expect)


def check_betweenness(G, H, run, seed):
    n = G.num_vertices
    normalized, endpoints = seed % 2 == 0, seed % 4 < 2
    k = None if seed % 3 else max(1, n // 3)
    ref = nx.betweenness_centrality(H, k=k, normalized=normalized, endpoints=endpoints, seed=seed)
    r = ooc_graph.betweenness_centrality(G, **run, k=k, normalized=normalized, endpoints=endpoints, seed=seed)
    close(r.values, ref, rtol=1e-10, atol=1e-12)


def check_all(G, H, seed, run):
    check_weighted_pagerank(G, H, run)
    check_hits(G, H, run)
    check_katz(G, H, run)
    check_eigenvector(G, H, run)
    check_cdlp(G, H, run, 1 + seed % 6)
    check_core(G, H, run)
    check_scc(G, H, run)
    check_betweenness(G, H, run, seed)


@pytest.mark.parametrize("seed,directed,weighted,interval_size,chunk_arcs,memory", CASES)
def test_random_graphs(tmp_path, monkeypatch, configure, seed, directed, weighted, interval_size, chunk_arcs, memory):
    # Frontier passes over the chunks only, the default choice, or CSR advances whenever the CSR fits.
    configure({"traversal.advance_fraction": [0.0, config.Config().traversal.advance_fraction, np.inf][(seed // 2) % 3]})
    G, H, n = _convert(tmp_path, seed, directed, weighted, interval_size, chunk_arcs)
    # test_algorithms streams at 2KiB; here, where every algorithm iterates, chunks of a few arcs
    # at 2KiB took 10-18 s a graph: 6KiB still streams them
    check_all(G, H, seed, dict(device="cpu", memory="6KiB" if memory == "2KiB" else memory))


@pytest.mark.gpu
@pytest.mark.parametrize("seed,directed,weighted,interval_size,chunk_arcs,memory", CASES)
def test_random_graphs_gpu(tmp_path, seed, directed, weighted, interval_size, chunk_arcs, memory):
    """The same checks on the GPU; where chunks are small, a device budget of the vertex state and
    a few chunks streams them (every pass copies them again)."""
    G, H, n = _convert(tmp_path, seed, directed, weighted, interval_size, chunk_arcs)
    budget = None if chunk_arcs is None else 6 * 8 * n + 3 * 24 * chunk_arcs + 1024
    check_all(G, H, seed, dict(device="gpu", device_memory=budget))


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_personalization_by_original_id(tmp_path, device):
    rng = np.random.default_rng(3)
    src, dst, w = random_edges(rng, n=25, m=70, weighted=True, big_ids=True)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "big.h5", interval_size=4, progress=False)
    labels = np.unique(np.concatenate([src, dst]))
    H = nx_graph(src, dst, w, directed=True, nodes=labels.tolist())
    p = {int(v): float(i % 3) for i, v in enumerate(labels[::2])}
    ref = nx.pagerank(H, personalization=p, weight="weight", tol=1e-15, max_iter=100_000)
    r = ooc_graph.pagerank(G, device=device, personalization=p, weight="weight", tol=1e-13, max_iter=100_000)
    got = r.to_dict()
    for v in labels.tolist():
        assert got[v] == pytest.approx(ref[v], rel=1e-7, abs=1e-12)
    with pytest.raises(ParameterError, match="not in the graph"):
        ooc_graph.pagerank(G, device=device, personalization={7: 1.0})
    with pytest.raises(ParameterError, match="personalization"):
        ooc_graph.pagerank(G, device=device, personalization={int(labels[0]): 0.0})


@pytest.mark.parametrize("seed", range(3))
def test_duplicates_kept(tmp_path, seed):
    """A store built with dedupe=False: parallel arcs add their weights (as networkx's multigraph
    PageRank); components do not change."""
    G, H, n = _convert(tmp_path, seed, True, True, 4, 5, dedupe=False)
    ref = nx.pagerank(H, weight="weight", tol=1e-15, max_iter=100_000)
    close(ooc_graph.pagerank(G, device="cpu", weight="weight", tol=1e-13, max_iter=100_000).values, ref, rtol=1e-7,
          atol=1e-11)
    check_scc(G, nx.DiGraph(H), dict(device="cpu"))


def test_weighted_pagerank_on_the_karate_club(tmp_path):
    """The issue's case: unweighted PageRank was 0.121 (L1) from nx.pagerank on the karate club."""
    K = nx.karate_club_graph()
    G = ooc_graph.convert(K, tmp_path / "k.h5", progress=False)
    ref = nx.pagerank(K, tol=1e-15, max_iter=10_000)
    got = ooc_graph.pagerank(G, device="cpu", weight="weight", tol=1e-13, max_iter=10_000).to_dict()
    assert sum(abs(got[v] - ref[v]) for v in K) < 1e-10


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("seed", range(4))
def test_ids_beyond_int32_map_back(tmp_path, seed, device):
    rng = np.random.default_rng(seed)
    src, dst, w = random_edges(rng, n=25, m=60, weighted=False, big_ids=True)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "big.h5", directed=bool(seed % 2), interval_size=8,
                          progress=False)
    labels = np.unique(np.concatenate([src, dst]))
    H = nx_graph(src, dst, w, directed=bool(seed % 2), nodes=labels.tolist())
    comps = nx.strongly_connected_components(H) if H.is_directed() else nx.connected_components(H)
    got = ooc_graph.scc(G, device=device).to_dict()
    for comp in comps:
        assert {got[v] for v in comp} == {min(comp)}
    ref = cdlp_reference(nx.relabel_nodes(H, {v: i for i, v in enumerate(labels.tolist())}), 3)
    cd = ooc_graph.cdlp(G, device=device, max_iter=3).to_dict()
    assert [cd[v] for v in labels.tolist()] == [int(labels[ref[i]]) for i in range(len(labels))]
    S = H.copy()
    S.remove_edges_from(list(nx.selfloop_edges(S)))
    assert ooc_graph.core_number(G, device=device).to_dict() == nx.core_number(S)
    bc = ooc_graph.betweenness_centrality(G, device=device).to_dict()
    ref = nx.betweenness_centrality(H)
    assert all(bc[v] == pytest.approx(ref[v], abs=1e-12) for v in labels.tolist())
    # Start vectors and beta by original id; vertices not named start at 0.
    start = {int(v): 1.0 + i % 3 for i, v in enumerate(labels.tolist())}
    beta = {int(v): 0.5 + i % 2 for i, v in enumerate(labels.tolist())}
    katz = ooc_graph.katz_centrality(G, device=device, alpha=0.05, beta=beta, nstart=start, tol=1e-13).to_dict()
    ref = nx.katz_centrality(H, alpha=0.05, beta=beta, nstart=start, tol=1e-15, max_iter=10_000)
    assert all(katz[v] == pytest.approx(ref[v], rel=1e-9) for v in labels.tolist())
    hubs = ooc_graph.hits(G, device=device, nstart=start, tol=1e-12, max_iter=5000)
    h, a = _hits_python(H, nstart=start, tol=1e-12, max_iter=5000)
    assert hubs.converged
    assert all(hubs.to_dict("hubs")[v] == pytest.approx(h[v], rel=1e-6, abs=1e-9) for v in labels.tolist())
    assert all(hubs.to_dict("authorities")[v] == pytest.approx(a[v], rel=1e-6, abs=1e-9) for v in labels.tolist())


ALGOS = ["hits", "katz_centrality", "eigenvector_centrality", "cdlp", "core_number", "scc", "betweenness_centrality"]


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("algo", ALGOS)
def test_empty_single_isolated(tmp_path, algo, device):
    fn = getattr(ooc_graph, algo)
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", progress=False)
    assert all(a.size == 0 for a in fn(G, device=device).arrays().values())
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "one.h5", num_vertices=1, progress=False)
    one = fn(G, device=device)
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "iso.h5", num_vertices=4, progress=False)
    # (the eigenvector iteration cannot converge on a directed arc: networkx raises too)
    r = fn(G, device=device, **({"raise_on_nonconvergence": False} if algo == "eigenvector_centrality" else {}))
    H = nx.DiGraph([(0, 1)])
    H.add_nodes_from(range(4))
    if algo == "hits":
        assert one.hubs.tolist() == [1.0]
        h, a = nx.hits(H)
        close(r.hubs, h, atol=1e-8)
        close(r.authorities, a, atol=1e-8)
    elif algo == "katz_centrality":
        close(r.values, nx.katz_centrality(H), rtol=1e-6)
    elif algo == "eigenvector_centrality":
        assert one.values.tolist() == [1.0]
        U = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "iso_u.h5", num_vertices=4, directed=False,
                              progress=False)
        close(fn(U, device=device, tol=1e-12).values, nx.eigenvector_centrality(H.to_undirected(), tol=1e-12))
    elif algo == "cdlp":
        assert one.labels.tolist() == [0] and r.labels.tolist() == [0, 1, 2, 3]  # 0 and 1 swap: 10 iterations
    elif algo == "core_number":
        assert one.core.tolist() == [0] and r.core.tolist() == [1, 1, 0, 0]
    elif algo == "scc":
        assert one.labels.tolist() == [0] and r.labels.tolist() == [0, 1, 2, 3]
    else:
        assert one.values.tolist() == [0.0] and r.values.tolist() == [0.0] * 4


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_unreachable_and_chains(tmp_path, device):
    # A directed chain both ways round and a cycle: SCC finds each in few rounds.
    n = 30
    edges = [(i, i + 1) for i in range(10)] + [(20 - i, 19 - i) for i in range(8)] + [(25, 26), (26, 27), (27, 25)]
    G = ooc_graph.convert(np.array(edges), tmp_path / "c.h5", num_vertices=n, interval_size=4, chunk_arcs=3,
                          progress=False)
    r = ooc_graph.scc(G, device=device)
    assert r.labels[25:28].tolist() == [25, 25, 25] and r.num_components == n - 2
    assert r.iterations <= 3
    H = nx.DiGraph(edges)
    H.add_nodes_from(range(n))
    close(ooc_graph.betweenness_centrality(G, device=device).values, nx.betweenness_centrality(H))


@pytest.mark.parametrize("call,match", [
    (dict(algo="betweenness_centrality", weight=1), "attribute name"),
    (dict(algo="betweenness_centrality", k=99), "larger than"),
    (dict(algo="betweenness_centrality", k=0), "positive integer"),
    (dict(algo="hits", max_iter=0), "positive integer"),
    (dict(algo="hits", tol=0), "tol"),
    (dict(algo="katz_centrality", beta={0: 1.0}), "every one"),
    (dict(algo="eigenvector_centrality", nstart=[0.0, 0.0]), "sum is not zero"),
    (dict(algo="eigenvector_centrality", nstart=[1.0, -1.0]), "sum is not zero"),  # networkx: ZeroDivisionError
    (dict(algo="hits", nstart={0: 2.0, 1: -2.0}), "sum is not zero"),  # not NaN scores
    (dict(algo="cdlp", max_iter=1.5), "positive integer"),
    (dict(algo="pagerank", weight=3), "weight must be"),
    (dict(algo="pagerank", weight="weight", mode="graphalytics"), "not part of the Graphalytics"),
])
def test_parameters_checked(tmp_path, call, match):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "p.h5", progress=False)
    call = dict(call)
    fn = getattr(ooc_graph, call.pop("algo"))
    with pytest.raises(ParameterError, match=match):
        fn(G, device="cpu", **call)


def test_sampled_sources_as_networkx(tmp_path):
    G, H, n = _convert(tmp_path, 11, False, False, 4, 16)
    for k, seed in ((1, 0), (3, 5), (n - 1, 2)):
        assert random.Random(seed).sample(list(H), k) == random.Random(seed).sample(range(n), k)
        for endpoints in (False, True):
            ref = nx.betweenness_centrality(H, k=k, seed=seed, endpoints=endpoints)
            r = ooc_graph.betweenness_centrality(G, device="cpu", k=k, seed=seed, endpoints=endpoints)
            np.testing.assert_allclose(r.values, [ref[v] for v in range(n)], equal_nan=True, atol=1e-12)
        # a random.Random (what networkx's py_random_state hands on) draws the same sources, once
        ours, theirs = random.Random(seed), random.Random(seed)
        ref = nx.betweenness_centrality(H, k=k, seed=theirs)
        r = ooc_graph.betweenness_centrality(G, device="cpu", k=k, seed=ours)
        np.testing.assert_allclose(r.values, [ref[v] for v in range(n)], equal_nan=True, atol=1e-12)
        assert ours.random() == theirs.random() and r.parameters["seed"] is None


def test_core_result_k_core(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 4]]), tmp_path / "k.h5", directed=False,
                          progress=False)
    r = ooc_graph.core_number(G, device="cpu")
    assert r.k_core().tolist() == [0, 1, 2] and r.k_core(1).tolist() == [0, 1, 2, 3, 4]

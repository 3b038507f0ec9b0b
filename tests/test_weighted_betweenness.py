"""Weighted betweenness against networkx's ``betweenness_centrality(G, weight="weight")`` on seeded
random graphs (directed and undirected; integer weights with many equal path lengths, decimal
weights whose sums are not exact, and uniform ones; self-loops, merged duplicates, tiny intervals,
chunks and budgets; exact and sampled), against a plain reference where parallel arcs are kept, and
on the edge cases."""

import heapq
import random

import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.errors import ParameterError

from conftest import edge_array, nx_graph

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
# (seed, directed, interval_size, chunk_arcs, memory)
CASES = [(seed, seed % 2 == 0, [1, 3, 7, 16, None][seed % 5], [1, 5, 64, None][seed % 4],
          [None, "64KiB", "2KiB"][seed % 3]) for seed in range(56)]


def weights(rng, m, kind):
    if kind == "ties":  # small integers: many paths of equal length
        return rng.integers(1, 4, m).astype(np.float64)
    if kind == "decimal":  # 0.1 + 0.2 != 0.3: ties decided by the float sums, as networkx decides them
        return rng.choice([0.1, 0.2, 0.3, 0.4, 0.7], m)
    return rng.uniform(0.05, 3.0, m)


def random_weighted(tmp_path, seed, directed, interval_size=None, chunk_arcs=None, *, big_ids=False, dedupe=True,
                    kind=None):
    """A store and its networkx graph: self-loops, duplicates (merged at their smallest weight, as
    the store merges them, unless ``dedupe`` is False), isolated vertices."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 36))
    m = int(rng.integers(0, 3 * n + 1))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    kind = kind or ["ties", "decimal", "uniform"][seed % 3]
    w = weights(rng, m, kind)
    if m > 2:  # duplicates: of the same weight, then of another
        d = m // 5
        src, dst = np.concatenate([src, src[:d]]), np.concatenate([dst, dst[:d]])
        w = np.concatenate([w, w[:d // 2], weights(rng, d - d // 2, kind)])
    if big_ids:
        src, dst = src * 1_000_003 + 2**31, dst * 1_000_003 + 2**31
    name = f"w{seed}{'' if dedupe else '-kept'}.h5"
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / name, directed=directed,
                          num_vertices=None if big_ids else n, interval_size=interval_size, chunk_arcs=chunk_arcs,
                          weight_dtype="float64", dedupe=dedupe, progress=False)
    labels = np.unique(np.concatenate([src, dst])).tolist() if big_ids else None
    H = nx_graph(src, dst, w, directed=directed, n=None if big_ids else n, nodes=labels, dedupe=dedupe)
    return G, H, src, dst, w


def close(got, want, n):
    np.testing.assert_allclose(got, [want[v] for v in range(n)], rtol=1e-10, atol=1e-12, equal_nan=True)


def variant(seed, n):
    """normalized, endpoints and k as the hop tests vary them (k: a third of the vertices, or all)."""
    return dict(normalized=seed % 2 == 0, endpoints=seed % 4 < 2, k=None if seed % 3 else max(1, n // 3), seed=seed)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed,directed,interval_size,chunk_arcs,memory", CASES)
def test_against_networkx(tmp_path, monkeypatch, configure, device, seed, directed, interval_size, chunk_arcs, memory):
    # Frontier passes over the chunks only, the default choice, or CSR advances whenever the CSR fits;
    # distances by the compiled traversal or by the engine's iterations.
    configure({"traversal.advance_fraction": [0.0, config.Config().traversal.advance_fraction, np.inf][(seed // 2) % 3]})
    configure({"traversal.whole_traversal": seed % 4 != 1})
    G, H, *_ = random_weighted(tmp_path, seed, directed, interval_size, chunk_arcs)
    n = G.num_vertices
    kw = variant(seed, n)
    if device == "cpu":
        run = dict(device=device, memory=memory)
        if memory == "2KiB":  # the level sweeps read every chunk of a few arcs per level and source: 6 sources
            kw["k"] = min(kw["k"] or n, 6)  # (all of them took up to 20 s a graph)
    else:  # where chunks are small, a device budget of the vertex state and a few chunks streams them
        run = dict(device=device, device_memory=None if chunk_arcs is None else 6 * 8 * n + 3 * 24 * chunk_arcs + 1024)
    ref = nx.betweenness_centrality(H, weight="weight", **kw)
    r = ooc_graph.betweenness_centrality(G, weight="weight", **run, **kw)
    close(r.values, ref, n)
    assert r.parameters["weight"] == "weight"


@pytest.mark.parametrize("device", DEVICES)
def test_sampled_sources_and_random_state(tmp_path, device):
    G, H, *_ = random_weighted(tmp_path, 4, False, 4, 16)
    n = G.num_vertices
    for k, seed in ((1, 0), (3, 5), (n - 1, 2), (n, 1)):
        for endpoints in (False, True):
            ref = nx.betweenness_centrality(H, k=k, seed=seed, endpoints=endpoints, weight="weight")
            r = ooc_graph.betweenness_centrality(G, device=device, k=k, seed=seed, endpoints=endpoints,
                                                 weight="weight")
            close(r.values, ref, n)
        ours, theirs = random.Random(seed), random.Random(seed)
        ref = nx.betweenness_centrality(H, k=k, seed=theirs, weight="weight", normalized=False)
        r = ooc_graph.betweenness_centrality(G, device=device, k=k, seed=ours, weight="weight", normalized=False)
        close(r.values, ref, n)
        assert ours.random() == theirs.random()


def multigraph_reference(n, src, dst, w, directed):
    """Brandes, unnormalised and exact, with every arc its own path (a store with dedupe=False),
    distances summed as networkx sums them."""
    out = [[] for _ in range(n)]
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        out[u].append((v, x))
        if not directed and u != v:
            out[v].append((u, x))
    bc = [0.0] * n
    for s in range(n):
        dist, heap = {}, [(0.0, s)]
        while heap:
            d, u = heapq.heappop(heap)
            if u in dist:
                continue
            dist[u] = d
            for v, x in out[u]:
                if v not in dist:
                    heapq.heappush(heap, (d + x, v))
        order = sorted(dist, key=dist.get)
        sigma = dict.fromkeys(dist, 0.0)
        sigma[s] = 1.0
        preds = {v: [] for v in dist}
        for u in order:
            for v, x in out[u]:
                if dist[u] + x == dist[v] and dist[u] < dist[v]:
                    sigma[v] += sigma[u]
                    preds[v].append(u)
        delta = dict.fromkeys(dist, 0.0)
        for v in reversed(order):
            for u in preds[v]:
                delta[u] += sigma[u] * (1 + delta[v]) / sigma[v]
            if v != s:
                bc[v] += delta[v]
    return {v: b if directed else b / 2 for v, b in enumerate(bc)}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(8))
def test_parallel_arcs_kept_count_as_paths(tmp_path, device, seed):
    """dedupe=False: each tight parallel arc is a path of its own; the reference agrees with
    networkx where duplicates are merged."""
    directed = seed % 2 == 0
    kind = ["ties", "decimal"][seed % 4 // 2]
    G, _, src, dst, w = random_weighted(tmp_path, 100 + seed, directed, 4, 5, dedupe=False, kind=kind)
    n = G.num_vertices
    r = ooc_graph.betweenness_centrality(G, device=device, weight="weight", normalized=False)
    close(r.values, multigraph_reference(n, src, dst, w, directed), n)
    _, H, *_ = random_weighted(tmp_path, 100 + seed, directed, kind=kind)
    merged = np.array([(u, v, x) for u, v, x in H.edges(data="weight")]).reshape(-1, 3)
    ref = multigraph_reference(n, merged[:, 0].astype(np.int64), merged[:, 1].astype(np.int64), merged[:, 2],
                               directed)
    close([ref[v] for v in range(n)], nx.betweenness_centrality(H, weight="weight", normalized=False), n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(4))
def test_ids_beyond_int32(tmp_path, device, seed):
    G, H, *_ = random_weighted(tmp_path, 200 + seed, seed % 2 == 0, 8, big_ids=True)
    got = ooc_graph.betweenness_centrality(G, device=device, weight="weight").to_dict()
    ref = nx.betweenness_centrality(H, weight="weight")
    assert got.keys() == ref.keys()
    assert all(got[v] == pytest.approx(ref[v], abs=1e-12) for v in ref)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_cases(tmp_path, device):
    bc = ooc_graph.betweenness_centrality
    empty = ooc_graph.convert((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)), tmp_path / "e.h5",
                              progress=False)
    assert bc(empty, device=device, weight="weight").values.size == 0
    one = ooc_graph.convert((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)), tmp_path / "1.h5",
                            num_vertices=1, progress=False)
    assert bc(one, device=device, weight="weight").values.tolist() == [0.0]
    # self-loops only, isolated vertices, and parts the source cannot reach
    edges = [(0, 0, 2.0), (1, 2, 1.5), (2, 3, 0.5), (1, 3, 2.0), (3, 3, 0.25), (5, 6, 1.0), (6, 4, 3.0)]
    for directed in (True, False):
        H = nx.DiGraph() if directed else nx.Graph()
        H.add_nodes_from(range(9))
        H.add_weighted_edges_from(edges)
        G = ooc_graph.convert(np.array(edges), tmp_path / f"u{directed}.h5", directed=directed, num_vertices=9,
                              interval_size=2, chunk_arcs=2, progress=False)
        for endpoints in (False, True):
            for normalized in (False, True):
                ref = nx.betweenness_centrality(H, weight="weight", endpoints=endpoints, normalized=normalized)
                r = bc(G, device=device, weight="weight", endpoints=endpoints, normalized=normalized)
                close(r.values, ref, 9)
        # weight=None on a weighted store: hops, as networkx
        close(bc(G, device=device).values, nx.betweenness_centrality(H), 9)
    loops = ooc_graph.convert(np.array([[0, 0, 1.0], [1, 1, 2.0]]), tmp_path / "l.h5", num_vertices=3,
                              progress=False)
    assert bc(loops, device=device, weight="weight").values.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("device", DEVICES)
def test_weights_of_one_value_and_unweighted_stores_count_hops(tmp_path, device):
    """Every arc of one weight, or no weights in the store: the hop sweep, networkx's answer."""
    rng = np.random.default_rng(9)
    src, dst = rng.integers(0, 30, 90), rng.integers(0, 30, 90)
    for w in (np.full(90, 0.1), None):
        G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / f"c{w is None}.h5", num_vertices=30,
                              weight_dtype="float64", progress=False)
        H = nx_graph(src, dst, w, directed=True, n=30)
        r = ooc_graph.betweenness_centrality(G, device=device, weight="weight", normalized=False)
        close(r.values, nx.betweenness_centrality(H, weight="weight", normalized=False), 30)


def test_zero_and_bad_weights_refused(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1, 0.0], [1, 2, 1.0]]), tmp_path / "z.h5", progress=False)
    with pytest.raises(ParameterError, match="positive arc weights"):
        ooc_graph.betweenness_centrality(G, device="cpu", weight="weight")
    assert ooc_graph.betweenness_centrality(G, device="cpu").values.tolist() == [0.0, 0.5, 0.0]  # hops
    with pytest.raises(ParameterError, match="attribute name"):
        ooc_graph.betweenness_centrality(G, device="cpu", weight=3)

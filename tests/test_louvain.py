"""Louvain against networkx on many seeded random graphs and the edge cases: the partition's
modularity as networkx computes it, and close to what networkx's own Louvain finds."""

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms.community import louvain_communities, modularity

import ooc_graph
from ooc_graph.errors import ParameterError

from conftest import edge_array, nx_graph, random_edges

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def _check_partition(r, H, weight="weight", resolution=1.0):
    parts = r.communities()
    assert set().union(*parts) == set(H) if parts else not len(H)
    assert sum(map(len, parts)) == len(H)
    assert r.labels.dtype == np.int64 and sorted(set(r.labels.tolist())) == list(range(len(parts)))
    if H.size(weight=weight) > 0:
        assert r.modularity == pytest.approx(modularity(H, parts, weight=weight, resolution=resolution),
                                             rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_random_graphs_close_to_networkx(tmp_path, device):
    """52 seeded graphs: the modularity is networkx's for our partition, and on average within 1%
    (each within 10%: tiny graphs vary) of networkx's Louvain (mean of three seeds)."""
    ratios = []
    for seed in range(52):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 80))
        src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 4 * n + 1)), weighted=seed % 3 == 0,
                                   big_ids=seed % 5 == 4)
        nodes = np.unique(np.concatenate([src, dst])).tolist() if seed % 5 == 4 else None
        G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / f"g{seed}.h5", directed=False,
                              num_vertices=None if nodes is not None else n, progress=False)
        H = nx_graph(src, dst, w, directed=False, n=None if nodes is not None else n, nodes=nodes)
        r = ooc_graph.louvain(G, device=device, seed=seed)
        _check_partition(r, H)
        if H.size(weight="weight") > 0:
            theirs = np.mean([modularity(H, louvain_communities(H, seed=s)) for s in range(3)])
            if theirs > 0.05:
                ratios.append(r.modularity / theirs)
    assert min(ratios) > 0.9 and np.mean(ratios) > 0.99, (min(ratios), np.mean(ratios))


@pytest.mark.parametrize("device", DEVICES)
def test_known_graphs(tmp_path, device):
    for name, H in (("karate", nx.karate_club_graph()), ("lesmis", nx.les_miserables_graph()),
                    ("planted", nx.planted_partition_graph(6, 25, 0.5, 0.01, seed=3))):
        H = nx.convert_node_labels_to_integers(H)
        G = ooc_graph.convert(H, tmp_path / f"{name}.h5", progress=False)
        theirs = np.mean([modularity(H, louvain_communities(H, seed=s)) for s in range(5)])
        for seed in (None, 1, 2):
            r = ooc_graph.louvain(G, device=device, seed=seed)
            _check_partition(r, H)
            assert r.modularity > 0.97 * theirs, (name, seed)
    # planted partitions are found exactly
    r = ooc_graph.louvain(G, device=device)
    assert sorted(map(sorted, r.communities())) == [list(range(25 * i, 25 * i + 25)) for i in range(6)]


@pytest.mark.parametrize("device", DEVICES)
def test_parameters(tmp_path, device):
    H = nx.convert_node_labels_to_integers(nx.les_miserables_graph())
    G = ooc_graph.convert(H, tmp_path / "l.h5", progress=False)
    a, b = ooc_graph.louvain(G, device=device, seed=4), ooc_graph.louvain(G, device=device, seed=4)
    assert a.labels.tolist() == b.labels.tolist()  # a seed repeats
    low, high = (ooc_graph.louvain(G, device=device, resolution=g) for g in (0.3, 3.0))
    assert low.num_communities < a.num_communities < high.num_communities
    _check_partition(high, H, resolution=3.0)
    unweighted = ooc_graph.louvain(G, device=device, weight=False)
    _check_partition(unweighted, H, weight=None)
    one = ooc_graph.louvain(G, device=device, max_level=1)
    assert len(one.levels) == 1 and one.modularity <= a.modularity + 1e-12
    assert [len(set(lv.tolist())) for lv in a.levels] == sorted((len(set(lv.tolist())) for lv in a.levels),
                                                                 reverse=True)
    for bad, match in (({"resolution": 0}, "resolution must be positive"),
                       ({"max_level": 0}, "max_level must be a positive integer")):
        with pytest.raises(ParameterError, match=match):
            ooc_graph.louvain(G, device=device, **bad)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_cases(tmp_path, device):
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", directed=False, progress=False)
    r = ooc_graph.louvain(G, device=device)
    assert r.labels.size == 0 and r.communities() == []
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "one.h5", num_vertices=3, directed=False,
                          progress=False)
    assert ooc_graph.louvain(G, device=device).communities() == [{0}, {1}, {2}]  # networkx's answer too
    # loops only; and two triangles with loops, repeated edges and an isolated vertex
    G = ooc_graph.convert(np.array([[0, 0], [1, 1]]), tmp_path / "loops.h5", directed=False, progress=False)
    assert ooc_graph.louvain(G, device=device).communities() == [{0}, {1}]
    edges = np.array([[0, 1], [1, 2], [2, 0], [0, 0], [1, 0], [3, 4], [4, 5], [5, 3], [5, 5], [2, 3]])
    G = ooc_graph.convert(edges, tmp_path / "t.h5", directed=False, num_vertices=7, progress=False)
    r = ooc_graph.louvain(G, device=device)
    assert r.communities() == [{0, 1, 2}, {3, 4, 5}, {6}]
    H = nx.Graph(edges.tolist())
    H.add_node(6)
    _check_partition(r, H)
    D = ooc_graph.convert(edges, tmp_path / "d.h5", directed=True, progress=False)
    with pytest.raises(ParameterError, match="louvain needs an undirected graph"):
        ooc_graph.louvain(D, device=device)


def test_string_ids_budget_and_store(tmp_path):
    H = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("x", "y"), ("y", "z"), ("z", "x"), ("c", "x")])
    G = ooc_graph.convert(H, tmp_path / "s.h5", progress=False)
    r = ooc_graph.louvain(G, device="cpu", store=True)
    assert sorted(map(sorted, r.communities())) == [["a", "b", "c"], ["x", "y", "z"]]
    assert r.to_pandas().columns.tolist() == ["vertex", "labels"]
    assert G.load_result("louvain")["attrs"]["algorithm"] == "louvain"
    with pytest.raises(ParameterError, match="louvain runs in one process"):
        ooc_graph.submit(None, "louvain", G)  # refused before any cluster is asked
    R = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, seed=1, progress=False)
    with pytest.raises(ParameterError, match=r"louvain holds the graph in memory .* memory='\d+MB' or more"):
        ooc_graph.louvain(R, device="cpu", memory="1MiB")

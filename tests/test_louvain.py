"""Louvain against networkx on many seeded random graphs and the edge cases: the partition's
modularity as networkx computes it, and close to what networkx's own Louvain finds. Each test runs
the compiled CPU sweeps ("cpu"), the array sweeps on the CPU ("cpu-arrays": numba's kernels off)
and on a GPU."""

import functools

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms.community import louvain_communities, modularity

import ooc_graph
from ooc_graph.errors import ParameterError
from ooc_graph.ingest import MEMORY

from conftest import edge_array, nx_graph, random_edges

DEVICES = ["cpu", "cpu-arrays", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture
def on(configure):
    """The device to pass for a DEVICES entry (turning the compiled kernels off for "cpu-arrays")."""
    def device(name):
        if name == "cpu-arrays":
            configure({"cpu.compiled": False})
            return "cpu"
        return name
    return device


def _check_partition(r, H, weight="weight", resolution=1.0):
    parts = r.communities()
    assert set().union(*parts) == set(H) if parts else not len(H)
    assert sum(map(len, parts)) == len(H)
    assert r.labels.dtype == np.int64 and sorted(set(r.labels.tolist())) == list(range(len(parts)))
    if H.size(weight=weight) > 0:
        assert r.modularity == pytest.approx(modularity(H, parts, weight=weight, resolution=resolution),
                                             rel=1e-6, abs=1e-9)


@functools.lru_cache(maxsize=None)
def _random_case(seed):
    """Seeded graph ``seed`` of test_random_graphs_close_to_networkx: its edges, the networkx graph
    and networkx's Louvain modularity on it (mean of three seeds; None without edges), computed once
    for every device."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 4 * n + 1)), weighted=seed % 3 == 0,
                               big_ids=seed % 5 == 4)
    nodes = np.unique(np.concatenate([src, dst])).tolist() if seed % 5 == 4 else None
    H = nx_graph(src, dst, w, directed=False, n=None if nodes is not None else n, nodes=nodes)
    theirs = (np.mean([modularity(H, louvain_communities(H, seed=s)) for s in range(3)])
              if H.size(weight="weight") > 0 else None)
    return edge_array(src, dst, w), None if nodes is not None else n, H, theirs


@pytest.mark.parametrize("device", DEVICES)
def test_random_graphs_close_to_networkx(device, on):
    """52 seeded graphs: the modularity is networkx's for our partition, and on average within 1%
    (each within 10%: tiny graphs vary) of networkx's Louvain (mean of three seeds). The stores are
    kept in memory (the sweeps read the same CSR as from a file; test_string_ids_budget_and_store
    and the known graphs read files)."""
    device = on(device)
    ratios = []
    for seed in range(52):
        edges, n, H, theirs = _random_case(seed)
        G = ooc_graph.convert(edges, MEMORY, directed=False, num_vertices=n, progress=False)
        r = ooc_graph.louvain(G, device=device, seed=seed)
        _check_partition(r, H)
        if theirs is not None and theirs > 0.05:
            ratios.append(r.modularity / theirs)
    assert min(ratios) > 0.9 and np.mean(ratios) > 0.99, (min(ratios), np.mean(ratios))


@pytest.mark.parametrize("device", DEVICES)
def test_known_graphs(tmp_path, device, on):
    device = on(device)
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
def test_parameters(tmp_path, device, on):
    device = on(device)
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
def test_edge_cases(tmp_path, device, on):
    device = on(device)
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


@pytest.mark.timeout(120)
@pytest.mark.parametrize("device", DEVICES)
def test_parameters_that_never_returned(tmp_path, device, on):
    """Issue 25: keywords that made the sweeps run for ever, or failed inside NumPy, are one-line
    ParameterErrors before anything is read; weights whose total passes the float range too."""
    device = on(device)
    H = nx.karate_club_graph()
    G = ooc_graph.convert(H, tmp_path / "k.h5", progress=False)
    for bad, match in (({"threshold": float("nan")}, r"threshold must be a finite number \(got nan\)"),
                       ({"threshold": -1e-7}, "threshold must be zero or more"),
                       ({"threshold": "0"}, "threshold must be a number"),
                       ({"resolution": float("inf")}, r"resolution must be positive and finite \(got inf\)"),
                       ({"resolution": float("nan")}, r"resolution must be a finite number \(got nan\)"),
                       ({"resolution": -1}, "resolution must be positive"),
                       ({"seed": "x"}, r"seed must be None or an integer >= 0 \(got 'x'\)"),
                       ({"seed": -5}, r"seed must be None or an integer >= 0 \(got -5\)"),
                       ({"seed": 1.5}, "seed must be None or an integer"),
                       ({"seed": True}, "seed must be None or an integer")):
        with pytest.raises(ParameterError, match=match) as err:
            ooc_graph.louvain(G, device=device, **bad)
        assert "\n" not in str(err.value)
    assert ooc_graph.louvain(G, device=device, seed=np.int64(3)).modularity > 0.35
    huge = ooc_graph.convert((np.array([0, 1, 2]), np.array([1, 2, 3]), np.full(3, 1e308)), tmp_path / "h.h5",
                             directed=False, weight_dtype="float64", progress=False)
    with pytest.raises(ParameterError, match="edge weights whose total is a finite float64"):
        ooc_graph.louvain(huge, device=device)
    assert ooc_graph.louvain(huge, device=device, weight=False).num_communities >= 1


@pytest.mark.parametrize("device", DEVICES)
def test_threshold_keeps_the_last_level_as_networkx(tmp_path, device, on):
    """networkx keeps the level that gains no more than ``threshold`` (and stops after it): an
    infinite threshold gives the first level, not the vertices alone."""
    compiled, device = device == "cpu", on(device)
    H = nx.convert_node_labels_to_integers(nx.les_miserables_graph())
    G = ooc_graph.convert(H, tmp_path / "l.h5", progress=False)
    first = ooc_graph.louvain(G, device=device, threshold=float("inf"))
    assert len(list(nx.community.louvain_partitions(H, threshold=float("inf")))) == 1
    assert len(first.levels) == 1 and first.num_communities < len(H)
    if compiled:  # the array sweeps also stop a level's sweeps at the threshold
        assert first.labels.tolist() == ooc_graph.louvain(G, device=device, max_level=1).labels.tolist()
    _check_partition(first, H)


def test_pruned_sweeps_close_to_networkx(configure):
    """The compiled sweeps that visit only the vertices next to a move (large levels; here every
    level): a partition with networkx's modularity for it, close to networkx's Louvain's."""
    configure({"algorithms.louvain_prune_min_arcs": 0})
    ratios = []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(20, 120))
        src, dst, w = random_edges(rng, n=n, m=int(rng.integers(n, 5 * n)), weighted=seed % 2 == 0)
        G = ooc_graph.convert(edge_array(src, dst, w), MEMORY, directed=False, num_vertices=n, progress=False)
        H = nx_graph(src, dst, w, directed=False, n=n)
        a, b = (ooc_graph.louvain(G, device="cpu", seed=seed) for _ in range(2))
        assert a.labels.tolist() == b.labels.tolist()
        _check_partition(a, H)
        ratios.append(a.modularity / np.mean([modularity(H, louvain_communities(H, seed=s)) for s in range(3)]))
    assert min(ratios) > 0.9 and np.mean(ratios) > 0.98, (min(ratios), np.mean(ratios))


@pytest.mark.timeout(120)
def test_parameters_that_never_returned_through_networkx():
    """Issue 25 through the networkx backend: networkx's answer or error, at once. A NaN or
    negative threshold goes on while vertices move (as 0 does), an infinite resolution leaves
    every node alone; a resolution of zero or less and weights whose total is not finite are
    left to networkx (can_run's reason, or NotImplementedError from the call: networkx's fallback); seeds are networkx's to check."""
    import math
    from ooc_graph.nx_backend.interface import BackendInterface
    B = {"backend": "ooc_graph"}
    H = nx.karate_club_graph()
    for threshold in (math.nan, -1.0):
        parts = louvain_communities(H, threshold=threshold, seed=1, **B)
        assert nx.community.is_partition(H, parts) and modularity(H, parts) > 0.35
    assert louvain_communities(H, resolution=math.inf, **B) == louvain_communities(H, resolution=math.inf)
    assert list(nx.community.louvain_partitions(H, resolution=math.inf, **B)) == [[{v} for v in H]]
    with pytest.raises(ValueError, match="x cannot be used to generate a random.Random instance"):
        louvain_communities(H, seed="x", **B)
    assert nx.community.is_partition(H, louvain_communities(H, seed=-5, **B))
    huge = nx.Graph()
    huge.add_weighted_edges_from([(0, 1, 1e308), (1, 2, 1e308), (2, 3, 1e308)])
    can = BackendInterface.can_run
    assert "resolution of zero or less" in can("louvain_communities", (H,), {"resolution": 0})
    with pytest.raises(NotImplementedError) as refused:
        louvain_communities(huge, **B)  # checked on the converted edges, not in can_run
    assert "total passes the float range" in str(refused.value.__cause__ or refused.value)
    assert nx.community.is_partition(huge, louvain_communities(huge, weight=None, **B))
    with nx.config(backend_priority=["ooc_graph"], fallback_to_nx=True):
        assert louvain_communities(huge) == [{0}, {1}, {2}, {3}]  # networkx's own answer
        assert louvain_communities(H, resolution=0) == [set(H)]


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

"""The networkx backend: calls with backend="ooc_graph" against networkx on seeded graphs, the
reasons can_run gives, and a selection of networkx's own tests in its backend-testing mode (the
full run is recorded in docs/networkx-backend.md)."""

import os
import re
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import _ooc_graph_nx
from ooc_graph.nx_backend import BackendInterface
from ooc_graph.nx_backend.functions import FUNCTIONS

B = {"backend": "ooc_graph"}


@pytest.fixture(autouse=True)
def _reused_conversions():
    """networkx warns each time a call reuses the graph it converted for an earlier call on the
    same networkx graph (``G.__networkx_cache__``); here they do so on purpose."""
    with nx.config(warnings_to_ignore={"cache"}):
        yield


def _relabelled(H, seed):
    """``H`` with non-int node labels (strings) or ints beyond 2**31, by seed."""
    return nx.relabel_nodes(H, {v: (f"v{v}" if seed % 3 == 0 else v * 1_000_003 + 2**31) for v in H})


def _outcome(call):
    """What a call returns, or the type of what it raises (both sides must raise alike)."""
    try:
        return call()
    except Exception as err:  # noqa: BLE001
        return type(err)


def _same(got, want, tol=1e-12):
    """Equal outcomes: the same exception, or dicts (or tuples of dicts) with the same keys in
    the same order and values within ``tol`` (NaN where networkx has NaN)."""
    if isinstance(want, type) or isinstance(got, type):
        return got is want
    if isinstance(want, tuple):
        return len(got) == len(want) and all(_same(g, w, tol) for g, w in zip(got, want))
    return list(got) == list(want) and got == pytest.approx(want, abs=tol, nan_ok=True)


def test_registered_with_networkx():
    assert "ooc_graph" in nx.utils.backends.backends
    assert set(_ooc_graph_nx.FUNCTIONS) == set(FUNCTIONS)
    for name in FUNCTIONS:  # every function is networkx's, dispatchable, and tested below or in networkx's run
        assert "ooc_graph" in getattr(nx, name, None).backends if hasattr(nx, name) else \
            "ooc_graph" in getattr(nx.community, name).backends


@pytest.mark.parametrize("seed", range(12))
def test_against_networkx(seed):
    rng = np.random.default_rng(seed)
    directed = seed % 2 == 1
    H = _relabelled(nx.gnp_random_graph(int(rng.integers(1, 40)), 0.1, seed=seed, directed=directed), seed)
    for u, v in H.edges:
        H[u][v]["weight"] = int(rng.integers(1, 9)) if seed % 4 < 2 else float(rng.random())
    nodes = list(H)
    src = nodes[0]
    for weight in (None, "weight"):
        got = nx.pagerank(H, weight=weight, **B)
        want = nx.pagerank(H, weight=weight)
        assert got.keys() == want.keys() and all(abs(got[v] - want[v]) < 1e-5 for v in want)
    assert nx.single_source_shortest_path_length(H, src, **B) == nx.single_source_shortest_path_length(H, src)
    assert nx.single_source_shortest_path_length(H, src, cutoff=1, **B) == \
        nx.single_source_shortest_path_length(H, src, cutoff=1)
    d, e = nx.single_source_dijkstra_path_length(H, src, **B), nx.single_source_dijkstra_path_length(H, src)
    assert d.keys() == e.keys() and all(d[v] == pytest.approx(e[v]) and type(d[v]) is type(e[v]) for v in e)
    assert nx.descendants(H, src, **B) == nx.descendants(H, src)
    assert _same(nx.betweenness_centrality(H, weight="weight", **B), nx.betweenness_centrality(H, weight="weight"))
    comps = nx.weakly_connected_components if directed else nx.connected_components
    assert list(comps(H, **B)) == list(comps(H))
    if not directed:
        assert nx.triangles(H, **B) == nx.triangles(H)
        assert nx.clustering(H, **B) == pytest.approx(nx.clustering(H))
        assert nx.triangles(H, src, **B) == nx.triangles(H, src)
        if H.number_of_edges():
            parts = nx.community.louvain_communities(H, seed=seed, **B)
            assert nx.community.is_partition(H, parts)


@pytest.mark.parametrize("seed", range(12))
def test_centrality_against_networkx(seed):
    """HITS, Katz, eigenvector and betweenness centrality, core numbers and strongly connected
    components equal networkx's on graphs with isolated nodes, self-loops and non-int labels,
    weighted and not; where networkx raises, the backend raises the same."""
    rng = np.random.default_rng(seed)
    directed = seed % 2 == 1
    H = nx.gnp_random_graph(int(rng.integers(2, 40)), 0.15, seed=seed, directed=directed)
    H.add_nodes_from(range(len(H), len(H) + 3))  # isolated
    H.add_edges_from([(0, 0), (1, 1)])
    H = _relabelled(H, seed)
    for u, v in H.edges:
        H[u][v]["weight"] = float(rng.uniform(0.5, 2))
    beta = {v: float(rng.uniform(0.5, 1.5)) for v in H}
    nstart = {v: float(rng.uniform(0.1, 1)) for v in H}
    k = int(rng.integers(1, len(H)))
    calls = [
        (lambda **b: nx.hits(H, **b), 1e-6),
        (lambda **b: nx.hits(H, nstart=nstart, **b), 1e-6),
        (lambda **b: nx.katz_centrality(H, alpha=0.05, **b), 1e-6),
        (lambda **b: nx.katz_centrality(H, alpha=0.05, beta=beta, nstart=nstart, weight="weight", **b), 1e-6),
        (lambda **b: nx.katz_centrality(H, alpha=0.05, normalized=False, **b), 1e-5),
        (lambda **b: nx.katz_centrality(H, alpha=1.0, max_iter=50, **b), 0),  # diverges: both raise
        (lambda **b: nx.eigenvector_centrality(H, **b), 1e-5),
        (lambda **b: nx.eigenvector_centrality(H, max_iter=1000, nstart=nstart, weight="weight", **b), 1e-5),
        (lambda **b: nx.betweenness_centrality(H, **b), 1e-12),
        (lambda **b: nx.betweenness_centrality(H, k=k, seed=seed, normalized=False, **b), 1e-12),
        (lambda **b: nx.betweenness_centrality(H, k=k, seed=seed, endpoints=True, **b), 1e-12),
        (lambda **b: nx.betweenness_centrality(H, weight="weight", **b), 1e-12),
        (lambda **b: nx.betweenness_centrality(H, k=k, seed=seed, normalized=False, endpoints=True, weight="weight",
                                               **b), 1e-12),
        (lambda **b: nx.core_number(H, **b), 0),  # self-loops: both raise
    ]
    for call, tol in calls:
        got, want = _outcome(lambda: call(**B)), _outcome(call)
        assert _same(got, want, tol), (got, want)
    H.remove_edges_from(list(nx.selfloop_edges(H)))
    assert nx.core_number(H, **B) == nx.core_number(H)
    if directed:
        got = list(nx.strongly_connected_components(H, **B))
        assert sorted(map(sorted, got)) == sorted(map(sorted, nx.strongly_connected_components(H)))
        where = {v: i for i, part in enumerate(got) for v in part}
        assert all(where[u] >= where[v] for u, v in H.edges)  # sinks first, as networkx's Tarjan
        assert nx.number_strongly_connected_components(H, **B) == nx.number_strongly_connected_components(H)
        assert nx.is_strongly_connected(H, **B) is nx.is_strongly_connected(H)


def test_centrality_edge_cases():
    """The empty graph, one node, networkx's errors for bad arguments, as networkx gives them."""
    empty, one, two = nx.DiGraph(), nx.DiGraph(), nx.Graph([("a", "b")])
    one.add_node("x")
    assert nx.hits(empty, **B) == ({}, {})
    for fn, want in ((nx.katz_centrality, {"x": 1.0}), (nx.eigenvector_centrality, {"x": 1.0}),
                     (nx.core_number, {"x": 0}), (nx.betweenness_centrality, {"x": 0.0})):
        assert fn(one, **B) == want and type(fn(one, **B)["x"]) is type(want["x"])
        if fn is not nx.eigenvector_centrality:
            assert fn(empty, **B) == {}
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.eigenvector_centrality(empty, **B)
    assert list(nx.strongly_connected_components(empty, **B)) == []
    assert nx.number_strongly_connected_components(empty, **B) == 0
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_strongly_connected(empty, **B)
    assert list(nx.strongly_connected_components(one, **B)) == [{"x"}] and nx.is_strongly_connected(one, **B)
    with pytest.raises(nx.NetworkXNotImplemented):  # networkx's not_implemented_for, before dispatching
        nx.is_strongly_connected(two, **B)
    chain = nx.path_graph(2000, create_using=nx.DiGraph)  # 2000 components, sinks first (no recursion)
    assert list(nx.strongly_connected_components(chain, **B)) == list(nx.strongly_connected_components(chain))
    P = nx.path_graph(50)
    for call in (lambda: nx.hits(P, max_iter=1, **B), lambda: nx.hits(P, max_iter=0, **B),
                 lambda: nx.katz_centrality(P, max_iter=0, **B), lambda: nx.eigenvector_centrality(P, max_iter=-1, **B)):
        with pytest.raises(nx.PowerIterationFailedConvergence):
            call()
    with pytest.raises(nx.NetworkXError, match="every node"):
        nx.katz_centrality(two, beta={"a": 1.0}, **B)
    with pytest.raises(nx.NetworkXError, match="every node"):
        nx.katz_centrality(two, beta="foo", **B)
    assert nx.katz_centrality(nx.Graph(), beta={0: 1}, **B) == {}  # networkx returns before reading beta
    with pytest.raises(nx.NetworkXError, match="all zero"):
        nx.eigenvector_centrality(two, nstart={"a": 0, "b": 0}, **B)
    with pytest.raises(ZeroDivisionError):
        nx.eigenvector_centrality(two, nstart={"a": 1, "b": -1}, **B)
    with pytest.raises(nx.NetworkXNotImplemented, match="Input graph has self loops"):
        nx.core_number(nx.Graph([(0, 1), (1, 1)]), **B)
    C = nx.cycle_graph(4)
    for k in (5, -1):
        with pytest.raises(ValueError, match="larger|negative"):
            nx.betweenness_centrality(C, k=k, **B)
    with pytest.raises(ZeroDivisionError):
        nx.betweenness_centrality(C, k=0, **B)
    assert nx.betweenness_centrality(two, k=0, **B) == nx.betweenness_centrality(two, k=0) == {"a": 0.0, "b": 0.0}
    assert nx.betweenness_centrality(C, k=4, **B) == nx.betweenness_centrality(C, **B)


def test_can_run_gives_reasons():
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 2.0, "weight")
    can = BackendInterface.can_run
    assert "multigraph" in can("pagerank", (nx.MultiGraph(G),), {})
    assert can("pagerank", (G,), {}) is True  # weighted: ooc_graph.pagerank takes weight= since main's operator merge
    assert can("pagerank", (G,), {"weight": None}) is True
    assert "nstart" in can("pagerank", (G,), {"weight": None, "nstart": {0: 1}})
    assert "directed clustering" in can("clustering", (G.to_directed(),), {})
    G[0][1]["weight"] = -1.0
    assert "negative edge weights" in can("single_source_dijkstra_path_length", (G, 0), {})
    assert "negative edge weights" in can("pagerank", (G,), {})
    assert "attribute name" in can("dijkstra_path_length", (G, 0, 1), {"weight": lambda u, v, d: 1})
    assert "not implemented" in can("closeness_centrality", (G,), {})
    assert can("hits", (G,), {}) is True and can("betweenness_centrality", (G,), {}) is True  # weight=None
    assert "normalized=False" in can("hits", (G,), {"normalized": False})
    assert "without edges" in can("hits", (nx.empty_graph(3),), {})
    assert "one node" in can("hits", (nx.Graph([(0, 0)]),), {})
    assert "negative edge weights" in can("betweenness_centrality", (G,), {"weight": "weight"})
    assert can("betweenness_centrality", (G,), {"weight": None}) is True
    G[0][1]["weight"] = 0
    assert "zero edge weights" in can("betweenness_centrality", (G,), {"weight": "weight"})
    G[0][1]["weight"] = 0.5
    assert can("betweenness_centrality", (G,), {"weight": "weight"}) is True
    assert "attribute name" in can("betweenness_centrality", (G,), {"weight": lambda u, v, d: 1})
    assert "attribute name" in can("katz_centrality", (G,), {"weight": lambda u, v, d: 1})
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(G, 99, **B)
    with pytest.raises(nx.NetworkXNoPath):
        nx.dijkstra_path_length(nx.Graph([(0, 1), (2, 3)]), 0, 3, **B)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(nx.path_graph(30), max_iter=2, weight=None, **B)


NETWORKX_SELECTION = ["networkx.algorithms.link_analysis.tests.test_pagerank",
                      "networkx.algorithms.components.tests.test_connected",
                      "networkx.algorithms.tests.test_cluster",
                      "networkx.algorithms.community.tests.test_louvain",
                      "networkx.algorithms.shortest_paths.tests.test_unweighted",
                      "networkx.algorithms.link_analysis.tests.test_hits",
                      "networkx.algorithms.centrality.tests.test_katz_centrality",
                      "networkx.algorithms.centrality.tests.test_eigenvector_centrality",
                      "networkx.algorithms.centrality.tests.test_betweenness_centrality",
                      "networkx.algorithms.tests.test_core",
                      "networkx.algorithms.components.tests.test_strongly_connected"]


def test_networkx_own_tests_pass_with_the_backend(tmp_path):
    """A selection of networkx's tests, every dispatchable call converted to this backend
    (networkx's backend-testing mode); docs/networkx-backend.md has the full run."""
    env = dict(os.environ, NETWORKX_TEST_BACKEND="ooc_graph", NETWORKX_FALLBACK_TO_NX="True")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::UserWarning",
                           "--pyargs", *NETWORKX_SELECTION], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    tail = proc.stdout[-3000:]
    assert proc.returncode == 0, tail
    assert re.search(r"\d+ passed", tail) and not re.search(r"\d+ (failed|error)", tail), tail


def test_vertex_function_is_one_line(monkeypatch):
    """A networkx function returning {node: value} from an ooc_graph algorithm: one vertex_function line."""
    from ooc_graph.nx_backend import functions
    monkeypatch.setattr(functions, "FUNCTIONS", dict(functions.FUNCTIONS))
    fn = functions.vertex_function("number_of_nodes", "values", algorithm="lcc")  # networkx's signature: (G)
    H = nx.karate_club_graph()
    G = BackendInterface.convert_from_nx(H)
    assert fn(G) == pytest.approx(nx.clustering(H))
    assert functions.FUNCTIONS["number_of_nodes"] is fn and list(fn.signature.parameters) == ["G"]
    assert fn.can_run({"G": H}) is True


def test_stores_are_in_memory_and_closed_with_the_graph(tmp_path, monkeypatch):
    """A converted graph's stores (one per weight attribute) are kept in memory: no file is
    written, and they are closed when the converted graph goes."""
    import gc
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    H = nx.path_graph(5)
    nx.set_edge_attributes(H, 2, "weight")
    G = BackendInterface.convert_from_nx(H, edge_attrs={"weight": 1})
    plain, weighted = G.store(), G.store("weight")
    assert plain is G.store(None) and weighted is G.store("weight") and plain is not weighted
    assert plain.in_memory and weighted.in_memory and weighted.weighted and not plain.weighted
    assert nx.single_source_dijkstra_path_length(G, 0, **B) == {i: 2 * i for i in range(5)}
    del G
    gc.collect()
    assert plain.closed and weighted.closed
    assert list(tmp_path.iterdir()) == []


def test_graphs_whose_views_disagree_are_left_to_networkx():
    """networkx's _AntiGraph shows its complement through its edge view and the dense graph through
    adj/degree/neighbors; networkx's core_number reads the latter, connected_components the
    former. A converted graph cannot follow both: such a class is refused with the reason."""
    from networkx.algorithms.approximation.kcomponents import _AntiGraph
    K = nx.karate_club_graph()
    A = _AntiGraph(nx.complement(K))
    assert "overrides networkx's 'adj'" in BackendInterface.can_run("core_number", (A,), {})
    for view in (K.subgraph(range(9)), nx.reverse_view(K.to_directed()), nx.freeze(nx.path_graph(3))):
        assert BackendInterface.can_run("core_number", (view,), {}) is True
    with nx.config(backend_priority=["ooc_graph"], fallback_to_nx=True):
        assert nx.core_number(A) == nx.core_number(K)

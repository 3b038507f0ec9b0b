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
                 lambda: nx.katz_centrality(P, max_iter=0, **B), lambda: nx.eigenvector_centrality(P, max_iter=-1, **B),
                 # runs that end at max_iter: ooc_graph's ConvergenceError becomes networkx's error
                 lambda: nx.pagerank(P, max_iter=2, **B), lambda: nx.pagerank(P, max_iter=2, weight=None, **B),
                 lambda: nx.katz_centrality(P, max_iter=2, **B), lambda: nx.eigenvector_centrality(P, max_iter=2, **B)):
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


def test_can_run_reads_the_arguments_not_the_edges():
    """can_run answers from the arguments: it never iterates the graph's edges (it used to scan every
    weight in Python on every call); what the edges hold is checked once, when they are converted."""
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, -1.0, "weight")
    can = BackendInterface.can_run
    assert "multigraph" in can("pagerank", (nx.MultiGraph(G),), {})
    assert "nstart" in can("pagerank", (G,), {"weight": None, "nstart": {0: 1}})
    assert "directed clustering" in can("clustering", (G.to_directed(),), {})
    assert "attribute name" in can("dijkstra_path_length", (G, 0, 1), {"weight": lambda u, v, d: 1})
    assert "attribute name" in can("betweenness_centrality", (G,), {"weight": lambda u, v, d: 1})
    assert "sort_neighbors" in can("bfs_edges", (G, 0), {"sort_neighbors": sorted})
    assert "copy=False" in can("relabel_nodes", (G, {0: 9}), {"copy": False})
    assert "not implemented" in can("closeness_centrality", (G,), {})
    assert "normalized=False" in can("hits", (G,), {"normalized": False})
    assert "without edges" in can("hits", (nx.empty_graph(3),), {})

    class Untouchable(nx.Graph):  # iterating its edges fails: can_run must not
        pass
    H = Untouchable(G)
    H._adj = {v: _Unreadable(nbrs) for v, nbrs in H._adj.items()}
    for name in ("pagerank", "single_source_dijkstra_path_length", "betweenness_centrality", "louvain_communities"):
        args = (H, 0) if "source" in name else (H,)
        assert can(name, args, {"weight": "weight"}) is True


class _Unreadable(dict):
    def items(self):
        raise AssertionError("can_run read the edges")

    values = __iter__ = items


def test_edge_weights_are_checked_once_on_arrays(monkeypatch):
    """Weights are read and checked once per converted graph, as arrays: what networkx's sums
    cannot take raises what networkx raises; what the backend cannot take (negative PageRank weights,
    zero betweenness weights, None, NaN, integers whose sums need more than 64 bits) raises
    NotImplementedError with the reason, so that networkx runs the call where fallback is on."""
    from ooc_graph.nx_backend import graph as graph_module
    reads = []
    real = graph_module._read_weights
    monkeypatch.setattr(graph_module, "_read_weights", lambda *a: reads.append(a[1]) or real(*a))
    G = nx.path_graph(5)
    nx.set_edge_attributes(G, 2, "weight")
    with nx.config(cache_converted_graphs=True):
        for _ in range(3):
            assert nx.single_source_dijkstra_path_length(G, 0, **B) == {i: 2 * i for i in range(5)}
            nx.pagerank(G, **B)
            nx.betweenness_centrality(G, weight="weight", **B)
    assert reads == ["weight"]  # one read of the attribute for nine calls

    S = nx.path_graph(3)
    S[0][1]["weight"] = "heavy"
    for call in (lambda **b: nx.single_source_dijkstra_path_length(S, 0, **b),
                 lambda **b: nx.single_source_bellman_ford_path_length(S, 0, **b),
                 lambda **b: nx.betweenness_centrality(S, weight="weight", **b),
                 lambda **b: nx.pagerank(S, **b), lambda **b: nx.hits(S, **b)):
        assert _outcome(lambda: call(**B)) is _outcome(call)  # TypeError / ValueError, as networkx
    if True:
        for value, call, reason in [
                (-1.0, lambda G: nx.pagerank(G, **B), "negative"),
                (0, lambda G: nx.betweenness_centrality(G, weight="weight", **B), "zero edge weights"),
                (None, lambda G: nx.single_source_dijkstra_path_length(G, 0, **B), "not a real number"),
                (float("nan"), lambda G: nx.single_source_dijkstra_path_length(G, 0, **B), "NaN"),
                (2**63, lambda G: nx.single_source_dijkstra_path_length(G, 0, **B), "64 bits")]:
            W = nx.path_graph(4)
            nx.set_edge_attributes(W, 1, "weight")
            W[1][2]["weight"] = value
            with pytest.raises(NotImplementedError) as refused:
                call(W)
            assert reason in str(refused.value.__cause__)  # networkx's message, from the backend's
    P = nx.path_graph(4)  # integer weights beyond 2**53: exact sums, as networkx's Python ints
    nx.set_edge_attributes(P, 2**60 + 1, "weight")
    got = nx.single_source_dijkstra_path_length(P, 0, **B)
    assert got == nx.single_source_dijkstra_path_length(P, 0) and got[3] == 3 * (2**60 + 1)


def test_huge_weights():
    """Weights near float64's largest: eigenvector, HITS and PageRank scale them down (their answers
    do not change when every weight is scaled; networkx's own sums overflow there); shortest paths
    overflow to inf exactly as networkx's do; betweenness, whose path counts would depend on those
    infinities, is left to networkx with the reason."""
    G = nx.path_graph(6)
    nx.set_edge_attributes(G, 1e308, "weight")
    G[0][1]["weight"] = 5e307
    H = nx.path_graph(6)
    nx.set_edge_attributes(H, {e: d["weight"] / 1e308 for e, d in G.edges.items()}, "weight")
    for fn in (nx.eigenvector_centrality, nx.pagerank):
        got, want = fn(G, **B), fn(H)
        assert all(v > 0 for v in got.values()) and got == pytest.approx(want, abs=1e-5)
    assert nx.single_source_dijkstra_path_length(G, 0, **B) == nx.single_source_dijkstra_path_length(G, 0)
    with pytest.raises(NotImplementedError) as refused:
        nx.betweenness_centrality(G, weight="weight", **B)
    assert "overflow" in str(refused.value.__cause__)


def test_should_run_leaves_what_networkx_does_faster():
    """should_run (networkx's automatic dispatch only) declines tiny graphs and one-pass algorithms
    on a graph not converted yet, with the reason; iterative ones and converted graphs run here."""
    from ooc_graph.nx_backend.interface import SMALL
    should = BackendInterface.should_run
    tiny = nx.path_graph(5)
    assert "5 nodes" in should("pagerank", (tiny,), {})
    G = nx.path_graph(SMALL + 10)
    assert "converting" in should("single_source_shortest_path_length", (G, 0), {})
    assert "converting" in should("connected_components", (G,), {})
    assert should("pagerank", (G,), {}) is True and should("all_pairs_shortest_path_length", (G,), {}) is True
    with nx.config(cache_converted_graphs=True, backend_priority=["ooc_graph"]):
        nx.pagerank(G)  # runs here, and networkx caches the conversion
        assert should("single_source_shortest_path_length", (G, 0), {}) is True
        assert nx.single_source_shortest_path_length(G, 0) == nx.single_source_shortest_path_length(G, 0,
                                                                                                    backend="networkx")
    G.add_edge(0, SMALL + 20)  # networkx clears its cache: convert again
    assert "converting" in should("single_source_shortest_path_length", (G, 0), {})


def test_conversions_are_shared_through_networkx_cache():
    """A call asking for another edge attribute reuses the conversion networkx cached for the graph
    (nodes and adjacency are not read again)."""
    G = nx.gnp_random_graph(100, 0.05, seed=1)
    nx.set_edge_attributes(G, 3, "weight")
    with nx.config(cache_converted_graphs=True):
        nx.single_source_shortest_path_length(G, 0, **B)
        first = G.__networkx_cache__["backends"]["ooc_graph"]
        (converted,) = set(map(id, first.values()))
        nx.single_source_dijkstra_path_length(G, 0, **B)
        assert {id(g) for g in G.__networkx_cache__["backends"]["ooc_graph"].values()} == {converted}


def test_networkx_versions():
    """_nxver is the installed networkx's version; pyproject's range covers it and starts at the
    oldest served; on an older networkx every call is refused with the reason."""
    import re
    from pathlib import Path
    from ooc_graph.nx_backend import _nxver
    assert _nxver._nxver == tuple(int(x) for x in nx.__version__.split(".")[:2])
    spec = re.search(r'"networkx(>=[\d.]+,<[\d.]+)"', (Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert spec, "pyproject.toml names a networkx range"
    low, high = re.findall(r"[\d.]+", spec.group(1))
    assert tuple(map(int, low.split("."))) == _nxver.OLDEST
    assert _nxver.OLDEST <= _nxver._nxver < tuple(map(int, high.split(".")))
    assert _nxver.unsupported is None and BackendInterface.can_run("pagerank", (nx.path_graph(3),), {}) is True


NETWORKX_SELECTION = ["networkx.algorithms.link_analysis.tests.test_pagerank",
                      "networkx.algorithms.components.tests.test_connected",
                      "networkx.algorithms.tests.test_cluster",
                      "networkx.algorithms.community.tests.test_louvain",
                      "networkx.algorithms.shortest_paths.tests.test_unweighted",
                      "networkx.algorithms.shortest_paths.tests.test_weighted",
                      "networkx.algorithms.traversal.tests.test_bfs",
                      "networkx.algorithms.tests.test_dag",
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

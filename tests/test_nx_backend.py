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
    H = nx.gnp_random_graph(int(rng.integers(1, 40)), 0.1, seed=seed, directed=directed)
    H = nx.relabel_nodes(H, {v: (f"v{v}" if seed % 3 == 0 else v * 1_000_003 + 2**31) for v in H})
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
    comps = nx.weakly_connected_components if directed else nx.connected_components
    assert list(comps(H, **B)) == list(comps(H))
    if not directed:
        assert nx.triangles(H, **B) == nx.triangles(H)
        assert nx.clustering(H, **B) == pytest.approx(nx.clustering(H))
        assert nx.triangles(H, src, **B) == nx.triangles(H, src)
        if H.number_of_edges():
            parts = nx.community.louvain_communities(H, seed=seed, **B)
            assert nx.community.is_partition(H, parts)


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
    assert "not implemented" in can("hits", (G,), {})
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
                      "networkx.algorithms.shortest_paths.tests.test_unweighted"]


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
    """How the algorithms of the operator branch plug in: one vertex_function line each."""
    from ooc_graph.nx_backend import functions
    monkeypatch.setattr(functions, "FUNCTIONS", dict(functions.FUNCTIONS))
    fn = functions.vertex_function("number_of_nodes", "values", algorithm="lcc")  # networkx's signature: (G)
    H = nx.karate_club_graph()
    G = BackendInterface.convert_from_nx(H)
    assert fn(G) == pytest.approx(nx.clustering(H))
    assert functions.FUNCTIONS["number_of_nodes"] is fn and list(fn.signature.parameters) == ["G"]
    assert fn.can_run({"G": H}) is True

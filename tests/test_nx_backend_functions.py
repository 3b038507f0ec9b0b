"""Every function the networkx backend serves, against networkx itself, on seeded random graphs and
the edge cases (empty, one node, isolated nodes, self-loops, string nodes, unreachable nodes,
int, float and mixed weights): the same answer, to the order of dict keys and the type of each
number, or the same exception. A function registered without a case here fails
``test_every_function_has_a_case`` (as nx-cugraph's ensure_algos_covered)."""

import contextlib
import math

import networkx as nx
import numpy as np
import pytest

from ooc_graph.nx_backend.functions import FUNCTIONS

B = {"backend": "ooc_graph"}
APPROX = 1e-6  # power iterations (networkx's own tolerance)
ROUND = 1e-12  # sums in another order


@pytest.fixture(autouse=True)
def _quiet_cache():
    try:
        quiet = nx.config(warnings_to_ignore={"cache"})
    except (TypeError, ValueError, AttributeError):  # networkx 3.3 has no such setting
        quiet = contextlib.nullcontext()
    with quiet:
        yield


def _graph(seed):
    """A seeded random graph: directed or not, with isolated nodes and self-loops, int / float /
    mixed weights, and string or large-int labels, by seed."""
    rng = np.random.default_rng(seed)
    directed = seed % 2 == 1
    n = int(rng.integers(2, 30))
    G = nx.gnp_random_graph(n, float(rng.uniform(0.05, 0.3)), seed=seed, directed=directed)
    G.add_nodes_from(range(n, n + int(rng.integers(0, 3))))  # isolated
    if seed % 3 == 0:
        G.add_edges_from([(0, 0), (1, 1)])
    for k, (u, v) in enumerate(G.edges):
        kind = seed % 4
        G[u][v]["weight"] = (int(rng.integers(1, 6)) if kind == 0 else float(rng.uniform(0.5, 3)) if kind == 1
                             else (int(rng.integers(1, 4)) if k % 2 else float(rng.integers(1, 4)) + 0.5)
                             if kind == 2 else 1)
    if seed % 5 == 2:
        G = nx.relabel_nodes(G, {v: f"v{v}" for v in G})
    elif seed % 5 == 4:
        G = nx.relabel_nodes(G, {v: v * 1_000_003 + 2**40 for v in G})
    return G


def _edge_cases():
    one, one_d = nx.Graph(), nx.DiGraph()
    one.add_node("x")
    one_d.add_node("x")
    loop = nx.Graph([(0, 0)])
    two = nx.Graph([("a", "b")])
    two.add_node("c")  # unreachable
    tie = nx.Graph()  # equal paths: networkx's own choice among them
    tie.add_weighted_edges_from([(0, 1, 1), (0, 2, 1), (1, 3, 1), (2, 3, 1), (3, 4, 2), (1, 4, 3)])
    zero = nx.DiGraph()  # zero weights and a zero-weight cycle
    zero.add_weighted_edges_from([(0, 1, 0), (1, 2, 0), (2, 1, 0), (0, 2, 1), (2, 3, 0.0)])
    dag = nx.DiGraph([(0, 2), (1, 2), (2, 3), (0, 3), (3, 4), (1, 4)])
    for u, v in dag.edges:
        dag[u][v]["weight"] = (u + v) % 3 - 0.5
    return {"empty": nx.Graph(), "empty-directed": nx.DiGraph(), "one": one, "one-directed": one_d, "loop": loop,
            "unreachable": two, "ties": tie, "zero-weights": zero, "dag": dag,
            "path": nx.path_graph(12), "star-directed": nx.DiGraph([(0, i) for i in range(1, 7)]),
            "karate": nx.karate_club_graph(), "grid": nx.convert_node_labels_to_integers(nx.grid_2d_graph(4, 5))}


GRAPHS = {**_edge_cases(), **{f"random{s}": _graph(s) for s in range(14)}}


# -- comparing outcomes ---------------------------------------------------------------------------
def _plain(x):
    """Graphs (at any depth) as their data, generators as lists."""
    if isinstance(x, nx.Graph):
        return ("graph", type(x).__name__, _plain(dict(x.graph)), list(x.nodes(data=True)),
                sorted(map(repr, x.edges(data=True))))
    if isinstance(x, (list, tuple)):
        return type(x)(map(_plain, x))
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if hasattr(x, "__next__"):
        return [_plain(v) for v in x]
    return x


def _outcome(call):
    """What a call returns (as :func:`_plain` data), or the type of what it raises."""
    try:
        return _plain(call())
    except Exception as err:  # noqa: BLE001
        return type(err)


def _same(got, want, tol=0.0):
    """Equal outcomes: the same exception type; dicts with the same keys in the same order; numbers of
    the same type, equal (within ``tol`` for floats); sets, lists and tuples elementwise."""
    if isinstance(want, type) or isinstance(got, type):
        return got is want
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and all(_same(got[k], want[k], tol) for k in want)
    if isinstance(want, (list, tuple)):
        return type(got) is type(want) and len(got) == len(want) and all(_same(g, w, tol) for g, w in zip(got, want))
    if isinstance(want, float):
        return type(got) is float and (got == want or abs(got - want) <= tol * max(1.0, abs(want)) or
                                       (math.isnan(got) and math.isnan(want)))
    return type(got) is type(want) and got == want


def _nodes(G):
    nodes = list(G)
    return (nodes[0] if nodes else 0), (nodes[-1] if nodes else 0), nodes


# Each function: calls of (function, G, source, target, nodes) -> result, and the tolerance.
def _paths(f, G, s, t, V):
    return [f(G, s), f(G, s, cutoff=2), f(G, "missing")]


CASES = {
    # traversal
    "bfs_edges": (lambda f, G, s, t, V: [list(f(G, s)), list(f(G, t, reverse=True)), list(f(G, s, depth_limit=2))], 0),
    "bfs_tree": (lambda f, G, s, t, V: [f(G, s), f(G, t, reverse=True, depth_limit=2)], 0),
    "bfs_predecessors": (lambda f, G, s, t, V: [list(f(G, s)), list(f(G, s, depth_limit=1))], 0),
    "bfs_successors": (lambda f, G, s, t, V: [list(f(G, s)), list(f(G, t, depth_limit=2))], 0),
    "bfs_layers": (lambda f, G, s, t, V: [list(f(G, s)), list(f(G, V[:3])), list(f(G, ["missing"]))], 0),
    "descendants_at_distance": (lambda f, G, s, t, V: [f(G, s, 0), f(G, s, 2), f(G, s, -1), f(G, "missing", 1)], 0),
    "descendants": (lambda f, G, s, t, V: [f(G, s), f(G, "missing")], 0),
    "ancestors": (lambda f, G, s, t, V: [f(G, t), f(G, "missing")], 0),
    "single_source_shortest_path_length": (_paths, 0),
    "single_target_shortest_path_length": (_paths, 0),
    "all_pairs_shortest_path_length": (lambda f, G, s, t, V: [dict(f(G)), dict(f(G, cutoff=1))], 0),
    "single_source_shortest_path": (_paths, 0),
    "single_target_shortest_path": (_paths, 0),
    "all_pairs_shortest_path": (lambda f, G, s, t, V: [dict(f(G)), dict(f(G, cutoff=1))], 0),
    "bidirectional_shortest_path": (lambda f, G, s, t, V: [f(G, s, t), f(G, t, s), f(G, s, s), f(G, s, "missing")], 0),
    "has_path": (lambda f, G, s, t, V: [f(G, s, t), f(G, t, s), f(G, "missing", s)], 0),
    "predecessor": (lambda f, G, s, t, V: [f(G, s), f(G, s, cutoff=2), f(G, s, t, return_seen=True),
                                           f(G, s, return_seen=True), f(G, s, "missing")], 0),
    # weighted
    "multi_source_dijkstra_path_length": (lambda f, G, s, t, V: [f(G, set(V[:2])), f(G, {s}, cutoff=2.5), f(G, set())], 0),
    "multi_source_dijkstra": (lambda f, G, s, t, V: [f(G, set(V[:2])), f(G, {s}, target=t), f(G, {s}, target=s)], 0),
    "multi_source_dijkstra_path": (lambda f, G, s, t, V: [f(G, set(V[-2:])), f(G, {"missing"})], 0),
    "single_source_dijkstra_path_length": (lambda f, G, s, t, V: [f(G, s), f(G, s, cutoff=2), f(G, s, weight=None)], 0),
    "single_source_dijkstra": (lambda f, G, s, t, V: [f(G, s), f(G, s, t), f(G, s, cutoff=1.5)], 0),
    "single_source_dijkstra_path": (lambda f, G, s, t, V: [f(G, s), f(G, t, weight=None)], 0),
    "dijkstra_path": (lambda f, G, s, t, V: [f(G, s, t), f(G, t, s), f(G, s, "missing")], 0),
    "dijkstra_path_length": (lambda f, G, s, t, V: [f(G, s, t), f(G, s, s), f(G, "missing", t)], 0),
    "all_pairs_dijkstra": (lambda f, G, s, t, V: [dict(f(G)), dict(f(G, cutoff=1))], 0),
    "all_pairs_dijkstra_path_length": (lambda f, G, s, t, V: [dict(f(G))], 0),
    "all_pairs_dijkstra_path": (lambda f, G, s, t, V: [dict(f(G, weight=None))], 0),
    "dijkstra_predecessor_and_distance": (lambda f, G, s, t, V: [f(G, s), f(G, s, cutoff=2)], 0),
    "bidirectional_dijkstra": (lambda f, G, s, t, V: [f(G, s, t), f(G, t, s), f(G, s, s)], 0),
    "single_source_bellman_ford_path_length": (lambda f, G, s, t, V: [f(G, s), f(G, "missing")], 0),
    "single_source_bellman_ford": (lambda f, G, s, t, V: [f(G, s), f(G, s, t), f(G, s, s)], 0),
    "single_source_bellman_ford_path": (lambda f, G, s, t, V: [f(G, t)], 0),
    "bellman_ford_path": (lambda f, G, s, t, V: [f(G, s, t), f(G, t, s)], 0),
    "bellman_ford_path_length": (lambda f, G, s, t, V: [f(G, s, t), f(G, s, s), f(G, s, "missing")], 0),
    "bellman_ford_predecessor_and_distance": (lambda f, G, s, t, V: [f(G, s), f(G, s, heuristic=True)], 0),
    "all_pairs_bellman_ford_path_length": (lambda f, G, s, t, V: [dict(f(G))], 0),
    "all_pairs_bellman_ford_path": (lambda f, G, s, t, V: [dict(f(G))], 0),
    "is_negatively_weighted": (lambda f, G, s, t, V: [f(G), f(G, weight="other")], 0),
    "shortest_path": (lambda f, G, s, t, V: [f(G, s), f(G, s, t), f(G, target=t), f(G, s, t, weight="weight"),
                                             f(G, target=t, weight="weight", method="bellman-ford"),
                                             dict(f(G, weight="weight")), f(G, s, method="x")], 0),
    "shortest_path_length": (lambda f, G, s, t, V: [f(G, s), f(G, s, t), f(G, target=t), f(G, s, t, weight="weight"),
                                                    f(G, target=s, weight="weight"), dict(f(G)),
                                                    f(G, s, weight="weight", method="bellman-ford")], 0),
    "average_shortest_path_length": (lambda f, G, s, t, V: [f(G), f(G, weight="weight"),
                                                            f(G, weight="weight", method="bellman-ford")], 0),
    # components and trees
    "connected_components": (lambda f, G, s, t, V: [list(f(G))], 0),
    "number_connected_components": (lambda f, G, s, t, V: [f(G)], 0),
    "is_connected": (lambda f, G, s, t, V: [f(G)], 0),
    "node_connected_component": (lambda f, G, s, t, V: [f(G, s), f(G, "missing")], 0),
    "weakly_connected_components": (lambda f, G, s, t, V: [list(f(G))], 0),
    "number_weakly_connected_components": (lambda f, G, s, t, V: [f(G)], 0),
    "is_weakly_connected": (lambda f, G, s, t, V: [f(G)], 0),
    "strongly_connected_components": (lambda f, G, s, t, V: [sorted(map(sorted, map(list, f(G))), key=repr)], 0),
    "number_strongly_connected_components": (lambda f, G, s, t, V: [f(G)], 0),
    "is_strongly_connected": (lambda f, G, s, t, V: [f(G)], 0),
    "attracting_components": (lambda f, G, s, t, V: [sorted(map(sorted, map(list, f(G))), key=repr)], 0),
    "number_attracting_components": (lambda f, G, s, t, V: [f(G)], 0),
    "is_attracting_component": (lambda f, G, s, t, V: [f(G)], 0),
    "condensation": (lambda f, G, s, t, V: [nx.is_isomorphic(f(G), nx.condensation(G)) and
                                            sorted(map(sorted, nx.get_node_attributes(f(G), "members").values()),
                                                   key=repr)], 0),
    "is_tree": (lambda f, G, s, t, V: [f(G)], 0),
    "is_forest": (lambda f, G, s, t, V: [f(G)], 0),
    "is_arborescence": (lambda f, G, s, t, V: [f(G)], 0),
    "is_branching": (lambda f, G, s, t, V: [f(G)], 0),
    # dags
    "topological_generations": (lambda f, G, s, t, V: [list(f(G))], 0),
    "topological_sort": (lambda f, G, s, t, V: [list(f(G))], 0),
    "is_directed_acyclic_graph": (lambda f, G, s, t, V: [f(G)], 0),
    "dag_longest_path": (lambda f, G, s, t, V: [f(G), f(G, weight=None), f(G, default_weight=2)], 0),
    "dag_longest_path_length": (lambda f, G, s, t, V: [f(G), f(G, weight="other", default_weight=3)], 0),
    # link analysis and centrality
    "pagerank": (lambda f, G, s, t, V: [f(G), f(G, weight=None, alpha=0.9)], APPROX),
    "hits": (lambda f, G, s, t, V: [f(G, max_iter=500)], APPROX),
    "katz_centrality": (lambda f, G, s, t, V: [f(G, alpha=0.02)], APPROX),
    "eigenvector_centrality": (lambda f, G, s, t, V: [f(G, max_iter=2000)], APPROX),
    "betweenness_centrality": (lambda f, G, s, t, V: [f(G), f(G, weight="weight", normalized=False),
                                                      f(G, k=min(3, len(G)), seed=1)], ROUND),
    "edge_betweenness_centrality": (lambda f, G, s, t, V: [f(G), f(G, weight="weight", normalized=False),
                                                           f(G, k=min(3, len(G)), seed=2)], 0),
    "degree_centrality": (lambda f, G, s, t, V: [f(G)], 0),
    "in_degree_centrality": (lambda f, G, s, t, V: [f(G)], 0),
    "out_degree_centrality": (lambda f, G, s, t, V: [f(G)], 0),
    # clustering, communities, cores
    "triangles": (lambda f, G, s, t, V: [f(G), f(G, s), f(G, V[:3])], 0),
    "clustering": (lambda f, G, s, t, V: [f(G), f(G, s)], ROUND),
    "average_clustering": (lambda f, G, s, t, V: [f(G), f(G, count_zeros=False)], ROUND),
    "transitivity": (lambda f, G, s, t, V: [f(G)], 0),
    "louvain_communities": (lambda f, G, s, t, V: [nx.community.is_partition(G, f(G, seed=1))], 0),
    "louvain_partitions": (lambda f, G, s, t, V: [all(nx.community.is_partition(G, p) for p in f(G, seed=1))], 0),
    "modularity": (lambda f, G, s, t, V: [f(G, [set(V[::2]), set(V[1::2])]), f(G, [set(V)], weight=None),
                                          f(G, [set(V[:1])])], ROUND),
    "core_number": (lambda f, G, s, t, V: [f(G)], 0),
    "k_core": (lambda f, G, s, t, V: [f(G), f(G, k=1)], 0),
    "k_shell": (lambda f, G, s, t, V: [f(G), f(G, k=1)], 0),
    "k_crust": (lambda f, G, s, t, V: [f(G), f(G, k=1)], 0),
    "k_corona": (lambda f, G, s, t, V: [f(G, 1), f(G, 2)], 0),
    "k_truss": (lambda f, G, s, t, V: [f(G, 3), f(G, 2), f(G, 4)], 0),
    # link prediction
    "jaccard_coefficient": (lambda f, G, s, t, V: [list(f(G)), list(f(G, [(s, t), (s, s)]))], 0),
    "preferential_attachment": (lambda f, G, s, t, V: [list(f(G)), list(f(G, [(s, "missing")]))], 0),
    "resource_allocation_index": (lambda f, G, s, t, V: [list(f(G)), list(f(G, [(s, t)]))], ROUND),
    "adamic_adar_index": (lambda f, G, s, t, V: [list(f(G)), list(f(G, [(s, t)]))], ROUND),
    # structure
    "isolates": (lambda f, G, s, t, V: [list(f(G))], 0),
    "is_isolate": (lambda f, G, s, t, V: [f(G, s), f(G, t)], 0),
    "number_of_isolates": (lambda f, G, s, t, V: [f(G)], 0),
    "number_of_selfloops": (lambda f, G, s, t, V: [f(G)], 0),
    "is_empty": (lambda f, G, s, t, V: [f(G)], 0),
    "overall_reciprocity": (lambda f, G, s, t, V: [f(G)], 0),
    "reciprocity": (lambda f, G, s, t, V: [f(G), f(G, s), f(G, V[:4])], 0),
    # conversions and subgraphs
    "to_scipy_sparse_array": (lambda f, G, s, t, V: [f(G).toarray().tolist(), f(G, nodelist=V[::-1], weight=None,
                                                                                  format="coo").toarray().tolist(),
                                                     f(G, format="bogus"), f(G, nodelist=[s, s])], 0),
    "to_dict_of_lists": (lambda f, G, s, t, V: [f(G), f(G, V[:3])], 0),
    "ego_graph": (lambda f, G, s, t, V: [f(G, s), f(G, s, radius=2, center=False), f(G, s, radius=2.5, distance="weight")],
                  0),
    "relabel_nodes": (lambda f, G, s, t, V: [f(G, {s: "new"}), f(G, lambda v: (v, 1))], 0),
    "convert_node_labels_to_integers": (lambda f, G, s, t, V: [f(G), f(G, 5, "decreasing degree", "old")], 0),
}


def test_every_function_has_a_case():
    assert set(CASES) == set(FUNCTIONS)
    assert len(FUNCTIONS) >= 90


def _function(name):
    return getattr(nx, name, None) or getattr(nx.community, name)


SERVED: dict = {}  # function -> calls the backend served (not declined) over all graphs


def served(name, f):
    """``f`` called with the backend; where the backend declines (``NotImplementedError``: can_run's
    reason, or one found in the edges), networkx runs it, as with ``nx.config.fallback_to_nx``."""
    def call(*args, **kwargs):
        try:
            out = f(*args, **kwargs, **B)
        except (NotImplementedError, RuntimeError) as err:  # networkx 3.3 refuses with a RuntimeError
            if isinstance(err, RuntimeError) and "ooc_graph" not in str(err):
                raise
            return f(*args, **kwargs)
        SERVED[name] = SERVED.get(name, 0) + 1
        return out
    return call


@pytest.mark.parametrize("graph", list(GRAPHS))
def test_against_networkx(graph):
    G = GRAPHS[graph]
    s, t, V = _nodes(G)
    failures = []
    for name, (case, tol) in CASES.items():
        f = _function(name)
        if "ooc_graph" not in getattr(f, "backends", ()):
            continue  # not dispatchable in this networkx (is_empty, number_of_selfloops before 3.5)
        want = _outcome(lambda: case(f, G, s, t, V))
        got = _outcome(lambda: case(served(name, f), G, s, t, V))
        if name == "hits" and G.number_of_edges() and nx.is_bipartite(G):
            continue  # the largest singular value is repeated: networkx's svds and the power iteration find two of its vectors
        if not _same(got, want, tol):
            failures.append(f"{name}: {str(got)[:300]}\n    networkx: {str(want)[:300]}")
    assert not failures, "\n".join(failures)


def test_every_function_is_served():
    """Each function is served (not declined) in some call above (run after them, in file order)."""
    if len(SERVED) < 10:
        pytest.skip("runs after test_against_networkx")
    dispatchable = {name for name in FUNCTIONS if "ooc_graph" in getattr(_function(name), "backends", ())}
    assert sorted(dispatchable - set(SERVED)) == []

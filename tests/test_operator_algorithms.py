"""The algorithms written on the general edge operator, against networkx (or a plain reference)
on the seeded random graphs of test_algorithms (directed and undirected, weighted, self-loops,
duplicates, intervals from 1 vertex, budgets down to 2 KiB) and on the edge cases."""

import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import ParameterError

from conftest import edge_array, nx_graph, random_edges
from test_algorithms import CASES, _convert


def close(got, want, rtol=1e-8, atol=1e-12):
    np.testing.assert_allclose(got, [want[v] for v in range(len(got))], rtol=rtol, atol=atol)


def check_weighted_pagerank(G, H, memory):
    ref = nx.pagerank(H, weight="weight", tol=1e-15, max_iter=100_000)
    r = ooc_graph.pagerank(G, device="cpu", memory=memory, weight="weight", tol=1e-13, max_iter=100_000)
    close(r.values, ref, rtol=1e-7, atol=1e-11)


@pytest.mark.parametrize("seed,directed,weighted,interval_size,chunk_arcs,memory", CASES)
def test_random_graphs(tmp_path, seed, directed, weighted, interval_size, chunk_arcs, memory):
    G, H, n = _convert(tmp_path, seed, directed, weighted, interval_size, chunk_arcs)
    check_weighted_pagerank(G, H, memory)


def test_personalization_by_original_id(tmp_path):
    rng = np.random.default_rng(3)
    src, dst, w = random_edges(rng, n=25, m=70, weighted=True, big_ids=True)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "big.h5", interval_size=4, progress=False)
    labels = np.unique(np.concatenate([src, dst]))
    H = nx_graph(src, dst, w, directed=True, nodes=labels.tolist())
    p = {int(v): float(i % 3) for i, v in enumerate(labels[::2])}
    ref = nx.pagerank(H, personalization=p, weight="weight", tol=1e-15, max_iter=100_000)
    r = ooc_graph.pagerank(G, device="cpu", personalization=p, weight="weight", tol=1e-13, max_iter=100_000)
    got = r.to_dict()
    for v in labels.tolist():
        assert got[v] == pytest.approx(ref[v], rel=1e-7, abs=1e-12)
    with pytest.raises(ParameterError, match="not in the graph"):
        ooc_graph.pagerank(G, device="cpu", personalization={7: 1.0})
    with pytest.raises(ParameterError, match="personalization"):
        ooc_graph.pagerank(G, device="cpu", personalization={int(labels[0]): 0.0})


def test_weight_checked(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "p.h5", progress=False)
    with pytest.raises(ParameterError, match="weight must be"):
        ooc_graph.pagerank(G, device="cpu", weight=3)

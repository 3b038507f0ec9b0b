"""Betweenness by the engine's Brandes over the CSR in memory (a queue traversal per source: numba's
kernels on the CPU, the device's on a GPU) against networkx and against the level sweeps on the
edge operator (``WHOLE_BRANDES`` off), on seeded random graphs (directed and undirected, hops and
weights, exact and sampled, every scaling) and on the edge cases."""

import random

import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.kernels import cpu

from conftest import edge_array, nx_graph, random_edges
from test_algorithms import _convert
from test_weighted_betweenness import close, multigraph_reference, random_weighted, variant

pytest.importorskip("numba", reason="the CPU's Brandes kernels need numba (the 'cpu' extra)")

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
bc = ooc_graph.betweenness_centrality


def kinds(r) -> set:
    return {p["kind"] for p in r.stats["per_pass"]}


def both(G, **kw):
    """The call by Engine.brandes and by the level sweeps: ``(fast, sweeps)``."""
    with config.set({"traversal.whole_brandes": False}):
        sweeps = bc(G, **kw)
    fast = bc(G, **kw)
    assert "brandes" not in kinds(sweeps)
    return fast, sweeps


def expect_fast(r, G, device, weight):
    """The call ran on Engine.brandes: always on the CPU (numba is here), on a GPU for hops (arcs
    of one weight count hops)."""
    weighted = weight is not None and G.weighted and G.num_arcs > 0 and \
        float(G.attrs["min_weight"]) != float(G.attrs["max_weight"])
    ran = "brandes" in kinds(r)
    assert ran == (device == "cpu" or not weighted), kinds(r)
    if ran:
        assert r.stats["traversals"] == r.iterations


def same(fast, sweeps, n):
    """The two paths agree: values to rounding, and the levels each source reported (the sweeps
    with weights report their distances' traversals too: the sources' reports come in order
    among those)."""
    close(fast.values, dict(enumerate(sweeps.values.tolist())), n)
    assert fast.iterations == sweeps.iterations
    reports = fast.stats["convergence"]
    if "brandes" not in kinds(fast):  # (weights on a GPU) both calls swept: the same reports
        assert reports == sweeps.stats["convergence"]
        return
    assert [i for i, _ in reports] == list(range(1, fast.iterations + 1))
    rest = iter(sweeps.stats["convergence"])
    assert all(report in rest for report in reports), (reports, sweeps.stats["convergence"])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(60))
def test_against_networkx_and_the_sweeps(tmp_path, monkeypatch, device, seed):
    directed = seed % 2 == 0
    if seed % 3 == 0:  # arc weights: integer ties, decimal sums, uniform
        G, H, *_ = random_weighted(tmp_path, 300 + seed, directed, [4, None][seed % 2], [5, None][seed // 2 % 2])
    else:  # hops; a weighted store (seed % 3 == 1) is read for its arcs only
        G, H, _ = _convert(tmp_path, 300 + seed, directed, seed % 3 == 1, [1, 7, None][seed % 3], [5, 64][seed % 2])
    n = G.num_vertices
    kw = variant(seed, n)
    for weight in ("weight", None) if seed % 3 == 0 else (None,):
        ref = nx.betweenness_centrality(H, weight=weight, **kw)
        fast, sweeps = both(G, device=device, weight=weight, **kw)
        expect_fast(fast, G, device, weight)
        close(fast.values, ref, n)
        close(sweeps.values, ref, n)
        same(fast, sweeps, n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(6))
def test_parallel_arcs_count_as_paths(tmp_path, monkeypatch, device, seed):
    """dedupe=False: each parallel arc is a path of its own, on hops and with weights."""
    directed = seed % 2 == 0
    G, _, src, dst, w = random_weighted(tmp_path, 400 + seed, directed, 4, 5, dedupe=False,
                                        kind=["ties", "decimal"][seed // 2 % 2])
    n = G.num_vertices
    for weight, arcs in (("weight", w), (None, np.ones_like(w))):
        fast, sweeps = both(G, device=device, weight=weight, normalized=False)
        expect_fast(fast, G, device, weight)
        close(fast.values, multigraph_reference(n, src, dst, arcs, directed), n)
        same(fast, sweeps, n)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_cases(tmp_path, monkeypatch, device):
    empty = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", progress=False)
    for weight in (None, "weight"):
        assert bc(empty, device=device, weight=weight).values.size == 0
    one = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "1.h5", num_vertices=1, progress=False)
    assert bc(one, device=device).values.tolist() == [0.0]
    assert bc(one, device=device, k=1, seed=3, endpoints=True).values.tolist() == [0.0]
    isolated = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "iso.h5", num_vertices=4, progress=False)
    r = bc(isolated, device=device)
    assert r.values.tolist() == [0.0] * 4 and "brandes" in kinds(r)
    loops = ooc_graph.convert(np.array([[0, 0, 1.0], [1, 1, 2.0]]), tmp_path / "l.h5", num_vertices=3,
                              progress=False)
    for weight in (None, "weight"):
        assert bc(loops, device=device, weight=weight).values.tolist() == [0.0, 0.0, 0.0]
    # self-loops, isolated vertices, parts the sources cannot reach, chains both ways round
    edges = [(0, 0, 2.0), (1, 2, 1.5), (2, 3, 0.5), (1, 3, 2.0), (3, 3, 0.25), (5, 6, 1.0), (6, 4, 3.0),
             (7, 8, 1.0), (8, 9, 1.0), (9, 10, 1.0), (12, 11, 1.0), (11, 10, 1.0)]
    for directed in (True, False):
        H = nx.DiGraph() if directed else nx.Graph()
        H.add_nodes_from(range(14))
        H.add_weighted_edges_from(edges)
        G = ooc_graph.convert(np.array(edges), tmp_path / f"u{directed}.h5", directed=directed, num_vertices=14,
                              progress=False)
        for weight in (None, "weight"):
            for endpoints in (False, True):
                for normalized in (False, True):
                    kw = dict(weight=weight, endpoints=endpoints, normalized=normalized)
                    fast, sweeps = both(G, device=device, **kw)
                    expect_fast(fast, G, device, weight)
                    close(fast.values, nx.betweenness_centrality(H, **kw), 14)
                    same(fast, sweeps, 14)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(4))
def test_ids_beyond_int32(tmp_path, monkeypatch, device, seed):
    directed = seed % 2 == 0
    if seed < 2:
        G, H, *_ = random_weighted(tmp_path, 500 + seed, directed, 8, big_ids=True)
    else:
        rng = np.random.default_rng(500 + seed)
        src, dst, w = random_edges(rng, n=25, m=60, big_ids=True)
        G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "big.h5", directed=directed, interval_size=8,
                              progress=False)
        H = nx_graph(src, dst, w, directed=directed, nodes=np.unique(np.concatenate([src, dst])).tolist())
    for weight in ("weight", None) if seed < 2 else (None,):
        r = bc(G, device=device, weight=weight)
        expect_fast(r, G, device, weight)
        got, ref = r.to_dict(), nx.betweenness_centrality(H, weight=weight)
        assert got.keys() == ref.keys()
        assert all(got[v] == pytest.approx(ref[v], abs=1e-12) for v in ref)


@pytest.mark.parametrize("device", DEVICES)
def test_sampled_sources_and_calls_of_a_few_sources(tmp_path, monkeypatch, configure, device):
    """Sources drawn as networkx draws them (seeds and random.Random), run a few a call: every
    source reported once, in order, with the levels the sweeps report."""
    configure({"traversal.brandes_sources_per_call": 3})
    G, H, *_ = random_weighted(tmp_path, 7, False, 4, 16)
    n = G.num_vertices
    for weight in (None, "weight"):
        for k, seed in ((1, 0), (4, 5), (n - 1, 2), (n, 1)):
            for endpoints in (False, True):
                ref = nx.betweenness_centrality(H, k=k, seed=seed, endpoints=endpoints, weight=weight)
                fast, sweeps = both(G, device=device, k=k, seed=seed, endpoints=endpoints,
                                    weight=weight)
                expect_fast(fast, G, device, weight)
                close(fast.values, ref, n)
                same(fast, sweeps, n)
            ours, theirs = random.Random(seed), random.Random(seed)
            ref = nx.betweenness_centrality(H, k=k, seed=theirs, weight=weight, normalized=False)
            close(bc(G, device=device, k=k, seed=ours, weight=weight, normalized=False).values, ref, n)
            assert ours.random() == theirs.random()


def test_out_of_core_and_without_compiled_kernels_the_sweeps_run(tmp_path, monkeypatch, configure):
    """A CSR beyond the budget, or no compiled kernels: the level sweeps, the same answers (from
    5 of the 60 vertices, drawn as networkx draws them: each source's sweeps read every chunk
    of 16 arcs, ~20 s a weight for all 60 on the CPU)."""
    rng = np.random.default_rng(11)
    n = 60
    src, dst, w = rng.integers(0, n, 200), rng.integers(0, n, 200), rng.integers(1, 4, 200).astype(np.float64)
    G = ooc_graph.convert((src, dst, w), tmp_path / "g.h5", num_vertices=n, interval_size=8, chunk_arcs=16,
                          weight_dtype="float64", progress=False)
    H = nx_graph(src, dst, w, directed=True, n=n)
    for weight in (None, "weight"):
        ref = nx.betweenness_centrality(H, k=5, seed=4, weight=weight)
        small = bc(G, device="cpu", memory="4KiB", k=5, seed=4, weight=weight)  # a CSR of more than a kilobyte
        assert "brandes" not in kinds(small) and small.stats["passes"] > 0
        close(small.values, ref, n)
        configure({"cpu.compiled": False})
        plain = bc(G, device="cpu", k=5, seed=4, weight=weight)
        configure({"cpu.compiled": True})
        assert "brandes" not in kinds(plain)
        close(plain.values, ref, n)


@pytest.mark.parametrize("weighted", [False, True])
def test_threads_share_the_sources(tmp_path, weighted):
    """One copy of the scratch or one per thread: the same sums, to rounding."""
    G, _, *_ = random_weighted(tmp_path, 12, False, kind="decimal")
    indptr, indices, w = G.csr("out")
    n, sources = G.num_vertices, np.arange(G.num_vertices)
    out = []
    for spare in (0, 1 << 30):
        sums = np.zeros(n)
        levels, arcs = cpu.brandes(np.asarray(indptr), np.asarray(indices), w if weighted else None, sources, sums,
                                   True, spare)
        out.append((sums, levels.tolist(), arcs))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-13)
    assert out[0][1:] == out[1][1:] and out[0][2] > 0

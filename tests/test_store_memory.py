"""A store kept in memory (``convert(..., ":memory:")``) holds the file store's datasets, byte for
byte, answers every algorithm as the file does, and refuses with a reason what needs a file."""

import tempfile

import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import ParameterError, StoreError
from ooc_graph.store.memory import MemoryDataset, MemoryGraph, MemoryGroup

from conftest import random_edges
from test_ingest_paths import contents


def memory_contents(G):
    """:func:`test_ingest_paths.contents` of an in-memory store (links not followed, as h5py's
    ``visititems`` does not)."""
    out = {}

    def visit(group, prefix):
        for name, node in group._members.items():
            if isinstance(node, MemoryGroup):
                visit(node, f"{prefix}{name}/")
            elif isinstance(node, MemoryDataset):
                out[prefix + name] = (node.dtype.str, node.shape, node[()].tobytes())
    visit(G._h5, "")
    out["attrs"] = {k: v for k, v in G._h5.attrs.items() if k not in ("store_id", "built_by")}
    return out


def assert_same(memory, path):
    a, b = memory_contents(memory), contents(path)
    assert a.keys() == b.keys()
    assert a["attrs"].keys() == b["attrs"].keys()
    for k in a["attrs"]:
        assert np.array_equal(a["attrs"][k], b["attrs"][k]), k
    for name in a.keys() - {"attrs"}:
        assert a[name] == b[name], name


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The system's temporary folder, where an in-memory build keeps its scratch: checked empty after."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    assert list(folder.iterdir()) == []


CASES = {  # name: (directed, weighted, convert keywords)
    "directed": (True, False, {}),
    "undirected weighted": (False, True, {}),
    "spilled, many buckets": (True, True, {"memory": "64KB", "interval_size": 64, "workers": 2}),
    "augmented": (False, False, {"augment": True, "interval_size": 100, "chunk_arcs": 1000}),
}


@pytest.mark.parametrize("case", CASES)
def test_the_file_store_in_memory(tmp_path, scratch, case):
    directed, weighted, kw = CASES[case]
    src, dst, w = random_edges(np.random.default_rng(1), n=500, m=4000, weighted=weighted)
    edges = (src, dst, w) if weighted else (src, dst)
    G = ooc_graph.convert(edges, ":memory:", directed=directed, progress=False, **kw)
    F = ooc_graph.convert(edges, tmp_path / "g.h5", directed=directed, progress=False, **kw)
    assert isinstance(G, MemoryGraph) and G.in_memory and not F.in_memory
    if "memory" in kw:
        assert G.built_by["stages"]["in_memory"] == 0  # spilled to the scratch folder, now removed
    assert_same(G, tmp_path / "g.h5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.h5", "tmp"]


def test_string_labels_in_memory(tmp_path, scratch):
    import networkx as nx
    H = nx.relabel_nodes(nx.path_graph(6), {i: f"v{i}" for i in range(6)})
    G = ooc_graph.convert(H, ":memory:", progress=False)
    ooc_graph.convert(H, tmp_path / "g.h5", progress=False)
    assert_same(G, tmp_path / "g.h5")
    assert G.labels.tolist() == sorted(f"v{i}" for i in range(6))
    assert ooc_graph.bfs(G, "v0").depth.tolist() == list(range(6))


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("directed", [True, False])
def test_algorithms_answer_as_on_the_file(tmp_path, scratch, directed, device):
    src, dst, w = random_edges(np.random.default_rng(2), n=300, m=1500, weighted=True)
    G = ooc_graph.convert((src, dst, w), ":memory:", directed=directed, interval_size=64, progress=False)
    F = ooc_graph.convert((src, dst, w), tmp_path / "g.h5", directed=directed, interval_size=64, progress=False)
    calls = {"bfs": ("depth", {"source": 0}), "sssp": ("distance", {"source": 0}), "pagerank": ("values", {}),
             "wcc": ("labels", {}), "scc": ("labels", {}), "core_number": ("core", {}),
             "katz_centrality": ("values", {"alpha": 0.01})}
    if not directed:
        calls.update(triangle_count=("counts", {}), lcc=("values", {}), louvain=("labels", {"seed": 1}))
    for name, (array, kw) in calls.items():
        on_memory, on_file = (getattr(getattr(ooc_graph, name)(g, device=device, **kw), array) for g in (G, F))
        if name in ("pagerank", "katz_centrality") and device == "gpu":  # float atomics: order varies
            np.testing.assert_allclose(on_memory, on_file, rtol=1e-12, atol=1e-15, err_msg=name)
        else:
            assert np.array_equal(on_memory, on_file), name


def test_what_needs_a_file_is_refused(scratch):
    G = ooc_graph.convert((np.array([0, 1]), np.array([1, 2])), ":memory:", progress=False)
    r = ooc_graph.bfs(G, 0)
    with pytest.raises(StoreError, match="saving a result needs a store file"):
        r.save()
    with pytest.raises(StoreError, match="compacting needs a store file"):
        G.compact()
    assert G.results() == [] and G.fallback_results() == []
    with pytest.raises(ParameterError, match="no result"):
        G.load_result("bfs")
    with pytest.raises(ParameterError, match="kept in memory"):  # before any worker is started
        ooc_graph.bfs(G, 0, workers=2)
    G.detach()  # nothing to let go of: still readable
    assert ooc_graph.wcc(G).labels.tolist() == [0, 0, 0]
    G.close()
    with pytest.raises(StoreError, match="closed"):
        ooc_graph.bfs(G, 0)


def test_file_stores_unchanged_by_the_option(tmp_path):
    """A path named like the option's value, in a folder, is an ordinary store."""
    G = ooc_graph.convert((np.array([0]), np.array([1])), tmp_path / ":memory:", progress=False)
    assert not G.in_memory and (tmp_path / ":memory:").is_file()

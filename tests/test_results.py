"""Results where users want them: original ids (integers or strings) in to_dict, to_pandas and
to_arrow, "no parent" as a null; stores whose vertex ids are strings."""

import sys

import h5py
import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph import UNREACHABLE
from ooc_graph.errors import InputError, ParameterError
from ooc_graph.store import _format as F

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


def _csv(tmp_path, text, name="e.csv", **kw):
    (tmp_path / name).write_text(text)
    return ooc_graph.convert(tmp_path / name, tmp_path / (name + ".h5"), progress=False, **kw)


def test_parent_in_original_ids(tmp_path):
    G = _csv(tmp_path, "100,5000000000\n5000000000,7\n")
    r = ooc_graph.bfs(G, 100, device="cpu")
    assert r.to_dict("parent") == {7: 5000000000, 100: None, 5000000000: 100}
    assert r.to_dict("depth") == {7: 2, 100: 0, 5000000000: 1}
    assert r.parent.tolist() == [2, -1, 1]  # the array itself stays in internal ids
    df = r.to_pandas()
    assert list(df.columns) == ["vertex", "depth", "parent"]
    assert df["vertex"].tolist() == [7, 100, 5000000000] and str(df["parent"].dtype) == "Int64"
    assert df["parent"].isna().tolist() == [False, True, False] and df["parent"][0] == 5000000000
    t = r.to_arrow()
    assert t.column_names == ["vertex", "depth", "parent"]
    assert t.column("parent").to_pylist() == [5000000000, None, 100]
    s = ooc_graph.sssp(G, 5000000000, device="cpu")
    assert s.to_dict("parent") == {7: 5000000000, 100: None, 5000000000: None}
    assert s.to_arrow().column("distance").to_pylist() == [1.0, float("inf"), 0.0]


def test_minus_one_is_an_id_not_no_parent(tmp_path):
    G = _csv(tmp_path, "-1,4\n4,9\n")
    r = ooc_graph.bfs(G, -1, device="cpu")
    assert r.to_dict("parent") == {-1: None, 4: -1, 9: 4}
    assert r.to_pandas()["parent"].isna().tolist() == [True, False, False]


def test_identity_ids_and_unreachable(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", num_vertices=3, progress=False)
    r = ooc_graph.bfs(G, 0, device="cpu")
    assert r.to_dict("parent") == {0: None, 1: 0, 2: None}
    assert r.to_dict("depth")[2] == UNREACHABLE
    df = ooc_graph.pagerank(G, device="cpu").to_pandas()
    assert list(df.columns) == ["vertex", "values"] and df["values"].sum() == pytest.approx(1.0)
    assert ooc_graph.wcc(G, device="cpu").to_arrow().column("labels").to_pylist() == [0, 0, 2]
    with pytest.raises(ParameterError, match="no array 'nope'"):
        r.to_dict("nope")


def test_empty_result_frames(tmp_path):
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", progress=False)
    assert len(ooc_graph.pagerank(G, device="cpu").to_pandas()) == 0
    assert ooc_graph.wcc(G, device="cpu").to_arrow().num_rows == 0


def test_missing_dataframe_libraries_name_the_extra(tmp_path, monkeypatch):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False)
    r = ooc_graph.wcc(G, device="cpu")
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ParameterError, match=r"pandas: pip install pandas \(or pip install -e '\.\[dataframe\]' in a "
                                             r"checkout of ooc_graph\)$"):
        r.to_pandas()
    with pytest.raises(ParameterError, match=r"pyarrow: pip install pyarrow \(or pip install -e '\.\[dataframe\]'"):
        r.to_arrow()


# -- string vertex ids --------------------------------------------------------------------------

def test_csv_with_string_ids(tmp_path):
    G = _csv(tmp_path, "source,target\nalice,bob\nbob,carol\ndave,erin\nbob,alice\n")
    assert G.string_labels and G.labels.tolist() == ["alice", "bob", "carol", "dave", "erin"]
    assert G.num_vertices == 5 and G.num_arcs == 4
    with ooc_graph.open(G.path) as again:  # stored, not only remembered
        assert again.labels.tolist() == G.labels.tolist()
    r = ooc_graph.bfs(G, "alice", device="cpu")
    assert r.to_dict("parent") == {"alice": None, "bob": "alice", "carol": "bob", "dave": None, "erin": None}
    assert r.parameters["source"] == "alice"
    df = r.to_pandas()
    assert df["vertex"].tolist() == ["alice", "bob", "carol", "dave", "erin"]
    assert df["parent"].isna().tolist() == [True, False, False, True, True]
    assert r.to_arrow().column("parent").to_pylist() == [None, "alice", "bob", None, None]
    w = ooc_graph.wcc(G, device="cpu")
    assert w.to_dict() == {"alice": "alice", "bob": "alice", "carol": "alice", "dave": "dave", "erin": "dave"}
    assert w.num_components == 2
    assert ooc_graph.sssp(G, "bob", device="cpu").to_dict("distance")["carol"] == 1.0
    w.save()  # arrays are stored by internal id
    assert G.load_result("wcc")["labels"].tolist() == [0, 0, 0, 3, 3]


def test_csv_header_choices(tmp_path):
    G = _csv(tmp_path, "alice,bob\nbob,carol\n", header=False)
    assert G.labels.tolist() == ["alice", "bob", "carol"]
    G = _csv(tmp_path, "alice,bob\nbob,carol\n", name="h.csv")  # string ids: a header by default
    assert G.labels.tolist() == ["bob", "carol"]
    G = _csv(tmp_path, "u,v\n1,2\n", name="i.csv")  # integer ids keep their rule
    assert not G.string_labels and G.num_arcs == 1
    G = _csv(tmp_path, "7,8\n8,9\n", name="s.csv", string_ids=True, header=False)
    assert G.labels.tolist() == ["7", "8", "9"]
    with pytest.raises(ParameterError, match="vertex 7 is not in the graph"):
        ooc_graph.bfs(G, 7, device="cpu")


def test_edgelist_with_string_ids_weights_and_unicode(tmp_path):
    (tmp_path / "s.txt").write_text("# urls\nhttp://a.com/x http://b.org 1.5\n\nhttp://b.org ü 2\nzz ü 0.25\n")
    G = ooc_graph.convert(tmp_path / "s.txt", tmp_path / "s.h5", progress=False, directed=False)
    assert G.labels.tolist() == ["http://a.com/x", "http://b.org", "zz", "ü"]  # Python's string order
    assert G.weighted and not G.directed
    d = ooc_graph.sssp(G, "http://a.com/x", device="cpu").to_dict("distance")
    assert d == {"http://a.com/x": 0.0, "http://b.org": 1.5, "zz": 3.75, "ü": 3.5}
    with h5py.File(G.path, "r") as h5:
        assert F.LABELS not in h5 and h5[F.LABEL_OFFSETS].shape == (5,)


def test_string_ids_errors(tmp_path):
    (tmp_path / "bad.txt").write_text("a b 1\nc d x\n")
    with pytest.raises(InputError, match="line 2: not a valid number"):
        ooc_graph.convert(tmp_path / "bad.txt", tmp_path / "b.h5", progress=False)
    (tmp_path / "m.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    with pytest.raises(ParameterError, match="string_ids=True applies to edgelist and csv"):
        ooc_graph.convert(tmp_path / "m.mtx", tmp_path / "m.h5", string_ids=True, progress=False)
    (tmp_path / "c.txt").write_text("a b\nc d\n")
    with pytest.raises(ParameterError, match="num_vertices= and relabel=True do not apply"):
        ooc_graph.convert(tmp_path / "c.txt", tmp_path / "c.h5", num_vertices=9, progress=False)


def test_networkx_and_arrays_with_string_nodes(tmp_path):
    H = nx.Graph([("x", "y"), ("y", "z"), ("q", "r")])
    H.add_node("lonely")
    G = ooc_graph.convert(H, tmp_path / "n.h5", progress=False)
    assert G.labels.tolist() == ["lonely", "q", "r", "x", "y", "z"] and not G.directed
    assert ooc_graph.wcc(G, device="cpu").to_dict() == {"lonely": "lonely", "q": "q", "r": "q", "x": "x",
                                                        "y": "x", "z": "x"}
    ref = nx.pagerank(H, tol=1e-13, max_iter=10_000)
    got = ooc_graph.pagerank(G, device="cpu", tol=1e-12, max_iter=1000).to_dict()
    assert got == pytest.approx(ref, abs=1e-6)
    with pytest.raises(InputError, match="all integers or all strings"):
        ooc_graph.convert(nx.Graph([(1, "a")]), tmp_path / "mixed.h5", progress=False)
    with pytest.raises(InputError, match=r"\(0, 0\)"):
        ooc_graph.convert(nx.grid_2d_graph(2, 2), tmp_path / "grid.h5", progress=False)
    G = ooc_graph.convert((np.array(["b", "a"]), np.array(["c", "b"]), np.array([2.0, 1.0])),
                          tmp_path / "a.h5", progress=False)
    assert G.labels.tolist() == ["a", "b", "c"] and G.weighted
    assert ooc_graph.sssp(G, "a", device="cpu").to_dict("distance") == {"a": 0.0, "b": 1.0, "c": 3.0}
    G = ooc_graph.convert(np.array([["u1", "u2"], ["u2", "u3"]]), tmp_path / "m.h5", progress=False)
    assert G.labels.tolist() == ["u1", "u2", "u3"] and G.num_arcs == 2


def test_output_choices_are_checked_before_any_work(tmp_path, monkeypatch):
    """``output="cupy"`` keeps results on a GPU of one process: asked of a CPU run, a distributed
    call or a job, or misspelt, it is a ParameterError naming the choice, before anything starts."""
    from ooc_graph.runtime import cluster
    G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), tmp_path / "p.h5", progress=False)
    with pytest.raises(ParameterError, match=r"unknown output 'torch' \(valid: numpy, cupy\)"):
        ooc_graph.pagerank(G, output="torch")
    with pytest.raises(ParameterError, match="runs on the CPU"):
        ooc_graph.bfs(G, 0, device="cpu", output="cupy")
    monkeypatch.setattr(cluster, "local_cpu_client", lambda n: pytest.fail("a cluster was started"))
    with pytest.raises(ParameterError, match="host memory"):
        ooc_graph.wcc(G, workers=2, output="cupy")
    assert ooc_graph.wcc(G, device="cpu", output="numpy").labels.tolist() == [0, 0, 0]


def test_the_readme_names_the_frames_columns(tmp_path):
    """The README's example of ``to_pandas()`` lists the columns a BFS result has (it claimed
    cuGraph's layout, whose columns are ``vertex, distance, predecessor``)."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("r.to_pandas()"))
    named = re.search(r"DataFrame: ([\w, ]+?)(;|\(|$)", line).group(1).split(", ")
    assert "cuGraph's layout" not in readme
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False)
    assert list(ooc_graph.bfs(G, 0, device="cpu").to_pandas().columns) == named


def test_repr_is_short(tmp_path):
    """``repr(result)`` printed every pass record (~5 KB for PageRank on 1,024 vertices, ~10 KB
    on larger graphs): now one line with the algorithm, the run, key figures and the arrays' shapes,
    for every result class."""
    from ooc_graph.algorithms import _result
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, progress=False)
    r = ooc_graph.pagerank(G, device="cpu")
    assert len(r.passes) > 5
    text = repr(r)
    assert text.startswith(f"<ooc_graph.PageRankResult pagerank: {r.iterations} iterations (converged), ")
    assert text.endswith("; values float64[1,024]>") and len(text) < 200, text
    assert repr(ooc_graph.triangle_count(G, device="cpu")).count(" triangles; counts int64[1,024]>") == 1
    classes = [getattr(ooc_graph.algorithms, name) for name in ooc_graph.algorithms.__all__ if name.endswith("Result")]
    assert len(classes) > 10 and all(c.__repr__ is _result.Result.__repr__ for c in classes)
    assert all(issubclass(c, _result.Result) and getattr(_result, c.__name__) is c for c in classes)  # found there

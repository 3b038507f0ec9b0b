"""Every input format round-trips; bad input is a clear error and leaves no file behind."""

import bz2
import gzip
import lzma

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import ooc_graph
from ooc_graph.errors import InputError, ParameterError

from conftest import DATA, random_edges


def arcs(G):
    """Sorted (src, dst, w) triples of the store, from its out-CSR, in original ids."""
    indptr, indices, w = G.csr("out")
    src = np.repeat(np.arange(G.num_vertices), np.diff(indptr))
    lab = G.labels if G.labels is not None else np.arange(G.num_vertices)
    out = [(int(lab[s]), int(lab[d]), None if w is None else float(w[i]))
           for i, (s, d) in enumerate(zip(src, indices))]
    return sorted(out, key=lambda t: (t[0], t[1]))


def expected(src, dst, w, *, directed=True, offset=0):
    best = {}
    pairs = [(s - offset, d - offset) for s, d in zip(src, dst)]
    for i, (s, d) in enumerate(pairs):
        keys = [(s, d)] if directed else {(s, d), (d, s)}
        for k in keys:
            val = None if w is None else float(np.float32(w[i]))
            best[k] = val if k not in best or val is None else min(best[k], val)
    return sorted([(s, d, v) for (s, d), v in best.items()], key=lambda t: (t[0], t[1]))


@pytest.fixture
def edges():
    rng = np.random.default_rng(5)
    return random_edges(rng, n=50, m=200, weighted=True)


def write_text(path, src, dst, w=None, sep=" ", header=None, comments=("# a comment",), opener=open):
    lines = list(comments) + ([header] if header else [])
    for i, (s, d) in enumerate(zip(src, dst)):
        lines.append(sep.join([str(s), str(d)] + ([repr(float(w[i]))] if w is not None else [])))
    with opener(path, "wt") as f:
        f.write("\n".join(lines) + "\n")


@pytest.mark.parametrize("suffix,opener", [(".txt", open), (".txt.gz", gzip.open), (".txt.xz", lzma.open),
                                           (".txt.bz2", bz2.open)])
@pytest.mark.parametrize("weighted", [False, True])
def test_edgelist_round_trip(tmp_path, edges, suffix, opener, weighted):
    src, dst, w = edges
    w = w if weighted else None
    path = tmp_path / f"e{suffix}"
    write_text(path, src, dst, w, sep="\t", comments=("# SNAP header", "% other comment"), opener=opener)
    G = ooc_graph.convert(path, tmp_path / "g.h5", progress=False)
    assert G.weighted == weighted and G.directed
    assert arcs(G) == expected(src, dst, w)


def test_edgelist_small_blocks_and_blank_lines(tmp_path, edges, monkeypatch, configure):
    configure({"ingest.text_block_bytes": 17})  # many blocks, lines split across reads
    src, dst, w = edges
    path = tmp_path / "e.txt"
    write_text(path, src, dst, None, comments=("# c", "", "   "))
    G = ooc_graph.convert(path, tmp_path / "g.h5", directed=False, progress=False)
    assert arcs(G) == expected(src, dst, None, directed=False)


def test_csv_with_header(tmp_path, edges):
    src, dst, w = edges
    path = tmp_path / "e.csv"
    write_text(path, src, dst, w, sep=",", header="source,target,weight", comments=())
    G = ooc_graph.convert(path, tmp_path / "g.h5", progress=False)
    assert arcs(G) == expected(src, dst, w)


def test_tsv_and_delimiter(tmp_path, edges):
    src, dst, _ = edges
    path = tmp_path / "e.csv"
    write_text(path, src, dst, None, sep=";", comments=())
    G = ooc_graph.convert(path, tmp_path / "g.h5", delimiter=";", progress=False)
    assert arcs(G) == expected(src, dst, None)


@pytest.mark.parametrize("field,symmetry", [("pattern", "general"), ("integer", "general"),
                                            ("real", "symmetric")])
def test_matrix_market(tmp_path, edges, field, symmetry):
    src, dst, w = edges
    n = 50
    path = tmp_path / "m.mtx"
    if field == "integer":
        w = np.floor(w)
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n% comment\n{n} {n} {len(src)}\n")
        for i, (s, d) in enumerate(zip(src, dst)):
            f.write(f"{s + 1} {d + 1}" + ("" if field == "pattern" else f" {w[i]}") + "\n")
    G = ooc_graph.convert(path, tmp_path / "g.h5", progress=False)
    assert G.num_vertices == n and G.directed == (symmetry == "general")
    assert arcs(G) == expected(src, dst, None if field == "pattern" else w, directed=G.directed)


def test_matrix_market_matches_scipy(tmp_path):
    import scipy.io
    A = sp.random(30, 30, density=0.1, random_state=1, format="coo")
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    G = ooc_graph.convert(tmp_path / "a.mtx", tmp_path / "g.h5", weight_dtype="float64", progress=False)
    indptr, indices, w = G.csr("out")
    B = sp.csr_matrix((w, indices, indptr), shape=(30, 30))
    assert abs(B - A.tocsr()).max() < 1e-12


def test_pace_and_dimacs_gr(tmp_path, edges):
    src, dst, w = edges
    pace = tmp_path / "p.gr"
    with open(pace, "w") as f:
        f.write(f"c comment\np tw 50 {len(src)}\n" + "".join(f"{s + 1} {d + 1}\n" for s, d in zip(src, dst)))
    G = ooc_graph.convert(pace, tmp_path / "p.h5", progress=False)
    assert not G.directed and G.num_vertices == 50
    assert arcs(G) == expected(src, dst, None, directed=False)
    sp_ = tmp_path / "d.gr"
    with open(sp_, "w") as f:
        f.write(f"c 9th DIMACS\np sp 50 {len(src)}\n" +
                "".join(f"a {s + 1} {d + 1} {w[i]}\n" for i, (s, d) in enumerate(zip(src, dst))))
    G = ooc_graph.convert(sp_, tmp_path / "d.h5", progress=False)
    assert G.directed and G.weighted
    assert arcs(G) == expected(src, dst, w)


def test_ldbc_vertex_and_edge_files(tmp_path, edges):
    src, dst, w = edges
    base = tmp_path / "g"
    ids = np.unique(np.concatenate([src, dst, [1000, 1001]]))  # two isolated vertices
    (tmp_path / "g.v").write_text("".join(f"{v}\n" for v in ids))
    write_text(tmp_path / "g.e", src, dst, w, comments=())
    G = ooc_graph.convert(base.with_suffix(".e"), tmp_path / "g.h5", progress=False)
    assert G.num_vertices == len(ids)
    np.testing.assert_array_equal(G.labels, ids)
    assert arcs(G) == expected(src, dst, w)


def test_adjacency_lists(tmp_path):
    (tmp_path / "a.adj").write_text("1 2 3\n2 3\n3\n7\n")
    G = ooc_graph.convert(tmp_path / "a.adj", tmp_path / "g.h5", progress=False)
    assert G.labels.tolist() == [1, 2, 3, 7]
    assert arcs(G) == [(1, 2, None), (1, 3, None), (2, 3, None)]


@pytest.mark.parametrize("width", [4, 8])
def test_raw_binary(tmp_path, edges, width):
    src, dst, _ = edges
    path = tmp_path / f"e.bin{8 * width}"
    np.stack([src, dst], axis=1).astype(f"<i{width}").tofile(path)
    G = ooc_graph.convert(path, tmp_path / "g.h5", progress=False)
    assert arcs(G) == expected(src, dst, None)


def test_raw_binary_large_ids_keep_64_bits(tmp_path):
    src = np.array([2**40, 5], np.int64)
    dst = np.array([5, 2**33], np.int64)
    path = tmp_path / "e.bin64"
    np.stack([src, dst], axis=1).tofile(path)
    G = ooc_graph.convert(path, tmp_path / "g.h5", progress=False)
    assert G.labels.tolist() == [5, 2**33, 2**40]
    assert arcs(G) == [(5, 2**33, None), (2**40, 5, None)]


def test_npy_and_python_objects(tmp_path, edges):
    src, dst, w = edges
    np.save(tmp_path / "e.npy", np.stack([src, dst, w], axis=1))
    G = ooc_graph.convert(tmp_path / "e.npy", tmp_path / "a.h5", progress=False)
    assert arcs(G) == expected(src, dst, w)
    G = ooc_graph.convert((src, dst), tmp_path / "b.h5", progress=False)
    assert arcs(G) == expected(src, dst, None)
    A = sp.coo_matrix((w, (src, dst)), shape=(50, 50))
    G = ooc_graph.convert(A.tocsr(), tmp_path / "c.h5", progress=False)
    assert G.num_vertices == 50 and G.weighted  # scipy sums duplicates: compare against the matrix
    Acsr = A.tocsr()
    Acsr.sum_duplicates()
    C = Acsr.tocoo()  # explicit entries, zeros included
    assert sorted((s, d) for s, d, _ in arcs(G)) == sorted(zip(C.row.tolist(), C.col.tolist()))
    H = nx.DiGraph()
    H.add_nodes_from([0, 1, 2, 10])
    H.add_weighted_edges_from([(0, 1, 2.5), (1, 10, 1.0)])
    G = ooc_graph.convert(H, tmp_path / "d.h5", progress=False)
    assert G.labels.tolist() == [0, 1, 2, 10] and G.weighted and G.directed
    assert arcs(G) == [(0, 1, 2.5), (1, 10, 1.0)]


def test_networkx_nodes_neither_integers_nor_strings_refused(tmp_path):
    with pytest.raises(InputError, match="must be all integers or all strings"):
        ooc_graph.convert(nx.path_graph([(0, 1), (2, 3)]), tmp_path / "x.h5", progress=False)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("interval_size,memory", [(64, "400KiB"), (1024, "240KiB")])
def test_bounded_memory_gives_the_same_store(tmp_path, directed, workers, interval_size, memory):
    """Small budgets cut the arcs into many buckets: runs of whole intervals (64), or parts of one
    interval (1024) whose blocks are put together from every part; the store is the same."""
    rng = np.random.default_rng(1)
    src, dst, w = random_edges(rng, n=3000, m=20000, weighted=True)
    big = ooc_graph.convert((src, dst, w), tmp_path / "big.h5", directed=directed, interval_size=interval_size,
                            workers=1, augment=True, progress=False)
    small = ooc_graph.convert((src, dst, w), tmp_path / "small.h5", directed=directed, interval_size=interval_size,
                              memory=memory, workers=workers, augment=True, progress=False)
    assert small.built_by["memory"] == int(memory[:-3]) * 1024
    for a, b in zip(big.csr("out") + big.csr("in"), small.csr("out") + small.csr("in")):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(big.blocks + big.back_blocks, small.blocks + small.back_blocks):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(big.read_cel(0, big.num_arcs)[1:], small.read_cel(0, small.num_arcs)[1:]):
        np.testing.assert_array_equal(a, b)
    k = len(big.intervals) - 1
    for a, b in zip(big.read_back_arcs(0, k - 1, k, big.num_arcs)[1:], small.read_back_arcs(0, k - 1, k, big.num_arcs)[1:]):
        np.testing.assert_array_equal(a, b)
    assert big.attrs["self_loops"] == small.attrs["self_loops"]
    assert big.attrs["min_weight"] == small.attrs["min_weight"] and big.attrs["max_weight"] == small.attrs["max_weight"]


def test_split_intervals_and_the_floor(tmp_path, monkeypatch):
    from ooc_graph.ingest import builder
    plans = []
    real = builder.GraphBuilder._plan
    monkeypatch.setattr(builder.GraphBuilder, "_plan", lambda self, *a: plans.append(real(self, *a)) or plans[-1])
    rng = np.random.default_rng(2)
    src, dst, _ = random_edges(rng, n=2000, m=30000)
    ooc_graph.convert((src, dst), tmp_path / "a.h5", memory="200KiB", workers=1, progress=False)
    assert plans[-1] < 30000 // 4  # one interval of 2000 vertices, cut into several buckets
    # A vertex whose arcs alone do not fit: an error naming the floor, the vertex and its arcs.
    hub = np.zeros(40000, np.int64)
    with pytest.raises(ParameterError, match=r"below the floor of .* vertex 0 has 40,000 arcs"):
        ooc_graph.convert((np.arange(40000), hub), tmp_path / "b.h5", memory="2500KiB", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.h5"]
    monkeypatch.undo()  # the real allowance for the program itself
    with pytest.raises(ParameterError, match=r"below the floor of 96\.\d MiB"):
        ooc_graph.convert((src, dst), tmp_path / "c.h5", memory="64MB", progress=False)


# -- bad input ------------------------------------------------------------------------------------
BAD = [
    ("bad.txt", "0 1\n1 2\n2 x\n", "bad.txt, line 3: not a valid integer vertex id (got 'x')"),
    ("cols.txt", "0 1\n1 2 3 4\n", "cols.txt, line 2: expected 2 or 3 columns, found 4"),
    ("mixed.txt", "0 1\n1 2 0.5\n", "cols.txt"),
    ("nan.txt", "0 1 1.0\n1 2 nan\n", "nan.txt, line 2: weight is not a finite number"),
    ("float.txt", "0 1 1.0\n1.5 2 1.0\n", "float.txt, line 2: vertex id is not an integer"),
    ("range.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 1\n",
     "range.mtx, line 4: vertex id out of range [0, 3) (got 3)"),
    ("banner.mtx", "%%MatrixMarket matrix array real general\n3 3\n", "unsupported Matrix Market format"),
    ("nop.gr", "c nothing\n1 2\n", "missing the 'p <kind> <vertices> <edges>' problem line"),
]


@pytest.mark.parametrize("name,text,message", BAD)
def test_bad_text_input(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    out = tmp_path / "out.h5"
    with pytest.raises(InputError) as info:
        ooc_graph.convert(path, out, progress=False)
    if name != "mixed.txt":
        assert message in str(info.value)
    else:
        assert "line 2" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing half-written


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        ooc_graph.convert(tmp_path / "nope.txt", tmp_path / "o.h5", progress=False)
    with pytest.raises(ParameterError, match="valid: .*edgelist"):
        ooc_graph.convert(tmp_path / "nope.txt", tmp_path / "o.h5", format="xml", progress=False)
    (tmp_path / "e.bin").write_bytes(b"\0" * 16)
    with pytest.raises(InputError, match="bin32' or 'bin64"):
        ooc_graph.convert(tmp_path / "e.bin", tmp_path / "o.h5", progress=False)
    (tmp_path / "t.bin64").write_bytes(b"\0" * 20)
    with pytest.raises(InputError, match="not a multiple of 16 bytes"):
        ooc_graph.convert(tmp_path / "t.bin64", tmp_path / "o.h5", progress=False)
    assert not (tmp_path / "o.h5").exists()


def test_ldbc_edge_to_unknown_vertex(tmp_path):
    (tmp_path / "g.v").write_text("1\n2\n")
    (tmp_path / "g.e").write_text("1 2\n2 3\n")
    message = r"g.e, line 2: edge refers to a vertex that is not in the vertex list \(got 3\)"
    with pytest.raises(InputError, match=message):
        ooc_graph.convert(tmp_path / "g.e", tmp_path / "o.h5", progress=False)


def test_weighted_requested_without_weights(tmp_path):
    (tmp_path / "e.txt").write_text("0 1\n")
    with pytest.raises(InputError, match="no weights"):
        ooc_graph.convert(tmp_path / "e.txt", tmp_path / "o.h5", weighted=True, progress=False)


def test_failure_keeps_an_existing_store(tmp_path):
    out = tmp_path / "g.h5"
    ooc_graph.convert(np.array([[0, 1]]), out, progress=False).close()
    before = out.read_bytes()
    (tmp_path / "bad.txt").write_text("0 1\nx y\n")
    with pytest.raises(InputError):
        ooc_graph.convert(tmp_path / "bad.txt", out, overwrite=True, progress=False)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "g.h5"]


def test_column_tuple_with_no_weights(tmp_path):
    src, dst = np.array([0, 1, 2]), np.array([1, 2, 0])
    a = ooc_graph.convert((src, dst, None), tmp_path / "a.h5", progress=False)
    b = ooc_graph.convert((src, dst), tmp_path / "b.h5", progress=False)
    assert not a.weighted and a.num_arcs == b.num_arcs == 3
    np.testing.assert_array_equal(ooc_graph.bfs(a, 0, device="cpu").depth, ooc_graph.bfs(b, 0, device="cpu").depth)


@pytest.mark.parametrize("name, directed", [("email-enron", False), ("ca-astroph", False), ("ego-twitter", False),
                                            ("cit-hepph", True), ("soc-slashdot0902", True)])
def test_the_shared_snap_files_are_read_as_their_readme_says(name, directed):
    """The shared data's SNAP copies (../shared/data/README.md gives each one's kind) say it in
    their first line, SNAPDatasets.jl's way: email-enron became a directed store from it."""
    from ooc_graph.ingest.formats import snap_directed
    path = DATA / "snap" / f"{name}.txt.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    assert snap_directed(path) is directed


@pytest.mark.parametrize("header,directed", [
    ("# Undirected graph: ../../data/output/com-friendster.ungraph.txt", False),
    ("# Directed graph (each unordered pair of nodes is saved once): Wiki-Vote.txt", True),
    ("# email-enron from SNAP (via SNAPDatasets.jl), undirected", False),  # the shared data's copies
    ("# cit-hepph from SNAP (via SNAPDatasets.jl), directed", True),
    ("# Friendster social network", True),  # says neither: the default, directed
    ("# crawled pages, some links undirected, most not", True),  # no header of either kind
])
@pytest.mark.parametrize("opener", [open, gzip.open])
def test_snap_header_says_whether_directed(tmp_path, edges, header, directed, opener):
    """A SNAP edge list's header line says whether its graph is directed: it was ignored, and an
    undirected file became a directed store. ``directed=`` still decides where given."""
    src, dst, _ = edges
    path = tmp_path / ("e.txt.gz" if opener is gzip.open else "e.txt")
    write_text(path, src, dst, comments=("", header, "# Nodes: 50 Edges: 200", "# FromNodeId\tToNodeId"),
               opener=opener)
    G = ooc_graph.convert(path, tmp_path / "g.h5", progress=False)
    assert G.directed == directed
    assert arcs(G) == expected(src, dst, None, directed=directed)
    assert ooc_graph.convert(path, tmp_path / "d.h5", directed=True, progress=False).directed
    names = tmp_path / "names.txt"  # string ids read the header alike
    names.write_text(f"{header}\nalice bob\nbob carol\n")
    assert ooc_graph.convert(names, tmp_path / "s.h5", progress=False).directed == directed

"""The store's layout: CEL decoding reproduces the arcs; damaged stores are clear errors."""

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.errors import FormatVersionError, ParameterError, StoreError
from ooc_graph.partitioning.cel import chunk_layout, to_global
from ooc_graph.partitioning.intervals import interval_bounds, local_id_dtype

from conftest import random_edges


@pytest.mark.parametrize("interval_size,chunk_arcs", [(1, 1), (3, 7), (16, 5), (256, 1000), (None, None)])
@pytest.mark.parametrize("directed", [True, False])
def test_cel_holds_every_arc_once(tmp_path, interval_size, chunk_arcs, directed):
    rng = np.random.default_rng(3)
    src, dst, w = random_edges(rng, n=300, m=1500, weighted=True)
    G = ooc_graph.convert((src, dst, w), tmp_path / "g.h5", directed=directed, num_vertices=300,
                          interval_size=interval_size, chunk_arcs=chunk_arcs, progress=False)
    indptr, indices, weights = G.csr("out")
    csr = sorted(zip(np.repeat(np.arange(300), np.diff(indptr)).tolist(), indices.tolist(), weights.tolist()))
    got = []
    for start in range(0, G.num_arcs, G.chunk_arcs):
        layout, s, d, wt = G.read_cel(start, min(start + G.chunk_arcs, G.num_arcs))
        gs, gd = to_global(layout, s, d, G.interval_size)
        got += list(zip(gs.tolist(), gd.tolist(), wt.tolist()))
    assert sorted(got) == csr
    # CEL order: sub-graphs by destination interval, blocks by source interval, arcs by (dst, src).
    layout, s, d, _ = G.read_cel(0, G.num_arcs)
    gs, gd = to_global(layout, s, d, G.interval_size)
    size = G.interval_size
    key = list(zip((gd // size).tolist(), (gs // size).tolist(), gd.tolist(), gs.tolist()))
    assert key == sorted(key)
    offsets, bsrc, bdst = G.blocks
    assert offsets[-1] == G.num_arcs and (np.diff(offsets) > 0).all()
    assert G.attrs["local_id_dtype"] == local_id_dtype(interval_bounds(300, interval_size)).name
    # In-CSR is the transpose of the out-CSR.
    ip, ii, iw = G.csr("in")
    tin = sorted(zip(ii.tolist(), np.repeat(np.arange(300), np.diff(ip)).tolist(), iw.tolist()))
    assert tin == csr
    np.testing.assert_array_equal(G.out_degree, np.diff(indptr))
    np.testing.assert_array_equal(G.in_degree, np.diff(ip))


@pytest.mark.parametrize("interval_size", [1, 16, 1000])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("workers,memory", [(1, None), (3, "320KiB")])
def test_cel_augmentation_holds_the_back_arcs(tmp_path, interval_size, directed, workers, memory):
    rng = np.random.default_rng(4)
    src, dst, w = random_edges(rng, n=300, m=1500, weighted=True)
    G = ooc_graph.convert((src, dst, w), tmp_path / "g.h5", directed=directed, num_vertices=300,
                          interval_size=interval_size, augment=True, workers=workers, memory=memory,
                          progress=False)
    assert G.augmented
    size, k = G.interval_size, len(G.intervals) - 1
    indptr, indices, weights = G.csr("out")
    u = np.repeat(np.arange(300), np.diff(indptr))
    back = indices // size < u // size
    expected = sorted(zip(u[back].tolist(), indices[back].tolist(), weights[back].tolist()))
    layout, s, d, wt = G.read_back_arcs(0, k - 1, k, G.num_arcs)
    gs, gd = to_global(layout, s, d, size)
    assert sorted(zip(gs.tolist(), gd.tolist(), wt.tolist())) == expected
    # Source-major blocks: (source interval, destination interval) increasing.
    offsets, bsrc, bdst = G.back_blocks
    assert list(zip(bsrc, bdst)) == sorted(set(zip(bsrc, bdst))) and (bdst < bsrc).all()
    assert offsets[-1] == len(expected)
    # A window: sources in intervals first..last, destinations before `before`, capped.
    first, last, before = k // 3, 2 * k // 3, k // 2
    want = [a for a in expected if first <= a[0] // size <= last and a[1] // size < before]
    layout, s, d, wt = G.read_back_arcs(first, last, before, 10**9)
    gs, gd = to_global(layout, s, d, size)
    assert sorted(zip(gs.tolist(), gd.tolist(), wt.tolist())) == sorted(want)
    cap = len(want) // 3
    layout, s, d, wt = G.read_back_arcs(first, last, before, cap)
    gs, gd = to_global(layout, s, d, size)
    assert len(gs) == cap == layout.lengths.sum() and set(zip(gs.tolist(), gd.tolist(), wt.tolist())) <= set(want)


def test_store_without_augmentation(store):
    G = ooc_graph.open(store)
    assert not G.augmented
    with pytest.raises(StoreError, match="no CEL augmentation"):
        G.read_back_arcs(0, 0, 0, 10)


def test_local_ids_narrowest_type():
    assert local_id_dtype(interval_bounds(10, 256)) == np.uint8
    assert local_id_dtype(interval_bounds(10**6, 257)) == np.uint16
    assert local_id_dtype(interval_bounds(10**6, None)) == np.uint16
    assert local_id_dtype(interval_bounds(10**6, 70000)) == np.uint32


def test_chunk_layout_clips_blocks():
    offsets = np.array([0, 4, 6, 10])
    lay = chunk_layout(offsets, np.array([0, 1, 0]), np.array([0, 0, 1]), 3, 8)
    assert lay.lengths.tolist() == [1, 2, 2] and lay.first_block == 0
    assert lay.src_interval.tolist() == [0, 1, 0] and lay.dst_interval.tolist() == [0, 0, 1]


@pytest.fixture
def store(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), tmp_path / "g.h5", progress=False)
    G.close()
    return tmp_path / "g.h5"


def test_missing_store(tmp_path):
    with pytest.raises(StoreError, match="no such graph store"):
        ooc_graph.open(tmp_path / "nope.h5")
    for path in (None, 7):
        with pytest.raises(ParameterError, match="expected the path of a graph store"):
            ooc_graph.open(path)


def test_not_hdf5(tmp_path):
    (tmp_path / "x.h5").write_text("hello")
    with pytest.raises(StoreError, match="not a readable graph store"):
        ooc_graph.open(tmp_path / "x.h5")


def test_truncated_store(store):
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreError):
        G = ooc_graph.open(store)
        ooc_graph.pagerank(G, device="cpu")


def test_unknown_format_version(store):
    with h5py.File(store, "r+") as h5:
        h5.attrs["format_version"] = 99
    with pytest.raises(FormatVersionError, match="version 99 is not supported .*supported: 1"):
        ooc_graph.open(store)


def test_not_an_ooc_graph_store(tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as h5:
        h5["x"] = [1, 2]
    with pytest.raises(StoreError, match="not an ooc_graph store"):
        ooc_graph.open(tmp_path / "other.h5")


def test_missing_dataset(store):
    with h5py.File(store, "r+") as h5:
        del h5["cel/src"]
    with pytest.raises(StoreError, match="missing cel/src"):
        ooc_graph.open(store)


def test_corrupted_cel_is_detected_by_checksum(tmp_path):
    rng = np.random.default_rng(0)
    src, dst, _ = random_edges(rng, n=1000, m=20000)
    path = tmp_path / "c.h5"
    ooc_graph.convert((src, dst), path, num_vertices=1000, progress=False).close()
    with h5py.File(path, "r") as h5:
        ds = h5["cel/src"]
        offset = ds.id.get_offset() if ds.id.get_offset() is not None else ds.id.get_chunk_info(0).byte_offset
    raw = bytearray(path.read_bytes())
    for i in range(offset + 100, offset + 140):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))
    G = ooc_graph.open(path)
    with pytest.raises(StoreError, match="cel/src.*corrupted"), config.set(traversal={"whole_traversal": False}):
        ooc_graph.wcc(G, device="cpu")  # reads the CEL (whole traversals read only the CSR)


def test_result_save_replaces_and_keeps_attrs(store):
    G = ooc_graph.open(store)
    ooc_graph.wcc(G, device="cpu", store=True)
    ooc_graph.wcc(G, device="cpu", store=True)
    assert G.results() == ["wcc"]
    r = G.load_result("wcc")
    assert r["labels"].tolist() == [0, 0, 0]
    assert r["attrs"]["algorithm"] == "wcc" and "timestamp" in r["attrs"]
    G.close()
    assert ooc_graph.open(store).results() == ["wcc"]


# -- metadata that contradicts the datasets ----------------------------------------------------------
def _set(name, value):
    def tamper(h5):
        h5.attrs[name] = value
    return tamper


def _scale(name, factor):
    def tamper(h5):
        h5.attrs[name] = int(h5.attrs[name] * factor)
    return tamper


def _shrink(name):
    def tamper(h5):
        h5[name].resize((h5[name].shape[0] - 1,))
    return tamper


def _last_offset(h5):
    h5["cel/block_offsets"][-1] -= 1


def _flip_directed(h5):
    h5.attrs["directed"] = not h5.attrs["directed"]


def _del_attr(h5):
    del h5.attrs["num_arcs"]


TAMPERED = [  # (what, how, expected words in the error)
    ("num_arcs halved", _scale("num_arcs", 0.5), ["num_arcs", "cel/src"]),
    ("num_vertices off", _scale("num_vertices", 2), ["num_vertices", "vertex/in_degree"]),
    ("format_version a string", _set("format_version", "1"), ["format_version", "not an integer"]),
    ("format_version a float", _set("format_version", 1.0), ["format_version", "not an integer"]),
    ("cel/dst shrunk", _shrink("cel/dst"), ["num_arcs", "cel/dst"]),
    ("weighted flipped on", _set("weighted", True), ["weighted", "cel/weight", "missing"]),
    ("chunk_arcs zero", _set("chunk_arcs", 0), ["chunk_arcs", "at least 1"]),
    ("chunk_arcs negative", _set("chunk_arcs", -4), ["chunk_arcs", "-4"]),
    ("chunk_arcs not the HDF5 chunk", _set("chunk_arcs", 3), ["chunk_arcs", "cel/src", "chunks of"]),
    ("block offsets end early", _last_offset, ["num_arcs", "cel/block_offsets"]),
    ("num_blocks off", _scale("num_blocks", 2), ["num_blocks", "cel/block_offsets"]),
    ("directed flipped", _flip_directed, ["directed", "csr/in/indices"]),
    ("interval_size changed", _set("interval_size", 2), ["interval_size", "cel/intervals"]),
    ("num_edges off", _scale("num_edges", 3), ["num_edges"]),
    ("local_id_dtype wrong", _set("local_id_dtype", "uint32"), ["local_id_dtype", "cel/src"]),
    ("num_arcs missing", _del_attr, ["num_arcs", "missing"]),
    ("augmented without cel_aug", _set("augmented", True), ["augmented", "cel_aug"]),
    ("weighted a string", _set("weighted", "yes"), ["weighted", "not a boolean"]),
]


@pytest.mark.parametrize("what,tamper,words", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_tampered_store_is_one_clear_error(tmp_path, what, tamper, words):
    path = tmp_path / "t.h5"
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 4], [1, 3], [5, 0]])
    ooc_graph.convert(edges, path, interval_size=4, chunk_arcs=4, progress=False).close()
    with h5py.File(path, "r+") as h5:
        tamper(h5)
    before = path.read_bytes()
    with pytest.raises(StoreError) as info:
        ooc_graph.open(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    for word in words:
        assert word in message, (word, message)
    assert path.read_bytes() == before  # untouched, and still readable as HDF5
    with h5py.File(path, "r") as h5:
        assert "cel/src" in h5


def test_weighted_flipped_off_is_an_error(tmp_path):
    path = tmp_path / "w.h5"
    ooc_graph.convert((np.array([0, 1]), np.array([1, 2]), np.array([1.0, 2.0])), path, progress=False).close()
    with h5py.File(path, "r+") as h5:
        h5.attrs["weighted"] = False
    with pytest.raises(StoreError, match="weighted = False contradicts dataset cel/weight"):
        ooc_graph.open(path)


def test_closed_graph_is_a_store_error(store):
    G = ooc_graph.open(store)
    G.close()
    G.close()  # harmless
    for call in (G.results, lambda: G.csr("out"), lambda: ooc_graph.pagerank(G, device="cpu"),
                 lambda: G.read_cel(0, 1), lambda: G.load_result("x"), lambda: G.save_result("x", {}, {})):
        with pytest.raises(StoreError, match="is closed"):
            call()
    assert "closed" in repr(G)


def test_store_id_written_and_older_stores_get_one(store, tmp_path):
    G = ooc_graph.open(store)
    assert len(G.store_id) == 32 and G.attrs["store_id"] == G.store_id
    other = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), tmp_path / "o.h5", progress=False)
    assert other.store_id != G.store_id
    G.close()
    with h5py.File(store, "r+") as h5:
        del h5.attrs["store_id"]
    old = ooc_graph.open(store)
    assert old.store_id.startswith("derived-") and old.store_id == ooc_graph.open(store).store_id

"""Reading dataset ranges straight from the file (store/direct.py): the same values as h5py on
every layout, checksums verified, corruption reported as before."""

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import StoreError
from ooc_graph.store import direct
from ooc_graph.store import graph as graph_module


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("size,chunk", [(1, 1), (999, 300), (1000, 250), (4097, 4096), (70_001, 65_536)])
def test_checksums_and_ranges_match_h5py(tmp_path, dtype, size, chunk):
    rng = np.random.default_rng(size + chunk)
    values = rng.integers(0, 255, size).astype(dtype) if dtype == np.uint8 else \
        (rng.standard_normal(size) * 1e4).astype(dtype)
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=values, chunks=(chunk,), fletcher32=True)
    with h5py.File(path, "r") as f:
        table = direct.ChunkTable(f["x"])
    reader = direct.DirectReader(path)
    try:
        for start, count in [(0, size), (0, 1), (size - 1, 1), (size // 3, size // 2), (chunk - 1, min(2, size - chunk + 1))]:
            if count <= 0 or start + count > size:
                continue
            out = np.empty(count, dtype=dtype)
            reader.read(table, start, count, out)
            np.testing.assert_array_equal(out, values[start:start + count])
    finally:
        reader.close()


def test_the_first_read_of_a_process_reads_while_numba_loads(tmp_path, monkeypatch):
    """Before the compiled checksum is loaded, every chunk is read first and checked after (numba
    loading meanwhile): the same values on whole and partial chunks, and a flipped byte still
    fails the read."""
    pytest.importorskip("numba")
    values = np.arange(10_000, dtype=np.int64) * 7
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=values, chunks=(1000,), fletcher32=True)
    with h5py.File(path, "r") as f:
        table = direct.ChunkTable(f["x"])
    reader = direct.DirectReader(path)
    try:
        for start, count in [(0, 10_000), (999, 1002), (5, 3)]:
            monkeypatch.setattr(direct, "_COMPILED", [])  # as in a fresh process
            out = np.empty(count, np.int64)
            reader.read(table, start, count, out)
            np.testing.assert_array_equal(out, values[start:start + count])
            assert direct._COMPILED and direct._COMPILED[0] is not None
    finally:
        reader.close()
    with open(path, "r+b") as f:
        f.seek(int(table.offset[3]) + 9)
        byte = f.read(1)
        f.seek(int(table.offset[3]) + 9)
        f.write(bytes([byte[0] ^ 0x10]))
    reader = direct.DirectReader(path)
    try:
        monkeypatch.setattr(direct, "_COMPILED", [])
        with pytest.raises(direct.ChecksumError):
            reader.read(table, 0, 10_000, np.empty(10_000, np.int64))
    finally:
        reader.close()


def test_the_compiled_and_numpy_checksums_agree():
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 3, 1001, 1 << 18, (1 << 18) + 5):
        data = rng.integers(0, 256, n, dtype=np.uint8)
        assert direct._fletcher32(data) == direct._fletcher32_numpy(data)
    worst = np.full(1 << 20, 255, dtype=np.uint8)  # largest words: the sums' overflow guard
    assert direct._fletcher32(worst) == direct._fletcher32_numpy(worst)


def test_other_layouts_are_left_to_h5py(tmp_path):
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("plain", data=np.arange(10))
        f.create_dataset("gzip", data=np.arange(10), chunks=(4,), fletcher32=True, compression="gzip")
        f.create_dataset("nochecksum", data=np.arange(10), chunks=(4,))
        f.create_dataset("unwritten", shape=(10,), chunks=(4,), fletcher32=True, dtype=np.int64)
        f.create_dataset("twod", data=np.zeros((4, 4)), chunks=(2, 2), fletcher32=True)
    with h5py.File(path, "r") as f:
        for name in ("plain", "gzip", "nochecksum", "unwritten", "twod"):
            with pytest.raises(direct.Unsupported):
                direct.ChunkTable(f[name])


def _stores(tmp_path):
    edges = np.random.default_rng(3).integers(0, 5000, (40_000, 2))
    weighted = np.column_stack([edges, np.random.default_rng(4).random(len(edges))])
    return [ooc_graph.convert(edges, tmp_path / "a.h5", progress=False, chunk_arcs=3000),
            ooc_graph.convert(weighted, tmp_path / "b.h5", progress=False, directed=True)]


def test_graphs_read_directly_give_h5py_answers(tmp_path, monkeypatch, configure):
    pytest.importorskip("numba")  # direct reads need the compiled checksum
    configure({"store.direct_min_bytes": 0})  # small stores read directly too
    for G in _stores(tmp_path):
        ref = {}
        configure({"store.direct_reads": False})
        G.release()
        for algo, kw in (("pagerank", {}), ("bfs", {"source": 0}), ("wcc", {})):
            ref[algo] = getattr(ooc_graph, algo)(G, device="cpu", memory="2MB", **kw)
        layout_h5 = [G.read_cel(a, b) for a, b in ((0, G.num_arcs), (7, 2999), (G.num_arcs - 5, G.num_arcs))]
        configure({"store.direct_reads": True})
        G.release()
        for algo, kw in (("pagerank", {}), ("bfs", {"source": 0}), ("wcc", {})):
            got = getattr(ooc_graph, algo)(G, device="cpu", memory="2MB", **kw)
            for name, a in ref[algo].arrays().items():
                np.testing.assert_array_equal(got.arrays()[name], a)
        for (a, b), want in zip(((0, G.num_arcs), (7, 2999), (G.num_arcs - 5, G.num_arcs)), layout_h5):
            got = G.read_cel(a, b)
            for x, y in zip(got[1:], want[1:]):
                if y is not None:
                    np.testing.assert_array_equal(x, y)
        assert G._direct is not None  # the direct path was taken
        G.close()
        assert G._direct is None


def test_a_flipped_byte_is_still_a_store_error(tmp_path, monkeypatch, configure):
    configure({"store.direct_min_bytes": 0, "traversal.whole_traversal": False})  # PageRank over the CEL
    G = _stores(tmp_path)[0]
    with h5py.File(G.path, "r") as f:
        info = f["cel/dst"].id.get_chunk_info(0)
    G.close()
    with open(G.path, "r+b") as f:
        f.seek(info.byte_offset + 17)
        byte = f.read(1)
        f.seek(info.byte_offset + 17)
        f.write(bytes([byte[0] ^ 0x40]))
    G = ooc_graph.open(G.path)
    with pytest.raises(StoreError, match="corrupted"):
        ooc_graph.pagerank(G, device="cpu")
    G.close()


def test_small_datasets_and_no_numba_read_through_h5py(tmp_path, monkeypatch, configure):
    G = _stores(tmp_path)[0]
    ooc_graph.wcc(G, device="cpu")
    assert G._direct is None or all(t is None for t in G._direct[2].values())  # under 64 MB
    G.close()
    configure({"store.direct_min_bytes": 0})
    monkeypatch.setattr(graph_module, "compiled_possible", lambda: False)
    G = ooc_graph.open(G.path)
    ooc_graph.wcc(G, device="cpu")
    assert G._direct is None
    G.close()


def test_a_closed_reader_waits_for_reads_and_then_refuses(tmp_path):
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(1 << 20), chunks=(1 << 12,), fletcher32=True)
    with h5py.File(path, "r") as f:
        table = direct.ChunkTable(f["x"])
    reader = direct.DirectReader(path)
    out = np.empty(1 << 20, dtype=np.int64)
    import threading
    t = threading.Thread(target=reader.read, args=(table, 0, 1 << 20, out))
    t.start()
    reader.close()  # waits for the read in flight
    t.join()
    np.testing.assert_array_equal(out, np.arange(1 << 20))
    with pytest.raises(direct.Closed):
        reader.read(table, 0, 1, out[:1])

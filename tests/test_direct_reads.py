"""Reading dataset ranges straight from the file (store/direct.py): the same values as h5py on
every layout, checksums verified, corruption reported as before."""

import subprocess
import sys

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import StoreError
from ooc_graph.store import direct


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


def test_a_flipped_byte_fails_the_read(tmp_path):
    values = np.arange(10_000, dtype=np.int64) * 7
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=values, chunks=(1000,), fletcher32=True)
    with h5py.File(path, "r") as f:
        table = direct.ChunkTable(f["x"])
    with open(path, "r+b") as f:
        f.seek(int(table.offset[3]) + 9)
        byte = f.read(1)
        f.seek(int(table.offset[3]) + 9)
        f.write(bytes([byte[0] ^ 0x10]))
    reader = direct.DirectReader(path)
    try:
        reader.read(table, 0, 3000, np.empty(3000, np.int64))  # the chunks before it are good
        for start, count in [(0, 10_000), (3500, 10)]:
            with pytest.raises(direct.ChecksumError, match="chunk 3"):
                reader.read(table, start, count, np.empty(count, np.int64))
    finally:
        reader.close()


def _hdf5_fletcher32(data: bytes) -> int:
    """HDF5's H5_checksum_fletcher32 as its C source computes it (blocks of 360 words, sums folded
    by end-around carry), word by word: the independent reference for the vectorised sums."""
    sum1 = sum2 = 0
    words, at = len(data) // 2, 0
    while words:
        block = min(words, 360)
        words -= block
        for _ in range(block):
            sum1 += (data[at] << 8) | data[at + 1]
            sum2 += sum1
            at += 2
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    if len(data) % 2:
        sum1 += data[at] << 8
        sum2 += sum1
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
    sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    return sum2 << 16 | sum1


def test_the_checksum_is_hdf5s():
    """The vectorised sums against HDF5's word-by-word ones: every length class (odd, below and
    across a row, across slabs of rows: 4 rows a slab even for small data), all-zero and all-0xFF
    bytes (largest words) and random ones; a flipped bit or a wrong stored word fails."""
    rng = np.random.default_rng(4)
    for n in (0, 1, 2, 3, 4095, 4096, 4097, 8191, 8 * 4096 + 1, 9 * 4096 * 2 + 7, 100_003):
        for data in (np.zeros(n, np.uint8), np.full(n, 255, np.uint8), rng.integers(0, 256, n, dtype=np.uint8)):
            word = _hdf5_fletcher32(data.tobytes())
            assert direct._fletcher32(data, rows=4) == ((word & 0xFFFF) % 65535, (word >> 16) % 65535), n
            assert direct.checksum_matches(data, word), (n, data[:4])
            if n:
                assert not direct.checksum_matches(data, word ^ 0x10000)
                flipped = data.copy()
                flipped[n // 2] ^= 1
                assert not direct.checksum_matches(flipped, word)


def test_reading_a_store_loads_no_compiler(tmp_path):
    """The checksum is NumPy's: a process that reads a store directly never imports numba."""
    G = _stores(tmp_path)[0]
    G.close()
    code = ("import sys, ooc_graph; from ooc_graph import config; config.update({'store.direct_min_bytes': 0}); "
            f"G = ooc_graph.open({str(G.path)!r}); G._read('cel/dst'); "
            "assert G._direct and any(t is not None for t in G._direct[2].values()), 'not read directly'; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


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


def test_small_datasets_read_through_h5py(tmp_path):
    G = _stores(tmp_path)[0]
    ooc_graph.wcc(G, device="cpu")
    assert G._direct is None or all(t is None for t in G._direct[2].values())  # under 4 MiB
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

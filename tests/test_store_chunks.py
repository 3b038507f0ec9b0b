"""Writing chunks directly (store/chunks.py): the same datasets as h5py's appends, element for
element and stored chunk for stored chunk, checksums HDF5 and the direct reader accept (and a
corrupted byte both refuse), the same stores from a whole conversion, h5py where it cannot apply,
and nothing left behind by a failure."""

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.store import _format as F
from ooc_graph.store import chunks, direct, writer
from ooc_graph.store.memory import MemoryFile

from conftest import random_edges
from test_ingest_paths import assert_same_store
from test_store_memory import assert_same

CHUNK = 100
DTYPES = [np.int32, np.int64, np.uint16, np.float32, np.float64]
LENGTHS = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 7 * CHUNK + 13]


def _values(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 1e3).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)


def _pieces(rng, n):
    """Uneven cuts of [0, n): empty pieces, pieces within a chunk, pieces of several chunks."""
    cuts, at = [0], 0
    while at < n:
        at = min(n, at + int(rng.choice([0, 1, 7, CHUNK - 3, CHUNK, 2 * CHUNK + 5, 3 * CHUNK])))
        cuts.append(at)
    return list(zip(cuts[:-1], cuts[1:]))


def _stored_chunks(ds):
    """(filter mask, bytes) of every stored chunk, in chunk order."""
    return [ds.id.read_direct_chunk((i * ds.chunks[0],)) for i in range(-(-ds.shape[0] // ds.chunks[0]))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_direct_appends_are_h5py_appends(tmp_path, dtype, n):
    rng = np.random.default_rng(n)
    values = _values(rng, dtype, n)
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f, chunks.ChunkWriter() as w:
        fast = w.appendable(f, "direct", dtype, CHUNK)
        slow = chunks.Appender(writer.create_appendable(f, "h5py", dtype, CHUNK))
        assert isinstance(fast, chunks.DirectAppender)
        for lo, hi in _pieces(rng, n):
            if rng.random() < 0.3:  # several arrays appended as one
                cut = int(rng.integers(lo, hi + 1))
                fast.append([values[lo:cut], values[cut:cut], values[cut:hi]])
            else:
                fast.append(values[lo:hi])
            slow.append(values[lo:hi])
    with h5py.File(path, "r") as f:  # h5py verifies each chunk's checksum as it reads
        a, b = f["direct"], f["h5py"]
        assert (a.dtype, a.shape, a.maxshape, a.chunks, a.fletcher32) == (b.dtype, b.shape, b.maxshape, b.chunks, True)
        np.testing.assert_array_equal(a[()], values)
        np.testing.assert_array_equal(b[()], values)
        assert _stored_chunks(a) == _stored_chunks(b)  # the last chunk too: full-size, padded with 0
        if n:
            table = direct.ChunkTable(a)
    if n:
        reader = direct.DirectReader(path)
        try:
            out = np.empty(n, dtype)
            reader.read(table, 0, n, out)
            np.testing.assert_array_equal(out, values)
        finally:
            reader.close()


def test_the_checksum_word_is_hdf5s(tmp_path):
    """Sums that are nonzero multiples of 65535 are stored as 65535 (HDF5's end-around carry),
    all-zero data as 0; odd byte counts and random data as HDF5 computes them."""
    rng = np.random.default_rng(3)
    cases = [np.zeros(1000, np.uint8), np.full(1440, 255, np.uint8), np.full(1441, 255, np.uint8),
             np.array([255, 255] + [0] * 98, np.uint8), np.array([0, 0, 255, 255], np.uint8),
             np.array([7], np.uint8), rng.integers(0, 256, 1 << 20, dtype=np.uint8)]
    cases += [rng.integers(0, 256, int(rng.integers(1, 3000)), dtype=np.uint8) for _ in range(50)]
    with h5py.File(tmp_path / "c.h5", "w") as f:
        for i, data in enumerate(cases):
            ds = f.create_dataset(str(i), data=data, chunks=(len(data),), fletcher32=True)
            stored = ds.id.read_direct_chunk((0,))[1]
            assert stored[:-4] == data.tobytes()
            assert int.from_bytes(stored[-4:], "little") == chunks.fletcher32(data), i


def test_a_corrupted_chunk_is_refused(tmp_path):
    path = tmp_path / "a.h5"
    values = np.arange(5 * CHUNK, dtype=np.int64)
    with h5py.File(path, "w") as f, chunks.ChunkWriter() as w:
        w.appendable(f, "x", np.int64, CHUNK).append(values)
    with h5py.File(path, "r") as f:
        table = direct.ChunkTable(f["x"])
    with open(path, "r+b") as raw:  # one byte of the third chunk
        raw.seek(int(table.offset[2]) + 17)
        byte = raw.read(1)
        raw.seek(-1, 1)
        raw.write(bytes([byte[0] ^ 0x40]))
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["x"][:2 * CHUNK], values[:2 * CHUNK])
        with pytest.raises(OSError):
            f["x"][2 * CHUNK:3 * CHUNK]
    reader = direct.DirectReader(path)
    try:
        with pytest.raises(direct.ChecksumError):
            reader.read(table, 2 * CHUNK, CHUNK, np.empty(CHUNK, np.int64))
    finally:
        reader.close()


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_arrays_are_written_chunk_by_chunk(tmp_path, monkeypatch, configure, dtype):
    monkeypatch.setattr(F, "HDF5_CHUNK_ELEMENTS", CHUNK)
    values = _values(np.random.default_rng(4), dtype, 9 * CHUNK + 1)
    written, real = [], chunks.DirectAppender._write_chunk
    monkeypatch.setattr(chunks.DirectAppender, "_write_chunk", lambda self, *a: written.append(1) or real(self, *a))
    with h5py.File(tmp_path / "a.h5", "w") as f:
        writer.write_array(f, "direct", values)
        assert len(written) == 9
        configure({"store.chunk_writer": False})
        writer.write_array(f, "h5py", values)
        assert len(written) == 9
        a, b = f["direct"], f["h5py"]
        assert (a.shape, a.maxshape, a.chunks) == (b.shape, b.maxshape, b.chunks) == ((len(values),),) * 2 + ((CHUNK,),)
        np.testing.assert_array_equal(a[()], values)
        assert _stored_chunks(a) == _stored_chunks(b)


def test_h5py_appends_where_direct_writes_do_not_apply(tmp_path, configure):
    with h5py.File(tmp_path / "a.h5", "w") as f, chunks.ChunkWriter() as w, chunks.ChunkWriter(direct=False) as told:
        assert type(told.appendable(f, "told", np.int32, CHUNK)) is chunks.Appender
        assert isinstance(w.appendable(f, "big", np.int32, CHUNK, expected=2 * CHUNK), chunks.DirectAppender)
        assert type(w.appendable(f, "small", np.int32, CHUNK, expected=2 * CHUNK - 1)) is chunks.Appender
        assert type(w.appendable(MemoryFile(), "memory", np.int32, CHUNK)) is chunks.Appender
        configure({"store.chunk_writer": False})
        assert type(w.appendable(f, "off", np.int32, CHUNK)) is chunks.Appender
    memory = MemoryFile()
    with chunks.ChunkWriter() as w:
        a = w.appendable(memory, "x", np.float32, CHUNK)
        a.append(np.arange(150, dtype=np.float32))
        a.append([np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)])
    np.testing.assert_array_equal(memory["x"][()], np.r_[np.arange(150), np.arange(3), np.arange(2)])


def test_a_failed_write_ends_the_append(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    with h5py.File(tmp_path / "a.h5", "w") as f:
        with pytest.raises(OSError, match="No space"):
            with chunks.ChunkWriter() as w:
                a = w.appendable(f, "x", np.int32, CHUNK)
                monkeypatch.setattr(chunks.DirectAppender, "_write_chunk", full)
                a.append(np.arange(50 * CHUNK, dtype=np.int32))
        assert w._pool is None and a.size == 0  # the threads ended; the append did not count
        with pytest.raises(ValueError, match="after close"):
            a.append(np.arange(3, dtype=np.int32))


def _convert(edges, path, *, direct_writes, **kw):
    with config.set({"store.chunk_writer": direct_writes}):
        ooc_graph.convert(edges, path, progress=False, augment=True, interval_size=64, chunk_arcs=60,
                          **kw).close()


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_a_conversion_writes_the_same_store(tmp_path, monkeypatch, configure, directed, weighted):
    configure({"store.chunk_writer_min_chunks": 0})
    configure({"ingest.compiled_min_budget": 0})
    monkeypatch.setattr(F, "HDF5_CHUNK_ELEMENTS", 50)  # CSR and tables of several chunks
    src, dst, w = random_edges(np.random.default_rng(5), n=700, m=6000, weighted=weighted)
    edges = (src, dst, w) if weighted else (src, dst)
    kw = dict(directed=directed, memory="128KB", workers=2)  # several buckets, intervals split
    written, real = [], chunks.DirectAppender._write_chunk
    monkeypatch.setattr(chunks.DirectAppender, "_write_chunk", lambda self, *a: written.append(1) or real(self, *a))
    _convert(edges, tmp_path / "direct.h5", direct_writes=True, **kw)
    direct_chunks = len(written)
    _convert(edges, tmp_path / "h5py.h5", direct_writes=False, **kw)
    assert direct_chunks > 100 and len(written) == direct_chunks  # none written directly on the old path
    assert_same_store(tmp_path / "direct.h5", tmp_path / "h5py.h5")
    with h5py.File(tmp_path / "direct.h5", "r") as a, h5py.File(tmp_path / "h5py.h5", "r") as b:
        names = []
        a.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        for name in names:
            assert (a[name].chunks, a[name].maxshape) == (b[name].chunks, b[name].maxshape), name
            assert _stored_chunks(a[name]) == _stored_chunks(b[name]), name
        assert len(_stored_chunks(a["cel/src"])) > 3 and len(_stored_chunks(a["csr/out/indices"])) > 3
    G = ooc_graph.open(tmp_path / "direct.h5")
    try:
        H = ooc_graph.convert(edges, ":memory:", progress=False, augment=True, interval_size=64, chunk_arcs=60,
                              **kw)
        assert_same(H, tmp_path / "direct.h5")  # the in-memory store: through h5py's path, the same
        assert G.num_arcs == H.num_arcs
    finally:
        G.close()


def test_small_budgets_leave_numba_out(tmp_path, monkeypatch, configure):
    """Loading numba costs ~110 MiB: below config ``ingest.compiled_min_budget`` chunks go through h5py."""
    configure({"store.chunk_writer_min_chunks": 0})
    made, real = [], chunks.ChunkWriter.appendable

    def appendable(self, *args, **kwargs):
        made.append(real(self, *args, **kwargs))
        return made[-1]
    monkeypatch.setattr(chunks.ChunkWriter, "appendable", appendable)
    src, dst, _ = random_edges(np.random.default_rng(6), n=700, m=6000)
    ooc_graph.convert((src, dst), tmp_path / "small.h5", progress=False, chunk_arcs=200, memory="64MB").close()
    assert made and all(type(a) is chunks.Appender for a in made)
    made.clear()
    ooc_graph.convert((src, dst), tmp_path / "large.h5", progress=False, chunk_arcs=200, memory="2GiB").close()
    assert made and all(type(a) is chunks.DirectAppender for a in made)
    assert_same_store(tmp_path / "small.h5", tmp_path / "large.h5")


def test_a_failed_conversion_leaves_no_file(tmp_path, monkeypatch, configure):
    configure({"store.chunk_writer_min_chunks": 0})
    configure({"ingest.compiled_min_budget": 0})
    real, calls = chunks.DirectAppender._write_chunk, []

    def failing(self, *args):
        calls.append(1)
        if len(calls) == 5:
            raise OSError(28, "No space left on device")
        real(self, *args)
    monkeypatch.setattr(chunks.DirectAppender, "_write_chunk", failing)
    src, dst, _ = random_edges(np.random.default_rng(6), n=700, m=6000)
    with pytest.raises(ooc_graph.errors.StoreError, match="disk full"):
        ooc_graph.convert((src, dst), tmp_path / "g.h5", progress=False, chunk_arcs=200)
    assert len(calls) == 5 and list(tmp_path.iterdir()) == []

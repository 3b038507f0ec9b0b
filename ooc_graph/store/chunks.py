"""Appending to the store's large datasets by writing whole chunks' bytes directly.

The writing twin of ``direct.py``. h5py appends to a checksummed dataset by computing each
chunk's fletcher32 on the calling thread under h5py's lock (~1.5 GB/s). The store's large
datasets are 1-D, chunked, fletcher32-checksummed and uncompressed, so a chunk is stored as its
raw bytes followed by the 4-byte checksum word (:func:`fletcher32`). A :class:`DirectAppender`
checksums an append's whole chunks on a few threads, straight from the caller's arrays (the
checksum's NumPy reductions release the GIL), while the calling thread copies each, in order, into one
buffer, puts the checksum word after it and hands it to HDF5 with ``write_direct_chunk``.

The chunk an append starts inside and the one it ends inside go through h5py: HDF5 pads a
partial chunk with the fill value (0), checksums all of it (a dataset's last chunk is stored
full-size) and completes it on the next append by reading it back. So nothing is held between
appends — a dataset's partial chunk costs no memory, the writer holds one chunk's buffer — and
the stored chunks are byte for byte those h5py writes. An append of several arrays writes them as
one (the CEL's blocks of a bucket), so partial chunks come once per append, not once per array.

Where a writer is told not to (``direct=False``), for a dataset expected to fill fewer than config
``store.chunk_writer_min_chunks`` chunks, or for a file that is not an h5py one
(``memory.MemoryFile``), datasets are appended through h5py as before.
"""

from __future__ import annotations

import bisect
from concurrent.futures import ThreadPoolExecutor, wait

import h5py
import numpy as np

from ooc_graph import config

from .direct import FLETCHER, _fletcher32
from .writer import append, create_appendable



def fletcher32(data) -> int:
    """The word HDF5's fletcher32 filter stores (little-endian) after a chunk whose bytes are
    ``data`` (uint8), or the parts of ``data`` one after another (each of an even number of
    bytes but the last). The first sum is the low half, the second the high half; HDF5 folds each
    sum into 16 bits by end-around carry, so a sum that is a nonzero multiple of 65535 is stored
    as 65535, and only all-zero data has the sums 0."""
    parts = data if isinstance(data, (list, tuple)) else [data]
    s1 = s2 = 0
    for part in parts:  # sums of big-endian 16-bit words; the second over the running first
        a, b = _fletcher32(part)
        s1, s2 = (s1 + a) % 65535, (s2 + part.size // 2 * s1 + b) % 65535
    if (s1 == 0 or s2 == 0) and any(part.any() for part in parts):
        s1, s2 = s1 or 65535, s2 or 65535
    return s2 << 16 | s1


def _plain(h5, dtype: np.dtype) -> bool:
    """Whether datasets of ``dtype`` in ``h5`` can be written chunk by chunk here."""
    return (config.get().store.chunk_writer and isinstance(h5, h5py.Group) and dtype.kind in "iuf" and dtype.isnative
            and dtype.itemsize % 2 == 0)


def _arrays(values) -> list:
    return list(values) if isinstance(values, (list, tuple)) else [values]


class Appender:
    """Appends to a dataset through h5py (the fallback): each array of an append in turn."""

    def __init__(self, ds):
        self.dataset = ds
        self.closed = False

    @property
    def dtype(self) -> np.dtype:
        return self.dataset.dtype

    def append(self, values) -> None:
        """Append ``values``: an array, or a list of arrays appended one after another."""
        if self.closed:
            raise ValueError(f"{self.dataset.name}: appended to after close")
        for array in _arrays(values):
            append(self.dataset, array)

    def close(self) -> None:
        self.closed = True


class DirectAppender(Appender):
    """Appends to a 1-D, chunked, fletcher32-only dataset of an h5py file (empty, or already of
    its final shape) through its :class:`ChunkWriter`: whole chunks written directly, the others
    through h5py."""

    def __init__(self, writer: "ChunkWriter", ds):
        super().__init__(ds)
        self._writer = writer
        self.chunk = int(ds.chunks[0])
        self.size = 0  # elements appended

    def _parts(self, values) -> list:
        parts = []
        for array in _arrays(values):
            array = np.asarray(array)
            if array.dtype != self.dtype:
                if not np.can_cast(array.dtype, self.dtype, "safe"):
                    raise TypeError(f"{self.dataset.name}: cannot append {array.dtype} values to {self.dtype}")
                array = array.astype(self.dtype)
            if array.size:
                parts.append(np.ascontiguousarray(array).reshape(-1))
        return parts

    def append(self, values) -> None:
        """Append ``values``: an array, or a list of arrays appended as one."""
        if self.closed:
            raise ValueError(f"{self.dataset.name}: appended to after close")
        parts = self._parts(values)
        bounds = np.cumsum([0] + [p.size for p in parts]).tolist()  # of each part, in the append

        def pieces(lo: int, hi: int) -> list:  # views of the append's elements [lo, hi)
            out, i = [], bisect.bisect_right(bounds, lo) - 1
            while lo < hi:
                take = min(hi, bounds[i + 1]) - lo
                out.append(parts[i][lo - bounds[i]:lo - bounds[i] + take])
                lo += take
                i += 1
            return out

        start, end, c = self.size, self.size + bounds[-1], self.chunk
        if end == start:
            return
        if end > self.dataset.shape[0]:
            self.dataset.resize((end,))
        first = min(-(-start // c) * c, end)  # the first chunk boundary, where whole chunks start
        last = max(first, end // c * c)  # where they end, and a partial chunk starts
        whole = list(range(first, last, c))
        checksums = self._writer._checksums([[p.view(np.uint8) for p in pieces(at - start, at - start + c)]
                                             for at in whole])
        try:
            self._through_h5py(start, pieces(0, first - start))
            for at, job in zip(whole, checksums):
                self._write_chunk(at, pieces(at - start, at - start + c), job.result())
            self._through_h5py(last, pieces(last - start, end - start))
        finally:
            for job in checksums:
                job.cancel()
            wait(checksums)
        self.size = end

    def _write_chunk(self, at: int, pieces: list, word: int) -> None:
        nbytes = self.chunk * self.dtype.itemsize
        buf = self._writer._buffer(nbytes + FLETCHER)
        done = 0
        for p in pieces:
            buf[done:done + p.nbytes] = p.view(np.uint8)
            done += p.nbytes
        buf[nbytes:nbytes + FLETCHER] = np.array([word], dtype="<u4").view(np.uint8)
        self.dataset.id.write_direct_chunk((at,), buf[:nbytes + FLETCHER], filter_mask=0)

    def _through_h5py(self, at: int, pieces: list) -> None:
        """Elements from ``at`` (within one chunk) written by h5py, in one piece."""
        if not pieces:
            return
        if len(pieces) == 1:
            values = pieces[0]
        else:  # gathered in the writer's buffer
            nbytes = sum(p.nbytes for p in pieces)
            values = self._writer._buffer(nbytes)[:nbytes].view(self.dtype)
            np.concatenate(pieces, out=values)
        self.dataset[at:at + values.size] = values


class ChunkWriter:
    """Appenders for the 1-D checksummed datasets of one file, sharing a few threads and one
    chunk's buffer; used from one thread at a time. Nothing waits between appends, so closing
    (or leaving the ``with`` block, failed or not) only ends the threads."""

    def __init__(self, *, direct: bool = True, threads: int | None = None):
        self.direct = direct
        self.threads = max(1, int(config.get().store.checksum_threads if threads is None else threads))
        self._pool = None
        self._buf = np.empty(0, dtype=np.uint8)
        self._appenders: list = []

    def appendable(self, h5, name: str, dtype, chunk: int, expected: int | None = None) -> Appender:
        """A new 1-D resizable, checksummed dataset ``name`` of ``chunk``-element chunks and an
        appender for it: direct where the writer, the file and the dtype allow and ``expected``
        elements (None: unknown) fill at least config ``store.chunk_writer_min_chunks`` chunks; through h5py
        otherwise."""
        ds = create_appendable(h5, name, dtype, chunk)
        few = expected is not None and expected < config.get().store.chunk_writer_min_chunks * ds.chunks[0]
        if not self.direct or few or not _plain(h5, ds.dtype):
            appender = Appender(ds)
        else:
            appender = DirectAppender(self, ds)
        self._appenders.append(appender)
        return appender

    def write_array(self, h5, name: str, values: np.ndarray, chunk: int) -> bool:
        """Write the 1-D ``values`` as a fixed-size dataset of ``chunk``-element chunks, chunk by
        chunk; False (nothing written) where that is not possible (the caller uses h5py)."""
        if not self.direct or not _plain(h5, values.dtype):
            return False
        ds = h5.create_dataset(name, shape=values.shape, maxshape=values.shape, dtype=values.dtype,
                               chunks=(chunk,), fletcher32=True)
        DirectAppender(self, ds).append(values)
        return True

    def _checksums(self, chunks: list) -> list:
        """Jobs computing :func:`fletcher32` of each chunk (a list of parts) on the threads."""
        if not chunks:
            return []
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="ooc-graph-write")
        return [self._pool.submit(fletcher32, parts) for parts in chunks]

    def _buffer(self, nbytes: int) -> np.ndarray:
        """The writer's buffer, at least ``nbytes`` long (one chunk and its checksum)."""
        if self._buf.size < nbytes:
            self._buf = np.empty(0, dtype=np.uint8)  # freed before the larger one is made
            self._buf = np.empty(nbytes, dtype=np.uint8)
        return self._buf

    def close(self) -> None:
        """Close the appenders (no more appends) and end the threads."""
        for appender in self._appenders:
            appender.close()
        self._appenders.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._buf = np.empty(0, dtype=np.uint8)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()

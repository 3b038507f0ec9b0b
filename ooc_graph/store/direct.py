"""Reading ranges of a dataset straight from the file's bytes, on several threads.

h5py serialises every call behind one lock, so a chunk read through it runs on one thread at
~1.6–2.5 GB/s however many threads ask. The store's large datasets are 1-D, chunked and
checksummed (fletcher32, no compression), so the bytes of element ``i`` sit in chunk
``i // chunk`` at an offset HDF5 reports once per dataset. This module reads those chunks with
``os.preadv`` (which releases the GIL) on a pool of threads, verifies each chunk's checksum
exactly as HDF5's filter does, and lands the elements in the caller's array (pinned memory, for a
GPU). Anything else — another filter, a missing chunk, a chunk whose checksum fails — goes back
to h5py, which reports it as before.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np

from ooc_graph import config

FLETCHER = 4  # bytes of checksum after each chunk
_FLETCHER_BLOCK = 1 << 16  # words summed at a time (keeps the running sums in cache)


class Unsupported(Exception):
    """The dataset is not stored in the plain layout this reader handles (h5py reads it)."""


class ChecksumError(Exception):
    """A chunk's bytes do not match its fletcher32 checksum."""


class Closed(Exception):
    """The reader was closed (the store was closed or reopened as another file): read again."""


def _fletcher32_numpy(data: np.ndarray) -> int:
    """HDF5's fletcher32 of ``data`` (bytes), as :func:`H5_checksum_fletcher32` computes it:
    sums of big-endian 16-bit words modulo 65535, the second sum over the running first sum."""
    n = data.size
    words = data[:n - n % 2].view(">u2")
    s1 = s2 = 0
    for at in range(0, words.size, _FLETCHER_BLOCK):
        run = np.cumsum(words[at:at + _FLETCHER_BLOCK], dtype=np.uint64)
        s2 += int(run.sum(dtype=np.uint64)) + s1 * run.size
        s1 += int(run[-1])
    if n % 2:
        s1 += int(data[-1]) << 8
        s2 += s1
    return s1 % 65535, s2 % 65535


def _compiled():
    """HDF5's fletcher32 compiled with numba (the ``cpu`` extra): ~10x NumPy's speed, without
    the GIL; None without numba. Made on first use, so importing the package stays quick."""
    import numba

    @numba.njit(nogil=True, cache=True)
    def fletcher32(data):  # pragma: no cover - compiled
        n = data.size
        s1 = np.uint64(0)
        s2 = np.uint64(0)
        for i in range(0, n - n % 2, 2):
            s1 += (np.uint64(data[i]) << np.uint64(8)) | np.uint64(data[i + 1])
            s2 += s1
            if (i & 0x3FFFF) == 0x3FFFE:  # keep the sums far from overflow
                s1 %= np.uint64(65535)
                s2 %= np.uint64(65535)
        if n % 2:
            s1 += np.uint64(data[n - 1]) << np.uint64(8)
            s2 += s1
        return s1 % np.uint64(65535), s2 % np.uint64(65535)
    return fletcher32


_COMPILED = []  # [the compiled function, or None], filled on first use
_COMPILING = threading.Lock()


def compiled_available() -> bool:
    """Whether the compiled checksum is there (compiling it on first call): direct reads are
    used only then, as NumPy's checksum runs at ~1 GB/s, below h5py's one thread."""
    if not _COMPILED:
        _fletcher32(np.zeros(2, np.uint8))
    return _COMPILED[0] is not None


def compiled_possible() -> bool:
    """Whether the compiled checksum is loaded here or can be (numba is installed), without
    importing numba."""
    if _COMPILED:
        return _COMPILED[0] is not None
    return importlib.util.find_spec("numba") is not None


def _fletcher32(data: np.ndarray, compiled: bool = True) -> tuple:
    if not compiled:
        return _fletcher32_numpy(data)
    if not _COMPILED:
        with _COMPILING:
            if not _COMPILED:
                try:
                    _COMPILED.append(_compiled())
                except ImportError:
                    _COMPILED.append(None)
    if _COMPILED[0] is None:
        return _fletcher32_numpy(data)
    a, b = _COMPILED[0](data)
    return int(a), int(b)


def checksum_matches(data: np.ndarray, stored: int, compiled: bool = True) -> bool:
    """Whether ``stored`` (the little-endian word after a chunk) is the fletcher32 of ``data``.
    HDF5 folds each sum into 16 bits, where 0 and 65535 are the same residue: compare residues."""
    s1, s2 = _fletcher32(data, compiled)
    return (stored & 0xFFFF) % 65535 == s1 and (stored >> 16) % 65535 == s2


class ChunkTable:
    """Where each chunk of a 1-D, chunked, fletcher32-only dataset lies in the file (built under
    the caller's h5py lock). A dataset with a chunk HDF5 places outside the file (a crafted or
    truncated one) is :class:`Unsupported`: h5py reads it, and reports it."""

    def __init__(self, ds: h5py.Dataset):
        if ds.ndim != 1 or ds.chunks is None or ds.dtype.hasobject:
            raise Unsupported(ds.name)
        plist = ds.id.get_create_plist()
        if [plist.get_filter(i)[0] for i in range(plist.get_nfilters())] != [h5py.h5z.FILTER_FLETCHER32]:
            raise Unsupported(ds.name)
        self.dtype, self.chunk, self.size = ds.dtype, int(ds.chunks[0]), int(ds.shape[0])
        count = -(-self.size // self.chunk)
        self.offset = np.full(count, -1, dtype=np.int64)
        stored = self.chunk * self.dtype.itemsize + FLETCHER
        end = ds.file.id.get_filesize()  # a chunk must lie inside the file: it is read by offset
        bad = []

        def visit(info):
            i = info.chunk_offset[0] // self.chunk
            if info.filter_mask or info.size != stored or i >= count or not 0 <= info.byte_offset <= end - stored:
                bad.append(i)
            else:
                self.offset[i] = info.byte_offset
        if count:
            ds.id.chunk_iter(visit)
        if bad or (self.offset < 0).any():  # filters skipped, odd sizes or unwritten chunks
            raise Unsupported(ds.name)


class DirectReader:
    """Reads element ranges of checksummed datasets of one file on a pool of threads."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)
        self.pool = ThreadPoolExecutor(config.get().store.readers, thread_name_prefix="ooc-graph-read")
        self._scratch = threading.local()
        self._busy = threading.Condition()
        self._active, self._closed = 0, False

    def close(self):
        """Close once the reads in flight (callers do not hold the store's lock) are done."""
        with self._busy:
            self._closed = True
            self._busy.wait_for(lambda: self._active == 0)
        self.pool.shutdown(wait=True)
        os.close(self.fd)

    def _buffer(self, nbytes: int) -> np.ndarray:
        buf = getattr(self._scratch, "buf", None)
        if buf is None or buf.size < nbytes:
            buf = self._scratch.buf = np.empty(nbytes, dtype=np.uint8)
        return buf[:nbytes]

    def _chunk(self, table: ChunkTable, i: int, first: int, last: int, out: np.ndarray, compiled: bool) -> None:
        """Elements [first, last) of chunk i (chunk-relative) into ``out``; the whole chunk is
        read (its checksum covers it), straight into ``out`` when ``out`` is the whole chunk."""
        item = table.dtype.itemsize
        nbytes = table.chunk * item
        whole = first == 0 and last == table.chunk
        target = out.view(np.uint8) if whole else self._buffer(nbytes)
        tail = np.empty(FLETCHER, dtype=np.uint8)
        got = os.preadv(self.fd, [target, tail], int(table.offset[i]))
        if got != nbytes + FLETCHER:
            raise ChecksumError(f"chunk {i}: read {got} of {nbytes + FLETCHER} bytes")
        if not checksum_matches(target, int(tail.view("<u4")[0]), compiled):
            raise ChecksumError(f"chunk {i}: fletcher32 checksum mismatch")
        if not whole:
            out.view(np.uint8)[:] = target[first * item:last * item]

    def read(self, table: ChunkTable, start: int, count: int, out: np.ndarray) -> None:
        """Elements [start, start + count) into ``out`` (a C-contiguous array of ``count``
        elements of the dataset's dtype); raises :class:`ChecksumError` on a bad chunk."""
        if start < 0 or start + count > table.size:
            raise ValueError(f"range [{start}, {start + count}) outside the dataset's {table.size} elements")
        with self._busy:
            if self._closed:
                raise Closed("the reader was closed")
            self._active += 1
        try:
            self._read(table, start, count, out)
        finally:
            with self._busy:
                self._active -= 1
                self._busy.notify_all()

    def _read(self, table: ChunkTable, start: int, count: int, out: np.ndarray) -> None:
        if not _COMPILED:  # the first read of the process: numba loads while the chunks are read
            self._read_then_check(table, start, count, out)
            return
        compiled = compiled_available()
        jobs, at, c = [], 0, table.chunk
        while at < count:
            i, first = divmod(start + at, c)
            take = min(c - first, count - at)
            jobs.append(self.pool.submit(self._chunk, table, i, first, first + take, out[at:at + take], compiled))
            at += take
        for job in jobs:
            job.result()

    def _read_then_check(self, table: ChunkTable, start: int, count: int, out: np.ndarray) -> None:
        """:meth:`_read` in two steps: the pool reads every chunk (``preadv`` releases the GIL)
        while this thread loads the compiled checksum (numba's import and first load: ~1-3 s
        that would otherwise come before the first byte is read); then the pool checks every
        chunk. Nothing reaches ``out`` unchecked but the bytes of whole chunks, which are checked
        before this returns (an error leaves ``out`` to be read again by h5py)."""
        jobs, at, c = [], 0, table.chunk
        while at < count:
            i, first = divmod(start + at, c)
            take = min(c - first, count - at)
            jobs.append((self.pool.submit(self._fetch_chunk, table, i, first, first + take, out[at:at + take]),
                         first, take, out[at:at + take]))
            at += take
        compiled = compiled_available()
        checks = [self.pool.submit(self._check_chunk, job, first, take, target, compiled)
                  for job, first, take, target in jobs]
        for check in checks:
            check.result()

    def _fetch_chunk(self, table: ChunkTable, i: int, first: int, last: int, out: np.ndarray):
        """Chunk i's bytes (straight into ``out`` when ``out`` is the whole chunk, else into a
        buffer of its own) and its stored checksum, unchecked."""
        item = table.dtype.itemsize
        nbytes = table.chunk * item
        whole = first == 0 and last == table.chunk
        target = out.view(np.uint8) if whole else np.empty(nbytes, dtype=np.uint8)
        tail = np.empty(FLETCHER, dtype=np.uint8)
        got = os.preadv(self.fd, [target, tail], int(table.offset[i]))
        if got != nbytes + FLETCHER:
            raise ChecksumError(f"chunk {i}: read {got} of {nbytes + FLETCHER} bytes")
        return target, int(tail.view("<u4")[0]), whole

    @staticmethod
    def _check_chunk(job, first: int, take: int, out: np.ndarray, compiled: bool) -> None:
        target, stored, whole = job.result()
        if not checksum_matches(target, stored, compiled):
            raise ChecksumError("fletcher32 checksum mismatch")
        if not whole:
            item = out.dtype.itemsize
            out.view(np.uint8)[:] = target[first * item:(first + take) * item]

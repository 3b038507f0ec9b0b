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

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np

from ooc_graph import config

FLETCHER = 4  # bytes of checksum after each chunk


class Unsupported(Exception):
    """The dataset is not stored in the plain layout this reader handles (h5py reads it)."""


class ChecksumError(Exception):
    """A chunk's bytes do not match its fletcher32 checksum."""


class Closed(Exception):
    """The reader was closed (the store was closed or reopened as another file): read again."""


# HDF5's fletcher32 sums big-endian 16-bit words w_k (k < K) modulo 65535: s1 = sum(w_k),
# s2 = sum((K - k) w_k). As 65536 = 1 (mod 65535), w_k = 256 L_k where L_k is the same word read
# little-endian, so both sums come from the bytes as they lie, without swapping them. The words
# are laid out in rows of _COLS: a row's sum and a column's sum over _ROWS rows fit 32 bits, and
# sum(k L_k) comes from the row and column sums (k = row * _COLS + column). NumPy's reductions run
# without the GIL, so the reader's threads check chunks side by side at ~2-3 GB/s each, and no
# compiler is loaded for it.
_COLS = 2048
_ROWS = 32768
_INDEX = np.arange(_ROWS, dtype=np.uint64)


def _dot_index(values: np.ndarray) -> int:
    """sum(k * values[k]) modulo 65535, for up to ``_ROWS`` values."""
    return int(np.dot(_INDEX[:values.size], values % np.uint32(65535))) % 65535


def _slab_sums(little: np.ndarray) -> tuple:
    """``(sum(L_k), sum(k L_k) mod 65535)`` of at most ``_ROWS * _COLS`` little-endian words."""
    full = little.size - little.size % _COLS
    total = weighted = 0
    if full:
        grid = little[:full].reshape(-1, _COLS)
        rows = grid.sum(axis=1, dtype=np.uint32)
        total = int(rows.sum(dtype=np.uint64))
        weighted = _COLS * _dot_index(rows) + _dot_index(grid.sum(axis=0, dtype=np.uint32))
    rest = little[full:]
    if rest.size:
        part = int(rest.sum(dtype=np.uint64))
        total += part
        weighted += full * part + _dot_index(rest)
    return total, weighted % 65535


def _fletcher32(data: np.ndarray, rows: int = _ROWS) -> tuple:
    """HDF5's fletcher32 sums of ``data`` (C-contiguous bytes), each modulo 65535, as
    :func:`H5_checksum_fletcher32` computes them (an odd last byte is the high half of a word);
    the words summed ``rows`` rows at a time (at most ``_ROWS``)."""
    n = data.size
    words = n // 2
    little = data[:2 * words].view("<u2")
    total = weighted = 0
    slab = rows * _COLS
    for at in range(0, words, slab):
        part, part_weighted = _slab_sums(little[at:at + slab])
        total += part
        weighted += at * part + part_weighted
    s1 = 256 * total
    s2 = 256 * (words * total - weighted)
    if n % 2:
        s1 += int(data[-1]) << 8
        s2 += s1
    return s1 % 65535, s2 % 65535


def checksum_matches(data: np.ndarray, stored: int) -> bool:
    """Whether ``stored`` (the little-endian word after a chunk) is the fletcher32 of ``data``.
    HDF5 folds each sum into 16 bits, where 0 and 65535 are the same residue: compare residues."""
    s1, s2 = _fletcher32(data)
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

    def _chunk(self, table: ChunkTable, i: int, first: int, last: int, out: np.ndarray) -> None:
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
        if not checksum_matches(target, int(tail.view("<u4")[0])):
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
        jobs, at, c = [], 0, table.chunk
        while at < count:
            i, first = divmod(start + at, c)
            take = min(c - first, count - at)
            jobs.append(self.pool.submit(self._chunk, table, i, first, first + take, out[at:at + take]))
            at += take
        for job in jobs:
            job.result()

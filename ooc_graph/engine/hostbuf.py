"""Host memory for results, made ready while the device computes.

Copying a result off the GPU into freshly allocated host memory runs at the speed of the page
faults, not of the bus: the kernel zeroes and maps every 4 KiB page on first touch (on the
2×H200 machine, ~5–8 GB/s into fresh memory, ~5 GB/s into shared memory, against 55 GB/s
pinned). So a run that will return result arrays asks for them when it starts; a background
thread allocates them and faults their pages in (``madvise(MADV_POPULATE_WRITE)``, which does
not hold the GIL) while the GPU works, and the copy at the end writes into memory that is
already mapped. (Page-locking that memory instead, so the copy needs no staging, was measured
slower: registering and unregistering it with CUDA on each call took BFS on R-MAT-24 from 109 to
144 ms on an H100.)
"""

from __future__ import annotations

import functools
import mmap
import os
import threading

import numpy as np

from ooc_graph import config

# Pieces of at least this size (config stream.populate_threads threads fault them in).
_POPULATE_PIECE = 16 << 20
_MADV_POPULATE_WRITE = 23  # Linux 5.14
_PAGE = mmap.PAGESIZE


@functools.lru_cache(maxsize=1)
def _madvise():
    """libc's ``madvise``, or None (not Linux/glibc: pages are touched instead). Looked up at the
    first :func:`populate`, not at import: ``find_library`` runs ``ldconfig`` (~4 ms a process),
    and ctypes.util imports shutil and subprocess."""
    import ctypes.util  # (binds ctypes)
    try:
        madvise = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    madvise.restype = ctypes.c_int
    return madvise


def populate(array: np.ndarray) -> None:
    """Fault in the pages of a writable, C-contiguous host array (or a slice of one) so that
    later writes run at memory speed. Releases the GIL while it works."""
    if array.nbytes == 0:
        return
    start = array.ctypes.data
    first = -(-start // _PAGE) * _PAGE  # page-aligned part; the partial pages get touched below
    stop = (start + array.nbytes) // _PAGE * _PAGE
    madvise = _madvise()
    if madvise is not None and stop > first and madvise(first, stop - first, _MADV_POPULATE_WRITE) == 0:
        flat = array.reshape(-1).view(np.uint8)
        flat[:first - start] = flat[:first - start]
        flat[stop - start:] = flat[stop - start:]
        return
    flat = array.reshape(-1).view(np.uint8)
    flat[::_PAGE] = flat[::_PAGE]  # one write per page (NumPy releases the GIL for the loop)


def populate_parallel(array: np.ndarray) -> None:
    """:func:`populate` in pieces on up to config ``stream.populate_threads`` threads."""
    flat = array.reshape(-1).view(np.uint8)
    threads = config.get().stream.populate_threads
    step = max(_POPULATE_PIECE, -(-flat.size // threads) // _PAGE * _PAGE)
    if threads == 1 or flat.size <= step:
        populate(array)
        return
    list(_pool(threads).map(populate, [flat[a:a + step] for a in range(0, flat.size, step)]))


@functools.lru_cache(maxsize=1)
def _pool(threads: int):
    from concurrent.futures import ThreadPoolExecutor
    return ThreadPoolExecutor(threads, thread_name_prefix="ooc-graph-populate")


class Prepared:
    """Host arrays ``make(shape, dtype)`` for the given ``(shape, dtype)`` specs, allocated and
    faulted in (the ``part`` slice of each: the elements this worker will write) by a background
    thread. :meth:`take` hands out a matching one, waiting for the thread if it is still busy."""

    def __init__(self, specs, make=None, part: slice = slice(None)):
        self._specs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in specs]
        self._make = make or (lambda shape, dtype: np.empty(shape, dtype))
        self._part = part
        self._ready: list = []
        self._error = None
        self._thread = threading.Thread(target=config.carried(self._work), name="ooc-graph-prepare-results",
                                        daemon=True)
        self._thread.start()

    def _work(self):
        try:
            for shape, dtype in self._specs:
                array = self._make(shape, dtype)
                populate_parallel(array.reshape(-1)[self._part])
                self._ready.append(array)
        except Exception as err:  # taking falls back to a fresh allocation; the error is kept
            self._error = err

    @property
    def ready(self) -> bool:
        """Whether :meth:`take` would not wait."""
        return not self._thread.is_alive()

    def take(self, shape, dtype):
        """A prepared array of this shape and dtype, or ``None`` if none was asked for."""
        self._thread.join()
        shape, dtype = tuple(shape), np.dtype(dtype)
        for i, array in enumerate(self._ready):
            if array.shape == shape and array.dtype == dtype:
                return self._ready.pop(i)
        return None

    def discard(self) -> None:
        """Drop what was not taken (a memory-mapped file is removed)."""
        self._thread.join()
        for array in self._ready:
            name = getattr(array, "filename", None)
            if name:
                try:
                    os.unlink(name)
                except FileNotFoundError:
                    pass
        self._ready.clear()

"""Page-locked host memory of our own: anonymous mappings on transparent huge pages, registered
with CUDA (``cudaHostRegister``), pooled by size.

CuPy's pinned pool takes its blocks from ``cudaHostAlloc``, which page-locks memory at ~1 s a GB
on a 1xH100 host (four blocks of 66 MiB, a cold call's chunks in flight: 0.19-0.26 s). Mapping the
memory here on 2 MiB pages and registering it took 0.06-0.07 s for the same four blocks, and the
copy engine reads it at the same 53 GB/s (``benchmarks/pinned.py``,
``results/pinned-h100-s39.json``). Every page-locked array the GPU backend makes comes from here:
chunks read from the store, the staging ring, results, CSRs read in place (zero-copy).

A block goes back to the pool when the last array over it is dropped, and serves the next request
of its size (rounded up to 64 KiB), as CuPy's pool does; :func:`free_all` unregisters and unmaps the
free ones. Requests under config ``gpu.pinned_min_bytes`` (1 MiB: a small graph's chunks and
results) take CuPy's pool: page-locking them costs little, and a block of their own each would hold
more memory than budgets count. Where this cannot work — a mapping or registration the system
refuses, a device that cannot read registered memory at its host address
(``cudaDevAttrCanUseHostPointerForRegisteredMem``; zero-copy reads pass host addresses) — CuPy's
pool serves, as before.
"""

from __future__ import annotations

import mmap
import threading
import weakref

import cupy as cp
import numpy as np

from ooc_graph import config

GRAIN = 64 << 10  # block sizes are multiples of this
_REGISTER_FLAGS = 3  # cudaHostRegisterPortable | cudaHostRegisterMapped: every context, device-visible
_HOST_POINTER_ATTRIBUTE = 91  # cudaDevAttrCanUseHostPointerForRegisteredMem

# Reentrant: a block comes back from a finalizer, which a collection of cyclic garbage may run on
# this thread at any allocation, also one made while the lock is held.
_lock = threading.RLock()
_free: dict = {}  # block size -> free blocks of that size
_usable: dict = {}  # device -> whether registered memory works there (asked once)


class _Block:
    """One registered mapping of ``size`` bytes."""

    __slots__ = ("map", "ptr", "size")

    def __init__(self, size: int):
        self.map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        try:
            self.map.madvise(mmap.MADV_HUGEPAGE)
        except (AttributeError, OSError):  # no transparent huge pages: 4 KiB pages, still faster
            pass
        view = np.frombuffer(self.map, np.uint8)
        self.ptr, self.size = view.ctypes.data, size
        del view  # (an exported buffer would keep close() from unmapping)
        try:
            cp.cuda.runtime.hostRegister(self.ptr, size, _REGISTER_FLAGS)  # faults the pages in
        except BaseException:
            self.map.close()
            raise

    def close(self) -> None:
        cp.cuda.runtime.hostUnregister(self.ptr)
        try:
            self.map.close()
        except BufferError:  # an array over it is being dropped right now: unmapped after it
            pass


def _works_here() -> bool:
    """Whether the current device reads registered memory at its host address."""
    device = cp.cuda.runtime.getDevice()
    usable = _usable.get(device)
    if usable is None:
        try:
            usable = bool(cp.cuda.runtime.deviceGetAttribute(_HOST_POINTER_ATTRIBUTE, device))
        except cp.cuda.runtime.CUDARuntimeError:
            usable = False
        _usable[device] = usable
    return usable


def _take(size: int):
    with _lock:
        blocks = _free.get(size)
        if blocks:
            return blocks.pop()
    try:
        return _Block(size)
    except (OSError, ValueError, cp.cuda.runtime.CUDARuntimeError):
        return None


def _give_back(block: _Block) -> None:
    with _lock:
        _free.setdefault(block.size, []).append(block)


def empty(shape, dtype) -> np.ndarray:
    """A NumPy array in page-locked memory: a block of this pool, or CuPy's pinned pool where this
    one cannot serve (module docstring)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    ours = nbytes >= max(config.get().gpu.pinned_min_bytes, 1) and _works_here()
    block = _take(-(-nbytes // GRAIN) * GRAIN) if ours else None
    if block is None:
        memory = cp.cuda.alloc_pinned_memory(nbytes)
        return np.ndarray(shape, dtype=dtype, buffer=memory)
    # Views of ``owner`` keep it (their base) alive: the block returns once every one is gone.
    owner = np.frombuffer(block.map, np.uint8, nbytes)
    weakref.finalize(owner, _give_back, block).atexit = False
    return owner.view(dtype).reshape(shape)


def free_blocks() -> int:
    """How many free blocks the pool holds."""
    with _lock:
        held = list(_free.values())
    return sum(map(len, held))


def free_all() -> None:
    """Unregister and unmap every free block (blocks in use stay, and return when dropped)."""
    global _free
    fresh = {}
    with _lock:  # nothing allocated while it is held: a block given back meanwhile goes to ``fresh``
        held = _free
        _free = fresh
    for blocks in held.values():
        for block in blocks:
            block.close()

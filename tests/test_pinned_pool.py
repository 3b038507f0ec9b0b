"""The bookkeeping of the page-locked pool (kernels/gpu_pinned.py) on any machine: CuPy's runtime is
stood in for by a recorder of what is registered, so that reuse by size, views keeping a block,
free_all, small requests going to CuPy's pool, refusals, and a block given back while the pool's
lock is held (a finalizer run by a garbage collection) are checked in CI too. Registration itself
is tested on a GPU (test_gpu_pinned.py)."""

import gc
import importlib
import sys
import threading
import types

import numpy as np
import pytest

from ooc_graph import config

MIN_BYTES = config.get().gpu.pinned_min_bytes


class _PinnedMemoryPointer(bytearray):
    """What the stand-in's ``cupy.cuda.alloc_pinned_memory`` returns (a buffer)."""


@pytest.fixture
def pool(monkeypatch):
    """kernels/gpu_pinned.py imported over a stand-in ``cupy`` whose runtime records registrations
    (``pool.registered``: address -> size) and can be told to refuse them or to say that the device
    cannot read registered memory at its host address."""
    registered, behaviour = {}, {"refuse": False, "host_pointers": 1}

    class CUDARuntimeError(RuntimeError):
        pass

    def register(ptr, size, flags):
        if behaviour["refuse"]:
            raise CUDARuntimeError("cudaErrorMemoryAllocation")
        assert ptr not in registered and flags == 3
        registered[ptr] = size

    runtime = types.SimpleNamespace(CUDARuntimeError=CUDARuntimeError, getDevice=lambda: 0,
                                    deviceGetAttribute=lambda attribute, device: behaviour["host_pointers"],
                                    hostRegister=register, hostUnregister=registered.pop)
    cuda = types.SimpleNamespace(runtime=runtime, alloc_pinned_memory=_PinnedMemoryPointer)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    import ooc_graph.kernels as kernels
    monkeypatch.delitem(sys.modules, "ooc_graph.kernels.gpu_pinned", raising=False)  # (the real one, on a GPU
    monkeypatch.delattr(kernels, "gpu_pinned", raising=False)                          # machine: put back after)
    module = importlib.import_module("ooc_graph.kernels.gpu_pinned")
    module.registered, module.behaviour = registered, behaviour
    yield module
    gc.collect()
    if module._lock.acquire(timeout=5):  # (not where a failed test left it held)
        module._lock.release()
        module.free_all()
    sys.modules.pop("ooc_graph.kernels.gpu_pinned", None)
    if getattr(kernels, "gpu_pinned", None) is module:
        del kernels.gpu_pinned


def _block_of(array):
    """The address of the block under a pool array (its owner's start)."""
    return array.base.ctypes.data


def test_blocks_are_registered_rounded_reused_by_size_and_given_back(pool):
    a = pool.empty((3, 300_000), np.float64)  # 7.2 MB
    assert a.shape == (3, 300_000) and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
    a[...] = 2.5
    assert list(pool.registered.values()) == [-(-a.nbytes // pool.GRAIN) * pool.GRAIN]
    first = _block_of(a)
    view = a[1, 10:20]
    del a
    gc.collect()
    assert pool.free_blocks() == 0 and view.sum() == 25.0  # the view keeps the block in use
    other = pool.empty((3, 300_000), np.float64)
    assert _block_of(other) != first
    del view, other
    gc.collect()
    assert pool.free_blocks() == 2
    again = pool.empty((7_200_000,), np.uint8)  # the same size in bytes: a free block
    assert _block_of(again) in pool.registered and pool.free_blocks() == 1
    odd = pool.empty((7_200_000 + pool.GRAIN,), np.uint8)  # another rounded size: a new block
    assert pool.free_blocks() == 1 and len(pool.registered) == 3
    del odd
    gc.collect()
    pool.free_all()  # the free blocks are unregistered; the one in use stays
    assert pool.free_blocks() == 0 and list(pool.registered) == [_block_of(again)]
    again[:] = 7
    assert int(again[-1]) == 7


def test_small_requests_refusals_and_other_devices_take_cupys_pool(pool):
    small = pool.empty((MIN_BYTES // 8 - 1,), np.int64)
    assert isinstance(small.base, _PinnedMemoryPointer) and not pool.registered
    pool.behaviour["refuse"] = True
    refused = pool.empty((MIN_BYTES,), np.uint8)
    assert isinstance(refused.base, _PinnedMemoryPointer) and not pool.registered
    pool.behaviour["refuse"] = False
    pool._usable.clear()
    pool.behaviour["host_pointers"] = 0  # zero-copy reads pass host addresses: not here
    elsewhere = pool.empty((MIN_BYTES,), np.uint8)
    assert isinstance(elsewhere.base, _PinnedMemoryPointer) and not pool.registered
    assert pool.empty((0,), np.float64).size == 0


def test_a_block_given_back_while_the_pool_is_locked_does_not_deadlock(pool):
    """A finalizer gives a block back on whatever thread drops the last view, also one inside the
    pool's own locked sections (a garbage collection runs at any allocation)."""
    a = pool.empty((MIN_BYTES,), np.uint8)
    done = threading.Event()

    def drop_inside():
        nonlocal a
        with pool._lock:
            del a  # the finalizer runs here, on the thread holding the lock
            done.set()
    worker = threading.Thread(target=drop_inside, daemon=True)
    worker.start()
    worker.join(10)
    assert done.is_set(), "giving a block back while the pool's lock is held deadlocked"
    assert pool.free_blocks() == 1
    pool.free_all()
    assert pool.free_blocks() == 0 and not pool.registered

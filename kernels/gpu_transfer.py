"""Host↔device transfers of the GPU backend: the ring of staging slots that uploads chunks on a
copy stream, pinned host arrays for reads from the store, arrays up and results down at bus
speed."""

from __future__ import annotations

import os
import threading

import cupy as cp
import numpy as np

from ooc_graph import config

from . import gpu_pinned


class _Slot:
    """Device staging buffers for one chunk in flight, reusable once ``done`` has fired."""

    def __init__(self):
        self.buffers: dict = {}
        self.done = None
        self.events: dict = {}
        self.host = None  # keeps the (pinned) host arrays alive until their copy has finished

    def buffer(self, name, nbytes):
        buf = self.buffers.get(name)
        if buf is None or buf.nbytes < nbytes:
            buf = self.buffers[name] = cp.empty(max(nbytes, 1), dtype=np.uint8)
        return buf


class _Stager:
    """A ring of staging slots and a copy stream: the copy of chunk i+1 runs while chunk i's
    kernels run on the compute stream; events order copy → decode → slot reuse."""

    SLOTS = 3

    def __init__(self):
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.slots = [_Slot() for _ in range(self.SLOTS)]
        self.next = 0

    def clear(self) -> None:
        """Let go of the slots' device buffers (once their copies and decodes are done): they
        grow to the largest chunk uploaded and would otherwise stay held, outside any engine's
        budget, after the engine is released."""
        self.stream.synchronize()
        for slot in self.slots:
            if slot.done is not None:
                slot.done.synchronize()
            slot.buffers.clear()
            slot.done, slot.host, slot.events = None, None, {}

    def upload(self, arrays: dict):
        """Device views of the host ``arrays`` (copied on the copy stream), and the slot."""
        slot = self.slots[self.next]
        self.next = (self.next + 1) % self.SLOTS
        compute = cp.cuda.get_current_stream()
        if slot.done is not None:
            self.stream.wait_event(slot.done)
        out = {}
        start = self.stream.record()
        with self.stream:
            for name, host in arrays.items():
                buf = slot.buffer(name, host.nbytes)
                view = buf[:host.nbytes].view(host.dtype)
                view.set(host, stream=self.stream)
                out[name] = view
        copied = self.stream.record()
        compute.wait_event(copied)
        slot.host = arrays
        slot.events = {"copy": (start, copied)}
        return out, slot


@cp.memoize(for_each_device=True)
def _stager():
    return _Stager()


# Chunks' raw copies the ring holds at once (an engine counts them against its device budget).
STAGING_SLOTS = _Stager.SLOTS


def empty_pinned(shape, dtype) -> np.ndarray:
    """A NumPy array in page-locked memory (:mod:`.gpu_pinned`: our own registered huge pages, or
    CuPy's pinned pool; not ``cupyx.empty_pinned``, whose package imports cupyx.scipy.sparse and
    SciPy's, ~0.55 s of a cold call's start on an H200 host)."""
    return gpu_pinned.empty(shape, dtype)


def empty_host(shape, dtype):
    """A pinned host array, so that reads from the store land where the copy engine reads."""
    return empty_pinned(shape, dtype)



# Device->host copies of results: through a ring of pinned staging buffers on the copy stream,
# each emptied into the (pageable) destination by several threads while the next one fills, so a
# result lands at close to bus speed instead of the driver's pageable path (measured 3.8 GB/s
# for a 268 MB result on an H100 host: the page faults of a fresh array, one thread).
# (The ring: 4 buffers of 8 MB, so a result of a few tens of MB pipelines too.)
_STAGE_BYTES = 8 << 20
_STAGE_BUFFERS = 4
_STAGE_THREADS = max(2, min(8, (os.cpu_count() or 2) // 2))


@cp.memoize(for_each_device=True)
def _staging():
    from concurrent.futures import ThreadPoolExecutor
    return ([empty_pinned(_STAGE_BYTES, np.uint8) for _ in range(_STAGE_BUFFERS)],
            ThreadPoolExecutor(_STAGE_THREADS, thread_name_prefix="ooc-graph-d2h"))


_STAGING_LOCK = threading.Lock()  # the ring serves one copy at a time


def to_device(host) -> "cp.ndarray":
    """A host array on the device, at close to bus speed from pageable memory: threads fill the
    pinned ring buffers while the copy engine empties the ones before (``cp.asarray`` of a
    pageable array ran at ~2 GB/s for the out-CSR of R-MAT-24)."""
    host = np.ascontiguousarray(host)
    out = cp.empty(host.shape, dtype=host.dtype)
    if host.nbytes < 2 * _STAGE_BYTES:
        out.set(host)
        return out
    src = host.reshape(-1).view(np.uint8)
    dst = out.reshape(-1).view(np.uint8)
    with _STAGING_LOCK:
        buffers, pool = _staging()
        stage = _stager().stream
        stage.wait_event(cp.cuda.get_current_stream().record())  # out's allocation is ordered
        done = [None] * len(buffers)
        for i, start in enumerate(range(0, src.size, _STAGE_BYTES)):
            stop = min(start + _STAGE_BYTES, src.size)
            slot = i % len(buffers)
            buf = buffers[slot]
            if done[slot] is not None:
                done[slot].synchronize()  # the copy engine has read this buffer's last contents
            step = -(-(stop - start) // _STAGE_THREADS)
            for f in [pool.submit(np.copyto, buf[a - start:min(a + step, stop) - start], src[a:min(a + step, stop)])
                      for a in range(start, stop, step)]:
                f.result()
            cp.cuda.runtime.memcpyAsync(dst[start:stop].data.ptr, buf.ctypes.data, stop - start,
                                        cp.cuda.runtime.memcpyHostToDevice, stage.ptr)
            done[slot] = stage.record()
        cp.cuda.get_current_stream().wait_event(stage.record())
        stage.synchronize()  # the ring is free for the next copy
    return out


def to_host_later(array):
    """Start copying a small ``array`` into page-locked host memory behind the work queued so
    far: ``(host array, event)``; the host array holds it once the event has completed."""
    out = empty_pinned(array.shape, array.dtype)
    stream = cp.cuda.get_current_stream()
    cp.cuda.runtime.memcpyAsync(out.ctypes.data, array.data.ptr, array.nbytes, cp.cuda.runtime.memcpyDeviceToHost,
                                stream.ptr)
    return out, stream.record()


@cp.memoize(for_each_device=True)
def _results_stream():
    return cp.cuda.Stream(non_blocking=True)


def to_host_behind(array, out):
    """Queue the copy of ``array`` (a contiguous CuPy array) into ``out`` (page-locked host
    memory of its size: see :func:`page_locked`) on a stream of its own, behind the work queued
    so far on the current stream, which goes on meanwhile. Returns the event after which ``out``
    holds it; copies queued this way run in order."""
    stream = _results_stream()
    stream.wait_event(cp.cuda.get_current_stream().record())
    cp.cuda.runtime.memcpyAsync(out.ctypes.data, array.data.ptr, array.nbytes, cp.cuda.runtime.memcpyDeviceToHost,
                                stream.ptr)
    return stream.record()


def to_host(array, out=None) -> np.ndarray:
    """``array`` (a CuPy array) in host memory: ``out`` if given (any writable C-contiguous host
    array of its shape and dtype, e.g. a memory map), else a new NumPy array."""
    array = cp.ascontiguousarray(array)
    if out is None:
        out = np.empty(array.shape, dtype=array.dtype)
    if array.nbytes < 2 * _STAGE_BYTES:  # the driver's own copy (direct into page-locked memory)
        array.get(out=out)
        return out
    if page_locked(out):  # one copy at bus speed, no staging
        stream = cp.cuda.get_current_stream()
        cp.cuda.runtime.memcpyAsync(out.ctypes.data, array.data.ptr, array.nbytes,
                                    cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        return out
    with _STAGING_LOCK:
        return _to_host_staged(array, out)


def _to_host_staged(array, out):
    buffers, pool = _staging()
    stage = _stager().stream
    stage.wait_event(cp.cuda.get_current_stream().record())  # after the kernels that made it
    src = array.reshape(-1).view(np.uint8)
    dst = out.reshape(-1).view(np.uint8)
    pending = [[] for _ in buffers]
    for i, start in enumerate(range(0, src.size, _STAGE_BYTES)):
        stop = min(start + _STAGE_BYTES, src.size)
        slot = i % len(buffers)
        buf = buffers[slot]
        for f in pending[slot]:
            f.result()  # the buffer's last contents have been emptied
        cp.cuda.runtime.memcpyAsync(buf.ctypes.data, src[start:stop].data.ptr, stop - start,
                                    cp.cuda.runtime.memcpyDeviceToHost, stage.ptr)
        stage.synchronize()
        step = -(-(stop - start) // _STAGE_THREADS)
        pending[slot] = [pool.submit(np.copyto, dst[a:min(a + step, stop)], buf[a - start:min(a + step, stop) - start])
                          for a in range(start, stop, step)]
    for f in sum(pending, []):
        f.result()
    return out


# Result arrays of a one-process GPU run live in page-locked memory from the pinned pool: the
# device copies into them at bus speed, and when the user drops a result its block goes back to
# the pool, already mapped, for the next call's. (Fresh pageable memory is bound by its page
# faults: ~9 GB/s for BFS's two 33 MB arrays on an H100 host, the largest part of a 12 ms call.)
# Results larger than config gpu.pinned_results_share of physical memory take pageable memory.
_PHYSICAL = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0


def empty_result(shape, dtype, device: int | None = None) -> np.ndarray:
    """A host array for a result: page-locked (from the pinned pool) where it is at most
    config ``gpu.pinned_results_share`` of physical memory and CUDA can allocate it, else pageable.
    ``device``: whose context allocates it (from a thread that has none current)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes <= config.get().gpu.pinned_results_share * _PHYSICAL:
        try:
            with cp.cuda.Device(device if device is not None else cp.cuda.runtime.getDevice()):
                return empty_pinned(shape, dtype)
        except (cp.cuda.memory.OutOfMemoryError, cp.cuda.runtime.CUDARuntimeError):
            pass
    return np.empty(shape, dtype=dtype)


def free_unused_memory() -> None:
    """Give the unused blocks of the pools back (an engine's release): page-locked host memory
    (:mod:`.gpu_pinned`'s and CuPy's) to the system, and device memory to the driver, where other
    processes see it free (a worker of a multi-GPU call on the same GPU sizes its budget by what is
    free; blocks this process's pool kept would make it stream what it could hold)."""
    _stager().clear()
    gpu_pinned.free_all()
    cp.get_default_pinned_memory_pool().free_all_blocks()
    cp.get_default_memory_pool().free_all_blocks()


_MEMORY_TYPE_HOST = 1  # cudaMemoryTypeHost: page-locked host memory


def mapped(array: np.ndarray) -> "cp.ndarray":
    """``array`` copied into page-locked host memory and seen from the device (zero-copy: kernels
    read it across the bus as they go, nothing is copied ahead). With unified addressing,
    page-locked memory (``cudaHostAlloc``'s, or registered where the device reads it at its host
    address: :mod:`.gpu_pinned`) has the same address on the device. The copy in runs on the
    staging threads."""
    array = np.ascontiguousarray(array)
    host = empty_pinned(array.shape, array.dtype)
    src, dst = array.reshape(-1).view(np.uint8), host.reshape(-1).view(np.uint8)
    _, pool = _staging()
    step = max(_STAGE_BYTES, -(-src.size // _STAGE_THREADS))
    for f in [pool.submit(np.copyto, dst[a:a + step], src[a:a + step]) for a in range(0, src.size, step)]:
        f.result()
    memory = cp.cuda.UnownedMemory(host.ctypes.data, max(host.nbytes, 1), host, cp.cuda.runtime.getDevice())
    return cp.ndarray(host.shape, host.dtype, cp.cuda.MemoryPointer(memory, 0))


def is_mapped(array) -> bool:
    """Whether a device array lives in page-locked host memory (:func:`mapped`)."""
    try:
        return cp.cuda.runtime.pointerGetAttributes(array.data.ptr).type == _MEMORY_TYPE_HOST
    except cp.cuda.runtime.CUDARuntimeError:
        return False


def page_locked(out) -> bool:
    """Whether ``out`` is C-contiguous page-locked host memory (a copy into it runs
    asynchronously, at bus speed)."""
    if not out.flags.c_contiguous:
        return False
    try:
        return cp.cuda.runtime.pointerGetAttributes(out.ctypes.data).type == _MEMORY_TYPE_HOST
    except cp.cuda.runtime.CUDARuntimeError:  # pageable memory on some drivers
        return False

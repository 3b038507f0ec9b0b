"""GPU (CuPy) operators, the same functions and signatures as :mod:`.cpu`.

A batch holds one chunk's arcs on the device as global int32 ids (decoded on the device from the
narrow local ids that were transferred) plus the weights in their stored type. Kernels come from
``gpu_kernels.cu``, compiled lazily and memoised per device; all launches go to CuPy's current
stream.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import cupy as cp
import numpy as np

_SOURCE = Path(__file__).with_name("gpu_kernels.cu")
_THREADS = 256
_LOCAL = {np.dtype(np.uint8): "unsigned char", np.dtype(np.uint16): "unsigned short",
          np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long"}
_WEIGHT = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


@cp.memoize(for_each_device=True)
def _module():
    names = ([f"ooc_graph_decode<{t}>" for t in _LOCAL.values()]
             + [f"ooc_graph_{k}<{t}>" for k in ("relax_min", "tight_parent", "advance_min", "advance_queue")
                for t in _WEIGHT.values()]
             + ["ooc_graph_pull_sum", "ooc_graph_hook_min", "ooc_graph_scatter_min", "ooc_graph_pagerank_step",
                "ooc_graph_queue_turn"])
    return cp.RawModule(code=_SOURCE.read_text(), options=("-std=c++14",), name_expressions=names)


def _kernel(name):
    return _module().get_function(name)


def _launch(name, m, args):
    if m:
        _kernel(name)(((m + _THREADS - 1) // _THREADS,), (_THREADS,), args)


@dataclass
class Batch:
    dst_lo: int
    dst_hi: int
    src: cp.ndarray                # int32 global ids
    dst: cp.ndarray
    weight: cp.ndarray | None      # stored type (float32 or float64)
    # Events of a fresh upload, for profiling: "copy" (start, end) on the copy stream and
    # "compute_start" on the compute stream, before decoding.
    events: dict = field(default_factory=dict)

    @property
    def num_arcs(self) -> int:
        return int(self.src.size)

    @property
    def nbytes(self) -> int:
        return self.src.nbytes + self.dst.nbytes + (0 if self.weight is None else self.weight.nbytes)

    def _w(self):
        w = self.weight if self.weight is not None else _dummy()
        return w, int(self.weight is not None), _WEIGHT[w.dtype]


@cp.memoize(for_each_device=True)
def _dummy():
    return cp.zeros(1, dtype=np.float32)


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


def prepare(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi, num_vertices) -> Batch:
    """Copy one chunk's local ids (and weights) to the device and decode them to global ids.

    Host arrays in pinned memory copy at full bus speed and asynchronously; the decoded arrays
    belong to the compute stream, the staging slot is released by an event after the decode.
    """
    m = int(src_local.size)
    starts = np.zeros(len(lengths), np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    table = np.concatenate([starts, np.asarray(src_base, np.int64), np.asarray(dst_base, np.int64)])
    host = {"src": src_local, "dst": dst_local, "table": table}
    if weight is not None:
        host["w"] = weight
    dev, slot = _stager().upload(host)
    events = dict(slot.events, compute_start=cp.cuda.get_current_stream().record())
    nb = len(lengths)
    src = cp.empty(m, dtype=np.int32)
    dst = cp.empty(m, dtype=np.int32)
    t = dev["table"]
    _launch(f"ooc_graph_decode<{_LOCAL[src_local.dtype]}>", m,
            (dev["src"], dev["dst"], t[:nb], t[nb:2 * nb], t[2 * nb:], np.int32(nb), src, dst, np.int64(m)))
    w = None if weight is None else dev["w"].copy()
    slot.done = cp.cuda.get_current_stream().record()
    return Batch(int(dst_lo), int(dst_hi), src, dst, w, events)


def marker(where: str = "compute"):
    """A CUDA event on the compute stream (``where="copy"``: the copy stream), for profiling."""
    return (_stager().stream if where == "copy" else cp.cuda.get_current_stream()).record()


def seconds_between(a, b) -> float:
    """Seconds from event ``a`` to event ``b`` (both must have completed)."""
    return cp.cuda.get_elapsed_time(a, b) / 1e3


def empty_host(shape, dtype):
    """A pinned host array, so that reads from the store land where the copy engine reads."""
    import cupyx
    return cupyx.empty_pinned(shape, dtype=dtype)


# Re-sort chunks that stay resident by destination, so pull_sum reduces whole runs in the warp
# instead of issuing about one float64 atomic per arc. Measured on an H100, R-MAT scale 22
# (benchmarks/results/gpu-rmat22-h100.json): 1.42 ms per pass sorted, 1.40 ms in CEL order, so
# the gather of x[src], not the atomics, bounds the pass, and CEL order (no sort) is the default.
SORT_RESIDENT = False


def resident(batch: Batch) -> Batch:
    """A batch about to be kept on the device for every pass, in its fastest layout."""
    if not SORT_RESIDENT or batch.num_arcs < 2:
        return batch
    order = cp.argsort(batch.dst)  # CUB radix sort
    return Batch(batch.dst_lo, batch.dst_hi, batch.src[order], batch.dst[order],
                 None if batch.weight is None else batch.weight[order], batch.events)


# GraphCage cache blocking for passes over every arc (pull_sum): the whole graph's arcs in one
# batch ordered by (source segment, destination), so the thread blocks running at any moment
# gather x from one segment of 2**SEGMENT_BITS vertices that stays in L2. Measured on an H100
# (50 MB L2), R-MAT-25, 528M arcs, x of 268 MB (benchmarks/results/gpu-rmat25.json): a pass
# takes 10.4 ms in CEL order, 4.66 ms with segments of 16 MiB of float64 (5.13 ms at 8 MiB,
# 5.14 at 32, 6.25 at 64), against 11.4 ms for cupyx's CSR SpMV.
SEGMENT_BITS = 21
_KEY_BITS = 63  # (segment, destination, source) packed into one int64 key where they fit


def source_blocked(batches, num_vertices: int):
    """One batch holding every arc of ``batches`` in source-blocked order (no weights: for
    operators that ignore them), or None when x fits one segment and blocking gains nothing.
    Needs about 24 bytes per arc of device memory while it is built."""
    if num_vertices <= 1 << SEGMENT_BITS:
        return None
    src = cp.concatenate([b.src for b in batches])
    dst = cp.concatenate([b.dst for b in batches])
    bits = max(int(num_vertices - 1).bit_length(), 1)
    if 3 * bits - SEGMENT_BITS <= _KEY_BITS:  # sort the packed keys themselves: no gather
        key = ((src.astype(cp.int64) >> SEGMENT_BITS) << (2 * bits)) | (dst.astype(cp.int64) << bits) | src
        del src, dst
        key.sort()
        mask = (1 << bits) - 1
        src = (key & mask).astype(cp.int32)
        dst = ((key >> bits) & mask).astype(cp.int32)
    else:
        order = cp.argsort(((src.astype(cp.int64) >> SEGMENT_BITS) << 31) | dst)
        src, dst = src[order], dst[order]
    return Batch(0, int(num_vertices), src, dst, None)


def pull_sum(batch: Batch, x, out) -> None:
    _launch("ooc_graph_pull_sum", batch.num_arcs, (batch.src, batch.dst, x, out, np.int64(batch.num_arcs)))


def _plus(plus):
    return np.float64(0.0 if plus is None else plus)


def relax_min(batch: Batch, state, plus, changed, any_changed=None) -> None:
    w, use_w, wt = batch._w()
    flag = any_changed if any_changed is not None else _scratch_flag()
    _launch(f"ooc_graph_relax_min<{wt}>", batch.num_arcs,
            (batch.src, batch.dst, w, np.int32(use_w and plus is None), _plus(plus), state.view(cp.uint64),
             changed, flag, np.int64(batch.num_arcs)))


@cp.memoize(for_each_device=True)
def _scratch_flag():
    return cp.zeros(1, dtype=np.uint8)


def hook_min(batch: Batch, parent, changed) -> None:
    _launch("ooc_graph_hook_min", batch.num_arcs, (batch.src, batch.dst, parent, changed, np.int64(batch.num_arcs)))


def tight_parent(batch: Batch, dist, plus, parent, resolved) -> None:
    w, use_w, wt = batch._w()
    res = resolved if resolved is not None else _dummy().view(cp.uint8)
    _launch(f"ooc_graph_tight_parent<{wt}>", batch.num_arcs,
            (batch.src, batch.dst, w, np.int32(use_w and plus is None), _plus(plus), dist, parent,
             res.view(cp.uint8), np.int32(resolved is None), np.int64(batch.num_arcs)))


def advance_min(indptr, indices, weights, frontier, state, plus, changed) -> None:
    """Frontier advance over a device CSR (weights float64 or None), one warp per frontier vertex."""
    nf = int(frontier.size)
    w = weights if weights is not None else _dummy()
    _launch(f"ooc_graph_advance_min<{_WEIGHT[w.dtype]}>", 32 * nf,
            (indptr, indices, w, np.int32(weights is not None and plus is None), _plus(plus), frontier,
             np.int64(nf), state.view(cp.uint64), changed))


# Frontier queues for advance_levels: vertices a level may hand on without the host, the grid
# that strides over them, and how many levels run between two looks from the host.
QUEUE_CAPACITY = 1 << 16
_QUEUE_BLOCKS = 512
LEVELS_PER_SYNC = 64


@cp.memoize(for_each_device=True)
def _queues():
    return (cp.empty(QUEUE_CAPACITY, dtype=np.int64), cp.empty(QUEUE_CAPACITY, dtype=np.int64),
            cp.zeros(2, dtype=np.uint64), cp.zeros(3, dtype=np.uint64))


def advance_levels(indptr, indices, weights, frontier, state, plus, changed, levels: int = LEVELS_PER_SYNC):
    """Up to ``levels`` frontier advances from ``frontier`` (at most QUEUE_CAPACITY vertices,
    state in ``state``, ``changed`` all zero) queued back to back, then one look from the host.
    Returns ``(levels run, arcs relaxed, the next frontier)``; ``changed`` is all zero again
    unless the frontier outgrew the queue (then it marks that frontier, which is returned too)."""
    q = _queues()
    cur, nxt, sizes, ctl = q
    nf = int(frontier.size)
    cur[:nf] = frontier
    sizes[0], sizes[1] = nf, 0
    ctl.fill(0)
    w = weights if weights is not None else _dummy()
    use_w = np.int32(weights is not None and plus is None)
    advance = _kernel(f"ooc_graph_advance_queue<{_WEIGHT[w.dtype]}>")
    turn = _kernel("ooc_graph_queue_turn")
    st = state.view(cp.uint64)
    c = 0
    for _ in range(levels):
        a, b = q[c], q[1 - c]
        advance((_QUEUE_BLOCKS,), (_THREADS,), (indptr, indices, w, use_w, _plus(plus), a, b, sizes, np.int32(c),
                                                np.int64(QUEUE_CAPACITY), st, changed, ctl))
        turn((64,), (_THREADS,), (b, sizes, np.int32(c), np.int64(QUEUE_CAPACITY), changed, ctl))
        c = 1 - c
    stop, ran, arcs, size0, size1 = (int(v) for v in cp.concatenate([ctl, sizes]).get())
    if stop == 1:
        return ran, arcs, cp.empty(0, dtype=np.int64)
    if stop == 2:
        return ran, arcs, cp.flatnonzero(changed)
    return ran, arcs, q[c][:(size0, size1)[c]].copy()


def scatter_min(state, ids, values, changed) -> None:
    """``state[ids] = min(state[ids], values)`` (repeated ids allowed, non-negative values as
    every min-relaxed state here; negative ids are padding, skipped); ``changed[ids] = 1``:
    merging other workers' changes."""
    _launch("ooc_graph_scatter_min", int(ids.size),
            (ids, values, state.view(cp.uint64), changed, np.int64(ids.size)))


# Blocks of the PageRank step: enough to fill the GPU, few partial sums to add.
_STEP_BLOCKS = 1024


@cp.memoize(for_each_device=True)
def _partials():
    return cp.empty(2 * _STEP_BLOCKS, dtype=np.float64)


def pagerank_step(y, x, p, inv, alpha: float, lost: float, contrib):
    """One PageRank update of a vertex range in place (see :func:`.cpu.pagerank_step`); one
    fused pass over the arrays. Returns device scalars ``(err, dangling)``."""
    m = int(x.size)
    partial = _partials()
    if m:
        blocks = min(_STEP_BLOCKS, (m + _THREADS - 1) // _THREADS)
        use_p = not np.isscalar(p)
        _kernel("ooc_graph_pagerank_step")(
            (blocks,), (_THREADS,),
            (y, x, p if use_p else _dummy64(), np.float64(0.0 if use_p else p), np.int32(use_p), inv,
             np.float64(alpha), np.float64(lost), contrib, partial, np.int64(m)))
        sums = partial[:2 * blocks].reshape(blocks, 2).sum(axis=0)
    else:
        sums = cp.zeros(2, dtype=np.float64)
    return sums


@cp.memoize(for_each_device=True)
def _dummy64():
    return cp.zeros(1, dtype=np.float64)


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
    import cupyx
    from concurrent.futures import ThreadPoolExecutor
    return ([cupyx.empty_pinned(_STAGE_BYTES, dtype=np.uint8) for _ in range(_STAGE_BUFFERS)],
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


def to_host(array, out=None) -> np.ndarray:
    """``array`` (a CuPy array) in host memory: ``out`` if given (any writable C-contiguous host
    array of its shape and dtype, e.g. a memory map), else a new NumPy array."""
    array = cp.ascontiguousarray(array)
    if out is None:
        out = np.empty(array.shape, dtype=array.dtype)
    if array.nbytes < 2 * _STAGE_BYTES:
        array.get(out=out)
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


# -- the general edge operator ----------------------------------------------------------------
# One kernel per (expression, operand dtypes, monoid), generated by edge_codegen and compiled on
# first use on each device (never at import).
_SRC = ("var", "src")


@cp.memoize(for_each_device=True)
def _edge_kernel(name: str, source: str):
    return cp.RawKernel(source, name, options=("-std=c++14",))


def _edge_launch(batch: Batch, tree, monoid, xs, xd, active, out) -> None:
    from . import edge_codegen
    m = batch.num_arcs
    if not m:
        return
    w = batch.weight
    name, source = edge_codegen.kernel_source(tree, xs.dtype, xd.dtype, None if w is None else w.dtype,
                                              out.dtype, monoid)
    mask = active if active is not None else _dummy().view(cp.uint8)
    _edge_kernel(name, source)(((m + _THREADS - 1) // _THREADS,), (_THREADS,),
                               (batch.src, batch.dst, w if w is not None else _dummy64(), xs, xd, mask,
                                np.int32(active is not None), out, np.int64(m)))


def edge_combine(batch: Batch, tree, monoid: str, xs, xd, active, out) -> None:
    """As :func:`.cpu.edge_combine`: ``out[v] = monoid(out[v], f(xs[u], xd[v], w))`` over the
    arcs with an active source. Sums of ``src`` (float64) use the pull-sum kernel."""
    if (monoid == "sum" and tree == _SRC and active is None and xs.dtype == np.float64
            and out.dtype == np.float64):
        pull_sum(batch, xs, out)
        return
    _edge_launch(batch, tree, monoid, xs, xd, active, out)


def edge_values(batch: Batch, tree, xs, xd, active):
    """As :func:`.cpu.edge_values`: ``(destination int64, f float64)`` of the arcs with an active
    source."""
    values = cp.empty(batch.num_arcs, dtype=np.float64)
    _edge_launch(batch, tree, "store", xs, xd, None, values)
    dst = batch.dst.astype(cp.int64)
    if active is not None:
        keep = active[batch.src] != 0
        return dst[keep], values[keep]
    return dst, values

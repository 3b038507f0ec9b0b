"""The engine's collectives among GPU workers: NCCL (CuPy's bindings) on the compute stream.

Collectives that need not be waited for (``gather_owned`` and ``allreduce_array`` with
``wait=False``) go on a side stream of the highest priority instead, behind the work queued so
far, so that kernels queued next overlap them: PageRank's pull over the arcs from a rank's own
sources runs while the other ranks' contributions arrive. :meth:`NcclComm.join` makes the compute
stream wait for them (:meth:`NcclComm.join_gathered` only for the gathers: the pull over the other
ranks' sources need not wait for the sums all-reduced after them); every other collective joins
first, so the communicator's operations never run at once.

The NCCL unique id is made on rank 0 and handed to the others over the job's TCP mesh (plain
bytes, as the generation numbers are: :func:`~.wire.pack_unique_id`; nothing from a peer is
unpickled). NCCL
blocks forever when a peer dies, so every collective is waited for by polling its stream while
watching the mesh: a closed peer connection aborts the communicator and raises a
:class:`~ooc_graph.errors.JobError` naming the worker. Communicators are kept between jobs on
the same workers (making one takes ~0.4 s), and dropped after any failure.
"""

from __future__ import annotations

import time

import cupy as cp
import numpy as np
from cupy.cuda import nccl

from ooc_graph.engine.exchange import Comm
from ooc_graph.errors import JobError
from ooc_graph.kernels import gpu

from . import wire
from .mesh import Mesh

_TYPES = {np.dtype(np.float64): nccl.NCCL_FLOAT64, np.dtype(np.int64): nccl.NCCL_INT64,
          np.dtype(np.uint8): nccl.NCCL_UINT8, np.dtype(np.int32): nccl.NCCL_INT32,
          np.dtype(np.float32): nccl.NCCL_FLOAT32}
_OPS = {"sum": nccl.NCCL_SUM, "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN}
# merge_min reduces the whole state instead of gathering (id, value) pairs once this share changed.
DENSE_SHARE = 1 / 16
# Spin on a collective this long before sleeping between polls; check the peers this often.
SPIN_SECONDS = 0.02
CHECK_SECONDS = 0.1

_COMMS: dict = {}  # worker addresses of the job, in rank order -> (generation, communicator)


def communicator(mesh: Mesh, key: tuple):
    """An NCCL communicator over the job's ranks: the one kept from an earlier job on exactly
    these workers when every rank still has it, else a new one bootstrapped over the mesh."""
    generation, comm = _COMMS.get(key, (-1, None))
    seen = [wire.unpack_generation(p) for p in mesh.allgather(wire.pack_generation(generation))]
    if min(seen) >= 0 and len(set(seen)) == 1:
        return comm
    drop(key)
    uid = mesh.broadcast(wire.pack_unique_id(nccl.get_unique_id()) if mesh.rank == 0 else b"", root=0)
    uid = wire.unpack_unique_id(uid)
    try:
        comm = nccl.NcclCommunicator(mesh.size, uid, mesh.rank)
    except TypeError:  # CuPy 14 takes the id as bytes ("commId ... expected bytes, got tuple")
        comm = nccl.NcclCommunicator(mesh.size, wire.unique_id_bytes(uid), mesh.rank)
    _COMMS[key] = (max(seen) + 1, comm)
    return comm


def drop(key: tuple, abort: bool = False) -> None:
    """Forget (and with ``abort``, abort) the communicator kept for ``key``."""
    _, comm = _COMMS.pop(key, (None, None))
    if comm is not None and abort:
        try:
            comm.abort()
        except Exception:  # already broken: nothing more to free
            pass


def _priority_stream():
    """A non-blocking stream of the device's highest priority: the few blocks of an NCCL kernel
    queued there are scheduled before the next waiting blocks of the kernels it overlaps (a
    pull over every SM would otherwise hold it back until the pull's last wave)."""
    try:
        _, greatest = cp.cuda.runtime.deviceGetStreamPriorityRange()
        return cp.cuda.Stream(non_blocking=True, priority=greatest)
    except (AttributeError, TypeError):  # a CuPy without stream priorities
        return cp.cuda.Stream(non_blocking=True)


class NcclComm(Comm):
    """Collectives for a job whose workers each drive one GPU."""

    queues_on_device = True

    def __init__(self, mesh: Mesh, ranges: list, key: tuple):
        self.mesh, self.rank, self.size, self.key = mesh, mesh.rank, mesh.size, key
        self.ranges = [tuple(map(int, r)) for r in ranges]
        self.nccl = communicator(mesh, key)
        self._count = cp.zeros(1, dtype=np.int64)
        self._counts = cp.zeros(self.size, dtype=np.int64)
        self._side = None  # the side stream, made on first use
        self._side_done = None  # an event after the last collective queued there, not yet joined
        self._gathered = None  # an event after the last gather queued there, not yet joined
        self._open = None  # the side stream while a gather's NCCL group is left open (see gather_owned)

    def _queue_on_side(self):
        """The side stream, made to wait for the work queued so far on the current stream."""
        if self._side is None:
            self._side = _priority_stream()
        self._side.wait_event(cp.cuda.get_current_stream().record())
        return self._side

    def _close_group(self) -> None:
        """Launch a gather left open, with whatever joined its group (:meth:`gather_owned`)."""
        if self._open is not None:
            stream, self._open = self._open, None
            nccl.groupEnd()
            self._side_done = self._gathered = stream.record()

    def abandon(self) -> None:
        """After a failure: end a group left open, so that this thread's next NCCL calls (a
        later job's, on a reused worker thread) are not inside it."""
        if self._open is not None:
            self._open = None
            try:
                nccl.groupEnd()
            except Exception:  # a broken communicator: it is aborted next
                pass

    def join(self) -> None:
        self._close_group()
        if self._side_done is not None:
            cp.cuda.get_current_stream().wait_event(self._side_done)
            self._side_done = self._gathered = None

    def join_gathered(self) -> None:
        self._close_group()
        if self._gathered is not None:
            cp.cuda.get_current_stream().wait_event(self._gathered)
            self._gathered = None

    def queue_stream(self):
        self._close_group()
        return self._side if self._side_done is not None else super().queue_stream()

    def _stream(self, wait: bool):
        """Where to queue a collective: the current stream once it has joined the side stream
        (one to wait for), else the side stream behind the current stream's work."""
        self._close_group()
        if not wait:
            return self._queue_on_side()
        self.join()
        return cp.cuda.get_current_stream()

    def _finish(self, wait: bool, stream) -> None:
        """Wait for a collective queued by :meth:`_stream`, or mark the side stream's work as not
        yet joined."""
        if wait:
            self._wait()
        else:
            self._side_done = stream.record()

    def _wait(self, until=None) -> None:
        """Wait for the collectives queued on the current stream (or ``until``, an event recorded
        behind some of them), watching the peers."""
        until = cp.cuda.get_current_stream() if until is None else until
        start = last_check = time.monotonic()
        while not until.done:
            now = time.monotonic()
            if now - last_check > CHECK_SECONDS:
                last_check = now
                try:
                    self.mesh.check()
                    self.nccl.check_async_error()
                except Exception as err:
                    drop(self.key, abort=True)
                    if isinstance(err, JobError):
                        raise
                    raise JobError(f"rank {self.rank}: NCCL failed: {err}") from err
            if now - start > SPIN_SECONDS:
                time.sleep(0.0005)

    def _ptr(self, x, offset: int = 0) -> int:
        return x.data.ptr + offset * x.itemsize

    def gather_owned(self, x, wait: bool = True) -> int:
        """Without waiting, the broadcasts' NCCL group is left open until the next collective
        queued without waiting joins it, or anything else closes it: one launch for both. An
        NCCL kernel launched while a pull fills the device waits for free SMs that the pull's
        own blocks keep taking (the sums' all-reduce launched after a gather took ~1.3 ms a
        PageRank iteration on R-MAT-26, ending with the pull); launched together with the
        gather, as the step that produced both ends, it gets its SMs at once."""
        queue = self._stream(wait)
        kind = _TYPES[x.dtype]
        nccl.groupStart()
        for r, (lo, hi) in enumerate(self.ranges):
            if hi > lo:
                self.nccl.broadcast(self._ptr(x, lo), self._ptr(x, lo), hi - lo, kind, r, queue.ptr)
        if wait:
            nccl.groupEnd()
            self._finish(wait, queue)
        else:
            self._open = queue
        lo, hi = self.owned
        return (hi - lo) * x.itemsize * (self.size - 1)

    def merge_min(self, state, changed) -> int:
        stream = self._stream(wait=True).ptr
        ids = gpu.flatnonzero(changed)
        self._count[0] = ids.size
        self.nccl.allGather(self._ptr(self._count), self._ptr(self._counts), 1, nccl.NCCL_INT64, stream)
        self._wait()
        counts = cp.asnumpy(self._counts)
        total, most = int(counts.sum()), int(counts.max())
        if total == 0:
            return 8
        if total > DENSE_SHARE * state.size:
            self.nccl.allReduce(self._ptr(state), self._ptr(state), state.size, _TYPES[state.dtype],
                                nccl.NCCL_MIN, stream)
            self.nccl.allReduce(self._ptr(changed), self._ptr(changed), changed.size, nccl.NCCL_UINT8,
                                nccl.NCCL_MAX, stream)
            self._wait()
            return state.nbytes + changed.nbytes
        send_ids = cp.full(most, -1, dtype=np.int64)
        send_ids[:ids.size] = ids
        send_vals = cp.zeros(most, dtype=state.dtype)
        send_vals[:ids.size] = state[ids]
        all_ids = cp.empty(most * self.size, dtype=np.int64)
        all_vals = cp.empty(most * self.size, dtype=state.dtype)
        nccl.groupStart()
        self.nccl.allGather(self._ptr(send_ids), self._ptr(all_ids), most, nccl.NCCL_INT64, stream)
        self.nccl.allGather(self._ptr(send_vals), self._ptr(all_vals), most, _TYPES[state.dtype], stream)
        nccl.groupEnd()
        gpu.scatter_min(state, all_ids, all_vals, changed)  # padding ids (-1) are skipped
        self._wait()
        return most * (8 + state.itemsize)

    def merge_level(self, state, changed, value: float, stop: bool = False) -> int:
        stream = self._stream(wait=True).ptr
        bits = cp.packbits(changed)
        send = cp.empty(bits.size + 1, dtype=np.uint8)  # the flags, then this rank's stop request
        send[:-1] = bits
        send[-1] = int(stop)
        every = cp.empty(send.size * self.size, dtype=np.uint8)
        self.nccl.allGather(self._ptr(send), self._ptr(every), send.size, nccl.NCCL_UINT8, stream)
        gpu.merge_level(state, changed, every, self.size, value)  # each rank's part: its flags and a byte
        self._wait()
        self.agreed_stop = bool(cp.asnumpy(every[send.size - 1::send.size]).any())
        return send.nbytes

    def reduce_min(self, x) -> int:
        stream = self._stream(wait=True).ptr
        self.nccl.allReduce(self._ptr(x), self._ptr(x), x.size, _TYPES[x.dtype], nccl.NCCL_MIN, stream)
        self._wait()
        return x.nbytes

    def allreduce(self, value, op: str = "sum"):
        stream = self._stream(wait=True).ptr
        host = np.atleast_1d(np.asarray(value, np.float64))
        buf = cp.asarray(host)
        self.nccl.allReduce(self._ptr(buf), self._ptr(buf), buf.size, nccl.NCCL_FLOAT64, _OPS[op], stream)
        self._wait()
        result = cp.asnumpy(buf)
        if isinstance(value, np.ndarray):
            return result
        return int(result[0]) if isinstance(value, (int, np.integer)) else float(result[0])

    def allreduce_array(self, x, op: str = "sum", wait: bool = True) -> None:
        if not wait and self._open is not None:  # joins the gather's group: one launch
            queue = self._open
            queue.wait_event(cp.cuda.get_current_stream().record())  # x is made: before the launch
            self.nccl.allReduce(self._ptr(x), self._ptr(x), x.size, _TYPES[x.dtype], _OPS[op], queue.ptr)
            self._close_group()
            return
        queue = self._stream(wait)
        self.nccl.allReduce(self._ptr(x), self._ptr(x), x.size, _TYPES[x.dtype], _OPS[op], queue.ptr)
        self._finish(wait, queue)

    def wait_for(self, event) -> None:
        self._close_group()
        self._wait(event)

    def barrier(self) -> None:
        self.allreduce(0)

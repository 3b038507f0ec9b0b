"""The engine's collectives among CPU workers, over the job's TCP mesh (NumPy arrays)."""

from __future__ import annotations

import numpy as np

from ooc_graph.engine.exchange import Comm
from ooc_graph.kernels import cpu

from .mesh import Mesh

# merge_min sends the whole state instead of (id, value) pairs once this share of it changed.
DENSE_SHARE = 0.5


class HostComm(Comm):
    """Collectives for a job whose workers run on the CPU. ``ranges[r]`` is rank r's vertices."""

    def __init__(self, mesh: Mesh, ranges: list):
        self.mesh, self.rank, self.size = mesh, mesh.rank, mesh.size
        self.ranges = [tuple(map(int, r)) for r in ranges]

    def _sent(self, before: int) -> int:
        return self.mesh.bytes_sent - before

    def gather_owned(self, x, wait: bool = True) -> int:
        before = self.mesh.bytes_sent
        lo, hi = self.owned
        for r, part in enumerate(self.mesh.allgather(np.ascontiguousarray(x[lo:hi]))):
            if r != self.rank:
                a, b = self.ranges[r]
                x[a:b] = np.frombuffer(part, dtype=x.dtype)
        return self._sent(before)

    def merge_min(self, state, changed) -> int:
        before = self.mesh.bytes_sent
        ids = np.flatnonzero(changed)
        dense = ids.size > DENSE_SHARE * state.size
        payload = (b"D" + state.tobytes() + changed.tobytes()) if dense else \
            (b"S" + ids.astype(np.int64).tobytes() + state[ids].tobytes())
        for r, part in enumerate(self.mesh.allgather(payload)):
            if r == self.rank:
                continue
            body = memoryview(part)[1:]
            if part[:1] == b"D":
                other = np.frombuffer(body[:state.nbytes], dtype=state.dtype)
                np.minimum(state, other, out=state)
                changed |= np.frombuffer(body[state.nbytes:], dtype=changed.dtype)
            else:
                k = len(body) // (8 + state.itemsize)
                cpu.scatter_min(state, np.frombuffer(body[:8 * k], dtype=np.int64),
                                np.frombuffer(body[8 * k:], dtype=state.dtype), changed)
        return self._sent(before)

    def merge_level(self, state, changed, value: float, stop: bool = False) -> int:
        before = self.mesh.bytes_sent
        ids = np.flatnonzero(changed)
        bits = None if ids.size * 64 < changed.size else np.packbits(changed)  # the smaller: ids or bits
        # the kind of body, this rank's stop request, the body
        payload = (b"S" + bytes([stop]) + ids.astype(np.int64).tobytes() if bits is None else
                   b"B" + bytes([stop]) + bits.tobytes())
        merged = changed.astype(bool)
        parts = self.mesh.allgather(payload)
        self.agreed_stop = any(part[1] for part in parts)
        for r, part in enumerate(parts):
            if r == self.rank:
                continue
            body = np.frombuffer(memoryview(part)[2:], dtype=np.int64 if part[:1] == b"S" else np.uint8)
            if part[:1] == b"S":
                merged[body] = True
            else:
                merged |= np.unpackbits(body, count=changed.size).view(bool)
        np.minimum(state, value, out=state, where=merged)
        changed[merged] = 1
        return self._sent(before)

    def reduce_min(self, x) -> int:
        before = self.mesh.bytes_sent
        for r, part in enumerate(self.mesh.allgather(np.ascontiguousarray(x))):
            if r != self.rank:
                np.minimum(x, np.frombuffer(part, dtype=x.dtype), out=x)
        return self._sent(before)

    def allreduce(self, value, op: str = "sum"):
        parts = [np.frombuffer(p, np.float64) for p in self.mesh.allgather(np.asarray(value, np.float64).tobytes())]
        result = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op].reduce(parts)
        if isinstance(value, np.ndarray):
            return result
        return int(result[0]) if isinstance(value, (int, np.integer)) else float(result[0])

    def allreduce_array(self, x, op: str = "sum", wait: bool = True) -> None:  # always waits
        x[...] = self.allreduce(np.asarray(x), op)

    def barrier(self) -> None:
        self.mesh.barrier()

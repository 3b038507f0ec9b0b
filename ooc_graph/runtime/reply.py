"""Rank 0 hands a finished job straight to a client on the same host.

Through dask, a rank's return value reaches the client by way of the worker's and the
scheduler's batched streams and a fetch: about 20 ms from the last rank finishing to the client
holding the result on a 2-GPU host (benchmarks/RESULTS.md, "After direction optimisation"), as
long as the whole computation on a graph of a few million vertices. Where the client shares the
ranks' host (the case in which results already travel through shared memory), rank 0 instead
connects to the client's own :class:`~.hub.Hub` on the loopback interface and sends every rank's
part (its result, the others' summaries gathered over the mesh) before returning from its task;
the client takes whichever comes first, this reply or dask's. The connection proves the job's
secret (:mod:`.wire`), and its payload is plain data (never a pickle) of at most
:data:`~.limits.MAX_PAYLOAD` bytes: a larger or other reply goes back through dask.
"""

from __future__ import annotations

import math
import socket
import threading
import time

from . import mesh as _mesh
from . import wire
from .limits import MAX_PAYLOAD

LOOPBACK = "127.0.0.1"
# A listener whose job's tasks have all ended without a reply gives up after this many seconds.
STALE_SECONDS = 30.0


def new_route(job_id: str, secret: bytes) -> tuple:
    """The address of this process's loopback hub, which takes ``job_id``'s reply from now on."""
    h = _mesh.hub(LOOPBACK)
    h.expect(wire.REPLY, job_id, secret)
    return tuple(h.address)


def forget(job_id: str) -> None:
    """This process takes no reply for ``job_id`` any more."""
    _mesh.hub(LOOPBACK).forget(job_id, wire.REPLY)


def send(address, job_id: str, secret: bytes, parts: list) -> None:
    """Rank 0: every rank's part of the result, to the client listening at ``address``; raises
    ``TypeError`` or ``ValueError`` for parts that are not plain data or too large to send,
    ``OSError`` for a client that cannot be reached."""
    payload = wire.dumps(parts)
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"a reply of {len(payload)} bytes (at most {MAX_PAYLOAD})")
    with socket.create_connection(tuple(address), timeout=10.0) as sock:
        wire.introduce(sock, wire.REPLY, job_id, 0, secret, payload)


class Listener:
    """The client's wait for rank 0's reply, on a thread: ``parts`` once it has come (then
    ``arrived`` is set), None until then. ``ended()`` says whether the job's tasks have all
    ended, after which a reply that has not come never will."""

    def __init__(self, job_id: str, secret: bytes, arrived: threading.Event, ended):
        self.job_id, self.arrived, self.parts = job_id, arrived, None
        self._secret = secret
        self._closed = False
        self._ended, self._ended_at = ended, None
        self._thread = threading.Thread(target=self._wait, name="ooc-graph-reply", daemon=True)
        self._thread.start()

    def _stale(self) -> bool:
        if self._closed:
            return True
        if not self._ended():
            return False
        self._ended_at = self._ended_at or time.monotonic()
        return time.monotonic() - self._ended_at > STALE_SECONDS

    def _wait(self) -> None:
        hub = _mesh.hub(LOOPBACK)
        try:
            payload = hub.take(wire.REPLY, self.job_id, {0}, self._secret, math.inf, abort=self._stale)[0]
        except (ConnectionAbortedError, TimeoutError):
            hub.forget(self.job_id, wire.REPLY)
            return
        try:
            parts = wire.loads(payload)
            if isinstance(parts, list) and parts and all(isinstance(p, dict) and "summary" in p for p in parts):
                self.parts = parts
        except wire.ProtocolError:
            pass  # a broken reply: the client falls back on dask's
        finally:
            self.arrived.set()

    def wait(self, timeout: float) -> list | None:
        """The parts, waiting up to ``timeout`` seconds for them (rank 0 said it sent them)."""
        self._thread.join(timeout)
        return self.parts

    def close(self) -> None:
        self._closed = True

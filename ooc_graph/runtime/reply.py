"""Rank 0 hands a finished job straight to a client on the same host.

Through dask, a rank's return value reaches the client by way of the worker's and the
scheduler's batched streams and a fetch: about 20 ms from the last rank finishing to the client
holding the result on a 2-GPU host (benchmarks/RESULTS.md, "After direction optimisation"), as
long as the whole computation on a graph of a few million vertices. Where the client shares the
ranks' host (the case in which results already travel through shared memory), rank 0 instead
connects to the client's own :class:`~.mesh.Hub` on the loopback interface and sends every rank's
part (its result, the others' summaries gathered over the mesh) before returning from its task;
the client takes whichever comes first, this reply or dask's. The connection introduces itself
with a random key that only the job's spec carries, and its payload is plain data (:mod:`.wire`,
never a pickle): a reply that is not goes back through dask.
"""

from __future__ import annotations

import math
import secrets
import socket
import threading
import time

from . import mesh as _mesh
from . import wire

LOOPBACK = "127.0.0.1"
# A listener whose job's tasks have all ended without a reply gives up after this many seconds.
STALE_SECONDS = 30.0


def new_route() -> tuple:
    """``(address, key)`` for a job's reply: this process's loopback hub and a fresh key."""
    return tuple(_mesh.hub(LOOPBACK).address), secrets.token_hex(16)


def send(address, key: str, parts: list) -> None:
    """Rank 0: every rank's part of the result, to the client listening at ``address``; raises
    ``TypeError`` for parts that are not plain data, ``OSError`` for a client that cannot be
    reached."""
    payload = wire.dumps(parts)
    tag = key.encode()
    with socket.create_connection(tuple(address), timeout=10.0) as sock:
        sock.sendall(_mesh._HEADER.pack(len(tag)) + tag + _mesh._HEADER.pack(0)
                     + _mesh._HEADER.pack(len(payload)) + payload)


class Listener:
    """The client's wait for rank 0's reply, on a thread: ``parts`` once it has come (then
    ``arrived`` is set), None until then. ``ended()`` says whether the job's tasks have all
    ended, after which a reply that has not come never will."""

    def __init__(self, key: str, arrived: threading.Event, ended):
        self.key, self.arrived, self.parts = key, arrived, None
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
            sock = hub.take(self.key, {0}, math.inf, abort=self._stale)[0]
        except (ConnectionAbortedError, TimeoutError):
            hub.forget(self.key)
            return
        try:
            sock.settimeout(10.0)
            (length,) = _mesh._HEADER.unpack(_mesh._recv_exact(sock, _mesh._HEADER.size))
            parts = wire.loads(_mesh._recv_exact(sock, length))
            if isinstance(parts, list) and parts and all(isinstance(p, dict) and "summary" in p for p in parts):
                self.parts = parts
        except (OSError, EOFError, ValueError):
            pass  # a broken reply: the client falls back on dask's
        finally:
            sock.close()
            self.arrived.set()

    def wait(self, timeout: float) -> list | None:
        """The parts, waiting up to ``timeout`` seconds for them (rank 0 said it sent them)."""
        self._thread.join(timeout)
        return self.parts

    def close(self) -> None:
        self._closed = True

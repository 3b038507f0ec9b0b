"""A full mesh of TCP connections among the ranks of one job: bootstrap and host collectives.

Every pair of ranks shares one connection, made through the lower rank's :class:`~.hub.Hub` and
proven with the job's secret (:mod:`.wire`); a message is an 8-byte little-endian length (at
most :data:`~.limits.MAX_MESSAGE`) and its bytes. Collectives are called in the same order on
every rank, so the messages between two ranks stay in step. A peer that dies closes its sockets
(the operating system does it for a killed process), and the next collective — or
:meth:`Mesh.check`, which GPU ranks poll while NCCL works — raises
:class:`~ooc_graph.errors.JobError` naming that peer: a dead worker never leaves the others
waiting.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time

from ooc_graph.errors import JobError

from . import wire
from .hub import CONNECT_TIMEOUT, Hub, give_up
from .limits import MAX_MESSAGE

__all__ = ["Mesh", "Hub", "hub", "CONNECT_TIMEOUT"]

_HUBS: dict = {}
_HUBS_LOCK = threading.Lock()


def hub(host: str) -> Hub:
    """This process's hub on ``host``."""
    with _HUBS_LOCK:
        if host not in _HUBS:
            _HUBS[host] = Hub(host)
        return _HUBS[host]


class Mesh:
    """Connections to every other rank of job ``job``: rank r connects to the hubs of the lower
    ranks (``addresses[r]`` is rank r's hub) and takes the higher ranks' connections from its own
    ``hub``. ``names[r]`` is how errors name rank r (its worker's address)."""

    def __init__(self, job: str, rank: int, addresses: list, own: Hub, secret: bytes, names: list | None = None,
                 timeout: float = CONNECT_TIMEOUT, abort=None):
        self.rank, self.size = rank, len(addresses)
        self.names = names or [f"{h}:{p}" for h, p in addresses]
        self.peers: dict[int, socket.socket] = {}
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout
        own.expect(wire.MESH, job, secret)  # higher ranks that come meanwhile are checked at once
        try:
            for r in range(rank):  # connect to the lower ranks, then introduce ourselves to each
                self.peers[r] = _connect(addresses[r], deadline, abort)
            for r in range(rank):
                self.peers[r].settimeout(max(0.01, deadline - time.monotonic()))
                wire.introduce(self.peers[r], wire.MESH, job, rank, secret)
            self.peers.update(own.take(wire.MESH, job, set(range(rank + 1, self.size)), secret, deadline, abort))
        except (OSError, EOFError) as err:
            self.close()
            own.forget(job, wire.MESH)
            missing = [self.names[r] for r in range(self.size) if r != rank and r not in self.peers]
            raise JobError(f"rank {rank} could not connect to the other workers of job {job} "
                           f"({', '.join(missing) or 'all connected, not all introduced'}) within {timeout:.0f} s: "
                           f"{err}") from err
        for sock in self.peers.values():
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        self.bytes_sent = 0

    # -- collectives ----------------------------------------------------------------------------
    def exchange(self, outgoing: dict) -> dict:
        """Send ``outgoing[peer]`` (bytes-like) to each peer named and receive one message from
        each of them, all at once; returns ``{peer: bytes}``."""
        with self._lock:
            return self._exchange(outgoing)

    def _exchange(self, outgoing: dict) -> dict:
        sel = selectors.DefaultSelector()
        sending, receiving, got = {}, {}, {}
        try:
            for peer, payload in outgoing.items():
                sock = self.peers[peer]
                sock.setblocking(False)
                head, view = wire.frame(payload)
                sending[peer] = [memoryview(head), view]
                receiving[peer] = [bytearray(wire.LENGTH.size), 0, None]  # buffer, filled, body length
                sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, peer)
                self.bytes_sent += view.nbytes
            while sending or receiving:
                for key, events in sel.select():
                    peer = key.data
                    if events & selectors.EVENT_WRITE and peer in sending:
                        self._send_some(peer, sending)
                    if events & selectors.EVENT_READ and peer in receiving:
                        body = self._recv_some(peer, receiving[peer])
                        if body is not None:
                            got[peer] = body
                            del receiving[peer]
                    wanted = (selectors.EVENT_READ if peer in receiving else 0) | \
                             (selectors.EVENT_WRITE if peer in sending else 0)
                    if wanted:
                        sel.modify(key.fileobj, wanted, peer)
                    else:
                        sel.unregister(key.fileobj)
        finally:
            sel.close()
            for peer in outgoing:
                self.peers[peer].setblocking(True)
        return got

    def _send_some(self, peer, sending):
        parts = sending[peer]
        try:
            sent = self.peers[peer].send(parts[0])
        except BlockingIOError:
            return
        except OSError as err:
            raise self._lost(peer, err) from err
        parts[0] = parts[0][sent:]
        while parts and not parts[0].nbytes:
            parts.pop(0)
        if not parts:
            del sending[peer]

    def _recv_some(self, peer, state):
        buf, filled, length = state
        try:
            n = self.peers[peer].recv_into(memoryview(buf)[filled:])
        except BlockingIOError:
            return None
        except OSError as err:
            raise self._lost(peer, err) from err
        if n == 0 and len(buf) > filled:
            raise self._lost(peer, None)
        filled += n
        if length is None and filled == wire.LENGTH.size:
            try:
                length = wire.length(bytes(buf), MAX_MESSAGE, "a message")
            except wire.ProtocolError as err:
                raise JobError(f"rank {peer} (worker {self.names[peer]}) sent {err}") from None
            buf, filled = bytearray(length), 0
        state[:] = [buf, filled, length]
        return bytes(buf) if length is not None and filled == length else None

    def allgather(self, payload) -> list:
        """Every rank's ``payload``, in rank order."""
        got = self.exchange({peer: payload for peer in self.peers})
        return [payload if r == self.rank else got[r] for r in range(self.size)]

    def broadcast(self, payload, root: int = 0) -> bytes:
        """``payload`` of rank ``root``, on every rank."""
        if self.rank == root:
            self.exchange({peer: payload for peer in self.peers})
            return bytes(payload)
        return self.exchange({root: b""})[root]

    def barrier(self) -> None:
        self.allgather(b"")

    # -- failures -------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise if a peer has closed its connection (a dead worker); never blocks."""
        with self._lock:
            for peer, sock in self.peers.items():
                try:
                    sock.setblocking(False)
                    data = sock.recv(1, socket.MSG_PEEK)
                except BlockingIOError:
                    continue
                except OSError as err:
                    raise self._lost(peer, err) from err
                finally:
                    sock.setblocking(True)
                if data == b"":
                    raise self._lost(peer, None)

    def _lost(self, peer, err) -> JobError:
        why = f" ({err})" if err else ""
        return JobError(f"rank {peer} (worker {self.names[peer]}) closed its connection{why}: "
                        "the worker died or its part of the job failed")

    def close(self) -> None:
        for sock in self.peers.values():
            try:
                sock.close()
            except OSError:
                pass
        self.peers.clear()


def _connect(address, deadline, abort):
    while True:
        try:
            return socket.create_connection(tuple(address), timeout=max(0.01, deadline - time.monotonic()))
        except OSError:
            give_up(deadline, abort)
            time.sleep(0.02)

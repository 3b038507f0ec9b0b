"""A full mesh of TCP connections among the ranks of one job: bootstrap and host collectives.

Every pair of ranks shares one connection; a message is an 8-byte little-endian length and its
bytes. Collectives are called in the same order on every rank, so the messages between two ranks
stay in step. A peer that dies closes its sockets (the operating system does it for a killed
process), and the next collective — or :meth:`Mesh.check`, which GPU ranks poll while NCCL
works — raises :class:`~ooc_graph.errors.JobError` naming that peer: a dead worker never leaves
the others waiting.
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading
import time

from ooc_graph.errors import JobError

_HEADER = struct.Struct("<q")
CONNECT_TIMEOUT = 60.0  # seconds for the whole mesh to form


def listen(host: str) -> socket.socket:
    """A listening socket on ``host`` (a free port), for :class:`Mesh`."""
    sock = socket.create_server((host, 0), backlog=128)
    return sock


class Mesh:
    """Connections to every other rank. ``addresses[r]`` is ``(host, port)`` of rank r's listener,
    ``names[r]`` how errors name rank r (its worker's address)."""

    def __init__(self, rank: int, addresses: list, listener: socket.socket | None, names: list | None = None,
                 timeout: float = CONNECT_TIMEOUT, abort=None):
        self.rank, self.size = rank, len(addresses)
        self.names = names or [f"{h}:{p}" for h, p in addresses]
        self.peers: dict[int, socket.socket] = {}
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout
        try:
            for r in range(rank):  # connect to lower ranks, introduce ourselves
                sock = _connect(addresses[r], deadline, abort)
                sock.sendall(_HEADER.pack(rank))
                self.peers[r] = sock
            while len(self.peers) < self.size - 1:  # accept the higher ranks
                listener.settimeout(0.1)
                try:
                    sock, _ = listener.accept()
                except socket.timeout:
                    _give_up(deadline, abort)
                    continue
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                (peer,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
                self.peers[peer] = sock
        except (OSError, EOFError) as err:
            self.close()
            missing = [self.names[r] for r in range(self.size) if r != rank and r not in self.peers]
            raise JobError(f"rank {rank} could not connect to the other workers of the job "
                           f"({', '.join(missing)}) within {timeout:.0f} s: {err}") from err
        finally:
            if listener is not None:
                listener.close()
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
                view = memoryview(payload).cast("B")
                sending[peer] = [memoryview(_HEADER.pack(view.nbytes)), view]
                receiving[peer] = [bytearray(_HEADER.size), 0, None]  # buffer, filled, body length
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
        if length is None and filled == _HEADER.size:
            (length,) = _HEADER.unpack(buf)
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


def _give_up(deadline, abort) -> None:
    if abort is not None and abort():
        raise ConnectionAbortedError("the job was cancelled")
    if time.monotonic() > deadline:
        raise TimeoutError("timed out")


def _connect(address, deadline, abort):
    while True:
        try:
            return socket.create_connection(tuple(address), timeout=max(0.01, deadline - time.monotonic()))
        except OSError:
            _give_up(deadline, abort)
            time.sleep(0.02)


def _recv_exact(sock, n: int) -> bytes:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("connection closed")
        got += k
    return bytes(buf)

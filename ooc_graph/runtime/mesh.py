"""A full mesh of TCP connections among the ranks of one job: bootstrap and host collectives.

Every pair of ranks shares one connection; a message is an 8-byte little-endian length and its
bytes. Collectives are called in the same order on every rank, so the messages between two ranks
stay in step. A peer that dies closes its sockets (the operating system does it for a killed
process), and the next collective — or :meth:`Mesh.check`, which GPU ranks poll while NCCL
works — raises :class:`~ooc_graph.errors.JobError` naming that peer: a dead worker never leaves
the others waiting.
"""

from __future__ import annotations

import hmac
import logging
import selectors
import socket
import struct
import threading
import time

from ooc_graph.errors import JobError

_HEADER = struct.Struct("<q")
CONNECT_TIMEOUT = 60.0  # seconds for the whole mesh to form
# A connection whose job id starts so carries a rank's start (runtime/launch.py), not a peer.
START_TAG = "!start/"
MAX_START = 64 << 20  # bytes of a start's payload taken at most
log = logging.getLogger("ooc_graph.runtime")


class Hub:
    """One listening socket per worker process, made on first use and kept: every job's ranks
    connect to it, introducing themselves with the job id and their rank, and the hub hands each
    connection to the job that waits for it. Clients learn a worker's hub address once, so a job
    needs no round trip to set its mesh up. A worker's hub also takes the client's direct starts
    of its ranks, given ``start_token`` and ``on_start(hub, rank, payload)``."""

    start_token: str | None = None
    on_start = None

    def __init__(self, host: str):
        self.sock = socket.create_server((host, 0), backlog=256)
        self.address = self.sock.getsockname()[:2]
        self._arrived: dict = {}  # job id -> {rank: socket}
        self._cond = threading.Condition()
        threading.Thread(target=self._accept, name="ooc-graph-hub", daemon=True).start()

    def _accept(self):
        while True:
            try:
                sock, _ = self.sock.accept()
                sock.settimeout(10.0)
                (length,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
                job = _recv_exact(sock, min(length, 1024)).decode()
                (rank,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
            except (OSError, EOFError, UnicodeDecodeError):
                continue  # a stray or broken connection: ignore it
            if job.startswith(START_TAG):
                self._start(sock, job[len(START_TAG):], rank)
                continue
            with self._cond:
                self._arrived.setdefault(job, {})[rank] = sock
                self._cond.notify_all()

    def _start(self, sock, token: str, rank: int) -> None:
        """A client's start of rank ``rank``: handed to ``on_start`` with this hub's token only."""
        try:
            if self.on_start is None or self.start_token is None or \
                    not hmac.compare_digest(token.encode(), self.start_token.encode()):
                return
            (length,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
            if not 0 <= length <= MAX_START:
                return
            payload = _recv_exact(sock, length)
        except (OSError, EOFError):
            return
        finally:
            sock.close()
        try:
            self.on_start(self, rank, payload)
        except Exception as err:  # the rank's task starts it instead
            log.warning("a direct start of rank %d failed (%s: %s); its task will start it", rank,
                        type(err).__name__, err)

    def take(self, job: str, ranks: set, deadline: float, abort=None) -> dict:
        """The connections of ``ranks`` for ``job``, as they arrive, until ``deadline``."""
        got = {}
        with self._cond:
            while True:
                arrived = self._arrived.get(job, {})
                for r in list(arrived):
                    if r in ranks:
                        got[r] = arrived.pop(r)
                if len(got) == len(ranks):
                    self._arrived.pop(job, None)
                    return got
                try:
                    _give_up(deadline, abort)
                except BaseException:
                    for sock in got.values():
                        sock.close()
                    self._arrived.pop(job, None)
                    raise
                self._cond.wait(0.1)

    def forget(self, job: str) -> None:
        with self._cond:
            for sock in self._arrived.pop(job, {}).values():
                sock.close()


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

    def __init__(self, job: str, rank: int, addresses: list, own: Hub, names: list | None = None,
                 timeout: float = CONNECT_TIMEOUT, abort=None):
        self.rank, self.size = rank, len(addresses)
        self.names = names or [f"{h}:{p}" for h, p in addresses]
        self.peers: dict[int, socket.socket] = {}
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout
        tag = job.encode()
        try:
            for r in range(rank):  # connect to lower ranks, introduce ourselves
                sock = _connect(addresses[r], deadline, abort)
                sock.sendall(_HEADER.pack(len(tag)) + tag + _HEADER.pack(rank))
                self.peers[r] = sock
            self.peers.update(own.take(job, set(range(rank + 1, self.size)), deadline, abort))
        except (OSError, EOFError) as err:
            self.close()
            missing = [self.names[r] for r in range(self.size) if r != rank and r not in self.peers]
            raise JobError(f"rank {rank} could not connect to the other workers of the job "
                           f"({', '.join(missing)}) within {timeout:.0f} s: {err}") from err
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

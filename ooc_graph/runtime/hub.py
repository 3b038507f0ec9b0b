"""One listening socket per process and host, shared by every job: a worker's hub takes its ranks'
mesh connections and the client's direct starts and cancels; a client's hub on the loopback
interface takes rank 0's replies.

Anything that reaches the port can connect, so the hub trusts no connection until it has proven
a secret (:mod:`.wire`), and bounds what an unproven one may cost (:mod:`.limits`): one thread
serves every connection with non-blocking sockets and a selector, so no peer can hold it up; a
connection has :data:`~.limits.HANDSHAKE_SECONDS` to introduce itself (and send its payload);
at most :data:`~.limits.MAX_PENDING` wait to do so, and :data:`~.limits.MAX_PARKED` introduced
mesh connections wait for a job not yet known here (each for the mesh's
:data:`~.mesh.CONNECT_TIMEOUT`), the oldest closed first; every length is checked before
anything is read or allocated for it; and whatever one connection does wrong closes that
connection only, logged at debug level.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time

from . import wire
from .limits import HANDSHAKE_SECONDS, MAX_PARKED, MAX_PAYLOAD, MAX_PENDING

log = logging.getLogger("ooc_graph.runtime")
CONNECT_TIMEOUT = 60.0  # seconds for a job's whole mesh to form (and for a parked connection to wait)


class _Conn:
    """A connection being introduced: its nonce, what has come so far and what it waits for."""

    __slots__ = ("sock", "peer", "nonce", "deadline", "buf", "got", "stage", "kind", "rank", "header",
                 "tag", "mac")

    def __init__(self, sock, peer, deadline: float):
        self.sock, self.peer, self.deadline = sock, peer, deadline
        self.nonce = wire.nonce()
        self.kind = self.rank = self.header = self.tag = self.mac = None
        self.expect(wire.HELLO.size, "hello")

    @property
    def name(self) -> str:
        return self.tag.decode()

    def expect(self, n: int, stage: str) -> None:
        self.buf, self.got, self.stage = bytearray(n), 0, stage

    def fill(self) -> bool:
        """Read what has come (never blocks); True once the part it waits for is complete."""
        if self.got < len(self.buf):
            try:
                n = self.sock.recv_into(memoryview(self.buf)[self.got:])
            except BlockingIOError:
                return False
            if n == 0:
                raise EOFError("closed by the peer")
            self.got += n
        return self.got == len(self.buf)


class Hub:
    """This process's listener on ``host``. A job's rank waits for its peers' connections with
    :meth:`take` (the client likewise for rank 0's reply); ``on_start(hub, rank, payload)`` and
    ``on_cancel(job)`` take the client's direct starts and cancels, proven with ``start_token``."""

    start_token: str | None = None
    on_start = None
    on_cancel = None

    def __init__(self, host: str):
        self.sock = socket.create_server((host, 0), backlog=256)
        self.sock.setblocking(False)
        self.address = self.sock.getsockname()[:2]
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.sock, selectors.EVENT_READ, None)
        self._pending: dict = {}  # socket -> _Conn, accepted and not yet introduced, oldest first
        self._parked: dict = {}   # _Conn -> None, introduced for a job not known here yet, oldest first
        self._arrived: dict = {}  # (kind, job) -> {rank: socket (a mesh peer) or payload (a reply)}
        self._keys: dict = {}     # (kind, job) -> its secret, while a rank or a client here waits for it
        self._cond = threading.Condition()
        self._closed = False
        threading.Thread(target=self._serve, name="ooc-graph-hub", daemon=True).start()

    # -- what the ranks and the client call ---------------------------------------------------------
    def expect(self, kind: int, job: str, key: bytes) -> None:
        """Take ``job``'s connections of ``kind`` that prove ``key`` from now on (those parked
        before are checked now)."""
        with self._cond:
            self._keys[(kind, job)] = key
            waiting = [c for c in self._parked if (c.kind, c.name) == (kind, job)]
            for c in waiting:
                del self._parked[c]
        for c in waiting:
            if wire.proven(key, c.nonce, c.header, c.tag, c.mac):
                c.sock.setblocking(True)
                self._arrive(c, c.sock)
            else:
                self._refuse(c, "did not prove the job's secret")

    def take(self, kind: int, job: str, ranks: set, key: bytes, deadline: float, abort=None) -> dict:
        """The connections (or, for a reply, the payloads) of ``ranks`` for ``job`` that prove
        ``key``, as they arrive, until ``deadline``; ``abort()`` true gives up at once."""
        self.expect(kind, job, key)
        got = {}
        try:
            with self._cond:
                while True:
                    arrived = self._arrived.get((kind, job), {})
                    for r in [r for r in arrived if r in ranks]:
                        got[r] = arrived.pop(r)
                    if len(got) == len(ranks):
                        return got
                    give_up(deadline, abort)
                    self._cond.wait(0.1)
        except BaseException:
            for value in got.values():
                _close(value)
            raise
        finally:
            self._forget(lambda k: k == (kind, job))

    def forget(self, job: str, kind: int | None = None) -> None:
        """Drop whatever waits here for ``job`` (its connections of ``kind`` only, if given)."""
        self._forget(lambda k: k[1] == job and kind in (None, k[0]))

    def _forget(self, match) -> None:
        with self._cond:
            for k in [k for k in self._keys if match(k)]:
                del self._keys[k]
            for k in [k for k in self._arrived if match(k)]:
                for value in self._arrived.pop(k).values():
                    _close(value)
            for c in [c for c in self._parked if match((c.kind, c.name))]:
                del self._parked[c]
                _close(c.sock)

    def close(self) -> None:
        """Stop listening (tests; a process's hubs otherwise live as long as it does)."""
        self._closed = True
        _close(self.sock)

    # -- the hub's thread ---------------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._closed:
            try:
                self._step()
            except Exception as err:  # nothing a peer does may stop the hub
                log.debug("hub %s:%s: %s: %s", *self.address, type(err).__name__, err)
                time.sleep(0.01)

    def _step(self) -> None:
        now = time.monotonic()
        first = next(iter(self._pending.values()), None)
        wait = 1.0 if first is None else min(1.0, max(0.0, first.deadline - now))
        for key, _ in self._sel.select(wait):
            if key.data is None:
                self._accept()
            else:
                self._advance(key.data)
        self._expire(time.monotonic())

    def _accept(self) -> None:
        for _ in range(MAX_PENDING):  # what is queued, a bounded batch at a time
            try:
                sock, peer = self.sock.accept()
            except BlockingIOError:
                return
            except OSError as err:  # out of file handles: make room, and let the queue wait a moment
                log.debug("hub %s:%s: accept failed: %s", *self.address, err)
                if self._pending:
                    self._refuse(next(iter(self._pending.values())), "closed to make room")
                time.sleep(0.01)
                return
            conn = _Conn(sock, peer, time.monotonic() + HANDSHAKE_SECONDS)
            try:
                sock.setblocking(False)
                if sock.send(conn.nonce) != len(conn.nonce):  # an empty buffer takes 16 bytes at once
                    raise OSError("the nonce did not fit the send buffer")
                self._sel.register(sock, selectors.EVENT_READ, conn)
            except OSError as err:
                self._refuse(conn, str(err))
                continue
            self._pending[sock] = conn
            if len(self._pending) > MAX_PENDING:
                self._refuse(next(iter(self._pending.values())), f"more than {MAX_PENDING} connections pending")

    def _advance(self, conn: _Conn) -> None:
        try:  # an introduction and its payload come in one send: read on while there is more
            while conn.sock in self._pending and conn.fill():
                self._next(conn)
        except Exception as err:  # this connection's fault: it goes, the hub goes on
            self._refuse(conn, f"{type(err).__name__}: {err}")

    def _next(self, conn: _Conn) -> None:
        """The part ``conn`` waited for has come: check it and wait for the next."""
        if conn.stage == "hello":
            conn.header = bytes(conn.buf)
            conn.kind, n, conn.rank = wire.parse_hello(conn.header)
            conn.expect(n + wire.MAC_BYTES, "name")
        elif conn.stage == "name":
            conn.tag, conn.mac = bytes(conn.buf[:-wire.MAC_BYTES]), bytes(conn.buf[-wire.MAC_BYTES:])
            conn.tag.decode()  # a job id is text: anything else goes now
            self._introduced(conn)
        elif conn.stage == "length":
            n = wire.length(bytes(conn.buf), MAX_PAYLOAD, f"a {wire.KINDS[conn.kind]}'s payload")
            conn.expect(n, "payload")
            if n == 0:
                self._complete(conn, b"")
        else:
            self._complete(conn, conn.buf)

    def _introduced(self, conn: _Conn) -> None:
        kind, what = conn.kind, wire.KINDS[conn.kind]
        if kind in (wire.START, wire.CANCEL):
            key = None if self.start_token is None else self.start_token.encode()
        else:
            with self._cond:
                key = self._keys.get((kind, conn.name))
                if key is None and kind == wire.MESH:  # its rank here has not started yet
                    self._park(conn)
                    return
        if not wire.proven(key, conn.nonce, conn.header, conn.tag, conn.mac):
            raise wire.ProtocolError(f"a {what} connection for job {conn.name!r} rank {conn.rank} did not prove "
                                     f"{'the hub token' if kind in (wire.START, wire.CANCEL) else 'the job secret'}")
        if kind in (wire.START, wire.REPLY):
            conn.expect(wire.LENGTH.size, "length")
        else:
            self._complete(conn, None)

    def _complete(self, conn: _Conn, payload) -> None:
        self._release(conn)
        if conn.kind == wire.MESH:
            conn.sock.setblocking(True)
            self._arrive(conn, conn.sock)
            return
        conn.sock.close()
        try:
            if conn.kind == wire.REPLY:
                self._arrive(conn, payload)
            elif conn.kind == wire.START and self.on_start is not None:
                self.on_start(self, conn.rank, payload)
            elif conn.kind == wire.CANCEL and self.on_cancel is not None:
                self.on_cancel(conn.name)
        except Exception as err:  # the rank's task starts it instead
            log.warning("job %s: a direct %s of rank %d failed (%s: %s)", conn.name, wire.KINDS[conn.kind],
                        conn.rank, type(err).__name__, err)

    def _arrive(self, conn: _Conn, value) -> None:
        with self._cond:
            ranks = self._arrived.setdefault((conn.kind, conn.name), {})
            if conn.rank in ranks:  # the rank has come already: the first stays
                _close(value)
                return
            ranks[conn.rank] = value
            self._cond.notify_all()

    def _park(self, conn: _Conn) -> None:
        """(Holding the lock.) Keep an introduced mesh connection until its job is expected."""
        self._release(conn)
        conn.deadline = time.monotonic() + CONNECT_TIMEOUT
        self._parked[conn] = None
        while len(self._parked) > MAX_PARKED:
            oldest = next(iter(self._parked))
            del self._parked[oldest]
            self._refuse(oldest, f"more than {MAX_PARKED} connections wait for jobs not known here")

    def _expire(self, now: float) -> None:
        for conn in [c for c in self._pending.values() if c.deadline < now]:
            self._refuse(conn, f"not introduced within {HANDSHAKE_SECONDS:.0f} s")
        with self._cond:
            for conn in [c for c in self._parked if c.deadline < now]:
                del self._parked[conn]
                self._refuse(conn, f"its job did not start here within {CONNECT_TIMEOUT:.0f} s")

    def _release(self, conn: _Conn) -> None:
        """Out of the pending connections and the selector (the socket stays open)."""
        if self._pending.pop(conn.sock, None) is not None:
            try:
                self._sel.unregister(conn.sock)
            except (KeyError, ValueError):
                pass

    def _refuse(self, conn: _Conn, why: str) -> None:
        self._release(conn)
        _close(conn.sock)
        log.debug("hub %s:%s closed a connection from %s: %s", *self.address, conn.peer, why)


def give_up(deadline: float, abort=None) -> None:
    """Raise if ``abort()`` says so or ``deadline`` (``time.monotonic()``) has passed."""
    if abort is not None and abort():
        raise ConnectionAbortedError("the job was cancelled")
    if time.monotonic() > deadline:
        raise TimeoutError("timed out")


def _close(value) -> None:
    if isinstance(value, socket.socket):
        try:
            value.close()
        except OSError:
            pass

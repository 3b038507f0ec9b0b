"""Starting a job's ranks before dask delivers their tasks.

A job's tasks reach its workers through the scheduler: on a 2-GPU host the ranks started ~3.6 ms
after the client queued them (the client's and the scheduler's batched streams, the worker's
executor), 3% of a 120 ms PageRank. So the client also hands each rank its start directly, on a
connection to the worker's hub (the one the job's mesh uses), and the rank starts at once on a
thread of its own; the task, when it comes, only waits for that rank and returns what it returned
(``secede``-d meanwhile, so that waiting takes none of the worker's task slots). A task that comes
first runs its rank itself, and a start that comes later is ignored: a rank runs once either way,
and dask stays in charge of results and failures (a dead worker's task is lost as before).

The start is plain data (:mod:`.wire`: the spec's fields and the hubs' addresses, msgpack; never
a pickle), and the hub takes it only from a connection that proves the token the worker gave the
client through dask (:func:`hub_token`), by an HMAC of the hub's nonce: nothing else on the network
can start a rank. The spec carries the job's secret, which the ranks prove to one another; a spec
that is not plain data (an algorithm keyword of another type) is not started directly: its ranks
wait for their tasks. The same token lets the client cancel a job directly (:func:`cancel`), which
it does when it can no longer reach the workers through dask. A worker runs at most :data:`PUSHED`
started ranks at once; the others wait for their tasks, as before.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import socket
import threading
import time

from . import wire
from .limits import MAX_PAYLOAD

log = logging.getLogger("ooc_graph.runtime")
# Started ranks a worker runs at once (more wait for their tasks).
PUSHED = 1
# A started rank whose task never came (the client went away) is dropped this long after it ended.
UNCLAIMED_SECONDS = 300.0
# Job ids whose ranks have run here, remembered so that a late start runs nothing.
REMEMBER = 1024
# How long the client tries to reach a worker's hub with a start.
CONNECT_SECONDS = 0.25


class Rank:
    """One rank on this worker, started by the client's push or by its task."""

    def __init__(self, pushed: bool):
        self.pushed, self.done = pushed, threading.Event()
        self.value = self.error = None
        self.ended = None  # time.monotonic() when it ended

    def run(self, body, *args):
        try:
            self.value = body(*args)
        except BaseException as err:  # handed to the task, which raises it in dask
            self.error = err
        finally:
            self.ended = time.monotonic()
            self.done.set()

    def outcome(self):
        if self.error is not None:
            raise self.error
        return self.value


class Ranks:
    """The ranks of this worker process: each job's rank runs once, from whichever of its start
    and its task comes first."""

    def __init__(self):
        self._ranks: dict = {}  # job id -> Rank (None once its task has taken it)
        self._lock = threading.Lock()

    def _prune(self) -> None:
        now = time.monotonic()
        for job, r in list(self._ranks.items()):
            if r is not None and r.ended is not None and now - r.ended > UNCLAIMED_SECONDS:
                self._ranks[job] = None  # its task never came: drop what it returned
        while len(self._ranks) > REMEMBER:
            self._ranks.pop(next(iter(self._ranks)))

    def pushed(self, job: str, body, *args) -> bool:
        """Start ``body(*args)`` on a thread for ``job`` unless its rank has run or is running
        here, or :data:`PUSHED` started ranks are running; says whether it started."""
        with self._lock:
            running = sum(1 for r in self._ranks.values() if r is not None and r.pushed and r.ended is None)
            if job in self._ranks or running >= PUSHED:
                return False
            self._prune()
            rank = self._ranks[job] = Rank(pushed=True)
        threading.Thread(target=rank.run, args=(body, *args), name=f"ooc-graph-{job}", daemon=True).start()
        return True

    def task(self, job: str, body, *args):
        """The task's side: wait for the started rank of ``job`` and return its outcome, or,
        where none was started, run ``body(*args)`` here."""
        with self._lock:
            rank = self._ranks.get(job)
            self._ranks[job] = None  # taken: a start that comes after this runs nothing
        if rank is None:
            return body(*args)
        _secede()
        rank.done.wait()
        return rank.outcome()

    def forget(self, job: str) -> None:
        """The client gave the job up: what its started rank returns is not kept."""
        with self._lock:
            if job in self._ranks:
                self._ranks[job] = None


def _secede() -> None:
    """Give the task's slot back to the worker while it waits (outside a task: nothing)."""
    try:
        from distributed import secede
        secede()
    except (ImportError, ValueError, KeyError, AttributeError):
        pass


def hub_token(hub) -> str:
    """The token that makes ``hub`` take starts (made once per hub)."""
    if getattr(hub, "start_token", None) is None:
        hub.start_token = secrets.token_hex(16)
    return hub.start_token


def push(job: str, addresses: list, tokens: list, payload: bytes | None) -> list:
    """The client's side: send each rank's start (``payload``, from :func:`encode`) to its
    worker's hub at ``addresses[r]``, proven with ``tokens[r]``; returns the ranks whose hub it
    could not reach (their tasks start them, as they do a rank whose start failed otherwise).
    Every connection is opened before any waits for its hub's nonce."""
    if payload is None:
        return []
    socks = {r: _open(job, r, addresses[r]) for r, token in enumerate(tokens) if token is not None}
    for rank, sock in socks.items():
        if sock is None:
            continue
        try:
            with sock:
                wire.introduce(sock, wire.START, job, rank, tokens[rank].encode(), payload)
        except (OSError, EOFError) as err:
            log.debug("job %s: no direct start for rank %d at %s (%s)", job, rank, addresses[rank], err)
    return [r for r in range(len(addresses)) if r in socks and socks[r] is None or tokens[r] is None]


def cancel(job: str, addresses: list, tokens: list) -> list:
    """Cancel ``job`` on the workers' hubs directly, without dask (the client's connection to
    the scheduler is gone); returns the ranks reached."""
    reached = []
    for rank, (address, token) in enumerate(zip(addresses, tokens)):
        sock = None if token is None else _open(job, rank, address)
        if sock is None:
            continue
        try:
            with sock:
                wire.introduce(sock, wire.CANCEL, job, rank, token.encode())
            reached.append(rank)
        except (OSError, EOFError) as err:
            log.debug("job %s: no direct cancel for rank %d at %s (%s)", job, rank, address, err)
    return reached


def _open(job: str, rank: int, address):
    try:
        return socket.create_connection(tuple(address), timeout=CONNECT_SECONDS)
    except OSError as err:
        log.debug("job %s: cannot reach the hub of rank %d at %s (%s)", job, rank, address, err)
        return None


def encode(spec, addresses: list) -> bytes | None:
    """A start's payload: the spec's fields and the hubs' addresses as plain data; None when the
    spec is not plain data (its ranks then wait for their tasks)."""
    fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
    try:
        payload = wire.dumps({"spec": fields, "addresses": [list(a) for a in addresses]})
    except (TypeError, ValueError) as err:
        log.debug("job %s: no direct start (%s)", spec.job_id, err)
        return None
    return payload if len(payload) <= MAX_PAYLOAD else None


def decode(payload) -> tuple:
    """``(spec fields, addresses)`` of a start's payload."""
    got = wire.loads(payload)
    if not isinstance(got, dict) or not isinstance(got.get("spec"), dict) or not isinstance(got.get("addresses"), list):
        raise wire.ProtocolError("a start without a spec and addresses")
    return got["spec"], [tuple(a) for a in got["addresses"]]

"""What a worker process keeps between and during jobs, in one object: its idle open stores (their
engines keep their caches warm), each store's partition plans, its ranks, rank 0's progress
records, and the jobs the client cancelled.

One :class:`WorkerState` per worker process: :func:`current` gives it (made on first use). The
local clusters this project starts install it with :class:`~.plugins.KeepWorkerState`, a dask
``WorkerPlugin`` whose teardown frees the stores' device and pinned memory when the worker closes;
on any other cluster it is made when the worker's first job asks for it. Tests make their own.

>>> s = WorkerState(keep=2)
>>> for job in ("a", "b", "c"):
...     s.cancel(job)
>>> s.cancelled("a"), s.cancelled("c")
(False, True)
"""

from __future__ import annotations

import os
import threading
import weakref

from ooc_graph.partitioning.plan import plan

from . import launch as _launch

# Progress records and cancels of this many recent jobs are kept per worker.
KEEP_JOBS = 256


def file_state(path: str):
    """What changes when a file is written or replaced: device, inode, size, modification time."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class WorkerState:
    """A worker process's stores, plans, ranks, progress records and cancels (thread-safe: ranks
    run on threads of their own, and the client's calls on the worker's event loop)."""

    def __init__(self, keep: int = KEEP_JOBS):
        self.keep = keep
        self.ranks = _launch.Ranks()  # started by the client directly or by their tasks
        self._graphs: dict = {}    # store path -> [(idle open Graph, its file's state when checked)]
        self._plans = weakref.WeakKeyDictionary()  # an open Graph -> {ranks: its partitions}
        self._progress: dict = {}  # job id -> rank 0's latest progress record
        # Job ids the client cancelled, the latest ``keep``: kept after the client forgets the job
        # (it does so as soon as it raises JobCancelled), so ranks that have not looked still stop.
        self._cancelled: dict = {}
        self._lock = threading.Lock()

    # -- stores ---------------------------------------------------------------------------------
    def checkout(self, path: str):
        """An open Graph of the store at ``path`` for one job, and the file's state when it was
        last checked (:func:`file_state`): an idle Graph kept from earlier jobs (its engines keep
        their caches) unless the store has been replaced, else a new one. Jobs running at once
        never share a Graph, so never an engine. Where the file has not changed since it was last
        checked, it is not reopened (~1 ms): a warm job that needs nothing from it never opens
        it, and one that reads it reopens it then, checking again that it is still this graph."""
        from ooc_graph.store import open_graph
        while True:
            state = file_state(path)  # before the check: a change after it is seen next time
            with self._lock:
                idle = self._graphs.get(path, [])
                g, seen = idle.pop() if idle else (None, None)
            if g is None:
                return open_graph(path), state
            if seen is not None and seen == state:
                return g, state
            try:
                with g._file():  # reopens the file, and refuses one replaced by another graph
                    return g, state
            except Exception:
                g.close()

    def checkin(self, path: str, g, state) -> None:
        g.detach()
        with self._lock:
            self._graphs.setdefault(path, []).append((g, state))

    def plan(self, graph, size: int) -> list:
        """:func:`~ooc_graph.partitioning.plan.plan` of ``graph`` in ``size`` parts, made once per
        open Graph (a store replaced since comes back as another Graph)."""
        with self._lock:
            parts = self._plans.get(graph, {}).get(size)
        if parts is None:
            parts = plan(graph, size)
            with self._lock:
                self._plans.setdefault(graph, {})[size] = parts
        return parts

    def release_all(self) -> int:
        """Close every idle store (freeing its engines' device and pinned memory); how many."""
        with self._lock:
            graphs = [g for idle in self._graphs.values() for g, _ in idle]
            self._graphs.clear()
        for g in graphs:
            g.close()
        return len(graphs)

    # -- jobs -----------------------------------------------------------------------------------
    def record(self, job_id: str, **fields) -> None:
        """Update rank 0's progress record of ``job_id``."""
        with self._lock:
            self._progress[job_id] = {**self._progress.pop(job_id, {}), **fields, "pid": os.getpid()}
            while len(self._progress) > self.keep:
                self._progress.pop(next(iter(self._progress)))

    def progress(self, job_id: str) -> dict | None:
        with self._lock:
            record = self._progress.get(job_id)
            return None if record is None else dict(record)

    def cancel(self, job_id: str) -> None:
        with self._lock:
            self._cancelled[job_id] = True
            while len(self._cancelled) > self.keep:
                self._cancelled.pop(next(iter(self._cancelled)))

    def cancelled(self, job_id: str) -> bool:
        return job_id in self._cancelled

    def forget(self, job_id: str) -> None:
        """The client gave ``job_id`` up: its progress record and what its ranks return go; a
        cancel stays in force."""
        with self._lock:
            self._progress.pop(job_id, None)
        self.ranks.forget(job_id)


_CURRENT: WorkerState | None = None
_MAKING = threading.Lock()


def current() -> WorkerState:
    """This worker process's state (made on first use)."""
    global _CURRENT
    if _CURRENT is None:
        with _MAKING:
            if _CURRENT is None:
                _CURRENT = WorkerState()
    return _CURRENT

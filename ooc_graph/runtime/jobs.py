"""Submitting a job to a dask cluster, and the handle that follows it.

``submit(client, "pagerank", "g.h5", alpha=0.85)`` returns a :class:`Job` at once: one task per
worker is queued (it opens the job's mesh with the others, then runs its rank), all in one
message to the scheduler, and the call never waits on the cluster. ``job.progress()``,
``job.status()``, ``job.done()``, ``job.result()``, ``job.exception()`` and ``job.cancel()``
follow it (``done()`` and ``exception(timeout=)`` as a dask ``Future``'s). A worker that dies or fails
makes the job fail promptly with a :class:`~ooc_graph.errors.JobError` naming the job and the
worker.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import os
import secrets
import threading
import time
import uuid
from pathlib import Path

from ooc_graph import config, registry
from ooc_graph.engine.stats import Stats
from ooc_graph.errors import JobCancelled, JobError, OocGraphError, ParameterError

from . import cluster as _cluster
from . import launch as _launch
from . import reply as _reply
from . import segments as _segments
from . import worker as _worker
from .ask import UNANSWERED, alive_workers, answers, closed, first_line, hubs, no_direct_starts, on_workers
from .lifecycle import Lifecycle
from .limits import RUN_SECONDS

__all__ = ["submit", "Job", "alive_workers", "hubs"]

log = logging.getLogger("ooc_graph.runtime")
# How often result() looks at the scheduler for workers that have gone.
POLL_SECONDS = 0.5
# How long result() waits for rank 0's direct reply once its task said it was sent.
REPLY_SECONDS = 30.0
_COUNTER = itertools.count(1)
def _bind(name: str, kwargs: dict) -> dict:
    """Check ``kwargs`` against the algorithm's own keywords before anything is queued."""
    found = registry.get(name)
    if not found.distributes:
        raise ParameterError(f"{name} runs in one process (it holds the graph in memory); call it without "
                             "gpus=/client=/workers=")
    params = found.parameters
    unknown = sorted(set(kwargs) - set(params) - {"G"})
    if unknown:
        valid = [p for p in params if p not in ("G", "device", "store")]
        raise ParameterError(f"{name} has no parameter {', '.join(map(repr, unknown))} "
                             f"(valid: {', '.join(valid)})")
    missing = [p.name for p in params.values() if p.default is inspect.Parameter.empty
               and p.name != "G" and p.name not in kwargs]
    if missing:
        raise ParameterError(f"{name} needs {', '.join(missing)}")
    if kwargs.get("output", "numpy") != "numpy":
        raise ParameterError(f"{name}: output={kwargs['output']!r} keeps results on the GPU of one process; a "
                             "job on a cluster returns them in host memory (use output='numpy')")
    return kwargs


def _workers_of(client, workers) -> list:
    """Worker addresses for a job, sorted (their rank order): all of the cluster's, the first
    ``workers`` of them, or those listed."""
    if closed(client):
        raise JobError("the dask client is closed: make a new one to submit jobs")
    try:
        alive = alive_workers(client)
    except OSError as err:  # dask's CommClosedError among them
        raise JobError(f"cannot reach the dask scheduler at {client.scheduler.address}: {err}") from err
    if not alive:
        raise JobError(f"the cluster at {client.scheduler.address} has no workers")
    if workers is None:
        return alive
    if isinstance(workers, int) and not isinstance(workers, bool):
        if not 1 <= workers <= len(alive):
            raise ParameterError(f"workers={workers} but the cluster has {len(alive)} workers")
        return alive[:workers]
    chosen = sorted(workers)
    gone = [w for w in chosen if w not in alive]
    if gone:
        raise ParameterError(f"not workers of this cluster: {', '.join(gone)} (workers: {', '.join(alive)})")
    return chosen


def _device(client, workers, device: str) -> str:
    """The device every rank uses: ``auto`` is the GPU only if every worker sees one."""
    if device not in ("auto", "cpu", "gpu"):
        raise ParameterError(f"unknown device {device!r} (valid: auto, cpu, gpu)")
    if device != "auto":
        return device
    from ooc_graph.engine import gpu_available
    seen = answers(client, gpu_available, workers, "whether it sees a GPU")
    return "gpu" if all(seen.values()) else "cpu"


def _not_in_memory(graph) -> None:
    """Workers open the store by its path: a store kept in memory has none."""
    if getattr(graph, "in_memory", False):
        raise ParameterError(f"{graph.path}: worker processes open a store by its path, and this one is kept in "
                             "memory; convert the graph into a file (ooc_graph.convert(..., 'graph.h5'))")


def submit(client, algorithm: str, graph, *, workers=None, device: str = "auto", store=False, **kwargs) -> "Job":
    """Queue ``algorithm`` on the store ``graph`` (a path every worker can read, or an open
    Graph) on a dask cluster, and return its :class:`Job` without waiting.

    ``client`` is a ``distributed.Client`` or a scheduler address (``"tcp://host:7786"``);
    ``workers`` picks the workers (default: all; an int takes that many; or a list of addresses);
    one GPU per worker (dask-cuda's layout) when ``device`` is ``"gpu"``, or ``"auto"`` and every
    worker sees a GPU. ``store=True`` (or a name) saves the result into the store from a worker
    once the job has finished. Other keywords are the algorithm's; ``memory`` and
    ``device_memory`` are per worker.

    Examples
    --------
    >>> job = ooc_graph.submit(client, "pagerank", "/data/twitter.h5", alpha=0.85)  # doctest: +SKIP
    >>> job.progress()                                                              # doctest: +SKIP
    {'state': 'running', 'iteration': 7, 'measure': 0.0013, 'seconds': 41.2, ...}
    >>> job.result().values                                                         # doctest: +SKIP
    """
    kwargs = _bind(algorithm, dict(kwargs))  # before any cluster is asked
    _not_in_memory(graph)
    client = _cluster.as_client(client)
    if not (hasattr(graph, "path") or isinstance(graph, (str, os.PathLike))):
        raise ParameterError(f"graph must be a path to a store or an open Graph (got {type(graph).__name__})")
    path = str(Path(getattr(graph, "path", graph)).resolve())
    if store and hasattr(graph, "detach"):
        graph.detach()  # rank 0 writes into the file: this process must not hold it open meanwhile
    names = _workers_of(client, workers)
    chosen = _device(client, names, device)
    hubs(client, names)  # asked once per worker: one that cannot answer fails the submission, named
    job_id = f"{algorithm}-{next(_COUNTER)}-{uuid.uuid4().hex[:8]}"
    secret = secrets.token_bytes(32)  # this job's only: it reaches the workers inside its spec
    pool = _segments.pool()
    spec = _worker.JobSpec(job_id=job_id, algorithm=algorithm, path=path, kwargs=kwargs, workers=names,
                           device=chosen, store=store, client_host=_worker.host_identity(),
                           reply_to=_reply.new_route(job_id, secret), segments=pool.offer(), client_key=pool.key,
                           secret=secret, config=config.get().changes())
    try:
        return Job(client, spec, graph if hasattr(graph, "path") else None)
    except BaseException:
        _reply.forget(job_id)
        pool.settle(spec.segments, job_id)
        raise


def _submit_ranks(client, spec, addresses) -> list:
    """One task per worker, each held to its worker, sent to the scheduler in one message (one
    ``client.submit`` each, the client's batched stream held every task after the first for its
    10 ms interval, and the ranks waited for the last one)."""
    import dask
    n = len(spec.workers)
    keys = [f"ooc-graph-{spec.job_id}-{rank}" for rank in range(n)]
    where = dict(zip(keys, spec.workers))
    with dask.annotate(workers=lambda key: [where[key]], allow_other_workers=False):
        return client.map(_worker.run_rank, [spec] * n, range(n), [addresses] * n, key=keys, pure=False)


class Job:
    """A submitted job. ``status()`` is ``pending``, ``running``, ``finished``, ``failed``,
    ``cancelled`` or ``unresponsive`` (rank 0's worker did not answer within
    :data:`~.limits.RUN_SECONDS`: stopped, or overloaded); ``progress()`` the latest iteration and
    convergence measure (after the end, the final ones); ``done()`` whether it has ended, without
    waiting; ``result()`` waits for the result (arrays in host memory) and ``exception()`` for
    the error, if any; ``cancel()`` stops every worker at its next iteration. None of them but
    ``result()`` and ``exception()`` waits longer than :data:`~.limits.RUN_SECONDS` for the workers."""

    def __init__(self, client, spec, graph=None):
        self.client, self.spec, self.graph = client, spec, graph
        self.id = spec.job_id
        self.t0 = time.perf_counter()
        self.life = Lifecycle()  # pending, running, and how it ended (runtime/lifecycle.py)
        self._seen = None  # the last progress record read from rank 0's worker
        self._addresses, self._tokens = addresses, tokens = hubs(client, spec.workers)
        # Each rank starts at once from its worker's hub; its task, which dask delivers
        # milliseconds later, waits for it (runtime/launch.py).
        missed = _launch.push(spec.job_id, addresses, tokens, _launch.encode(spec, addresses))
        no_direct_starts(client, [spec.workers[r] for r in missed])
        try:
            self.futures = _submit_ranks(client, spec, addresses)
        except Exception as err:  # the client or the scheduler went away meanwhile
            _launch.cancel(spec.job_id, addresses, tokens)  # ranks started directly stop
            raise JobError(f"job {self.id}: its tasks could not be queued on the cluster: "
                           f"{type(err).__name__}: {first_line(err)}") from err
        self._sent = (time.perf_counter(), time.time())  # when the tasks left, by both clocks
        # Wakes result(): a task that ends, or rank 0's direct reply (same host: runtime/reply.py;
        # one that comes before the listener starts waits in the hub).
        # (Nothing here refers back to the job: a dropped job and its result go at once, and a
        # result's shared-memory segments back to the pool for the next call.)
        self._wake = wake = threading.Event()
        futures = self.futures
        self._listener = None if spec.reply_to is None else \
            _reply.Listener(spec.job_id, spec.secret, wake, lambda: all(f.done() for f in futures))
        from distributed.client import done_callback
        for f in futures:  # on the client's event loop (add_done_callback's thread pool is shut
            client.loop.add_callback(done_callback, f, lambda _: wake.set())  # down before exit)

    def __repr__(self):
        return f"<ooc_graph.Job {self.id} on {len(self.spec.workers)} workers: {self.status()}>"

    @property
    def _all(self):
        return self.futures

    def status(self) -> str:
        if self.life.ended:
            return self.life.state
        if any(f.status in ("error", "lost") for f in self._all):
            return "failed"
        if all(f.status == "finished" for f in self.futures):
            return "finished"
        if closed(self.client):
            try:
                self._client_gone()
            except JobError:
                return "failed"
        record = self.progress()
        if record and record.get("state") == "unresponsive":
            return "unresponsive"
        return "running" if record and record.get("state") == "running" else "pending"

    def progress(self) -> dict | None:
        """Rank 0's latest record: ``state``, ``iteration``, ``measure`` (residual, or vertices
        changed), ``seconds``; ``None`` before rank 0 has started; ``{"state": "unresponsive",
        "worker": ..., "waited": seconds}`` when its worker did not answer in time. Once the job
        has ended: ``finished`` with the last iteration and measure (they were those of the last
        report, up to 0.2 s earlier), or ``failed``/``cancelled`` with the last ones seen."""
        result = self.life.result
        if result is not None:
            conv = result.stats.get("convergence") or []
            return {"state": "finished", "iteration": result.iterations,
                    "measure": conv[-1][1] if conv else None, "seconds": result.seconds}
        if self.life.error is not None:
            return {"iteration": 0, "measure": None, "seconds": 0.0} | (self._seen or {}) | {"state": self.status()}
        if closed(self.client):
            return None
        worker = self.spec.workers[0]
        try:
            record = on_workers(self.client, _worker.job_progress, self.id, workers=[worker])[worker]
        except Exception:  # the scheduler is gone: result() reports that
            return None
        if record is UNANSWERED:
            return {"state": "unresponsive", "worker": worker, "waited": RUN_SECONDS}
        if isinstance(record, dict):
            self._seen = record
            if record.get("state") == "running":
                self.life.running()
            return record
        return None

    def done(self) -> bool:
        """Whether the job has ended (finished, failed or cancelled), so that :meth:`result`
        returns or raises at once; never waits for it (as a dask ``Future``'s ``done()``). Asks the
        scheduler at most which workers are alive (read in this process for a local cluster)."""
        if self.life.ended or closed(self.client):
            return True
        if self._listener is not None and self._listener.parts is not None:
            return True  # rank 0 handed its result over
        if any(f.status in ("error", "lost", "cancelled") for f in self.futures) or self._done():
            return True
        return bool(self._workers_gone())

    def exception(self, timeout: float | None = None):
        """The exception :meth:`result` raises — a :class:`JobError` naming the worker,
        :class:`JobCancelled`, or the user's error a rank raised (a source not in the graph) — or
        ``None`` once the job has finished. Waits for the end, at most ``timeout`` seconds, then
        raises ``TimeoutError`` (as a dask ``Future``'s ``exception(timeout=)``)."""
        try:
            self.result(timeout=timeout)
        except TimeoutError:
            raise
        except Exception as err:  # noqa: BLE001 - handed to the caller, as dask does
            return err
        return None

    def cancel(self) -> None:
        """Stop the job: every rank stops at its next convergence report and frees its worker.
        Returns at once for a worker that does not answer (the cancel reaches it when it does).
        A job that has ended stays as it ended."""
        if not self.life.cancel():
            return
        if not closed(self.client):
            try:
                on_workers(self.client, _worker.cancel_job, self.id, workers=self.spec.workers, keep=True)
                return
            except Exception as err:  # the scheduler cannot be reached: go to the workers directly
                log.debug("job %s: cancel through dask failed (%s)", self.id, err)
        _launch.cancel(self.id, self._addresses, self._tokens)

    def _client_gone(self):
        """The dask client was closed under the job: cancel it on the workers' hubs directly (the
        ranks would otherwise run on and save a result no one takes), and fail."""
        reached = _launch.cancel(self.id, self._addresses, self._tokens)
        missed = [w for r, w in enumerate(self.spec.workers) if r not in reached]
        self._fail(JobError("its dask client was closed before it finished; it was cancelled" +
                            (f" (not on worker {', '.join(missed)}, which could not be reached)" if missed else "")))

    def _workers_gone(self) -> list:
        try:
            alive = set(alive_workers(self.client))
        except Exception:  # the scheduler cannot say: none known gone
            return []
        return [w for w in self.spec.workers if w not in alive]

    def _fail(self, err: BaseException, worker: str | None = None):
        try:
            self._raise(err, worker)
        except BaseException as raised:
            self.life.fail(raised)
            raise

    def _raise(self, err: BaseException, worker: str | None):
        if self._listener is not None:
            self._listener.close()
        reachable = not closed(self.client)
        for f in self._all if reachable else ():
            f.cancel()
        _segments.remove_made(self.id)  # results the ranks left for us (same host)
        _segments.pool().settle(self.spec.segments, self.id)
        if reachable:
            gone = set(self._workers_gone())
            try:
                on_workers(self.client, _worker.forget_job, self.id, keep=True,
                           workers=[w for w in self.spec.workers if w not in gone])
            except Exception as forget_err:  # the scheduler is gone too: nothing is kept for long
                log.debug("job %s: could not forget it on the workers (%s)", self.id, forget_err)
        where = f" on worker {worker}" if worker else ""
        if self.life.state == "cancelled" or isinstance(err, JobCancelled):
            raise JobCancelled(f"job {self.id} ({self.spec.algorithm} on {self.spec.path}) was cancelled") from None
        if isinstance(err, OocGraphError) and not isinstance(err, JobError):
            raise err  # the user's error (a bad source, a budget too small): as a local call raises it
        what = f"job {self.id} ({self.spec.algorithm} on {self.spec.path})"
        raise JobError(f"{what} failed{where}: {first_line(err)}") from err

    def result(self, timeout: float | None = None):
        """Wait for the result (rank 0's, arrays in host memory) and return it; raises
        :class:`JobError` naming the worker if one died or failed, :class:`JobCancelled` after
        :meth:`cancel`, and ``TimeoutError`` after ``timeout`` seconds."""
        if self.life.state == "finished":
            return self.life.result
        if self.life.error is not None:
            raise self.life.error
        deadline = None if timeout is None else time.monotonic() + timeout
        next_poll = time.monotonic() + POLL_SECONDS  # the scheduler was asked for workers at submission
        while True:
            # A rank that fails makes the others fail at once (their mesh closes), so waiting
            # for all of them returns promptly; a dead worker's rank never returns: the poll
            # below notices the worker is gone.
            self._wake.clear()
            if self.life.state == "cancelled":  # before a result that came meanwhile: it is not taken
                self._fail(JobCancelled(self.id))
            parts = self._listener.parts if self._listener is not None else None
            if parts is not None:
                break
            if closed(self.client):
                self._client_gone()
            if any(f.status == "error" for f in self.futures):
                self._fail(*self._root_cause())
            if self._done():
                parts = self._gather()
                break
            if time.monotonic() >= next_poll:  # a scheduler round trip: not on every wake
                next_poll = time.monotonic() + POLL_SECONDS
                gone = self._workers_gone()
                if gone:
                    self._fail(JobError(f"worker {', '.join(gone)} died"), gone[0])
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} did not finish within {timeout} s")
            self._wake.wait(POLL_SECONDS)
        finished = time.perf_counter()
        if self._listener is not None:
            self._listener.close()
        gathered = time.perf_counter()
        result = _combine(parts, time.perf_counter() - self.t0, self.graph, self.spec)
        # how rank 0's result came: its own connection to this client, or dask's task result
        result.stats["handover"] = "direct" if self._listener is not None and parts is self._listener.parts \
            else "dask"
        # seconds since the call began (the ranks' start by the wall clock: a client on their host)
        sent, sent_wall = self._sent
        started = [r["started"] - sent_wall + sent - self.t0 for r in result.stats["ranks"]]
        result.stats["client_timing"] = {"submitted": sent - self.t0, "ranks_started": started,
                                               "finished": finished - self.t0, "gathered": gathered - self.t0,
                                               "combined": time.perf_counter() - self.t0}
        if not self.life.finish(result):  # cancelled from another thread while it was combined
            self.life.fail(JobCancelled(f"job {self.id} ({self.spec.algorithm} on {self.spec.path}) was cancelled"))
            raise self.life.error
        return result

    def _gather(self) -> list:
        """Every rank's part from dask (all tasks finished); rank 0's result from its direct
        reply where it says it sent one."""
        parts = self.client.gather(self.futures)
        if parts[0].get("replied"):
            replied = self._listener.wait(REPLY_SECONDS) if self._listener is not None else None
            if replied is None:
                self._fail(JobError(f"rank 0 sent its result to this client, which did not receive it within "
                                    f"{REPLY_SECONDS:.0f} s"), self.spec.workers[0])
            parts = replied
        return parts

    def _root_cause(self):
        """The failure to report, and its worker: a rank's own error rather than the others'
        "peer closed its connection" that followed it (given a moment to arrive), and a worker
        that died rather than the one that saw it go."""
        deadline = time.monotonic() + 2 * POLL_SECONDS
        while True:
            failed = [(f.exception(), w) for f, w in zip(self.futures, self.spec.workers) if f.status == "error"]
            own = [(e, w) for e, w in failed if not isinstance(e, JobError)]
            if own:
                return own[0]
            if time.monotonic() > deadline or all(f.status != "pending" for f in self._all):
                break
            time.sleep(0.05)
        gone = self._workers_gone()
        if gone:
            err, seen_by = failed[0]
            return JobError(f"the worker died (worker {seen_by} saw: {first_line(err)})"), ", ".join(gone)
        return failed[0]

    def _done(self) -> bool:
        return all(f.status == "finished" for f in self.futures)


def _combine(parts: list, seconds: float, graph, spec):
    """Rank 0's result, with the counters of every rank added up and each rank's summary; the
    shared-memory segments offered to or made for the job that it does not map go back to the
    pool."""
    result = parts[0]["result"]
    used = []
    for name, array in result.arrays().items():
        if isinstance(array, _segments.SharedArray):
            setattr(result, name, array.load())
            used.append(array.path)
    _segments.pool().settle(spec.segments, spec.job_id, used, made=parts[0]["summary"].get("segments"))
    ranks = [p["summary"] for p in parts]
    stats = dict(result.stats) | Stats.combine([r["stats"] for r in ranks])
    stats["ranks"] = ranks
    stats["workers"] = len(ranks)
    result.stats = stats
    result.seconds = seconds  # the whole call, as the client waited for it
    result.graph = graph
    saved = ranks[0].get("saved")
    if saved:
        result.saved = saved
    return result

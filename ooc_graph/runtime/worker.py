"""What runs on each worker of a distributed job: one long-lived task per worker (a rank).

A job is one task per worker, :func:`run_rank`: it connects the job's TCP mesh through the
workers' hubs (:func:`hub_address`, learned once per worker by the client) and, on GPUs, an NCCL
communicator, opens the store, takes the sub-graphs the plan gives it and runs the algorithm's
unchanged code with an engine placed on that share. The whole iteration loop runs
here: nothing per iteration goes through the client or the scheduler.

The client reaches a running job only through :func:`job_progress` and :func:`cancel_job`, which it
runs on the workers with ``Client.run`` (on the worker's event loop, beside the task), and, once
its dask client is closed, through a cancel on the worker's hub (proven with the hub's token).
What the worker keeps between jobs (idle stores, plans, ranks, progress records, cancels) is one
:class:`~.worker_state.WorkerState`.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from dataclasses import field
from pathlib import Path
from urllib.parse import urlparse

from ooc_graph import config, registry
from ooc_graph._records import record
from ooc_graph.engine.exchange import Placement, placed
from ooc_graph.errors import JobCancelled, StoreError

from . import launch as _launch
from . import mesh as _mesh
from . import reply as _reply
from . import segments as _segments
from . import wire
from .segments import SHARED_DIR
from .worker_state import current

log = logging.getLogger("ooc_graph.runtime")
# Rank 0 refreshes the job's progress record at most this often.
PROGRESS_SECONDS = 0.2


def host_identity() -> str:
    """This machine, as far as shared memory goes: host name and boot id."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


@record
class JobSpec:
    """Everything a rank needs: the algorithm, the store, its keyword arguments, the workers."""

    job_id: str
    algorithm: str
    path: str
    kwargs: dict
    workers: list            # worker addresses in rank order
    device: str              # "cpu" or "gpu", the same on every rank
    store: object = False    # save the result from rank 0 (True, or a result name)
    client_host: str = ""    # the client's host_identity(): results in shared memory if it is ours
    reply_to: tuple | None = None  # the client's loopback hub (runtime/reply.py), same host only
    segments: list = ()      # the client's free shared-memory segments, offered for the results
    client_key: str = ""     # the client's segment pool (runtime/segments.py)
    config: dict = field(default_factory=dict)  # the settings the caller made (ooc_graph.config)
    # Made by the client for this job only: its ranks and its reply prove it to one another
    # (runtime/wire.py). It reaches the workers only inside this spec (through dask, or the
    # client's direct start, itself proven with the hub's token).
    secret: bytes = b""


def _worker_address() -> str:
    from distributed import get_worker
    return get_worker().address


def _hub():
    return _mesh.hub(urlparse(_worker_address()).hostname or "127.0.0.1")


def hub_address(dask_worker=None):
    """``(host, port, token)`` of this worker's hub, which takes the client's direct starts of
    ranks with that token (run by the client with ``Client.run``; :mod:`.launch`)."""
    host = urlparse(dask_worker.address if dask_worker is not None else _worker_address()).hostname or "127.0.0.1"
    h = _mesh.hub(host)
    h.on_start, h.on_cancel = _started, cancel_job
    return (*h.address, _launch.hub_token(h))


def _started(hub, rank: int, payload) -> None:
    """The client's direct start of a rank (on ``hub``'s thread): run it on a thread of its own."""
    fields, addresses = _launch.decode(payload)
    spec = JobSpec(**fields)
    current().ranks.pushed(spec.job_id, _run, spec, rank, addresses, hub, "direct")


def _opened(spec: JobSpec, rank: int):
    """:func:`_checkout` of the job's store, a failure naming this worker: each worker opens the
    store by its path, and one that cannot (a path only the client sees) was reported as a missing
    store with no word of where."""
    try:
        return current().checkout(spec.path)
    except StoreError as err:
        where = f"on worker {spec.workers[rank]} (host {socket.gethostname()})"
        if not os.path.exists(spec.path):
            where += ": every worker opens the store by its path, so it must be on a filesystem they all see"
        raise StoreError(f"{err} {where}") from err


def run_rank(spec: JobSpec, rank: int, addresses: list):
    """The task of rank ``rank``: the whole job on this worker. Rank 0 returns the result (arrays
    in host memory); every rank returns its run statistics. Where the client's direct start came
    first (:mod:`.launch`), the rank already runs: the task waits for it and returns the same."""
    return current().ranks.task(spec.job_id, _run, spec, rank, addresses, _hub(), "task")


def _run(spec: JobSpec, rank: int, addresses: list, hub, start: str):
    """Rank ``rank`` of the job, with its mesh through ``hub`` (this worker's); ``start`` says
    what started it (the client's ``direct`` start, or its ``task``), for its summary. It runs
    with the settings the caller changed (``spec.config``) over this worker's own."""
    with config.set(spec.config):
        return _run_configured(spec, rank, addresses, hub, start)


def _run_configured(spec: JobSpec, rank: int, addresses: list, hub, start: str):
    t0, started = time.perf_counter(), time.time()
    size = len(addresses)
    m = _mesh.Mesh(spec.job_id, rank, addresses, hub, spec.secret, names=spec.workers,
                   abort=lambda: cancelled(spec.job_id))
    comm = graph = state = None
    timing = {"mesh": time.perf_counter() - t0}
    try:
        # Results go through shared memory when every rank shares the client's host: each rank
        # writes its own vertices of them, in parallel; otherwise rank 0 returns them whole.
        # (Agreed over the mesh: an NCCL all-reduce and its wait took ~0.3 ms.)
        local = spec.client_host == host_identity() and SHARED_DIR.is_dir() and os.access(SHARED_DIR, os.W_OK)
        shared = all(flag == b"1" for flag in m.allgather(b"1" if local else b"0"))
        graph, state = _opened(spec, rank)
        parts = current().plan(graph, size)
        ranges = [p.vertices for p in parts]
        if spec.device == "gpu":
            from .nccl import NcclComm
            comm = NcclComm(m, ranges, key=tuple(spec.workers))
        else:
            from .host import HostComm
            comm = HostComm(m, ranges)
        timing["setup"] = time.perf_counter() - t0
        part = parts[rank]
        empty, find, new = _allocator(spec, shared)
        placement = Placement(arc_range=part.arcs, comm=comm, key=("rank", rank, size, part.arcs),
                              on_report=_reporter(spec, rank), should_stop=lambda: cancelled(spec.job_id),
                              host_empty=empty)
        kwargs = dict(spec.kwargs, device=spec.device)
        with placed(placement):
            result = registry.get(spec.algorithm).function(graph, **kwargs)
        timing["algorithm"] = time.perf_counter() - t0
        if spec.store:  # once no worker holds the file, rank 0 writes the result into it
            comm.barrier()
            graph.detach()
            comm.barrier()
        else:  # before the summaries are gathered: the client, once it has them, may write to the file
            graph.detach()
        where = None
        if rank == 0 and spec.store:
            result.graph = graph
            where = result.save(spec.store if isinstance(spec.store, str) else None)
            graph.detach()
        result.graph = None
        for name, array in result.arrays().items() if rank == 0 and shared else ():  # the client maps these
            if find(array) is not None:
                setattr(result, name, find(array))
        summary = {"rank": rank, "worker": spec.workers[rank], "arcs": part.num_arcs,
                   "vertices": part.vertices, "stats": {k: v for k, v in result.stats.items() if k != "timeline"},
                   "seconds": result.seconds, "saved": where,
                   "timing": dict(timing, total=time.perf_counter() - t0), "started": started, "start": start,
                   "segments": new()}  # made for the job: the client settles them without listing /dev/shm
        if rank == 0:  # the last iteration, not the last one reported (reports come PROGRESS_SECONDS apart)
            current().record(spec.job_id, state="finished", iteration=result.iterations, seconds=result.seconds,
                      **({} if placement.on_report is None else {"measure": placement.on_report.latest[1]}))
        if shared and spec.reply_to is not None and _replied(spec, m, summary, result):
            return {"summary": summary, "replied": True}
        if rank == 0:
            return {"summary": summary, "result": result}
        return {"summary": summary}
    except BaseException as err:
        _segments.remove_made(spec.job_id)
        if rank == 0:
            current().record(spec.job_id, state="cancelled" if isinstance(err, JobCancelled) else "failed")
        if spec.device == "gpu":
            from .nccl import drop
            if comm is not None:
                comm.abandon()
            drop(tuple(spec.workers), abort=True)
        raise
    finally:
        m.close()  # on failure, the other ranks see the connection close at once
        if graph is not None:
            current().checkin(spec.path, graph, state)
        _segments.sweep()  # segments of clients that have gone (this job's, killed meanwhile, among them)


def _allocator(spec: JobSpec, shared: bool):
    """``(empty, find, new)`` of :func:`.segments.allocator` for the job's result arrays where
    every rank shares the client's host, else ``(None, None, list)``."""
    if not shared:
        return None, None, list
    _segments.prune()
    return _segments.allocator(spec.job_id, spec.client_key, list(spec.segments), lock_pages=spec.device == "gpu")


def _replied(spec: JobSpec, m, summary: dict, result) -> bool:
    """The client is on this host: rank 0 hands it every rank's summary and its result directly
    (:mod:`.reply`; the summaries gathered over the mesh, as plain data). True on rank 0 once
    sent; False elsewhere, or where that failed (the result then goes back through dask)."""
    try:
        mine = wire.dumps(summary)
    except (TypeError, ValueError) as err:
        log.debug("job %s: rank %d's summary is not plain data (%s)", spec.job_id, m.rank, err)
        mine = b""  # every rank still takes part in the gather; rank 0 then replies through dask
    gathered = m.allgather(mine)
    if m.rank != 0 or not all(gathered):
        return False
    try:
        parts = [{"summary": summary, "result": result}] + [{"summary": wire.loads(s)} for s in gathered[1:]]
        _reply.send(spec.reply_to, spec.job_id, spec.secret, parts)
        return True
    except (OSError, TypeError, ValueError) as err:
        log.warning("job %s: could not hand the result to the client directly (%s); returning it via dask",
                    spec.job_id, err)
        return False


def _reporter(spec: JobSpec, rank: int):
    """Rank 0's ``on_report``: keep the latest iteration and measure for :func:`job_progress`."""
    if rank != 0:
        return None
    t0, last = time.monotonic(), [0.0]
    current().record(spec.job_id, state="running", iteration=0, measure=None, seconds=0.0)

    def report(iteration, measure):
        report.latest = (iteration, measure)  # for the record at the end
        now = time.monotonic()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            current().record(spec.job_id, iteration=iteration, measure=measure, seconds=now - t0)
    report.latest = (0, None)
    return report


def job_progress(job_id: str) -> dict | None:
    """The progress record of ``job_id`` on this worker (run by the client with ``Client.run``)."""
    return current().progress(job_id)


def cancel_job(job_id: str) -> None:
    """Ask ``job_id``'s ranks on this worker to stop at their next convergence report."""
    current().cancel(job_id)


def cancelled(job_id: str) -> bool:
    """Whether the client cancelled ``job_id`` (polled by its ranks at every report)."""
    return current().cancelled(job_id)


def forget_job(job_id: str) -> None:
    """The client gave ``job_id`` up: drop its progress record and what its ranks return. A
    cancel stays in force (a rank that has not looked yet still stops)."""
    current().forget(job_id)
    for h in list(_mesh._HUBS.values()):
        h.forget(job_id)


def release_all() -> int:
    """Free every cached store's engines on this worker (device and pinned memory); returns how
    many stores were open."""
    count = current().release_all()
    _segments.sweep()
    return count

"""The client's calls on a cluster's workers beside a job's tasks (dask's ``Client.run``): the
workers' hubs, whether they see a GPU, a job's progress, its cancel. Those that follow a running
job wait at most :data:`~.limits.RUN_SECONDS` for any worker, so a stopped or dead one holds up
no one; those that start a job name the worker that could not answer.
"""

from __future__ import annotations


from ooc_graph.errors import JobError

from . import cluster as _cluster
from .limits import RUN_SECONDS

UNANSWERED = "unanswered"  # what on_workers() gives for a worker that did not answer in time
_HUBS: dict = {}  # (scheduler, worker) -> the worker's hub: (host, port), and its start token or None


def closed(client) -> bool:
    """Whether ``client`` has been closed (it can ask nothing of the cluster any more)."""
    return getattr(client, "status", "running") in ("closing", "closed")


def alive_workers(client) -> list:
    """The cluster's workers now, sorted (asked of the scheduler: the client's cached identity may
    be refreshed without them at any moment; read from it directly where it is a local cluster's,
    in this process)."""
    known = _cluster.local_workers(client)
    if known is not None:
        return known
    return sorted(client.sync(client.scheduler.identity, n_workers=-1)["workers"])


_HUBS: dict = {}  # (scheduler, worker) -> the worker's hub: (host, port), and its start token or None


def hubs(client, workers: list) -> tuple:
    """Each worker's hub address and the token for direct starts (:mod:`.launch`), asked of the
    workers the first time only."""
    scheduler = client.scheduler.address
    missing = [w for w in workers if (scheduler, w) not in _HUBS]
    if missing:
        from .worker import hub_address
        for w, got in answers(client, hub_address, missing, "for its hub").items():
            _HUBS[(scheduler, w)] = (tuple(got[:2]), got[2])
    known = [_HUBS[(scheduler, w)] for w in workers]
    return [a for a, _ in known], [t for _, t in known]


def no_direct_starts(client, workers: list) -> None:
    """Workers whose hubs could not be reached: their ranks wait for their tasks from now on."""
    for w in workers:
        address, _ = _HUBS.get((client.scheduler.address, w), (None, None))
        if address is not None:
            _HUBS[(client.scheduler.address, w)] = (address, None)


def on_workers(client, fn, *args, workers: list, keep: bool = False) -> dict:
    """``fn(*args)`` on each of ``workers`` (dask's ``Client.run``), waiting at most
    :data:`~.limits.RUN_SECONDS`: ``{worker: its answer, the exception it raised or met, or
    UNANSWERED}``. A frozen or dead worker holds up no one; ``keep``: calls not answered in time
    go on (a cancel still reaches a worker that wakes up) instead of being dropped."""
    import asyncio  # with dask, on first use (not with the package)

    async def each():
        calls = {w: asyncio.ensure_future(client.run(fn, *args, workers=[w], on_error="return", asynchronous=True))
                 for w in workers}
        done, pending = await asyncio.wait(calls.values(), timeout=RUN_SECONDS) if calls else (set(), set())
        for call in pending:
            if keep:  # its outcome, when it comes, is not wanted
                call.add_done_callback(lambda c: c.cancelled() or c.exception())
            else:
                call.cancel()
        got = {}
        for w, call in calls.items():
            if call not in done:
                got[w] = UNANSWERED
            elif call.exception() is not None:
                got[w] = call.exception()
            else:
                got[w] = call.result().get(w, UNANSWERED)
        return got
    return client.sync(each)


def answers(client, fn, workers: list, what: str) -> dict:
    """``fn()`` on each of ``workers``, ``{worker: answer}``; raises :class:`JobError` naming the
    first worker that could not answer (one that has just died: the scheduler may list it a
    moment longer, and dask raised its ``CommClosedError``)."""
    if closed(client):
        raise JobError("the dask client is closed: make a new one to submit jobs")
    try:
        got = client.run(fn, workers=workers, on_error="return")
    except OSError as err:  # the scheduler itself
        raise JobError(f"cannot ask the workers {what}: the dask scheduler at {client.scheduler.address} "
                       f"cannot be reached ({type(err).__name__}: {first_line(err)})") from err
    for w in workers:
        if w not in got or isinstance(got[w], BaseException):
            why = "no answer" if w not in got else f"{type(got[w]).__name__}: {first_line(got[w])}"
            raise JobError(f"worker {w} could not be asked {what} ({why}): it died or cannot be reached")
    return got


def first_line(err) -> str:
    """The first line of an error's message (a worker's may carry more)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__

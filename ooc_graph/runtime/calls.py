"""An algorithm call with ``gpus=``, ``client=`` or ``workers=``: the same call as a job on a
cluster (:mod:`.jobs`), waited for, with rank 0's progress passed on while it runs."""

from __future__ import annotations

import time

from ooc_graph import registry
from ooc_graph.errors import ParameterError, check_converged
from ooc_graph.store import as_graph

from . import cluster as _cluster
from .jobs import Job, _bind, _not_in_memory, submit

__all__ = ["run_distributed", "follow"]


def run_distributed(algorithm: str, G, kwargs: dict, *, gpus=None, client=None, workers=None, on_report=None):
    """An algorithm call with ``gpus=``, ``client=`` or ``workers=``: the same call as a job on a
    cluster (made on first use and kept), waited for; the result saved by this process.
    ``on_report(iteration, measure)`` hears rank 0's progress while it runs (polled)."""
    given = [name for name, v in (("gpus", gpus), ("client", client), ("workers", workers)) if v is not None]
    if len(given) > 1:
        raise ParameterError(f"give one of gpus=, client= or workers= (got {', '.join(given)})")
    _bind(algorithm, dict(kwargs))  # before a cluster is started for it
    device = kwargs.pop("device", "auto")
    store = kwargs.pop("store", False)
    _not_in_memory(G)
    if gpus is not None:
        if device not in ("auto", "gpu"):
            raise ParameterError(f"gpus= runs on GPUs; device={device!r} contradicts it")
        client, device, picked = _cluster.local_gpu_client(gpus), "gpu", None
    elif workers is not None:
        if device not in ("auto", "cpu"):
            raise ParameterError(f"workers= starts CPU workers; device={device!r} contradicts it (use gpus=)")
        client, device, picked = _cluster.local_cpu_client(workers), "cpu", None
    else:
        picked = None
    graph = as_graph(G)
    t0 = time.perf_counter()
    job = submit(client, algorithm, graph, workers=picked, device=device, **kwargs)
    job.t0 = t0
    if on_report is not None:
        follow(job, on_report)
    result = job.result()
    if kwargs.get("raise_on_nonconvergence", "raise_on_nonconvergence" in registry.get(algorithm).parameters):
        check_converged(result)
    if store:
        result.save(store if isinstance(store, str) else None)
    return result


# Seconds between two looks at a running job's progress (follow).
PROGRESS_POLL_SECONDS = 0.5


def follow(job: Job, on_report, *, poll: float = PROGRESS_POLL_SECONDS) -> None:
    """Call ``on_report(iteration, measure)`` with rank 0's latest report, each new one once,
    until ``job`` is no longer pending or running, then its final one, looking every ``poll``
    seconds; Ctrl-C cancels it."""
    last = None
    try:
        while True:
            running = job.status() in ("pending", "running", "unresponsive")
            record = job.progress()  # once ended, the last iteration (reports are 0.2 s apart)
            if record and record.get("iteration") and record["iteration"] != last:
                last = record["iteration"]
                on_report(last, record.get("measure"))
            if not running:
                return
            time.sleep(poll)
    except KeyboardInterrupt:
        job.cancel()
        raise

"""Clusters a call runs on: a user's ``distributed.Client``, a scheduler address, or local clusters
made on demand (dask-cuda's ``LocalCUDACluster`` for ``gpus=``, dask's ``LocalCluster`` of CPU
processes for ``workers=``) and kept for the life of the process, so later calls start nothing.

dask's own logging is quiet in the clusters and clients made here (:func:`quiet_dask`): their
workers say nothing, this process's ``distributed`` loggers only errors, since every failure of a
job reaches the caller as one error naming the job and the worker. Where this library's logging
is on at INFO (``ooc-graph -v``, or ``logging.getLogger("ooc_graph").setLevel(logging.INFO)``)
dask's loggers are left as dask sets them, and workers report their warnings and errors. A
``distributed.Client`` the caller made is the caller's: its logging is left alone.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading

from ooc_graph.errors import DeviceError, JobError, ParameterError, install

log = logging.getLogger("ooc_graph.runtime")

_LOCAL: dict = {}  # ("gpu", device ids) or ("cpu", workers) -> (cluster, client)
_LOCK = threading.Lock()
# How long the local clusters' client and scheduler hold a message to batch it with later ones.
# distributed's 10 ms (client) and 5 ms (scheduler to each worker) meant that a call coming
# within 10 ms of the previous one's messages reached its workers ~14 ms after it was sent
# (2 CPU workers, a tiny graph: 29 ms a call; 16-22 ms with 1 ms).
BATCH_SECONDS = 0.001


def _dask():
    try:
        import distributed
    except ImportError as err:
        raise JobError(f"distributed runs need dask and distributed: {install('dask', 'dask distributed')}") from err
    return distributed


def _verbose() -> bool:
    """Whether the caller asked for this library's logging (``-v``): then dask's too."""
    return logging.getLogger("ooc_graph").isEnabledFor(logging.INFO)


def worker_log_level() -> int:
    """What the workers of a local cluster log: nothing (a failure reaches the caller as one error
    naming the worker; dask's "Compute Failed" tracebacks went to this terminal), or their warnings
    and errors where this library logs at INFO."""
    return logging.WARNING if _verbose() else logging.CRITICAL


def quiet_dask() -> None:
    """This process's ``distributed`` loggers (the local clusters' scheduler and nannies run here,
    and the client) to errors only, unless this library logs at INFO: starting and stopping a
    2-worker cluster logged 29 lines at INFO. (distributed sets its loggers' levels when imported:
    this runs after the import.)"""
    if _verbose():
        return
    loggers = [logging.getLogger("distributed")] + [
        logger for name, logger in list(logging.Logger.manager.loggerDict.items())
        if name.startswith("distributed.") and isinstance(logger, logging.Logger)]
    for logger in loggers:
        if logger.level != logging.NOTSET or logger.name == "distributed":  # the others inherit it
            logger.setLevel(max(logger.level, logging.ERROR))


def as_client(client):
    """A ``distributed.Client`` from a client or a scheduler address (``tcp://host:port``)."""
    distributed = _dask()
    if isinstance(client, distributed.Client):
        return client
    if isinstance(client, str):
        quiet_dask()  # a client made here (the command line's --scheduler): its logging is this library's
        try:
            return distributed.Client(client, timeout="20s")
        except (OSError, TimeoutError) as err:
            raise JobError(f"cannot reach the dask scheduler at {client}: {err}") from err
        except ValueError as err:  # not an address
            raise ParameterError(f"{client!r} is not a dask scheduler address such as tcp://host:8786: {err}") from err
    raise ParameterError(f"client must be a distributed.Client or a scheduler address (got {type(client).__name__})")


def gpu_ids(gpus) -> tuple:
    """Device ids from ``gpus``: a list of ints, a string ``"0,1"``, ``"all"``, or a count; each
    must be a device CuPy sees (a :class:`DeviceError` where it sees none: checked before dask-cuda
    is looked for)."""
    given = gpus
    if isinstance(gpus, str) and gpus.strip().lower() == "all":
        return tuple(range(_devices(given)))
    if isinstance(gpus, str):
        try:
            gpus = [int(g) for g in gpus.split(",") if g.strip()]
        except ValueError:
            raise ParameterError(f"gpus must be 'all' or device ids like '0,1' (got {gpus!r})") from None
    try:
        ids = tuple(gpus) if not isinstance(gpus, int) or isinstance(gpus, bool) else tuple(range(gpus))
    except TypeError:
        ids = ()
    if not ids or any(isinstance(g, bool) or not isinstance(g, int) or g < 0 for g in ids) or len(set(ids)) != len(ids):
        raise ParameterError(f"gpus must be distinct non-negative device ids (got {given!r})")
    count = _devices(given)
    missing = [g for g in ids if g >= count]
    if missing:
        raise DeviceError(f"gpus={given!r}: no CUDA device {', '.join(map(str, missing))} "
                          f"(CuPy sees {count}: {', '.join(map(str, range(count)))})")
    return ids


def _devices(given) -> int:
    """The CUDA devices CuPy sees; a :class:`DeviceError` naming ``given`` where it sees none."""
    from ooc_graph.engine import gpu_available
    if not gpu_available():
        raise DeviceError(f"gpus={given!r} but CuPy finds no CUDA device (use workers= for CPU worker processes)")
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def local_gpu_client(gpus):
    """A client of a ``LocalCUDACluster`` with one worker per GPU in ``gpus`` (made once)."""
    ids = gpu_ids(gpus)
    key = ("gpu", ids)
    with _LOCK:
        if key not in _LOCAL:
            try:
                from dask_cuda import LocalCUDACluster
            except ImportError as err:
                raise JobError(f"several GPUs need dask-cuda: {install('multigpu', 'dask-cuda')}") from err
            distributed = _dask()
            quiet_dask()
            os.environ["NCCL_NVLS_ENABLE"] = "0"  # workers inherit it: NVLink multicast stays off
            cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, ids)), n_workers=len(ids),
                                       threads_per_worker=2, memory_limit=0, dashboard_address=":0",
                                       silence_logs=worker_log_level())
            _LOCAL[key] = (cluster, _local_client(distributed, cluster))
            log.info("started a LocalCUDACluster on GPUs %s", ",".join(map(str, ids)))
        return _prompt(*_LOCAL[key])


def local_cpu_client(workers: int):
    """A client of a ``LocalCluster`` of ``workers`` CPU processes (made once)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ParameterError(f"workers must be a positive integer (got {workers!r})")
    key = ("cpu", workers)
    with _LOCK:
        if key not in _LOCAL:
            distributed = _dask()
            quiet_dask()
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=2, processes=True,
                                               memory_limit=0, dashboard_address=":0",
                                               silence_logs=worker_log_level(), env=cpu_worker_environment(workers))
            _LOCAL[key] = (cluster, _local_client(distributed, cluster))
            log.info("started a LocalCluster of %d CPU workers", workers)
        return _prompt(*_LOCAL[key])


def cpu_worker_environment(workers: int) -> dict:
    """What each of ``workers`` CPU worker processes on this machine starts with: the compiled
    kernels' threads (numba's) as this process's cores shared among them. numba starts a thread
    for every core a process may use, whatever dask's ``OMP_NUM_THREADS=1`` for its workers says,
    so ``workers`` processes ran ``workers`` x cores threads on the cores, each parallel kernel
    waiting at its barriers for threads the others had taken. A ``NUMBA_NUM_THREADS`` set in this
    environment is theirs as it is."""
    if "NUMBA_NUM_THREADS" in os.environ:
        return {}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return {"NUMBA_NUM_THREADS": str(max(1, cores // workers))}


def _local_client(distributed, cluster):
    """A client of a local cluster made here, whose workers leave Ctrl-C to this process and
    close their stores as they close."""
    from .plugins import ClientHandlesInterrupts, KeepWorkerState
    client = distributed.Client(cluster)
    client.register_plugin(ClientHandlesInterrupts())
    client.register_plugin(KeepWorkerState())
    return client


def _prompt(cluster, client):
    """``client``, with its messages to the scheduler and the scheduler's to the workers (the
    scheduler of a local cluster runs in this process) batched for :data:`BATCH_SECONDS` at most:
    a job's tasks then reach the workers at once. (distributed has no setting for these
    intervals; a stream that lacks the attribute is left as it is.)"""
    streams = [getattr(client, "scheduler_comm", None)]
    try:  # the scheduler's own thread may add a worker's stream meanwhile: then the next call
        streams += list(getattr(getattr(cluster, "scheduler", None), "stream_comms", {}).values())
    except RuntimeError:
        pass
    for stream in streams:
        if stream is not None and getattr(stream, "interval", 0) > BATCH_SECONDS:
            stream.interval = BATCH_SECONDS
    return client


def local_workers(client) -> list | None:
    """The workers of a local cluster this process made, sorted, read from its scheduler (which
    runs in this process) with no round trip to it (~0.4-1 ms); None for any other client."""
    for cluster, c in list(_LOCAL.values()):
        if c is client:
            workers = getattr(getattr(cluster, "scheduler", None), "workers", None)
            for _ in range(3):
                try:
                    return None if workers is None else sorted(workers)
                except RuntimeError:  # changed while read (the scheduler's thread): read again
                    continue
    return None


def release(client=None) -> None:
    """Free what workers keep between jobs (open stores, their cached chunks on the GPUs and in
    pinned memory): on ``client``'s workers, or on those of every local cluster this process made."""
    from .worker import release_all
    clients = [as_client(client)] if client is not None else [c for _, c in _LOCAL.values()]
    for c in clients:
        c.run(release_all)


def shutdown() -> None:
    """Close the local clusters this process started (also done at exit), then remove this
    process's result segments: with the workers gone, none is made after."""
    with _LOCK:
        for cluster, client in _LOCAL.values():
            try:
                client.close()
                cluster.close()
            except Exception:  # pragma: no cover - closing at exit: nothing left to report to
                pass
        _LOCAL.clear()
    from .segments import close_pool
    close_pool()


atexit.register(shutdown)

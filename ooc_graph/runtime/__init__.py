"""Runtimes beyond one process: several GPUs (dask-cuda, NCCL) and dask clusters of CPU or GPU
workers. Each worker owns a contiguous run of sub-graphs (:mod:`ooc_graph.partitioning.plan`), streams only its own
chunks, and exchanges the state of its destinations with the others after every pass
(:mod:`.nccl` among GPUs, :mod:`.host` over TCP among CPUs); one long-lived task per worker owns
the whole iteration loop (:mod:`.worker`). :func:`submit` queues a job on a cluster and returns a
:class:`Job` handle. A client on the workers' host gets results through shared memory, and rank 0
hands the finished job to it over its own connection (:mod:`.reply`) rather than through dask.
"""

from .cluster import release, shutdown
from .jobs import Job, submit
from ooc_graph.partitioning.plan import Partition, plan

__all__ = ["submit", "Job", "release", "shutdown", "plan", "Partition"]

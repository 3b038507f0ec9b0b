"""Submit jobs to a dask cluster and follow them: the service side of ooc_graph.

    python examples/dask_cluster.py                          # starts a LocalCluster of 2 CPU workers
    python examples/dask_cluster.py --gpus all               # a LocalCUDACluster, one worker per GPU
    python examples/dask_cluster.py --scheduler tcp://head:8786 --store /shared/graph.h5

Joins the cluster at --scheduler (the store must then be on a filesystem every worker sees), or
starts a local one; submits PageRank and WCC at once without waiting, prints each job's progress
(iteration and residual, or components merged) until both finish, then fetches the results. The
PageRank result is also kept in the store (results/pagerank_job).
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ooc_graph


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scheduler", help="address of a running dask scheduler, tcp://host:port")
    ap.add_argument("--gpus", help="start a LocalCUDACluster on these GPUs: all, or ids like 0,1")
    ap.add_argument("--workers", type=int, default=2, help="start a LocalCluster of this many CPU workers")
    ap.add_argument("--store", help="graph store every worker can read (default: generate an R-MAT)")
    ap.add_argument("--scale", type=int, default=16, help="R-MAT scale when generating")
    a = ap.parse_args()

    from ooc_graph.runtime import cluster
    if a.scheduler:
        client = cluster.as_client(a.scheduler)
    elif a.gpus:
        client = cluster.local_gpu_client(a.gpus)
    else:
        client = cluster.local_cpu_client(a.workers)
    workers = ooc_graph.runtime.jobs.alive_workers(client)
    print(f"cluster {client.scheduler.address}: {len(workers)} workers")

    folder = tempfile.TemporaryDirectory(prefix="ooc-graph-cluster-") if not a.store else None
    store = a.store or str(Path(folder.name) / "rmat.h5")
    try:
        if not a.store:
            ooc_graph.generate.rmat(store, a.scale, 16, seed=1, progress=False).close()
        jobs = [ooc_graph.submit(client, "pagerank", store, tol=1e-10, store="pagerank_job"),
                ooc_graph.submit(client, "wcc", store)]
        for job in jobs:
            print(f"submitted {job.id}")
        while any(job.status() in ("pending", "running", "unresponsive") for job in jobs):
            for job in jobs:
                p = job.progress() or {}
                print(f"  {job.id}: {job.status():8s} iteration {p.get('iteration', 0):3d}  "
                      f"measure {p.get('measure')!s:>12s}  {p.get('seconds', 0.0):6.2f} s")
            time.sleep(0.5)
        pr, cc = (job.result() for job in jobs)
        top = np.argsort(pr.values)[::-1][:3]
        print(f"PageRank: {pr.iterations} iterations in {pr.seconds:.2f} s, top vertices {top.tolist()}")
        print(f"WCC: {cc.num_components:,} components in {cc.seconds:.2f} s")
        with ooc_graph.open(store) as G:
            print(f"stored results: {', '.join(G.results())}")
    finally:
        if folder is not None:
            folder.cleanup()
        cluster.shutdown()


if __name__ == "__main__":  # dask workers import this file again: nothing runs at import
    try:
        main()
    except ooc_graph.OocGraphError as err:  # no GPU for --gpus, no scheduler, no store: one line
        sys.exit(f"dask_cluster.py: error: {err}")

"""Where a whole call's time goes, on one GPU and on two (run on a 2-GPU machine):

    NCCL_NVLS_ENABLE=0 python3 benchmarks/distributed_breakdown.py 24        # R-MAT-24, BFS and PageRank
    python3 benchmarks/distributed_breakdown.py 14 cpu                      # the same on 2 CPU workers
    python3 benchmarks/distributed_breakdown.py 26 /tmp/rmat26.h5           # a store already made

The engine's methods (and the NCCL collectives) are wrapped, in this process and in every dask
worker, with device synchronisations before and after, and their calls and milliseconds are
summed per process: a diagnostic of one synchronised call beside the untimed whole call (the
synchronisation itself changes the overlap), with each rank's and the client's timings.
"""

import json
import sys
import time

import numpy as np


TIMED = {"ooc_graph.engine.core:Engine": ["propagate_min", "tight_parents", "result", "pull_sum", "gather",
                                          "sum_over_workers", "csr", "_can_advance", "report", "prepare_results",
                                          "vertex_array", "_exchange", "shortest_paths"],
         "ooc_graph.algorithms._common:Run": ["__init__", "finish"],
         "ooc_graph.runtime.nccl:NcclComm": ["merge_min", "gather_owned", "allreduce", "allreduce_array", "__init__"]}


def acc():
    """The sums, kept in a module every worker has (functions sent to workers are copies)."""
    import ooc_graph.engine.core as c
    if not hasattr(c, "_PROBE"):
        c._PROBE = {}
    return c._PROBE

def install():
    import importlib, functools
    try:
        import cupy as cp
        sync = cp.cuda.runtime.deviceSynchronize
        cp.cuda.runtime.getDeviceCount()
    except Exception:
        sync = lambda: None
    for where, names in TIMED.items():
        mod, cls = where.split(":")
        try:
            C = getattr(importlib.import_module(mod), cls)
        except Exception:
            continue
        for name in names:
            f = getattr(C, name)
            if getattr(f, "_timed", False):
                continue
            def wrap(f=f, key=f"{cls}.{name}"):
                @functools.wraps(f)
                def g(*a, **k):
                    sync()
                    t = time.perf_counter()
                    try:
                        return f(*a, **k)
                    finally:
                        sync()
                        c = acc().setdefault(key, [0, 0.0]); c[0] += 1; c[1] += time.perf_counter() - t
                g._timed = True
                return g
            setattr(C, name, wrap())
    return True

def take():
    A = acc()
    out = {k: (v[0], round(v[1] * 1e3, 2)) for k, v in sorted(A.items(), key=lambda kv: -kv[1][1])}
    A.clear()
    return out

if __name__ == "__main__":
    import ooc_graph
    from ooc_graph import runtime
    from ooc_graph.runtime.cluster import local_gpu_client
    scale = int(sys.argv[1])
    cpu = "cpu" in sys.argv[2:]
    store = next((a for a in sys.argv[2:] if a.endswith(".h5")), None)  # an existing store instead
    if store:
        G = ooc_graph.open(store)
    else:
        G = ooc_graph.generate.rmat(f"/tmp/p{scale}.h5", scale, 16, seed=1, directed=True, progress=False,
                                    overwrite=True, memory="64GB", drop_self_loops=True)
    s = int(np.argmax(G.out_degree))
    from ooc_graph.runtime.cluster import local_cpu_client
    client = local_cpu_client(2) if cpu else local_gpu_client([0, 1])
    dev = "cpu" if cpu else "gpu"
    print("workers patched:", client.run(install), flush=True)
    for algo, kw in (("bfs", {"source": s}), ("pagerank", {"tol": 1e-6})):
        fn = getattr(ooc_graph, algo)
        for gpus in (None, [0, 1]):
            extra = {} if gpus is None else ({"workers": 2} if cpu else {"gpus": gpus})
            fn(G, device=dev, **kw, **extra)  # warm
            walls = []
            for timed in (False, True):
                if timed:
                    if gpus is None: install(); take()
                    else: client.run(take)
                t = time.perf_counter(); r = fn(G, device=dev, **kw, **extra); w = time.perf_counter() - t
                walls.append(w)
            print(f"== {algo} gpus={gpus}: untimed whole {walls[0]*1e3:.1f} ms, with syncs {walls[1]*1e3:.1f} ms, "
                  f"iterations {r.iterations}", flush=True)
            if gpus is None:
                print("   ", json.dumps(take()))
                print("    passes:", [(p["kind"], round(p["seconds"] * 1e3, 2)) for p in r.stats["per_pass"]][:12])
            else:
                print("    client", json.dumps({k: np.round(np.multiply(v, 1e3), 1).tolist()
                                                    for k, v in r.stats["client_timing"].items()}))
                for rk in r.stats["ranks"]:
                    print(f"    rank {rk['rank']} timing", json.dumps({k: round(v * 1e3, 1) for k, v in rk["timing"].items()}))
                for addr, got in client.run(take).items():
                    print("   ", addr, json.dumps(got))
            sys.stdout.flush()
    runtime.shutdown()

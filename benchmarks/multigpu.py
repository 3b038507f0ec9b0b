"""Several GPUs: PageRank and BFS on 1..k GPUs, in memory and streamed, as whole calls.

    python benchmarks/multigpu.py --scale 26 --gpus 1,2 --out results/        # 1.06B arcs
    python benchmarks/multigpu.py --store rmat26.h5 --gpus 1,2,4 --out results/

For each GPU count: the pinned host->device copy ceiling of that many GPUs copying at once (the
limit of streaming-bound scaling), then PageRank (tol 1e-6) and BFS from the highest-degree
vertex, (a) in memory and (b) with each GPU's device budget at the vertex state plus 25% of its
share of the decoded arcs (8 bytes an arc), so that every pass streams the other 75%. Each is timed as a user calls it (``ooc_graph.pagerank(G, gpus=[0, 1])``,
result in host memory): the first call (nothing cached on the GPUs) and the median of warm calls;
beside it one profiled call gives rank 0's per-pass seconds, copy and kernel busy time, and the
exchange time and bytes. One GPU is the in-process call; several go through dask-cuda and NCCL.
Every figure goes to ``multigpu-<name>.json`` with the command; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # keep NVLink multicast off, also in the workers

import numpy as np  # noqa: E402

import ooc_graph  # noqa: E402
from ooc_graph import runtime  # noqa: E402

STATE_ARRAYS = 5


def copy_ceiling(gpus: int, nbytes: int = 1 << 30, repeat: int = 5) -> dict:
    """Pinned host->device GB/s with ``gpus`` GPUs copying at once (one thread each)."""
    import cupy as cp
    import cupyx
    barrier, rates = threading.Barrier(gpus), [0.0] * gpus

    def run(i):
        with cp.cuda.Device(i):
            host = cupyx.empty_pinned(nbytes, dtype=np.uint8)
            host[:] = 1
            dev = cp.empty(nbytes, dtype=np.uint8)
            stream = cp.cuda.Stream(non_blocking=True)
            dev.set(host, stream=stream)
            stream.synchronize()
            barrier.wait()
            t = time.perf_counter()
            for _ in range(repeat):
                dev.set(host, stream=stream)
            stream.synchronize()
            rates[i] = repeat * nbytes / (time.perf_counter() - t) / 1e9
            del dev, host
    threads = [threading.Thread(target=run, args=(i,)) for i in range(gpus)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"gpus": gpus, "per_gpu_GBps": rates, "aggregate_GBps": sum(rates)}


CPU_SMOKE = False  # --cpu-smoke: CPU workers stand in for GPUs (checks this script, measures nothing)


def call(fn, G, gpus: int, **kw):
    t = time.perf_counter()
    if CPU_SMOKE:
        kw = dict(kw, device="cpu", device_memory=None)
        r = fn(G, **kw) if gpus == 1 else fn(G, workers=gpus, **kw)
    else:
        r = fn(G, **kw) if gpus == 1 else fn(G, gpus=list(range(gpus)), **kw)
    return time.perf_counter() - t, r


def release(G, gpus):
    G.release()
    if gpus > 1:
        runtime.release()
    if not CPU_SMOKE:
        import cupy as cp
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def measure(G, algo, gpus, budget, warm: int, **kw) -> dict:
    fn = getattr(ooc_graph, algo)
    opts = dict(device="gpu", device_memory=budget, **kw)
    release(G, gpus)
    cold, r = call(fn, G, gpus, **opts)
    iterations = r.iterations
    del r  # as a user's loop would: the warm calls below may reuse its result memory
    times = [call(fn, G, gpus, **opts)[0] for _ in range(warm)]
    _, p = call(fn, G, gpus, profile=True, **opts)
    passes = p.passes
    keys = ("seconds", "bytes_to_device", "GBps_to_device", "busy_copy", "busy_compute", "seconds_exchanging",
            "bytes_exchanged")
    steady = [q for q in passes if q.get("bytes_read", 0) == 0] or passes
    per = {k: statistics.median([q.get(k) or 0 for q in steady]) for k in keys} if steady else {}
    moved = sum(q.get("bytes_to_device", 0) for q in passes)
    out = {"algorithm": algo, "gpus": gpus, "device_memory_per_gpu": budget, "iterations": iterations,
           "cold_s": cold, "warm_s": statistics.median(times), "warm_all_s": times,
           "kernel_only_s": sum(q["seconds"] for q in passes),
           "exchange_s": sum(q.get("seconds_exchanging", 0.0) for q in passes),
           "exchange_bytes": sum(q.get("bytes_exchanged", 0) for q in passes),
           "bytes_to_device_per_pass": moved / max(1, len(passes)),
           "steady_pass_median": per, "passes": len(passes), "stats": _slim(p.stats)}
    if moved and out["warm_s"]:
        out["whole_call_GBps_to_device"] = moved / out["warm_s"] / 1e9
    return out


def _slim(stats):
    return {k: v for k, v in stats.items() if k not in ("per_pass", "timeline", "convergence", "ranks")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=26, help="R-MAT scale to generate (2**scale vertices)")
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--store", help="use this store instead of generating one (kept)")
    ap.add_argument("--gpus", default="1,2", help="GPU counts to run, e.g. 1,2,4")
    ap.add_argument("--warm", type=int, default=3, help="warm calls per measurement (median)")
    ap.add_argument("--memory", default="32GB", help="host budget per worker")
    ap.add_argument("--build-workers", type=int, default=os.cpu_count())
    ap.add_argument("--skip", default="", help="comma-separated: memory,stream,pagerank,bfs")
    ap.add_argument("--out", default=".")
    ap.add_argument("--cpu-smoke", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    global CPU_SMOKE
    CPU_SMOKE = a.cpu_smoke
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    counts = [int(g) for g in a.gpus.split(",")]
    skip = set(filter(None, a.skip.split(",")))
    record = {"command": " ".join([Path(sys.executable).name] + sys.argv), "host": platform.node(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "results": []}
    if not CPU_SMOKE:
        import cupy as cp
        record["devices"] = [cp.cuda.runtime.getDeviceProperties(i)["name"].decode() for i in range(max(counts))]
        record["copy_ceiling"] = [copy_ceiling(g) for g in counts]
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
        print("copy ceiling:", [(c["gpus"], round(c["aggregate_GBps"], 1)) for c in record["copy_ceiling"]],
              flush=True)
    if a.store and Path(a.store).exists():
        G = ooc_graph.open(a.store)
    else:
        path = a.store or str(out / f"rmat{a.scale}.h5")
        t = time.perf_counter()
        G = ooc_graph.generate.rmat(path, a.scale, a.edge_factor, seed=1, directed=True, memory=a.memory,
                                    workers=a.build_workers, progress=False)
        record["generate_s"] = time.perf_counter() - t
        print(f"generated {G!r} in {record['generate_s']:.1f} s", flush=True)
    record["graph"] = {"vertices": G.num_vertices, "arcs": G.num_arcs, "path": str(G.path)}
    source = int(G.vertices[int(np.argmax(G.out_degree))])
    state = (STATE_ARRAYS * 8 + 1) * G.num_vertices
    for gpus in counts:
        if gpus > 1 and not CPU_SMOKE:
            t = time.perf_counter()
            runtime.cluster.local_gpu_client(list(range(gpus)))
            record.setdefault("cluster_start_s", {})[gpus] = time.perf_counter() - t
        share = 8 * G.num_arcs / gpus  # decoded arcs of one GPU's share (int32 source and destination)
        budgets = {"memory": None, "stream": int(state + 0.25 * share) + (64 << 20)}
        for mode, budget in budgets.items():
            if mode in skip:
                continue
            for algo, kw in (("pagerank", {"tol": 1e-6}), ("bfs", {"source": source})):
                if algo in skip:
                    continue
                res = measure(G, algo, gpus, budget, a.warm, memory=a.memory, **kw)
                res["mode"] = mode
                record["results"].append(res)
                print(f"{algo:8s} {mode:6s} {gpus} GPU: cold {res['cold_s']:.3f} s, warm {res['warm_s']:.3f} s, "
                      f"{res['iterations']} it, kernel {res['kernel_only_s']:.3f} s, exchange "
                      f"{res['exchange_s']:.3f} s / {res['exchange_bytes'] / 1e9:.2f} GB", flush=True)
                (out / f"multigpu-{Path(G.path).stem}.json").write_text(json.dumps(record, indent=1, default=str))
    runtime.shutdown()
    print(_table(record))


def _table(record) -> str:
    rows = ["| algorithm | mode | GPUs | cold s | warm s | speed-up (warm) | kernel s | exchange s |",
            "|---|---|---|---|---|---|---|---|"]
    base = {(r["algorithm"], r["mode"]): r["warm_s"] for r in record["results"] if r["gpus"] == 1}
    for r in record["results"]:
        b = base.get((r["algorithm"], r["mode"]))
        rows.append(f"| {r['algorithm']} | {r['mode']} | {r['gpus']} | {r['cold_s']:.3f} | {r['warm_s']:.3f} | "
                    f"{(b / r['warm_s']) if b else float('nan'):.2f}x | {r['kernel_only_s']:.3f} | {r['exchange_s']:.3f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()

"""When each step of a whole call happens, in the client and on every rank, without added waits:

    NCCL_NVLS_ENABLE=0 python3 benchmarks/distributed_timeline.py /tmp/rmat26.h5 --gpus 2   # a 2-GPU machine
    python3 benchmarks/distributed_timeline.py /tmp/r14.h5 --cpu 2                           # CPU workers

Runs PageRank (and ``--algorithm``) warm, in one process and as a job on the workers, with the
engine's, the runtime's and the client's steps wrapped (in this process and in every worker) to
note the wall-clock time at which each starts and ends. Unlike ``distributed_breakdown.py`` nothing
synchronises the device: the call keeps its overlap, and a step's span is host time (a wait for the
device, such as ``Sums.host``, shows as a long span). Prints, per process, each step's first start
and last end in ms from the call's start, how often it ran and its time inside; ``--out`` keeps
the spans as JSON.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

# (module, attribute path): what gets wrapped, in every process.
STEPS = [
    ("ooc_graph.runtime.jobs", "submit"), ("ooc_graph.runtime.jobs", "hubs"),
    ("ooc_graph.runtime.jobs", "_submit_ranks"), ("ooc_graph.runtime.jobs", "Job.result"),
    ("ooc_graph.runtime.jobs", "Job._gather"), ("ooc_graph.runtime.jobs", "_combine"),
    ("ooc_graph.runtime.worker", "run_rank"), ("ooc_graph.runtime.worker", "_run"),
    ("ooc_graph.runtime.worker", "_checkout"),
    ("ooc_graph.runtime.worker", "plan"), ("ooc_graph.runtime.worker", "_reply_directly"),
    ("ooc_graph.runtime.mesh", "Mesh.__init__"), ("ooc_graph.runtime.mesh", "Mesh.allgather"),
    ("ooc_graph.runtime.nccl", "NcclComm.__init__"), ("ooc_graph.runtime.nccl", "NcclComm.allreduce"),
    ("ooc_graph.runtime.nccl", "NcclComm.barrier"), ("ooc_graph.runtime.segments", "allocator"),
    ("ooc_graph.algorithms._common", "Run.__init__"), ("ooc_graph.algorithms._common", "Run.finish"),
    ("ooc_graph.engine.core", "Engine.vertex_array"), ("ooc_graph.engine.core", "Engine.pull_sum"),
    ("ooc_graph.engine.core", "Engine.gather"), ("ooc_graph.engine.core", "Engine.sum_over_workers"),
    ("ooc_graph.engine.core", "Engine.result"), ("ooc_graph.engine.core", "Sums.host"),
    ("ooc_graph.engine.traversal", "Traversals.propagate_min"), ("ooc_graph.engine.traversal", "Traversals._level_of"),
    ("ooc_graph.engine.trees", "Trees.tight_parents"), ("ooc_graph.engine.traversal", "Traversals._can_pull"),
    ("ooc_graph.engine.core", "Engine.report"), ("ooc_graph.engine.core", "Engine._exchange"),
    ("ooc_graph.runtime.nccl", "NcclComm._wait"), ("cupy", "flatnonzero"), ("cupy", "unique"),
    ("ooc_graph.engine.core", "Engine.prepare_results"),
    ("ooc_graph.store.graph", "Graph.detach"),
    ("ooc_graph.kernels.gpu", "pagerank_step"), ("ooc_graph.kernels.cpu", "pagerank_step"),
]


def spans() -> list:
    """This process's spans (kept in a module every process has: functions sent to dask workers
    are copies)."""
    import ooc_graph.engine.core as c
    if not hasattr(c, "_SPANS"):
        c._SPANS = []
    return c._SPANS


def install() -> int:
    """Wrap :data:`STEPS` in this process (once); returns how many were found."""
    found = 0
    for module, path in STEPS:
        try:
            owner = importlib.import_module(module)
        except ImportError:  # no CuPy here, or no dask
            continue
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        f = getattr(owner, name, None)
        if f is None:
            continue
        found += 1
        if getattr(f, "_spanned", False):
            continue

        def wrap(f=f, key=path):
            @functools.wraps(f)
            def g(*a, **k):
                t = time.time()
                try:
                    return f(*a, **k)
                finally:
                    spans().append((key, t, time.time()))
            g._spanned = True
            return g
        setattr(owner, name, wrap())
    return found


def install_events() -> bool:
    """Also mark each pull, PageRank step and traversal kernel on the device with CUDA events (on the stream it is
    queued on), and each collective queued on NCCL's side stream from when that stream starts it
    to when it ends; no synchronisation is added."""
    try:
        import cupy as cp
        from ooc_graph.kernels import gpu
        from ooc_graph.runtime import nccl
    except ImportError:
        return False
    if getattr(gpu.pull_sum, "_evented", False):
        return True
    marks = events()

    def kernel(f, key):
        @functools.wraps(f)
        def g(*a, **k):
            start = cp.cuda.get_current_stream().record()
            try:
                return f(*a, **k)
            finally:
                marks.append((key, start, cp.cuda.get_current_stream().record()))
        g._evented = True
        return g

    for name in ("pull_sum", "pagerank_step", "merge_level", "bottom_up", "advance_min", "advance_levels",
                 "tight_parent", "csr_parents", "flatnonzero"):
        setattr(gpu, name, kernel(getattr(gpu, name), name))
    side = nccl.NcclComm._queue_on_side

    def queue_on_side(self):
        stream = side(self)
        self._mark = stream.record()  # the side stream reaches the collective
        return stream
    nccl.NcclComm._queue_on_side = queue_on_side
    for name in ("gather_owned", "allreduce_array"):
        def collective(*a, f=getattr(nccl.NcclComm, name), key=name, **k):
            self, wait = a[0], k.get("wait", True)  # the engine passes wait by keyword
            before = cp.cuda.get_current_stream().record() if wait else None
            result = f(*a, **k)
            if wait:
                marks.append((key, before, cp.cuda.get_current_stream().record()))
            elif getattr(self, "_open", None) is None:  # launched (a gather's group is launched with what joins it)
                marks.append((key + " (side)", self._mark, self._side.record()))
            return result
        setattr(nccl.NcclComm, name, collective)
    return True


def events() -> list:
    import ooc_graph.engine.core as c
    if not hasattr(c, "_EVENTS"):
        c._EVENTS = []
    return c._EVENTS


def take_events() -> list:
    """``[name, start ms, end ms]`` of this process's marks since the last take, from its first
    mark (waits for the device)."""
    got = list(events())
    events().clear()
    if not got:
        return []
    import cupy as cp
    got[-1][2].synchronize()
    cp.cuda.Device().synchronize()
    base = got[0][1]
    return [[k, cp.cuda.get_elapsed_time(base, a), cp.cuda.get_elapsed_time(base, b)] for k, a, b in got]


def device_summary(marks: list) -> dict:
    """Per mark: count and device ms inside; and the compute stream's span and idle time."""
    out = {}
    for k, a, b in marks:
        s = out.setdefault(k, [0, 0.0])
        s[0] += 1
        s[1] += b - a
    compute = sorted((a, b) for k, a, b in marks if "(side)" not in k)
    busy, end = 0.0, None
    for a, b in compute:
        if end is None or a > end:
            busy += b - a
            end = b
        elif b > end:
            busy += b - end
            end = b
    span = max(b for _, _, b in marks) - min(a for _, a, _ in marks)
    return {"marks": {k: [n, round(t, 3)] for k, (n, t) in out.items()}, "span_ms": round(span, 3),
            "compute_busy_ms": round(busy, 3), "compute_idle_ms": round(span - busy, 3)}


def take() -> dict:
    """This process's spans since the last take, and its pid."""
    got = list(spans())
    spans().clear()
    return {"pid": os.getpid(), "spans": got, "events": take_events() if events() else []}


def summarize(got: list, t0: float) -> list:
    """Per step: first start and last end (ms from ``t0``), calls, ms inside; by first start."""
    steps = {}
    for key, a, b in got:
        s = steps.setdefault(key, [a, b, 0, 0.0])
        s[0], s[1], s[2], s[3] = min(s[0], a), max(s[1], b), s[2] + 1, s[3] + b - a
    return sorted(([k, round((a - t0) * 1e3, 2), round((b - t0) * 1e3, 2), n, round(inside * 1e3, 2)]
                   for k, (a, b, n, inside) in steps.items()), key=lambda row: row[1])


def direct_start_ab(fn, G, n: int, **kw) -> dict:
    """``n`` warm job calls with the client's direct starts and ``n`` with only dask's tasks
    starting the ranks (the push replaced by one that sends nothing), alternating."""
    from ooc_graph.runtime import jobs
    push = jobs._launch.push
    walls = {"direct starts": [], "tasks only": []}
    try:
        for i in range(2 * n):
            label = "direct starts" if i % 2 == 0 else "tasks only"
            jobs._launch.push = push if label == "direct starts" else (lambda *args: [])
            t = time.perf_counter()
            fn(G, **kw)
            walls[label].append((time.perf_counter() - t) * 1e3)
    finally:
        jobs._launch.push = push
    return {k: {"median_ms": round(statistics.median(v), 2), "ms": [round(x, 2) for x in v]} for k, v in walls.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store", help="an existing store (e.g. made by multigpu.py --store)")
    ap.add_argument("--gpus", type=int, default=2, help="GPUs for the job (0, 1, ...)")
    ap.add_argument("--cpu", type=int, default=0, help="CPU workers instead of GPUs (checks the script)")
    ap.add_argument("--algorithm", default="pagerank")
    ap.add_argument("--warm", type=int, default=3, help="warm calls before the one traced")
    ap.add_argument("--events", action="store_true", help="also CUDA events around pulls, steps and collectives")
    ap.add_argument("--ab", type=int, default=0, metavar="N",
                    help="then N warm job calls each with and without the client's direct starts of the ranks "
                         "(runtime/launch.py), alternating")
    ap.add_argument("--out", help="folder for the spans as JSON")
    a = ap.parse_args()
    import numpy as np
    import ooc_graph
    from ooc_graph import runtime
    G = ooc_graph.open(a.store)
    fn = getattr(ooc_graph, a.algorithm)
    kw = {"source": int(G.vertices[int(np.argmax(G.out_degree))])} if a.algorithm in ("bfs", "sssp") else {}
    device = "cpu" if a.cpu else "gpu"
    if a.cpu:
        client, where = runtime.cluster.local_cpu_client(a.cpu), {"workers": a.cpu}
    else:
        client, where = runtime.cluster.local_gpu_client(list(range(a.gpus))), {"gpus": list(range(a.gpus))}
    print("steps wrapped:", install(), client.run(install), flush=True)
    if a.events and not a.cpu:
        print("device events:", install_events(), client.run(install_events), flush=True)
    record = {"command": " ".join([Path(sys.executable).name] + sys.argv), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "graph": {"vertices": G.num_vertices, "arcs": G.num_arcs}, "calls": {}}
    for label, extra in (("one process", {}), (f"{a.cpu or a.gpus} workers", where)):
        fn(G, device=device, **kw, **extra)  # cold: reads and uploads the graph
        walls = []
        for _ in range(a.warm):
            t = time.perf_counter()
            fn(G, device=device, **kw, **extra)
            walls.append(time.perf_counter() - t)
        take(), client.run(take)
        t0 = time.time()
        r = fn(G, device=device, **kw, **extra)
        wall = time.time() - t0
        processes = {"client": take()} | (client.run(take) if extra else {})
        print(f"== {a.algorithm}, {label}: traced call {wall * 1e3:.1f} ms ({r.iterations} iterations); warm calls "
              f"before it {statistics.median(walls) * 1e3:.1f} ms (median of {len(walls)})")
        call = {"wall_ms": wall * 1e3, "warm_ms": [w * 1e3 for w in walls], "processes": {}}
        for name, got in processes.items():
            rows = summarize(got["spans"], t0)
            if not rows:
                continue
            call["processes"][name] = {"pid": got["pid"], "steps": rows, "spans": [
                [k, (s - t0) * 1e3, (e - t0) * 1e3] for k, s, e in got["spans"]]}
            print(f"  {name} (pid {got['pid']}): step, first start, last end, calls, ms inside")
            for row in rows:
                print(f"    {row[0]:28s} {row[1]:9.2f} {row[2]:9.2f} {row[3]:5d} {row[4]:9.2f}")
            if got["events"]:
                call["processes"][name]["events"] = got["events"]
                print("    device:", json.dumps(device_summary(got["events"])))
                print("    device marks (first 16):", [[k, round(x, 3), round(y, 3)] for k, x, y in got["events"][:16]])
        if extra:
            print("  client timing", {k: np.round(np.multiply(v, 1e3), 2).tolist()
                                      for k, v in r.stats.get("client_timing", {}).items()})
            for rk in r.stats.get("ranks", []):
                print(f"  rank {rk['rank']} timing", {k: round(v * 1e3, 2) for k, v in rk["timing"].items()})
        record["calls"][label] = call
        sys.stdout.flush()
    if a.ab:
        record["ab"] = direct_start_ab(fn, G, a.ab, device=device, **kw, **where)
        print("direct starts A/B, warm ms:", json.dumps({k: v["median_ms"] for k, v in record["ab"].items()}))
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        kind = f"{a.cpu}cpu" if a.cpu else f"{a.gpus}gpu"
        name = f"distributed-timeline-{a.algorithm}-{Path(a.store).stem}-{kind}.json"
        (Path(a.out) / name).write_text(json.dumps(record))
    runtime.shutdown()


if __name__ == "__main__":
    main()

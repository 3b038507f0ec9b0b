"""GPU benchmarks (run on the GPU machine): bus and memory ceilings, in-memory PageRank against
cupyx CSR SpMV, streaming PageRank under a device budget, traversal times.

    python benchmarks/gpu.py --scale 22 --out results/      # writes gpu-rmat<scale>.json there
    python benchmarks/gpu.py --scale 25 --directed --no-weighted --out results/   # 537M arcs

Every figure is printed with the command that produced it; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import platform
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

import ooc_graph
from ooc_graph import config
from ooc_graph.engine import Engine


def timed(fn, repeat=10, warmup=2):
    """Median seconds of ``fn`` on the device (events around each call)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    return float(np.median(times))


def ceilings():
    nbytes = 1 << 30
    pinned = cp.cuda.alloc_pinned_memory(nbytes)
    host = np.frombuffer(pinned, dtype=np.uint8, count=nbytes)
    host[:] = 1
    dev = cp.empty(nbytes, dtype=np.uint8)
    h2d = timed(lambda: dev.set(host), repeat=5)
    pageable = np.ones(nbytes, dtype=np.uint8)
    h2d_pageable = timed(lambda: dev.set(pageable), repeat=3)
    other = cp.empty_like(dev)
    d2d = timed(lambda: other.__setitem__(slice(None), dev), repeat=5)
    return {"pinned_h2d_GBps": nbytes / h2d / 1e9, "pageable_h2d_GBps": nbytes / h2d_pageable / 1e9,
            "d2d_GBps_read_plus_write": 2 * nbytes / d2d / 1e9}


def pagerank_in_memory(G):
    """ms per pull-sum pass (the PageRank iteration's edge work) with every chunk resident: the
    engine's default (one source-blocked copy of the graph), and per chunk in CEL order (one
    atomic per destination run of a block) and re-sorted by destination; against cupyx's CSR
    SpMV on the same graph."""
    import cupyx.scipy.sparse as csp

    n = G.num_vertices
    x = cp.random.random(n)
    layouts, build_s = {}, None
    for name, flag, whole in (("source_blocked", False, None), ("chunks_cel_order", False, False),
                              ("chunks_dst_sorted", True, False)):
        config.update({"gpu.sort_resident": flag})
        e = Engine(G, device="gpu", state_arrays=5)
        e._whole = whole  # False: keep to the chunks
        e.pull_sum(x)  # loads (and caches) every chunk
        t = time.perf_counter()
        e.pull_sum(x)  # the default builds the blocked copy here
        cp.cuda.Device().synchronize()
        build = time.perf_counter() - t
        layouts[name] = timed(lambda e=e: e.pull_sum(x))
        if name == "source_blocked":
            build_s = build
            assert e._whole, "the blocked layout was not built"
        e.release()
    config.update({"gpu.sort_resident": False})
    ours = layouts["source_blocked"]
    blocked = source_blocked(G, x)
    indptr, indices, _ = G.csr("in")
    A = csp.csr_matrix((cp.ones(len(indices), dtype=cp.float64), cp.asarray(indices), cp.asarray(indptr)),
                       shape=(n, n))
    spmv = timed(lambda: A @ x)
    t = time.perf_counter()
    r = ooc_graph.pagerank(G, device="gpu", mode="graphalytics", max_iter=20)
    wall = time.perf_counter() - t
    return {"pull_sum_ms": ours * 1e3,
            "pull_sum_ms_by_layout": {k: v * 1e3 for k, v in layouts.items()},
            "source_blocked_build_and_first_pass_s": build_s,
            "experiment_source_blocked_ms": blocked,
            "cupyx_csr_spmv_ms": spmv * 1e3, "ratio": ours / spmv,
            "pagerank_20_iterations_seconds_incl_load": wall, "arcs": G.num_arcs,
            "result_iterations": r.iterations}


def pagerank_profiled(G, fraction, png):
    """A profiled PageRank (5 iterations) with the device cache at ``fraction``: per pass busy
    seconds of the read / copy / compute lanes, idle time and overlap ratios; the timeline PNG."""
    from ooc_graph.profile import plot_profile
    state = (5 * 8 + 1) * G.num_vertices
    budget = int(state + fraction * 8 * G.num_arcs) + (64 << 20)
    G.release()
    r = ooc_graph.pagerank(G, device="gpu", device_memory=budget, max_iter=5, tol=1e-300, profile=True)
    plot_profile(r, png)
    keys = ("seconds", "bytes_read", "bytes_to_device", "GBps_to_device", "busy_read", "busy_copy",
            "busy_compute", "seconds_idle", "overlap_copy_compute", "overlap_read_compute")
    return {"device_cache_fraction": fraction, "png": Path(png).name,
            "passes": [{k: p.get(k) for k in keys} for p in r.passes]}


def source_blocked(G, x):
    """Experiment (GraphCage's cache blocking, not yet in the engine): the whole graph's arcs in
    one array ordered by (source segment, destination), so the blocks the GPU runs at any moment
    gather x from one L2-sized segment; the same pull-sum kernel. ms per pass by segment size."""
    from ooc_graph.kernels import gpu as kgpu
    e = Engine(G, device="gpu", state_arrays=5)
    e._whole = False
    e.pull_sum(x)
    batches = list(e.cache._items.values())
    if len(batches) != len(e.bounds):
        return {"skipped": "the graph does not fit the device cache"}
    src = cp.concatenate([b.src for b in batches])
    dst = cp.concatenate([b.dst for b in batches])
    e.release()
    del batches
    out = {}
    y = cp.zeros(G.num_vertices)
    for bits in (20, 21, 22, 23):
        key = (src.astype(cp.int64) >> bits) << 32 | dst.astype(cp.int64)
        order = cp.argsort(key)
        del key
        b = kgpu.Batch(0, G.num_vertices, src[order], dst[order], None)
        del order
        out[f"segment_{8 << bits >> 20}MiB_float64"] = timed(lambda b=b: kgpu.pull_sum(b, x, y)) * 1e3
        del b
    return out


def pagerank_streaming(G, fraction):
    """Pull-sum passes with the device cache holding ``fraction`` of the decoded CEL."""
    n = G.num_vertices
    state = (5 * 8 + 1) * n
    decoded = 8 * G.num_arcs
    e = Engine(G, device="gpu", state_arrays=5, device_memory=int(state + fraction * decoded) + (64 << 20))
    x = cp.random.random(n)
    e.pull_sum(x)  # first pass fills the pinned host cache and the resident device region
    cp.cuda.Device().synchronize()
    seconds, moved = [], []
    for _ in range(20):  # each pass timed on its own: the median is robust to a stray stall
        before = e.stats.bytes_to_device
        t = time.perf_counter()
        e.pull_sum(x)
        cp.cuda.Device().synchronize()
        seconds.append(time.perf_counter() - t)
        moved.append(e.stats.bytes_to_device - before)
    sec, mv = float(np.median(seconds)), float(np.median(moved))
    return {"device_cache_fraction": fraction, "cached_chunks": len(e.cache), "chunks": len(e.bounds),
            "bytes_streamed_per_pass": mv, "bytes_per_arc_streamed": mv / G.num_arcs,
            "seconds_per_pass": sec, "seconds_per_pass_min_max": [min(seconds), max(seconds)],
            "effective_GBps": mv / sec / 1e9}


def warm_kernels(work):
    """Compile every kernel once on a tiny graph, so no timing below includes NVRTC."""
    T = ooc_graph.generate.rmat(work / "tiny.h5", 6, 4, weighted=True, progress=False)
    for fn in (ooc_graph.pagerank, ooc_graph.wcc):
        fn(T, device="gpu")
    for fn in (ooc_graph.bfs, ooc_graph.sssp):
        fn(T, 0, device="gpu")
    T.close()


def traversals(G, label, device_memory=None):
    """Cold: the first call on the open graph reads every chunk from the store; warm: the next call
    finds them in the GPU cache (all of them, unless ``device_memory`` makes the run stream), so it
    times the traversal alone. SSSP on an unweighted store weighs every arc 1."""
    out = {}
    src = int(np.argmax(G.out_degree))
    kw = {"device": "gpu", "device_memory": device_memory}
    for name, fn in (("bfs", lambda: ooc_graph.bfs(G, src, **kw)),
                     ("sssp", lambda: ooc_graph.sssp(G, src, **kw)),
                     ("wcc", lambda: ooc_graph.wcc(G, **kw))):
        G.release()
        cold = fn()
        r = fn()
        out[name] = {"cold_seconds": cold.seconds, "cold_bytes_read": cold.bytes_read, "seconds": r.seconds,
                     "iterations": r.iterations, "passes": r.stats["passes"], "advances": r.stats["advances"],
                     "bytes_to_device": r.stats["bytes_to_device"], "arcs_processed": r.stats["arcs_processed"],
                     "GTEPS_graph_arcs": G.num_arcs / r.seconds / 1e9}
        print(f"{label} cold {cold.seconds:.3f} s; warm {r.summary()}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--work", default="/tmp/ooc-gpu-bench")
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--road", default=None, help="a road graph (.gr.xz) to time traversals on")
    ap.add_argument("--streaming-only", action="store_true", help="ceilings and streaming PageRank only")
    ap.add_argument("--directed", action="store_true", help="directed R-MAT (scale 25: 537M arcs)")
    ap.add_argument("--no-weighted", action="store_true",
                    help="time traversals on the unweighted store instead of building a weighted one")
    ap.add_argument("--watchdog", type=int, default=0, metavar="SECONDS",
                    help="print every thread's stack every SECONDS (to diagnose a stall)")
    a = ap.parse_args()
    if a.watchdog:
        faulthandler.dump_traceback_later(a.watchdog, repeat=True)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    props = cp.cuda.runtime.getDeviceProperties(0)
    res = {"command": " ".join(["python"] + sys.argv), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
           "device": props["name"].decode(), "sms": props["multiProcessorCount"], "l2_bytes": props["l2CacheSize"],
           "cupy": cp.__version__, "host_cpus": os.cpu_count(), "python": platform.python_version()}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / (f"gpu-streaming-rmat{a.scale}.json" if a.streaming_only else f"gpu-rmat{a.scale}.json")

    def step(key, value):
        """Record a section and rewrite the results file, so a run cut short keeps what it did."""
        res[key] = value
        print(key, json.dumps(value), flush=True)
        target.write_text(json.dumps(res, indent=2) + "\n")

    warm_kernels(work)
    step("ceilings", ceilings())
    t = time.perf_counter()
    # PageRank ignores weights: time it on the unweighted CEL bytes by an unweighted copy.
    U = ooc_graph.generate.rmat(work / f"rmat{a.scale}u.h5", a.scale, a.edge_factor, seed=1, directed=a.directed,
                                progress=False)
    step("rmat", {"scale": a.scale, "edge_factor": a.edge_factor, "directed": a.directed,
                  "vertices": U.num_vertices, "arcs": U.num_arcs, "generate_seconds": time.perf_counter() - t,
                  "store_bytes": os.path.getsize(U.path)})
    if not a.streaming_only:
        step("pagerank_in_memory", pagerank_in_memory(U))
    step("pagerank_streaming", [pagerank_streaming(U, f) for f in (0.25, 0.0)])
    step("pinned_limit_fraction",
         res["pagerank_streaming"][0]["effective_GBps"] / res["ceilings"]["pinned_h2d_GBps"])
    step("pagerank_profiled", pagerank_profiled(U, 0.25, out / f"profile-pagerank-rmat{a.scale}.png"))
    step("ceilings_after", ceilings())  # the bus once more, after the streaming runs
    if a.streaming_only:
        return
    if a.no_weighted:
        G = U
    else:
        G = ooc_graph.generate.rmat(work / f"rmat{a.scale}.h5", a.scale, a.edge_factor, seed=1, weighted=True,
                                    directed=a.directed, progress=False)
    res["rmat"].update(traversal_store_weighted=G.weighted, traversal_cel_bytes_per_arc=G.cel_nbytes_per_arc())
    step("traversals_rmat", traversals(G, "rmat"))
    state = 6 * 8 * G.num_vertices
    step("traversals_rmat_streamed_25pct", traversals(G, "rmat streamed", int(state + 0.25 * 8 * G.num_arcs)))
    if a.road:
        R = ooc_graph.convert(a.road, work / "road.h5", progress=False)
        step("traversals_road", {"graph": Path(a.road).name, **traversals(R, "road")})

if __name__ == "__main__":
    main()

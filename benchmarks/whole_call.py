"""Whole calls as a user makes them, kernel-only time beside them (run on the GPU machine).

    python benchmarks/whole_call.py --scale 22 --out results/                  # the Graph500 R-MAT-22
    python benchmarks/whole_call.py --scale 25 --road NW.gr.xz --out results/

For each graph: BFS and SSSP from the highest-degree vertex, WCC and PageRank (tol 1e-6), each
timed as ``ooc_graph.bfs(G, s, device="gpu")`` with its result in host memory: the first call
(nothing cached on the device; the store in the page cache, as just written) and the median of
warm calls, and beside it the kernel-only time (the sum of the passes of a profiled call, each
synchronised; the second such call). R-MAT graphs are Graph500's (a=0.57, b=0.19, c=0.19), directed, deduplicated,
without self-loops. PageRank is timed again with ``output="cupy"`` (the result left on the GPU: the
call without its copy to the host). Also: PageRank streamed with the device budget at the vertex state plus 25% of the decoded arcs, as GB/s
of the whole call against the pinned copy ceiling measured in the same run, and the cold read
rate (bytes read from the store per second of the first call). Writes ``whole-call-<graph>.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import ooc_graph


def ceiling() -> float:
    import cupy as cp
    import cupyx
    nbytes = 1 << 30
    host = cupyx.empty_pinned(nbytes, dtype=np.uint8)
    host[:] = 1
    dev = cp.empty(nbytes, dtype=np.uint8)
    dev.set(host)
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(5):
        dev.set(host)
    cp.cuda.Device().synchronize()
    rate = 5 * nbytes / (time.perf_counter() - t) / 1e9
    del dev, host
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()
    return rate


def timed(G, algo, warm, label=None, **kw):
    fn = getattr(ooc_graph, algo)
    G.release()
    t = time.perf_counter()
    cold = fn(G, **kw)
    cold_s = time.perf_counter() - t
    times, r = [], cold
    for _ in range(warm):
        del r  # the previous result's memory is freed outside the timed call
        t = time.perf_counter()
        r = fn(G, **kw)
        times.append(time.perf_counter() - t)
    # Kernel-only from the second profiled call: the first loads what only profiling runs (a
    # BFS's per-level syncs took 15 ms of one-off kernel loading on R-MAT-22 that way).
    fn(G, profile=True, **kw)
    prof = fn(G, profile=True, **kw)
    kernel = sum(p["seconds"] for p in prof.passes)
    row = {"algorithm": label or algo, "cold_s": cold_s, "cold_bytes_read": cold.bytes_read,
           "cold_read_GBps": cold.stats["bytes_read"] / max(cold.stats["seconds_reading"], 1e-9) / 1e9,
           "warm_s": statistics.median(times), "warm_all_s": times, "kernel_only_s": kernel,
           "iterations": r.iterations, "passes": r.stats["passes"], "advances": r.stats["advances"],
           "whole_over_kernel": statistics.median(times) / kernel if kernel else None}
    print(f"  {label or algo:8s} cold {cold_s * 1e3:9.2f} ms  warm {row['warm_s'] * 1e3:9.2f} ms  kernel-only "
          f"{kernel * 1e3:9.2f} ms  ({r.iterations} it)", flush=True)
    return row


def graph_section(G, name, warm, device_memory=None):
    source = int(G.vertices[int(np.argmax(G.out_degree))])
    kw = dict(device="gpu", device_memory=device_memory)
    print(f"{name}: {G!r}", flush=True)
    rows = [timed(G, "bfs", warm, source=source, **kw), timed(G, "sssp", warm, source=source, **kw),
            timed(G, "wcc", warm, **kw), timed(G, "pagerank", warm, tol=1e-6, **kw),
            timed(G, "pagerank", warm, "pagerank, result left on the GPU", tol=1e-6, output="cupy", **kw)]
    return {"graph": name, "vertices": G.num_vertices, "arcs": G.num_arcs, "source": source, "rows": rows}


def streamed(G, pinned):
    state = (5 * 8 + 1) * G.num_vertices
    budget = int(state + 0.25 * 8 * G.num_arcs) + (64 << 20)
    G.release()
    ooc_graph.pagerank(G, device="gpu", device_memory=budget, max_iter=2, tol=1e-300)  # fill the host cache
    t = time.perf_counter()
    r = ooc_graph.pagerank(G, device="gpu", device_memory=budget, max_iter=10, tol=1e-300)
    seconds = time.perf_counter() - t
    moved = r.stats["bytes_to_device"]
    out = {"device_memory": budget, "iterations": r.iterations, "seconds": seconds, "bytes_to_device": moved,
           "bytes_per_arc_per_pass": moved / r.iterations / G.num_arcs, "whole_call_GBps": moved / seconds / 1e9,
           "pinned_GBps": pinned, "fraction_of_pinned": moved / seconds / 1e9 / pinned}
    print(f"  streamed PageRank (25% budget): {out['whole_call_GBps']:.1f} GB/s = "
          f"{100 * out['fraction_of_pinned']:.1f}% of {pinned:.1f} GB/s pinned", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, action="append", help="R-MAT scale(s) (default 22)")
    ap.add_argument("--road", action="append", default=[], help="road graph file(s), e.g. NW.gr.xz")
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--work", default="/tmp/ooc-whole-call")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    work, out = Path(a.work), Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    import cupy as cp
    record = {"command": " ".join([Path(sys.executable).name] + sys.argv), "host": platform.node(),
              "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "sections": []}
    pinned = ceiling()
    record["pinned_GBps"] = pinned
    for old in work.glob("*.h5"):  # stores of an earlier run
        old.unlink()
    for weighted in (True, False):  # compiles the kernels (CuPy's cache is empty on a fresh machine)
        warmup = ooc_graph.generate.rmat(work / f"tiny-{weighted}.h5", 10, 4, weighted=weighted, seed=1,
                                         directed=not weighted, drop_self_loops=True, progress=False)
        graph_section(warmup, "warm-up (compiles the kernels)", 1)
    for scale in a.scale or [22]:
        t = time.perf_counter()
        G = ooc_graph.generate.rmat(work / f"rmat{scale}.h5", scale, 16, seed=1, directed=True, drop_self_loops=True,
                                    progress=False)
        build = time.perf_counter() - t
        section = graph_section(G, f"rmat{scale}", a.warm)
        section["generate_and_convert_s"] = build
        section["generate_and_convert_arcs_per_s"] = G.num_arcs / build
        section["streamed_pagerank"] = streamed(G, pinned)
        record["sections"].append(section)
        (out / "whole-call.json").write_text(json.dumps(record, indent=1))
        G.close()
    for road in a.road:
        t = time.perf_counter()
        G = ooc_graph.convert(road, work / (Path(road).name + ".h5"), progress=False)
        section = graph_section(G, Path(road).name, a.warm)
        section["convert_s"] = time.perf_counter() - t
        record["sections"].append(section)
        (out / "whole-call.json").write_text(json.dumps(record, indent=1))
        G.close()


if __name__ == "__main__":
    main()

"""Frontier algorithms on the anchors' graph, as the peers were timed (run on the GPU machine).

    python3 benchmarks/frontier.py --anchor ../shared/bench/anchor_graph.py --scale 22 --scale 25 \\
        --road ../shared/data/road/NW.gr.xz --out benchmarks/results --name h200

The graph is the one Gunrock, EMOGI, Subway and GAP were timed on (``anchor_graph.py``: Graph500
R-MAT, directed, deduplicated, no self-loops, its weights 1..255 and its three sources: the hub
and two random vertices), converted into one weighted store (BFS ignores the weights). Each row
is a whole call as a user makes it, ``ooc_graph.bfs(G, s, device="gpu")`` with its result in
host memory: the first call after ``G.release()`` (``cold``: nothing on the device, the store in
the page cache) and the median of warm calls, with the kernel-only time beside it (the passes of
a profiled call, each synchronised; the second such call), and the strategy each iteration took
(``stats["strategies"]`` where the engine records them, else the kinds of its passes). Modes:
``memory`` (the default device budget: everything resident) and ``stream25`` (the device budget
is the vertex state plus 25% of the decoded arcs). A road graph, if given, runs from vertex 0.
Writes ``frontier-<scale>-<name>.json`` (and ``frontier-<road>-<name>.json``) with the command.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import ooc_graph

STATE_ARRAYS = 5  # the engine's count of float64 per-vertex arrays (algorithms/_common.STATE_ARRAYS)


def load_anchor(path: str):
    spec = importlib.util.spec_from_file_location("anchor_graph", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def anchor_store(anchor, scale: int, work: Path):
    """The anchors' graph of ``scale`` as a weighted store, and its three sources."""
    t = time.perf_counter()
    edges = anchor.generate(scale)
    src, dst = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
    n = 1 << scale
    w = anchor.weights(src, dst).astype(np.float32)
    sources = anchor.sources(src, n)
    generated = time.perf_counter() - t
    G = ooc_graph.convert((src, dst, w), work / f"anchor{scale}.h5", directed=True, num_vertices=n,
                          overwrite=True, progress=False)
    print(f"anchor R-MAT-{scale}: {G.num_vertices:,} vertices, {G.num_arcs:,} arcs, sources {sources}; generated "
          f"in {generated:.1f} s, converted in {time.perf_counter() - t - generated:.1f} s", flush=True)
    return G, sources


def stream25(G) -> int:
    """The device budget of mode ``stream25``: the vertex state and a quarter of the decoded arcs."""
    per_arc = 8 + (np.dtype(G.attrs["weight_dtype"]).itemsize if G.weighted else 0)
    return int((STATE_ARRAYS * 8 + 1) * G.num_vertices + 0.25 * per_arc * G.num_arcs)


def strategies(r) -> list:
    chosen = r.stats.get("strategies")
    return list(chosen) if chosen else [p["kind"] for p in r.stats["per_pass"]]


def timed(G, algorithm: str, source, mode: str, warm: int, **kw) -> dict:
    fn = getattr(ooc_graph, algorithm)
    args = () if source is None else (source,)
    kw = dict(kw, device="gpu", device_memory=stream25(G) if mode == "stream25" else None)
    G.release()
    t = time.perf_counter()
    r = fn(G, *args, **kw)
    cold = time.perf_counter() - t
    times = []
    for _ in range(warm):
        del r  # the previous result's memory is freed outside the timed call
        t = time.perf_counter()
        r = fn(G, *args, **kw)
        times.append(time.perf_counter() - t)
    fn(G, *args, profile=True, **kw)  # the first profiled call loads what only profiling runs
    prof = fn(G, *args, profile=True, **kw)
    row = {"algorithm": algorithm, "source": source, "mode": mode, "warm_ms": statistics.median(times) * 1e3,
           "warm_all_ms": [x * 1e3 for x in times], "cold_ms": cold * 1e3,
           "kernel_ms": sum(p["seconds"] for p in prof.passes) * 1e3, "iterations": r.iterations,
           "strategies": strategies(r), "bytes_to_device": r.stats["bytes_to_device"],
           "device_memory": kw["device_memory"]}
    print(f"  {algorithm:8s} {str(source):>8s} {mode:8s} warm {row['warm_ms']:8.2f} ms  cold {row['cold_ms']:8.2f} ms  "
          f"kernel-only {row['kernel_ms']:8.2f} ms  {r.iterations} it  {_summary(row['strategies'])}", flush=True)
    return row


def _summary(kinds: list) -> str:
    out, last, count = [], None, 0
    for k in kinds + [None]:
        if k == last:
            count += 1
            continue
        if last is not None:
            out.append(f"{last}x{count}" if count > 1 else str(last))
        last, count = k, 1
    return " ".join(out)


def section(G, sources, warm: int, modes) -> list:
    rows = []
    for mode in modes:
        for s in sources:
            rows.append(timed(G, "bfs", s, mode, warm))
            if G.weighted:
                rows.append(timed(G, "sssp", s, mode, warm))
        rows.append(timed(G, "pagerank", None, mode, warm, tol=1e-6))
        rows.append(timed(G, "wcc", None, mode, warm))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--anchor", default=str(Path(__file__).resolve().parents[2] / "shared/bench/anchor_graph.py"),
                    help="the anchors' anchor_graph.py")
    ap.add_argument("--scale", type=int, action="append", help="anchor R-MAT scale(s) (default 22)")
    ap.add_argument("--road", action="append", default=[], help="road graph(s), e.g. NW.gr.xz, from vertex 0")
    ap.add_argument("--modes", nargs="+", default=["memory", "stream25"], choices=["memory", "stream25"])
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--work", default="/tmp/ooc-frontier")
    ap.add_argument("--out", default=".")
    ap.add_argument("--name", default="gpu", help="machine name in the output files")
    a = ap.parse_args(argv)
    work, out = Path(a.work), Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    import cupy as cp
    head = {"command": " ".join(["python3", "benchmarks/frontier.py"] + list(sys.argv[1:] if argv is None else argv)),
            "host": platform.node(), "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "version": ooc_graph.__version__}
    warmup = ooc_graph.generate.rmat(work / "tiny.h5", 10, 4, weighted=True, seed=1, directed=True, overwrite=True,
                                     progress=False)
    section(warmup, [0], 1, a.modes)  # compiles the kernels (CuPy's cache may be empty)
    anchor = load_anchor(a.anchor) if a.scale or not a.road else None
    for scale in a.scale or ([] if a.road else [22]):
        G, sources = anchor_store(anchor, scale, work)
        record = dict(head, graph=f"anchor-rmat{scale}", vertices=G.num_vertices, arcs=G.num_arcs, sources=sources,
                      rows=section(G, sources, a.warm, a.modes))
        (out / f"frontier-{scale}-{a.name}.json").write_text(json.dumps(record, indent=1))
        G.close()
    for road in a.road:
        G = ooc_graph.convert(road, work / (Path(road).name + ".h5"), overwrite=True, progress=False)
        record = dict(head, graph=Path(road).name, vertices=G.num_vertices, arcs=G.num_arcs, sources=[0],
                      rows=section(G, [int(G.vertices[0])], a.warm, a.modes))
        (out / f"frontier-{Path(road).name.split('.')[0]}-{a.name}.json").write_text(json.dumps(record, indent=1))
        G.close()


if __name__ == "__main__":
    main()

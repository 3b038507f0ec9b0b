"""CPU benchmarks: bounded-memory conversion of a 100M-arc binary edge list, PageRank against scipy,
and road-graph BFS/WCC. Results go to benchmarks/results/<name>.json with the command line.

    python benchmarks/cpu.py convert100m --work /tmp/ooc-bench      # ~10 min on 2 cores
    python benchmarks/cpu.py road --graph ../shared/data/road/FLA.gr.xz
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import ooc_graph

HERE = Path(__file__).resolve().parent


def record(name, data):
    data = {"command": " ".join([Path(sys.executable).name] + sys.argv), "machine": machine(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), **data}
    out = HERE / "results" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    tmp = out.with_suffix(".json.partial")
    tmp.write_text(json.dumps(data, indent=2, default=float) + "\n")
    tmp.replace(out)
    print(json.dumps(data, indent=2, default=float))


def machine():
    return {"cpus": os.cpu_count(), "ram_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9, 1),
            "python": platform.python_version(), "numpy": np.__version__, "platform": platform.platform()}


def write_rmat_binary(path: Path, scale: int, edge_factor: int, seed: int):
    """A directed R-MAT edge list as raw int32 pairs, generated in pieces (never whole in memory)."""
    n, m = 1 << scale, edge_factor << scale
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n).astype(np.int32)
    step = 1 << 22
    with open(path, "wb") as f:
        for a in range(0, m, step):
            k = min(step, m - a)
            src = np.zeros(k, np.int64)
            dst = np.zeros(k, np.int64)
            for bit in range(scale):
                r = rng.random(k)
                src |= (r >= 0.76).astype(np.int64) << bit
                dst |= (((r >= 0.57) & (r < 0.76)) | (r >= 0.95)).astype(np.int64) << bit
            np.stack([perm[src], perm[dst]], axis=1).astype("<i4").tofile(f)
    return m


def reference_pagerank(path: Path, n: int, alpha=0.85, tol=1e-9, max_iter=1000):
    """networkx's PageRank definition by power iteration on scipy.sparse, from the raw file, to the
    same stopping rule as ooc_graph (L1 change below tol)."""
    pairs = np.fromfile(path, dtype="<i4").reshape(-1, 2)
    A = sp.csr_matrix((np.ones(len(pairs), np.float32), (pairs[:, 1], pairs[:, 0])), shape=(n, n))
    del pairs
    A.sum_duplicates()
    A.data[:] = 1.0
    A = A.astype(np.float64)
    outdeg = np.asarray(A.sum(axis=0)).ravel()
    dangling = outdeg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.maximum(outdeg, 1))
    x = np.full(n, 1.0 / n)
    for it in range(1, max_iter + 1):
        new = alpha * (A @ (x * inv) + x[dangling].sum() / n) + (1 - alpha) / n
        done = np.abs(new - x).sum() < tol
        x = new
        if done:
            break
    # SpMV timing on the same matrix, same run.
    v = x * inv
    times = []
    for _ in range(5):
        t = time.perf_counter()
        A @ v
        times.append(time.perf_counter() - t)
    return x, it, float(np.median(times))


def convert100m(a):
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    edges, store = work / "rmat.bin32", work / "rmat.h5"
    if not edges.exists():
        t = time.perf_counter()
        m = write_rmat_binary(edges, a.scale, a.edge_factor, seed=1)
        print(f"generated {m:,} edges in {time.perf_counter() - t:.1f} s", flush=True)
    m = edges.stat().st_size // 8
    cmd = ["ooc-graph", "convert", str(edges), str(store), "--memory", a.memory, "--quiet",
           "--num-vertices", str(1 << a.scale)]
    t = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        sys.exit(proc.stderr)
    rss_kb = next((int(line.split()[-1]) for line in proc.stderr.splitlines() if "Maximum resident" in line), -1)
    G = ooc_graph.open(store)
    print(proc.stdout, f"peak RSS {rss_kb / 1e6:.2f} GB", flush=True)
    res = {"input_edges": m, "num_vertices": G.num_vertices, "num_arcs": G.num_arcs,
           "convert_seconds": seconds, "convert_edges_per_second": m / seconds,
           "convert_memory_budget": a.memory, "convert_peak_rss_bytes": rss_kb * 1024}
    for label, memory in (("in_memory", None), ("budget_" + a.memory, a.memory)):
        # cold: the first call reads and prepares every chunk; steady: the next call on the open
        # graph finds them cached (as every iteration after the first does).
        cold = ooc_graph.pagerank(G, tol=1e-9, max_iter=1000, device="cpu", memory=memory)
        r = ooc_graph.pagerank(G, tol=1e-9, max_iter=1000, device="cpu", memory=memory)
        res[f"pagerank_{label}"] = {"iterations": r.iterations, "cold_seconds": cold.seconds,
                                    "cold_ms_per_iteration": 1e3 * cold.seconds / cold.iterations,
                                    "steady_ms_per_iteration": 1e3 * r.seconds / r.iterations,
                                    "cold_bytes_read": cold.bytes_read, "steady_bytes_read": r.bytes_read,
                                    "chunks": r.stats["chunks"]}
        print(label, "cold", cold.summary(), "| steady", r.summary(), flush=True)
        G.release()
    ours = r.values
    ref, it, spmv = reference_pagerank(edges, G.num_vertices)
    res["scipy_reference_iterations"] = it
    res["scipy_spmv_ms"] = 1e3 * spmv
    res["pagerank_normalised_l1"] = float(np.abs(ours - ref).sum() / np.abs(ref).sum())
    pr = res["pagerank_in_memory"]
    res["steady_ms_per_iteration_over_scipy_spmv"] = pr["steady_ms_per_iteration"] / (1e3 * spmv)
    res["cold_ms_per_iteration_over_scipy_spmv"] = pr["cold_ms_per_iteration"] / (1e3 * spmv)
    record(f"cpu-convert100m-{a.memory}", res)


def road(a):
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    store = work / (Path(a.graph).name.split(".")[0] + ".h5")
    t = time.perf_counter()
    G = ooc_graph.convert(a.graph, store, progress=False)
    res = {"graph": Path(a.graph).name, "num_vertices": G.num_vertices, "num_edges": G.num_edges,
           "convert_seconds": time.perf_counter() - t}
    for name, fn in (("bfs", lambda: ooc_graph.bfs(G, 0, device="cpu")),
                     ("wcc", lambda: ooc_graph.wcc(G, device="cpu"))):
        r = fn()
        res[name] = {"seconds": r.seconds, "iterations": r.iterations, "arcs_processed": r.stats["arcs_processed"],
                     "chunks_skipped": r.stats["chunks_skipped"], "chunks_processed": r.stats["chunks_processed"]}
        print(r.summary(), flush=True)
    record(f"cpu-road-{res['graph']}", res)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("convert100m")
    p.add_argument("--work", default="/tmp/ooc-bench")
    p.add_argument("--scale", type=int, default=23)
    p.add_argument("--edge-factor", type=int, default=12)
    p.add_argument("--memory", default="2GB")
    p = sub.add_parser("road")
    p.add_argument("--work", default="/tmp/ooc-bench")
    p.add_argument("--graph", default=str(HERE.parents[1] / "shared/data/road/FLA.gr.xz"))
    a = ap.parse_args()
    {"convert100m": convert100m, "road": road}[a.what](a)


if __name__ == "__main__":
    main()

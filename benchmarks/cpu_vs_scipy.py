"""The CPU backend against scipy.sparse.csgraph in the same run: whole calls as a user makes them
(results in host memory), warm and cold, with the compiled kernels (numba) and the NumPy ones.

    python benchmarks/cpu_vs_scipy.py --road ../shared/data/road/NY.gr.xz ../shared/data/road/FLA.gr.xz \\
        --social ../shared/data/snap/soc-slashdot0902.txt.gz ../shared/data/snap/ego-twitter.txt.gz \\
        --work /tmp/cpu-bench --reference --ooc-memory 16MB

Road graph: BFS (``csgraph.breadth_first_order``), SSSP unweighted and with seeded random
weights 1..1000 (``csgraph.dijkstra``), WCC (``csgraph.connected_components``), source 0.
Social graphs (directed): BFS, SSSP and WCC as on the road graphs (unweighted only), and PageRank
per iteration against one scipy CSR SpMV of the same graph. ``--only bfs`` (or another of
bfs, sssp, wcc, pagerank) measures only those calls. Warm figures
are medians of ``--reps`` calls on the open graph; cold ones are the first call in a new process
(store read, JIT cache loaded), and once more with an empty JIT cache (compilation included).
``--ooc-memory``: BFS, WCC and PageRank on the first road graph in that budget (no CSR: streamed
chunks), compiled against NumPy. Results go to benchmarks/results/<--name>.json (default
cpu-vs-scipy.json) with the command line, the machine and its load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

import ooc_graph
from ooc_graph import config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402  (the CPU benchmarks' recorder: command, machine, date)

CALLS = {
    "bfs": "ooc_graph.bfs(G, 0, device='cpu')",
    "sssp": "ooc_graph.sssp(G, 0, device='cpu')",
    "wcc": "ooc_graph.wcc(G, device='cpu')",
    "pagerank": "ooc_graph.pagerank(G, device='cpu', tol=1e-300, max_iter=ITER)",
}


def store_for(path: Path, work: Path, weighted=False) -> Path:
    name = path.name.split(".")[0] + ("-w" if weighted else "") + ".h5"
    out = work / name
    if not out.exists():
        if weighted:  # the road graph with seeded weights 1..1000, one per edge
            G = ooc_graph.open(store_for(path, work))
            indptr, indices, _ = G.csr("out")
            src = np.repeat(np.arange(G.num_vertices), np.diff(indptr))
            keep = src < indices  # each undirected edge once
            rng = np.random.default_rng(1)
            w = rng.integers(1, 1001, int(keep.sum())).astype(np.float64)
            ooc_graph.convert((src[keep], indices[keep].astype(np.int64), w), out, directed=False,
                              num_vertices=G.num_vertices, progress=False)
            G.close()
        else:
            ooc_graph.convert(path, out, progress=False)
    return out


def cold(store: Path, algo: str, iterations: int, jit_cache: str | None) -> float:
    """Seconds of the first call in a new process (``jit_cache``: NUMBA_CACHE_DIR, e.g. empty)."""
    code = ("import time, ooc_graph; G = ooc_graph.open(%r); t = time.perf_counter(); %s; "
            "print(time.perf_counter() - t)") % (str(store), CALLS[algo].replace("ITER", str(iterations)))
    env = dict(os.environ)
    if jit_cache is not None:
        env["NUMBA_CACHE_DIR"] = jit_cache
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(run.stdout.split()[-1])


def our_call(G, algo, iterations=None):
    return eval("lambda: " + CALLS[algo].replace("ITER", str(iterations)), {"ooc_graph": ooc_graph, "G": G})


def side_by_side(theirs, mine, reps, compiled=True):
    """Alternate scipy's call and ours ``reps`` times (the machine is shared: both see the same
    load), after one warm-up each. Returns (scipy entry, our entry, our last result)."""
    config.update({"cpu.compiled": compiled})
    try:
        theirs(), mine()
        t_s, t_o, r = [], [], None
        for _ in range(reps):
            t = time.perf_counter()
            theirs()
            t_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            r = mine()
            t_o.append(time.perf_counter() - t)
    finally:
        config.update({"cpu.compiled": True})
    ratios = [o / s for o, s in zip(t_o, t_s)]
    kernel = sum(p["seconds"] for p in r.passes)
    return ({"seconds": float(np.median(t_s)), "min_seconds": min(t_s)},
            {"warm_seconds": float(np.median(t_o)), "warm_min_seconds": min(t_o), "kernel_seconds": kernel,
             "iterations": r.iterations, "kinds": sorted({p["kind"] for p in r.passes}),
             "ratio_to_scipy_median": float(np.median(ratios)), "ratio_to_scipy_min": min(t_o) / min(t_s)}, r)


def traversals(a, path: Path, work: Path, weights=(False, True)):
    """BFS, SSSP and WCC from source 0 against csgraph (``weights``: unweighted, then SSSP on the
    graph with seeded weights)."""
    res = {}
    for weighted in weights:
        store = store_for(path, work, weighted)
        G = ooc_graph.open(store)
        n = G.num_vertices
        s = G.vertex_id(0)  # our calls name vertex 0 by its original id, csgraph by its index
        indptr, indices, w = G.csr("out")
        A = sp.csr_matrix((np.ones(indices.size) if w is None else w.astype(np.float64), indices, indptr),
                          shape=(n, n))
        scipy_calls = {"bfs": lambda: csgraph.breadth_first_order(A, s),
                       "sssp": lambda: csgraph.dijkstra(A, indices=s),
                       "wcc": lambda: csgraph.connected_components(A, directed=True, connection="weak")}
        algos = [x for x in (("sssp",) if weighted else ("bfs", "sssp", "wcc")) if x in a.only]
        for algo in algos:
            key = algo + ("_weighted" if weighted else "")
            entry = {"graph": store.name, "num_vertices": n, "num_arcs": G.num_arcs,
                     "scipy_call": scipy_calls[algo].__code__.co_names[-1]}
            entry["scipy"], entry["compiled"], r = side_by_side(scipy_calls[algo], our_call(G, algo), a.reps)
            ref = scipy_calls[algo]()
            with tempfile.TemporaryDirectory() as empty:
                entry["compiled"]["cold_seconds"] = cold(store, algo, 0, None)
                entry["compiled"]["cold_empty_jit_cache_seconds"] = cold(store, algo, 0, empty)
            if algo == "sssp":
                entry["equals_scipy"] = bool(np.array_equal(r.distance, ref))
            elif algo == "wcc":
                labels = np.full(ref[1].max() + 1, n)
                np.minimum.at(labels, ref[1], np.arange(n))
                entry["equals_scipy"] = bool(np.array_equal(r.labels, labels[ref[1]]))
            else:  # the same vertices reached (csgraph's BFS returns no depths), at csgraph's hop counts
                hops = csgraph.shortest_path(A, indices=s, unweighted=True)
                entry["equals_scipy"] = bool(np.array_equal(np.flatnonzero(r.reachable), np.sort(ref[0])) and
                                             np.array_equal(r.depth[r.reachable], hops[np.isfinite(hops)]))
            if a.reference:
                _, entry["numpy"], rn = side_by_side(scipy_calls[algo], our_call(G, algo), 1, compiled=False)
                entry["equals_numpy"] = all(np.array_equal(x, rn.arrays()[k]) for k, x in r.arrays().items())
            res[key] = entry
            print(key, json.dumps(entry), flush=True)
        G.close()
    return res


def pagerank(a, path: Path, work: Path):
    import numba
    store = store_for(path, work)
    G = ooc_graph.open(store)
    n = G.num_vertices
    indptr, indices, _ = G.csr("in")
    A = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n))
    x = np.random.default_rng(0).random(n)
    it = a.iterations
    res = {"graph": store.name, "num_vertices": n, "num_arcs": G.num_arcs, "iterations_per_call": it}

    def spmvs():  # as many SpMVs as our call has iterations: per-iteration figures compare directly
        for _ in range(it):
            A @ x

    threads = numba.get_num_threads()
    for t in sorted({1, threads}):
        numba.set_num_threads(t)
        config.update({"cpu.parallel_min_threads": 1 if t > 1 else 4})  # force the parallel pull-sum when timing 2+ threads
        s, entry, r = side_by_side(spmvs, our_call(G, "pagerank", it), a.reps)
        res["scipy_spmv_ms"] = 1e3 * s["seconds"] / it
        entry["ms_per_iteration"] = 1e3 * entry["warm_seconds"] / r.iterations
        entry["scipy_spmv_ms_same_run"] = 1e3 * s["seconds"] / it
        res[f"compiled_{t}_threads"] = entry
    numba.set_num_threads(threads)
    config.update({"cpu.parallel_min_threads": 4})
    with tempfile.TemporaryDirectory() as empty:
        res["cold_seconds"] = cold(store, "pagerank", it, None)
        res["cold_empty_jit_cache_seconds"] = cold(store, "pagerank", it, empty)
    if a.reference:
        s, entry, _ = side_by_side(spmvs, our_call(G, "pagerank", it), a.reps, compiled=False)
        entry["ms_per_iteration"] = 1e3 * entry["warm_seconds"] / it
        entry["scipy_spmv_ms_same_run"] = 1e3 * s["seconds"] / it
        res["numpy"] = entry
    G.close()
    print("pagerank", json.dumps(res), flush=True)
    return res


def out_of_core(a, path: Path, work: Path):
    """BFS, WCC and 10 PageRank iterations in a budget too small for the CSR (the per-batch
    kernels over streamed chunks), compiled against NumPy, warm (second call)."""
    import resource
    G = ooc_graph.open(store_for(path, work))
    res, results = {"graph": path.name, "memory": a.ooc_memory}, {}
    calls = {"bfs": lambda: ooc_graph.bfs(G, 0, device="cpu", memory=a.ooc_memory),
             "wcc": lambda: ooc_graph.wcc(G, device="cpu", memory=a.ooc_memory),
             "pagerank": lambda: ooc_graph.pagerank(G, device="cpu", memory=a.ooc_memory, tol=1e-300, max_iter=10)}
    for label, compiled in (("compiled", True), ("numpy", False)):
        config.update({"cpu.compiled": compiled})
        try:
            for algo, fn in calls.items():
                G.release()
                fn()
                t = time.perf_counter()
                r = results[label, algo] = fn()
                res[f"{algo}_{label}"] = {"seconds": time.perf_counter() - t, "chunks": r.stats["chunks"],
                                          "passes": r.stats["passes"], "traversals": r.stats["traversals"],
                                          "bytes_read": r.bytes_read}
        finally:
            config.update({"cpu.compiled": True})
    for algo in calls:
        a_, b_ = results["compiled", algo], results["numpy", algo]
        res[f"{algo}_max_abs_difference"] = max(float(np.max(np.abs(x - b_.arrays()[k]), initial=0))
                                                for k, x in a_.arrays().items())
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    G.close()
    print("out of core", json.dumps(res), flush=True)
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--road", type=Path, nargs="*", default=[])
    p.add_argument("--social", type=Path, nargs="*", default=[])
    p.add_argument("--only", nargs="+", default=list(CALLS), choices=list(CALLS), help="the calls to measure")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "cpu-bench")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--iterations", type=int, default=20, help="PageRank iterations per call")
    p.add_argument("--reference", action="store_true", help="also time the NumPy kernels (slow: ~10 s a call)")
    p.add_argument("--ooc-memory", help="also run the first road graph in this budget (e.g. 16MB), out of core")
    p.add_argument("--name", default="cpu-vs-scipy")
    a = p.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    import numba
    import scipy
    res = {"numba": numba.__version__, "numba_threads": numba.get_num_threads(), "scipy": scipy.__version__,
           "machine_load_before": os.getloadavg()}
    for path in a.road:
        res["road_" + path.name.split(".")[0]] = traversals(a, path, a.work)
    if a.ooc_memory and a.road:
        res["out_of_core_" + a.road[0].name.split(".")[0]] = out_of_core(a, a.road[0], a.work)
    for path in a.social:
        res["social_" + path.name.split(".")[0]] = traversals(a, path, a.work, weights=(False,))
        if "pagerank" in a.only:
            res["pagerank_" + path.name.split(".")[0]] = pagerank(a, path, a.work)
    res["machine_load_after"] = os.getloadavg()
    record(a.name, res)


if __name__ == "__main__":
    main()

"""The CPU backend against GAP's figures and NetworKit (issue 29): BFS and SSSP (on the arc weights)
from three sources, WCC and PageRank to 1e-6, as whole calls (``device="cpu"``), warm and a fresh
process's first call, at each thread count asked for, with NetworKit (parallel C++; its BFS and
Dijkstra run on one thread) on the same graph in the same run.

    python benchmarks/cpu_frontier.py --work /tmp/ooc-bench --scale 22 \\
        --road ../shared/data/road/NW.gr.xz --threads 1,2 --warm 5 --name 2core

    python3 benchmarks/cpu_frontier.py --anchor anchor_graph.py --scale 22 --threads 16,2   # GPU host

Graphs: ``ooc_graph.generate.rmat(path, SCALE, 16, seed=1, directed=True, weighted=True)``
(Graph500 R-MAT), or with ``--anchor`` the anchors' exact graph and weights
(``../shared/bench/anchor_graph.py``, drawn with CuPy: a GPU machine), with sources its hub and two random vertices with out-arcs (numpy
default_rng(7), as the anchors' rule), and a road graph from vertex 0 (unweighted: its SSSP is a
BFS with parents). Each measurement runs in a process of its own with ``NUMBA_NUM_THREADS`` (and
NetworKit's threads) set to the count: warm figures are the minimum and median of ``--warm``
calls after one call (``kernel_s``: the passes of the last, the compiled kernels' share); ``first`` is the first call of a fresh process (import and open not
counted; reported beside it) and ``h5py_read`` the seconds a plain h5py read of the datasets
that call needs takes in a fresh process. ``--baseline DIR`` (a checkout of an earlier commit
whose ``ooc_graph/kernels`` links to its ``kernels``) runs the same warm calls on that code;
``--rounds R`` times them in R fresh processes of each checkout taking turns (a host's speed
drifts by more than most changes: compare only within one run).
The bytecode of the packages a first call imports is written first, as ``pip install`` writes it
(``installed.py``). Writes ``results/cpu-frontier-<name>.json`` with the command, the machine and
the load average.
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

from installed import write_bytecode

HERE = Path(__file__).resolve().parent
ALGORITHMS = ("bfs", "sssp", "wcc", "pagerank")
PAGERANK = {"tol": 1e-6, "max_iter": 100}
WHOLE_PULL = os.environ.get("CPU_FRONTIER_WHOLE_PULL") == "1"  # also time "pagerank whole_pull"


# -- in a measuring process ------------------------------------------------------------------
def _sources(G):
    import numpy as np
    if not G.directed and not G.weighted:  # a road graph: from vertex 0
        return [0]
    deg = G.out_degree
    rng = np.random.default_rng(7)
    return [int(np.argmax(deg)), *(int(x) for x in rng.choice(np.flatnonzero(deg > 0), 2, replace=False))]


def _calls(G, sources):
    import ooc_graph
    calls = [(f"bfs {s}", lambda s=s: ooc_graph.bfs(G, s, device="cpu")) for s in sources]
    calls += [(f"sssp {s}", lambda s=s: ooc_graph.sssp(G, s, device="cpu")) for s in sources]
    calls.append(("wcc", lambda: ooc_graph.wcc(G, device="cpu")))
    calls.append(("pagerank", lambda: ooc_graph.pagerank(G, device="cpu", **PAGERANK)))
    if WHOLE_PULL:
        calls.append(("pagerank whole_pull", lambda: _whole_pull(G)))
    return calls


def _whole_pull(G):
    """PageRank with config cpu.whole_pull (the pull over the in-CSR in place of the cached chunks)."""
    import ooc_graph
    with ooc_graph.config.set({"cpu.whole_pull": True}):
        return ooc_graph.pagerank(G, device="cpu", **PAGERANK)


def measure_warm(path: str, warm: int) -> dict:
    import numpy as np
    import ooc_graph
    G = ooc_graph.open(path)
    out = {"code": str(Path(ooc_graph.__file__).resolve())}  # which checkout ran (checked by the driver)
    for name, call in _calls(G, _sources(G)):
        r = call()
        times = []
        for _ in range(warm):
            t = time.perf_counter()
            r = call()
            times.append(time.perf_counter() - t)
        entry = {"min_s": min(times), "median_s": float(np.median(times)), "times_s": times,
                 "kernel_s": sum(float(p["seconds"]) for p in r.stats["per_pass"]),  # the last call's passes
                 "iterations": int(r.iterations), "arcs_processed": int(r.stats["arcs_processed"])}
        if name.startswith("bfs"):
            entry["reached"] = int((r.depth != ooc_graph.UNREACHABLE).sum())
            entry["max_depth"] = int(r.depth[r.depth != ooc_graph.UNREACHABLE].max())
        elif name.startswith("sssp"):
            finite = np.isfinite(r.distance)
            entry["reached"], entry["distance_sum"] = int(finite.sum()), float(r.distance[finite].sum())
        elif name == "wcc":
            entry["components"] = int(np.unique(r.labels).size)
        else:
            entry["per_iteration_ms"] = 1e3 * entry["min_s"] / max(r.iterations, 1)
            if name == "pagerank":
                np.save(Path(path).with_suffix(".pagerank.npy"), r.values)
        out[name] = entry
        print(name, entry["min_s"], flush=True, file=sys.stderr)
    return out


def measure_first(path: str, index: int) -> dict:
    t = time.perf_counter()
    import ooc_graph
    imported = time.perf_counter() - t
    G = ooc_graph.open(path)
    name, call = _calls(G, _sources(G))[index]
    t = time.perf_counter()
    r = call()
    return {"call": name, "first_s": time.perf_counter() - t, "import_s": imported, "bytes_read": int(r.bytes_read)}


# every call a fresh process makes first, in one process: what write_bytecode compiles
FIRST_CALLS = """import ooc_graph
G = ooc_graph.open(sys.argv[1])
s = int(G.out_degree.argmax())
ooc_graph.bfs(G, s, device="cpu"), ooc_graph.sssp(G, s, device="cpu"), ooc_graph.wcc(G, device="cpu")
ooc_graph.pagerank(G, device="cpu")"""


# the datasets a call reads (a directed graph's BFS and WCC read both sides; weights only for SSSP)
NEEDS = {"bfs": ("out", "in"), "sssp": ("out",), "wcc": ("out", "in"), "pagerank": ("in",)}


def measure_h5py(path: str, algorithm: str) -> dict:
    import h5py
    t = time.perf_counter()
    nbytes = 0
    with h5py.File(path, "r") as f:
        directed = bool(f.attrs["directed"])
        for side in NEEDS[algorithm] if directed else ("out",):
            parts = ["indptr", "indices"] + (["weights"] if algorithm == "sssp" and f.attrs["weighted"] else [])
            for part in parts:
                nbytes += f[f"csr/{side}/{part}"][...].nbytes
    return {"h5py_read_s": time.perf_counter() - t, "bytes": nbytes}


def measure_networkit(path: str, warm: int, threads: int) -> dict:
    import networkit as nk
    import numpy as np
    import ooc_graph
    nk.setNumberOfThreads(threads)
    G = ooc_graph.open(path)
    sources = _sources(G)
    indptr, indices, w = G.csr("out")
    n = G.num_vertices
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)).astype(np.uint64)
    dst = indices.astype(np.uint64)
    t = time.perf_counter()
    if G.directed:
        data = (w if w is not None else np.ones(dst.size)).astype(np.float64)
        g = nk.graph.GraphFromCoo((data, (src, dst)), n, weighted=w is not None, directed=True)
    else:  # an undirected store's CSR holds both directions: each edge once
        keep = src <= dst
        data = (w[keep] if w is not None else np.ones(int(keep.sum()))).astype(np.float64)
        g = nk.graph.GraphFromCoo((data, (src[keep], dst[keep])), n, weighted=w is not None, directed=False)
    built = time.perf_counter() - t
    del src, dst

    def timed(make):
        make().run()
        times = []
        for _ in range(warm):
            algo = make()
            t = time.perf_counter()
            algo.run()
            times.append(time.perf_counter() - t)
        return algo, {"min_s": min(times), "median_s": float(np.median(times))}
    out = {"build_s": built, "threads": threads}
    for s in sources:
        algo, out[f"bfs {s}"] = timed(lambda s=s: nk.distance.BFS(g, s, storePaths=False))
        d = np.asarray(algo.getDistances())
        out[f"bfs {s}"]["reached"] = int((d < 1e300).sum())
    for s in sources:
        algo, out[f"sssp {s}"] = timed(lambda s=s: nk.distance.Dijkstra(g, s, storePaths=False))
        d = np.asarray(algo.getDistances())
        finite = d < 1e300
        out[f"sssp {s}"].update(reached=int(finite.sum()), distance_sum=float(d[finite].sum()))
    make_cc = (lambda: nk.components.WeaklyConnectedComponents(g)) if G.directed else \
        (lambda: nk.components.ConnectedComponents(g))
    algo, out["wcc"] = timed(make_cc)
    out["wcc"]["components"] = int(algo.numberOfComponents())

    def make_pr():
        pr = nk.centrality.PageRank(g, damp=0.85, tol=PAGERANK["tol"],
                                    distributeSinks=nk.centrality.SinkHandling.DistributeSinks)
        pr.norm = nk.centrality.Norm.L1_NORM
        pr.maxIterations = PAGERANK["max_iter"]
        return pr
    algo, out["pagerank"] = timed(make_pr)
    out["pagerank"]["iterations"] = int(algo.numberOfIterations())
    out["pagerank"]["per_iteration_ms"] = 1e3 * out["pagerank"]["min_s"] / max(algo.numberOfIterations(), 1)
    ours = Path(path).with_suffix(".pagerank.npy")
    if ours.exists():
        x = np.asarray(algo.scores())
        out["pagerank"]["l1_to_ooc_graph"] = float(np.abs(x / x.sum() - np.load(ours)).sum())
    return out


# -- the driver -------------------------------------------------------------------------------
def _child(args: list, threads: int, baseline: str | None = None) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    cwd = None
    if baseline:
        env["PYTHONPATH"] = str(Path(baseline).resolve())  # the child runs in /: a relative path found nothing
        cwd = "/"  # not the working tree (its ooc_graph would come first)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", *args], env=env, cwd=cwd,
                          capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"child {args} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    code = result.pop("code", None)
    if baseline and code is not None and not Path(code).is_relative_to(Path(baseline).resolve()):
        sys.exit(f"--baseline {baseline}: the child imported ooc_graph from {code}, not from there")
    return result


def _merged(children: list) -> dict:
    """The warm calls of several fresh processes as one: every call's times together (its min and
    median over them), each process's median beside them, the rest as the last process saw it."""
    if len(children) == 1:
        return children[0]
    import numpy as np
    out = {}
    for name, last in children[-1].items():
        times = [t for child in children for t in child[name]["times_s"]]
        out[name] = dict(last, min_s=min(times), median_s=float(np.median(times)), times_s=times,
                         process_medians_s=[child[name]["median_s"] for child in children])
    return out


def stores(a) -> list:
    import ooc_graph
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    out = []
    if a.anchor:  # the anchors' exact graph, weights and sources (drawn with CuPy: a GPU machine)
        path = work / f"anchor{a.scale}.h5"
        if not path.exists():
            sys.path.insert(0, str(HERE))
            from frontier import anchor_store, load_anchor
            anchor_store(load_anchor(a.anchor), a.scale, work)[0].close()
        out.append((f"anchor{a.scale}", path))
    elif a.scale:
        path = work / f"rmat{a.scale}.h5"
        if not path.exists():
            ooc_graph.generate.rmat(path, a.scale, 16, seed=1, directed=True, weighted=True, progress=False)
        out.append((f"rmat{a.scale}", path))
    if a.road:
        path = work / (Path(a.road).name.split(".")[0] + ".h5")
        if not path.exists():
            ooc_graph.convert(a.road, path, progress=False)
        out.append((Path(a.road).name.split(".")[0], path))
    return out


def machine() -> dict:
    import numpy as np
    return {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
            "ram_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9, 1),
            "cpu_model": next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                               if line.startswith("model name")), "?"),
            "python": platform.python_version(), "numpy": np.__version__, "platform": platform.platform()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default="/tmp/ooc-bench")
    p.add_argument("--scale", type=int, default=22)
    p.add_argument("--anchor", help="the anchors' anchor_graph.py: its R-MAT of --scale instead of "
                   "ooc_graph.generate.rmat's (needs CuPy and a GPU to draw)")
    p.add_argument("--road")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--warm", type=int, default=5)
    p.add_argument("--name", default="cpu")
    p.add_argument("--baseline", help="a checkout of an earlier commit to time the same warm calls on")
    p.add_argument("--rounds", type=int, default=1,
                   help="fresh processes timing the warm calls (each checkout's, taking turns with --baseline)")
    p.add_argument("--no-first", action="store_true", help="skip the fresh-process first calls")
    p.add_argument("--no-peer", action="store_true", help="skip NetworKit")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        kind, path, *rest = a.child
        if kind == "warm":
            result = measure_warm(path, int(rest[0]))
        elif kind == "first":
            result = measure_first(path, int(rest[0]))
        elif kind == "h5py":
            result = measure_h5py(path, rest[0])
        else:
            result = measure_networkit(path, int(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return
    record = {"command": " ".join(["python"] + [Path(sys.argv[0]).as_posix()] + sys.argv[1:]), "machine": machine(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load_average_before": os.getloadavg(), "graphs": {}}
    for label, path in stores(a):
        if "bytecode" not in record:  # the packages a first call imports, compiled as pip install would
            record["bytecode"] = write_bytecode(FIRST_CALLS, path, extra=[a.baseline] if a.baseline else [])
        import ooc_graph
        G = ooc_graph.open(path)
        entry = record["graphs"][label] = {"vertices": G.num_vertices, "arcs": G.num_arcs, "directed": G.directed,
                                           "weighted": G.weighted, "sources": _sources(G), "runs": {}}
        G.close()
        for threads in [int(t) for t in a.threads.split(",")]:
            run = entry["runs"][str(threads)] = {}
            print(f"{label}: {threads} thread(s)", flush=True)
            ours, theirs = [], []
            for r in range(a.rounds):  # fresh processes of the two checkouts taking turns
                turns = [(ours, None), (theirs, a.baseline)] if a.baseline else [(ours, None)]
                for into, tree in turns[::-1] if r % 2 else turns:
                    into.append(_child(["warm", str(path), str(a.warm)], threads, tree))
            run["ooc_graph"] = _merged(ours)
            if a.baseline:
                run["baseline"] = _merged(theirs)
            if not a.no_peer:
                run["networkit"] = _child(["networkit", str(path), str(a.warm), str(threads)], threads)
            if not a.no_first:
                calls = list(run["ooc_graph"])
                run["first"] = {c: _child(["first", str(path), str(i)], threads) for i, c in enumerate(calls)}
                run["h5py_read"] = {alg: _child(["h5py", str(path), alg], threads) for alg in ALGORITHMS}
            print(json.dumps(run, indent=1, default=float)[:4000], flush=True)
    record["load_average_after"] = os.getloadavg()
    out = HERE / "results" / f"cpu-frontier-{a.name}.json"
    tmp = out.with_suffix(".json.partial")
    tmp.write_text(json.dumps(record, indent=2, default=float) + "\n")
    tmp.replace(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

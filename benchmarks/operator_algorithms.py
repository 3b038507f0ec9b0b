"""The algorithms written on Engine.edge_map as whole calls, against networkx and scipy on the CPU.

    python benchmarks/operator_algorithms.py --scale 22 --road ../shared/data/road/NW.gr.xz --out results/
    python benchmarks/operator_algorithms.py --scale 12 --device cpu --warm 1      # a quick look
    python benchmarks/operator_algorithms.py --no-rmat --road ../shared/data/road/NW.gr.xz \
        --only betweenness_centrality --k 4 --out results/                       # NW's betweenness rows

For each graph (a Graph500 R-MAT, directed, deduplicated, without self-loops; and road graphs,
undirected), each algorithm is timed as a user calls it, ``ooc_graph.hits(G, device=...)`` with the
result in host memory: the first call (nothing cached; the store in the page cache, as just
written) and the median of ``--warm`` warm calls. Beside it, on the CPU: networkx on the same graph
(the graph built from the store's arcs, not timed) where it has at most ``--nx-max-arcs`` arcs,
and scipy where it has the algorithm (strongly connected components). Betweenness uses ``--k``
sampled sources (seed 1) everywhere. Writes ``operator-algorithms.json`` and prints a Markdown
table.
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

# (name, our keywords, networkx call or None); Katz's alpha is set per graph (katz_alpha).
ALGORITHMS = [
    ("pagerank", {"weight": "weight"}, lambda nx, H, k: nx.pagerank(H, weight="weight")),
    ("hits", {}, lambda nx, H, k: nx.hits(H)),
    ("katz_centrality", {"alpha": None, "max_iter": 10_000},
     lambda nx, H, k: nx.katz_centrality(H, alpha=H.graph["katz_alpha"], max_iter=10_000)),
    ("eigenvector_centrality", {"max_iter": 1000}, lambda nx, H, k: nx.eigenvector_centrality(H, max_iter=1000)),
    ("cdlp", {"max_iter": 10}, None),  # networkx has no LDBC CDLP
    ("core_number", {}, lambda nx, H, k: nx.core_number(H)),
    ("scc", {}, lambda nx, H, k: list(nx.strongly_connected_components(H) if H.is_directed()
                                      else nx.connected_components(H))),
    ("betweenness_centrality", {"seed": 1}, lambda nx, H, k: nx.betweenness_centrality(H, k=k, seed=1)),
    ("betweenness_centrality", {"seed": 1, "weight": "weight"},
     lambda nx, H, k: nx.betweenness_centrality(H, k=k, seed=1, weight="weight")),
]


def katz_alpha(G) -> float:
    """0.9 / the smaller of the largest in- and out-degree: a bound on the adjacency matrix's
    spectral radius, so the Katz series converges (a fixed alpha such as 0.005 exceeds
    1/lambda_max on R-MAT-22 and runs into max_iter)."""
    top = min(int(np.max(G.out_degree, initial=0)), int(np.max(G.in_degree, initial=0)))
    return 0.9 / max(top, 1)


def networkx_graph(G):
    """The store's arcs as a networkx graph (self-loops dropped: core_number refuses them)."""
    import networkx as nx
    indptr, indices, w = G.csr("out")
    src = np.repeat(np.arange(G.num_vertices), np.diff(np.asarray(indptr, np.int64)))
    H = nx.DiGraph() if G.directed else nx.Graph()
    H.add_nodes_from(range(G.num_vertices))
    weights = np.ones(len(indices)) if w is None else np.asarray(w, np.float64)
    H.add_weighted_edges_from((u, v, x) for u, v, x in zip(src.tolist(), np.asarray(indices).tolist(),
                                                             weights.tolist()) if u != v)
    return H


def scipy_scc(G):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components
    indptr, indices, _ = G.csr("out")
    A = sp.csr_matrix((np.ones(len(indices), np.int8), np.asarray(indices), np.asarray(indptr)),
                      shape=(G.num_vertices, G.num_vertices))
    t = time.perf_counter()
    connected_components(A, directed=G.directed, connection="strong")
    return time.perf_counter() - t


def timed(G, name, kw, warm, device):
    fn = getattr(ooc_graph, name)
    G.release()
    t = time.perf_counter()
    fn(G, device=device, **kw)
    cold = time.perf_counter() - t
    times = []
    for _ in range(warm):
        t = time.perf_counter()
        r = fn(G, device=device, **kw)
        times.append(time.perf_counter() - t)
    name += " (weighted)" if kw.get("weight") and name == "betweenness_centrality" else ""
    return {"algorithm": name, "cold_s": cold, "warm_s": statistics.median(times), "warm_all_s": times,
            "iterations": r.iterations, "passes": r.stats["passes"], "converged": r.converged, "device": r.device}


def reference_seconds(reference, H, k, timeout):
    """Seconds networkx takes, run in a forked child so that a call past ``timeout`` seconds can
    be stopped: ``(seconds or None, error or None)``."""
    import multiprocessing as mp
    ctx = mp.get_context("fork")  # the child inherits H; it never touches the GPU
    queue = ctx.Queue()

    def child():
        import networkx as nx
        t = time.perf_counter()
        try:
            reference(nx, H, k)
            queue.put((time.perf_counter() - t, None))
        except nx.NetworkXException as err:  # e.g. a power iteration that does not converge
            queue.put((None, str(err)))
    proc = ctx.Process(target=child)
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None, f"stopped after {timeout:.0f} s"
    return queue.get() if not queue.empty() else (None, f"exit code {proc.exitcode}")


def section(G, name, a):
    print(f"{name}: {G!r}", flush=True)
    H = None
    alpha = katz_alpha(G)
    if a.nx_max_arcs and G.num_arcs <= a.nx_max_arcs:
        H = networkx_graph(G)
        H.graph["katz_alpha"] = alpha
    rows = []
    for algo, kw, reference in ALGORITHMS:
        if a.only and algo not in a.only:
            continue
        kw = dict(kw, k=a.k) if algo == "betweenness_centrality" else kw
        kw = dict(kw, alpha=alpha) if "alpha" in kw and kw["alpha"] is None else kw
        row = timed(G, algo, kw, a.warm, a.device)
        if "alpha" in kw:
            row["alpha"] = kw["alpha"]
        if H is not None and reference is not None:
            row["networkx_s"], error = reference_seconds(reference, H, a.k, a.nx_timeout)
            if error:
                row["networkx_error"] = error
        if algo == "scc":
            row["scipy_s"] = scipy_scc(G)
        rows.append(row)
        extra = "".join(f"  {k} {row[k]:.3f} s" for k in ("networkx_s", "scipy_s") if row.get(k) is not None)
        print(f"  {algo:24s} cold {row['cold_s']:8.3f} s  warm {row['warm_s']:8.3f} s  ({row['iterations']} it, "
              f"{row['passes']} passes){extra}", flush=True)
    return {"graph": name, "vertices": G.num_vertices, "arcs": G.num_arcs, "directed": G.directed, "rows": rows}


def table(record) -> str:
    lines = ["| graph | algorithm | device | cold s | warm s | iterations | networkx s | scipy s |",
             "|---|---|---|---|---|---|---|---|"]
    for s in record["sections"]:
        for r in s["rows"]:
            ref = {k: ("—" if r.get(k) is None else f"{r[k]:.3f}") for k in ("networkx_s", "scipy_s")}
            if r.get("networkx_error"):
                ref["networkx_s"] = r["networkx_error"]
            lines.append(f"| {s['graph']} | {r['algorithm']} | {r['device']} | {r['cold_s']:.3f} | {r['warm_s']:.3f} "
                         f"| {r['iterations']} | {ref['networkx_s']} | {ref['scipy_s']} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, action="append", help="R-MAT scale(s) (default 22)")
    ap.add_argument("--no-rmat", action="store_true", help="no R-MAT section (road graphs only)")
    ap.add_argument("--road", action="append", default=[], help="road graph file(s), e.g. NW.gr.xz")
    ap.add_argument("--only", action="append", default=[], choices=sorted({name for name, _, _ in ALGORITHMS}),
                    help="run only this algorithm (repeatable; default: all)")
    ap.add_argument("--device", default="gpu", choices=("gpu", "cpu"), help="where ooc_graph computes")
    ap.add_argument("--warm", type=int, default=3, help="warm calls per algorithm (the median is reported)")
    ap.add_argument("--k", type=int, default=16, help="betweenness: sampled sources")
    ap.add_argument("--nx-max-arcs", type=int, default=5_000_000,
                    help="run networkx only on graphs with at most this many arcs (0: never)")
    ap.add_argument("--nx-timeout", type=float, default=120.0, help="seconds before a networkx call is stopped")
    ap.add_argument("--work", default="/tmp/ooc-operator-algorithms", help="where the stores are written")
    ap.add_argument("--out", default=".", help="folder for operator-algorithms.json")
    a = ap.parse_args()
    work, out = Path(a.work), Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    device = "cpu"
    if a.device == "gpu":
        import cupy as cp
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    record = {"command": " ".join([Path(sys.executable).name] + sys.argv), "host": platform.node(), "device": device,
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "sections": []}
    for old in work.glob("*.h5"):  # stores of an earlier run
        old.unlink()
    if a.device == "gpu":  # compile the kernels once, outside the timings
        tiny = ooc_graph.generate.rmat(work / "tiny.h5", 6, 4, weighted=True, directed=True, progress=False)
        for algo, kw, _ in ALGORITHMS:  # (all of them: one module holds every kernel)
            kw = dict(kw, k=2) if algo.startswith("betw") else dict(kw, alpha=katz_alpha(tiny)) if "alpha" in kw else kw
            getattr(ooc_graph, algo)(tiny, device="gpu", **kw)
        tiny.close()
    graphs = [(f"rmat{s}", lambda s=s: ooc_graph.generate.rmat(work / f"rmat{s}.h5", s, 16, seed=1, directed=True,
                                                               weighted=True, drop_self_loops=True, progress=False))
              for s in ([] if a.no_rmat else a.scale or [22])]
    graphs += [(Path(r).name, lambda r=r: ooc_graph.convert(r, work / (Path(r).name + ".h5"), progress=False))
               for r in a.road]
    for name, make in graphs:
        G = make()
        record["sections"].append(section(G, name, a))
        (out / "operator-algorithms.json").write_text(json.dumps(record, indent=1))
        G.close()
    print(table(record))


if __name__ == "__main__":
    main()

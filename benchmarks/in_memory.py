"""The in-memory algorithms as whole calls, against networkx on the CPU where it finishes.

    python benchmarks/in_memory.py --scale 22 --out results/                 # Graph500 R-MAT-22
    python benchmarks/in_memory.py --road ../shared/data/road/USA-road-d.NY.gr.xz --out results/
    python benchmarks/in_memory.py --scale 12 --devices cpu --networkx       # small, with networkx

For each graph (made undirected: triangles, LCC and Louvain are defined there): triangle_count,
lcc and louvain (seed 1), each a whole call with its result in host memory on every device asked
for (the first call and the median of ``--warm`` more); with ``--networkx`` also
``nx.triangles``, ``nx.clustering`` and ``nx.community.louvain_communities`` on the same graph,
with networkx's modularity of both partitions. Writes ``in-memory-<graph>.json`` and prints a
Markdown table.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import ooc_graph

ALGORITHMS = ("triangle_count", "lcc", "louvain")


def whole_calls(G, algo, device, warm):
    fn = getattr(ooc_graph, algo)
    kw = {"device": device} | ({"seed": 1} if algo == "louvain" else {})
    t = time.perf_counter()
    r = fn(G, **kw)
    first = time.perf_counter() - t
    times = []
    for _ in range(warm):
        t = time.perf_counter()
        r = fn(G, **kw)
        times.append(time.perf_counter() - t)
    return r, first, statistics.median(times) if times else first


def with_networkx(G, results):
    import networkx as nx
    from networkx.algorithms.community import louvain_communities, modularity
    indptr, indices, _ = G.csr("out")
    H = nx.Graph()
    H.add_nodes_from(range(G.num_vertices))
    H.add_edges_from(zip(np.repeat(np.arange(G.num_vertices), np.diff(indptr)).tolist(), indices.tolist()))
    H.remove_edges_from(nx.selfloop_edges(H))
    out = {}
    for algo, call in (("triangle_count", nx.triangles), ("lcc", nx.clustering),
                       ("louvain", lambda H: louvain_communities(H, seed=1))):
        t = time.perf_counter()
        value = call(H)
        out[algo] = {"seconds": time.perf_counter() - t}
        if algo == "louvain":
            out[algo]["modularity"] = modularity(H, value)
            out[algo]["ours_modularity"] = modularity(H, results["louvain"].communities())
        elif algo == "triangle_count":
            out[algo]["same"] = bool(np.array_equal(results[algo].counts, [value[v] for v in range(len(H))]))
        else:
            out[algo]["same"] = bool(np.allclose(results[algo].values, [value[v] for v in range(len(H))]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, help="R-MAT scale (2**scale vertices, edge factor 16)")
    ap.add_argument("--road", help="a DIMACS road graph (.gr, .gr.xz)")
    ap.add_argument("--devices", default="gpu,cpu", help="comma-separated devices (default gpu,cpu)")
    ap.add_argument("--warm", type=int, default=2, help="warm calls after the first (median reported)")
    ap.add_argument("--networkx", action="store_true", help="also run networkx (small graphs: it is slow)")
    ap.add_argument("--out", default=".", help="folder for the JSON")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ooc-bench-") as d:
        if a.road:
            G = ooc_graph.convert(a.road, f"{d}/road.h5", directed=False, progress=False)
            name = Path(a.road).name.split(".")[0]
        else:
            G = ooc_graph.generate.rmat(f"{d}/rmat.h5", a.scale or 16, 16, seed=1, progress=False)
            name = f"rmat{a.scale or 16}"
        report = {"graph": name, "vertices": G.num_vertices, "arcs": G.num_arcs, "host": platform.node(),
                  "runs": {}}
        results = {}
        for device in a.devices.split(","):
            for algo in ALGORITHMS:
                r, first, warm = whole_calls(G, algo, device, a.warm)
                results[algo] = r
                report["runs"][f"{algo}/{device}"] = {"first_s": first, "warm_s": warm, "device": r.device,
                                                      "stats": {k: v for k, v in r.stats.items()
                                                                if isinstance(v, (int, float))}}
        if a.networkx:
            report["networkx"] = with_networkx(G, results)
        G.close()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / f"in-memory-{name}.json").write_text(json.dumps(report, indent=2, default=str))
    print(f"| {name} ({report['vertices']:,} vertices, {report['arcs']:,} arcs) | first s | warm s |")
    print("|---|---|---|")
    for key, run in report["runs"].items():
        print(f"| {key} ({run['device']}) | {run['first_s']:.3f} | {run['warm_s']:.3f} |")
    for algo, run in report.get("networkx", {}).items():
        extra = ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in run.items()
                          if k != "seconds")
        print(f"| networkx {algo} ({extra}) | {run['seconds']:.3f} | |")


if __name__ == "__main__":
    main()

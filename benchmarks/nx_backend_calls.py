"""First calls of networkx functions with backend="ooc_graph" against networkx itself, on a fresh
graph each time (the conversion is part of the call), on the NY road graph and email-enron.

    python benchmarks/nx_backend_calls.py                 # both graphs -> results/nx-backend-first-calls.json
    python benchmarks/nx_backend_calls.py --graphs enron --repeat 1
    python benchmarks/nx_backend_calls.py --tiny          # per-call time on tiny graphs (the conversion dominates)

Each graph is read into networkx (``NY.gr.xz`` is PACE: ``p tw n m`` then one edge a line;
``email-enron.txt.gz`` is SNAP), undirected, every edge given a seeded integer ``weight`` in 1..100
(Dijkstra reads it; BFS and components do not). For each call: networkx, then the backend, each
on the graph with networkx's conversion cache cleared first, alternating ``--repeat`` times; the
fastest of each is kept. Answers are compared: exactly (dict order included) where the backend
replays networkx's order, to networkx's tolerance for the power iterations, and by modularity
for Louvain (whose partitions differ). ``auto`` times the call through networkx's automatic
dispatch (``backend_priority=["ooc_graph"]``), where ``should_run`` may leave it to networkx.
The numba kernels are compiled first, on a small graph (a new process loads them from numba's
cache). The machine is shared: its load average is recorded with the times.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
GRAPHS = {"ny": DATA / "road" / "NY.gr.xz", "enron": DATA / "snap" / "email-enron.txt.gz"}


def load(which: str) -> nx.Graph:
    path = GRAPHS[which]
    if path.suffix == ".xz":
        with lzma.open(path, "rt") as f:
            edges = np.loadtxt((line for line in f if line[:1].isdigit()), dtype=np.int64)
    else:
        with gzip.open(path, "rt") as f:
            edges = np.loadtxt((line for line in f if not line.startswith("#")), dtype=np.int64)
    G = nx.Graph()
    G.add_edges_from(edges.tolist())
    rng = np.random.default_rng(1)
    weights = rng.integers(1, 101, G.number_of_edges()).tolist()
    for (u, v), w in zip(G.edges, weights):
        G[u][v]["weight"] = w
    return G


def _same_dict(a, b) -> bool:
    return list(a.items()) == list(b.items())


def _close(a, b, tol) -> bool:
    return list(a) == list(b) and max((abs(a[k] - b[k]) for k in a), default=0.0) <= tol


def _components(a, b) -> bool:
    return list(map(frozenset, a)) == list(map(frozenset, b))


def calls(G, which):
    s = next(iter(G))
    k = 20 if which == "ny" else 50
    out = {
        # one pass over the edges in networkx
        "bfs lengths": (lambda **b: nx.single_source_shortest_path_length(G, s, **b), _same_dict, True),
        "connected components": (lambda **b: list(nx.connected_components(G, **b)), _components, True),
        "dijkstra lengths": (lambda **b: nx.single_source_dijkstra_path_length(G, s, **b), _same_dict, True),
        "bfs edges": (lambda **b: list(nx.bfs_edges(G, s, **b)), lambda a, b: a == b, True),
        "dijkstra paths": (lambda **b: nx.single_source_dijkstra_path(G, s, **b), _same_dict, True),
        # iterative, or more than one pass
        "pagerank": (lambda **b: nx.pagerank(G, **b), lambda a, b: _close(a, b, 1e-6), False),
        f"betweenness (k={k})": (lambda **b: nx.betweenness_centrality(G, k=k, seed=1, **b),
                                 lambda a, b: _close(a, b, 1e-9), False),
        "core numbers": (lambda **b: nx.core_number(G, **b), _same_dict, False),
        "triangles": (lambda **b: nx.triangles(G, **b), _same_dict, False),
        "louvain": (lambda **b: nx.community.louvain_communities(G, seed=1, **b),
                    lambda a, b: nx.community.is_partition(G, b), False),
    }
    if which == "enron":
        out["eigenvector"] = (lambda **b: nx.eigenvector_centrality(G, **b), lambda a, b: _close(a, b, 1e-4), False)
    return out


def timed(G, call, **kwargs):
    G.__networkx_cache__.clear()  # a fresh graph: the conversion is part of the call
    t = time.perf_counter()
    out = call(**kwargs)
    return time.perf_counter() - t, out


def warm_up():
    K = nx.karate_club_graph()
    for f in (lambda: nx.single_source_shortest_path_length(K, 0, backend="ooc_graph"),
              lambda: list(nx.connected_components(K, backend="ooc_graph")),
              lambda: nx.single_source_dijkstra_path_length(K, 0, backend="ooc_graph"),
              lambda: nx.single_source_dijkstra_path(K, 0, backend="ooc_graph"),
              lambda: list(nx.bfs_edges(K, 0, backend="ooc_graph")),
              lambda: nx.pagerank(K, backend="ooc_graph"), lambda: nx.core_number(K, backend="ooc_graph"),
              lambda: nx.betweenness_centrality(K, k=5, seed=1, backend="ooc_graph"),
              lambda: nx.triangles(K, backend="ooc_graph"), lambda: nx.eigenvector_centrality(K, backend="ooc_graph"),
              lambda: nx.community.louvain_communities(K, seed=1, backend="ooc_graph")):
        f()


def run(which, repeat, only):
    t = time.perf_counter()
    G = load(which)
    print(f"{which}: {len(G)} nodes, {G.number_of_edges()} edges (read in {time.perf_counter() - t:.1f} s)", flush=True)
    rows = []
    for name, (call, equal, one_pass) in calls(G, which).items():
        if only and not any(o in name for o in only):
            continue
        slow = name.startswith(("louvain", "betweenness", "core", "triangles", "eigenvector")) and which == "ny"
        nx_times, ooc_times = [], []
        for _ in range(1 if slow else repeat):
            dt, want = timed(G, call, backend="networkx")
            nx_times.append(dt)
            dt, got = timed(G, call, backend="ooc_graph")
            ooc_times.append(dt)
        with nx.config(backend_priority=["ooc_graph"]):
            auto, _ = timed(G, call)
        row = {"graph": which, "call": name, "one_pass": one_pass, "networkx_s": min(nx_times),
               "ooc_graph_s": min(ooc_times), "ratio": min(ooc_times) / min(nx_times), "auto_s": auto,
               "equal": bool(equal(want, got)), "networkx_runs": nx_times, "ooc_graph_runs": ooc_times,
               "load_average": os.getloadavg()[0]}
        if name == "louvain":
            row["modularity"] = {"networkx": nx.community.modularity(G, want),
                                 "ooc_graph": nx.community.modularity(G, got)}
        rows.append(row)
        print(f"  {name:24s} networkx {row['networkx_s']:8.3f} s  ooc_graph {row['ooc_graph_s']:8.3f} s  "
              f"x{row['ratio']:.2f}  auto {auto:8.3f} s  equal={row['equal']}  load {row['load_average']:.1f}",
              flush=True)
    return rows


def tiny():
    """Per-call time on tiny graphs, converting each call (as networkx's backend-testing mode does)."""
    B = {"backend": "ooc_graph"}
    K, P = nx.karate_club_graph(), nx.path_graph(10)
    D = nx.gnp_random_graph(20, 0.2, seed=1, directed=True)
    cases = {"pagerank(karate_club_graph())": lambda: nx.pagerank(K, **B),
             "has_path(path_graph(10), 0, 9)": lambda: nx.has_path(P, 0, 9, **B),
             "single_source_shortest_path_length(path_graph(10), 0)":
                 lambda: nx.single_source_shortest_path_length(P, 0, **B),
             "single_source_dijkstra_path_length(gnp_random_graph(20, 0.2, directed), 0)":
                 lambda: nx.single_source_dijkstra_path_length(D, 0, **B),
             "connected_components(karate_club_graph())": lambda: list(nx.connected_components(K, **B))}
    with nx.config(cache_converted_graphs=False):
        for name, call in cases.items():
            call()
            runs = []
            for _ in range(5):
                t = time.perf_counter()
                for _ in range(20):
                    call()
                runs.append(1e3 * (time.perf_counter() - t) / 20)
            print(f"{name:75s} {statistics.median(runs):6.2f} ms", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=["enron", "ny"], choices=sorted(GRAPHS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=[], help="calls whose name contains one of these")
    ap.add_argument("--out", default=str(HERE / "results" / "nx-backend-first-calls.json"))
    ap.add_argument("--tiny", action="store_true")
    args = ap.parse_args()
    if args.tiny:
        return tiny()
    nx.config.warnings_to_ignore.add("cache")
    warm_up()
    rows = [row for which in args.graphs for row in run(which, args.repeat, args.only)]
    out = {"command": " ".join([Path(sys.executable).name] + sys.argv), "networkx": nx.__version__,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rows": rows}
    Path(args.out).parent.mkdir(exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

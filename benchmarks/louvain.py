"""Louvain: ooc_graph (on the CPU, and with ``--devices cpu,gpu`` on a GPU too) against igraph's
``community_multilevel`` and networkx's ``louvain_communities`` (where it finishes), seconds and
modularity.

    python benchmarks/louvain.py --out benchmarks/results/louvain-cpu.json
    python benchmarks/louvain.py --scales 12 --enron "" --repeat 1        # one small graph, seconds
    python3 benchmarks/louvain.py --scales 20 --enron "" --devices cpu,gpu --networkx-max-arcs 0   # GPU host

Graphs: Graph500 R-MAT (``ooc_graph.generate.rmat(path, scale, 16, seed=1)``, undirected) at each
``--scales``, and SNAP's email-enron (``--enron``, default ../shared/data/snap/email-enron.txt.gz
beside the repository; made undirected). Each library's time is its Louvain call alone, the median
of ``--repeat`` runs, the libraries' runs interleaved (the machine may be shared: wall and CPU
seconds are both kept, and the load average before each graph):
ooc_graph's whole call on an open store (reading its CSR included; seed 1), igraph's
``community_multilevel`` on a graph built beforehand from the same CSR (building not counted).
networkx runs in a child process given ``--networkx-seconds`` (seed 1), on graphs of at most
``--networkx-max-arcs`` arcs. Every partition's modularity is igraph's ``modularity`` of it (the
same judge for all; resolution 1). Writes the JSON and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ooc_graph

HERE = Path(__file__).resolve().parent
ENRON = str(HERE.parents[1] / "shared/data/snap/email-enron.txt.gz")


def timed(call):
    t, c = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - t, time.process_time() - c


def edges_of(G):
    indptr, indices, _ = G.csr("out")
    src = np.repeat(np.arange(G.num_vertices, dtype=np.int64), np.diff(indptr))
    keep = src <= indices  # each undirected edge once (a self-loop too)
    return src[keep], indices[keep].astype(np.int64)


def networkx_run(path: str, seconds: float):
    """networkx's Louvain in a child process, within ``seconds``: (labels, seconds) or None."""
    code = f"""
import time, sys, numpy as np, networkx as nx, ooc_graph
sys.path.insert(0, {str(HERE)!r})
from louvain import edges_of
G = ooc_graph.open({path!r})
H = nx.Graph(); H.add_nodes_from(range(G.num_vertices)); H.add_edges_from(zip(*(a.tolist() for a in edges_of(G))))
t = time.perf_counter()
parts = nx.community.louvain_communities(H, seed=1)
took = time.perf_counter() - t
labels = np.empty(G.num_vertices, np.int64)
for i, p in enumerate(parts):
    labels[list(p)] = i
np.save(sys.argv[1], labels)
print(took)
"""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "labels.npy")
        try:
            proc = subprocess.run([sys.executable, "-c", code, out], capture_output=True, text=True,
                                  timeout=seconds)
        except subprocess.TimeoutExpired:
            return None
        if proc.returncode:
            raise RuntimeError(proc.stderr[-2000:])
        return np.load(out), float(proc.stdout.split()[-1])


def _key(device: str) -> str:
    """A row's entry for ooc_graph on ``device`` (``ooc_graph`` on the CPU, as before devices)."""
    return "ooc_graph" if device == "cpu" else f"ooc_graph_{device}"


def bench(name: str, G, args) -> dict:
    import igraph
    src, dst = edges_of(G)
    H = igraph.Graph(n=G.num_vertices, edges=np.stack([src, dst], axis=1), directed=False)
    row = {"graph": name, "vertices": G.num_vertices, "edges": len(src), "load_before": os.getloadavg()[0]}
    devices = args.devices.split(",")
    runs = {_key(d): [] for d in devices} | {"igraph": []}
    for _ in range(args.repeat):
        for d in devices:
            r, wall, cpu = timed(lambda: ooc_graph.louvain(G, device=d, seed=1))
            runs[_key(d)].append((wall, cpu, np.asarray(r.labels), r))
            print(f"{name}: {_key(d)} {wall:.3f} s", file=sys.stderr, flush=True)  # kept if a later run is cut
        c, wall, cpu = timed(lambda: H.community_multilevel())
        print(f"{name}: igraph {wall:.3f} s", file=sys.stderr, flush=True)
        runs["igraph"].append((wall, cpu, np.asarray(c.membership), None))
    for lib, got in runs.items():
        walls, cpus = [g[0] for g in got], [g[1] for g in got]
        labels = got[-1][2]
        row[lib] = {"seconds": statistics.median(walls), "cpu_seconds": statistics.median(cpus),
                    "all_seconds": walls, "modularity": H.modularity(labels.tolist()),
                    "communities": int(labels.max()) + 1 if len(labels) else 0}
    for d in devices:
        ours = runs[_key(d)][-1][3]
        row[_key(d)].update(own_modularity=ours.modularity, sweeps=ours.stats["sweeps"], levels=len(ours.levels))
    if G.num_arcs <= args.networkx_max_arcs:
        got = networkx_run(str(G.path), args.networkx_seconds)
        row["networkx"] = ({"seconds": None, "note": f"did not finish in {args.networkx_seconds:g} s"}
                           if got is None else
                           {"seconds": got[1], "modularity": H.modularity(got[0].tolist()),
                            "communities": int(got[0].max()) + 1})
    else:
        row["networkx"] = {"seconds": None, "note": "not run (over --networkx-max-arcs)"}
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scales", type=int, nargs="*", default=[18, 19, 20])
    p.add_argument("--enron", default=ENRON, help="SNAP email-enron edge list ('' to skip)")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--networkx-seconds", type=float, default=600.0)
    p.add_argument("--networkx-max-arcs", type=int, default=8_000_000)
    p.add_argument("--workdir", default=None, help="where the stores are made (default: a temporary folder)")
    p.add_argument("--devices", default="cpu", help="where ooc_graph runs, e.g. cpu,gpu")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    import igraph
    import networkx
    import numba
    work = Path(args.workdir or tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    graphs = []
    if args.enron:
        path = work / "email-enron.h5"
        G = ooc_graph.open(path) if path.exists() else ooc_graph.convert(args.enron, path, directed=False,
                                                                         progress=False)
        graphs.append(("email-enron", G))
    for s in args.scales:
        path = work / f"rmat{s}.h5"
        G = ooc_graph.open(path) if path.exists() else ooc_graph.generate.rmat(path, s, 16, seed=1, progress=False)
        graphs.append((f"R-MAT-{s}", G))
    small = work / "rmat10.h5"  # numba's (CuPy's) kernels compiled or loaded before timing
    small = ooc_graph.open(small) if small.exists() else ooc_graph.generate.rmat(small, 10, 16, seed=1, progress=False)
    for d in args.devices.split(","):
        ooc_graph.louvain(small, device=d, seed=1)
    rows = []
    for name, G in graphs:
        rows.append(bench(name, G, args))
        print(json.dumps(rows[-1]), flush=True)
    record = {"command": " ".join([Path(sys.executable).name] + sys.argv), "machine": {
        "platform": platform.platform(), "processor": platform.processor(), "cpus": os.cpu_count(),
        "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
        "igraph": igraph.__version__, "networkx": networkx.__version__,
        "note": "a machine shared with other jobs: wall seconds vary with their load (load_before); "
                "cpu_seconds are this process's"}, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print("\n| graph | edges | ooc_graph s (cpu s) | Q | igraph s (cpu s) | Q | networkx s | Q |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        o, i, n = r["ooc_graph"], r["igraph"], r["networkx"]
        nxs = f"{n['seconds']:.3g}" if n.get("seconds") is not None else n["note"]
        nxq = f"{n['modularity']:.4f}" if "modularity" in n else "—"
        print(f"| {r['graph']} | {r['edges']:,} | {o['seconds']:.3g} ({o['cpu_seconds']:.3g}) | {o['modularity']:.4f} | "
              f"{i['seconds']:.3g} ({i['cpu_seconds']:.3g}) | {i['modularity']:.4f} | {nxs} | {nxq} |")
        for d in args.devices.split(",")[1:]:
            g = r[_key(d)]
            print(f"|   ooc_graph on {d} | | {g['seconds']:.3g} ({g['cpu_seconds']:.3g}) | {g['modularity']:.4f} | | | | |")

if __name__ == "__main__":
    main()

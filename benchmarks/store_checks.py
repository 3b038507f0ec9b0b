"""What the store's content checks (ooc_graph/store/contents.py) cost: each group on a generated
R-MAT store, next to opening it, reading its CEL once and a PageRank call.

    python benchmarks/store_checks.py [--scale 20] [--edge-factor 16] [--folder /tmp] [--repeat 3]
                                      [--weighted] [--interval-size N]

``--weighted`` adds the weights to check; an ``--interval-size`` below 65,536 makes every local
id of the CEL one to check (at 65,536, uint16 ids cannot leave their full intervals: only
blocks of a shorter last interval are read).

Prints one JSON object: seconds per check group (best of ``--repeat``, run directly, without the
record that makes later opens skip them), the open, one read of every CEL chunk, a PageRank call
(CPU) on a graph whose checks are recorded, and the store's size.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import ooc_graph
from ooc_graph.store import contents


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(min(times), 4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--folder", default="/tmp")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--weighted", action="store_true")
    ap.add_argument("--interval-size", type=int, default=None)
    a = ap.parse_args()
    tag = ("-w" if a.weighted else "") + (f"-i{a.interval_size}" if a.interval_size else "")
    path = os.path.join(a.folder, f"rmat{a.scale}-{a.edge_factor}{tag}-checks.h5")
    t = time.perf_counter()
    if not os.path.exists(path):
        ooc_graph.generate.rmat(path, a.scale, a.edge_factor, seed=1, progress=False, weighted=a.weighted,
                                interval_size=a.interval_size).close()
    made = time.perf_counter() - t
    out = {"store": path, "bytes": os.path.getsize(path), "generate_s": round(made, 2)}
    out["open_s"] = best(lambda: ooc_graph.open(path).close(), a.repeat)
    G = ooc_graph.open(path)
    out.update(vertices=G.num_vertices, arcs=G.num_arcs, directed=G.directed, weighted=G.weighted,
               interval_size=G.interval_size, local_ids=str(G.attrs["local_id_dtype"]), threads=contents.THREADS)
    groups = {"degree:out": lambda: contents.CHECKS["degree"](G, "out"),
              "csr:out": lambda: contents.CHECKS["csr"](G, "out"),
              "cel": lambda: contents.CHECKS["cel"](G)}
    if G.directed:
        groups.update({"degree:in": lambda: contents.CHECKS["degree"](G, "in"),
                       "csr:in": lambda: contents.CHECKS["csr"](G, "in")})
    out["checks_s"] = {name: best(fn, a.repeat) for name, fn in groups.items()}
    out["checks_total_s"] = round(sum(out["checks_s"].values()), 4)

    def read_cel():
        for start in range(0, G.num_arcs, G.chunk_arcs):
            G._fetch_ranges("cel/src", [(start, min(G.chunk_arcs, G.num_arcs - start))], __import__("numpy").empty)
    out["read_cel_src_once_s"] = best(read_cel, a.repeat)
    ooc_graph.pagerank(G, device="cpu")  # records the checks (and warms the engine's caches)
    out["pagerank_cpu_s"] = best(lambda: ooc_graph.pagerank(G, device="cpu"), a.repeat)
    G.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

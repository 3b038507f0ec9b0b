"""Quick start: convert an edge list, run the four algorithms, look at the results.

    python examples/quickstart.py [edge-file] [--device cpu|gpu|auto]

Without an edge file it uses the LDBC example graph from ../shared/data when present, else a
generated R-MAT graph. The store is written to a temporary folder, removed at the end.
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np

import ooc_graph


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edges", nargs="?")
    ap.add_argument("--device", default="auto")
    a = ap.parse_args()
    example = Path(__file__).resolve().parents[2] / "shared/data/ldbc/example/example-directed.e"
    with tempfile.TemporaryDirectory(prefix="ooc-quickstart-") as work:  # the store goes at the end
        store = Path(work) / "g.h5"
        if a.edges:
            G = ooc_graph.convert(a.edges, store)
        elif example.exists():
            G = ooc_graph.convert(example, store, directed=True)
        else:
            G = ooc_graph.generate.rmat(store, scale=12, edge_factor=8, weighted=True)
        with G:
            run(G, a.device)


def run(G, device):
    print(G)
    source = int(G.vertices[0])
    pr = ooc_graph.pagerank(G, device=device)
    print(pr.summary())
    top = np.argsort(pr.values)[::-1][:5]
    print("top vertices:", [(int(pr.vertices[v]), round(float(pr.values[v]), 5)) for v in top])
    b = ooc_graph.bfs(G, source=source, device=device)
    print(b.summary(), "| reachable:", int(b.reachable.sum()), "of", G.num_vertices)
    if G.weighted:
        s = ooc_graph.sssp(G, source=source, device=device)
        print(s.summary(), "| farthest:", float(s.distance[np.isfinite(s.distance)].max()))
    w = ooc_graph.wcc(G, device=device, store=True)
    print(w.summary(), "| components:", w.num_components)
    print("stored results:", G.results())


if __name__ == "__main__":
    main()

"""A user-written algorithm on the engine's operators: distance to the nearest of several seeds
(multi-source BFS), and each vertex's average in-neighbour out-degree, both streamed from the
store in bounded memory on the CPU or the GPU.

    python examples/custom_algorithm.py [store.h5] [--device cpu|gpu|auto]

Without a store it generates a 300 x 300 road-like mesh.
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np

import ooc_graph
from ooc_graph.engine import Engine


def nearest_seed_distance(G, seeds, *, device="auto", memory=None):
    """Hops from the nearest seed along out-arcs (inf where none reaches): one min-relaxation,
    started from every seed at once. The engine picks CEL passes or CSR advances per iteration."""
    engine = Engine(G, device=device, memory=memory)
    xp = engine.backend.xp
    dist = xp.full(G.num_vertices, np.inf)
    ids = np.array([G.vertex_id(s) for s in seeds])
    dist[xp.asarray(ids)] = 0.0
    iterations = engine.propagate_min(dist, plus=1.0, frontier=ids)
    return engine.backend.to_host(dist), iterations


def mean_in_neighbour_degree(G, *, device="auto", memory=None):
    """Σ over in-neighbours u of out_degree(u), divided by in_degree(v): one pull-sum pass."""
    engine = Engine(G, device=device, memory=memory)
    xp = engine.backend.xp
    total = engine.pull_sum(xp.asarray(G.out_degree, dtype=np.float64))
    indeg = xp.asarray(G.in_degree, dtype=np.float64)
    return engine.backend.to_host(xp.where(indeg > 0, total / xp.maximum(indeg, 1), 0.0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store", nargs="?")
    ap.add_argument("--device", default="auto")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ooc-custom-") as work:  # removed at the end
        if a.store:
            G = ooc_graph.open(a.store)
        else:
            G = ooc_graph.generate.grid(Path(work) / "mesh.h5", 300, 300, progress=False)
        with G:
            seeds = [int(v) for v in G.vertices[:: max(1, G.num_vertices // 4)][:4]]
            dist, iterations = nearest_seed_distance(G, seeds, device=a.device)
            reached = np.isfinite(dist)
            print(f"{G!r}\nseeds {seeds}: {int(reached.sum()):,} vertices reached in {iterations} iterations, "
                  f"farthest {int(dist[reached].max())} hops")
            avg = mean_in_neighbour_degree(G, device=a.device)
            print(f"mean in-neighbour out-degree: {float(avg.mean()):.3f} (max {float(avg.max()):.1f})")


if __name__ == "__main__":
    main()

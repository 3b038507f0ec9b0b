"""A user-written algorithm on the general edge operator, with no CUDA: widest paths.

The widest (maximum-capacity, bottleneck) path from a source to v is the path whose narrowest arc
is widest; its width is what a network can carry from the source to v along one route. It is a
fixed point of one rule per arc u→v of weight w,

    width[v] = max(width[v], min(width[u], w)),

which is one call of :meth:`ooc_graph.engine.Engine.edge_map`: the function ``"min(src, w)"``,
combined into each destination with the monoid ``max``, over the arcs leaving the vertices whose
width changed in the last iteration (the frontier: chunks without such a vertex are not read).
The same call runs on the CPU (NumPy) and on the GPU (compiled once into a CUDA kernel), streams
the graph in chunks under a memory budget, and works with any expression of ``src``, ``dst`` and
``w`` and any of the monoids ``sum``, ``min``, ``max``, ``or``, ``most_frequent``.

A second function shows a pass against the arcs (``direction="out"``: into each arc's source):
every vertex's widest out-arc.

    python examples/edge_map_algorithm.py [store.h5] [--source ID] [--device cpu|gpu|auto]
                                          [--memory 64KiB] [--check]

Without a store it generates a weighted 60 x 60 mesh. ``--check`` compares the widths with a
plain Python reference (a Dijkstra-like search on the arcs read from the store).
"""

import argparse
import heapq
import tempfile
from pathlib import Path

import numpy as np

import ooc_graph
from ooc_graph.engine import Engine


def widest_path(G, source, *, device="auto", memory=None):
    """Width of the widest path from ``source`` (an original vertex id) to every vertex along
    out-arcs: inf at the source, 0 where no path reaches. Returns (widths, iterations, the
    engine's counters: passes, chunks processed and skipped, bytes read, ...)."""
    engine = Engine(G, device=device, memory=memory)
    xp = engine.backend.xp  # NumPy on the CPU, CuPy on the GPU: vertex state lives on the device
    width = xp.zeros(G.num_vertices)
    s = G.vertex_id(source)
    width[s] = np.inf
    frontier = xp.zeros(G.num_vertices, dtype=bool)
    frontier[s] = True
    iterations = 0
    while bool(frontier.any()):  # one device->host sync per iteration
        iterations += 1
        wider = engine.edge_map("min(src, w)", width, monoid="max", frontier=frontier)
        frontier = wider > width
        width = xp.maximum(width, wider)
    return engine.backend.to_host(width), iterations, engine.stats.as_dict()


def widest_out_arc(G, *, device="auto", memory=None):
    """Every vertex's widest out-arc (0 for a vertex without one): one pass against the arcs."""
    engine = Engine(G, device=device, memory=memory)
    return engine.backend.to_host(engine.edge_map("w", monoid="max", direction="out"))


def reference(G, source):
    """The same widths by a plain search over the arcs (small graphs only)."""
    src, dst, w = _arcs(G)
    adj = {}
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        adj.setdefault(u, []).append((v, x))
    width = np.zeros(G.num_vertices)
    s = G.vertex_id(source)
    width[s] = np.inf
    heap = [(-np.inf, s)]
    while heap:
        neg, u = heapq.heappop(heap)
        if -neg < width[u]:
            continue
        for v, x in adj.get(u, []):
            cand = min(-neg, x)
            if cand > width[v]:
                width[v] = cand
                heapq.heappush(heap, (-cand, v))
    return width


def _arcs(G):
    """Every arc (internal ids) and its weight, from the out-CSR read whole."""
    indptr, dst, w = G.csr("out")
    src = np.repeat(np.arange(G.num_vertices), np.diff(np.asarray(indptr, np.int64)))
    return src, np.asarray(dst, np.int64), np.ones(len(dst)) if w is None else np.asarray(w, np.float64)


def main():
    ap = argparse.ArgumentParser(description="Widest paths written on Engine.edge_map (no CUDA).")
    ap.add_argument("store", nargs="?", help="a weighted graph store (default: a generated 60 x 60 mesh)")
    ap.add_argument("--source", type=int, help="source vertex, an original id (default: the first vertex)")
    ap.add_argument("--device", default="auto", choices=("cpu", "gpu", "auto"), help="where to compute")
    ap.add_argument("--memory", help="host memory budget, e.g. 64KiB (small budgets stream the chunks)")
    ap.add_argument("--check", action="store_true", help="compare with a plain Python reference")
    a = ap.parse_args()
    if a.store:
        G = ooc_graph.open(a.store)
    else:
        G = ooc_graph.generate.grid(Path(tempfile.mkdtemp()) / "mesh.h5", 60, 60, weighted=True, interval_size=256,
                                    chunk_arcs=2048, progress=False)  # small chunks: a budget streams them
    source = int(G.vertices[0]) if a.source is None else a.source
    width, iterations, stats = widest_path(G, source, device=a.device, memory=a.memory)
    reached = width > 0
    finite = width[reached & np.isfinite(width)]
    print(f"{G!r}\nwidest paths from {source}: {int(reached.sum()):,} vertices reached in {iterations} "
          f"iterations, median width {float(np.median(finite)) if finite.size else 0.0:.3f}; "
          f"{stats['chunks_processed']:,} chunks processed, {stats['chunks_skipped']:,} skipped (no frontier "
          f"vertex), {stats['bytes_read']:,} bytes read from the store")
    out = widest_out_arc(G, device=a.device, memory=a.memory)
    print(f"widest out-arc: mean {float(out.mean()):.3f}, max {float(out.max()):.3f}")
    if a.check:
        np.testing.assert_array_equal(width, reference(G, source))
        print("check: same widths as the reference")


if __name__ == "__main__":
    main()

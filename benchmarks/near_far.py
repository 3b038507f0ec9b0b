"""Weighted SSSP through propagate_min's level loop (the compiled whole traversal switched off: the
loop a GPU, an out-of-core CPU run and a distributed run take), with near-far buckets and without
(config ``traversal.near_far``): iterations, advances, passes, arcs relaxed, chunks streamed.

    python benchmarks/near_far.py                      # grid 300x300 and R-MAT-16, weights in (0, 1]
    python benchmarks/near_far.py --road ../shared/data/road/NY.gr.xz   # + a road graph, weights 1..1000
    python benchmarks/near_far.py --device gpu         # on the GPU machine

Three settings per graph: everything in memory (frontier advances over the CSR where the frontier
is small), and a budget too small for the CSR and the chunks (edge-centric passes, streamed),
synchronous and "auto" (asynchronous after traversal.async_after_passes passes, without buckets from then).
``arcs_processed`` includes the shortest-path tree's pass over every arc. Counters do not depend
on the machine where the kernels are sequential (the CPU); seconds are for orientation. Writes
``results/near-far-<device>.json``; nothing is asserted.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ooc_graph
from ooc_graph import config
from ooc_graph.engine import stream
from ooc_graph.kernels import cpu

KEYS = ("advances", "passes", "arcs_processed", "chunks_processed", "local_iterations", "near_far_bounds")


def graphs(a):
    d = a.work
    yield f"grid {a.grid}x{a.grid}", ooc_graph.generate.grid(
        os.path.join(d, f"nf-grid{a.grid}.h5"), a.grid, a.grid, weighted=True, seed=1, interval_size=4096,
        chunk_arcs=1 << 14, overwrite=True, progress=False), 0
    G = ooc_graph.generate.rmat(os.path.join(d, f"nf-rmat{a.rmat}.h5"), a.rmat, 16, weighted=True, seed=1,
                                interval_size=4096, chunk_arcs=1 << 15, overwrite=True, progress=False)
    yield f"R-MAT-{a.rmat}", G, int(np.argmax(G.out_degree))
    if a.road:  # the road graph's topology with seeded weights 1..1000 (as cpu_vs_scipy.py)
        T = ooc_graph.convert(a.road, os.path.join(d, "nf-road-topology.h5"), overwrite=True, progress=False)
        indptr, indices, _ = T.csr("out")
        src = np.repeat(np.arange(T.num_vertices), np.diff(indptr))
        keep = src < indices  # each undirected edge once
        w = np.random.default_rng(1).integers(1, 1001, int(keep.sum())).astype(np.float64)
        yield Path(a.road).name.split(".")[0] + " (weights 1..1000)", ooc_graph.convert(
            (src[keep], indices[keep].astype(np.int64), w), os.path.join(d, "nf-road.h5"), directed=False,
            num_vertices=T.num_vertices, weight_dtype="float64", interval_size=4096, chunk_arcs=1 << 14,
            overwrite=True, progress=False), 0
        T.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=int, default=300)
    ap.add_argument("--rmat", type=int, default=16)
    ap.add_argument("--road", help="a DIMACS .gr(.xz) road graph (its travel distances as weights)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--work", default=tempfile.gettempdir())
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--width", type=float, help=f"config traversal.near_far_width (default {config.get().traversal.near_far_width})")
    a = ap.parse_args()
    config.update({"traversal.whole_traversal": False})
    if a.width is not None:
        config.update({"traversal.near_far_width": a.width})
    rows = []
    print("graph | arcs | setting | near-far | iterations | " + " | ".join(KEYS) + " | seconds")
    for name, G, source in graphs(a):
        per_arc = stream.PREPARED_BYTES_PER_ARC + G.cel_nbytes_per_arc()
        tight = 6 * 8 * G.num_vertices + G.num_vertices + 6 * per_arc * G.chunk_arcs  # state + a few chunks
        budget = "device_memory" if a.device == "gpu" else "memory"
        for setting, memory, execution in (("in memory", None, "auto"), ("streamed, sync", tight, "sync"),
                                           ("streamed, auto", tight, "auto")):
            distances = []
            for near_far in (False, True):
                config.update({"traversal.near_far": near_far})
                G.release()
                ooc_graph.sssp(G, source, device=a.device, execution=execution, **{budget: memory})  # warm
                r = ooc_graph.sssp(G, source, device=a.device, execution=execution, **{budget: memory})
                distances.append(r.distance)
                row = {"graph": name, "vertices": G.num_vertices, "arcs": G.num_arcs, "setting": setting,
                       "execution": execution, "near_far": near_far, "iterations": r.iterations,
                       **{k: r.stats[k] for k in KEYS}, "seconds": r.seconds}
                rows.append(row)
                print(" | ".join(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else
                                 f"{v:.3f}" if isinstance(v, float) else str(v)
                                 for k, v in row.items() if k not in ("vertices", "execution")), flush=True)
            assert np.array_equal(distances[0], distances[1])  # the same fixed point
        G.close()
    doc = {"command": " ".join(["python"] + sys.argv), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
           "device": a.device, "cpu_kernels": "compiled" if cpu.compiled() else "numpy",
           "near_far_width": config.get().traversal.near_far_width, "rows": rows}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if a.width is None else f"-width{a.width:g}"
    (out / f"near-far-{a.device}{suffix}.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()

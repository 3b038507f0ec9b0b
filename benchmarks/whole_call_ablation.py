"""What each change to the GPU traversals and result copies buys, as whole calls (run on the GPU machine).

    python benchmarks/whole_call_ablation.py 22      # Graph500 R-MAT-22, directed, no self-loops

BFS and SSSP from the highest-degree vertex and PageRank (tol 1e-6), median of 7 warm calls with
the result in host memory, with the changes switched on one after another (module flags); and the
levels of one profiled BFS (kind, ms). Prints one JSON line per variant.
"""
import json
import statistics
import sys
import time

import numpy as np

import ooc_graph
from ooc_graph import config
from ooc_graph.kernels import gpu


def med(fn, reps=7):
    """Median milliseconds of ``reps`` warm calls (after one more), each result dropped untimed."""
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        r = fn()
        times.append(time.perf_counter() - t)
        del r
    return statistics.median(times) * 1e3


if __name__ == "__main__":
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 22
    G = ooc_graph.generate.rmat(f"/tmp/q{scale}.h5", scale, 16, seed=1, directed=True, progress=False,
                                drop_self_loops=True, overwrite=True, memory="32GB")
    s = int(np.argmax(G.out_degree))
    real = gpu.empty_result
    for label, bu, bal, pin in (("before (top-down warp, pageable results)", False, False, False),
                                ("+ arc-balanced advance", False, True, False),
                                ("+ bottom-up levels", True, True, False),
                                ("+ page-locked results (all of them)", True, True, True)):
        config.update({"traversal.bottom_up": bu, "gpu.balanced": bal})
        gpu.empty_result = real if pin else (lambda shape, dtype, device=None: np.empty(shape, dtype))
        row = {k: round(med(lambda: getattr(ooc_graph, k)(G, device="gpu", **kw)), 2)
               for k, kw in (("bfs", {"source": s}), ("sssp", {"source": s}), ("pagerank", {"tol": 1e-6}))}
        r = ooc_graph.bfs(G, s, device="gpu", profile=True)
        row["bfs_levels"] = [(p["kind"], round(p["seconds"] * 1e3, 2)) for p in r.passes]
        print(f"{label}: {json.dumps(row)}", flush=True)

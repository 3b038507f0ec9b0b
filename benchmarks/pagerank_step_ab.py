"""PageRank's step reading uint32 out-degrees (dividing itself) against reading float64
``1 / out-degree``, as whole calls, alternating (run on the GPU machine):

    python3 benchmarks/pagerank_step_ab.py --scale 25 --name h200-scale25

Tried and dropped (``RESULTS.md``): the uint32 step was slower, and was reverted; the script runs
on the code of commit f97c3e2, which has both variants (``pagerank._step_degrees``).

R-MAT (Graph500 parameters, directed, generated here unless ``--store`` names one), PageRank to tol
1e-6 on the GPU with the result in host memory; each round times ``--warm`` warm calls of each
variant (after one untimed call) and checks that the two agree (to 1e-10 relative: the GPU's pull
sums with atomics, so two runs of one variant may differ in the last bits). Writes
``benchmarks/results/pagerank-step-ab-<name>.json``.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--store", help="an existing store instead of generating one")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--device", default="gpu", help="gpu (default), or cpu to try the script")
    ap.add_argument("--name", default=None)
    a = ap.parse_args(argv)

    import ooc_graph
    pr = importlib.import_module("ooc_graph.algorithms.pagerank")
    path = a.store or f"/tmp/pagerank-ab-{a.scale}.h5"
    G = (ooc_graph.open(path) if a.store else
         ooc_graph.generate.rmat(path, a.scale, 16, seed=1, directed=True, progress=False, overwrite=True))
    real = pr._step_degrees

    def inverses(eng, g):  # before: float64 1 / out-degree
        return pr._inverse(eng.backend.xp, eng.backend.to_device(g.out_degree.astype(np.float64)))

    runs, values = [], {}
    for rnd in range(a.rounds):
        for variant, fn in (("float64 inverse", inverses), ("uint32 degree", real)):
            pr._step_degrees = fn
            for eng in G.engines.values():  # the variant's array is derived again
                eng._vertex.pop(("derived", "step_out_degree"), None)
            r = ooc_graph.pagerank(G, device=a.device)
            values.setdefault(variant, r.values)
            times = []
            for _ in range(a.warm):
                t = time.perf_counter()
                r = ooc_graph.pagerank(G, device=a.device)
                times.append(time.perf_counter() - t)
                del r
            runs.append({"variant": variant, "round": rnd, "warm_ms": [round(t * 1e3, 3) for t in times],
                         "median_ms": round(statistics.median(times) * 1e3, 3)})
            print(variant, "median %.2f ms" % runs[-1]["median_ms"], runs[-1]["warm_ms"], flush=True)
    pr._step_degrees = real
    first, second = values.values()
    same = bool(np.allclose(first, second, rtol=1e-10, atol=1e-15))
    record(f"pagerank-step-ab-{a.name or f'scale{a.scale}'}",
           {"graph": path, "vertices": G.num_vertices, "arcs": G.num_arcs, "agree": same,
            "max_abs_difference": float(np.abs(first - second).max()) if first.size else 0.0, "runs": runs})
    if not same:
        raise SystemExit("the two variants gave different values")


if __name__ == "__main__":
    main()

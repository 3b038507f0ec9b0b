"""Device memory a streamed call takes against its ``device_memory`` (run on the GPU machine):

    python3 benchmarks/device_budget.py --scale 18 --scale 22 --name h200

For each R-MAT (Graph500 parameters, directed; scale 18 with 64 Ki-arc store chunks, so that it
streams many) and each budget (the vertex state plus a quarter, then a half, of the decoded arcs),
PageRank (5 iterations), BFS and WCC run streamed from an emptied CuPy pool; the pool's bytes after
the call (every block it allocated) are reported against the budget, with the engine's chunks and
the bytes sent per arc. Writes ``benchmarks/results/device-budget-<name>.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, action="append", help="R-MAT scale(s) (default 18)")
    ap.add_argument("--name", default="gpu")
    a = ap.parse_args(argv)

    import cupy as cp
    import ooc_graph
    pool = cp.get_default_memory_pool()
    rows = []
    for scale in a.scale or [18]:
        opts = {"chunk_arcs": 1 << 16} if scale <= 18 else {}
        g = ooc_graph.generate.rmat(f"/tmp/device-budget-{scale}.h5", scale, 16, seed=1, directed=True,
                                    progress=False, overwrite=True, **opts)
        n = g.num_vertices
        for share in (4, 2):
            budget = 5 * 8 * n + n + g.num_arcs * 8 // share
            for algo, kw in (("pagerank", {"max_iter": 5, "tol": 1e-300}), ("bfs", {"source": 0}), ("wcc", {})):
                g.release()
                pool.free_all_blocks()
                base = pool.total_bytes()
                r = getattr(ooc_graph, algo)(g, device="gpu", device_memory=budget, **kw)
                cp.cuda.Device().synchronize()
                used = pool.total_bytes() - base
                engine = next(iter(g.engines.values()))
                rows.append({"scale": scale, "arcs": g.num_arcs, "budget": budget, "arcs_share": f"1/{share}",
                             "algorithm": algo, "pool_bytes": used, "pool_over_budget": round(used / budget, 4),
                             "chunks": len(engine.bounds), "chunk_arcs": engine.chunk_arcs,
                             "bytes_to_device_per_arc": round(r.stats["bytes_to_device"] / g.num_arcs, 2),
                             "passes": r.stats["passes"]})
                print(rows[-1], flush=True)
                del r
        g.release()
        g.close()
    record(f"device-budget-{a.name}", {"rows": rows})


if __name__ == "__main__":
    main()

"""Synchronous against asynchronous (WolfGraph) execution of BFS and SSSP, in memory and streamed;
asynchronous also on a store with the CEL augmentation ("async+aug").

    python benchmarks/execution.py --device cpu      # writes results/execution-cpu.json
    python benchmarks/execution.py --device gpu      # on the GPU machine

Edge-centric passes only (the CSR advance is switched off, as when the CSR does not fit), on a
road graph (high diameter) and an R-MAT graph (low diameter); "streamed" budgets hold about two
chunks, so every pass reads (CPU) or sends (GPU) the rest again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import ooc_graph
from ooc_graph import config

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--road", default=str(HERE.parents[1] / "shared/data/road/NY.gr.xz"))
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--work", default="/tmp/ooc-exec-bench")
    ap.add_argument("--out", default=str(HERE / "results"))
    a = ap.parse_args()
    config.update({"traversal.advance_fraction": 0.0})
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    def build(augment):
        tag = "-aug" if augment else ""
        return {"road": ooc_graph.convert(a.road, work / f"road{tag}.h5", chunk_arcs=1 << 16,
                                          interval_size=1 << 14, augment=augment, progress=False),
                "rmat": ooc_graph.generate.rmat(work / f"rmat{tag}.h5", a.scale, 16, weighted=True,
                                                chunk_arcs=1 << 19, augment=augment, progress=False)}
    graphs, augmented = build(False), build(True)
    rows = []
    for name, G in graphs.items():
        src = 0 if name == "road" else int(np.argmax(G.out_degree))
        state = 5 * 8 * G.num_vertices + G.num_vertices
        two_chunks = 2 * G.chunk_arcs * (40 if a.device == "cpu" else 16)
        budgets = {"in_memory": {}, "streamed": ({"memory": state + two_chunks} if a.device == "cpu" else
                                                 {"device_memory": state + two_chunks})}
        for label, budget in budgets.items():
            for algo in ("bfs", "sssp"):
                ref = None
                for ex in ("sync", "async", "async+aug", "auto"):
                    H = augmented[name] if ex == "async+aug" else G
                    H.release()
                    r = getattr(ooc_graph, algo)(H, src, device=a.device, execution=ex.split("+")[0], **budget)
                    if ref is None:
                        ref = r
                    assert all(np.array_equal(ref.arrays()[k], r.arrays()[k]) for k in r.arrays())
                    row = {"graph": name, "arcs": G.num_arcs, "chunks": r.stats["chunks"], "budget": label,
                           "algorithm": algo, "execution": ex, "seconds": r.seconds, "passes": r.stats["passes"],
                           "local_iterations": r.stats["local_iterations"], "arcs_relaxed": r.stats["arcs_processed"],
                           "back_arcs": r.stats["back_arcs"],
                           "stored_back_arcs": int(augmented[name].back_blocks[0][-1]),
                           "bytes_read": r.bytes_read, "bytes_to_device": r.stats["bytes_to_device"]}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"command": " ".join(["python"] + sys.argv), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rows": rows}
    (out / f"execution-{a.device}.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""PageRank on one GPU with its last pull run by destination stripes, each stripe's values sent to
host memory as it is done (config ``algorithms.pagerank_result_stripes``), against the same call with the result
sent after the pass (1 stripe) and the call as it was before (0: nothing sent; the step foreseen
only one ahead, and the result copied by ``Engine.result``), settings alternating on one graph:

    python3 benchmarks/result_stripes_ab.py --scale 25 --name h200-scale25     # on the GPU machine

Each setting: warm whole calls as a user makes them (``ooc_graph.pagerank(G, device="gpu",
tol=1e-6)``, result in host memory), their median, and how many steps were run by stripes a call
(more than one: a step guessed to be the last was not). Beside them, once: the call with its result
left on the GPU (``output="cupy"``, no copy at all) and the kernel-only time (the pull-sum passes of
a profiled call, each synchronised; profiled calls never stripe). Writes
``benchmarks/results/result-stripes-ab-<name>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=22, help="Graph500 R-MAT scale, directed (default 22)")
    ap.add_argument("--store", help="an existing store instead (generated there if missing)")
    ap.add_argument("--stripes", type=int, nargs="+", default=[0, 8, 1, 4, 16],
                    help="settings; 0: nothing sent, the result copied after the pass as before (default 0 8 1 4 16)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warm", type=int, default=7)
    ap.add_argument("--name", default=None)
    a = ap.parse_args(argv)

    import ooc_graph
    from ooc_graph import config
    from ooc_graph.engine import Engine

    path = Path(a.store or Path(tempfile.mkdtemp(prefix="ooc-stripes-")) / f"rmat{a.scale}.h5")
    if path.exists():
        G = ooc_graph.open(path)
    else:
        t = time.perf_counter()
        G = ooc_graph.generate.rmat(path, a.scale, 16, seed=1, directed=True, progress=False)
        print(f"generated {G!r} in {time.perf_counter() - t:.1f} s", flush=True)

    sends = []
    real_send = Engine.send_result

    def counted(self, array, lo, hi):
        sent = real_send(self, array, lo, hi)
        sends.append((lo, hi, sent))
        return sent

    Engine.send_result = counted
    sends_results = Engine.sends_results
    call = dict(device="gpu", tol=1e-6)
    ooc_graph.pagerank(G, **call)  # reads the store, builds the cache-blocked copy
    rows = {s: {"stripes": s, "warm_s": [], "striped_steps": [], "all_sent": []} for s in a.stripes}
    for rnd in range(a.rounds):
        for s in a.stripes:
            config.update({"algorithms.pagerank_result_stripes": max(s, 1)})
            Engine.sends_results = sends_results if s else property(lambda self: False)
            ooc_graph.pagerank(G, **call)  # cuts the stripes once
            row = rows[s]
            r = None
            for _ in range(a.warm):
                del r  # the previous result's memory is freed outside the timed call
                sends.clear()
                t = time.perf_counter()
                r = ooc_graph.pagerank(G, **call)
                row["warm_s"].append(time.perf_counter() - t)
                row["striped_steps"].append(sum(1 for lo, hi, _ in sends if lo == 0))
                row["all_sent"].append(all(sent for *_, sent in sends))
            row["iterations"] = r.iterations
            print(f"round {rnd} stripes {s:3d}: median {1e3 * statistics.median(row['warm_s'][-a.warm:]):.2f} ms "
                  f"(striped steps a call {row['striped_steps'][-a.warm:]})", flush=True)
    config.update({"algorithms.pagerank_result_stripes": 8})
    Engine.sends_results = sends_results
    on_device = []
    for _ in range(a.warm):
        t = time.perf_counter()
        ooc_graph.pagerank(G, output="cupy", **call)
        on_device.append(time.perf_counter() - t)
    ooc_graph.pagerank(G, profile=True, **call)
    prof = ooc_graph.pagerank(G, profile=True, **call)
    passes = sum(p["seconds"] for p in prof.passes)
    for row in rows.values():
        row["median_s"] = statistics.median(row["warm_s"])
        row["over_passes"] = row["median_s"] / passes
    out = {"graph": repr(G), "vertices": G.num_vertices, "arcs": G.num_arcs, "rows": list(rows.values()),
           "result_on_gpu_median_s": statistics.median(on_device), "result_on_gpu_s": on_device,
           "kernel_only_passes_s": passes, "profiled_iterations": prof.iterations}
    for row in rows.values():
        print(f"stripes {row['stripes']:3d}: {1e3 * row['median_s']:.2f} ms = {row['over_passes']:.3f}x the passes")
    print(f"result left on the GPU: {1e3 * out['result_on_gpu_median_s']:.2f} ms; passes {1e3 * passes:.2f} ms")
    import cupy as cp
    out["device"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    record(f"result-stripes-ab-{a.name or f'scale{a.scale}'}", out)


if __name__ == "__main__":
    main()

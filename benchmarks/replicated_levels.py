"""Distributed BFS with small levels run whole on every rank against split between the ranks and
merged (config ``traversal.replicated_max_arcs``: the default against 0), and on CPU workers the whole
traversal as one compiled call on every rank (config ``traversal.whole_traversal``, the CPU's default),
alternating, whole calls as a user submits them; the answers are checked against one process each
time.

    python benchmarks/replicated_levels.py                           # 2 CPU workers, a 600x30 grid
    python benchmarks/replicated_levels.py --gpus 2 --grid 2000x200  # the GPU machine
    python benchmarks/replicated_levels.py --store /tmp/rmat26.h5 --gpus 2 --source top

A grid's BFS has one level per step across it (hundreds to thousands of small levels: each split
level costs a merge of the ranks' flags, each whole one a look from the host); R-MAT's has a few,
two or three of them bottom-up. Writes ``results/replicated-levels-<where>.json``; nothing is
asserted but the answers.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ooc_graph
from ooc_graph import config
from ooc_graph.runtime.cluster import local_cpu_client, local_gpu_client


def _setting(whole: bool, limit: int) -> None:
    """Set on each worker (sent by value)."""
    from ooc_graph import config
    config.update(traversal={"whole_traversal": whole, "replicated_max_arcs": limit})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", type=int, default=0, help="GPU workers (0: CPU workers)")
    ap.add_argument("--workers", type=int, default=2, help="CPU workers (without --gpus)")
    ap.add_argument("--grid", default="600x30", help="rows x columns of the generated grid")
    ap.add_argument("--store", help="an existing store instead of the grid")
    ap.add_argument("--source", default="0", help="a vertex id, or 'top' (the highest out-degree)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=5, help="warm calls per round and setting (median)")
    ap.add_argument("--work", default=tempfile.gettempdir())
    ap.add_argument("--out", default=str(Path(__file__).with_name("results")))
    a = ap.parse_args(argv)
    if a.store:
        G, name = ooc_graph.open(a.store), Path(a.store).stem
    else:
        rows, cols = (int(v) for v in a.grid.split("x"))
        name = f"grid{rows}x{cols}"
        G = ooc_graph.generate.grid(os.path.join(a.work, f"{name}.h5"), rows, cols, overwrite=True, progress=False)
    source = int(np.argmax(G.out_degree)) if a.source == "top" else int(a.source)
    if a.gpus:
        client, device, where = local_gpu_client(list(range(a.gpus))), "gpu", f"{a.gpus}gpu"
    else:
        client, device, where = local_cpu_client(a.workers), "cpu", f"{a.workers}cpu"
    workers = a.gpus or a.workers
    ref = ooc_graph.bfs(G, source, device=device)
    limit = config.get().traversal.replicated_max_arcs
    settings = {"levels whole on every rank": (False, limit), "levels split and merged": (False, 0)}
    if not a.gpus:  # GPUs have no whole compiled traversal
        settings = {"one compiled traversal on every rank": (True, limit), **settings}
    times = {k: [] for k in settings}
    levels = None
    for _ in range(a.rounds):
        for label, setting in settings.items():
            client.run(_setting, *setting)
            ooc_graph.submit(client, "bfs", G, workers=workers, source=source, device=device).result()
            ts = []
            for _ in range(a.warm):
                t = time.perf_counter()
                r = ooc_graph.submit(client, "bfs", G, workers=workers, source=source, device=device).result()
                ts.append(time.perf_counter() - t)
            if not (np.array_equal(r.depth, ref.depth) and np.array_equal(r.parent, ref.parent)):
                sys.exit(f"{label}: the answers differ from one process's")
            levels = r.iterations
            times[label].append(statistics.median(ts))
            print(f"{label:38s} {statistics.median(ts) * 1e3:9.2f} ms ({levels} levels)", flush=True)
    client.run(_setting, config.get().traversal.whole_traversal, limit)
    out = {"command": "python benchmarks/replicated_levels.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "graph": name, "vertices": G.num_vertices, "arcs": G.num_arcs,
           "source": source, "workers": workers, "device": device, "levels": levels,
           "warm_ms_per_round": {k: [round(v * 1e3, 3) for v in ts] for k, ts in times.items()}}
    path = Path(a.out) / f"replicated-levels-{name}-{where}.json"
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out["warm_ms_per_round"]), "->", path)


if __name__ == "__main__":
    main()

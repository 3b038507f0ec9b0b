"""Two-GPU BFS and PageRank whole calls with the workers' GIL switch interval at Python's 5 ms
against 0.2 ms (``sys.setswitchinterval`` on every worker), alternating, 3 rounds, median of 7 warm
calls each. Run on a lent 2-GPU machine with ``NCCL_NVLS_ENABLE=0``:

    python3 benchmarks/gil_switch_ab.py /tmp/rmat26.h5

(The experiment behind ``results/gil-switch-ab-rmat26-2xh200.json``: no difference, not kept.)
"""

import json
import statistics
import sys
import time

import numpy as np

import ooc_graph
from ooc_graph.runtime.cluster import local_gpu_client


def _interval(seconds):
    import sys
    sys.setswitchinterval(seconds)


def main():
    G = ooc_graph.open(sys.argv[1])
    s = int(np.argmax(G.out_degree))
    client = local_gpu_client([0, 1])
    out = {}
    for algo, kw in (("bfs", {"source": s}), ("pagerank", {})):
        f = getattr(ooc_graph, algo)
        f(G, gpus=[0, 1], **kw)
        for _ in range(3):
            for v in (0.005, 0.0002):
                client.run(_interval, v)
                f(G, gpus=[0, 1], **kw)
                ts = []
                for _ in range(7):
                    t = time.perf_counter()
                    f(G, gpus=[0, 1], **kw)
                    ts.append(time.perf_counter() - t)
                out.setdefault(f"{algo} {v}", []).append(round(statistics.median(ts) * 1e3, 2))
                print(algo, v, f"{out[f'{algo} {v}'][-1]:.2f} ms", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

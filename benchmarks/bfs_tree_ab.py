"""BFS whole calls on one GPU with the shortest-path tree built during the traversal against after
it (config ``traversal.tree_on_the_way``), alternating, 2 rounds, median of 7 warm calls each;
checks that both give the same depths and parents. Run on the GPU machine:

    python3 benchmarks/bfs_tree_ab.py /tmp/rmat26.h5 top     # from the highest-degree vertex
    python3 benchmarks/bfs_tree_ab.py /tmp/ooc-whole-call/NW.gr.xz.h5 top

Prints the medians and a JSON line; nothing is asserted but the answers.
"""

import json
import statistics
import sys
import time

import numpy as np

import ooc_graph
from ooc_graph import config


def main():
    path = sys.argv[1]
    source = sys.argv[2] if len(sys.argv) > 2 else "top"
    G = ooc_graph.open(path)
    source = int(G.vertices[int(np.argmax(G.out_degree))]) if source == "top" else int(source)
    out, ref = {}, None
    for _ in range(2):
        for on in (True, False):
            config.update({"traversal.tree_on_the_way": on})
            r = ooc_graph.bfs(G, source, device="gpu")  # warm
            ts = []
            for _ in range(7):
                t = time.perf_counter()
                r = ooc_graph.bfs(G, source, device="gpu")
                ts.append(time.perf_counter() - t)
            if ref is None:
                ref = r
            elif not (np.array_equal(ref.parent, r.parent) and np.array_equal(ref.depth, r.depth)):
                sys.exit("the trees differ")
            out.setdefault(f"on_the_way={on}", []).append(round(statistics.median(ts) * 1e3, 2))
            print("on the way" if on else "after", f"{statistics.median(ts) * 1e3:.2f} ms",
                  "tree_levels", r.stats.get("tree_levels"), "iterations", r.iterations, flush=True)
    config.update({"traversal.tree_on_the_way": True})
    print(json.dumps(out))


if __name__ == "__main__":
    main()

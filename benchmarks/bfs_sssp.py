"""Warm BFS against SSSP on the GPU (run on the GPU machine): on an unweighted graph both run the
same relaxation, so their times should match; a gap points at work outside the kernels.

    python benchmarks/bfs_sssp.py            # R-MAT scale 23, directed, generated in /tmp

Prints seconds and iterations per call (the first call includes compiling and reading the store)
and a profile of one BFS call; nothing is asserted.
"""

import cProfile
import pstats

import ooc_graph

if __name__ == "__main__":
    G = ooc_graph.generate.rmat("/tmp/r23.h5", 23, 16, seed=1, directed=True, progress=False)
    src = int(G.out_degree.argmax())
    for name in ("bfs", "sssp", "bfs", "sssp"):
        r = getattr(ooc_graph, name)(G, src, device="gpu")
        print(name, round(r.seconds, 4), r.iterations, flush=True)
    cProfile.run("ooc_graph.bfs(G, src, device='gpu')", "/tmp/prof")
    pstats.Stats("/tmp/prof").sort_stats("cumulative").print_stats(14)

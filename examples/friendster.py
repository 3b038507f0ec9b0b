"""Friendster-size job: 65.6M vertices, 1.81B undirected edges (3.6B arcs).

    python examples/friendster.py --input com-friendster.ungraph.txt.gz --store friendster.h5
    python examples/friendster.py --yes                 # an R-MAT of the same size: 2**26 vertices, 27 edges each
    python examples/friendster.py --scale 12 --device cpu   # a small stand-in, no GPU

Converts the SNAP file when given (any format `ooc-graph convert` reads), else generates a
Graph500 R-MAT with 2**26 = 67.1M vertices and 27 * 2**26 = 1.81B undirected edges; then runs
PageRank, BFS (from the highest-degree vertex) and WCC on one GPU and on all GPUs, printing
seconds and edges/s for every stage. The R-MAT's store takes about 31 GB, 44 GB of disk while it
is built, and each process about 2.2 GB of memory for the vertex state: the script says so before
any work, refuses what does not fit and asks first (--yes to go ahead; without a GPU it runs on
CPU workers, and says so).
"""

from large_graph import parser, run

if __name__ == "__main__":  # dask workers import this file again: nothing runs at import
    run(parser(__doc__.split("\n")[0], scale=26, edge_factor=27, directed=False).parse_args())

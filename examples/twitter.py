"""Twitter-size job: twitter-2010, 41.7M vertices, 1.47B directed arcs.

    python examples/twitter.py --input twitter-2010.txt --store twitter.h5
    python examples/twitter.py --yes                  # an R-MAT of the same size: 2**25 vertices, 44 arcs each
    python examples/twitter.py --scale 12 --device cpu    # a small stand-in, no GPU

Converts the edge list when given (LAW's twitter-2010 decoded to text or binary pairs; any format
`ooc-graph convert` reads), else generates a directed Graph500 R-MAT with 2**25 = 33.6M vertices
and 44 * 2**25 = 1.48B arcs; then runs PageRank, BFS (from the highest-degree vertex) and WCC on
one GPU and on all GPUs, printing seconds and edges/s for every stage. The R-MAT's store takes
about 25 GB, 35 GB of disk while it is built (said before any work; --yes to go ahead).
"""

from large_graph import parser, run

if __name__ == "__main__":  # dask workers import this file again: nothing runs at import
    run(parser(__doc__.split("\n")[0], scale=25, edge_factor=44, directed=True).parse_args())

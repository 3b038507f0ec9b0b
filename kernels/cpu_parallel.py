"""The CPU kernels on numba's threads, in one namespace (:func:`.cpu_compiled.parallel`): whole
traversals, components and PageRank's pull over a CSR held in memory, and a traversal's
whole-array passes."""

from .cpu_bfs_parallel import VERTEX_CHUNK, bfs_tree_parallel
from .cpu_components import components_parallel, components_serial
from .cpu_fill import fill, fresh, int_levels, unset_unreached, widen
from .cpu_pull import pagerank_step, pull_rows_parallel, pull_rows_serial
from .cpu_sssp_parallel import delta_stepping_parallel, delta_stepping_serial
from .cpu_sssp_piles import light_counts, light_counts_range, light_fill, light_fill_range

__all__ = ["VERTEX_CHUNK", "bfs_tree_parallel", "delta_stepping_parallel", "delta_stepping_serial", "light_counts",
           "light_counts_range", "light_fill", "light_fill_range", "components_parallel",
           "components_serial", "pagerank_step", "pull_rows_parallel",
           "pull_rows_serial", "fill", "fresh", "int_levels", "unset_unreached", "widen"]

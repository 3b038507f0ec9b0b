"""The CPU kernels on numba's threads, in one namespace (:func:`.cpu_compiled.parallel`): whole
traversals, components and PageRank's pull over a CSR held in memory."""

from .cpu_bfs_parallel import VERTEX_CHUNK, bfs_tree_parallel  # noqa: F401
from .cpu_sssp_parallel import delta_stepping, light_counts, light_fill  # noqa: F401
from .cpu_components import components  # noqa: F401
from .cpu_pull import pagerank_step, pull_rows  # noqa: F401

"""Edge-centric operators on one batch of arcs, each with a CPU (NumPy) and a GPU (CuPy) version.

Both modules expose the same functions with the same signatures:

- ``prepare(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi, n)`` → batch
- ``pull_sum(batch, x, out)``: ``out[v] += Σ_{u→v} x[u]`` over the batch's arcs
- ``relax_min(batch, state, plus, changed, any_changed=None)``: ``state[v] = min(state[v], state[u] + w)``
- ``hook_min(batch, parent, changed)``: hang the larger of two roots under the smaller (WCC)
- ``tight_parent(batch, dist, plus, parent, resolved)``: smallest u with ``dist[u] + w == dist[v]``
- ``advance_min(indptr, indices, weights, frontier, state, plus, changed)``: frontier advance on a CSR
- ``bottom_up(indptr, indices, state, level, next_level, changed, lo, hi)``: a bottom-up BFS level
  over an in-CSR (direction optimisation)
- ``scatter_min(state, ids, values, changed)``: merge (id, value) pairs by minimum (distributed runs)
- ``pagerank_step(y, x, p, inv, alpha, lost, contrib)``: one fused PageRank update of a vertex range
- ``flatnonzero(flags)``: the ids of the set uint8 flags, ascending (a traversal's next frontier)

The GPU module (``gpu``, with ``gpu_module``, ``gpu_transfer`` and ``gpu_traversal`` behind it)
adds transfers (``to_device``, ``to_host`` at bus speed through a pinned ring) and
``advance_levels`` (many small levels on the device between looks from the host; vertices
beyond a bound, near-far's far pile, are left to the host) and ``csr_parents`` (shortest-path
parents from an in-CSR on the device, each vertex stopping at its first tight in-arc).

The generators' edges (R-MAT, uniform) and weights come from a counter-based hash with one
signature in three modules: ``cpu_generate`` (NumPy, the reference), ``cpu_ingest`` (numba,
beside the build's other compiled kernels) and ``gpu_generate`` (CuPy); they give the same arrays.

``plus`` is a constant added per arc, or ``None`` to add the arc's weight. Kernels know nothing of
files, stores, dask or scheduling: the engine hands them arrays.

The CPU module runs its operators compiled where numba is installed (``cpu_compiled``, the NumPy
code being their reference) and then also offers whole traversals over a CSR held in memory:
``whole_traversals()``, ``traverse_min(indptr, indices, weights, frontier, state, plus, parent)``
(queue BFS or Dijkstra to the fixed point), ``tree_parents(...)`` (the shortest-path tree),
``bfs_tree(indptr, indices, source, state, in_csr, fresh, int_unreachable)`` (a direction-optimising
BFS that builds its tree on the way; a fresh state vouched for is not checked again, and its last
pass may write the int64 levels) and ``int_levels(levels, unreachable)`` (BFS levels to int64 in
place, or found so).

Both offer ``brandes(indptr, indices, weights, sources, bc, endpoints, spare)``: betweenness's
sums from many sources over a whole out-CSR in memory, a queue traversal per source (the CPU's
compiled, on hops or positive weights; the GPU's on hops), or None where they cannot.
"""

from . import cpu

__all__ = ["cpu"]

# numba's OpenMP threads wait for work asleep rather than spinning (GNU OpenMP spins first by
# default): where other processes share the cores (CI, laptops, several dask workers on one host) a
# spinning thread holds a core the thread a parallel region waits for needs. On a shared 2-core
# machine an empty parallel region took 8 ms at the median spinning, 10 us asleep (4 us at best
# either way). Read once, when numba first starts its threads; an OMP_WAIT_POLICY the user set wins.
import os as _os  # noqa: E402

_os.environ.setdefault("OMP_WAIT_POLICY", "passive")

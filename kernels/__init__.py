"""Edge-centric operators on one batch of arcs, each with a CPU (NumPy) and a GPU (CuPy) version.

Both modules expose the same functions with the same signatures:

- ``prepare(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi)`` → batch
- ``pull_sum(batch, x, out)``: ``out[v] += Σ_{u→v} x[u]`` over the batch's arcs
- ``relax_min(batch, state, plus)``: ``state[v] = min(state[v], state[u] + w)``; returns changed vertices
- ``reverse_min(batch, state)``: ``state[u] = min(state[u], state[v])``; returns changed vertices
- ``tight_parent(batch, dist, plus, parent, strict)``: smallest u with ``dist[u] + w == dist[v]``

``plus`` is a constant added per arc, or ``None`` to add the arc's weight. Kernels know nothing of
files, stores, dask or scheduling: the engine hands them arrays.
"""

from . import cpu

__all__ = ["cpu"]

"""GPU triangle counting over an oriented CSR (kernel in ``gpu_wedges.cu``): one warp per pair,
the counts added by atomics."""

from __future__ import annotations

import cupy as cp
import numpy as np

from .gpu_module import _THREADS, _kernel

# The grid striding over the pairs: blocks of _THREADS // 32 warps, at most this many.
_BLOCKS = 1 << 16


def wedge_count(indptr, xs, ys, arcs, rows, triangles, closing, spare: int = 0) -> bool:
    """:func:`.cpu.wedge_count` on the device (``rows`` on the host, ``spare`` unused): one launch
    per run of adjacent row ranges. Returns True."""
    rows = np.asarray(rows, np.int64).reshape(-1)
    if not rows.size:
        return True
    indptr, xs, ys, arcs = (cp.ascontiguousarray(a, dtype=np.int64) for a in (indptr, xs, ys, arcs))
    bounds = indptr[cp.asarray(rows)].get().reshape(-1, 2)  # device -> host: the ranges' pairs
    runs = []
    for lo, hi in bounds.tolist():
        if hi > lo and runs and runs[-1][1] == lo:
            runs[-1][1] = hi
        elif hi > lo:
            runs.append([lo, hi])
    kernel = _kernel("ooc_graph_wedge_count")
    tri, clo = triangles.view(cp.uint64), closing.view(cp.uint64)
    for lo, hi in runs:
        blocks = min(_BLOCKS, (32 * (hi - lo) + _THREADS - 1) // _THREADS)
        kernel((blocks,), (_THREADS,), (indptr, xs, ys, arcs, np.int64(lo), np.int64(hi), tri, clo))
    return True

"""Vertex intervals: the ranges of vertex ids that sub-graphs and blocks are cut along.

Sizing rule (documented in FORMAT.md): intervals are ``interval_size`` vertices wide, the last one
possibly shorter. The default is 2**16 = 65,536 so that an id local to its interval fits in 16 bits
(an unweighted arc streams as 4 bytes) and the state one block reads and writes (256 KiB of float32
each side) sits in L2 many times over — GraphCage's rule (a third of L2: ~16 MiB on an H100) is an
upper bound, not a target. A graph of at most one interval's worth of vertices has one interval.
"""

from __future__ import annotations

import numpy as np

from ooc_graph.errors import ParameterError

DEFAULT_INTERVAL_SIZE = 1 << 16


def interval_bounds(num_vertices: int, interval_size: int | None = None) -> np.ndarray:
    """Boundaries ``b`` (int64, length k+1): interval i is ``[b[i], b[i+1])``. k ≥ 1."""
    size = DEFAULT_INTERVAL_SIZE if interval_size is None else int(interval_size)
    if size < 1:
        raise ParameterError(f"interval_size must be at least 1 (got {interval_size!r})")
    n = int(num_vertices)
    k = max(1, -(-n // size))
    bounds = np.minimum(np.arange(k + 1, dtype=np.int64) * size, n)
    return bounds


def local_id_dtype(bounds: np.ndarray) -> np.dtype:
    """The narrowest unsigned type that holds every id local to an interval."""
    widest = int(np.max(np.diff(bounds))) if len(bounds) > 1 else 0
    for dt in (np.uint8, np.uint16, np.uint32):
        if widest <= np.iinfo(dt).max + 1:
            return np.dtype(dt)
    return np.dtype(np.uint64)


def global_id_dtype(num_vertices: int) -> np.dtype:
    """int32 when every id fits, int64 otherwise."""
    return np.dtype(np.int32) if num_vertices <= np.iinfo(np.int32).max else np.dtype(np.int64)

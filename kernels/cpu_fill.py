"""Whole-array passes of a traversal on numba's threads: the fresh state's fill, the check that
a state is fresh, BFS levels to int64, a tree's unreached vertices and components' int32 labels
to int64. Serial, each is a pass over n values that a 16-thread BFS of a few levels waits for (on
R-MAT-22, 32 MB apiece, first touches of new memory among them); here every thread writes (and so
first touches) its own ranges."""

from __future__ import annotations

import numpy as np

from ._jit import njit, prange
from .cpu_bfs import _from_bits

_PAR = dict(parallel=True, cache=True, nogil=True)
CHUNK = 1 << 16  # values a thread takes at a time


@njit(**_PAR)
def fill(a, value):
    """Every value of ``a`` set to ``value``."""
    n = a.size
    for c in prange((n + CHUNK - 1) // CHUNK):
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            a[i] = value


@njit(**_PAR)
def _count_inf(state):
    n = state.size
    total = 0
    for c in prange((n + CHUNK - 1) // CHUNK):
        s = 0
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            s += state[i] == np.inf
        total += s
    return total


def fresh(state, frontier) -> bool:
    """:func:`.cpu_compiled.fresh` with the count on numba's threads: inf everywhere but the
    frontier, which holds 0."""
    frontier = np.asarray(frontier, np.int64)
    if frontier.size and bool((state[frontier] != 0).any()):
        return False
    return int(_count_inf(state)) == state.size - frontier.size


@njit(**_PAR)
def int_levels(levels, unreachable):
    """:func:`.cpu_bfs.int_levels` on numba's threads."""
    n = levels.size
    for c in prange((n + CHUNK - 1) // CHUNK):
        for v in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            x = levels[v]
            levels[v] = _from_bits(np.int64(x) if x < np.inf else unreachable)


@njit(cache=True, nogil=True)
def _unset_range(parent, dist, lo, hi):
    n = parent.size
    missing = 0
    for v in range(lo, hi):
        if parent[v] == n:
            if dist[v] < np.inf:
                missing += 1
            else:
                parent[v] = -1
    return missing


@njit(**_PAR)
def unset_unreached(parent, dist):
    """Parents still n (none found) to -1 where dist is infinite; returns how many reached
    vertices are still at n."""
    n = parent.size
    missing = 0
    for c in prange((n + CHUNK - 1) // CHUNK):
        missing += _unset_range(parent, dist, c * CHUNK, min(n, (c + 1) * CHUNK))
    return missing


@njit(**_PAR)
def widen(a, out):
    """``out[:] = a`` (int32 ids into int64, float32 weights into float64, offsets into int32)."""
    n = a.size
    for c in prange((n + CHUNK - 1) // CHUNK):
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            out[i] = a[i]

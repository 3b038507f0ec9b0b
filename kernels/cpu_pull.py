"""PageRank's pull over the whole in-CSR held in memory, and its update step, on numba's threads.

``pull_rows_serial`` and ``pull_rows_parallel`` sum each destination's in-arcs in CSR order
(sources ascending, one thread a row, as scipy's product sums a row), so the sums do not depend
on the threads. Threads take rows in chunks of about ARC_CHUNK arcs (a hub's row is one chunk)
from a shared counter.

``pagerank_step`` is :func:`.cpu_compiled.pagerank_step` with its two sums (the L1 change, the
dangling mass) added per block of BLOCK vertices, the blocks' sums then in order: the same sums
whatever the threads.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit, prange
from .cpu_atomic import atomic_add
from .cpu_chunks import serial_and_parallel

_OPTS = dict(cache=True, nogil=True)
_PAR = dict(parallel=True, **_OPTS)

ARC_CHUNK = 1 << 15  # arcs (whole rows) a thread takes at a time
BLOCK = 1 << 14  # vertices per partial sum of a step


@njit(**_OPTS)
def _first_row(indptr, lo, hi, arc):
    """The first row in [lo, hi] whose arcs start at or after ``arc``."""
    a, z = lo, hi
    while a < z:
        mid = (a + z) // 2
        if indptr[mid] < arc:
            a = mid + 1
        else:
            z = mid
    return a


@njit(**_OPTS)
def _rows(indptr, indices, x, out, lo, hi):
    for v in range(lo, hi):
        s = 0.0
        for j in range(indptr[v], indptr[v + 1]):
            s += x[indices[j]]
        out[v] = s


@njit(**_PAR)
def _pull_parallel(indptr, indices, x, out, lo, hi, threads, counter):
    first, last = indptr[lo], indptr[hi]
    chunks = (last - first + ARC_CHUNK - 1) // ARC_CHUNK
    for _t in prange(threads):
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            a = _first_row(indptr, lo, hi, first + c * ARC_CHUNK)
            z = hi if c == chunks - 1 else _first_row(indptr, lo, hi, first + (c + 1) * ARC_CHUNK)
            _rows(indptr, indices, x, out, a, z)


def _make_pull_rows(parallel):
    def pull_rows(indptr, indices, x, out, lo, hi, threads, parallel_arcs):
        """``out[v] = Σ_{u→v} x[u]`` for v in [lo, hi) over the in-CSR; on ``threads`` threads where
        the rows hold at least ``parallel_arcs`` arcs (the parallel entry only)."""
        if parallel and threads > 1 and indptr[hi] - indptr[lo] >= max(parallel_arcs, 1):
            _pull_parallel(indptr, indices, x, out, lo, hi, threads, np.zeros(1, np.int64))
        else:
            _rows(indptr, indices, x, out, lo, hi)
    return pull_rows


# Two compiled entries (:func:`.cpu_chunks.serial_and_parallel`): the serial one compiles nothing on
# numba's threads.
pull_rows_serial, pull_rows_parallel = serial_and_parallel(_make_pull_rows)


@njit(**_OPTS)
def _step_block(y, x, p, uniform, inv, alpha, lost, contrib, write, lo, hi):
    err = 0.0
    dangling = 0.0
    for v in range(lo, hi):
        pv = p[v] if p.size else uniform
        new = alpha * (y[v] + lost * pv) + (1 - alpha) * pv
        err += abs(new - x[v])
        if inv[v] == 0:
            dangling += new
        if write:
            contrib[v] = new * inv[v]
        x[v] = new
    return err, dangling


@njit(**_PAR)
def pagerank_step(y, x, p, uniform, inv, alpha, lost, contrib, write):
    """One PageRank update of every vertex of the range (see :func:`.cpu.pagerank_step`; ``p``
    empty: ``uniform`` everywhere; ``write``: the contributions too). Returns (Σ|x_new - x|,
    Σ x_new over dangling vertices), added per BLOCK vertices and then in block order."""
    n = x.size
    blocks = (n + BLOCK - 1) // BLOCK
    sums = np.zeros((blocks, 2))
    for b in prange(blocks):
        e, d = _step_block(y, x, p, uniform, inv, alpha, lost, contrib, write, b * BLOCK, min(n, (b + 1) * BLOCK))
        sums[b, 0] = e
        sums[b, 1] = d
    err = 0.0
    dangling = 0.0
    for b in range(blocks):
        err += sums[b, 0]
        dangling += sums[b, 1]
    return err, dangling

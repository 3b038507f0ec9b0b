"""Weakly connected components over a CSR in memory by Afforest (Sutton, Ben-Nun and Barak,
IPDPS'18; GAP's ``cc``), on numba's threads: every vertex labelled with the smallest vertex of its
component, as the engine's hooking passes label them.

A forest of pointers that only ever lead to smaller vertices: linking two vertices hangs the
larger of their roots under the smaller by a compare-and-swap, so a root is the smallest vertex of
its tree and, once every arc has been linked, of its component. Afforest links each vertex's first
``rounds`` out-arcs, compresses the forest, finds the component most sampled vertices lie in (on
a skewed graph, most of it) and then skips that component's vertices: the others link their
remaining out-arcs and, on a directed graph, their in-arcs (an arc from the big component into a
small one is found from the small one's side). Without the in-CSR every vertex links its
remaining out-arcs. Work is taken in ranges of vertices from a shared counter, so a thread that
another process keeps off its core leaves its ranges to the others.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit, prange
from .cpu_atomic import atomic_add, cas
from .cpu_chunks import serial_and_parallel

_OPTS = dict(cache=True, nogil=True)
_PAR = dict(parallel=True, **_OPTS)

RANGE_CHUNK = 4096  # vertices a thread takes at a time
SAMPLES = 1024  # vertices sampled for the largest component (GAP's number)


@njit(**_OPTS)
def _link(u, v, comp):
    """Join the trees of u and v: the larger root under the smaller (GAP's ``Link``)."""
    p1, p2 = comp[u], comp[v]
    while p1 != p2:
        high, low = (p1, p2) if p1 > p2 else (p2, p1)
        p_high = comp[high]
        if p_high == low or (p_high == high and cas(comp, high, high, low) == high):
            break
        p1, p2 = comp[comp[high]], comp[low]


@njit(**_OPTS)
def _link_range(indptr, indices, in_indptr, in_indices, comp, lo, hi, first, last, skip, inward):
    """Link vertices [lo, hi)'s out-arcs first..last-1 of each row (``last`` < 0: to its end), and
    with ``inward`` their in-arcs; vertices whose pointer is ``skip`` (>= 0) are left out."""
    for v in range(lo, hi):
        if skip >= 0 and comp[v] == skip:
            continue
        start, end = indptr[v] + first, indptr[v + 1]
        if last >= 0:
            end = min(end, indptr[v] + last)
        for j in range(start, end):
            _link(v, indices[j], comp)
        if inward:
            for j in range(in_indptr[v], in_indptr[v + 1]):
                _link(v, in_indices[j], comp)


@njit(**_PAR)
def _link_parallel(indptr, indices, in_indptr, in_indices, comp, first, last, skip, inward, threads, counter):
    n = comp.size
    chunks = (n + RANGE_CHUNK - 1) // RANGE_CHUNK
    for _t in prange(threads):
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * RANGE_CHUNK
            _link_range(indptr, indices, in_indptr, in_indices, comp, lo, min(n, lo + RANGE_CHUNK), first, last, skip,
                        inward)


@njit(**_OPTS)
def _init_range(comp, lo, hi):
    for v in range(lo, hi):
        comp[v] = v


@njit(**_PAR)
def _init_parallel(comp, threads):
    """Every vertex its own root, on the threads (which touch the array's pages first there: a
    NumPy ``empty`` is mapped only as written)."""
    n = comp.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        _init_range(comp, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))


@njit(**_OPTS)
def _compress_range(comp, lo, hi):
    for v in range(lo, hi):
        while comp[v] != comp[comp[v]]:
            comp[v] = comp[comp[v]]


@njit(**_PAR)
def _compress_parallel(comp, threads):
    n = comp.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        _compress_range(comp, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))


@njit(**_OPTS)
def _shell_sort(a):
    """``a`` sorted ascending in place (Shell's sort, Ciura's gaps): what numba's ``sort`` gives,
    without compiling numba's quicksort (1.5-2 s of a one-thread WCC's first compile)."""
    n = a.size
    for gap in (701, 301, 132, 57, 23, 10, 4, 1):
        for i in range(gap, n):
            v = a[i]
            j = i
            while j >= gap and a[j - gap] > v:
                a[j] = a[j - gap]
                j -= gap
            a[j] = v


@njit(**_OPTS)
def _largest_sampled(comp):
    """The pointer most of SAMPLES vertices (drawn by a fixed generator) hold: after a compress,
    the root of the component they most often lie in."""
    n = comp.size
    picks = np.empty(SAMPLES, comp.dtype)
    state = np.uint64(0x9E3779B97F4A7C15)
    for i in range(SAMPLES):
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        picks[i] = comp[state % np.uint64(n)]
    _shell_sort(picks)
    best, best_count, run = picks[0], 0, 0
    for i in range(SAMPLES):
        run = run + 1 if i and picks[i] == picks[i - 1] else 1
        if run > best_count:
            best, best_count = picks[i], run
    return best


def _make_components(parallel):
    def components(indptr, indices, in_indptr, in_indices, inward, symmetric, comp, rounds, threads):
        """Afforest over the out-CSR (and, with ``inward``, the in-CSR: a directed graph's;
        ``symmetric``: the out-CSR holds every arc both ways, an undirected graph's) into ``comp`` (n
        ids, int32 or int64, any values: set here); ``threads`` > 1 runs the passes on numba's
        threads (the parallel entry only). The largest component is skipped only where every arc can
        be found from its other end (``inward`` or ``symmetric``). Returns the arcs of the CSRs read."""
        n = comp.size
        if parallel and threads > 1:
            _init_parallel(comp, threads)
        else:
            _init_range(comp, 0, n)
        if n == 0:
            return 0
        counter = np.zeros(1, np.int64)
        for r in range(rounds):
            if parallel and threads > 1:
                counter[0] = 0
                _link_parallel(indptr, indices, in_indptr, in_indices, comp, r, r + 1, -1, False, threads, counter)
                _compress_parallel(comp, threads)
            else:
                _link_range(indptr, indices, in_indptr, in_indices, comp, 0, n, r, r + 1, -1, False)
                _compress_range(comp, 0, n)
        skip = _largest_sampled(comp) if inward or symmetric else -1
        if parallel and threads > 1:
            counter[0] = 0
            _link_parallel(indptr, indices, in_indptr, in_indices, comp, rounds, -1, skip, inward, threads, counter)
            _compress_parallel(comp, threads)
        else:
            _link_range(indptr, indices, in_indptr, in_indices, comp, 0, n, rounds, -1, skip, inward)
            _compress_range(comp, 0, n)
        return indices.size + (in_indices.size if inward else 0)
    return components


# Two compiled entries (:func:`.cpu_chunks.serial_and_parallel`): the serial one compiles nothing on
# numba's threads.
components_serial, components_parallel = serial_and_parallel(_make_components)

"""The BFS of :mod:`.cpu_bfs` on numba's threads: the same keys, queue, levels and smallest
parents, with the levels that hold enough work shared among threads.

A vertex's key is ``(level + 1) << 32 | parent`` in the state's memory (:mod:`.cpu_bfs`); an arc
u->v offers v the key ``code | u`` and v keeps the smallest key offered, by an atomic minimum, so
the parent is the smallest vertex of the earliest level whatever order threads relax arcs in. The
thread whose minimum replaced the unreached key queues v: each vertex is queued once. Bottom-up
levels read the frontier from a bitmap and write the next one; every unreached vertex still
stops at its first in-arc (sources ascending) from the frontier, its smallest parent.

Threads take work in chunks from a shared counter (arcs of the frontier for a top-down level,
vertex ranges for a bottom-up level), not in fixed shares: on a machine whose cores other
processes use too, a thread that is not running leaves its chunks to the others, and the level
waits only for the chunk it is in. Levels with little work (a road graph's thousands of levels)
run on the calling thread, as in :mod:`.cpu_bfs`, and cost no fork-join.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cpu_atomic import atomic_add, atomic_min, atomic_or
from .cpu_bfs import _LEVEL_SHIFT, UNREACHED_KEY, _finish_range, _parent_in, _top_down_branchless, _top_down_branchy
from .cpu_chunks import VERTEX_CHUNK, arc_position, flush, push

_OPTS = dict(cache=True, nogil=True)
_PAR = dict(parallel=True, **_OPTS)

# Arcs a thread takes at a time in a top-down level (ARC_CHUNK), vertices a thread takes at a
# time in a bottom-up level and in the final pass (a multiple of 64: whole bitmap words), vertices
# a thread queues before it reserves their slots (QUEUE_BUFFER). Frontier vertices per chunk of
# the arc count: :data:`.cpu_chunks.VERTEX_CHUNK`.
ARC_CHUNK = 4096
RANGE_CHUNK = 4096
QUEUE_BUFFER = 512
_ONE = np.uint64(1)


@njit(**_OPTS)
def _count_serial(indptr, queue, head, stop, chunk_arcs):
    """``chunk_arcs[c + 1]``: the arcs of frontier vertices before the end of vertex chunk c."""
    total = 0
    chunk_arcs[0] = 0
    c = 0
    for h in range(head, stop):
        u = queue[h]
        total += indptr[u + 1] - indptr[u]
        if (h - head + 1) % VERTEX_CHUNK == 0:
            c += 1
            chunk_arcs[c] = total
    if (stop - head) % VERTEX_CHUNK:
        chunk_arcs[c + 1] = total
    return total


@njit(**_PAR)
def _count_parallel(indptr, queue, head, stop, chunk_arcs, threads):
    """:func:`_count_serial` with the chunks' sums on numba's threads."""
    f = stop - head
    chunks = (f + VERTEX_CHUNK - 1) // VERTEX_CHUNK
    for c in prange(chunks):
        s = 0
        for h in range(head + c * VERTEX_CHUNK, min(stop, head + (c + 1) * VERTEX_CHUNK)):
            u = queue[h]
            s += indptr[u + 1] - indptr[u]
        chunk_arcs[c + 1] = s
    chunk_arcs[0] = 0
    for c in range(chunks):
        chunk_arcs[c + 1] += chunk_arcs[c]
    return chunk_arcs[chunks]


@njit(**_PAR)
def _top_down_parallel(indptr, indices, queue, head, stop, key, code, chunk_arcs, threads, boxes):
    """Expand the level queue[head:stop] over the out-CSR on ``threads`` threads, each taking
    ARC_CHUNK arcs at a time (a hub's row is shared too). ``boxes``: [0, the queue's tail]
    (shared counters, made by the caller: numba does not see an atomic write into an array it
    allocated here). Returns the new tail."""
    f = stop - head
    total = chunk_arcs[(f + VERTEX_CHUNK - 1) // VERTEX_CHUNK]
    chunks = (total + ARC_CHUNK - 1) // ARC_CHUNK
    counter, tailbox = boxes[0:1], boxes[1:2]
    for _t in prange(threads):
        buf = np.empty(QUEUE_BUFFER, queue.dtype)
        b = 0
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * ARC_CHUNK
            rem = min(lo + ARC_CHUNK, total) - lo
            h, j = arc_position(indptr, queue, head, f, chunk_arcs, lo)
            while rem > 0:
                u = queue[h]
                end = indptr[u + 1]
                take = min(end - j, rem)
                cand = code | np.uint64(u)
                for jj in range(j, j + take):
                    v = indices[jj]
                    if key[v] > cand:
                        if atomic_min(key, v, cand) == UNREACHED_KEY:
                            b = push(queue, tailbox, buf, b, v)
                rem -= take
                h += 1
                if rem > 0:
                    j = indptr[queue[h]]
        if b:
            flush(queue, tailbox, buf, b)
    return tailbox[0]


@njit(**_PAR)
def _set_front(queue, head, tail, front):
    """The bitmap of the frontier queue[head:tail]."""
    for w in prange(front.size):
        front[w] = 0
    chunks = (tail - head + RANGE_CHUNK - 1) // RANGE_CHUNK
    for c in prange(chunks):
        for h in range(head + c * RANGE_CHUNK, min(tail, head + (c + 1) * RANGE_CHUNK)):
            u = queue[h]
            atomic_or(front, u >> 6, _ONE << np.uint64(u & 63))


@njit(**_PAR)
def _bottom_up_parallel(in_indptr, in_indices, indptr, queue, key, code, front, after, threads, boxes, sums):
    """One bottom-up level on ``threads`` threads: every unreached vertex looks through its in-arcs
    (sources ascending) for one whose bit is set in ``front`` and stops at the first; found
    vertices are queued and ``after`` becomes their bitmap (every word written). Returns the new
    tail; ``boxes``: as for :func:`_top_down_parallel`; ``sums`` (2 x threads) gets each
    thread's arcs looked at and out-arcs of the vertices it found."""
    n = key.size
    chunks = (n + RANGE_CHUNK - 1) // RANGE_CHUNK
    counter, tailbox = boxes[0:1], boxes[1:2]
    for t in prange(threads):
        buf = np.empty(QUEUE_BUFFER, queue.dtype)
        b = 0
        looked = 0
        found_arcs = 0
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * RANGE_CHUNK
            hi = min(n, lo + RANGE_CHUNK)
            word = np.uint64(0)
            for v in range(lo, hi):
                if key[v] == UNREACHED_KEY:
                    u, arcs = _parent_in(in_indptr, in_indices, front, v)
                    looked += arcs
                    if u >= 0:
                        key[v] = code | np.uint64(u)
                        word |= _ONE << np.uint64(v & 63)
                        found_arcs += indptr[v + 1] - indptr[v]
                        b = push(queue, tailbox, buf, b, v)
                if (v & 63) == 63 or v == hi - 1:
                    after[v >> 6] = word
                    word = np.uint64(0)
        if b:
            flush(queue, tailbox, buf, b)
        sums[0, t] = looked
        sums[1, t] = found_arcs
    return tailbox[0]


@njit(**_PAR)
def _finish(state, parent, threads):
    """Keys to levels (inf where unreached) and parents (-1 at the root and where unreached)."""
    n = state.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        _finish_range(state, parent, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))


@njit(**_OPTS)
def bfs_tree_parallel(indptr, indices, in_indptr, in_indices, bottom_up, alpha, min_arcs, branchy, leave_bottom_up,
                      max_degree, key, queue, ctx, state, parent, threads, parallel_arcs, chunk_arcs, bitmaps):
    """:func:`.cpu_bfs.bfs_tree` (same arguments, calls and results) with levels of at least
    ``parallel_arcs`` arcs (top-down: the frontier's out-arcs; bottom-up: every level) on
    ``threads`` threads. ``chunk_arcs``: scratch of n / VERTEX_CHUNK + 2 int64; ``bitmaps``: 2 x
    (n + 63) / 64 uint64 (the frontier's and the next's, for bottom-up levels)."""
    n = key.size
    head, tail, cur = ctx[0], ctx[1], np.uint64(ctx[2])
    unexplored, arcs, found, done = ctx[3], ctx[4], ctx[5], ctx[6]
    sums = np.zeros((2, threads), np.int64)
    boxes = np.zeros(2, np.int64)
    while head < tail:
        f = tail - head
        enough = max(unexplored // alpha, min_arcs)
        frontier_arcs = -1  # not counted
        if f * max_degree >= min(parallel_arcs, enough):
            if f <= VERTEX_CHUNK * 64:
                frontier_arcs = _count_serial(indptr, queue, head, tail, chunk_arcs)
            else:
                frontier_arcs = _count_parallel(indptr, queue, head, tail, chunk_arcs, threads)
        if bottom_up and frontier_arcs > enough:
            if bottom_up == 2:
                ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], ctx[6] = head, tail, cur, unexplored, arcs, found, done
                return 1
            _set_front(queue, head, tail, bitmaps[0])
            a = 0  # bitmaps[a]: the frontier; bitmaps[1 - a]: the next
            while True:
                cur += np.uint64(1)
                start = tail
                boxes[0], boxes[1] = 0, tail
                tail = _bottom_up_parallel(in_indptr, in_indices, indptr, queue, key, cur << _LEVEL_SHIFT,
                                           bitmaps[a], bitmaps[1 - a], threads, boxes, sums)
                a = 1 - a
                looked, next_arcs = sums[0].sum(), sums[1].sum()
                arcs += looked
                head = start
                if head == tail or looked > leave_bottom_up * next_arcs:
                    break
            continue
        stop = tail
        cur += np.uint64(1)
        code = cur << _LEVEL_SHIFT
        if frontier_arcs >= parallel_arcs:
            boxes[0], boxes[1] = 0, tail
            tail = _top_down_parallel(indptr, indices, queue, head, stop, key, code, chunk_arcs, threads, boxes)
            done = frontier_arcs
        elif branchy * found < done:
            tail, done = _top_down_branchy(indptr, indices, queue, head, stop, tail, key, code)
        else:
            tail, done = _top_down_branchless(indptr, indices, queue, head, stop, tail, key, code)
        unexplored -= done
        arcs += done
        found = tail - stop
        head = stop
    ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], ctx[6] = head, tail, cur, unexplored, arcs, found, done
    if n >= parallel_arcs:
        _finish(state, parent, threads)
    else:
        _finish_range(state, parent, 0, n)
    return 0


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
from numba.cpython.unsafe.numbers import trailing_zeros

from ._jit import njit, prange
from .cpu_atomic import atomic_add, atomic_min, atomic_or
from .cpu_bfs import (_AHEAD_IN_ROWS, _LEVEL_SHIFT, UNREACHED_KEY, _finish_range, _parent_in, _prefetch,
                      _top_down_branchless, _top_down_branchy)
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
_AHEAD_KEYS = 16  # prefetch distance of the targets' keys, in arcs
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


@njit(**_OPTS)
def _candidates(indptr, indices, queue, head, f, key, code, chunk_arcs, lo, hi, cv, ck):
    """The arcs [lo, hi) of the level queue[head:head + f] (numbered in queue order) whose key
    offered, ``code | u``, is below the target's key now: targets into ``cv``, keys into ``ck``.
    No atomics, so the keys' loads overlap (prefetched ahead too); :func:`_top_down_parallel` then
    offers them, their lines in cache. Returns how many."""
    h, j = arc_position(indptr, queue, head, f, chunk_arcs, lo)
    rem = hi - lo
    m = 0
    last = indices.size - _AHEAD_KEYS
    while rem > 0:
        u = queue[h]
        take = min(indptr[u + 1] - j, rem)
        cand = code | np.uint64(u)
        for jj in range(j, j + take):
            if jj < last:
                _prefetch(key, indices[jj + _AHEAD_KEYS])
            v = indices[jj]
            if key[v] > cand:
                cv[m] = v
                ck[m] = cand
                m += 1
        rem -= take
        h += 1
        if rem > 0:
            j = indptr[queue[h]]
    return m


@njit(**_PAR)
def _top_down_parallel(indptr, indices, queue, head, stop, key, code, chunk_arcs, threads, boxes):
    """Expand the level queue[head:stop] over the out-CSR on ``threads`` threads, each taking
    ARC_CHUNK arcs at a time (a hub's row is shared too): the chunk's candidates first
    (:func:`_candidates`), then an atomic minimum each. An atomic orders the loads around it, so
    with one in the scan's loop each target's cache miss came after the last: on 16 threads of
    an H100 host the anchors' R-MAT-22's first parallel levels (23K to 176K arcs, each timed from
    one snapshot) took 0.50-1.07 ms that way, 0.38-0.80 ms in two steps. ``boxes``: [0, the
    queue's tail] (shared counters, made by the caller: numba does not see an atomic write into
    an array it allocated here). Returns the new tail."""
    f = stop - head
    total = chunk_arcs[(f + VERTEX_CHUNK - 1) // VERTEX_CHUNK]
    chunks = (total + ARC_CHUNK - 1) // ARC_CHUNK
    counter, tailbox = boxes[0:1], boxes[1:2]
    for _t in prange(threads):
        buf = np.empty(QUEUE_BUFFER, queue.dtype)
        cv = np.empty(ARC_CHUNK, queue.dtype)
        ck = np.empty(ARC_CHUNK, np.uint64)
        b = 0
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * ARC_CHUNK
            m = _candidates(indptr, indices, queue, head, f, key, code, chunk_arcs, lo, min(lo + ARC_CHUNK, total),
                            cv, ck)
            for i in range(m):
                v = cv[i]
                if key[v] > ck[i] and atomic_min(key, v, ck[i]) == UNREACHED_KEY:
                    b = push(queue, tailbox, buf, b, v)
        if b:
            flush(queue, tailbox, buf, b)
    return tailbox[0]


@njit(**_PAR)
def _set_bits(queue, lo, hi, bits):
    """``bits``: the bitmap of the vertices queue[lo:hi]."""
    for w in prange(bits.size):
        bits[w] = 0
    chunks = (hi - lo + RANGE_CHUNK - 1) // RANGE_CHUNK
    for c in prange(chunks):
        for h in range(lo + c * RANGE_CHUNK, min(hi, lo + (c + 1) * RANGE_CHUNK)):
            u = queue[h]
            atomic_or(bits, u >> 6, _ONE << np.uint64(u & 63))


@njit(**_PAR)
def _bottom_up_parallel(in_indptr, in_indices, indptr, queue, key, code, front, after, seen, threads, boxes, sums):
    """One bottom-up level on ``threads`` threads: every vertex in neither ``seen`` (reached before
    the frontier, or known to have no in-arc) nor ``front`` (the frontier) looks through its
    in-arcs (sources ascending) for one whose bit is set in ``front`` and stops at the first; found
    vertices are queued and ``after`` becomes their bitmap, ``seen`` the next level's (``seen |
    front``, and the vertices met with no in-arc: never reached, unless a root, which is seen).
    Threads own whole words of ``after`` and ``seen`` and only read ``front``. A level reads a
    bitmap word per 64 vertices, not every vertex's key: once most vertices are reached, a level
    costs what the unreached ones do. Returns the new tail; ``boxes``: as for
    :func:`_top_down_parallel`; ``sums`` (2 x threads) gets each thread's arcs looked at and
    out-arcs of the vertices it found."""
    n = key.size
    words = front.size
    per = RANGE_CHUNK >> 6
    chunks = (words + per - 1) // per
    counter, tailbox = boxes[0:1], boxes[1:2]
    tail_mask = (_ONE << np.uint64(n & 63)) - _ONE if n & 63 else ~np.uint64(0)
    for t in prange(threads):
        buf = np.empty(QUEUE_BUFFER, queue.dtype)
        b = 0
        looked = 0
        found_arcs = 0
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            for w in range(c * per, min(words, (c + 1) * per)):
                done = seen[w] | front[w]
                todo = ~done if w < words - 1 else ~done & tail_mask
                word = np.uint64(0)
                while todo:
                    bit = todo & (~todo + _ONE)  # the lowest vertex still to do
                    todo ^= bit
                    v = (w << 6) | np.int64(trailing_zeros(bit))
                    _prefetch(in_indices, in_indptr[min(v + _AHEAD_IN_ROWS, n)])
                    if in_indptr[v] == in_indptr[v + 1]:
                        done |= bit  # no in-arc: never reached
                        continue
                    u, arcs = _parent_in(in_indptr, in_indices, front, v)
                    looked += arcs
                    if u >= 0:
                        key[v] = code | np.uint64(u)
                        word |= bit
                        found_arcs += indptr[v + 1] - indptr[v]
                        b = push(queue, tailbox, buf, b, v)
                after[w] = word
                seen[w] = done
        if b:
            flush(queue, tailbox, buf, b)
        sums[0, t] = looked
        sums[1, t] = found_arcs
    return tailbox[0]


@njit(**_PAR)
def _finish(state, parent, threads, int_unreached):
    """Keys to levels (inf where unreached, or int64: :func:`.cpu_bfs._finish_range`) and parents
    (-1 at the root and where unreached)."""
    n = state.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        _finish_range(state, parent, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK), int_unreached)


@njit(**_OPTS)
def bfs_tree_parallel(indptr, indices, in_indptr, in_indices, bottom_up, alpha, min_arcs, branchy, leave_bottom_up,
                      max_degree, key, queue, ctx, state, parent, threads, parallel_arcs, chunk_arcs, bitmaps,
                      int_unreached):
    """:func:`.cpu_bfs.bfs_tree` (same arguments, calls and results) with levels of at least
    ``parallel_arcs`` arcs (top-down: the frontier's out-arcs; bottom-up: every level) on
    ``threads`` threads. ``chunk_arcs``: scratch of n / VERTEX_CHUNK + 2 int64; ``bitmaps``: 3 x
    (n + 63) / 64 uint64 (for bottom-up levels: the frontier's, the next's, and the vertices seen
    before the frontier). ``int_unreached``: as for :func:`.cpu_bfs.bfs_tree`."""
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
            _set_bits(queue, 0, head, bitmaps[2])  # queue[:head]: the vertices reached before the frontier
            _set_bits(queue, head, tail, bitmaps[0])
            a = 0  # bitmaps[a]: the frontier; bitmaps[1 - a]: the next
            while True:
                cur += np.uint64(1)
                start = tail
                boxes[0], boxes[1] = 0, tail
                tail = _bottom_up_parallel(in_indptr, in_indices, indptr, queue, key, cur << _LEVEL_SHIFT,
                                           bitmaps[a], bitmaps[1 - a], bitmaps[2], threads, boxes, sums)
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
        _finish(state, parent, threads, int_unreached)
    else:
        _finish_range(state, parent, 0, n, int_unreached)
    return 0


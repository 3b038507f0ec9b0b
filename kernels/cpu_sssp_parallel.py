"""Min-relaxation to the fixed point (SSSP, and every ``propagate_min`` with non-negative
increments) over a CSR in memory by delta-stepping (Meyer and Sanders; GAP's ``sssp``) on numba's
threads, with the shortest-path tree's strict parents built on the way.

A vertex's state is one 128-bit word: its value, as a uint64 whose order is the float64 order
(:func:`_order`), above its parent. An arc u->v offers v ``(d(u) + w, u)`` — or ``(d(u) + w, n)``
where the sum is not larger than d(u) (a zero weight: no strict parent) — and v keeps the smallest
pair offered, by a 128-bit compare-and-swap. The values reach the same fixed point whatever order
arcs are relaxed in (each is the smallest rounded path sum, rounding being monotone), and a parent
offered with a value that turned out final is a tight arc from a vertex whose final value is
smaller, so v ends with the smallest u whose arc is strictly tight: the parents of
:meth:`Engine.tight_parents` before its zero-weight plateaus (``n`` there, finished by
:func:`.cpu_compiled.resolve_plateaus`).

Vertices wait in a near pile (values below the bound) and a far pile; each round expands the near
pile, and when it is empty the bound rises to the smallest value waiting in the far pile plus
``delta``. A byte a vertex says where it waits (0 nowhere, 1 near, 2 far), so a vertex is queued
at most once a round and the piles hold at most n vertices each (the far pile's entries whose byte
says otherwise are left over from earlier moves and dropped). Rounds with few arcs run on the
calling thread; larger ones share the frontier's arcs among threads in chunks taken from a shared
counter, as :mod:`.cpu_bfs_parallel` does.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cpu_atomic import atomic_add, atomic_exchange, cas, cas128, load_acquire
from .cpu_bfs import _bits, _from_bits, _prefetch

_OPTS = dict(cache=True, nogil=True)
_PAR = dict(parallel=True, **_OPTS)

VERTEX_CHUNK = 256  # frontier vertices per entry of the arc prefix
ARC_CHUNK = 4096  # arcs a thread takes at a time
RANGE_CHUNK = 4096  # vertices a thread takes at a time in passes over every vertex or the far pile
BUFFER = 512  # vertices a thread queues before it reserves their slots
# Prefetch distances while scanning a frontier: its vertices' offsets and rows (in frontier
# slots ahead) and the values of arcs' targets (in arcs ahead).
_AHEAD_OFFSETS, _AHEAD_ROW, _AHEAD_KEYS = 16, 8, 16
_SIGN = np.uint64(1) << np.uint64(63)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_NEAR, _FAR, _TAKEN = np.uint8(1), np.uint8(2), np.uint8(3)


@njit(**_OPTS)
def _order(x):
    """A float64 as a uint64 whose unsigned order is the float order (-0.0 just below +0.0)."""
    b = _bits(x)
    return b ^ _ALL if b >> np.uint64(63) else b | _SIGN


@njit(**_OPTS)
def _value(k):
    return _from_bits(k ^ _SIGN if k >> np.uint64(63) else k ^ _ALL)


@njit(**_OPTS)
def _flush(pile, box, buf, b):
    at = atomic_add(box, 0, b)
    for i in range(b):
        pile[at + i] = buf[i]


@njit(**_OPTS)
def _scan(indptr, indices, weights, weighted, plus, key, cur, du, chunk_arcs, f, lo, hi, n, cv, cc, cp):
    """The arcs [lo, hi) of the frontier cur[:f] (its arcs numbered in frontier order; du: each
    frontier vertex's value when the round began) whose sum is not above the target's value
    now: their targets, sums and offered parents into cv, cc, cp (hi - lo slots). A loop with no
    atomics, so that LLVM schedules its loads freely (with :func:`_offer`'s compare-and-swap in
    it, a pass over every arc took twice as long). Returns how many."""
    a, z = 0, (f + VERTEX_CHUNK - 1) // VERTEX_CHUNK
    while z - a > 1:
        mid = (a + z) // 2
        if chunk_arcs[mid] <= lo:
            a = mid
        else:
            z = mid
    pos = chunk_arcs[a]
    i = a * VERTEX_CHUNK
    while True:
        u = cur[i]
        d = indptr[u + 1] - indptr[u]
        if pos + d > lo:
            break
        pos += d
        i += 1
    j = indptr[cur[i]] + (lo - pos)
    rem = hi - lo
    m = 0
    last = indices.size - _AHEAD_KEYS
    while rem > 0:
        u = cur[i]
        if i + _AHEAD_OFFSETS < f:
            _prefetch(indptr, cur[i + _AHEAD_OFFSETS])
        if i + _AHEAD_ROW < f:
            row = indptr[cur[i + _AHEAD_ROW]]
            _prefetch(indices, row)
            if weighted:
                _prefetch(weights, row)
        take = min(indptr[u + 1] - j, rem)
        d = du[i]
        for jj in range(j, j + take):
            if jj < last:
                _prefetch(key, 2 * indices[jj + _AHEAD_KEYS] + 1)
            v = indices[jj]
            cand = d + (weights[jj] if weighted else plus) + 0.0  # (+0.0: never -0.0)
            if _order(cand) <= key[2 * v + 1]:
                cv[m] = v
                cc[m] = cand
                cp[m] = u if d < cand else n
                m += 1
        rem -= take
        i += 1
        if rem > 0:
            j = indptr[cur[i]]
    return m


@njit(**_OPTS)
def _offer(key, where, cv, cc, cp, m, bound, near, near_box, near_buf, nb, far, far_box, far_buf, fb):
    """Offer each candidate ``(cc[i], cp[i])`` to vertex cv[i] (the smaller pair stays, by a
    128-bit compare-and-swap); a vertex whose value dropped is queued (near below ``bound``, else
    far) through the thread's buffers. Returns the buffers' fill."""
    for i in range(m):
        v = cv[i]
        cand = cc[i]
        cb = _order(cand)
        pk = np.uint64(cp[i])
        old_hi = load_acquire(key, 2 * v + 1)  # the parent read after it is as new at least
        old_lo = key[2 * v]
        if cb > old_hi or (cb == old_hi and pk >= old_lo):
            continue
        while True:
            got_lo, got_hi = cas128(key, v, old_lo, old_hi, pk, cb)
            if got_lo == old_lo and got_hi == old_hi:
                break
            old_lo, old_hi = got_lo, got_hi
            if cb > old_hi or (cb == old_hi and pk >= old_lo):
                break
        if cb >= old_hi:  # not lowered (lost to a smaller pair, or only a smaller parent)
            continue
        if cand < bound:
            while True:
                s = where[v]
                if s == _NEAR:
                    break
                if cas(where, v, s, _NEAR) == s:
                    near_buf[nb] = v
                    nb += 1
                    if nb == BUFFER:
                        _flush(near, near_box, near_buf, nb)
                        nb = 0
                    break
        elif where[v] == 0 and cas(where, v, 0, _FAR) == 0:
            far_buf[fb] = v
            fb += 1
            if fb == BUFFER:
                _flush(far, far_box, far_buf, fb)
                fb = 0
    return nb, fb


@njit(**_OPTS)
def _relax(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, lo, hi, bound, n,
           near, near_box, far, far_box, scratch):
    """Relax arcs [lo, hi) of the frontier cur[:f], ARC_CHUNK at a time, through one thread's
    ``scratch`` (:func:`_scratch`), whose queue buffers are left for the caller to flush."""
    cv, cc, cp, near_buf, far_buf, fill = scratch
    nb, fb = fill[0], fill[1]
    for at in range(lo, hi, ARC_CHUNK):
        m = _scan(indptr, indices, weights, weighted, plus, key, cur, du, chunk_arcs, f, at, min(hi, at + ARC_CHUNK),
                  n, cv, cc, cp)
        nb, fb = _offer(key, where, cv, cc, cp, m, bound, near, near_box, near_buf, nb, far, far_box, far_buf, fb)
    fill[0], fill[1] = nb, fb


@njit(**_OPTS)
def _scratch(ids):
    """One thread's candidates (targets, sums, parents) and queue buffers (near, far, and their fill)."""
    return (np.empty(ARC_CHUNK, ids.dtype), np.empty(ARC_CHUNK), np.empty(ARC_CHUNK, np.uint64),
            np.empty(BUFFER, ids.dtype), np.empty(BUFFER, ids.dtype), np.zeros(2, np.int64))


@njit(**_OPTS)
def _drain(scratch, near, near_box, far, far_box):
    _cv, _cc, _cp, near_buf, far_buf, fill = scratch
    if fill[0]:
        _flush(near, near_box, near_buf, fill[0])
    if fill[1]:
        _flush(far, far_box, far_buf, fill[1])
    fill[0] = fill[1] = 0


@njit(**_PAR)
def _relax_parallel(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, total, bound, n,
                    near, far, boxes, threads):
    """The round's arcs on ``threads`` threads, ARC_CHUNK at a time from a shared counter.
    ``boxes``: [chunk counter, near pile's fill, far pile's fill], made by the caller (numba does
    not see an atomic write into an array allocated here)."""
    chunks = (total + ARC_CHUNK - 1) // ARC_CHUNK
    counter, near_box, far_box = boxes[0:1], boxes[1:2], boxes[2:3]
    for _t in prange(threads):
        scratch = _scratch(near)
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * ARC_CHUNK
            _relax(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, lo,
                   min(lo + ARC_CHUNK, total), bound, n, near, near_box, far, far_box, scratch)
        _drain(scratch, near, near_box, far, far_box)


@njit(**_PAR)
def light_counts(indptr, weights, delta, counts):
    """``counts[u + 1]``: u's arcs lighter than ``delta``."""
    n = indptr.size - 1
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        for u in range(c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK)):
            k = 0
            for j in range(indptr[u], indptr[u + 1]):
                k += weights[j] < delta
            counts[u + 1] = k


@njit(**_PAR)
def light_fill(indptr, indices, weights, delta, light_indptr, light_indices, light_weights):
    """The arcs lighter than ``delta``, in CSR order, into the light CSR whose offsets are given."""
    n = indptr.size - 1
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        for u in range(c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK)):
            at = light_indptr[u]
            for j in range(indptr[u], indptr[u + 1]):
                if weights[j] < delta:
                    light_indices[at] = indices[j]
                    light_weights[at] = weights[j]
                    at += 1


@njit(**_OPTS)
def _take_chunk(indptr, key, where, cur, lo, hi, du, settle, seen, stamp, settled, settled_box, buf):
    """Frontier vertices cur[lo:hi]: each one's value now into ``du``; with ``settle`` (a round's
    near pile) its byte set to taken (atomically: a vertex lowered from here on is queued again)
    and, the first time this bucket takes it (``seen`` != ``stamp``), it is listed in
    ``settled`` for the bucket's heavy arcs. Returns the chunk's arcs."""
    s = 0
    b = 0
    for i in range(lo, hi):
        u = cur[i]
        if settle:
            atomic_exchange(where, u, _TAKEN)
            if seen[u] != stamp:
                seen[u] = stamp
                buf[b] = u
                b += 1
        du[i] = _value(key[2 * u + 1])
        s += indptr[u + 1] - indptr[u]
    if b:
        _flush(settled, settled_box, buf, b)
    return s


@njit(**_OPTS)
def _take_serial(indptr, key, where, cur, f, du, chunk_arcs, settle, seen, stamp, settled, settled_box):
    """:func:`_take_chunk` over the frontier cur[:f], and ``chunk_arcs``, the prefix of its arcs by
    VERTEX_CHUNK vertices. Returns the arcs."""
    buf = np.empty(VERTEX_CHUNK, cur.dtype)
    chunks = (f + VERTEX_CHUNK - 1) // VERTEX_CHUNK
    chunk_arcs[0] = 0
    for c in range(chunks):
        lo = c * VERTEX_CHUNK
        chunk_arcs[c + 1] = chunk_arcs[c] + _take_chunk(indptr, key, where, cur, lo, min(f, lo + VERTEX_CHUNK), du,
                                                        settle, seen, stamp, settled, settled_box, buf)
    return chunk_arcs[chunks]


@njit(**_PAR)
def _take_parallel(indptr, key, where, cur, f, du, chunk_arcs, settle, seen, stamp, settled, settled_box):
    chunks = (f + VERTEX_CHUNK - 1) // VERTEX_CHUNK
    for c in prange(chunks):
        lo = c * VERTEX_CHUNK
        buf = np.empty(VERTEX_CHUNK, cur.dtype)
        chunk_arcs[c + 1] = _take_chunk(indptr, key, where, cur, lo, min(f, lo + VERTEX_CHUNK), du, settle, seen,
                                        stamp, settled, settled_box, buf)
    chunk_arcs[0] = 0
    for c in range(chunks):
        chunk_arcs[c + 1] += chunk_arcs[c]
    return chunk_arcs[chunks]


@njit(**_OPTS)
def _far_minimum(key, where, far, size):
    best = _ALL
    for i in range(size):
        v = far[i]
        if where[v] == _FAR:
            best = min(best, key[2 * v + 1])
    return best


@njit(**_OPTS)
def _split_far(key, where, far, size, bound, near, kept):
    """The far pile's vertices below ``bound`` into ``near`` (their byte set to near), the others
    still waiting far into ``kept``; leftovers dropped. Returns (near, kept) counts."""
    nf = nk = 0
    for i in range(size):
        v = far[i]
        if where[v] != _FAR:
            continue
        if _value(key[2 * v + 1]) < bound:
            if cas(where, v, _FAR, _NEAR) == _FAR:
                near[nf] = v
                nf += 1
        else:
            kept[nk] = v
            nk += 1
    return nf, nk


@njit(**_PAR)
def _far_minimum_parallel(key, where, far, size, threads):
    chunks = (size + RANGE_CHUNK - 1) // RANGE_CHUNK
    best = np.full(chunks, _ALL)
    for c in prange(chunks):
        best[c] = _far_minimum(key, where, far[c * RANGE_CHUNK:min(size, (c + 1) * RANGE_CHUNK)],
                               min(size, (c + 1) * RANGE_CHUNK) - c * RANGE_CHUNK)
    return best.min() if chunks else _ALL


@njit(**_PAR)
def _split_far_parallel(key, where, far, size, bound, near, kept, boxes, threads):
    """:func:`_split_far` on ``threads`` threads (boxes: [chunk counter, near fill, kept fill])."""
    chunks = (size + RANGE_CHUNK - 1) // RANGE_CHUNK
    counter, near_box, kept_box = boxes[0:1], boxes[1:2], boxes[2:3]
    for _t in prange(threads):
        near_buf = np.empty(BUFFER, near.dtype)
        kept_buf = np.empty(BUFFER, kept.dtype)
        nb = kb = 0
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            for i in range(c * RANGE_CHUNK, min(size, (c + 1) * RANGE_CHUNK)):
                v = far[i]
                if where[v] != _FAR:
                    continue
                if _value(key[2 * v + 1]) < bound:
                    if cas(where, v, _FAR, _NEAR) == _FAR:
                        near_buf[nb] = v
                        nb += 1
                        if nb == BUFFER:
                            _flush(near, near_box, near_buf, nb)
                            nb = 0
                else:
                    kept_buf[kb] = v
                    kb += 1
                    if kb == BUFFER:
                        _flush(kept, kept_box, kept_buf, kb)
                        kb = 0
        if nb:
            _flush(near, near_box, near_buf, nb)
        if kb:
            _flush(kept, kept_box, kept_buf, kb)


@njit(**_PAR)
def _load(state, parent, track, key, where):
    n = state.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        for v in range(c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK)):
            key[2 * v] = np.uint64(parent[v]) if track else np.uint64(n)
            key[2 * v + 1] = _order(state[v])
            where[v] = 0


@njit(**_PAR)
def _store(state, parent, track, key):
    n = state.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        for v in range(c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK)):
            state[v] = _value(key[2 * v + 1])
            if track:
                parent[v] = np.int64(key[2 * v])


@njit(**_OPTS)
def _round(indptr, indices, weights, weighted, plus, key, where, cur, f, du, chunk_arcs, bound, settle, n,
           nxt, far, nfar, boxes, threads, parallel_arcs, seen, stamp, settled, scratch):
    """One round: the frontier cur[:f] taken (``settle``: the near pile, over the light CSR; else
    a settled bucket's vertices, over the whole CSR) and relaxed. ``boxes``: [counter, next near
    pile's fill, far pile's fill, settled's fill]. Returns the arcs."""
    box = boxes[3:4]
    if f >= VERTEX_CHUNK * 64 and threads > 1:
        total = _take_parallel(indptr, key, where, cur, f, du, chunk_arcs, settle, seen, stamp, settled, box)
    else:
        total = _take_serial(indptr, key, where, cur, f, du, chunk_arcs, settle, seen, stamp, settled, box)
    boxes[0], boxes[1], boxes[2] = 0, 0, nfar
    if total >= parallel_arcs and threads > 1:
        _relax_parallel(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, total, bound, n,
                        nxt, far, boxes, threads)
    elif total:
        _relax(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, 0, total, bound, n,
               nxt, boxes[1:2], far, boxes[2:3], scratch)
        _drain(scratch, nxt, boxes[1:2], far, boxes[2:3])
    return total


@njit(**_OPTS)
def delta_stepping(indptr, indices, weights, light_indptr, light_indices, light_weights, weighted, plus, frontier,
                   state, parent, track, delta, threads, parallel_arcs, key, where, near, far, settled, seen, du,
                   chunk_arcs):
    """Relax ``state[v] = min(state[v], state[u] + w)`` to the fixed point from ``frontier``
    (distinct vertices), increments non-negative, buckets ``delta`` wide; rounds with at least
    ``parallel_arcs`` arcs (and passes over at least that many vertices) on ``threads`` threads.
    With ``track``, ``parent`` (n everywhere but a single frontier vertex, its own parent) gets
    the strict parents (n where a vertex has none; see the module).

    The light CSR holds the arcs lighter than ``delta`` (:func:`light_counts`, :func:`light_fill`):
    rounds relax them while the near pile lasts; then, the bucket's values final, each vertex it
    took relaxes its whole row once (Meyer and Sanders's light and heavy arcs: a vertex taken again
    within a bucket scans only its light arcs again).

    Scratch: ``key`` 2n uint64, 16-byte aligned; ``where`` n uint8; ``near`` (2, n + 1) and
    ``far`` (2, 2n + 1) ids (the piles and their next versions: a round queues each vertex at
    most once, near or far, and the far pile is cleared of leftovers once it holds n);
    ``settled`` n + 1 ids; ``seen`` n uint32 (zeros); ``du`` n float64; ``chunk_arcs`` n /
    VERTEX_CHUNK + 2 int64. Returns (rounds, arcs scanned)."""
    n = state.size
    big = n >= parallel_arcs and threads > 1
    if big:
        _load(state, parent, track, key, where)
    else:
        for v in range(n):
            key[2 * v] = np.uint64(parent[v]) if track else np.uint64(n)
            key[2 * v + 1] = _order(state[v])
            where[v] = 0
    cur, nxt, far, kept = near[0], near[1], far[0], far[1]
    scratch = _scratch(cur)
    boxes = np.zeros(4, np.int64)
    start = np.inf
    for i in range(frontier.size):
        start = min(start, state[frontier[i]])
    bound = start + delta
    if not bound > start:
        bound = np.nextafter(start, np.inf)
    f = nfar = 0
    for i in range(frontier.size):
        v = frontier[i]
        if not state[v] < np.inf:
            continue
        if state[v] < bound:
            where[v] = _NEAR
            cur[f] = v
            f += 1
        else:
            where[v] = _FAR
            far[nfar] = v
            nfar += 1
    rounds = arcs = 0
    stamp = np.uint32(1)
    while True:
        if f == 0:  # the bucket is settled: each vertex it took scans its row, then the bound rises
            if boxes[3]:
                rounds += 1
                arcs += _round(indptr, indices, weights, weighted, plus, key, where, settled, boxes[3], du,
                               chunk_arcs, bound, False, n, nxt, far, nfar, boxes, threads, parallel_arcs, seen, stamp,
                               settled, scratch)
                f, nfar = boxes[1], boxes[2]
                boxes[3] = 0
            stamp += np.uint32(1)
            if f:  # a heavy arc's sum below the bound (rounding: bound = low + delta rounded): the
                cur, nxt = nxt, cur  # bucket goes on, its vertices listed again for their heavy arcs
                continue
            if nfar == 0:
                break
            if nfar >= parallel_arcs and threads > 1:
                least = _far_minimum_parallel(key, where, far, nfar, threads)
            else:
                least = _far_minimum(key, where, far, nfar)
            if least == _ALL:
                break
            low = _value(least)
            bound = low + delta
            if not bound > low:
                bound = np.nextafter(low, np.inf)
            if nfar >= parallel_arcs and threads > 1:
                boxes[0], boxes[1], boxes[2] = 0, 0, 0
                _split_far_parallel(key, where, far, nfar, bound, cur, kept, boxes, threads)
                f, nfar = boxes[1], boxes[2]
            else:
                f, nfar = _split_far(key, where, far, nfar, bound, cur, kept)
            far, kept = kept, far
            continue
        rounds += 1
        arcs += _round(light_indptr, light_indices, light_weights, weighted, plus, key, where, cur, f, du, chunk_arcs,
                       bound, True, n, nxt, far, nfar, boxes, threads, parallel_arcs, seen, stamp, settled, scratch)
        f, nfar = boxes[1], boxes[2]
        cur, nxt = nxt, cur
        if nfar > n:  # the far pile may grow by n a round: drop its leftovers
            nk = 0
            for i in range(nfar):
                v = far[i]
                if where[v] == _FAR:
                    where[v] = 4  # seen: a second entry of v is a leftover too
                    kept[nk] = v
                    nk += 1
            for i in range(nk):
                where[kept[i]] = _FAR
            far, kept, nfar = kept, far, nk
    if big:
        _store(state, parent, track, key)
    else:
        for v in range(n):
            state[v] = _value(key[2 * v + 1])
            if track:
                parent[v] = np.int64(key[2 * v])
    return rounds, arcs

"""The arcs of a delta-stepping round relaxed on numba's threads (:mod:`.cpu_sssp_parallel`).

A vertex's state is one 128-bit word: its value, as a uint64 whose order is the float64 order
(:func:`_order`), above its parent. An arc u->v offers v ``(d(u) + w, u)`` — or ``(d(u) + w, n)``
where the sum is not larger than d(u) (a zero weight: no strict parent) — and v keeps the smallest
pair offered, by a 128-bit compare-and-swap (:func:`.cpu_atomic.cas128`). A vertex whose value
dropped is queued near (below the round's bound) or far, through each thread's buffers, its byte
in ``where`` saying where it waits so that a round queues it at most once; in a light round, one
dropped below the bound that has no light arcs is listed for its heavy arcs at once instead. The
smallest value a vertex dropped to at or above the bound is kept (``far_low``): with the smallest
value left in the far pile when it was last split, it is the pile's minimum (or below it, where
such a vertex went near since), so the next bucket's bound needs no pass over the pile.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit, prange
from .cpu_atomic import atomic_add, cas, cas128, load_acquire
from .cpu_bfs import _bits, _from_bits, _prefetch
from .cpu_chunks import arc_position, flush, push

_OPTS = dict(cache=True, nogil=True)
_PAR = dict(parallel=True, **_OPTS)

ARC_CHUNK = 4096  # arcs a thread takes at a time
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
def _scan(indptr, indices, weights, weighted, plus, key, cur, du, chunk_arcs, f, lo, hi, n, cv, cc, cp):
    """The arcs [lo, hi) of the frontier cur[:f] (its arcs numbered in frontier order; du: each
    frontier vertex's value when the round began) whose sum is not above the target's value
    now: their targets, sums and offered parents into cv, cc, cp (hi - lo slots). A loop with no
    atomics, so that LLVM schedules its loads freely (with :func:`_offer`'s compare-and-swap in
    it, a pass over every arc took twice as long). Returns how many."""
    i, j = arc_position(indptr, cur, 0, f, chunk_arcs, lo)
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
def _offer(key, where, cv, cc, cp, m, bound, piles, scratch, low, direct, indptr, seen, stamp):
    """Offer each candidate ``(cc[i], cp[i])`` to vertex cv[i] (the smaller pair stays, by a
    128-bit compare-and-swap); a vertex whose value dropped is queued (near below ``bound``, else
    far) through the thread's buffers in ``scratch``. ``piles``: (near, its fill box, far, its
    fill box, settled, its fill box). With ``direct`` (a light round; ``indptr`` the light CSR's
    offsets), a vertex dropped below the bound that has no light arcs and waits nowhere or far is
    taken at once and listed in ``settled`` for its heavy arcs (``seen`` set to ``stamp``): a
    round would take it only to relax nothing. ``low``: the smallest ordered value a vertex dropped
    to at or above ``bound`` so far. Returns ``low``."""
    near, near_box, far, far_box, settled, settled_box = piles
    near_buf, far_buf, settled_buf, fill = scratch[3], scratch[4], scratch[5], scratch[6]
    nb, fb, sb = fill[0], fill[1], fill[2]
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
                if direct and s != _TAKEN and indptr[v + 1] == indptr[v]:
                    if cas(where, v, s, _TAKEN) == s:
                        seen[v] = stamp
                        sb = push(settled, settled_box, settled_buf, sb, v)
                        break
                elif cas(where, v, s, _NEAR) == s:
                    nb = push(near, near_box, near_buf, nb, v)
                    break
        else:
            low = min(low, cb)
            if where[v] == 0 and cas(where, v, 0, _FAR) == 0:
                fb = push(far, far_box, far_buf, fb, v)
    fill[0], fill[1], fill[2] = nb, fb, sb
    return low


@njit(**_OPTS)
def _relax(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, lo, hi, bound, n, piles,
           scratch, far_low, slot, direct, seen, stamp):
    """Relax arcs [lo, hi) of the frontier cur[:f], ARC_CHUNK at a time, through one thread's
    ``scratch`` (:func:`_scratch`), whose queue buffers are left for the caller to flush
    (:func:`_drain`); ``piles``, ``direct``, ``seen`` and ``stamp`` as :func:`_offer` takes them;
    ``far_low[slot]`` lowered to the smallest ordered value a vertex dropped to at or above the bound."""
    cv, cc, cp = scratch[0], scratch[1], scratch[2]
    low = far_low[slot]
    for at in range(lo, hi, ARC_CHUNK):
        m = _scan(indptr, indices, weights, weighted, plus, key, cur, du, chunk_arcs, f, at, min(hi, at + ARC_CHUNK),
                  n, cv, cc, cp)
        low = _offer(key, where, cv, cc, cp, m, bound, piles, scratch, low, direct, indptr, seen, stamp)
    far_low[slot] = low


@njit(**_OPTS)
def _scratch(ids):
    """One thread's candidates (targets, sums, parents), queue buffers (near, far, settled) and
    their fill."""
    return (np.empty(ARC_CHUNK, ids.dtype), np.empty(ARC_CHUNK), np.empty(ARC_CHUNK, np.uint64),
            np.empty(BUFFER, ids.dtype), np.empty(BUFFER, ids.dtype), np.empty(BUFFER, ids.dtype),
            np.zeros(3, np.int64))


@njit(**_OPTS)
def _drain(scratch, piles):
    """A thread's queue buffers flushed onto ``piles`` (as :func:`_offer` takes them)."""
    near, near_box, far, far_box, settled, settled_box = piles
    near_buf, far_buf, settled_buf, fill = scratch[3], scratch[4], scratch[5], scratch[6]
    if fill[0]:
        flush(near, near_box, near_buf, fill[0])
    if fill[1]:
        flush(far, far_box, far_buf, fill[1])
    if fill[2]:
        flush(settled, settled_box, settled_buf, fill[2])
    fill[0] = fill[1] = fill[2] = 0


@njit(**_PAR)
def _relax_parallel(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, total, bound, n,
                    near, far, settled, boxes, threads, far_low, direct, seen, stamp):
    """The round's arcs on ``threads`` threads, ARC_CHUNK at a time from a shared counter.
    ``boxes``: [chunk counter, near pile's fill, far pile's fill, settled's fill], made by the
    caller (numba does not see an atomic write into an array allocated here); ``far_low``: a slot a
    thread, as :func:`_relax`'s."""
    chunks = (total + ARC_CHUNK - 1) // ARC_CHUNK
    counter = boxes[0:1]
    piles = (near, boxes[1:2], far, boxes[2:3], settled, boxes[3:4])
    for _t in prange(threads):
        scratch = _scratch(near)
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * ARC_CHUNK
            _relax(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, lo,
                   min(lo + ARC_CHUNK, total), bound, n, piles, scratch, far_low, _t, direct, seen, stamp)
        _drain(scratch, piles)

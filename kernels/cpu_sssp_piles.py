"""The piles of delta-stepping (:mod:`.cpu_sssp_parallel`) on numba's threads: the light CSR (the
arcs lighter than delta), a round's frontier taken (values read, the arc prefix counted, vertices
settled for their heavy arcs), the far pile's split at a new bound, and the state
moved into and out of the 128-bit words of :mod:`.cpu_sssp_relax`."""

from __future__ import annotations

import numpy as np

from ._jit import njit, prange
from .cpu_atomic import atomic_add, cas
from .cpu_bfs import _prefetch
from .cpu_chunks import VERTEX_CHUNK, flush
from .cpu_sssp_relax import _ALL, _FAR, _NEAR, _TAKEN, _order, _value

_OPTS = dict(cache=True, nogil=True)
_PAR = dict(parallel=True, **_OPTS)

RANGE_CHUNK = 4096  # vertices a thread takes at a time in passes over every vertex or the far pile
_AHEAD = 8  # frontier slots ahead whose vertices a take prefetches
_AHEAD_FAR = 16  # far pile entries ahead whose vertices a split prefetches


@njit(**_OPTS)
def light_counts_range(indptr, weights, delta, counts, lo, hi):
    """``counts[u + 1]``: u's arcs lighter than ``delta``, for u in [lo, hi)."""
    for u in range(lo, hi):
        k = 0
        for j in range(indptr[u], indptr[u + 1]):
            k += weights[j] < delta
        counts[u + 1] = k


@njit(**_PAR)
def light_counts(indptr, weights, delta, counts):
    """:func:`light_counts_range` over every vertex on numba's threads."""
    n = indptr.size - 1
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        light_counts_range(indptr, weights, delta, counts, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))


@njit(**_OPTS)
def light_fill_range(indptr, indices, weights, delta, light_indptr, light_indices, light_weights, lo, hi):
    """The arcs lighter than ``delta`` of vertices [lo, hi), in CSR order, into the light CSR whose
    offsets are given."""
    for u in range(lo, hi):
        at = light_indptr[u]
        for j in range(indptr[u], indptr[u + 1]):
            if weights[j] < delta:
                light_indices[at] = indices[j]
                light_weights[at] = weights[j]
                at += 1


@njit(**_PAR)
def light_fill(indptr, indices, weights, delta, light_indptr, light_indices, light_weights):
    """:func:`light_fill_range` over every vertex on numba's threads."""
    n = indptr.size - 1
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        light_fill_range(indptr, indices, weights, delta, light_indptr, light_indices, light_weights,
                         c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))


@njit(**_OPTS)
def _take_chunk(indptr, key, where, cur, lo, hi, du, settle, seen, stamp, settled, settled_box, buf):
    """Frontier vertices cur[lo:hi]: each one's value now into ``du``; with ``settle`` (a round's
    near pile) its byte set to taken (a vertex lowered from here on is queued again; a plain
    store: the frontier's vertices are distinct and no arc is offered while it is taken) and, the
    first time this bucket takes it (``seen`` != ``stamp``), it is listed in ``settled`` for the
    bucket's heavy arcs. The vertices _AHEAD slots on are prefetched (their words, offsets, bytes
    and stamps lie anywhere). Returns the chunk's arcs."""
    s = 0
    b = 0
    for i in range(lo, hi):
        if i + _AHEAD < hi:
            w = cur[i + _AHEAD]
            _prefetch(key, 2 * w + 1)
            _prefetch(indptr, w)
            if settle:
                _prefetch(where, w)
                _prefetch(seen, w)
        u = cur[i]
        if settle:
            where[u] = _TAKEN
            if seen[u] != stamp:
                seen[u] = stamp
                buf[b] = u
                b += 1
        du[i] = _value(key[2 * u + 1])
        s += indptr[u + 1] - indptr[u]
    if b:
        flush(settled, settled_box, buf, b)
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
def _split_far(key, where, far, size, bound, near, kept, light_indptr, settled, seen, stamp):
    """The far pile's vertices below ``bound`` into ``near`` (their byte set to near) or, where
    they have no light arcs (``light_indptr``), taken at once into ``settled`` (``seen`` set to
    ``stamp``: a round would take them only to relax nothing); the others still waiting far into
    ``kept``; leftovers dropped. Returns (near, kept, settled) counts and the smallest ordered value
    kept (all ones where none)."""
    nf = nk = ns = 0
    low = _ALL
    for i in range(size):
        if i + _AHEAD_FAR < size:  # the entries' bytes and words lie anywhere
            w = far[i + _AHEAD_FAR]
            _prefetch(where, w)
            _prefetch(key, 2 * w + 1)
        v = far[i]
        if where[v] != _FAR:
            continue
        k = key[2 * v + 1]
        if _value(k) < bound:
            if light_indptr[v + 1] == light_indptr[v]:
                if cas(where, v, _FAR, _TAKEN) == _FAR:
                    seen[v] = stamp
                    settled[ns] = v
                    ns += 1
            elif cas(where, v, _FAR, _NEAR) == _FAR:
                near[nf] = v
                nf += 1
        else:
            kept[nk] = v
            nk += 1
            low = min(low, k)
    return nf, nk, ns, low


@njit(**_PAR)
def _split_far_parallel(key, where, far, size, bound, near, kept, light_indptr, settled, seen, stamp, boxes, threads,
                        lows):
    """:func:`_split_far` on ``threads`` threads (boxes: [chunk counter, near fill, kept fill,
    settled fill]; ``lows``: each thread's smallest value kept, at least ``threads`` slots)."""
    chunks = (size + RANGE_CHUNK - 1) // RANGE_CHUNK
    counter, near_box, kept_box, settled_box = boxes[0:1], boxes[1:2], boxes[2:3], boxes[3:4]
    for _t in prange(threads):
        near_buf = np.empty(RANGE_CHUNK, near.dtype)
        kept_buf = np.empty(RANGE_CHUNK, kept.dtype)
        settled_buf = np.empty(RANGE_CHUNK, settled.dtype)
        low = _ALL
        while True:
            c = atomic_add(counter, 0, 1)
            if c >= chunks:
                break
            lo = c * RANGE_CHUNK
            hi = min(size, lo + RANGE_CHUNK)
            nb, kb, sb, chunk_low = _split_far(key, where, far[lo:hi], hi - lo, bound, near_buf, kept_buf,
                                               light_indptr, settled_buf, seen, stamp)
            low = min(low, chunk_low)
            if nb:
                flush(near, near_box, near_buf, nb)
            if kb:
                flush(kept, kept_box, kept_buf, kb)
            if sb:
                flush(settled, settled_box, settled_buf, sb)
        lows[_t] = low


@njit(**_OPTS)
def _load_range(state, parent, track, key, where, lo, hi):
    """Vertices [lo, hi) into their 128-bit words (parent n where not tracked), waiting nowhere."""
    n = state.size
    for v in range(lo, hi):
        key[2 * v] = np.uint64(parent[v]) if track else np.uint64(n)
        key[2 * v + 1] = _order(state[v])
        where[v] = 0


@njit(**_PAR)
def _load(state, parent, track, key, where):
    n = state.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        _load_range(state, parent, track, key, where, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))


@njit(**_OPTS)
def _store_range(state, parent, track, key, lo, hi):
    """Vertices [lo, hi)'s values (and parents where tracked) out of their 128-bit words."""
    for v in range(lo, hi):
        state[v] = _value(key[2 * v + 1])
        if track:
            parent[v] = np.int64(key[2 * v])


@njit(**_PAR)
def _store(state, parent, track, key):
    n = state.size
    for c in prange((n + RANGE_CHUNK - 1) // RANGE_CHUNK):
        _store_range(state, parent, track, key, c * RANGE_CHUNK, min(n, (c + 1) * RANGE_CHUNK))

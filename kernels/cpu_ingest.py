"""Compiled (numba) kernels for building stores, used where numba is installed (the caller asks
``cpu.compiled()`` first):

- the generators' edges and weights from the counter-based hash, one edge per iteration of a
  ``prange`` loop: :func:`rmat_edges`, :func:`urand_edges` and :func:`edge_weights` take the
  arguments of their NumPy reference (``cpu_generate.py``, which documents the scheme) and give
  the same arrays bit for bit;
- degree counting in place, in time proportional to the chunk: serially (:func:`count_arcs`),
  or on several threads (:func:`count_side`), the chunk's ids first sorted by vertex range into a
  buffer the size of the chunk, so that each range is counted by one thread. Integer sums: the
  same counts whatever the schedule;
- the input's ids while the builder marks them in a table (for relabelling): their extremes in
  one pass (:func:`id_range`) and the marks (:func:`mark_ids`), on several threads; and their
  internal ids from the table made of them (:func:`lookup_ids`);
- the scatter of a chunk's arcs into buckets (:func:`partition_arcs`): each thread counts its
  slice's arcs per bucket, then copies them to their bucket's place in new arrays, in input order
  within a bucket: the parts of ``buckets.partition``'s NumPy reference, in one copy.
"""

from __future__ import annotations

import contextlib
import threading

import numba
import numpy as np

from ._jit import njit, prange
from .cpu_generate import GAMMA, MIX1, MIX2, STRIDE, WEIGHT_SLOT, u64

_OPTS = dict(cache=True, nogil=True)
_GAMMA = np.uint64(GAMMA)
_MIX1 = np.uint64(MIX1)
_MIX2 = np.uint64(MIX2)
_STRIDE = np.uint64(STRIDE)
_LOW = np.uint64(0xFFFFFFFF)


@njit(**_OPTS)
def _hash(key, counter):
    z = key + counter * _GAMMA
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    return z ^ (z >> np.uint64(31))


@njit(**_OPTS)
def _rmat_ids(key, e, scale, t1, t2, t3):
    base = e * _STRIDE
    s = np.uint64(0)
    d = np.uint64(0)
    h = np.uint64(0)
    for level in range(scale):
        if level % 2 == 0:
            h = _hash(key, base + np.uint64(level // 2))
            u = h & _LOW
        else:
            u = h >> np.uint64(32)
        bit = np.uint64(level)
        s |= np.uint64(u >= t2) << bit
        d |= np.uint64((u >= t1) ^ (u >= t2) ^ (u >= t3)) << bit
    return s, d


@njit(**_OPTS)
def _permute(x, c):
    for r in range(3):
        x = (x + c[2 + 2 * r]) & c[0]
        x ^= x >> c[1]
        x = (x * c[3 + 2 * r]) & c[0]
    return x ^ (x >> c[1])


@njit(parallel=True, **_OPTS)
def _rmat_edges(key, start, scale, t1, t2, t3, perm, permuted, src, dst):
    """R-MAT edges ``start .. start + len(src) - 1`` into ``src`` and ``dst``, the vertices
    renamed by the permutation of constants ``perm`` where ``permuted``."""
    for i in prange(src.size):
        s, d = _rmat_ids(key, start + np.uint64(i), scale, t1, t2, t3)
        if permuted:
            s = _permute(s, perm)
            d = _permute(d, perm)
        src[i] = s
        dst[i] = d


@njit(parallel=True, **_OPTS)
def _urand_edges(key, start, scale, src, dst):
    """Uniform edges: the top ``scale`` bits of slots 0 and 1."""
    shift = np.uint64(63 - scale)
    for i in prange(src.size):
        base = (start + np.uint64(i)) * _STRIDE
        src[i] = (_hash(key, base) >> np.uint64(1)) >> shift
        dst[i] = (_hash(key, base + np.uint64(1)) >> np.uint64(1)) >> shift


@njit(parallel=True, **_OPTS)
def _edge_weights(key, start, out):
    """Weights in (0, 1]: ``((h >> 11) + 1) * 2**-53`` of the weight slot."""
    for i in prange(out.size):
        h = _hash(key, (start + np.uint64(i)) * _STRIDE + np.uint64(WEIGHT_SLOT))
        out[i] = np.float64((h >> np.uint64(11)) + np.uint64(1)) * 2.0**-53


def rmat_edges(key: int, start: int, count: int, scale: int, limits, perm=None, dtype=np.int64):
    """R-MAT edges ``start .. start + count - 1`` (``cpu_generate.rmat_edges``)."""
    src, dst = np.empty(count, dtype), np.empty(count, dtype)
    consts = _NO_PERM if perm is None else np.ascontiguousarray(perm, np.uint64)
    _rmat_edges(u64(key), u64(start), int(scale), *(u64(t) for t in limits), consts, perm is not None, src, dst)
    return src, dst


def urand_edges(key: int, start: int, count: int, scale: int, dtype=np.int64):
    """Uniform edges ``start .. start + count - 1`` (``cpu_generate.urand_edges``)."""
    src, dst = np.empty(count, dtype), np.empty(count, dtype)
    _urand_edges(u64(key), u64(start), int(scale), src, dst)
    return src, dst


def edge_weights(key: int, start: int, count: int) -> np.ndarray:
    """Weights of edges ``start .. start + count - 1`` (``cpu_generate.edge_weights``)."""
    w = np.empty(count, np.float64)
    _edge_weights(u64(key), u64(start), w)
    return w


_NO_PERM = np.zeros(8, np.uint64)


def max_threads() -> int:
    """The most threads numba's parallel kernels may use (``NUMBA_NUM_THREADS``)."""
    return int(numba.config.NUMBA_NUM_THREADS)


@njit(parallel=True, **_OPTS)
def _start(a):
    for i in prange(a.size):
        a[i] = i


_STARTING = threading.Lock()
_ALONE = threading.RLock()  # held around parallel kernels where the layer takes one launch at a time
_CONCURRENT = None  # whether numba's threading layer takes launches from several threads at once


def concurrent_launches() -> bool:
    """Whether numba's threading layer takes parallel launches from several threads at once
    (``tbb``, ``omp``); ``workqueue`` does not: it aborts the process. Starts the layer if
    nothing has yet."""
    global _CONCURRENT
    if _CONCURRENT is None:
        with _STARTING:
            if _CONCURRENT is None:
                try:
                    layer = numba.threading_layer()
                except ValueError:  # not started yet
                    _start(np.zeros(2))
                    layer = numba.threading_layer()
                _CONCURRENT = layer in ("tbb", "omp")
    return _CONCURRENT


@contextlib.contextmanager
def threads(n: int):
    """At most ``n`` of numba's threads for the parallel kernels this thread calls (numba's
    setting is per thread), restored after. Every parallel kernel here runs inside it; where the
    threading layer cannot take launches from two threads at once (:func:`concurrent_launches`),
    one thread at a time: a generator draws on a thread of its own beside the builder's kernels."""
    with contextlib.nullcontext() if concurrent_launches() else _ALONE:
        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
        try:
            yield
        finally:
            numba.set_num_threads(before)


@njit(**_OPTS)
def count_arcs(src, dst, ins, outs, directed, drop_loops):
    """Degrees of a chunk of edges added into ``ins`` (and ``outs`` when ``directed``; else each
    edge other than a loop counts at both ends of ``ins``); loops skipped with ``drop_loops``."""
    for i in range(src.size):
        s, d = src[i], dst[i]
        if s != d:
            ins[d] += 1
            if directed:
                outs[s] += 1
            else:
                ins[s] += 1
        elif not drop_loops:
            ins[d] += 1
            if directed:
                outs[s] += 1


@njit(**_OPTS)
def _side(a, b, i, both, drop_loops):
    """How many ids edge i gives a side: ``a[i]`` (unless a dropped loop), and ``b[i]`` too with
    ``both`` (an undirected edge's other end, not for a loop)."""
    if a[i] != b[i]:
        return 2 if both else 1
    return 0 if drop_loops else 1


@njit(**_OPTS)
def _scan(hist, starts):
    """Threads × buckets counts into where each thread's part of each bucket starts (bucket by
    bucket, thread by thread within one: a stable order), and ``starts`` (buckets + 1) into
    where each bucket starts."""
    threads, buckets = hist.shape
    total = 0
    for j in range(buckets):
        starts[j] = total
        for t in range(threads):
            c = hist[t, j]
            hist[t, j] = total
            total += c
    starts[buckets] = total


@njit(parallel=True, **_OPTS)
def count_side(a, b, both, drop_loops, counts, shift, buf, hist, bounds):
    """:func:`count_arcs` for one side (``counts[a[i]] += 1``, and ``counts[b[i]]`` with ``both``)
    on ``len(hist)`` threads without a race: each thread sorts its slice's ids by bucket
    (``id >> shift``) into ``buf``, then each bucket, a range of vertices of its own, is counted
    by one thread. ``buf`` holds the ids (twice the edges with ``both``), ``hist`` is threads ×
    buckets, ``bounds`` buckets + 1."""
    threads, buckets = hist.shape
    k = a.size
    for t in prange(threads):
        row = hist[t]
        row[:] = 0
        for i in range(k * t // threads, k * (t + 1) // threads):
            c = _side(a, b, i, both, drop_loops)
            if c:
                row[a[i] >> shift] += 1
                if c == 2:
                    row[b[i] >> shift] += 1
    _scan(hist, bounds)
    for t in prange(threads):
        row = hist[t]
        for i in range(k * t // threads, k * (t + 1) // threads):
            c = _side(a, b, i, both, drop_loops)
            if c:
                j = a[i] >> shift
                buf[row[j]] = a[i]
                row[j] += 1
                if c == 2:
                    j = b[i] >> shift
                    buf[row[j]] = b[i]
                    row[j] += 1
    for j in prange(buckets):
        for p in range(bounds[j], bounds[j + 1]):
            counts[buf[p]] += 1


# Up to this many buckets, an arc's is found by comparing its key with every bucket's start (the
# compares vectorise, without a branch to mispredict: 1.5 ns an arc among 6 buckets, 12.6 among
# 256, against 9.7 and 32.3 by binary search; int32 ids on the development machine; at 2048, 70
# against 47); by binary search above.
LINEAR_MAX_BUCKETS = 256


@njit(**_OPTS)
def _bucket(starts, x):
    """The last j with ``starts[j] <= x`` (``starts`` increasing, ``starts[0] <= x``)."""
    if starts.size <= LINEAR_MAX_BUCKETS:
        j = 0
        for b in range(1, starts.size):
            j += starts[b] <= x
        return j
    lo, hi = 0, starts.size
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if starts[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@njit(parallel=True, **_OPTS)
def _partition_arcs(starts, key, src, dst, w, weighted, out_src, out_dst, out_w, which, hist, cuts):
    """Arcs into ``out_*`` by bucket (the last j with ``starts[j] <= key[i]``), in input order
    within a bucket, on ``len(hist)`` threads: each thread finds the bucket of each arc of its
    slice (into ``which``: a second binary search costs more than storing it) and counts them,
    the counts are scanned bucket by bucket, thread by thread within a bucket, and each thread
    copies its arcs to their places. ``hist`` is threads × buckets; ``cuts`` (buckets + 1) gets
    where each bucket starts."""
    threads, buckets = hist.shape
    k = key.size
    for t in prange(threads):
        row = hist[t]
        row[:] = 0
        for i in range(k * t // threads, k * (t + 1) // threads):
            j = _bucket(starts, key[i])
            which[i] = j
            row[j] += 1
    _scan(hist, cuts)
    for t in prange(threads):
        row = hist[t]
        for i in range(k * t // threads, k * (t + 1) // threads):
            j = which[i]
            p = row[j]
            row[j] = p + 1
            out_src[p] = src[i]
            out_dst[p] = dst[i]
            if weighted:
                out_w[p] = w[i]


def partition_arcs(starts: np.ndarray, key, src, dst, w, num_threads: int):
    """``(src, dst, w, cuts)``: the arcs in new arrays ordered by bucket, stably, bucket j
    (``starts[j] <= key < starts[j + 1]``, the last one unbounded) being ``cuts[j]:cuts[j + 1]``;
    on ``num_threads`` of numba's threads. ``w`` may be None (then so is the result's)."""
    buckets, k = len(starts), len(key)
    starts = np.ascontiguousarray(starts, key.dtype)  # compared in the ids' own type
    out_src, out_dst = np.empty(k, src.dtype), np.empty(k, dst.dtype)
    out_w = np.empty(k if w is not None else 0, np.float32 if w is None else w.dtype)
    which = np.empty(k, np.int16 if buckets <= 1 << 15 else np.int32)
    hist = np.empty((max(1, int(num_threads)), buckets), np.int64)
    cuts = np.empty(buckets + 1, np.int64)
    with threads(len(hist)):
        _partition_arcs(starts, key, src, dst, out_w if w is None else w, w is not None, out_src, out_dst,
                        out_w, which, hist, cuts)
    return out_src, out_dst, None if w is None else out_w, cuts


@njit(parallel=True, **_OPTS)
def _id_range(a, b, lows, highs):
    threads = lows.size
    k = a.size
    for t in prange(threads):
        lo = hi = a[k * t // threads]
        for i in range(k * t // threads, k * (t + 1) // threads):
            x, y = a[i], b[i]
            lo = min(lo, min(x, y))
            hi = max(hi, max(x, y))
        lows[t] = lo
        highs[t] = hi


def id_range(a, b, num_threads: int) -> tuple:
    """``(smallest, largest)`` id of ``a`` and ``b`` (one length and dtype, not empty), as ints,
    in one pass on up to ``num_threads`` of numba's threads (NumPy's ``min`` and ``max`` take
    four)."""
    n = max(1, min(int(num_threads), max_threads(), a.size))
    lows, highs = np.empty(n, a.dtype), np.empty(n, a.dtype)
    with threads(n):
        _id_range(a, b, lows, highs)
    return int(lows.min()), int(highs.max())


@njit(parallel=True, **_OPTS)
def _mark_ids(a, b, seen):
    for i in prange(a.size):  # threads that mark one id at once both write True: no harm
        seen[a[i]] = True
        seen[b[i]] = True


def mark_ids(a, b, seen, num_threads: int) -> None:
    """``seen[a] = seen[b] = True`` (ids within ``seen``) on up to ``num_threads`` threads."""
    with threads(num_threads):
        _mark_ids(a, b, seen)


@njit(parallel=True, **_OPTS)
def _lookup(a, table, base, out):
    for i in prange(a.size):
        out[i] = table[a[i] - base]


def lookup_ids(a, b, table, base: int, num_threads: int) -> tuple:
    """``(table[a - base], table[b - base])`` (new arrays of the table's type; the differences in
    int64, so a negative ``base`` cannot wrap narrow ids), on up to ``num_threads`` threads."""
    out_a, out_b = np.empty(a.size, table.dtype), np.empty(b.size, table.dtype)
    with threads(num_threads):
        _lookup(a, table, np.int64(base), out_a)
        _lookup(b, table, np.int64(base), out_b)
    return out_a, out_b

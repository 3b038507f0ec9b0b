"""Triangles by oriented wedge intersection: compiled kernels, with array code for NumPy and CuPy
alike (one code path, ``xp``) as their reference.

The graph's neighbour pairs ``{a, b}`` (arcs in either direction, self-loops and repeats dropped)
are oriented from the endpoint of lower (degree, id) to the higher, so every vertex keeps at most
``√(2m)`` out-neighbours; the vertices are renumbered in that order and the pairs held as a CSR
over the lower endpoint x with sorted targets. Each triangle is then found exactly once, as a
wedge ``x→y→z`` closed by the pair ``x→z``: for every pair ``x→y``, the targets z of y that are
also targets of x (after y in x's row). The backend's kernel (``wedge_count``: numba's threads on
the CPU, a warp per pair on a GPU) finds them in the two rows; the reference enumerates the wedges
in blocks sized to the memory left (so a skewed graph costs time, never memory) and looks them up
by binary search in the sorted pair keys ``x·n + z``.

The work is cut into blocks of rows x of about equal cost (a pair costs its wedges); in a
distributed job each rank takes every size-th block and the counts are added up.
"""

from __future__ import annotations

import numpy as np

from ooc_graph import config

from ._inmemory import repeat_index

# Bytes a wedge takes while its block is processed by the reference (indices, keys, positions, masks).
BYTES_PER_WEDGE = 64
# Parts the work is done in when someone listens to its progress (one call of the kernel each).
REPORTS = 16


def neighbour_pairs(xp, src, dst, n: int):
    """The unordered neighbour pairs of a graph given by its arcs: ``(a, b, arcs)`` with
    ``a < b`` and ``arcs`` how many distinct arcs join them (1, or 2 when both directions exist;
    an undirected store holds both)."""
    keep = src != dst
    # An arc's key: its pair, and which way it runs (unsigned: 2n² stays below 2^64 where n² < 2^63).
    keys = _pair_keys(xp, n, src[keep].astype(np.uint64), dst[keep].astype(np.uint64))
    keys = _unique(xp, keys)  # distinct arcs, sorted by pair
    pair, arcs = _unique(xp, keys >> np.uint64(1), counts=True, presorted=True)
    return (pair // np.uint64(n)).astype(np.int64), (pair % np.uint64(n)).astype(np.int64), arcs.astype(np.int64)


def _pair_keys(xp, n, u, v, bit=None):
    """``2 (min(u, v) n + max(u, v)) + bit`` (uint64; ``bit``: by default ``u > v``), ``u`` and
    ``v`` used up, without a temporary beyond one array of bits."""
    bit = u > v if bit is None else bit
    keys = xp.minimum(u, v)
    xp.maximum(u, v, out=v)
    del u
    keys *= np.uint64(n)
    keys += v
    del v
    keys <<= np.uint64(1)
    keys += bit
    return keys


def _unique(xp, keys, counts: bool = False, presorted: bool = False):
    """``xp.unique`` by sorting (unless ``presorted``): NumPy 2.4's took 10.7 s on R-MAT-18's
    7.6 M distinct arcs (keys already sorted), a sort 0.07 s."""
    keys = keys if presorted else xp.sort(keys)
    first = xp.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    if not counts:
        return keys[first]
    at = xp.flatnonzero(first)
    return keys[at], xp.diff(xp.concatenate([at, xp.asarray([len(keys)], dtype=at.dtype)]))


def orient(xp, n: int, a, b, arcs):
    """The pairs (``arcs`` 1 or 2, as :func:`neighbour_pairs` gives them) oriented from the
    endpoint of lower (degree, id) to the higher, with the vertices renumbered in that order:
    ``(ids, indptr, x, y, arcs)`` where ``ids[v]`` is v's new number, ``x < y`` the pairs' new
    numbers sorted by ``(x, y)`` and ``indptr`` the CSR's row offsets over x. Renumbered, a hub's
    out-pairs and their rows lie together (the CPU kernel took 1.9 s instead of 3.1 on R-MAT-18,
    one thread)."""
    deg = xp.bincount(a, minlength=n) + xp.bincount(b, minlength=n)
    ids = xp.empty(n, dtype=np.int64)
    ids[xp.argsort(deg.astype(np.int64) * n + xp.arange(n, dtype=np.int64))] = xp.arange(n, dtype=np.int64)
    # Sorted keys, the arcs in their lowest bit (a sort instead of an argsort and three gathers).
    keys = _pair_keys(xp, n, ids[a].astype(np.uint64), ids[b].astype(np.uint64), arcs > 1)
    keys.sort()
    arcs = (keys & np.uint64(1)).astype(np.int64) + 1
    keys >>= np.uint64(1)
    x, y = (keys // np.uint64(n)).astype(np.int64), (keys % np.uint64(n)).astype(np.int64)
    indptr = xp.zeros(n + 1, dtype=np.int64)
    indptr[1:] = xp.cumsum(xp.bincount(x, minlength=n))
    return ids, indptr, x, y, arcs


def count(xp, n: int, a, b, arcs, *, spare: int, comm=None, kernels=None, report=None):
    """Per vertex: ``(triangles, closing arcs)`` — how many triangles of the undirected pair graph
    contain the vertex, and over those triangles the number of arcs joining its two other
    vertices (the numerator of the local clustering coefficient). Returns also the wedges checked
    (over all ranks). ``kernels``: the backend's kernel module, whose ``wedge_count`` does the work
    where it can; else (or with None) the array code does. ``report(parts done, None)``, if given,
    hears the work done in ``REPORTS`` parts (this rank's blocks)."""
    ids, indptr, x, y, arcs = orient(xp, n, a, b, arcs)
    triangles = xp.zeros(n, dtype=np.int64)
    closing = xp.zeros(n, dtype=np.int64)
    if not len(y):
        return triangles, closing, 0
    cost = xp.zeros(len(y) + 1, dtype=np.int64)
    cost[1:] = xp.cumsum(indptr[y + 1] - indptr[y] + 2)  # a pair (x, y): y's out-pairs, and a step or two
    rank_, size = (comm.rank, comm.size) if comm is not None else (0, 1)
    rows, total = _blocks(xp, cost[indptr], size * config.get().algorithms.wedge_blocks_per_rank)
    rows = rows[rank_::size]
    del cost
    parts = [rows] if report is None or not len(rows) else np.array_split(rows, min(len(rows), REPORTS))
    for i, part in enumerate(parts):
        if kernels is None or kernels.wedge_count(indptr, x, y, arcs, part, triangles, closing, spare) is None:
            _reference(xp, n, indptr, x, y, arcs, part, triangles, closing, spare)
        if report is not None:
            report(i + 1, None)
    triangles, closing = triangles[ids], closing[ids]  # back to the graph's numbers
    if size > 1:
        triangles, closing = (xp.asarray(comm.allreduce(_host(xp, t), "sum").astype(np.int64))
                              for t in (triangles, closing))
    return triangles, closing, total - 2 * len(y)


def count_reference(xp, n: int, a, b, arcs, *, spare: int, comm=None):
    """:func:`count` by the array code alone."""
    return count(xp, n, a, b, arcs, spare=spare, comm=comm)


def _blocks(xp, prefix, parts: int):
    """Row ranges ``(parts, 2)`` (on the host) of about equal cost, ``prefix[x]`` being the cost of
    the rows before x; and the total cost."""
    total = int(prefix[-1])  # device -> host: the total, to place the cuts
    targets = xp.arange(1, parts, dtype=np.int64) * total // parts
    cuts = _host(xp, xp.searchsorted(prefix, targets))  # device -> host: the cuts
    bounds = np.concatenate([[0], cuts.astype(np.int64), [len(prefix) - 1]])
    return np.stack([bounds[:-1], bounds[1:]], axis=1), total


def _reference(xp, n, indptr, x, y, arcs, rows, triangles, closing, spare):
    """:func:`count`'s work over the row ranges ``rows`` by array operations, the wedges of a
    range enumerated in blocks within ``spare`` bytes."""
    keys = x * n + y  # sorted: the oriented pairs, looked up by binary search
    wedges = indptr[y + 1] - indptr[y]  # per pair (x, y): y's out-pairs
    ends = _host(xp, xp.cumsum(wedges))  # device -> host: the wedges before each pair, to cut blocks
    cfg = config.get().algorithms
    block = int(max(cfg.min_block_wedges, min(cfg.max_block_wedges, spare // BYTES_PER_WEDGE)))
    pairs = _host(xp, indptr[xp.asarray(rows.reshape(-1))]).reshape(-1, 2)  # device -> host
    for start, stop in _runs(pairs):
        lo = start
        while lo < stop:
            base = int(ends[lo - 1]) if lo else 0
            hi = min(stop, max(lo + 1, int(np.searchsorted(ends, base + block, side="right"))))
            _reference_block(xp, n, lo, hi, indptr, x, y, arcs, keys, wedges, triangles, closing)
            lo = hi


def _reference_block(xp, n, lo, hi, indptr, x, y, arcs, keys, wedges, triangles, closing):
    first, at = repeat_index(xp, wedges[lo:hi])  # wedge -> its pair (x, y), and which of y's pairs
    if not len(first):
        return
    first += lo
    second = indptr[y[first]] + at  # the pair (y, z)
    key = x[first] * n + y[second]
    third = xp.minimum(xp.searchsorted(keys, key), len(keys) - 1)
    hit = keys[third] == key  # (x, z) exists: a triangle x, y, z
    first, second, third = first[hit], second[hit], third[hit]
    for vertex, opposite in ((x[first], second), (y[first], third), (y[second], first)):
        triangles += xp.bincount(vertex, minlength=n)
        closing += xp.bincount(vertex, weights=arcs[opposite], minlength=n).astype(np.int64)


def _runs(ranges):
    """``(k, 2)`` ranges as a list of ``[start, stop)``, empty ones dropped and adjacent ones joined."""
    out = []
    for lo, hi in ranges.tolist():
        if hi <= lo:
            continue
        if out and out[-1][1] == lo:
            out[-1][1] = hi
        else:
            out.append([lo, hi])
    return out


def _host(xp, array):
    return array if xp is np else xp.asnumpy(array)

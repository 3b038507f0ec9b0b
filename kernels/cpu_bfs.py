"""Compiled (numba) BFS of the CPU backend: from one source, its smallest-parent tree built on the
way, direction-optimising (top-down over the out-CSR, bottom-up over the in-CSR), working in its
results' memory. :mod:`.cpu_compiled` re-exports :func:`bfs_tree` and :func:`int_levels`."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._jit import njit

_OPTS = dict(cache=True, nogil=True)

@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the cache for the line holding ``array[index]`` (LLVM's prefetch: a hint that never
    faults, so ``index`` may point anywhere)."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_ptr = ir.IntType(8).as_pointer()
        address = builder.bitcast(builder.gep(data, [args[1]]), byte_ptr)
        i32 = ir.IntType(32)
        typed = getattr(ir.types, "ir_layer_typed_pointers_enabled", True)  # llvmlite >= 0.45 may be opaque
        hint = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
                                              "llvm.prefetch.p0i8" if typed else "llvm.prefetch.p0")
        builder.call(hint, [address, i32(0), i32(3), i32(1)])  # read, keep in all cache levels, data
        return context.get_dummy_value()
    return types.void(array, index), codegen


@intrinsic
def _bits(typingctx, x):
    """A float64's bits as a uint64 (reading a float array's words as keys without a second view
    of it, which would keep LLVM from vectorising a loop that writes the array)."""
    if x != types.float64:
        return None
    return types.uint64(types.float64), lambda context, builder, signature, args: builder.bitcast(args[0], ir.IntType(64))


@intrinsic
def _from_bits(typingctx, x):
    """The float64 whose bits are the 64-bit integer ``x``."""
    if not isinstance(x, types.Integer) or x.bitwidth != 64:
        return None
    return types.float64(x), lambda context, builder, signature, args: builder.bitcast(args[0], ir.DoubleType())


# -- BFS with its tree, direction-optimising --------------------------------------------------
# A vertex's state is one 64-bit key, (its level + 1) << 32 | its parent, held in the float64
# state's own memory, where an unreached vertex's inf reads as UNREACHED_KEY, larger than every
# key (levels stay below 0x7FF00000): finding a vertex, keeping its smallest parent and telling
# levels apart is one read and one write of one word per arc, and nothing is allocated but the
# results (the queue lives in the parent array until the parents are written over it).
# Top-down levels expand the queue over the out-CSR; bottom-up levels (Beamer) let every
# unreached vertex look through its in-arcs, in ascending order of source, for one on the
# frontier, so the first one found is its smallest parent.
# Prefetch distances, in queue slots ahead of the vertex being expanded: its CSR offsets, its row,
# and the keys of the vertices its arcs lead to (a road graph's queue is a wavefront scattered over
# the ids). On road FLA, 8/4/2 and 16/8/4 were 10-20% slower than 64/32/16, and 32/16/8 to
# 128/64/32 within noise of it; prefetching took a third off the branch-free top-down BFS.
_AHEAD_OFFSETS, _AHEAD_ROW, _AHEAD_KEYS = 64, 32, 16
UNREACHED_KEY = np.float64(np.inf).view(np.uint64)  # 0x7FF0000000000000
_LEVEL_SHIFT = np.uint64(32)
_PARENT_MASK = np.uint64(0xFFFFFFFF)


@njit(**_OPTS)
def _top_down_branchless(indptr, indices, queue, head, stop, tail, key, code):
    """Expand the level queue[head:stop] over the out-CSR: an arc u->v sets ``key[v] = code | u``
    (``code``: the next level's) where v is unreached or already on the next level with a larger
    parent; any other key is smaller (an earlier level, or a smaller parent) and stays. Without a
    branch on the data: on road graphs about half the arcs find a new vertex, which a branch
    predicts badly. Returns (tail, arcs scanned)."""
    arcs = 0
    for h in range(head, stop):
        if h + _AHEAD_OFFSETS < tail:
            _prefetch(indptr, queue[h + _AHEAD_OFFSETS])
        if h + _AHEAD_ROW < tail:
            _prefetch(indices, indptr[queue[h + _AHEAD_ROW]])
        if h + _AHEAD_KEYS < tail:
            w = queue[h + _AHEAD_KEYS]
            for j in range(indptr[w], indptr[w + 1]):
                _prefetch(key, indices[j])
        u = queue[h]
        cand = code | np.uint64(u)
        start, end = indptr[u], indptr[u + 1]
        arcs += end - start
        for j in range(start, end):
            v = indices[j]
            k = key[v]
            key[v] = cand if k > cand else k
            queue[tail] = v  # kept only if v is new (the queue has a spare slot)
            tail += k == UNREACHED_KEY
    return tail, arcs


@njit(**_OPTS)
def _top_down_branchy(indptr, indices, queue, head, stop, tail, key, code):
    """:func:`_top_down_branchless` with branches: faster where most arcs lead to vertices reached
    before (social graphs after their first levels), as a branch then predicts well."""
    arcs = 0
    for h in range(head, stop):
        if h + _AHEAD_OFFSETS < tail:
            _prefetch(indptr, queue[h + _AHEAD_OFFSETS])
        if h + _AHEAD_ROW < tail:
            _prefetch(indices, indptr[queue[h + _AHEAD_ROW]])
        u = queue[h]
        cand = code | np.uint64(u)
        start, end = indptr[u], indptr[u + 1]
        arcs += end - start
        for j in range(start, end):
            v = indices[j]
            k = key[v]
            if k > cand:
                key[v] = cand
                if k == UNREACHED_KEY:
                    queue[tail] = v
                    tail += 1
    return tail, arcs


@njit(**_OPTS)
def _parent_in(in_indptr, in_indices, front, v):
    """The first of v's in-arcs (sources ascending) whose source's bit is set in the bitmap
    ``front``: ``(its source, arcs looked at)``, the source -1 where none is."""
    start, end = in_indptr[v], in_indptr[v + 1]
    j = start
    while j < end:
        u = np.int64(in_indices[j])
        j += 1
        if (front[u >> 6] >> np.uint64(u & 63)) & np.uint64(1):
            return u, j - start
    return np.int64(-1), end - start


# A bottom-up level reads each unreached vertex's first in-arcs; the rows are in ascending order but
# a hub's row puts a gap the hardware does not prefetch across: the row of the vertex this many
# ahead is asked for first (anchors' R-MAT-22, bottom-up levels of three BFSs on 16 threads of a
# 2xH100 host: 41.6-43.9 ms against 45.3-47.0; R-MAT-20 on 2 threads: 34.6 against 43.8).
_AHEAD_IN_ROWS = 32


@njit(**_OPTS)
def _bottom_up(in_indptr, in_indices, queue, head, tail, key, code, front):
    """One level bottom-up: every unreached vertex looks through its in-arcs (sources ascending)
    for one on the frontier queue[head:tail] (a bitmap: ``front``) and stops at the first, its
    smallest parent; found vertices are queued in ascending order. Returns (tail, arcs looked at)."""
    front[:] = 0
    for h in range(head, tail):
        u = queue[h]
        front[u >> 6] |= np.uint64(1) << np.uint64(u & 63)
    arcs = 0
    n = key.size
    for v in range(n):
        if key[v] == UNREACHED_KEY:
            _prefetch(in_indices, in_indptr[min(v + _AHEAD_IN_ROWS, n)])
            u, looked = _parent_in(in_indptr, in_indices, front, v)
            arcs += looked
            if u >= 0:
                key[v] = code | np.uint64(u)
                queue[tail] = v
                tail += 1
    return tail, arcs


@njit(**_OPTS)
def _frontier_arcs(indptr, queue, head, tail):
    arcs = 0
    for h in range(head, tail):
        u = queue[h]
        arcs += indptr[u + 1] - indptr[u]
    return arcs


@njit(**_OPTS)
def bfs_tree(indptr, indices, in_indptr, in_indices, bottom_up, alpha, min_arcs, branchy, leave_bottom_up,
             max_degree, key, queue, ctx, state, parent, int_unreached):
    """BFS over a whole CSR with its tree: ``state`` gets the levels (inf where unreached; where
    ``int_unreached`` is not 0, int64 levels in its memory, ``int_unreached`` where unreached, as
    :func:`int_levels` makes them) and ``parent`` the smallest vertex one level above with an arc
    (-1 at the root and where unreached), i.e. :func:`tree_parents` for ``plus == 1``.

    A level goes bottom-up (over the in-CSR) when its frontier's out-arcs exceed the arcs no
    top-down level has scanned yet / ``alpha`` (Beamer) and ``min_arcs`` (a bottom-up level reads
    every vertex's key, which a few arcs do not repay: a road graph's last levels, with few arcs
    left unexplored, would otherwise go bottom-up). The frontier's arcs are counted only where its
    size times ``max_degree`` could pass both, so thousands of small levels cost nothing extra. A
    level stays bottom-up until one looked at more than ``leave_bottom_up`` times the next
    frontier's arcs. Top-down levels are branch-free unless the previous level found fewer than
    one new vertex per ``branchy`` arcs. ``bottom_up``: 0 never, 1 the in-CSR is given, 2 it is not
    loaded yet: return 1 where a level would go bottom-up (call again with it, or with 0).

    ``key`` is ``state`` viewed as uint64, all UNREACHED_KEY (inf) but the root's ``1 << 32``;
    ``queue`` is ``parent`` viewed as uint32 (2n >= n + 1 slots), the root first. ``ctx`` (int64)
    carries [head, tail, level code, arcs left to scan, arcs scanned, new vertices and arcs of the
    last top-down level] between calls: [0, 1, 1, arcs, 0, 1, 1] at the start. Returns 0 when
    done; then ``ctx[2] - 1`` is the number of levels (the iterations of a level-synchronous
    loop) and ``ctx[4]`` the arcs scanned."""
    n = key.size
    head, tail, cur = ctx[0], ctx[1], np.uint64(ctx[2])
    unexplored, arcs, found, done = ctx[3], ctx[4], ctx[5], ctx[6]
    front = np.zeros(0, np.uint64)
    while head < tail:
        enough = max(unexplored // alpha, min_arcs)
        if bottom_up and (tail - head) * max_degree > enough and _frontier_arcs(indptr, queue, head, tail) > enough:
            if bottom_up == 2:
                ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], ctx[6] = head, tail, cur, unexplored, arcs, found, done
                return 1
            if front.size == 0:
                front = np.zeros((n + 63) >> 6, np.uint64)
            while True:
                cur += np.uint64(1)
                start = tail
                tail, looked = _bottom_up(in_indptr, in_indices, queue, head, tail, key, cur << _LEVEL_SHIFT, front)
                arcs += looked
                head = start
                if head == tail or looked > leave_bottom_up * _frontier_arcs(indptr, queue, head, tail):
                    break
            continue
        stop = tail
        cur += np.uint64(1)
        if branchy * found < done:
            tail, done = _top_down_branchy(indptr, indices, queue, head, stop, tail, key, cur << _LEVEL_SHIFT)
        else:
            tail, done = _top_down_branchless(indptr, indices, queue, head, stop, tail, key, cur << _LEVEL_SHIFT)
        unexplored -= done
        arcs += done
        found = tail - stop
        head = stop
    ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], ctx[6] = head, tail, cur, unexplored, arcs, found, done
    _finish_range(state, parent, 0, n, int_unreached)
    return 0


@njit(**_OPTS)
def _finish_range(state, parent, lo, hi, int_unreached):
    """Vertices [lo, hi)'s keys to levels (inf where unreached) and parents (-1 at the root and
    where unreached), over the keys (read through state: vectorised) and the queue. Where
    ``int_unreached`` is not 0 the levels are int64 in state's memory (``int_unreached`` where
    unreached): :func:`int_levels`' pass done in this one."""
    as_int = int_unreached != 0
    for v in range(lo, hi):
        k = _bits(state[v])
        level = k >> _LEVEL_SHIFT
        reached = k != UNREACHED_KEY
        parent[v] = np.int64(k & _PARENT_MASK) if reached and level > 1 else -1
        if as_int:
            state[v] = _from_bits(np.int64(level) - 1 if reached else int_unreached)
        else:
            state[v] = (level - 1.0) if reached else np.inf


@njit(**_OPTS)
def int_levels(levels, unreachable):
    """Each of ``levels`` (whole numbers or inf) replaced in place by the bits of it as an int64,
    ``unreachable`` where inf: view the array as int64 afterwards."""
    for v in range(levels.size):
        x = levels[v]
        levels[v] = _from_bits(np.int64(x) if x < np.inf else unreachable)

"""Compiled (numba) CPU operators, and whole traversals over a CSR held in memory.

:mod:`.cpu` calls these when numba is installed (``pip install ooc-graph[cpu]``); its NumPy code
stays the reference they are tested against. Results are identical to it bit for bit: a min-
relaxation's fixed point does not depend on the order arcs are relaxed in (every value is the
smallest rounded path sum, rounding being monotone), tie-breaks take minima, and sums run in the
same order as scipy's CSR product.

A BFS from one source with its tree (:func:`bfs_tree`) is direction-optimising and works in its
results' memory (plus a bitmap of the frontier); the other traversals are a FIFO queue or Dijkstra.

Kernels take plain arrays: a batch is ``indptr``/``indices`` (one row per destination
``rows[r] + dst_lo``), weights are a float64 array and a flag (``plus`` is the constant added
when ``weighted`` is false). Compiled once per argument types and cached on disk (``cache=True``),
so a new process loads them instead of compiling again.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

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


# -- per-batch operators (chunks streamed or cached) -------------------------------------------
@njit(**_OPTS)
def relax_min(indptr, indices, rows, dst_lo, weight, weighted, plus, state, changed):
    """``state[v] = min(state[v], min_{u->v} state[u] + w)``; returns 1 if any value dropped."""
    any_changed = 0
    for r in range(rows.size):
        best = np.inf
        for j in range(indptr[r], indptr[r + 1]):
            cand = state[indices[j]] + (weight[j] if weighted else plus)
            if cand < best:
                best = cand
        v = rows[r] + dst_lo
        if best < state[v]:
            state[v] = best
            changed[v] = 1
            any_changed = 1
    return any_changed


@njit(**_OPTS)
def _find(parent, x):
    while parent[x] != x:  # path halving: pointers only decrease
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(**_OPTS)
def hook_min(indptr, indices, rows, dst_lo, parent):
    """Union-find over the batch's arcs, the larger root hung under the smaller; returns 1 if
    any two trees were joined. Pointers only decrease, so every root is its tree's smallest id."""
    joined = 0
    for r in range(rows.size):
        v = rows[r] + dst_lo
        for j in range(indptr[r], indptr[r + 1]):
            a = _find(parent, indices[j])
            b = _find(parent, v)
            if a != b:
                if a < b:
                    parent[b] = a
                else:
                    parent[a] = b
                joined = 1
    return joined


@njit(**_OPTS)
def _tight(du, dv, w, u, v, strict):
    return u != v and np.isfinite(dv) and du + w == dv and ((du < dv) if strict else (du == dv))


@njit(**_OPTS)
def tight_parent(indptr, indices, rows, dst_lo, weight, weighted, plus, dist, parent, resolved, strict):
    """``parent[v] = min(parent[v], u)`` over tight arcs u->v (see :func:`.cpu.tight_parent`;
    ``strict`` stands for ``resolved is None``)."""
    for r in range(rows.size):
        v = rows[r] + dst_lo
        if not strict and resolved[v]:
            continue
        dv = dist[v]
        best = parent[v]
        for j in range(indptr[r], indptr[r + 1]):
            u = indices[j]
            if u < best and (strict or resolved[u]) and \
                    _tight(dist[u], dv, weight[j] if weighted else plus, u, v, strict):
                best = u
        parent[v] = best


@njit(**_OPTS)
def pull_sum(indptr, indices, rows, dst_lo, x, out):
    """``out[v] += Σ_{u->v} x[u]``, each row summed in CSR order (as scipy's product does)."""
    for r in range(rows.size):
        s = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            s += x[indices[j]]
        out[rows[r] + dst_lo] += s


@njit(parallel=True, **_OPTS)
def pull_sum_parallel(indptr, indices, rows, dst_lo, x, out):
    """:func:`pull_sum` with the rows shared among numba's threads (same sums)."""
    for r in prange(rows.size):
        s = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            s += x[indices[j]]
        out[rows[r] + dst_lo] += s


@njit(**_OPTS)
def pagerank_step(y, x, p, uniform, inv, alpha, lost, contrib):
    """:func:`.cpu.pagerank_step` in one pass over the range (``p`` empty: ``uniform`` everywhere)."""
    err = 0.0
    dangling = 0.0
    for v in range(x.size):
        pv = p[v] if p.size else uniform
        new = alpha * (y[v] + lost * pv) + (1 - alpha) * pv
        err += abs(new - x[v])
        if inv[v] == 0:
            dangling += new
        contrib[v] = new * inv[v]
        x[v] = new
    return err, dangling


@njit(**_OPTS)
def advance_min(indptr, indices, weights, weighted, plus, frontier, state, changed):
    """Frontier advance over an out-CSR (see :func:`.cpu.advance_min`)."""
    for i in range(frontier.size):
        u = frontier[i]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            cand = state[u] + (weights[j] if weighted else plus)
            if cand < state[v]:
                state[v] = cand
                changed[v] = 1


@njit(**_OPTS)
def scatter_min(state, ids, values, changed):
    for i in range(ids.size):
        v = ids[i]
        if values[i] < state[v]:
            state[v] = values[i]
        changed[v] = 1


# -- whole traversals over a CSR in memory -----------------------------------------------------
# With ``track`` (one source), they also build the strict part of the shortest-path tree of
# :meth:`Engine.tight_parents` on the way: at the time u's arcs are scanned, a tight arc u->v
# either lowered v (u becomes its parent) or meets v's value (the smaller u wins); a later drop
# of v resets it. Vertices reached only over zero-weight arcs are left to ``resolve_plateaus``.
@njit(**_OPTS)
def bfs_queue(indptr, indices, plus, frontier, state, parent, track):
    """Min-relaxation to the fixed point by a FIFO queue, for a constant ``plus >= 0`` and
    distinct frontier vertices whose values are all equal: a vertex is final when first lowered,
    so each is queued once. Returns (iterations a level-synchronous loop would take, arcs
    scanned)."""
    queue = np.empty(state.size + frontier.size, np.int64)
    tail = frontier.size
    queue[:tail] = frontier
    head, arcs, levels, level_end = 0, 0, 0, tail
    while head < tail:
        if head == level_end:  # the next level starts
            levels += 1
            level_end = tail
        u = queue[head]
        head += 1
        du = state[u]
        cand = du + plus
        arcs += indptr[u + 1] - indptr[u]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            dv = state[v]
            if cand < dv:
                state[v] = cand
                queue[tail] = v
                tail += 1
                if track:
                    parent[v] = u if du < cand else parent.size
            elif track and cand == dv and du < cand and u < parent[v]:
                parent[v] = u
    return (levels + 1 if tail else 0), arcs


@njit(**_OPTS)
def fresh(state, frontier):
    """Whether every vertex outside ``frontier`` holds inf and the frontier holds 0 (a BFS or
    SSSP from scratch: :func:`bfs_unit` applies)."""
    unreached = 0
    for v in range(state.size):  # no branch: the loop runs vectorised
        unreached += state[v] == np.inf
    for i in range(frontier.size):
        if state[frontier[i]] != 0:
            return False
    return unreached == state.size - frontier.size


@njit(**_OPTS)
def bfs_unit(indptr, indices, frontier, state, parent, track, queue):
    """:func:`bfs_queue` for ``plus == 1`` from a fresh state (:func:`fresh`): values are the
    levels, exact, so a byte per vertex (1 + level mod 255) says whether it was reached and
    which arcs may be tight; the random reads hit n bytes instead of n float64s. ``queue``: n
    slots, int32 where ids fit."""
    n = state.size
    mark = np.zeros(n, np.uint8)
    tail = frontier.size
    for i in range(tail):
        queue[i] = frontier[i]
        mark[frontier[i]] = 1
    head, arcs, level, level_end = 0, 0, 0, tail
    want = np.uint8(2)
    while head < tail:
        if head == level_end:  # the next level starts
            level += 1
            level_end = tail
            want = np.uint8(1 + (level + 1) % 255)
        u = queue[head]
        head += 1
        cand = level + 1.0  # state[u] is its level: no read
        start, stop = indptr[u], indptr[u + 1]
        arcs += stop - start
        for j in range(start, stop):
            v = indices[j]
            m = mark[v]
            if m == 0:
                mark[v] = want
                state[v] = cand
                queue[tail] = v
                tail += 1
                if track:
                    parent[v] = u
            elif track and m == want and u < parent[v] and state[v] == cand:
                parent[v] = u
    return (level + 1 if tail else 0), arcs


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
def _bottom_up(in_indptr, in_indices, queue, head, tail, key, code, front):
    """One level bottom-up: every unreached vertex looks through its in-arcs (sources ascending)
    for one on the frontier queue[head:tail] (a bitmap: ``front``) and stops at the first, its
    smallest parent; found vertices are queued in ascending order. Returns (tail, arcs looked at)."""
    front[:] = 0
    for h in range(head, tail):
        u = queue[h]
        front[u >> 6] |= np.uint64(1) << np.uint64(u & 63)
    arcs = 0
    for v in range(key.size):
        if key[v] == UNREACHED_KEY:
            start, end = in_indptr[v], in_indptr[v + 1]
            j = start
            while j < end:
                u = in_indices[j]
                j += 1
                if (front[u >> 6] >> np.uint64(u & 63)) & np.uint64(1):
                    key[v] = code | np.uint64(u)
                    queue[tail] = v
                    tail += 1
                    break
            arcs += j - start
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
             max_degree, key, queue, ctx, state, parent):
    """BFS over a whole CSR with its tree: ``state`` gets the levels (inf where unreached) and
    ``parent`` the smallest vertex one level above with an arc (-1 at the root and where
    unreached), i.e. :func:`tree_parents` for ``plus == 1``.

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
    for v in range(n):  # over the keys (read through state: vectorised) and the queue
        k = _bits(state[v])
        level = k >> _LEVEL_SHIFT
        reached = k != UNREACHED_KEY
        parent[v] = np.int64(k & _PARENT_MASK) if reached and level > 1 else -1
        state[v] = (level - 1.0) if reached else np.inf
    return 0


@njit(**_OPTS)
def int_levels(levels, unreachable):
    """Each of ``levels`` (whole numbers or inf) replaced in place by the bits of it as an int64,
    ``unreachable`` where inf: view the array as int64 afterwards."""
    for v in range(levels.size):
        x = levels[v]
        levels[v] = _from_bits(np.int64(x) if x < np.inf else unreachable)


@njit(**_OPTS)
def _sift_up(keys, verts, pos, i, k, v):
    """Place vertex v with key k at slot i or above (keys live in the heap: sifting reads them
    contiguously, not through the vertex)."""
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] <= k:
            break
        keys[i] = keys[p]
        verts[i] = verts[p]
        pos[verts[i]] = i
        i = p
    keys[i] = k
    verts[i] = v
    pos[v] = i


@njit(**_OPTS)
def _sift_down(keys, verts, pos, size, k, v):
    """Place vertex v with key k at the root or below."""
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] < keys[c]:
            c += 1
        if keys[c] >= k:
            break
        keys[i] = keys[c]
        verts[i] = verts[c]
        pos[verts[i]] = i
        i = c
    keys[i] = k
    verts[i] = v
    pos[v] = i


@njit(**_OPTS)
def dijkstra(indptr, indices, weights, weighted, plus, frontier, state, parent, track, verts, pos):
    """Min-relaxation to the fixed point with an indexed binary heap (Dijkstra from several
    sources, starting values ``state``), for non-negative increments; a vertex lowered after it
    was settled is queued again, so the fixed point is reached whatever the increments. Returns
    (1 + the most arcs on a path that lowered a value, arcs scanned). ``verts`` (n slots) and
    ``pos`` (n times -1) are scratch, int32 where ids fit: 20 bytes a vertex in all."""
    n = state.size
    keys = np.empty(n, np.float64)
    hops = np.zeros(n, np.int32)
    size, arcs, top, any_vertex = 0, 0, 0, False
    for i in range(frontier.size):
        u = frontier[i]
        any_vertex = True
        if pos[u] < 0:
            size += 1
            _sift_up(keys, verts, pos, size - 1, state[u], u)
    while size:
        u = verts[0]
        du = keys[0]
        pos[u] = -1
        size -= 1
        if size:
            _sift_down(keys, verts, pos, size, keys[size], verts[size])
        start, stop = indptr[u], indptr[u + 1]
        arcs += stop - start
        for j in range(start, stop):
            v = indices[j]
            cand = du + (weights[j] if weighted else plus)
            dv = state[v]
            if cand < dv:
                state[v] = cand
                if track:
                    parent[v] = u if du < cand else n
                hops[v] = hops[u] + 1
                top = max(top, hops[v])
                if pos[v] < 0:
                    size += 1
                    _sift_up(keys, verts, pos, size - 1, cand, v)
                else:
                    _sift_up(keys, verts, pos, pos[v], cand, v)
            elif track and cand == dv and du < cand and u < parent[v]:
                parent[v] = u
    return (top + 1 if any_vertex else 0), arcs


@njit(**_OPTS)
def _tight_pass(indptr, indices, weights, weighted, plus, dist, parent, resolved, strict):
    n = dist.size
    for u in range(n):
        if not strict and not resolved[u]:
            continue
        du = dist[u]
        if not np.isfinite(du):
            continue
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if u < parent[v] and (strict or not resolved[v]) and \
                    _tight(du, dist[v], weights[j] if weighted else plus, u, v, strict):
                parent[v] = u


@njit(**_OPTS)
def resolve_plateaus(indptr, indices, weights, weighted, plus, dist, parent, root):
    """Finish a shortest-path tree whose strict parents are set (``n`` elsewhere): vertices
    reached only over zero-weight arcs are resolved a layer at a time from the vertices resolved
    before, as :meth:`Engine.tight_parents` does; then -1 for the root and unreached vertices."""
    n = dist.size
    resolved = np.zeros(0, np.bool_)
    while True:
        missing = 0
        for v in range(n):  # unreached vertices get -1 on the way (as sources they relax nothing)
            if parent[v] == n:
                if np.isfinite(dist[v]):
                    missing += 1
                else:
                    parent[v] = -1
        if not missing:
            break
        resolved = parent < n  # a snapshot: this round resolves from the vertices resolved before it
        _tight_pass(indptr, indices, weights, weighted, plus, dist, parent, resolved, False)
        left = 0
        for v in range(n):
            if parent[v] == n and np.isfinite(dist[v]):
                left += 1
        if left == missing:  # defensive, as in the reference
            break
    for v in range(n):
        if parent[v] == n:
            parent[v] = -1
    parent[root] = -1


@njit(**_OPTS)
def tree_parents(indptr, indices, weights, weighted, plus, dist, root):
    """The shortest-path tree of :meth:`Engine.tight_parents` over an out-CSR: strictly shorter
    tight arcs first, then the zero-weight plateaus."""
    n = dist.size
    parent = np.full(n, n, np.int64)
    parent[root] = root
    _tight_pass(indptr, indices, weights, weighted, plus, dist, parent, np.zeros(0, np.bool_), True)
    resolve_plateaus(indptr, indices, weights, weighted, plus, dist, parent, root)
    return parent

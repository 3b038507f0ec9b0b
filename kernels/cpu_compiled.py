"""Compiled (numba) CPU operators, and whole traversals over a CSR held in memory.

:mod:`.cpu` calls these when numba is installed (the ``cpu`` extra); its NumPy code
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

from ._jit import njit, prange
from .cpu_bfs import bfs_tree, int_levels  # noqa: F401  (the BFS with its tree, re-exported)
from .cpu_brandes import brandes_dijkstra, brandes_hops  # noqa: F401  (betweenness, re-exported)
from .cpu_heap import pop, sift_up
from .cpu_wedges import add_copies, wedge_count  # noqa: F401  (triangles, re-exported)

_OPTS = dict(cache=True, nogil=True)


def parallel():
    """The kernels on numba's threads (:mod:`.cpu_parallel`), imported on first use: loading them
    costs a process more than the serial kernels do."""
    from . import cpu_parallel
    return cpu_parallel



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
def advance_min(indptr, indices, weights, weighted, plus, frontier, state, changed, parent, track):
    """Frontier advance over an out-CSR (see :func:`.cpu.advance_min`); with ``track``, the
    smallest u of the arcs that reach v's new level becomes v's parent."""
    for i in range(frontier.size):
        u = frontier[i]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            cand = state[u] + (weights[j] if weighted else plus)
            if cand < state[v]:
                state[v] = cand
                changed[v] = 1
            if track and cand == state[v] and u < parent[v]:
                parent[v] = u


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
            sift_up(keys, verts, pos, size - 1, state[u], u)
    while size:
        u, du, size = pop(keys, verts, pos, size)
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
                    sift_up(keys, verts, pos, size - 1, cand, v)
                else:
                    sift_up(keys, verts, pos, pos[v], cand, v)
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

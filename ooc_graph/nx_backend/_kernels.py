"""Traversals in the order networkx's own code visits nodes, over the adjacency as networkx holds it.

networkx's answers depend on the order it visits nodes, not only on distances: the order of the
dicts it returns, which of two equally short paths it returns, which node a BFS tree hangs a node
under. Each kernel here is a traversal that makes the same choices as networkx's implementation
of the same algorithm, over arrays in networkx's adjacency order (:class:`~.graph.StoreGraph`):

- :func:`bfs` — a FIFO queue from one or more sources, each node discovered by the first node
  of the queue with an arc to it (networkx's ``_single_shortest_path_length``,
  ``generic_bfs_edges``, ``bfs_layers``);
- :func:`bidirectional_bfs` — two BFS fringes expanded level by level, the smaller first,
  stopping at the first node seen from both (``bidirectional_shortest_path``);
- :func:`dijkstra` — a binary heap ordered by (distance, push count), a node's parent the first
  node whose arc strictly lowered it (``_dijkstra_multisource``); every tie goes the same way;
- :func:`bidirectional_dijkstra` — two such heaps sharing one push count, alternating;
- :func:`bellman_ford` — a FIFO label-correcting search that skips a node while one of its
  predecessors is queued, with the same negative-cycle checks (``_inner_bellman_ford``).

Distances are int64 where every weight is an int (exact, as Python's sums) and float64 otherwise
(the same additions in the same order as networkx's, so the same sums). The other kernels, in the
same manner: :mod:`._kernels_structure` (k-truss, common neighbours, topological generations,
longest DAG paths) and :mod:`._kernels_brandes` (edge betweenness). Compiled with numba when
it is installed (the ``cpu`` extra); without it the same code runs as Python, slower
than networkx (``should_run`` then declines these calls).
"""

from __future__ import annotations

import numpy as np

try:  # numba's njit, the cache keyed by the three kernel modules here together (kernels/_jit.py)
    from ooc_graph.kernels._jit import njit, serve
    serve(__file__, ("_kernels", "_kernels_structure", "_kernels_brandes"))
    COMPILED = True
except ImportError:  # pragma: no cover - exercised where numba is missing
    COMPILED = False

    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn

_OPTS = dict(cache=True, nogil=True)
NONE = -1  # no node (networkx's None)
UNSEEN = -2


# -- breadth-first -----------------------------------------------------------------------------------
@njit(**_OPTS)
def bfs(indptr, indices, sources, cutoff):
    """BFS from ``sources`` (distinct ids, the first layer in order), expanding nodes whose depth is
    below ``cutoff`` (a float: ``inf`` for no limit). Returns ``(order, parent, depth)``: the
    nodes in order of discovery, each node's discoverer (-1 for a source or an unreached node)
    and depth (-1 unreached)."""
    n = indptr.size - 1
    depth = np.full(n, -1, np.int64)
    parent = np.full(n, NONE, np.int64)
    order = np.empty(n, np.int64)
    tail = 0
    for s in sources:
        if depth[s] < 0:
            depth[s] = 0
            order[tail] = s
            tail += 1
    head = 0
    while head < tail:
        v = order[head]
        head += 1
        d = depth[v]
        if not d < cutoff:
            continue
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if depth[w] < 0:
                depth[w] = d + 1
                parent[w] = v
                order[tail] = w
                tail += 1
    return order[:tail], parent, depth


@njit(**_OPTS)
def bidirectional_bfs(indptr, indices, rindptr, rindices, s, t):
    """networkx's ``_bidirectional_pred_succ``: ``(pred, succ, meet)``, ``meet`` -1 when no path
    (``pred``/``succ``: -1 for None, -2 where the search did not reach)."""
    n = indptr.size - 1
    pred = np.full(n, UNSEEN, np.int64)
    succ = np.full(n, UNSEEN, np.int64)
    pred[s] = NONE
    succ[t] = NONE
    if s == t:
        return pred, succ, s
    fwd, fwd_next = np.empty(n, np.int64), np.empty(n, np.int64)
    rev, rev_next = np.empty(n, np.int64), np.empty(n, np.int64)
    fwd[0], rev[0] = s, t
    nf, nr = 1, 1
    while nf and nr:
        if nf <= nr:
            nf, meet = _bfs_level(indptr, indices, fwd, nf, fwd_next, pred, succ)
            fwd, fwd_next = fwd_next, fwd
        else:
            nr, meet = _bfs_level(rindptr, rindices, rev, nr, rev_next, succ, pred)
            rev, rev_next = rev_next, rev
        if meet != NONE:
            return pred, succ, meet
    return pred, succ, NONE


@njit(**_OPTS)
def _bfs_level(indptr, indices, fringe, size, nxt, mine, other):
    """One level of :func:`bidirectional_bfs`, either way: expands ``fringe[:size]`` into ``nxt``,
    each new node's discoverer into ``mine``; returns ``(nxt's size, meet)``, ``meet`` the first
    node that ``other`` has seen (-1 none)."""
    k = 0
    for i in range(size):
        v = fringe[i]
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if mine[w] == UNSEEN:
                mine[w] = v
                nxt[k] = w
                k += 1
            if other[w] != UNSEEN:
                return k, w
    return k, NONE


# -- a heap of (distance, count, node), as heapq orders networkx's tuples (:mod:`._kernels_brandes`'s too)
@njit(**_OPTS)
def _less(dk, ck, a, b):
    return dk[a] < dk[b] or (dk[a] == dk[b] and ck[a] < ck[b])


@njit(**_OPTS)
def _swap(dk, ck, vk, a, b):
    dk[a], dk[b] = dk[b], dk[a]
    ck[a], ck[b] = ck[b], ck[a]
    vk[a], vk[b] = vk[b], vk[a]


@njit(**_OPTS)
def _push(dk, ck, vk, size, d, c, v):
    i = size
    dk[i], ck[i], vk[i] = d, c, v
    while i > 0:
        p = (i - 1) >> 1
        if _less(dk, ck, i, p):
            _swap(dk, ck, vk, i, p)
            i = p
        else:
            break
    return size + 1


@njit(**_OPTS)
def _pop(dk, ck, vk, size):
    """Removes the smallest entry into slot ``size - 1``; returns the new size."""
    last = size - 1
    _swap(dk, ck, vk, 0, last)
    i = 0
    while True:
        a = 2 * i + 1
        if a >= last:
            break
        b = a + 1
        m = b if b < last and _less(dk, ck, b, a) else a
        if _less(dk, ck, m, i):
            _swap(dk, ck, vk, m, i)
            i = m
        else:
            break
    return last


@njit(**_OPTS)
def _append(head, tail, nxt, val, entries, u, v):
    """Append ``v`` to node ``u``'s linked list (entry ``entries``); returns the next free entry."""
    if head[u] < 0:
        head[u] = entries
    else:
        nxt[tail[u]] = entries
    tail[u] = entries
    val[entries] = v
    nxt[entries] = -1
    return entries + 1


# -- Dijkstra ------------------------------------------------------------------------------------------
@njit(**_OPTS)
def dijkstra(indptr, indices, weights, floats, sources, cutoff, target, record_preds):
    """networkx's ``_dijkstra_multisource`` from ``sources`` (ids, in networkx's order of them).

    ``weights`` int64 or float64 in CSR order; ``floats``: per arc, whether its weight is a float
    (a length-0 array when all are one type); ``cutoff``: relax only up to it (``inf``: none);
    ``target``: stop once it is settled (-1: none). Returns ``(status, order, first, dist, parent,
    is_float, head, nxt, val)``: status 0, or 1 with ``order[-1]`` the node where networkx
    raises "Contradictory paths found"; ``order`` the nodes as settled (the order of networkx's
    ``dist``), ``first`` as first reached (the order of its predecessor dict); ``parent`` the node that strictly lowered each node's distance last (networkx's
    path predecessor); ``is_float`` whether a node's distance is a float sum; with
    ``record_preds``, each node's list of predecessors as networkx appends them (a linked list:
    ``head[v]``, ``nxt[k]``, ``val[k]``, -1 ends it)."""
    n = indptr.size - 1
    m = indices.size
    mixed = floats.size > 0
    dist = np.zeros(n, weights.dtype)
    seen = np.zeros(n, weights.dtype)
    state = np.zeros(n, np.int8)  # 0 unseen, 1 seen, 2 settled
    parent = np.full(n, NONE, np.int64)
    is_float = np.zeros(n, np.bool_)
    seen_float = np.zeros(n, np.bool_)
    order = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    settled = reached = 0
    cap = m + sources.size + 1
    dk = np.zeros(cap, weights.dtype)
    ck = np.zeros(cap, np.int64)
    vk = np.zeros(cap, np.int64)
    size = 0
    count = 0
    head = np.full(n if record_preds else 0, -1, np.int64)
    tail = np.full(n if record_preds else 0, -1, np.int64)
    nxt = np.full(cap if record_preds else 0, -1, np.int64)
    val = np.full(cap if record_preds else 0, -1, np.int64)
    entries = 0
    for s in sources:
        if state[s] == 0:
            first[reached] = s
            reached += 1
        state[s] = 1
        seen[s] = 0
        size = _push(dk, ck, vk, size, seen[s], count, s)
        count += 1
    while size:
        size = _pop(dk, ck, vk, size)
        d, v = dk[size], vk[size]
        if state[v] == 2:
            continue
        state[v] = 2
        dist[v] = d
        is_float[v] = seen_float[v]
        order[settled] = v
        settled += 1
        if v == target:
            break
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            vu = d + weights[j]
            if vu > cutoff:
                continue
            if state[u] == 2:
                if vu < dist[u]:
                    order[settled] = u
                    return 1, order[:settled + 1], first[:reached], dist, parent, is_float, head, nxt, val
                if record_preds and vu == dist[u]:
                    entries = _append(head, tail, nxt, val, entries, u, v)
            elif state[u] == 0 or vu < seen[u]:
                if state[u] == 0:
                    first[reached] = u
                    reached += 1
                state[u] = 1
                seen[u] = vu
                seen_float[u] = is_float[v] or (mixed and floats[j])
                size = _push(dk, ck, vk, size, vu, count, u)
                count += 1
                parent[u] = v
                if record_preds:
                    head[u] = -1
                    entries = _append(head, tail, nxt, val, entries, u, v)
            elif record_preds and vu == seen[u]:
                entries = _append(head, tail, nxt, val, entries, u, v)
    return 0, order[:settled], first[:reached], dist, parent, is_float, head, nxt, val


@njit(**_OPTS)
def bidirectional_dijkstra(indptr, indices, weights, rindptr, rindices, rweights, s, t):
    """networkx's ``bidirectional_dijkstra`` (``s != t``): ``(status, length, meet, pred_f, pred_b)``;
    status 0 found, 1 no path, 2 "Contradictory paths" (negative weights)."""
    n = indptr.size - 1
    cap = indices.size + rindices.size + 2
    dk = np.zeros((2, cap), weights.dtype)
    ck = np.zeros((2, cap), np.int64)
    vk = np.zeros((2, cap), np.int64)
    sizes = np.zeros(2, np.int64)
    dists = np.zeros((2, n), weights.dtype)
    seen = np.zeros((2, n), weights.dtype)
    state = np.zeros((2, n), np.int8)
    preds = np.full((2, n), UNSEEN, np.int64)
    preds[0, s] = NONE
    preds[1, t] = NONE
    state[0, s] = 1
    state[1, t] = 1
    count = 0
    sizes[0] = _push(dk[0], ck[0], vk[0], 0, dk[0, 0], count, s)  # distance 0
    count += 1
    sizes[1] = _push(dk[1], ck[1], vk[1], 0, dk[1, 0], count, t)
    count += 1
    have = False
    final = dk[0, 0]
    meet = NONE
    direction = 1
    while sizes[0] and sizes[1]:
        direction = 1 - direction
        size = _pop(dk[direction], ck[direction], vk[direction], sizes[direction])
        sizes[direction] = size
        d, v = dk[direction, size], vk[direction, size]
        if state[direction, v] == 2:
            continue
        state[direction, v] = 2
        dists[direction, v] = d
        if state[1 - direction, v] == 2:
            return 0, final, meet, preds[0], preds[1]
        if direction == 0:
            ip, ix, w = indptr, indices, weights
        else:
            ip, ix, w = rindptr, rindices, rweights
        for j in range(ip[v], ip[v + 1]):
            u = ix[j]
            vu = d + w[j]
            if state[direction, u] == 2:
                if vu < dists[direction, u]:
                    return 2, final, meet, preds[0], preds[1]
            elif state[direction, u] == 0 or vu < seen[direction, u]:
                state[direction, u] = 1
                seen[direction, u] = vu
                sizes[direction] = _push(dk[direction], ck[direction], vk[direction], sizes[direction], vu, count, u)
                count += 1
                preds[direction, u] = v
                if state[1 - direction, u] != 0:
                    total = vu + seen[1 - direction, u]
                    if not have or final > total:
                        have, final, meet = True, total, u
    return 1, final, meet, preds[0], preds[1]


# -- Bellman-Ford ---------------------------------------------------------------------------------
@njit(**_OPTS)
def bellman_ford(indptr, indices, weights, floats, sources, heuristic):
    """networkx's ``_inner_bellman_ford`` from ``sources``: ``(status, order, dist, is_float, head,
    nxt, val)``; status 0, or 1 (a negative cycle: networkx raises ``NetworkXUnbounded``).
    ``order``: the nodes in the order networkx's ``dist`` gains them; each node's predecessor list
    as networkx keeps it (linked: ``head[v]``, ``nxt[k]``, ``val[k]``, -1 ends it)."""
    n = indptr.size - 1
    mixed = floats.size > 0
    dist = np.zeros(n, weights.dtype)
    known = np.zeros(n, np.bool_)
    is_float = np.zeros(n, np.bool_)
    order = np.empty(n, np.int64)
    found = 0
    cap = 1024 + 2 * indices.size + sources.size
    head = np.full(n, -1, np.int64)
    tail = np.full(n, -1, np.int64)
    nxt = np.full(cap, -1, np.int64)
    val = np.full(cap, -1, np.int64)
    entries = 0
    pred_edge = np.full(n, UNSEEN, np.int64)
    ru_a = np.full(n, UNSEEN, np.int64)  # recent_update[v] = (a, b)
    ru_b = np.full(n, UNSEEN, np.int64)
    counts = np.zeros(n, np.int64)
    in_q = np.zeros(n, np.bool_)
    queue = np.empty(n + 1, np.int64)  # circular: a node is queued at most once at a time
    qh, qn = 0, 0
    for s in sources:
        known[s] = True
        order[found] = s
        found += 1
        pred_edge[s] = NONE
        ru_a[s] = ru_b[s] = NONE
        queue[(qh + qn) % queue.size] = s
        qn += 1
        in_q[s] = True
    while qn:
        u = queue[qh]
        qh = (qh + 1) % queue.size
        qn -= 1
        in_q[u] = False
        if _pred_queued(head, nxt, val, in_q, u):
            continue
        du = dist[u]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            dv = du + weights[j]
            if not known[v] or dv < dist[v]:
                if heuristic:
                    if v == ru_a[u] or v == ru_b[u]:
                        return 1, order[:found], dist, is_float, head, nxt, val
                    if pred_edge[v] == u:
                        ru_a[v], ru_b[v] = ru_a[u], ru_b[u]
                    else:
                        ru_a[v], ru_b[v] = u, v
                if not in_q[v]:
                    queue[(qh + qn) % queue.size] = v
                    qn += 1
                    in_q[v] = True
                    counts[v] += 1
                    if counts[v] == n:
                        return 1, order[:found], dist, is_float, head, nxt, val
                if not known[v]:
                    known[v] = True
                    order[found] = v
                    found += 1
                dist[v] = dv
                is_float[v] = is_float[u] or (mixed and floats[j])
                nxt, val, cap = _room(nxt, val, entries, cap)
                head[v] = -1
                entries = _append(head, tail, nxt, val, entries, v, u)
                pred_edge[v] = u
            elif known[v] and dv == dist[v]:
                nxt, val, cap = _room(nxt, val, entries, cap)
                entries = _append(head, tail, nxt, val, entries, v, u)
    return 0, order[:found], dist, is_float, head, nxt, val


@njit(**_OPTS)
def _pred_queued(head, nxt, val, in_q, u):
    """Whether one of ``u``'s predecessors is queued (networkx skips ``u`` then)."""
    k = head[u]
    while k >= 0:
        if in_q[val[k]]:
            return True
        k = nxt[k]
    return False


@njit(**_OPTS)
def _room(nxt, val, entries, cap):
    """The predecessor links, doubled where ``entries`` fills them: ``(nxt, val, cap)``."""
    if entries == cap:
        nxt = np.concatenate((nxt, np.full(cap, -1, np.int64)))
        val = np.concatenate((val, np.full(cap, -1, np.int64)))
        cap *= 2
    return nxt, val, cap


# -- sums over all pairs -----------------------------------------------------------------------------
@njit(**_OPTS)
def hop_sum(indptr, indices):
    """The sum over every source of its BFS depths (``average_shortest_path_length``'s numerator)."""
    n = indptr.size - 1
    total = 0
    depth = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for s in range(n):
        depth[:] = -1
        depth[s] = 0
        queue[0] = s
        head, tail = 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            total += depth[v]
            for j in range(indptr[v], indptr[v + 1]):
                w = indices[j]
                if depth[w] < 0:
                    depth[w] = depth[v] + 1
                    queue[tail] = w
                    tail += 1
    return total


@njit(**_OPTS)
def distance_sum(indptr, indices, weights, floats, bellman):
    """The sum, in networkx's order, of the distances from every source (Dijkstra's, or with
    ``bellman`` Bellman-Ford's); status 1 where a search raises (negative weights)."""
    n = indptr.size - 1
    total = weights[:0].sum()
    src = np.empty(1, np.int64)
    for s in range(n):
        src[0] = s
        if bellman:
            status, order, dist, _, _, _, _ = bellman_ford(indptr, indices, weights, floats, src, True)
        else:
            status, order, _, dist, _, _, _, _, _ = dijkstra(indptr, indices, weights, floats, src, np.inf, NONE,
                                                             False)
        if status:
            return status, total
        for v in order:
            total += dist[v]
    return 0, total

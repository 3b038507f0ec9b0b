"""Kernels of networkx's structural algorithms, in the order networkx's own code visits nodes (as
:mod:`._kernels`): the k-truss (``k_truss``), common neighbours of node pairs (the link-prediction
scores), topological generations (Kahn's search of ``topological_generations`` and
``topological_sort``) and the longest path of a DAG (``dag_longest_path``)."""

from __future__ import annotations

import numpy as np

from ._kernels import _OPTS, NONE, njit

__all__ = ["NONE", "common_neighbours", "generations", "longest_path", "truss"]


# -- k-truss ----------------------------------------------------------------------------------------
@njit(**_OPTS)
def truss(indptr, indices, k):
    """The edges of the k-truss of a simple undirected graph (rows sorted, both directions, no
    self-loops): ``(u, v, alive)`` per edge ``u < v``. An edge survives while at least ``k − 2``
    triangles hold it; removing edges in any order reaches the same (largest) such subgraph,
    which networkx's rounds of removal also reach."""
    n = indptr.size - 1
    m2 = indices.size
    eid = np.empty(m2, np.int64)
    ne = 0
    for u in range(n):
        for j in range(indptr[u], indptr[u + 1]):
            if u < indices[j]:
                eid[j] = ne
                ne += 1
    eu = np.empty(ne, np.int64)
    ev = np.empty(ne, np.int64)
    for u in range(n):
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if u < v:
                eu[eid[j]], ev[eid[j]] = u, v
            else:
                lo, hi = indptr[v], indptr[v + 1]
                while lo < hi:  # u's place in v's sorted row
                    mid = (lo + hi) >> 1
                    if indices[mid] < u:
                        lo = mid + 1
                    else:
                        hi = mid
                eid[j] = eid[lo]
    alive = np.ones(ne, np.bool_)
    support = np.zeros(ne, np.int64)
    for e in range(ne):
        ea, eb = indptr[eu[e] + 1], indptr[ev[e] + 1]
        a, b = _next_common(indices, indptr[eu[e]], ea, indptr[ev[e]], eb)
        while a < ea and b < eb:
            support[e] += 1
            a, b = _next_common(indices, a + 1, ea, b + 1, eb)
    need = k - 2
    queue = np.empty(ne, np.int64)
    queued = np.zeros(ne, np.bool_)
    tail = 0
    for e in range(ne):
        if support[e] < need:
            queue[tail] = e
            queued[e] = True
            tail += 1
    head = 0
    while head < tail:
        e = queue[head]
        head += 1
        alive[e] = False
        ea, eb = indptr[eu[e] + 1], indptr[ev[e] + 1]
        a, b = _next_common(indices, indptr[eu[e]], ea, indptr[ev[e]], eb)
        while a < ea and b < eb:
            f, g = eid[a], eid[b]
            if alive[f] and alive[g]:
                for h in (f, g):
                    support[h] -= 1
                    if support[h] < need and not queued[h]:
                        queued[h] = True
                        queue[tail] = h
                        tail += 1
            a, b = _next_common(indices, a + 1, ea, b + 1, eb)
    return eu, ev, alive


@njit(**_OPTS)
def _next_common(indices, a, ea, b, eb):
    """From positions ``a`` and ``b`` in two sorted rows (ending at ``ea`` and ``eb``), the
    positions of the next entry they share; ``a == ea`` or ``b == eb`` where there is none."""
    while a < ea and b < eb:
        if indices[a] < indices[b]:
            a += 1
        elif indices[a] > indices[b]:
            b += 1
        else:
            break
    return a, b


@njit(**_OPTS)
def common_neighbours(indptr, indices, degree, us, vs, want):
    """For pairs ``(us[i], vs[i])`` over sorted rows: the number of common neighbours other than
    the pair itself (networkx's ``common_neighbors``), the number in the union of the two
    neighbourhoods, and the sum over the common ones of ``1 / degree`` (``want`` 1) or
    ``1 / log(degree)`` (``want`` 2); -1 in ``count`` where a degree-1 node makes that log 0."""
    p = us.size
    count = np.zeros(p, np.int64)
    union = np.zeros(p, np.int64)
    total = np.zeros(p, np.float64)
    for i in range(p):
        ea, eb = indptr[us[i] + 1], indptr[vs[i] + 1]
        a, b = _next_common(indices, indptr[us[i]], ea, indptr[vs[i]], eb)
        c = 0
        both = 0
        s = 0.0
        bad = False
        while a < ea and b < eb:
            w = indices[a]
            both += 1
            a, b = _next_common(indices, a + 1, ea, b + 1, eb)
            if w == us[i] or w == vs[i]:
                continue
            c += 1
            if want == 1:
                s += 1.0 / degree[w]
            elif want == 2:
                if degree[w] == 1:
                    bad = True
                else:
                    s += 1.0 / np.log(degree[w])
        count[i] = -1 if bad else c
        union[i] = (indptr[us[i] + 1] - indptr[us[i]]) + (indptr[vs[i] + 1] - indptr[vs[i]]) - both
        total[i] = s
    return count, union, total


# -- directed acyclic graphs ----------------------------------------------------------------------
@njit(**_OPTS)
def generations(indptr, indices):
    """networkx's ``topological_generations``: ``(order, starts, left)``; generation g is
    ``order[starts[g]:starts[g + 1]]``, each in networkx's order (the sources in node order, then
    each node as its last in-arc is removed, parents in order, children in adjacency order);
    ``left`` counts the nodes on or behind a cycle (networkx then raises NetworkXUnfeasible)."""
    n = indptr.size - 1
    indegree = np.zeros(n, np.int64)
    for j in range(indices.size):
        indegree[indices[j]] += 1
    order = np.empty(n, np.int64)
    starts = np.empty(n + 1, np.int64)
    tail = 0
    for v in range(n):
        if indegree[v] == 0:
            order[tail] = v
            tail += 1
    g = 0
    head = 0
    starts[0] = 0
    while head < tail:
        end = tail
        while head < end:
            v = order[head]
            head += 1
            for j in range(indptr[v], indptr[v + 1]):
                c = indices[j]
                indegree[c] -= 1
                if indegree[c] == 0:
                    order[tail] = c
                    tail += 1
        g += 1
        starts[g] = end
    return order[:tail], starts[:g + 1], n - tail


@njit(**_OPTS)
def longest_path(order, pindptr, pindices, pweights):
    """networkx's ``dag_longest_path`` over the nodes ``order`` (a topological order): each
    node's best predecessor (the first of the longest, in ``G.pred`` order; none where the best
    is negative) and the node where the longest path ends (the first of the longest)."""
    n = pindptr.size - 1
    dist = np.zeros(n, pweights.dtype)
    parent = np.full(n, NONE, np.int64)
    done = np.zeros(n, np.bool_)
    for v in order:
        best = dist[0] * 0
        which = NONE
        for j in range(pindptr[v], pindptr[v + 1]):
            u = pindices[j]
            d = dist[u] + pweights[j]
            if which == NONE or d > best:
                best, which = d, u
        if which != NONE and best >= 0:
            dist[v], parent[v] = best, which
        else:
            dist[v], parent[v] = dist[0] * 0, NONE
        done[v] = True
    end = NONE
    for v in order:
        if end == NONE or dist[v] > dist[end]:
            end = v
    return parent, end

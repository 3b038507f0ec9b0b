"""Compiled (numba) Louvain: the classic sequential local-moving sweep and the aggregation of a
level's communities, over a CSR without self-loops (their weights held apart, per vertex).

A sweep visits the vertices in a given order; each takes v out of its community, adds up v's
arc weights per neighbouring community (a community-indexed array stamped per visit, so nothing
is cleared and nothing hashed; the communities met listed in the order first met) and puts v
where ``w(v, C) − γ·k_v·tot(C) / 2m`` is largest, its own community winning ties and the first
met among the others. The sum of a sweep's modularity gains comes back, so the caller stops a
level once a sweep gains too little. Only the vertices next to a move since their last visit are
visited again, those of the community moved to left out (Ozaki et al.'s pruning: a vertex that
nothing changed around would seldom move).

Plain sequential code: the result depends on the order alone, so a seed repeats it.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def _add(acc, stamp, touched, met, cu, mark, w):
    """Weight ``w`` added to community cu's sum in ``acc``, whose entries count only where
    ``stamp`` holds ``mark`` (the vertex or community being visited): a community met the first
    time in this visit is stamped, its sum cleared and it is listed in touched[met]. Returns the
    communities met."""
    if stamp[cu] != mark:
        stamp[cu] = mark
        acc[cu] = 0.0
        touched[met] = cu
        met += 1
    acc[cu] += w
    return met


@njit(**_OPTS)
def sweep(indptr, indices, weights, k, order, c, tot, m2, gamma, acc, stamp, touched, active):
    """One sweep over ``order`` (vertices whose ``active`` flag is clear are skipped; a vertex
    that moves sets its neighbours'). ``c``, ``tot`` (the weighted degree of each community),
    ``active`` are updated in place; ``acc`` (float64), ``stamp`` (int64, all −1 at first) are
    per-community scratch, ``touched`` per-vertex. Returns ``(vertices moved, modularity gained)``."""
    moved = 0
    gained = 0.0
    scale = gamma / m2
    for i in range(order.size):
        v = order[i]
        if not active[v]:
            continue
        active[v] = 0
        cv = c[v]
        kv = k[v]
        met = 0
        for j in range(indptr[v], indptr[v + 1]):
            met = _add(acc, stamp, touched, met, c[indices[j]], v, weights[j])
        tot[cv] -= kv
        own = acc[cv] if stamp[cv] == v else 0.0
        stay = own - scale * kv * tot[cv]
        best, best_gain = cv, stay
        for t in range(met):
            cc = touched[t]
            g = acc[cc] - scale * kv * tot[cc]
            if g > best_gain:
                best, best_gain = cc, g
        # A move must gain more than rounding could invent (else two equal communities could
        # trade a vertex for ever).
        if best != cv and best_gain - stay > 1e-12 * max(abs(stay), kv):
            c[v] = best
            moved += 1
            gained += 2.0 * (best_gain - stay) / m2
            for j in range(indptr[v], indptr[v + 1]):
                u = indices[j]
                if c[u] != best:
                    active[u] = 1
        tot[c[v]] += kv
        # stamps name the visiting vertex; a later visit of v in another sweep must not reuse
        # them, so clear what this visit stamped.
        for t in range(met):
            stamp[touched[t]] = -1
    return moved, gained


@njit(**_OPTS)
def renumber(c):
    """The communities ``c`` numbered 0..k−1 in the order of their smallest member (in place);
    returns k."""
    n = c.size
    new = np.full(n, -1, np.int64)
    k = 0
    for v in range(n):
        if new[c[v]] < 0:
            new[c[v]] = k
            k += 1
    for v in range(n):
        c[v] = new[c[v]]
    return k


@njit(**_OPTS)
def aggregate(indptr, indices, weights, loops, c, k):
    """The graph of the ``k`` communities ``c`` (numbered 0..k−1): its CSR ``(indptr, indices,
    weights)`` with one arc each way between two communities that share edges (their weights
    summed; rows in the order each neighbour is first met) and its self-loops (the communities'
    inner weight: their vertices' loops and half the arcs between their vertices)."""
    n = c.size
    count = np.zeros(k + 1, np.int64)
    for v in range(n):
        count[c[v] + 1] += 1
    for x in range(k):
        count[x + 1] += count[x]
    members = np.empty(n, np.int64)
    fill = count[:-1].copy()
    for v in range(n):
        members[fill[c[v]]] = v
        fill[c[v]] += 1
    out_ptr = np.zeros(k + 1, np.int64)
    out_idx = np.empty(indices.size, indices.dtype)
    out_w = np.empty(indices.size, np.float64)
    new_loops = np.zeros(k, np.float64)
    acc = np.zeros(k, np.float64)
    stamp = np.full(k, -1, np.int64)
    touched = np.empty(k, np.int64)
    at = 0
    for x in range(k):
        met = 0
        inner = 0.0
        for i in range(count[x], count[x + 1]):
            v = members[i]
            new_loops[x] += loops[v]
            for j in range(indptr[v], indptr[v + 1]):
                cu = c[indices[j]]
                if cu == x:
                    inner += weights[j]
                else:
                    met = _add(acc, stamp, touched, met, cu, x, weights[j])
        new_loops[x] += inner / 2.0
        for t in range(met):
            out_idx[at] = touched[t]
            out_w[at] = acc[touched[t]]
            at += 1
        out_ptr[x + 1] = at
    return out_ptr, out_idx[:at].copy(), out_w[:at].copy(), new_loops


@njit(**_OPTS)
def drop_loops(indptr, indices, weights):
    """The CSR without its self-loops, each vertex's self-loop weight (an undirected store holds a
    loop once) and weighted degree (a loop counted twice): ``(indptr, indices, weights, loops,
    degrees)``."""
    n = indptr.size - 1
    loops = np.zeros(n, np.float64)
    degrees = np.zeros(n, np.float64)
    out_ptr = np.zeros(n + 1, np.int64)
    out_idx = np.empty(indices.size, indices.dtype)
    out_w = np.empty(indices.size, np.float64)
    at = 0
    for v in range(n):
        for j in range(indptr[v], indptr[v + 1]):
            if indices[j] == v:
                loops[v] += weights[j]
                degrees[v] += 2.0 * weights[j]
            else:
                degrees[v] += weights[j]
                out_idx[at] = indices[j]
                out_w[at] = weights[j]
                at += 1
        out_ptr[v + 1] = at
    return out_ptr, out_idx[:at].copy(), out_w[:at].copy(), loops, degrees

"""networkx's ``edge_betweenness_centrality`` compiled (as :mod:`._kernels`): Brandes' accumulation
over a BFS, or over networkx's Dijkstra with its own (distance, count, predecessor, node) heap."""

from __future__ import annotations

import numpy as np

from ._kernels import _OPTS, njit


# -- edge betweenness ---------------------------------------------------------------------------------
@njit(**_OPTS)
def edge_brandes(indptr, indices, weights, weighted, arc_edge, sources, num_edges):
    """networkx's ``edge_betweenness_centrality`` before rescaling: for each source in turn, its
    shortest-path counts (a BFS queue, or with ``weighted`` networkx's Dijkstra with a
    (distance, count) heap, equal paths counted as it finds them), then the dependencies back
    over the settled order, each arc's share added to its edge (``arc_edge``) in the same order
    and with the same float operations as networkx's, so the sums are networkx's bit for bit."""
    n = indptr.size - 1
    m = indices.size
    bc = np.zeros(num_edges, np.float64)
    sigma = np.zeros(n, np.float64)
    delta = np.zeros(n, np.float64)
    dist = np.zeros(n, weights.dtype)
    seen = np.zeros(n, weights.dtype)
    state = np.zeros(n, np.int8)  # 0 unseen, 1 seen, 2 settled
    order = np.empty(n, np.int64)
    # predecessor lists (networkx's P): entries linked per node; at most one an arc a source
    phead = np.full(n, -1, np.int64)
    ptail = np.full(n, -1, np.int64)
    pnext = np.full(m + 1, -1, np.int64)
    parc = np.full(m + 1, -1, np.int64)  # the arc (tail's CSR position) of each entry
    ptail_node = np.full(m + 1, -1, np.int64)
    cap = m + 2
    dk = np.zeros(cap, weights.dtype)
    ck = np.zeros(cap, np.int64)
    vk = np.zeros(cap, np.int64)
    fromk = np.zeros(cap, np.int64)
    for s in sources:
        sigma[:] = 0.0
        delta[:] = 0.0
        state[:] = 0
        phead[:] = -1
        entries = 0
        settled = 0
        sigma[s] = 1.0
        if not weighted:
            dist[s] = 0
            state[s] = 2
            order[0] = s
            tail = 1
            head = 0
            while head < tail:
                v = order[head]
                head += 1
                for j in range(indptr[v], indptr[v + 1]):
                    w = indices[j]
                    if state[w] == 0:
                        state[w] = 2
                        dist[w] = dist[v] + 1
                        order[tail] = w
                        tail += 1
                    if dist[w] == dist[v] + 1:
                        sigma[w] += sigma[v]
                        if phead[w] < 0:
                            phead[w] = entries
                        else:
                            pnext[ptail[w]] = entries
                        ptail[w] = entries
                        pnext[entries] = -1
                        parc[entries] = j
                        ptail_node[entries] = v
                        entries += 1
            settled = tail
        else:
            size = 0
            count = 0
            # the heap entry (distance, count, predecessor, node)
            dk[0], ck[0], vk[0], fromk[0] = dist[s] * 0, count, s, s
            size = 1
            count += 1
            state[s] = 1
            seen[s] = dist[s] * 0
            while size:
                size = _pop4(dk, ck, vk, fromk, size)
                d, v, p = dk[size], vk[size], fromk[size]
                if state[v] == 2:
                    continue
                sigma[v] += sigma[p]  # the source too, as networkx's (every count doubled: ratios exact)
                state[v] = 2
                dist[v] = d
                order[settled] = v
                settled += 1
                for j in range(indptr[v], indptr[v + 1]):
                    w = indices[j]
                    vw = d + weights[j]
                    if state[w] != 2 and (state[w] == 0 or vw < seen[w]):
                        state[w] = 1
                        seen[w] = vw
                        size = _push4(dk, ck, vk, fromk, size, vw, count, v, w)
                        count += 1
                        sigma[w] = 0.0
                        phead[w] = entries  # P[w] = [v]
                        ptail[w] = entries
                        pnext[entries] = -1
                        parc[entries] = j
                        ptail_node[entries] = v
                        entries += 1
                    elif vw == seen[w]:
                        sigma[w] += sigma[v]
                        if phead[w] < 0:
                            phead[w] = entries
                        else:
                            pnext[ptail[w]] = entries
                        ptail[w] = entries
                        pnext[entries] = -1
                        parc[entries] = j
                        ptail_node[entries] = v
                        entries += 1
        for i in range(settled - 1, -1, -1):
            w = order[i]
            coeff = (1 + delta[w]) / sigma[w]
            k = phead[w]
            while k >= 0:
                v = ptail_node[k]
                c = sigma[v] * coeff
                bc[arc_edge[parc[k]]] += c
                delta[v] += c
                k = pnext[k]
    return bc


@njit(**_OPTS)
def _less4(dk, ck, a, b):
    return dk[a] < dk[b] or (dk[a] == dk[b] and ck[a] < ck[b])


@njit(**_OPTS)
def _swap4(dk, ck, vk, fk, a, b):
    dk[a], dk[b] = dk[b], dk[a]
    ck[a], ck[b] = ck[b], ck[a]
    vk[a], vk[b] = vk[b], vk[a]
    fk[a], fk[b] = fk[b], fk[a]


@njit(**_OPTS)
def _push4(dk, ck, vk, fk, size, d, c, p, v):
    i = size  # at most one push an arc and the source's: the heap has room
    dk[i], ck[i], vk[i], fk[i] = d, c, v, p
    while i > 0:
        q = (i - 1) >> 1
        if _less4(dk, ck, i, q):
            _swap4(dk, ck, vk, fk, i, q)
            i = q
        else:
            break
    return size + 1


@njit(**_OPTS)
def _pop4(dk, ck, vk, fk, size):
    last = size - 1
    _swap4(dk, ck, vk, fk, 0, last)
    i = 0
    while True:
        a = 2 * i + 1
        if a >= last:
            break
        b = a + 1
        m = b if b < last and _less4(dk, ck, b, a) else a
        if _less4(dk, ck, m, i):
            _swap4(dk, ck, vk, fk, m, i)
            i = m
        else:
            break
    return last

"""networkx's ``edge_betweenness_centrality`` compiled (as :mod:`._kernels`): Brandes' accumulation
over a BFS, or over networkx's Dijkstra with its (distance, count, predecessor, node) heap: :mod:`._kernels`'s
(distance, count, node) heap, each push's predecessor kept by its count."""

from __future__ import annotations

import numpy as np

from ._kernels import _OPTS, _pop, _push, njit


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
    # predecessor lists (networkx's P): entries linked per node; at most one an arc a source.
    # preds[0] head, [1] tail per node; links[0] next, [1] arc (tail's CSR position), [2] tail node
    preds = np.full((2, n), -1, np.int64)
    links = np.full((3, m + 1), -1, np.int64)
    cap = m + 2
    heap = (np.zeros(cap, weights.dtype), np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int64))
    for s in sources:
        sigma[:] = 0.0
        delta[:] = 0.0
        state[:] = 0
        preds[0, :] = -1
        sigma[s] = 1.0
        if weighted:
            settled = _dijkstra_counts(indptr, indices, weights, s, sigma, dist, seen, state, order, preds, links,
                                       heap)
        else:
            settled = _bfs_counts(indptr, indices, s, sigma, dist, state, order, preds, links)
        for i in range(settled - 1, -1, -1):
            w = order[i]
            coeff = (1 + delta[w]) / sigma[w]
            k = preds[0, w]
            while k >= 0:
                v = links[2, k]
                c = sigma[v] * coeff
                bc[arc_edge[links[1, k]]] += c
                delta[v] += c
                k = links[0, k]
    return bc


@njit(**_OPTS)
def _add_pred(preds, links, entries, w, j, v):
    """Append the arc ``j`` from ``v`` to ``w``'s predecessors as entry ``entries``; the next entry."""
    if preds[0, w] < 0:
        preds[0, w] = entries
    else:
        links[0, preds[1, w]] = entries
    preds[1, w] = entries
    links[0, entries] = -1
    links[1, entries] = j
    links[2, entries] = v
    return entries + 1


@njit(**_OPTS)
def _bfs_counts(indptr, indices, s, sigma, dist, state, order, preds, links):
    """Shortest-path counts from ``s`` by hops (networkx's BFS); how many nodes were settled."""
    entries = 0
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
                entries = _add_pred(preds, links, entries, w, j, v)
    return tail


@njit(**_OPTS)
def _dijkstra_counts(indptr, indices, weights, s, sigma, dist, seen, state, order, preds, links, heap):
    """Shortest-path counts from ``s`` by weight, as networkx's Dijkstra finds them (its
    (distance, count, predecessor, node) heap); how many nodes were settled."""
    dk, ck, vk, fromk = heap  # fromk[c]: the predecessor pushed with count c (counts are distinct)
    entries = 0
    settled = 0
    count = 0
    size = _push(dk, ck, vk, 0, dist[s] * 0, count, s)
    fromk[count] = s
    count += 1
    state[s] = 1
    seen[s] = dist[s] * 0
    while size:
        size = _pop(dk, ck, vk, size)
        d, v, p = dk[size], vk[size], fromk[ck[size]]
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
                size = _push(dk, ck, vk, size, vw, count, w)
                fromk[count] = v
                count += 1
                sigma[w] = 0.0
                preds[0, w] = -1  # P[w] = [v]
                entries = _add_pred(preds, links, entries, w, j, v)
            elif vw == seen[w]:
                sigma[w] += sigma[v]
                entries = _add_pred(preds, links, entries, w, j, v)
    return settled

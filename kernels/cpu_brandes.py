"""Compiled (numba) Brandes betweenness over a whole out-CSR in memory (:func:`.cpu.brandes` calls
it; :mod:`.cpu_compiled` re-exports it): per source a FIFO queue BFS (hops) or Dijkstra with an
indexed heap (positive arc weights) whose order of settling is networkx's stack S, the path counts
σ forward over it, then the dependencies δ backward, O(arcs reached) a source and nothing per
level. The tight-arc test with weights is the engine's (``dist[u] + w == dist[v]`` and
``dist[u] < dist[v]``, distances summed as networkx sums them).

Instead of networkx's predecessor lists, the backward sweep pulls over each vertex's out-arcs
into the level below (hops: ``depth[w] == depth[u] + 1``; weights: tight arcs), reading
``(1 + δ[w]) / σ[w]``, which is stored in place of δ[w] once w is done: δ[u] = σ[u] Σ that.
Parallel arcs count as distinct paths, as in the engine's sweeps.

Sources are shared among numba's threads, round robin; each thread has its own scratch and its
own sums (one row of each 2-D array), which the caller adds up. The scratch comes in clean (σ
and the coefficients 0, depths -1 for hops, 0 with weights, distances inf, heap positions -1)
and each source leaves it clean, touching only the vertices it reached.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit, prange
from .cpu_heap import pop, sift_up

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def _finish(bc, s, endpoints, order, tail, reached, unreached, sigma, coeff):
    """The end of a source's sweep: its own endpoint count, then the scratch reset where the
    sweep reached (``reached[v] = unreached``), so that the next source starts clean."""
    if endpoints:
        bc[s] += tail - 1
    for i in range(tail):
        v = order[i]
        reached[v] = unreached
        sigma[v] = 0.0
        coeff[v] = 0.0


@njit(**_OPTS)
def _hops_from(indptr, indices, s, endpoints, bc, depth, sigma, coeff, queue):
    """Brandes on hops from ``s``, added into ``bc``: (levels, arcs scanned)."""
    depth[s] = 0
    sigma[s] = 1.0
    queue[0] = s
    head, tail, level, level_end, arcs = 0, 1, 0, 1, 0
    while head < tail:  # forward: BFS by a queue, the path counts pushed over the arcs to the next level
        if head == level_end:
            level += 1
            level_end = tail
        u = queue[head]
        head += 1
        below = depth[u] + 1
        su = sigma[u]
        start, stop = indptr[u], indptr[u + 1]
        arcs += stop - start
        for j in range(start, stop):
            v = indices[j]
            dv = depth[v]
            if dv < 0:
                depth[v] = below
                dv = below
                queue[tail] = v
                tail += 1
            if dv == below:
                sigma[v] += su
    for i in range(tail - 1, 0, -1):  # backward: the queue in reverse, the source left out
        u = queue[i]
        below = depth[u] + 1
        acc = 0.0
        for j in range(indptr[u], indptr[u + 1]):
            w = indices[j]
            if depth[w] == below:
                acc += coeff[w]
        d = sigma[u] * acc
        bc[u] += d + 1.0 if endpoints else d
        coeff[u] = (1.0 + d) / sigma[u]
    _finish(bc, s, endpoints, queue, tail, depth, -1, sigma, coeff)
    return level, 2 * arcs


@njit(parallel=True, **_OPTS)
def brandes_hops(indptr, indices, sources, endpoints, bc, depth, sigma, coeff, queue, levels, arcs):
    """Brandes on hops from every vertex of ``sources``; thread c adds into ``bc[c]`` and works in
    row c of ``depth``, ``sigma``, ``coeff`` and ``queue`` (n each). Fills ``levels`` and ``arcs``
    (per source)."""
    copies = bc.shape[0]
    for c in prange(copies):
        for i in range(c, sources.size, copies):
            levels[i], arcs[i] = _hops_from(indptr, indices, sources[i], endpoints, bc[c], depth[c], sigma[c],
                                            coeff[c], queue[c])


@njit(**_OPTS)
def _dijkstra_from(indptr, indices, weights, s, endpoints, bc, dist, sigma, coeff, depth, order, keys, verts, pos):
    """Brandes on the arc weights (all positive) from ``s``, added into ``bc``: (levels of the
    tight arcs' DAG, arcs scanned). ``depth`` is the most tight arcs on a path to each vertex."""
    dist[s] = 0.0
    keys[0] = 0.0
    verts[0] = s
    pos[s] = 0
    size, tail, arcs = 1, 0, 0
    while size:  # Dijkstra: with positive weights a settled vertex is never lowered again
        u, du, size = pop(keys, verts, pos, size)
        order[tail] = u
        tail += 1
        start, stop = indptr[u], indptr[u + 1]
        arcs += stop - start
        for j in range(start, stop):
            v = indices[j]
            cand = du + weights[j]
            if cand < dist[v]:
                dist[v] = cand
                if pos[v] < 0:
                    size += 1
                    sift_up(keys, verts, pos, size - 1, cand, v)
                else:
                    sift_up(keys, verts, pos, pos[v], cand, v)
    sigma[s] = 1.0
    top = 0
    for i in range(tail):  # forward in the order of settling: a tight arc's tail was settled first
        u = order[i]
        du, su, below = dist[u], sigma[u], depth[u] + 1
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            dv = dist[v]
            if du < dv and du + weights[j] == dv:
                sigma[v] += su
                if depth[v] < below:
                    depth[v] = below
                    top = max(top, below)
    for i in range(tail - 1, 0, -1):  # backward: a tight arc's head comes later in the order
        u = order[i]
        du = dist[u]
        acc = 0.0
        for j in range(indptr[u], indptr[u + 1]):
            w = indices[j]
            dw = dist[w]
            if du < dw and du + weights[j] == dw:
                acc += coeff[w]
        d = sigma[u] * acc
        bc[u] += d + 1.0 if endpoints else d
        coeff[u] = (1.0 + d) / sigma[u]
    _finish(bc, s, endpoints, order, tail, dist, np.inf, sigma, coeff)
    for i in range(tail):
        depth[order[i]] = 0
    return top, 3 * arcs


@njit(parallel=True, **_OPTS)
def brandes_dijkstra(indptr, indices, weights, sources, endpoints, bc, dist, sigma, coeff, depth, order, keys, verts,
                     pos, levels, arcs):
    """:func:`brandes_hops` on positive arc weights ``weights`` (float64, CSR order), with the
    distances, the order of settling and the heap (``keys``, ``verts``, ``pos``) as scratch rows."""
    copies = bc.shape[0]
    for c in prange(copies):
        for i in range(c, sources.size, copies):
            levels[i], arcs[i] = _dijkstra_from(indptr, indices, weights, sources[i], endpoints, bc[c], dist[c],
                                                sigma[c], coeff[c], depth[c], order[c], keys[c], verts[c], pos[c])

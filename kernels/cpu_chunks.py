"""What the parallel BFS (:mod:`.cpu_bfs_parallel`) and delta-stepping (:mod:`.cpu_sssp_relax`,
:mod:`.cpu_sssp_piles`) share when threads take a frontier's arcs in chunks: the frontier's arcs
numbered through a prefix by VERTEX_CHUNK vertices (:func:`arc_position` finds where an arc
stands), and thread-local buffers of vertices queued into a shared pile (:func:`push`,
:func:`flush`), each flush reserving its slots with one atomic add."""

from __future__ import annotations

from numba import njit

from .cpu_atomic import atomic_add

_OPTS = dict(cache=True, nogil=True)

VERTEX_CHUNK = 256  # frontier vertices per entry of the arc prefix


@njit(**_OPTS)
def flush(pile, box, buf, b):
    """buf[:b] onto ``pile`` at slots reserved by adding b to ``box[0]`` (its fill)."""
    at = atomic_add(box, 0, b)
    for i in range(b):
        pile[at + i] = buf[i]


@njit(**_OPTS)
def push(pile, box, buf, b, v):
    """``v`` into the thread's buffer ``buf`` holding b vertices, flushed onto ``pile`` when full.
    Returns the buffer's fill."""
    buf[b] = v
    b += 1
    if b == buf.size:
        flush(pile, box, buf, b)
        b = 0
    return b


@njit(**_OPTS)
def arc_position(indptr, frontier, head, f, chunk_arcs, lo):
    """Where arc ``lo`` of the frontier frontier[head:head + f] stands (its arcs numbered in
    frontier order; ``chunk_arcs[c]``: the arcs before vertex chunk c): ``(h, j)``, the frontier
    slot of its vertex and its place in the CSR. ``lo`` must be below the frontier's arcs."""
    a, z = 0, (f + VERTEX_CHUNK - 1) // VERTEX_CHUNK
    while z - a > 1:
        mid = (a + z) // 2
        if chunk_arcs[mid] <= lo:
            a = mid
        else:
            z = mid
    pos = chunk_arcs[a]
    h = head + a * VERTEX_CHUNK
    while True:
        u = frontier[h]
        d = indptr[u + 1] - indptr[u]
        if pos + d > lo:
            break
        pos += d
        h += 1
    return h, indptr[u] + (lo - pos)

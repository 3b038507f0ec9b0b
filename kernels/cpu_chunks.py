"""What the parallel BFS (:mod:`.cpu_bfs_parallel`) and delta-stepping (:mod:`.cpu_sssp_relax`,
:mod:`.cpu_sssp_piles`) share when threads take a frontier's arcs in chunks: the frontier's arcs
numbered through a prefix by VERTEX_CHUNK vertices (:func:`arc_position` finds where an arc
stands), and thread-local buffers of vertices queued into a shared pile (:func:`push`,
:func:`flush`), each flush reserving its slots with one atomic add; and :func:`serial_and_parallel`,
which compiles a whole kernel twice so that a call on one thread compiles none of the parallel
machinery."""

from __future__ import annotations

from ._jit import njit
from .cpu_atomic import atomic_add

_OPTS = dict(cache=True, nogil=True)

VERTEX_CHUNK = 256  # frontier vertices per entry of the arc prefix


def serial_and_parallel(make):
    """``(serial, parallel)``: the function ``make(parallel)`` returns, compiled for ``parallel``
    False and True, named after it with ``_serial`` and ``_parallel`` (each cached on disk under
    its name). In that function ``parallel`` is a constant, and numba drops a branch on a constant
    before typing: the serial entry's ``if parallel and ...:`` branches are never typed, so the
    kernels on numba's threads they call (``parallel=True``, seconds of compiling each) are not
    compiled for it. numba types and compiles every callee of a function, branch taken at run time
    or not: with one entry, a first call on one thread compiled the whole parallel machinery (a
    cold cache's first SSSP took 35 s on the 2-core development machine, 13 with its serial entry).
    Hand ``make`` nothing but ``parallel`` through its closure: the cache's key hashes the closure's
    values, and a dispatcher's differs in every process. Callers pick the entry by thread count."""
    entries = []
    for parallel in (False, True):
        fn = make(parallel)
        fn.__name__ = fn.__qualname__ = f"{fn.__name__}_{'parallel' if parallel else 'serial'}"
        entries.append(njit(**_OPTS)(fn))
    return tuple(entries)


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

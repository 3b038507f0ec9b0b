"""The indexed binary heap of the compiled CPU kernels (Dijkstra in :mod:`.cpu_compiled` and
:mod:`.cpu_brandes`): ``keys[i]`` and ``verts[i]`` at slot i, ``pos[v]`` the slot of vertex v (-1
where it is not queued)."""

from __future__ import annotations

from ._jit import njit

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def _put(keys, verts, pos, i, k, v):
    """Vertex v with key k into slot i."""
    keys[i] = k
    verts[i] = v
    pos[v] = i


@njit(**_OPTS)
def sift_up(keys, verts, pos, i, k, v):
    """Place vertex v with key k at slot i or above (keys live in the heap: sifting reads them
    contiguously, not through the vertex)."""
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] <= k:
            break
        _put(keys, verts, pos, i, keys[p], verts[p])
        i = p
    _put(keys, verts, pos, i, k, v)


@njit(**_OPTS)
def sift_down(keys, verts, pos, size, k, v):
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
        _put(keys, verts, pos, i, keys[c], verts[c])
        i = c
    _put(keys, verts, pos, i, k, v)


@njit(**_OPTS)
def pop(keys, verts, pos, size):
    """Take the root off a heap of ``size`` entries: ``(vertex, key, size - 1)``."""
    u = verts[0]
    du = keys[0]
    pos[u] = -1
    size -= 1
    if size:
        sift_down(keys, verts, pos, size, keys[size], verts[size])
    return u, du, size

"""GPU Brandes betweenness on hops over a device CSR (kernels in ``gpu_brandes.cu``), the same
function as :func:`.cpu.brandes`: one source at a time, the frontier a queue of vertex ids on the
device (each level's vertices after the level before: networkx's stack S), a forward launch per
level that claims the next level's vertices and adds the path counts, then a backward launch per
level, deepest first, for the dependencies. One look from the host a level (the next level's
size, to size the next launch); nothing O(n) per level."""

from __future__ import annotations

import cupy as cp
import numpy as np

from .gpu_module import _launch


def brandes(indptr, indices, weights, sources, bc, endpoints: bool, spare: int = 0):
    """:func:`.cpu.brandes` on the device for hops (``indptr`` int64, ``indices`` int32, ``bc``
    float64 on the device; ``sources`` on the host; ``spare`` unused: the sources run one after
    another in 24 bytes a vertex). Returns ``(levels per source, arcs scanned)``, or None for
    ``weights`` (weighted betweenness keeps the engine's sweeps on the GPU)."""
    if weights is not None:
        return None
    sources = np.asarray(sources, np.int64)
    n = bc.size
    depth = cp.empty(n, dtype=np.int32)
    sigma, delta = cp.empty(n, dtype=np.float64), cp.empty(n, dtype=np.float64)
    queue = cp.empty(max(n, 1), dtype=np.int32)
    ctl = cp.zeros(2, dtype=np.uint64)  # [0] the queue's tail, [1] arcs scanned (all sources)
    plus = np.float64(1.0 if endpoints else 0.0)
    levels = np.zeros(sources.size, np.int64)
    for i, s in enumerate(sources.tolist()):
        depth.fill(-1)
        sigma.fill(0)
        delta.fill(0)
        depth[s], sigma[s], queue[0], ctl[0] = 0, 1.0, s, 1
        offsets = [0, 1]  # level L is queue[offsets[L]:offsets[L + 1]]
        while True:
            lo, hi = offsets[-2], offsets[-1]
            _launch("ooc_graph_brandes_forward", 32 * (hi - lo),
                    (indptr, indices, queue, np.int64(lo), np.int64(hi), depth, sigma, ctl))
            tail = int(ctl[:1].get()[0])  # device -> host: the next level's end, to size its launch
            if tail == hi:
                break
            offsets.append(tail)
        levels[i] = len(offsets) - 2
        for level in range(len(offsets) - 2, 0, -1):  # the deepest level first; the source's left out
            lo, hi = offsets[level], offsets[level + 1]
            _launch("ooc_graph_brandes_backward", 32 * (hi - lo),
                    (indptr, indices, queue, np.int64(lo), np.int64(hi), depth, sigma, delta, bc, plus))
        if endpoints:
            bc[s] += float(offsets[-1] - 1)
    arcs = 2 * int(ctl[1:].get()[0]) if sources.size else 0  # device -> host: once a call
    return levels, arcs

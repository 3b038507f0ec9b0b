"""GPU traversals over device CSRs (kernels in ``gpu_traversal.cu``): frontier advances (one warp
per vertex, or arc-balanced), levels of small frontiers queued on the device, bottom-up levels of
a direction-optimising BFS. The engine
(``ooc_graph.engine.traversal``) chooses among them per level."""

from __future__ import annotations

import cupy as cp
import numpy as np

from ooc_graph import config

from .gpu_module import _THREADS, _dummy64, _kernel, _launch, _plus, _weights
from .gpu_transfer import is_mapped

# advance_min, advance_levels and bottom_up take ``parent`` and build the shortest-path tree on
# the way (see the engine's ``propagate_min``).
LEVEL_PARENTS = True


def _tracking(parent):
    """The kernel arguments for ``parent``: ``(track, array)`` (a dummy where None)."""
    return np.int32(parent is not None), parent if parent is not None else _dummy64().view(cp.int64)

# advance_min spreads a frontier's arcs evenly over the GPU (a binary search per arc), on this
# grid, where config gpu.balanced says so (its default, with the measurement).
_BALANCED_BLOCKS = 4096


def advance_min(indptr, indices, weights, frontier, state, plus, changed, parent=None) -> None:
    """Frontier advance over a device CSR (weights float64 or None): ``state[v] = min(state[v],
    state[u] + w)`` over the out-arcs of the ``frontier`` vertices; ``changed[v] = 1`` where it
    dropped. ``parent`` (int64, only for a level of a level-synchronous traversal with a constant
    increment): ``parent[v] = min(parent[v], u)`` over the arcs u→v that reach v's new level."""
    nf = int(frontier.size)
    if not nf:
        return
    w, use_w, wt = _weights(weights, plus)
    track = _tracking(parent)
    if not config.get().gpu.balanced:
        _launch(f"ooc_graph_advance_min<{wt}>", 32 * nf, (indptr, indices, w, use_w, _plus(plus), frontier,
                                                         np.int64(nf), state.view(cp.uint64), changed, *track))
        return
    offsets = cp.zeros(nf + 1, dtype=np.int64)
    cp.cumsum(indptr[frontier + 1] - indptr[frontier], out=offsets[1:])
    # The whole grid whatever the frontier's size: its arcs (on the device) may be millions for
    # one vertex (a grid sized by vertices gave the first BFS level from R-MAT-26's top vertex
    # one block: 3.3 ms); blocks with nothing to do exit at once.
    _kernel(f"ooc_graph_advance_balanced<{wt}>")(
        (_BALANCED_BLOCKS,), (_THREADS,), (indptr, indices, w, use_w, _plus(plus), frontier, offsets, np.int64(nf),
                                 state.view(cp.uint64), changed, *track))


_FLAG_TILE = 2048  # OOC_FLAG_TILE of gpu_traversal.cu


def flatnonzero(flags):
    """``cupy.flatnonzero`` of a uint8 array, ascending: a count per tile of 2,048 flags, a scan
    of the counts, and the ids written from each tile's offset (one look from the host: the
    total). CuPy's took 0.6-1.1 ms for the 67M flags of an R-MAT-26 BFS level on an H200."""
    if flags.dtype != np.uint8 or not flags.flags.c_contiguous or flags.ndim != 1 or flags.data.ptr % 8:
        return cp.flatnonzero(flags)
    n = int(flags.size)
    tiles = (n + _FLAG_TILE - 1) // _FLAG_TILE
    if not tiles:
        return cp.empty(0, dtype=np.int64)
    counts = cp.zeros(tiles + 1, dtype=np.int64)
    _kernel("ooc_graph_flag_count")((tiles,), (_THREADS,), (flags, np.int64(n), counts[1:]))
    offsets = cp.cumsum(counts)
    ids = cp.empty(int(offsets[-1].get()), dtype=np.int64)
    if ids.size:
        _kernel("ooc_graph_flag_ids")((tiles,), (_THREADS,), (flags, np.int64(n), offsets, ids))
    return ids


def csr_parents(indptr, indices, weights, dist, plus, parent, lo: int, hi: int) -> None:
    """Shortest-path parents of the vertices ``[lo, hi)`` whose parent is still unset (the
    number of vertices, ``parent.size``) from the in-arc CSR ``(indptr, indices, weights)`` (rows
    ascending by source): ``parent[v]`` becomes the smallest u with a strictly tight arc u→v
    (u ≠ v, ``dist[u] < dist[v]``, ``dist[u] + w == dist[v]``; ``w`` the arc's weight, or
    ``plus``), left as it is where there is none. The same parents as
    ``tight_parent``'s strict pass over every arc, found by one thread a vertex that stops at its
    first tight arc; rows longer than config ``gpu.parent_first_arcs`` with no tight arc among their first
    ones are finished arc-balanced (one look from the host: how many such rows)."""
    if hi <= lo:
        return
    w, use_w, wt = _weights(weights, plus)
    if is_mapped(indices):  # rows in host memory: a warp a row, whole lines at a time
        _kernel(f"ooc_graph_csr_parent_warp<{wt}>")(
            (_BALANCED_BLOCKS,), (_THREADS,), (indptr, indices, w, use_w, _plus(plus), dist, parent, np.int64(lo),
                                               np.int64(hi), np.int64(parent.size)))
        return
    first = np.int64(config.get().gpu.parent_first_arcs)
    # a heavy row holds more than `first` arcs: at most arcs / first of them in [lo, hi)
    ends = indptr[lo:hi + 1:hi - lo].get()  # indptr[lo], indptr[hi]
    arcs = int(ends[-1] - ends[0])
    heavy = cp.empty(max(1, min(hi - lo, arcs // int(first) + 1)), dtype=np.int64)
    count = cp.zeros(1, dtype=np.uint64)
    _launch(f"ooc_graph_csr_parent<{wt}>", hi - lo, (indptr, indices, w, use_w, _plus(plus), dist, parent,
                                                     np.int64(lo), np.int64(hi), first, heavy, count,
                                                     np.int64(parent.size)))
    nh = int(count.get()[0])
    if not nh:
        return
    heavy = heavy[:nh]
    offsets = cp.zeros(nh + 1, dtype=np.int64)
    # ufuncs where operators would do: CuPy's operators with a scalar operand import cupyx, and
    # with it SciPy's sparse modules (~0.5 s of a process's first SSSP)
    cp.cumsum(cp.subtract(cp.subtract(indptr[cp.add(heavy, 1)], indptr[heavy]), first), out=offsets[1:])
    _kernel(f"ooc_graph_csr_parent_heavy<{wt}>")(
        (_BALANCED_BLOCKS,), (_THREADS,), (indptr, indices, w, use_w, _plus(plus), dist, parent, heavy, offsets,
                                           np.int64(nh), first))


def bottom_up(indptr, indices, state, level: float, next_level: float, changed, lo: int, hi: int,
              parent=None) -> None:
    """One bottom-up level over the in-CSR ``(indptr, indices)``: every vertex in ``[lo, hi)`` with
    an infinite state and an in-neighbour whose state is ``level`` takes ``next_level`` and is
    marked in ``changed``, and with ``parent`` (int64) takes the first such in-neighbour (the
    smallest: rows are ascending by source) as its parent. Exact only while the traversal is
    level-synchronous with a constant increment (the frontier is then exactly the vertices at
    ``level``)."""
    _launch("ooc_graph_bottom_up", hi - lo, (indptr, indices, np.int64(lo), np.int64(hi), np.float64(level),
                                             np.float64(next_level), state.view(cp.uint64), changed,
                                             *_tracking(parent)))


# The grid that strides over advance_levels' frontier queues (of config gpu.queue_capacity
# vertices: what a level may hand on without the host).
_QUEUE_BLOCKS = 512


@cp.memoize(for_each_device=True)
def _queues(capacity: int):
    return (cp.empty(capacity, dtype=np.int64), cp.empty(capacity, dtype=np.int64),
            cp.zeros(2, dtype=np.uint64), cp.zeros(4, dtype=np.uint64))


def advance_levels(indptr, indices, weights, frontier, state, plus, changed, levels: int | None = None,
                   max_arcs: int = 1 << 62, bound: float = np.inf, parent=None):
    """Up to ``levels`` (default: config ``gpu.levels_per_sync``) frontier advances from
    ``frontier`` (at most config ``gpu.queue_capacity`` vertices,
    state in ``state``, ``changed`` all zero) queued back to back, then one look from the host;
    they stop early at a frontier with more than ``max_arcs`` out-arcs. A vertex whose state drops
    to more than ``bound`` (near-far's far pile) is marked in ``changed`` and not queued. Returns
    ``(levels run, arcs relaxed, the next frontier)``; ``changed`` marks only those far vertices
    unless the frontier outgrew the queue or ``max_arcs`` (then it marks that frontier too, and
    all it marks is returned). ``parent``: as for :func:`advance_min`, each level."""
    cfg = config.get().gpu
    capacity = cfg.queue_capacity
    levels = cfg.levels_per_sync if levels is None else levels
    q = _queues(capacity)
    cur, nxt, sizes, ctl = q
    nf = int(frontier.size)
    cur[:nf] = frontier
    sizes[0], sizes[1] = nf, 0
    ctl.fill(0)
    w, use_w, wt = _weights(weights, plus)
    advance = _kernel(f"ooc_graph_advance_queue<{wt}>")
    turn = _kernel("ooc_graph_queue_turn")
    st = state.view(cp.uint64)
    track = _tracking(parent)
    c = 0
    for _ in range(levels):
        a, b = q[c], q[1 - c]
        advance((_QUEUE_BLOCKS,), (_THREADS,), (indptr, indices, w, use_w, _plus(plus), np.float64(bound), a, b,
                                                sizes, np.int32(c), np.int64(capacity), st, changed, ctl,
                                                *track))
        turn((64,), (_THREADS,), (b, sizes, np.int32(c), np.int64(capacity), np.uint64(max_arcs), changed,
                                  ctl))
        c = 1 - c
    stop, ran, arcs, _, size0, size1 = (int(v) for v in cp.concatenate([ctl, sizes]).get())
    if stop == 1:
        return ran, arcs, cp.empty(0, dtype=np.int64)
    if stop == 2:
        return ran, arcs, flatnonzero(changed)
    return ran, arcs, q[c][:(size0, size1)[c]].copy()

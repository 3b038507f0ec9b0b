"""CPU traversals over CSRs held in memory, level by level (the engine's loop when it does not run
a whole compiled traversal: distributed ranks, out-of-core budgets): frontier advances, bottom-up
levels of a direction-optimising BFS, and the next frontier from the change flags. The CPU
counterparts of :mod:`.gpu_traversal`; :mod:`.cpu` re-exports them."""

from __future__ import annotations

import numpy as np

from .cpu import _ids, _plus, _weights, compiled


def advance_min(indptr, indices, weights, frontier, state, plus, changed, parent=None) -> None:
    """Frontier advance over a CSR: for u in ``frontier`` and each arc u→v,
    ``state[v] = min(state[v], state[u] + w)``; ``changed[v] = 1`` where it dropped. ``parent``
    (only for a level of a level-synchronous traversal with a constant increment):
    ``parent[v] = min(parent[v], u)`` over the arcs u→v that reach v's new level."""
    fast = compiled()
    if fast is not None:
        w, weighted, c = _weights(None if weights is None else np.asarray(weights, np.float64), plus)
        fast.advance_min(_ids(indptr), _ids(indices), w, weighted, c, np.asarray(frontier, np.int64), state, changed,
                         _NO_PARENTS if parent is None else parent, parent is not None)
        return
    pos, owner = _rows(indptr, frontier)
    if not pos.size:
        return
    v = indices[pos].astype(np.int64)
    cand = _plus(state[frontier[owner]], None if weights is None else weights[pos].astype(np.float64), plus)
    before = state[v]
    np.minimum.at(state, v, cand)
    changed[v[state[v] < before]] = 1
    if parent is not None:
        tight = state[v] == cand
        np.minimum.at(parent, v[tight], frontier[owner[tight]])


_NO_PARENTS = np.empty(0, np.int64)


def _rows(indptr, vertices):
    """Positions of the arcs of CSR rows ``vertices`` (in order) and each arc's row number."""
    start = np.asarray(indptr[vertices], np.int64)
    deg = np.asarray(indptr[vertices + 1], np.int64) - start
    row = np.repeat(np.arange(vertices.size), deg)
    return np.arange(row.size, dtype=np.int64) - np.repeat(np.cumsum(deg) - deg, deg) + start[row], row


def bottom_up(indptr, indices, state, level: float, next_level: float, changed, lo: int, hi: int,
              parent=None) -> None:
    """One bottom-up level over an in-CSR (as :func:`.gpu_traversal.bottom_up`): every vertex of
    ``[lo, hi)`` not reached with an in-neighbour at ``level`` takes ``next_level`` (and with
    ``parent`` the smallest such in-neighbour as its parent). NumPy looks at every in-arc of the
    unreached vertices (the GPU stops at the first hit)."""
    todo = lo + np.flatnonzero(np.isinf(state[lo:hi]))
    pos, row = _rows(indptr, todo)
    at_level = state[indices[pos]] == level
    hit = np.zeros(todo.size, dtype=bool)
    hit[row[at_level]] = True
    state[todo[hit]] = next_level
    changed[todo[hit]] = 1
    if parent is not None:
        np.minimum.at(parent, todo[row[at_level]], indices[pos[at_level]].astype(np.int64))


LEVEL_PARENTS = True  # advance_min and bottom_up take ``parent`` (see the engine's propagate_min)


def flatnonzero(flags: np.ndarray) -> np.ndarray:
    """The ids of the set flags, ascending (``numpy.flatnonzero``)."""
    return np.flatnonzero(flags)

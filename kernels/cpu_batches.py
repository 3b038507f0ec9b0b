"""A chunk's arcs as a destination-major CSR, by a compiled counting sort (numba).

:func:`.cpu.prepare` sorts a chunk's arcs by destination with NumPy's stable argsort; this makes
the same CSR in two passes over the arcs (count the arcs of each destination, then place each
arc at its destination's next slot, in the order the chunk holds them), so the result is the
stable sort's, element for element. It costs O(arcs + destinations in the chunk's range): the
caller uses it where that range is not much larger than the arcs (a CEL chunk's destination
intervals), and NumPy where the destinations spread far (the CEL augmentation).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def _count(dst_local, dst_base, lengths, dst_lo, counts):
    """``counts[r + 1]``: the arcs of row r (destination r + dst_lo); False (counts partly made)
    if a destination lies outside the range."""
    at = 0
    span = counts.size - 1
    for b in range(lengths.size):
        base = dst_base[b] - dst_lo
        for i in range(at, at + lengths[b]):
            r = np.int64(dst_local[i]) + base
            if r < 0 or r >= span:
                return False
            counts[r + 1] += 1
        at += lengths[b]
    return True


@njit(**_OPTS)
def _place(src_local, dst_local, weight, weighted, src_base, dst_base, lengths, dst_lo, slot, indices, w):
    """Each arc (global source id, weight) at its row's next slot, rows in the chunk's order."""
    at = 0
    for b in range(lengths.size):
        dbase = dst_base[b] - dst_lo
        sbase = src_base[b]
        for i in range(at, at + lengths[b]):
            r = np.int64(dst_local[i]) + dbase
            p = slot[r]
            slot[r] = p + 1
            indices[p] = np.int64(src_local[i]) + sbase
            if weighted:
                w[p] = weight[i]
        at += lengths[b]


@njit(**_OPTS)
def _rows(counts, rows, indptr):
    """The non-empty rows and their offsets; ``counts`` becomes each row's first slot."""
    k = 0
    total = 0
    for r in range(counts.size - 1):
        c = counts[r + 1]
        counts[r] = total
        if c:
            rows[k] = r
            indptr[k] = total
            k += 1
            total += c
    indptr[k] = total
    return k


def csr_by_destination(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi, idx_dtype):
    """(indptr, indices, rows, row_start, weights or None) of the chunk's arcs by destination, as
    :func:`.cpu.prepare` builds them with a stable argsort: ``indptr`` and ``indices`` (global
    source ids) of ``idx_dtype``, ``rows`` (destination - dst_lo) and ``row_start`` int64,
    weights float64. None where a destination lies outside ``[dst_lo, dst_hi)``."""
    lengths = np.asarray(lengths, np.int64)
    m = int(lengths.sum())
    span = max(int(dst_hi) - int(dst_lo), 0)
    counts = np.zeros(span + 1, np.int64)
    dst_base = np.asarray(dst_base, np.int64)
    if not _count(dst_local, dst_base, lengths, int(dst_lo), counts):
        return None
    rows = np.empty(span, np.int64)
    offsets = np.empty(span + 1, np.int64)
    k = _rows(counts, rows, offsets)
    indices = np.empty(m, idx_dtype)
    weighted = weight is not None
    w = np.empty(m if weighted else 0, np.float64)
    _place(src_local, dst_local, weight if weighted else w, weighted, np.asarray(src_base, np.int64), dst_base,
           lengths, int(dst_lo), counts, indices, w)
    return offsets[:k + 1].astype(idx_dtype), indices, rows[:k].copy(), offsets[:k].copy(), (w if weighted else None)

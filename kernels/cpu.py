"""CPU (NumPy/SciPy) operators. A batch is the arcs of one chunk in destination-major CSR form.

The CSR is built once per chunk load by SciPy's COO→CSR counting sort, so every pass afterwards
runs as a sparse matrix-vector product (``pull_sum``) or a segmented reduction (``relax_min``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class Batch:
    dst_lo: int
    dst_hi: int
    matrix: sp.csr_matrix          # rows: dst - dst_lo; columns: global source ids; data: ones
    weight: np.ndarray | None      # float64, CSR order
    rows: np.ndarray               # non-empty rows (destination - dst_lo)
    row_start: np.ndarray          # CSR offset of each non-empty row
    src_intervals: np.ndarray      # source intervals present in the batch

    @property
    def num_arcs(self) -> int:
        return int(self.matrix.nnz)

    @property
    def nbytes(self) -> int:
        m = self.matrix
        total = m.data.nbytes + m.indices.nbytes + m.indptr.nbytes + self.rows.nbytes + self.row_start.nbytes
        return total + (0 if self.weight is None else self.weight.nbytes)


def prepare(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi, num_vertices,
            src_intervals) -> Batch:
    """Global ids from local ones (per-block bases repeated over block lengths), then CSR by destination."""
    src = src_local.astype(np.int64) + np.repeat(np.asarray(src_base, np.int64), lengths)
    row = dst_local.astype(np.int64) + np.repeat(np.asarray(dst_base, np.int64) - dst_lo, lengths)
    nrows = max(dst_hi - dst_lo, 0)
    # Arcs are sorted by (dst, src) inside each block; a stable sort by row gives CSR order.
    order = np.argsort(row, kind="stable")
    counts = np.bincount(row, minlength=nrows) if row.size else np.zeros(nrows, np.int64)
    indptr = np.zeros(nrows + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    idx_dtype = np.int32 if num_vertices <= np.iinfo(np.int32).max else np.int64
    indices = src[order].astype(idx_dtype)
    matrix = sp.csr_matrix((np.ones(indices.size), indices, indptr.astype(idx_dtype, copy=False)),
                           shape=(nrows, max(num_vertices, 1)))
    rows = np.flatnonzero(counts).astype(np.int64)
    w = None if weight is None else np.asarray(weight, np.float64)[order]
    return Batch(dst_lo, dst_hi, matrix, w, rows, indptr[rows], np.asarray(src_intervals, np.int64))


def pull_sum(batch: Batch, x: np.ndarray, out: np.ndarray) -> None:
    if batch.num_arcs:
        out[batch.dst_lo:batch.dst_hi] += batch.matrix @ x


def _candidates(batch: Batch, state: np.ndarray, plus):
    cand = state[batch.matrix.indices]
    if plus is None:
        cand = cand + batch.weight
    elif plus:
        cand = cand + plus
    return cand


def relax_min(batch: Batch, state: np.ndarray, plus) -> np.ndarray:
    """One min-relaxation over the batch; returns the (global) vertices whose state dropped."""
    if not batch.num_arcs:
        return np.zeros(0, np.int64)
    best = np.minimum.reduceat(_candidates(batch, state, plus), batch.row_start)
    v = batch.rows + batch.dst_lo
    better = best < state[v]
    v = v[better]
    state[v] = best[better]
    return v


def reverse_min(batch: Batch, state: np.ndarray) -> np.ndarray:
    """``state[u] = min(state[u], state[v])`` for every arc u→v (the other direction of WCC)."""
    if not batch.num_arcs:
        return np.zeros(0, np.int64)
    m = batch.matrix
    dst = np.repeat(np.arange(batch.dst_lo, batch.dst_hi, dtype=np.int64), np.diff(m.indptr))
    src = m.indices
    before = state[src]
    np.minimum.at(state, src, state[dst])
    changed = state[src] < before
    return np.unique(src[changed]).astype(np.int64)


def tight_parent(batch: Batch, dist: np.ndarray, plus, parent: np.ndarray, strict: bool) -> None:
    """``parent[v] = min(parent[v], u)`` over arcs u→v with ``dist[u] + w == dist[v]`` (u ≠ v).

    With ``strict`` only arcs with ``dist[u] < dist[v]`` count; otherwise only those with
    ``dist[u] == dist[v]`` from a source that has a parent to a destination that has none
    (zero-weight plateaus), so no cycle can form. ``parent`` uses ``n`` for "none yet".
    """
    if not batch.num_arcs:
        return
    m = batch.matrix
    src = m.indices.astype(np.int64)
    dst = np.repeat(np.arange(batch.dst_lo, batch.dst_hi, dtype=np.int64), np.diff(m.indptr))
    du, dv = dist[src], dist[dst]
    tight = (_candidates(batch, dist, plus) == dv) & (src != dst) & np.isfinite(dv)
    tight &= (du < dv) if strict else ((du == dv) & (parent[src] < parent.size) & (parent[dst] == parent.size))
    cand = np.where(tight, src, parent.size)
    best = np.minimum.reduceat(cand, batch.row_start)
    v = batch.rows + batch.dst_lo
    np.minimum.at(parent, v, best)

"""Sub-graphs, blocks and the Concatenated Edge List (CEL).

An arc (u, v) lies in block (interval(u), interval(v)). The blocks of one destination interval form
a sub-graph; sub-graphs are concatenated in destination-interval order, blocks inside a sub-graph in
source-interval order, arcs inside a block by (destination, source). Ids are stored local to their
interval. The CEL is cut into fixed-size chunks (``chunk_arcs`` arcs) for transfer; a chunk may span
several blocks and sub-graphs, so every consumer decodes it against the block table.
"""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record


def sort_arcs(major: np.ndarray, minor: np.ndarray, weight, num_vertices: int, *, dedupe: bool):
    """Sort arcs by (major, minor); with ``dedupe`` merge repeats, keeping the smallest weight.

    Returns ``(major, minor, weight)`` as new int64/float arrays. Uses one int64 composite key where
    ``num_vertices**2`` fits, a lexsort otherwise.
    """
    n = max(int(num_vertices), 1)
    if n <= 3_037_000_499:  # n*n < 2**63
        key = major.astype(np.int64) * n + minor
        if weight is None:
            key.sort()
            order = None
        else:
            order = np.argsort(key, kind="stable")
            key = key[order]
        if dedupe and key.size:
            first = np.empty(key.size, dtype=bool)
            first[0] = True
            np.not_equal(key[1:], key[:-1], out=first[1:])
            if weight is not None:
                starts = np.flatnonzero(first)
                weight = np.minimum.reduceat(weight[order], starts)
                order = None
            key = key[first]
        if weight is not None and order is not None:
            weight = weight[order]
        return key // n, key % n, weight
    order = np.lexsort((minor, major))
    major, minor = major[order], minor[order]
    weight = None if weight is None else weight[order]
    if dedupe and major.size:
        first = np.empty(major.size, dtype=bool)
        first[0] = True
        first[1:] = (major[1:] != major[:-1]) | (minor[1:] != minor[:-1])
        if weight is not None:
            weight = np.minimum.reduceat(weight, np.flatnonzero(first))
        major, minor = major[first], minor[first]
    return major, minor, weight


@record
class Blocks:
    """Arcs of a run of sub-graphs in CEL order, with their block table."""

    src_local: np.ndarray
    dst_local: np.ndarray
    weight: np.ndarray | None
    block_src: np.ndarray  # source interval of each block
    block_dst: np.ndarray  # destination interval of each block (= its sub-graph)
    block_len: np.ndarray  # arcs in each block


def blocks_of_sorted(rows, cols, weight, interval_size: int, local_dtype, *, rows_are_dst: bool,
                     back_only: bool = False) -> list[Blocks]:
    """Arcs sorted by (row, column) laid out in blocks, in little memory: one :class:`Blocks` per
    interval of rows, each ordered by the columns' interval (a stable radix sort where intervals
    fit 16 bits), the order inside a block kept, so temporaries are the size of one interval's arcs.

    ``rows_are_dst``: rows are destinations, so the blocks are in CEL order (by destination
    interval, then source interval). Otherwise rows are sources and the blocks are source-major;
    with ``back_only`` only arcs into earlier intervals are kept: the CEL augmentation (the
    out-arcs of a sub-graph's destinations into earlier sub-graphs).
    """
    size = int(interval_size)
    out = []
    if not len(rows):
        return out
    first, last = int(rows[0]) // size, int(rows[-1]) // size
    cuts = np.searchsorted(rows, np.arange(first, last + 2, dtype=np.int64) * size)
    for major in range(first, last + 1):
        a, b = int(cuts[major - first]), int(cuts[major - first + 1])
        if a == b:
            continue
        c, r, w = cols[a:b], rows[a:b], None if weight is None else weight[a:b]
        minor = c // size
        if back_only:
            keep = minor < major
            c, r, minor = c[keep], r[keep], minor[keep]
            w = None if w is None else w[keep]
            if not len(c):
                continue
        if int(minor.max(initial=0)) < 1 << 15:
            minor = minor.astype(np.int16)  # a stable sort of 16-bit keys is a radix sort
        order = np.argsort(minor, kind="stable")
        counts = np.bincount(minor, minlength=int(minor.max()) + 1)
        del minor
        nonzero = np.flatnonzero(counts)
        c_local = (c[order] % size).astype(local_dtype)
        r_local = (r[order] - major * size).astype(local_dtype)
        majors = np.full(len(nonzero), major, np.int64)
        src, dst = (c_local, r_local) if rows_are_dst else (r_local, c_local)
        bsrc, bdst = (nonzero.astype(np.int64), majors) if rows_are_dst else (majors, nonzero.astype(np.int64))
        out.append(Blocks(src_local=src, dst_local=dst, weight=None if w is None else w[order],
                          block_src=bsrc, block_dst=bdst, block_len=counts[nonzero].astype(np.int64)))
    return out


@record(frozen=True)
class ChunkLayout:
    """Which blocks a CEL range [start, stop) covers, and how many of each block's arcs."""

    start: int
    stop: int
    first_block: int
    lengths: np.ndarray  # arcs of each covered block inside the range
    src_interval: np.ndarray
    dst_interval: np.ndarray


def chunk_layout(block_offsets, block_src, block_dst, start: int, stop: int) -> ChunkLayout:
    """Decode the block structure of CEL arcs [start, stop) from the (sparse) block table."""
    first = int(np.searchsorted(block_offsets, start, side="right")) - 1
    last = int(np.searchsorted(block_offsets, stop, side="left"))  # exclusive
    first = max(first, 0)
    offs = np.asarray(block_offsets[first:last + 1], dtype=np.int64)
    lo = np.maximum(offs[:-1], start)
    hi = np.minimum(offs[1:], stop)
    return ChunkLayout(
        start=start, stop=stop, first_block=first,
        lengths=(hi - lo).astype(np.int64),
        src_interval=np.asarray(block_src[first:last], dtype=np.int64),
        dst_interval=np.asarray(block_dst[first:last], dtype=np.int64),
    )


def to_global(layout: ChunkLayout, src_local, dst_local, interval_size: int, id_dtype=np.int64):
    """Global (src, dst) ids of a chunk's arcs."""
    size = np.int64(interval_size)
    sbase = np.repeat(layout.src_interval * size, layout.lengths)
    dbase = np.repeat(layout.dst_interval * size, layout.lengths)
    src = (src_local.astype(np.int64) + sbase).astype(id_dtype, copy=False)
    dst = (dst_local.astype(np.int64) + dbase).astype(id_dtype, copy=False)
    return src, dst

"""Buckets: runs of whole intervals whose arcs are sorted in memory, one bucket at a time (or one
per worker thread), and the memory they take.

Arcs are split by bucket (:func:`partition`: with NumPy on worker threads, or with a compiled kernel
on numba's threads) and appended to bucket spills;
:func:`sort_bucket` loads one bucket and sorts it by (row, column) with one int64 key
(``sorting.py``: on the CPU or the GPU) and decodes the key into the store's id type;
``partitioning.cel.blocks_of_sorted`` lays the sorted arcs out as CEL blocks one interval at a
time. Measured peaks (tracemalloc, one bucket of one interval,
2**16 vertices): :data:`BYTES_PER_ARC` below.
"""

from __future__ import annotations

import numpy as np

from ooc_graph import config
from ooc_graph.kernels import cpu as cpu_kernels
from ooc_graph.store.writer import write_array

from . import sorting
from .scratch import Spill, append_to

# Peak bytes per arc while one bucket is sorted and laid out (int32 ids; int64 ids add 8): the
# int64 key and the decoded ids, then one interval's block layout (order, radix-sort buffers,
# local ids). Weights add the sort permutation; the augmentation its own layout.
BYTES_PER_ARC = 40
BYTES_PER_WEIGHTED_ARC = 24
BYTES_PER_AUGMENTED_ARC = 16
# What a sorted bucket's result holds until the writer has appended it (ids, local ids, weights).
RESULT_BYTES_PER_ARC = 16


def bytes_per_arc(*, weighted: bool, augment: bool, wide: bool, weight_size: int = 4) -> int:
    """Peak bytes per arc of a bucket being sorted (8-byte weights cost twice 4-byte ones)."""
    return (BYTES_PER_ARC + 8 * wide + BYTES_PER_WEIGHTED_ARC * weighted * weight_size // 4
            + BYTES_PER_AUGMENTED_ARC * augment)


def plan(data: int, largest: int, total: int, per_arc: int, workers: int) -> tuple[int, int]:
    """(arcs per bucket, workers sorting at once) so that the buckets the workers hold, and the
    results waiting for the writer, fit ``data`` bytes; ``largest`` is the most arcs of one vertex
    (a bucket holds at least those), ``total`` the arcs of the side. Few buckets where they fit:
    enough to keep the workers busy, at least config ``ingest.min_bucket_arcs`` each."""
    held = per_arc + RESULT_BYTES_PER_ARC  # a worker's bucket, and its result until written
    sorters = max(1, min(workers, data // max(1, largest * held) - 1))
    if sorters == 1:
        return max(largest, data // per_arc), 1
    share = data // ((sorters + 1) * held)
    return max(largest, min(share, max(-(-total // sorters), config.get().ingest.min_bucket_arcs))), sorters


def bucket_bounds(counts: np.ndarray, bounds: np.ndarray, limit: int) -> np.ndarray:
    """Vertex boundaries of buckets of at most ``limit`` arcs (``counts`` per vertex): runs of
    whole intervals, or, for an interval with more arcs, runs of its vertices (a vertex with more
    is a bucket of its own). A bucket is thus whole intervals or a part of one interval."""
    per_interval = np.add.reduceat(counts, bounds[:-1]) if counts.size else np.zeros(len(bounds) - 1, np.int64)
    edges, acc = [0], 0
    for i, c in enumerate(per_interval.tolist()):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        if c > limit:
            if acc:
                edges.append(lo)
                acc = 0
            cum = np.cumsum(counts[lo:hi])
            start, base = lo, 0
            while True:
                cut = lo + int(np.searchsorted(cum, base + limit, side="right"))
                cut = max(cut, start + 1)
                if cut >= hi:
                    break
                edges.append(cut)
                start, base = cut, int(cum[cut - lo - 1])
            edges.append(hi)
            continue
        if acc and acc + c > limit:
            edges.append(lo)
            acc = 0
        acc += c
    if edges[-1] != int(bounds[-1]):
        edges.append(int(bounds[-1]))
    return np.asarray(edges, dtype=np.int64)


def whole_intervals(lo: int, hi: int, bounds: np.ndarray) -> bool:
    """Whether bucket ``[lo, hi)`` is a run of whole intervals (else it is part of one)."""
    at = np.searchsorted(bounds, [lo, hi])
    return bool(bounds[min(at[0], len(bounds) - 1)] == lo and bounds[min(at[1], len(bounds) - 1)] == hi)


def partition(edges: np.ndarray, key, src, dst, w, *, threads: int | None = None) -> list[tuple]:
    """``(bucket, src, dst, w)`` of the arcs of each bucket (by their ``key`` vertex) that has any,
    in input order within a bucket. With ``threads`` (see :func:`scatter_threads`), the compiled
    kernel on that many of numba's threads (on one for a chunk below config ``ingest.bucket_parallel_min_arcs``), its
    parts views of one new array per column, which they cover whole; else NumPy, its parts new
    arrays each. Either way the parts are the caller's to keep (``Spill.append(owned=True)``)
    where there are several buckets; with one, the part is the chunk's own arrays."""
    count = len(edges) - 1
    if count == 1:
        return [(0, src, dst, w)] if len(src) else []
    if threads is not None:
        from ooc_graph.kernels import cpu_ingest
        src, dst, w, cuts = cpu_ingest.partition_arcs(edges[:-1], key, src, dst, w,
                                                      threads if len(src) >= config.get().ingest.bucket_parallel_min_arcs else 1)
        return [(i, src[lo:hi], dst[lo:hi], None if w is None else w[lo:hi])
                for i, (lo, hi) in enumerate(zip(cuts[:-1].tolist(), cuts[1:].tolist())) if hi > lo]
    b = np.searchsorted(edges[:-1].astype(key.dtype), key, side="right") - 1  # all keys are below edges[-1]
    if count < 1 << 15:
        b = b.astype(np.int16)  # a stable sort of 16-bit keys is a radix sort: linear
    order = np.argsort(b, kind="stable")
    cuts = np.searchsorted(b[order], np.arange(count + 1))
    del b
    parts = []
    for i in range(count):
        lo, hi = cuts[i], cuts[i + 1]
        if hi > lo:
            part = order[lo:hi]
            parts.append((i, src[part], dst[part], None if w is None else w[part]))
    return parts


def compiled_kernels():
    """The build's compiled kernels (``kernels.cpu_ingest``), or None where numba is missing."""
    if cpu_kernels.compiled() is None:
        return None
    from ooc_graph.kernels import cpu_ingest
    return cpu_ingest


def scatter_threads(compiled: bool, workers: int) -> int | None:
    """The numba threads :func:`partition` splits chunks on, at most ``workers``, where
    ``compiled`` allows the compiled kernels (the degree pass's rule, ``Degrees.compiled_for``)
    and numba is installed; None: NumPy."""
    kernels = compiled_kernels() if compiled else None
    return None if kernels is None else max(1, min(int(workers), kernels.max_threads()))


def sort_bucket(bucket: Spill, lo: int, hi: int, n: int, *, by_dst: bool, dedupe: bool, id_dtype, gpu=False):
    """Load a bucket (rows in ``[lo, hi)``) and delete its files; returns ``(rows, cols, w, where)``
    sorted by (row, column) in ``id_dtype``, repeats merged keeping the smallest weight, and
    where it was sorted (``sorting.py``: on the GPU with ``gpu`` where the bucket fits)."""
    src, dst, w = bucket.load()
    arcs = [dst, src, w] if by_dst else [src, dst, w]
    del src, dst, w  # the sort frees them as it goes
    return sorting.sort_bucket(arcs, lo, hi, n, dedupe=dedupe, id_dtype=id_dtype, gpu=gpu)


def degrees(rows: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Arcs per row in ``[lo, hi)`` of sorted ``rows`` (all below ``hi``)."""
    cuts = np.searchsorted(rows, np.arange(lo, hi, dtype=rows.dtype))
    return np.diff(cuts, append=len(rows)).astype(np.int64)


class BlockWriter:
    """Appends laid-out blocks to local-id (and weight) datasets and writes their block table.
    The datasets are appended through ``writer`` (a :class:`~ooc_graph.store.chunks.ChunkWriter`),
    ``expected`` arcs being a hint of their size."""

    def __init__(self, h5, names, local_dtype, weight_dtype, chunk, *, writer, expected=None):
        self.h5 = h5
        self.src, self.dst = (writer.appendable(h5, name, local_dtype, chunk, expected) for name in names[:2])
        self.weight = None if names[2] is None else writer.appendable(h5, names[2], weight_dtype, chunk, expected)
        self.table = {name: [] for name in ("src", "dst", "len")}

    def append(self, parts) -> None:
        """Append a batch of blocks (the datasets take each column's arrays as one append)."""
        self.src.append([blocks.src_local for blocks in parts])
        self.dst.append([blocks.dst_local for blocks in parts])
        if self.weight is not None:
            self.weight.append([blocks.weight for blocks in parts])
        for blocks in parts:
            self.table["src"].append(blocks.block_src)
            self.table["dst"].append(blocks.block_dst)
            self.table["len"].append(blocks.block_len)

    def finish(self, names):
        """Write the block table (source intervals, destination intervals, offsets) under
        ``names``; returns (source intervals, destination intervals, lengths)."""
        src, dst, length = (np.concatenate(self.table[c]) if self.table[c] else np.zeros(0, np.int64)
                            for c in ("src", "dst", "len"))
        write_array(self.h5, names[0], src)
        write_array(self.h5, names[1], dst)
        write_array(self.h5, names[2], indptr(length))
        return src, dst, length


class Pieces:
    """The blocks of one interval whose arcs were sorted in several buckets. Each bucket's
    blocks are parked on disk as they come; :meth:`blocks` then gives them in block order (a
    block is its pieces in bucket order, which keeps arcs by (row, column)), a batch at a time."""

    def __init__(self, folder, name: str, local_dtype, weight_dtype, *, rows_are_dst: bool, weighted: bool):
        self.paths = {c: folder / f"{name}.{c}" for c in (("src", "dst", "w") if weighted else ("src", "dst"))}
        self.dtypes = {"src": np.dtype(local_dtype), "dst": np.dtype(local_dtype), "w": np.dtype(weight_dtype)}
        self.rows_are_dst = rows_are_dst
        self.parts: list[tuple] = []  # (major, minor intervals, lengths, first arc) per bucket
        self.count = 0

    def add(self, parts) -> None:
        for blk in parts:
            major, minors = ((blk.block_dst[0], blk.block_src) if self.rows_are_dst else
                             (blk.block_src[0], blk.block_dst))
            cols = {"src": blk.src_local, "dst": blk.dst_local, "w": blk.weight}
            for c, p in self.paths.items():
                append_to(p, cols[c], self.dtypes[c])
            self.parts.append((int(major), minors, blk.block_len, self.count))
            self.count += int(blk.block_len.sum())

    def blocks(self, batch_arcs: int):
        """Yield lists of :class:`Blocks`, in block order, of about ``batch_arcs`` arcs each."""
        from ooc_graph.partitioning.cel import Blocks

        if not self.parts:
            return
        major = self.parts[0][0]
        starts = [first + np.concatenate([[0], np.cumsum(lens)[:-1]]) for _, _, lens, first in self.parts]
        order = np.unique(np.concatenate([minors for _, minors, _, _ in self.parts]))
        files = {c: open(p, "rb") for c, p in self.paths.items()}
        try:
            batch, held = [], 0
            for minor in order.tolist():
                cols = {c: [] for c in self.paths}
                length = 0
                for (_, minors, lens, _), first in zip(self.parts, starts):
                    i = int(np.searchsorted(minors, minor))
                    if i == len(minors) or minors[i] != minor:
                        continue
                    for c, f in files.items():
                        f.seek(int(first[i]) * self.dtypes[c].itemsize)
                        cols[c].append(np.fromfile(f, dtype=self.dtypes[c], count=int(lens[i])))
                    length += int(lens[i])
                src, dst = np.concatenate(cols["src"]), np.concatenate(cols["dst"])
                ends = (np.array([minor]), np.array([major]))
                bsrc, bdst = ends if self.rows_are_dst else ends[::-1]
                batch.append(Blocks(src_local=src, dst_local=dst,
                                    weight=np.concatenate(cols["w"]) if "w" in cols else None,
                                    block_src=bsrc.astype(np.int64), block_dst=bdst.astype(np.int64),
                                    block_len=np.array([length], np.int64)))
                held += length
                if held >= batch_arcs:
                    yield batch
                    batch, held = [], 0
            if batch:
                yield batch
        finally:
            for f in files.values():
                f.close()
            for p in self.paths.values():
                p.unlink(missing_ok=True)


def assemble(writer, bounds, make_pieces, batch_arcs: int):
    """A coroutine taking ``(lo, hi, blocks)`` of each bucket in order: the blocks of whole
    intervals go to ``writer`` at once, those of an interval split across buckets once its last
    bucket is in (parked on disk meanwhile by ``make_pieces()``)."""
    pieces = None
    while True:
        lo, hi, parts = yield
        if pieces is None and whole_intervals(lo, hi, bounds):
            writer.append(parts)
            continue
        if pieces is None:
            pieces = make_pieces()
        pieces.add(parts)
        del parts
        if hi in bounds:
            for batch in pieces.blocks(batch_arcs):
                writer.append(batch)
            pieces = None


def indptr(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out

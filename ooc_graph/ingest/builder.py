"""Building a store from a stream of edges in bounded memory.

Edges arrive in chunks (:meth:`GraphBuilder.add`) and are spilled to a scratch folder beside the
output. :meth:`GraphBuilder.finish` then (1) settles the vertex ids, (2) counts degrees in one pass
over the spill, (3) scatters arcs into buckets of consecutive intervals sized to the memory budget,
(4) sorts each bucket on its own and appends it to the CSR and the CEL. Nothing is renamed into
place before every dataset is written.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from ooc_graph import __version__
from ooc_graph._memory import budget, human
from ooc_graph._parallel import ordered_map, workers as num_workers
from ooc_graph._progress import progress_bar
from ooc_graph.errors import InputError, ParameterError
from ooc_graph.partitioning.cel import back_arcs, build_blocks, sort_arcs
from ooc_graph.partitioning.intervals import global_id_dtype, interval_bounds, local_id_dtype
from ooc_graph.store import _format as F
from ooc_graph.store.graph import encode_labels
from ooc_graph.store.writer import AtomicFile, append, create_appendable, write_array

log = logging.getLogger("ooc_graph.ingest")

# Peak bytes per arc while one bucket is sorted and laid out: int64 ids, sort keys, the CEL order,
# the block ids and their sorted copies, temporaries (measured: ~110 unweighted, ~140 weighted).
BYTES_PER_ARC_IN_BUCKET = 160
# Bytes per vertex held throughout the build (degree counts, in-degree, labels, their temporaries).
BYTES_PER_VERTEX = 40
# What the interpreter, NumPy, SciPy and h5py take before any data.
BASELINE_BYTES = 160 << 20
_INT32_MAX = np.iinfo(np.int32).max
# Buckets are sorted on worker threads; each holds at least this many arcs when the budget allows,
# so that a small graph is not scattered into many buckets for nothing.
MIN_BUCKET_ARCS = 1 << 20
WEIGHT_DTYPES = ("float32", "float64")


class _Spill:
    """Append-only columns of ids (int64, or int32 where every id fits) and float64 weights in a
    scratch folder."""

    def __init__(self, folder: Path, name: str, weighted: bool, narrow: bool = False):
        self.paths = {c: folder / f"{name}.{c}" for c in (("src", "dst", "w") if weighted else ("src", "dst"))}
        self.count = 0
        self.ids = np.dtype(np.int32 if narrow else np.int64)

    def append(self, src, dst, w=None):
        cols = {"src": src, "dst": dst, "w": w}
        for c, p in self.paths.items():
            with open(p, "ab") as f:
                np.ascontiguousarray(cols[c], dtype=np.float64 if c == "w" else self.ids).tofile(f)
        self.count += len(src)

    def read(self, step: int):
        """Yield (src, dst, w-or-None) chunks of at most ``step`` items.

        Plain reads, not memory maps: mapped pages would count against the process's memory.
        """
        if self.count == 0:
            return
        files = {c: open(p, "rb") for c, p in self.paths.items()}
        try:
            for a in range(0, self.count, step):
                k = min(step, self.count - a)
                cols = {c: np.fromfile(f, dtype=np.float64 if c == "w" else self.ids, count=k)
                        for c, f in files.items()}
                cols = {c: a if c == "w" else a.astype(np.int64, copy=False) for c, a in cols.items()}
                yield cols["src"], cols["dst"], cols.get("w")
        finally:
            for f in files.values():
                f.close()

    def remove(self) -> None:
        """Delete the files (the build no longer needs them: keep the disk peak low)."""
        for p in self.paths.values():
            p.unlink(missing_ok=True)


class GraphBuilder:
    """Streaming construction of a graph store. Use as a context manager or call :meth:`finish`.

    Parameters mirror :func:`ooc_graph.convert`; ``labels`` (sorted unique original ids) fixes the
    vertex set in advance, as a Graphalytics ``.v`` file does; ``num_vertices`` fixes n for inputs
    whose ids are already 0..n-1 (DIMACS, Matrix Market, generators). ``workers`` threads sort
    buckets at once (default: the cores, at most 8), sharing the memory budget. ``augment``
    also stores the CEL augmentation (``partitioning/FORMAT.md``) for asynchronous execution.
    ``string_labels`` (strictly increasing strings) are the original ids of vertices 0..n-1 when
    the input named vertices by strings: edges then arrive as positions in that list.
    """

    def __init__(self, path, *, directed: bool, weighted: bool, num_vertices: int | None = None,
                 labels: np.ndarray | None = None, relabel: bool | None = None,
                 drop_self_loops: bool = False, dedupe: bool = True, memory=None,
                 interval_size: int | None = None, chunk_arcs: int | None = None,
                 weight_dtype: str = "float32", source: str = "", progress: bool = True, workers=None,
                 augment: bool = False, string_labels=None):
        if weight_dtype not in WEIGHT_DTYPES:
            raise ParameterError(f"unknown weight_dtype {weight_dtype!r} (valid: {', '.join(WEIGHT_DTYPES)})")
        if chunk_arcs is not None and int(chunk_arcs) < 1:
            raise ParameterError(f"chunk_arcs must be at least 1 (got {chunk_arcs!r})")
        if num_vertices is not None and int(num_vertices) < 0:
            raise ParameterError(f"num_vertices must be non-negative (got {num_vertices!r})")
        self.string_labels = None
        if string_labels is not None:  # edges come as positions in the list: ids 0..n-1, kept
            if labels is not None or relabel:
                raise ParameterError("string_labels replaces labels and relabelling (got labels or relabel=True)")
            self.string_labels = list(string_labels)
            if any(not a < b for a, b in zip(self.string_labels, self.string_labels[1:])):
                raise ParameterError("string_labels must be strictly increasing")
            num_vertices, relabel = len(self.string_labels), False
        self.path = Path(path)
        self.directed, self.weighted = bool(directed), bool(weighted)
        self.num_vertices = None if num_vertices is None else int(num_vertices)
        self.labels = None if labels is None else np.unique(np.asarray(labels, dtype=np.int64))
        self.relabel = relabel
        self.drop_self_loops, self.dedupe = bool(drop_self_loops), bool(dedupe)
        self.memory = budget(memory)
        self.workers = num_workers(workers)
        self.augment = bool(augment)
        self.interval_size = interval_size
        self.chunk_arcs = int(chunk_arcs or F.DEFAULT_CHUNK_ARCS)
        self.weight_dtype = np.dtype(weight_dtype)
        self.source = str(source)
        self.progress = progress
        self.step = self._step(self.num_vertices or 0)
        self._scratch = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.build-", dir=self._parent()))
        # Ids known to lie in [0, n) with n < 2**31 spill as int32: half the scratch disk.
        self._spill = _Spill(self._scratch, "input", self.weighted,
                             narrow=self.labels is None and self.relabel is not True
                             and self.num_vertices is not None and self.num_vertices <= _INT32_MAX + 1)
        self._uniques: list[np.ndarray] = []
        self._unique_total = 0
        self._min = None
        self._max = None
        self._t0 = time.perf_counter()

    def _step(self, n: int) -> int:
        """Arcs handled at once so that peak memory stays within the budget."""
        return max(1024, (self.memory - BASELINE_BYTES - BYTES_PER_VERTEX * n) // BYTES_PER_ARC_IN_BUCKET)

    def _parent(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.path.parent

    # -- input ----------------------------------------------------------------------------------
    def add(self, src, dst, weight=None, *, locate=None) -> None:
        """Add a chunk of edges. ``locate(i)`` → ``(path, line)`` of edge i, for error messages."""
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.shape != dst.shape or src.ndim != 1:
            raise InputError("source and destination arrays must be 1-D of one length "
                             f"(got {src.shape} and {dst.shape})")
        for arr in (src, dst):
            if arr.dtype.kind not in "iu":
                raise InputError(f"vertex ids must be integers (got dtype {arr.dtype})")
        src = src.astype(np.int64, copy=False)
        dst = dst.astype(np.int64, copy=False)
        if self.weighted:
            if weight is None:
                raise InputError("the graph is weighted but this chunk of edges has no weights")
            weight = np.asarray(weight, dtype=np.float64)
            if weight.shape != src.shape:
                raise InputError(f"weights must have one value per edge (got {weight.shape} for {src.shape} edges)")
            bad = ~np.isfinite(weight)
            if bad.any():
                self._fail("weight is not a finite number", bad, weight, locate)
        if src.size == 0:
            return
        if self.labels is not None:
            for arr in (src, dst):
                pos = np.clip(np.searchsorted(self.labels, arr), 0, max(len(self.labels) - 1, 0))
                bad = (self.labels[pos] != arr) if len(self.labels) else np.ones(arr.shape, bool)
                if bad.any():
                    self._fail("edge refers to a vertex that is not in the vertex list", bad, arr, locate)
        elif self.num_vertices is not None and self.relabel is not True:
            for arr in (src, dst):
                bad = (arr < 0) | (arr >= self.num_vertices)
                if bad.any():
                    self._fail(f"vertex id out of range [0, {self.num_vertices})", bad, arr, locate)
        elif self.relabel is False:
            for arr in (src, dst):
                bad = arr < 0
                if bad.any():
                    self._fail("negative vertex id (pass relabel=True to map arbitrary ids to 0..n-1)",
                               bad, arr, locate)
        lo, hi = int(min(src.min(), dst.min())), int(max(src.max(), dst.max()))
        self._min = lo if self._min is None else min(self._min, lo)
        self._max = hi if self._max is None else max(self._max, hi)
        if self.labels is None and self.num_vertices is None and self.relabel is not False:
            self._note_ids(np.unique(np.concatenate([src, dst])))
        self._spill.append(src, dst, weight)

    def _fail(self, message, bad_mask, values, locate):
        i = int(np.flatnonzero(bad_mask)[0])
        value = values[i].item()
        if locate is not None:
            path, line = locate(i)
            raise InputError(message, path=path, line=line, value=value)
        raise InputError(f"{message}: edge {i} of the chunk", value=value)

    def _note_ids(self, ids):
        self._uniques.append(ids)
        self._unique_total += len(ids)
        if len(self._uniques) > 8 or self._unique_total > 4 * self.step:
            merged = np.unique(np.concatenate(self._uniques))
            self._uniques, self._unique_total = [merged], len(merged)

    # -- vertex ids -----------------------------------------------------------------------------
    def _settle_ids(self):
        """Decide n and the label array (None when ids are kept as they are)."""
        if self.labels is not None:
            return len(self.labels), self.labels
        if self.num_vertices is not None and self.relabel is not True:
            return self.num_vertices, None
        if self.relabel is False:
            return (0 if self._max is None else self._max + 1), None
        ids = np.unique(np.concatenate(self._uniques)) if self._uniques else np.zeros(0, np.int64)
        if self.relabel is None and (len(ids) == 0 or (ids[0] == 0 and ids[-1] == len(ids) - 1)):
            return max(len(ids), self.num_vertices or 0), None
        return len(ids), ids

    def _mapped(self, step):
        """Spill chunks as internal arcs: ids mapped, self-loops dropped, symmetrised."""
        for src, dst, w in self._spill.read(step):
            if self._label_map is not None:
                src = np.searchsorted(self._label_map, src)
                dst = np.searchsorted(self._label_map, dst)
            if self.drop_self_loops:
                keep = src != dst
                src, dst, w = src[keep], dst[keep], (None if w is None else w[keep])
            if not self.directed:
                loop = src == dst
                rs, rd = dst[~loop], src[~loop]
                src, dst = np.concatenate([src, rs]), np.concatenate([dst, rd])
                if w is not None:
                    w = np.concatenate([w, w[~loop]])
            yield src, dst, w

    # -- output ---------------------------------------------------------------------------------
    def finish(self) -> Path:
        """Write the store and rename it into place; returns its path."""
        try:
            return self._finish()
        finally:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()

    def _bucket_bounds(self, counts: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """Vertex boundaries of buckets: runs of whole intervals, each small enough that the
        buckets the workers hold at once fit the budget, and few enough to keep them all busy."""
        per_interval = np.add.reduceat(counts, bounds[:-1]) if counts.size else np.zeros(len(bounds) - 1, np.int64)
        limit = self.step
        if self.workers > 1:  # workers sort one bucket each while the writer holds one more
            share = max(1024, self.step // (self.workers + 1))
            limit = min(share, max(-(-int(counts.sum()) // self.workers), MIN_BUCKET_ARCS))
        edges, acc = [0], 0
        for i, c in enumerate(per_interval.tolist()):
            if acc and acc + c > limit:
                edges.append(i)
                acc = 0
            acc += c
        edges.append(len(bounds) - 1)
        return bounds[np.asarray(edges)]

    def _finish(self) -> Path:
        n, labels = self._settle_ids()
        self._label_map = labels
        self.step = self._step(n)
        # Symmetrising doubles a spill chunk on its way to the buckets.
        read_step = self.step if self.directed else max(512, self.step // 2)
        bounds = interval_bounds(n, self.interval_size)
        size = int(bounds[1] - bounds[0]) if n else int(self.interval_size or 1)
        k = len(bounds) - 1
        ldt, gdt = local_id_dtype(bounds), global_id_dtype(n)
        total_in = self._spill.count * (1 if self.directed else 2)
        bar = progress_bar(total=2 * total_in, unit="arc", desc="partitioning", disable=not self.progress)

        # Pass 1: degrees (before deduplication) decide the buckets.
        in_counts = np.zeros(n, np.int64)
        out_counts = np.zeros(n, np.int64)
        for src, dst, _ in self._mapped(read_step):
            in_counts += np.bincount(dst, minlength=n)
            if self.directed:
                out_counts += np.bincount(src, minlength=n)
            bar.update(len(src))
        in_edges = self._bucket_bounds(in_counts, bounds)
        out_edges = self._bucket_bounds(out_counts, bounds) if self.directed else None
        del in_counts, out_counts

        # Pass 2: scatter arcs into bucket spills.
        narrow = n <= _INT32_MAX + 1
        in_buckets = [_Spill(self._scratch, f"in{b}", self.weighted, narrow) for b in range(len(in_edges) - 1)]
        out_buckets = ([_Spill(self._scratch, f"out{b}", self.weighted, narrow) for b in range(len(out_edges) - 1)]
                       if self.directed else [])
        for src, dst, w in self._mapped(read_step):
            self._scatter(in_buckets, in_edges, dst, src, dst, w)
            if self.directed:
                self._scatter(out_buckets, out_edges, src, src, dst, w)
            bar.update(len(src))
        bar.close()
        self._spill.remove()  # everything is in the buckets now

        out = AtomicFile(self.path)
        try:
            with h5py.File(out.tmp, "w") as h5:
                stats = self._write(h5, n, labels, bounds, size, k, ldt, gdt, in_buckets, in_edges,
                                    out_buckets, out_edges)
            out.commit()
        except BaseException:
            out.discard()
            raise
        seconds = time.perf_counter() - self._t0
        log.info("wrote %s: %d vertices, %d arcs in %.1f s (%.3g input edges/s)", self.path, n,
                 stats["num_arcs"], seconds, self._spill.count / max(seconds, 1e-9))
        return self.path

    def _scatter(self, buckets, edges, key, src, dst, w):
        if len(buckets) == 1:
            buckets[0].append(src, dst, w)
            return
        b = np.searchsorted(edges, key, side="right") - 1
        if len(buckets) < 1 << 15:
            b = b.astype(np.int16)  # a stable sort of 16-bit keys is a radix sort: linear
        order = np.argsort(b, kind="stable")
        b = b[order]
        cuts = np.searchsorted(b, np.arange(len(buckets) + 1))
        src, dst = src[order], dst[order]
        w = None if w is None else w[order]
        for i in range(len(buckets)):
            lo, hi = cuts[i], cuts[i + 1]
            if hi > lo:
                buckets[i].append(src[lo:hi], dst[lo:hi], None if w is None else w[lo:hi])

    def _write(self, h5, n, labels, bounds, size, k, ldt, gdt, in_buckets, in_edges, out_buckets, out_edges):
        upper = max(1, sum(b.count for b in in_buckets))
        chunk = min(self.chunk_arcs, upper)
        wdt = self.weight_dtype
        cel = _BlockWriter(h5, (F.CEL_SRC, F.CEL_DST, F.CEL_WEIGHT if self.weighted else None), ldt, wdt, chunk)
        aug = _BlockWriter(h5, (F.AUG_SRC, F.AUG_DST, F.AUG_WEIGHT if self.weighted else None), ldt, wdt, chunk) \
            if self.augment else None
        hchunk = min(F.HDF5_CHUNK_ELEMENTS, upper)

        def csr_writer(side):
            return (create_appendable(h5, F.CSR.format(side=side, part="indices"), gdt, hchunk),
                    create_appendable(h5, F.CSR.format(side=side, part="weights"), wdt, hchunk)
                    if self.weighted else None)

        stats = {"self_loops": 0, "min_weight": np.inf, "max_weight": -np.inf}
        in_side = "in" if self.directed else "out"
        in_idx, in_w = csr_writer(in_side)
        in_degree = np.zeros(n, np.int64)
        step_bar = progress_bar(total=len(in_buckets) + len(out_buckets), unit="bucket", desc="sorting",
                                disable=not self.progress)
        def augmentation(src, dst, w):  # the bucket's back arcs, source-major
            s, d, bw = back_arcs(src, dst, w, size)
            return build_blocks(d, s, bw, size, k, ldt, source_major=True)

        def lay_out(dst, src, w):  # on a worker thread: the bucket's CEL blocks and statistics
            facts = {"self_loops": int(np.count_nonzero(src == dst))}
            if w is not None and w.size:
                facts.update(min_weight=float(w.min()), max_weight=float(w.max()))
            # Undirected: every arc has its mirror, so the back arcs leaving this bucket's
            # intervals are the mirrors of its arcs that come from earlier intervals.
            back = augmentation(dst, src, w) if aug is not None and not self.directed else None
            return build_blocks(dst, src, w, size, k, ldt), facts, back

        for blocks, facts, back in self._csr_rows(in_buckets, in_edges, n, True, in_degree, in_idx, in_w,
                                                  step_bar, lay_out):
            stats["self_loops"] += facts["self_loops"]
            stats["min_weight"] = min(stats["min_weight"], facts.get("min_weight", np.inf))
            stats["max_weight"] = max(stats["max_weight"], facts.get("max_weight", -np.inf))
            cel.append(blocks)
            if back is not None:
                aug.append(back)
        write_array(h5, F.CSR.format(side=in_side, part="indptr"), _indptr(in_degree))
        write_array(h5, F.IN_DEGREE, in_degree)
        num_arcs = int(in_degree.sum())

        if self.directed:
            out_idx, out_w = csr_writer("out")
            out_degree = np.zeros(n, np.int64)
            for back in self._csr_rows(out_buckets, out_edges, n, False, out_degree, out_idx, out_w, step_bar,
                                       augmentation if aug is not None else None):
                if back is not None:
                    aug.append(back)
            write_array(h5, F.CSR.format(side="out", part="indptr"), _indptr(out_degree))
            write_array(h5, F.OUT_DEGREE, out_degree)
        else:
            # Symmetric: the in-arc CSR is the out-arc CSR; store it once and link the other names.
            for part in ("indptr", "indices", "weights"):
                name = F.CSR.format(side="out", part=part)
                if name in h5:
                    h5[F.CSR.format(side="in", part=part)] = h5py.SoftLink("/" + name)
            h5[F.OUT_DEGREE] = h5py.SoftLink("/" + F.IN_DEGREE)
        step_bar.close()

        write_array(h5, F.CEL_INTERVALS, bounds)
        _, bdst, blen = cel.finish((F.CEL_BLOCK_SRC, F.CEL_BLOCK_DST, F.CEL_BLOCK_OFFSETS))
        write_array(h5, F.CEL_SUBGRAPH_BLOCKS, np.searchsorted(bdst, np.arange(k + 1)).astype(np.int64))
        if aug is not None:
            aug.finish((F.AUG_BLOCK_SRC, F.AUG_BLOCK_DST, F.AUG_BLOCK_OFFSETS))
        if labels is not None:
            write_array(h5, F.LABELS, labels.astype(np.int64))
        if self.string_labels is not None:
            data, offsets = encode_labels(self.string_labels)
            write_array(h5, F.LABEL_BYTES, data)
            write_array(h5, F.LABEL_OFFSETS, offsets)
        h5.create_group(F.RESULTS)

        loops = stats["self_loops"]
        num_edges = num_arcs if self.directed else (num_arcs - loops) // 2 + loops
        seconds = time.perf_counter() - self._t0
        attrs = {
            "format": F.FORMAT_NAME, "format_version": F.FORMAT_VERSION,
            "store_id": F.new_store_id(),
            "num_vertices": n, "num_arcs": num_arcs, "num_edges": num_edges,
            "directed": self.directed, "weighted": self.weighted,
            "id_dtype": gdt.name, "local_id_dtype": ldt.name,
            "weight_dtype": wdt.name if self.weighted else "",
            "interval_size": size, "num_intervals": k, "num_blocks": len(blen),
            "chunk_arcs": chunk, "self_loops": loops, "deduplicated": self.dedupe, "augmented": self.augment,
            "min_weight": stats["min_weight"] if self.weighted and num_arcs else 0.0,
            "max_weight": stats["max_weight"] if self.weighted and num_arcs else 0.0,
            "built_by": json.dumps({
                "tool": f"ooc_graph {__version__}", "source": self.source,
                "input_edges": self._spill.count, "seconds": round(seconds, 3),
                "input_edges_per_second": round(self._spill.count / max(seconds, 1e-9)),
                "drop_self_loops": self.drop_self_loops, "dedupe": self.dedupe,
                "memory": self.memory, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }),
        }
        h5.attrs.update(attrs)
        log.debug("buckets: %d in, %d out; memory %s", len(in_buckets), len(out_buckets), human(self.memory))
        return {"num_arcs": num_arcs}

    def _csr_rows(self, buckets, edges, n, by_dst, degree, indices, weights, bar, lay_out=None):
        """For each bucket: load, sort by (row, column) — rows are destinations with ``by_dst`` —
        merge repeats, fill the rows' degrees and append the CSR columns and weights. The sorting
        runs on worker threads, the appending here, in bucket order. Yields ``lay_out(rows,
        columns, weights)`` of each bucket (computed on the worker; weights in the stored type)."""
        def sort(b):
            lo, hi = int(edges[b]), int(edges[b + 1])
            src, dst, w = self._load(buckets[b])
            rows, cols = (dst, src) if by_dst else (src, dst)
            rows, cols, w = sort_arcs(rows, cols, w, n, dedupe=self.dedupe)
            w = None if w is None else w.astype(weights.dtype)
            laid = None if lay_out is None else lay_out(rows, cols, w)
            return lo, hi, np.bincount(rows - lo, minlength=hi - lo), cols.astype(indices.dtype), w, laid

        for lo, hi, deg, cols, w, laid in ordered_map(sort, range(len(buckets)), self.workers):
            degree[lo:hi] = deg
            append(indices, cols)
            if w is not None:
                append(weights, w)
            bar.update(1)
            yield laid

    def _load(self, bucket: _Spill):
        parts = list(bucket.read(max(bucket.count, 1)))
        bucket.remove()
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), (np.zeros(0) if self.weighted else None)
        return parts[0]


class _BlockWriter:
    """Appends laid-out blocks to local-id (and weight) datasets and writes their block table."""

    def __init__(self, h5, names, local_dtype, weight_dtype, chunk):
        self.h5 = h5
        self.src, self.dst = (create_appendable(h5, name, local_dtype, chunk) for name in names[:2])
        self.weight = None if names[2] is None else create_appendable(h5, names[2], weight_dtype, chunk)
        self.table = {name: [] for name in ("src", "dst", "len")}

    def append(self, blocks) -> None:
        append(self.src, blocks.src_local)
        append(self.dst, blocks.dst_local)
        if self.weight is not None:
            append(self.weight, blocks.weight)
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
        write_array(self.h5, names[2], _indptr(length))
        return src, dst, length


def _indptr(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out

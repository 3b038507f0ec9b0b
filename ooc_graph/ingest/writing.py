"""Writing the store from sorted buckets: the CSR of each side, the CEL and its augmentation
(``partitioning/FORMAT.md``), the block tables and the root attributes. Buckets are sorted on the
builder's worker threads (``sorting.py``) and appended here, in bucket order, so the store is the
same whatever the worker count or the device.
"""

from __future__ import annotations

import json
import logging
import os
import time

import h5py
import numpy as np

from ooc_graph import __version__, config
from ooc_graph._memory import human, release_free_memory
from ooc_graph._parallel import ordered_map
from ooc_graph._progress import progress_bar
from ooc_graph.partitioning.cel import blocks_of_sorted
from ooc_graph.store import _format as F
from ooc_graph.store import contents, stamps
from ooc_graph.store.labels import encode_labels
from ooc_graph.store.chunks import ChunkWriter
from ooc_graph.store.writer import write_array

from . import buckets as B

log = logging.getLogger("ooc_graph.ingest")


class StoreWriting:
    """The part of :class:`~.builder.GraphBuilder` that writes the store (a mixin: it reads the
    builder's options, stages and worker count)."""

    def opened(self):
        """The store written by :meth:`finish`, open (a :class:`~ooc_graph.store.graph.Graph`, or
        the :class:`~ooc_graph.store.memory.MemoryGraph` of a build into memory); known to pass
        the content checks while it is the file written, so they do not run on it."""
        if self.path is None:
            from ooc_graph.store.memory import MemoryGraph
            return MemoryGraph(self.memory_file, self.source)
        from ooc_graph.store import open_graph
        G = open_graph(self.path)
        if self.written is not None:
            G.trust_written(self.written)
        return G

    def _note_written(self, store_id: str) -> None:
        """Built from checked input: the file as renamed into place passes every content check
        (:mod:`ooc_graph.store.contents`); :meth:`opened` and, for a large store, later opens
        know it (:mod:`ooc_graph.store.stamps`)."""
        self.written = stamps.stamp_of(os.stat(self.path), store_id)
        stamps.record_written(self.path, store_id, contents.GROUPS)

    def _write(self, h5, lay, buckets):
        """Write the store of ``lay`` (:class:`~.passes.Layout`) from ``buckets``
        (:class:`~.passes.Buckets`) into ``h5`` (an h5py file or a ``MemoryFile``); the CSR and
        CEL datasets are appended through one :class:`ChunkWriter`, writing chunks directly where
        the budget has room for numba (if the build fails, the builder discards its temporary
        file). Returns the arc count and the store id."""
        with ChunkWriter(direct=self.memory >= config.get().ingest.compiled_min_budget) as writer:
            upper = max(1, sum(b.count for b in buckets.in_buckets))
            chunk = min(self.chunk_arcs, upper)
            cel = B.BlockWriter(h5, (F.CEL_SRC, F.CEL_DST, F.CEL_WEIGHT if self.weighted else None), lay.ldt,
                                self.weight_dtype, chunk, writer=writer, expected=upper)
            aug = B.BlockWriter(h5, (F.AUG_SRC, F.AUG_DST, F.AUG_WEIGHT if self.weighted else None), lay.ldt,
                                self.weight_dtype, chunk, writer=writer, expected=upper) if self.augment else None
            hchunk = min(F.HDF5_CHUNK_ELEMENTS, upper)

            def csr(side):  # the appendable CSR columns and weights of a side
                def part(name, dtype):
                    return writer.appendable(h5, F.CSR.format(side=side, part=name), dtype, hchunk, upper)
                return part("indices", lay.gdt), part("weights", self.weight_dtype) if self.weighted else None

            aug_parts = self._assemble(aug, lay.bounds, lay.ldt, rows_are_dst=False) if aug is not None else None
            with progress_bar(total=len(buckets.in_buckets) + len(buckets.out_buckets), unit="bucket",
                              desc="sorting", progress=self.progress) as bar:
                stats = self._write_in_side(h5, lay, buckets, csr, cel, aug_parts, bar)
                self._write_out_side(h5, lay, buckets, csr, aug_parts, bar)
            blocks = self._write_tables(h5, lay, cel, aug)
            return self._write_attrs(h5, lay, stats, chunk, blocks, buckets)

    def _back_arcs(self, lay, rows, cols, w):
        """The back arcs of a bucket's rows (sources), source-major: its CEL augmentation."""
        return blocks_of_sorted(rows, cols, w, lay.size, lay.ldt, rows_are_dst=False, back_only=True)

    def _write_in_side(self, h5, lay, buckets, csr, cel, aug_parts, bar) -> dict:
        """The in-arc CSR (an undirected graph's only one), the CEL (laid out by destination
        interval on the sorting threads) and an undirected graph's augmentation; returns the arc
        count, the self-loops and the weight range."""
        stats = {"self_loops": 0, "min_weight": np.inf, "max_weight": -np.inf}
        in_side = "in" if self.directed else "out"
        in_idx, in_w = csr(in_side)
        in_degree = np.zeros(lay.n, np.int64)

        def lay_out(rows, cols, w):  # on a worker thread: the bucket's CEL blocks and statistics
            facts = {"self_loops": int(np.count_nonzero(rows == cols))}
            if w is not None and w.size:
                facts.update(min_weight=float(w.min()), max_weight=float(w.max()))
            # Undirected: every arc has its mirror, so the back arcs leaving this bucket's
            # intervals are the mirrors of its arcs that come from earlier intervals.
            back = self._back_arcs(lay, rows, cols, w) if aug_parts is not None and not self.directed else None
            return blocks_of_sorted(rows, cols, w, lay.size, lay.ldt, rows_are_dst=True), facts, back

        cel_parts = self._assemble(cel, lay.bounds, lay.ldt, rows_are_dst=True)
        for lo, hi, (blocks, facts, back) in self._csr_rows(buckets.in_buckets, buckets.in_edges, lay.n, True,
                                                            in_degree, in_idx, in_w, bar, lay_out):
            stats["self_loops"] += facts["self_loops"]
            stats["min_weight"] = min(stats["min_weight"], facts.get("min_weight", np.inf))
            stats["max_weight"] = max(stats["max_weight"], facts.get("max_weight", -np.inf))
            with self.stages("cel"):
                cel_parts.send((lo, hi, blocks))
                if back is not None:
                    aug_parts.send((lo, hi, back))
            del blocks, back  # not held while the next bucket is sorted
            release_free_memory()
        write_array(h5, F.CSR.format(side=in_side, part="indptr"), B.indptr(in_degree))
        write_array(h5, F.IN_DEGREE, in_degree)
        stats["num_arcs"] = int(in_degree.sum())
        return stats

    def _write_out_side(self, h5, lay, buckets, csr, aug_parts, bar) -> None:
        """A directed graph's out-arc CSR and augmentation; an undirected graph's in-arc names
        linked to its out-arc CSR (symmetric: stored once)."""
        if not self.directed:
            for part in ("indptr", "indices", "weights"):
                name = F.CSR.format(side="out", part=part)
                if name in h5:
                    h5[F.CSR.format(side="in", part=part)] = h5py.SoftLink("/" + name)
            h5[F.OUT_DEGREE] = h5py.SoftLink("/" + F.IN_DEGREE)
            return
        out_idx, out_w = csr("out")
        out_degree = np.zeros(lay.n, np.int64)
        back_arcs = (lambda rows, cols, w: self._back_arcs(lay, rows, cols, w)) if aug_parts is not None else None
        for lo, hi, back in self._csr_rows(buckets.out_buckets, buckets.out_edges, lay.n, False, out_degree, out_idx,
                                           out_w, bar, back_arcs):
            if back is not None:
                with self.stages("cel"):
                    aug_parts.send((lo, hi, back))
            del back
        write_array(h5, F.CSR.format(side="out", part="indptr"), B.indptr(out_degree))
        write_array(h5, F.OUT_DEGREE, out_degree)

    def _write_tables(self, h5, lay, cel, aug) -> int:
        """The interval bounds, the CEL's (and augmentation's) block tables, the vertex labels and
        the results group; returns the CEL's block count."""
        t = time.perf_counter()
        write_array(h5, F.CEL_INTERVALS, lay.bounds)
        _, bdst, blen = cel.finish((F.CEL_BLOCK_SRC, F.CEL_BLOCK_DST, F.CEL_BLOCK_OFFSETS))
        write_array(h5, F.CEL_SUBGRAPH_BLOCKS, np.searchsorted(bdst, np.arange(lay.k + 1)).astype(np.int64))
        if aug is not None:
            aug.finish((F.AUG_BLOCK_SRC, F.AUG_BLOCK_DST, F.AUG_BLOCK_OFFSETS))
        if lay.labels is not None:
            write_array(h5, F.LABELS, lay.labels.astype(np.int64))
        if self.string_labels is not None:
            data, offsets = encode_labels(self.string_labels)
            write_array(h5, F.LABEL_BYTES, data)
            write_array(h5, F.LABEL_OFFSETS, offsets)
        h5.create_group(F.RESULTS)
        self.stages.add("tables", time.perf_counter() - t)
        return len(blen)

    def _write_attrs(self, h5, lay, stats: dict, chunk: int, blocks: int, buckets) -> dict:
        """The root attributes (the format, the graph's counts and types, how it was built)."""
        loops, num_arcs, wdt = stats["self_loops"], stats["num_arcs"], self.weight_dtype
        num_edges = num_arcs if self.directed else (num_arcs - loops) // 2 + loops
        seconds = time.perf_counter() - self._t0
        attrs = {
            "format": F.FORMAT_NAME, "format_version": F.FORMAT_VERSION,
            "store_id": F.new_store_id(),
            "num_vertices": lay.n, "num_arcs": num_arcs, "num_edges": num_edges,
            "directed": self.directed, "weighted": self.weighted,
            "id_dtype": lay.gdt.name, "local_id_dtype": lay.ldt.name,
            "weight_dtype": wdt.name if self.weighted else "",
            "interval_size": lay.size, "num_intervals": lay.k, "num_blocks": blocks,
            "chunk_arcs": chunk, "self_loops": loops, "deduplicated": self.dedupe, "augmented": self.augment,
            "min_weight": stats["min_weight"] if self.weighted and num_arcs else 0.0,
            "max_weight": stats["max_weight"] if self.weighted and num_arcs else 0.0,
            "built_by": json.dumps({
                "tool": f"ooc_graph {__version__}", "source": self.source,
                "input_edges": self._spill.count, "seconds": round(seconds, 3),
                "input_edges_per_second": round(self._spill.count / max(seconds, 1e-9)),
                "drop_self_loops": self.drop_self_loops, "dedupe": self.dedupe,
                "memory": self.memory, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "workers": self._sorters, "stages": self.stages.report(),
            }),
        }
        h5.attrs.update(attrs)
        log.debug("buckets: %d in, %d out; memory %s", len(buckets.in_buckets), len(buckets.out_buckets),
                  human(self.memory))
        return {"num_arcs": num_arcs, "store_id": attrs["store_id"]}

    def _csr_rows(self, buckets, edges, n, by_dst, degree, indices, weights, bar, lay_out=None):
        """For each bucket: load, sort by (row, column) — rows are destinations with ``by_dst`` —
        merge repeats, fill the rows' degrees and append the CSR columns and weights. The sorting
        runs on worker threads, the appending here, in bucket order. Yields ``lay_out(rows,
        columns, weights)`` of each bucket (computed on the worker; weights in the stored type)."""
        def sort(b):
            lo, hi = int(edges[b]), int(edges[b + 1])
            with self.stages("sort"):
                rows, cols, w, where = B.sort_bucket(buckets[b], lo, hi, n, by_dst=by_dst, dedupe=self.dedupe,
                                                     id_dtype=indices.dtype, gpu=self._gpu)
            self.stages.add(f"buckets_{where}", 1)
            with self.stages("layout"):
                laid = None if lay_out is None else lay_out(rows, cols, w)
                return lo, hi, B.degrees(rows, lo, hi), cols, w, laid

        results = ordered_map(sort, range(len(buckets)), self._sorters)
        while True:
            with self.stages("wait"):
                item = next(results, None)
            if item is None:
                break
            lo, hi, deg, cols, w, laid = item
            del item
            degree[lo:hi] = deg
            with self.stages("csr"):
                indices.append(cols)
                if w is not None:
                    weights.append(w)
            del deg, cols, w
            bar.update(1)
            release_free_memory()
            yield lo, hi, laid
            del laid

    def _assemble(self, writer, bounds, ldt, *, rows_are_dst):
        pieces = lambda: B.Pieces(self._scratch, f"pieces-{int(rows_are_dst)}", ldt,  # noqa: E731
                                  self.weight_dtype, rows_are_dst=rows_are_dst, weighted=self.weighted)
        coroutine = B.assemble(writer, bounds, pieces, max(1024, self._limit // 8))
        next(coroutine)
        return coroutine

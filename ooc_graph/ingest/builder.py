"""Building a store from a stream of edges in bounded memory.

Edges arrive in chunks (:meth:`GraphBuilder.add`) and are spilled to a scratch folder beside the
output. :meth:`GraphBuilder.finish` then (1) settles the vertex ids, (2) counts degrees in one pass
over the spill (``degrees.py``), (3) scatters arcs into buckets sized to the memory budget (runs of
whole intervals, or parts of an interval too full for one bucket: ``buckets.py``), (4) sorts each
bucket on its own and appends it to the CSR and the CEL. Nothing is renamed into place before
every dataset is written. What the memory goes to, and the floor below which a budget cannot work:
``footprint.py``; scratch, its cleanup and SIGTERM: ``scratch.py``.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from ooc_graph import config
from ooc_graph._memory import budget
from ooc_graph._parallel import workers as num_workers
from ooc_graph._progress import progress_bar
from ooc_graph._signals import TermGuard
from ooc_graph.errors import InputError, ParameterError
from ooc_graph.store import _format as F
from ooc_graph.store import temporary
from ooc_graph.store.memory import MemoryFile
from ooc_graph.store.writer import AtomicFile

from . import buckets as B
from . import footprint as M
from .output import check_output, write_failure
from .passes import Passes
from .scratch import Spill, make_scratch
from .sorting import check_device
from .stages import Stages
from .text import real_weights
from .writing import StoreWriting

log = logging.getLogger("ooc_graph.ingest")

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
WEIGHT_DTYPES = ("float32", "float64")


class GraphBuilder(Passes, StoreWriting):
    """Streaming construction of a graph store. Use as a context manager or call :meth:`finish`.

    Parameters mirror :func:`ooc_graph.convert`; ``labels`` (sorted unique original ids) fixes the
    vertex set in advance, as a Graphalytics ``.v`` file does; ``num_vertices`` fixes n for inputs
    whose ids are already 0..n-1 (DIMACS, Matrix Market, generators). ``workers`` threads sort
    buckets at once (default: the cores, at most 16), sharing the memory budget. ``augment``
    also stores the CEL augmentation (``partitioning/FORMAT.md``) for asynchronous execution.
    ``string_labels`` (strictly increasing strings) are the original ids of vertices 0..n-1 when
    the input named vertices by strings: edges then arrive as positions in that list.
    ``path=None`` writes the store into a :class:`~ooc_graph.store.memory.MemoryFile` instead of a
    file (:attr:`memory_file` once finished); scratch, if the input outgrows memory, goes to the
    system's temporary folder.
    """

    def __init__(self, path, *, directed: bool, weighted: bool, num_vertices: int | None = None,
                 labels: np.ndarray | None = None, relabel: bool | None = None,
                 drop_self_loops: bool = False, dedupe: bool = True, memory=None,
                 interval_size: int | None = None, chunk_arcs: int | None = None,
                 weight_dtype: str = "float32", source: str = "", progress: bool | None = None, workers=None,
                 augment: bool = False, overwrite: bool = False, device: str = "auto", string_labels=None):
        self.string_labels = None
        if string_labels is not None:  # edges come as positions in the list: ids 0..n-1, kept
            if labels is not None or relabel:
                raise ParameterError("string_labels replaces labels and relabelling (got labels or relabel=True)")
            self.string_labels = list(string_labels)
            if any(not a < b for a, b in zip(self.string_labels, self.string_labels[1:])):
                raise ParameterError("string_labels must be strictly increasing")
            num_vertices, relabel = len(self.string_labels), False
        self.check_options(memory=memory, num_vertices=num_vertices, weight_dtype=weight_dtype,
                           chunk_arcs=chunk_arcs, workers=workers, device=device)
        self._gpu = check_device(device)
        self.path = None if path is None else Path(path)
        self.memory_file = None  # the store, when path is None, once finished
        self.written = None  # the stamp (stamps.stamp_of) of the file finished
        self.directed, self.weighted = bool(directed), bool(weighted)
        self.num_vertices = None if num_vertices is None else int(num_vertices)
        self.labels = None if labels is None else np.unique(np.asarray(labels, dtype=np.int64))
        self.relabel = relabel
        self.drop_self_loops, self.dedupe = bool(drop_self_loops), bool(dedupe)
        self.memory = budget(memory)
        self.workers = num_workers(workers)
        self.augment = bool(augment)
        self.overwrite = bool(overwrite)
        self.interval_size = interval_size
        self.chunk_arcs = int(chunk_arcs or F.DEFAULT_CHUNK_ARCS)
        self.weight_dtype = np.dtype(weight_dtype)
        self.source = str(source)
        self.progress = progress
        n_known = self.num_vertices if self.labels is None else len(self.labels)
        M.check_vertices(n_known or 0, self.memory)
        if self.path is not None:
            check_output(self.path, overwrite=self.overwrite)
            temporary.sweep(self.path.parent)
        self._guard = TermGuard()
        try:
            self._scratch = (make_scratch(self.path.parent, self.path.name) if self.path is not None else
                             make_scratch(Path(tempfile.gettempdir()), "memory", create=False))
        except OSError as err:
            self._guard.release()
            raise write_failure(self.path or "<in memory>", err) from err
        # Ids known to lie in [0, n) with n < 2**31 spill as int32: half the scratch disk.
        self._spill = Spill(self._scratch, "input", self.weighted,
                            narrow=self.labels is None and self.relabel is not True
                            and self.num_vertices is not None and self.num_vertices <= _INT32_MAX + 1,
                            weight_dtype=self.weight_dtype, in_memory=True)
        # The input stays in memory (no scratch files) while it takes at most a sixth of what the
        # budget leaves for data: with its buckets, three times that, and the rest for sorting.
        self._memory_cap = max(0, M.data_bytes(self.memory) - M.BYTES_PER_VERTEX * (n_known or 0)) // 6
        self._uniques: list[np.ndarray] = []
        self._unique_total = 0
        self._seen: np.ndarray | None = np.zeros(0, bool)  # ids seen, by index, while they fit
        self._min = None
        self._max = None
        self.stages = Stages()
        self._t0 = time.perf_counter()

    @staticmethod
    def check_options(*, memory=None, num_vertices=None, weight_dtype="float32", chunk_arcs=None, workers=None,
                      device="auto", interval_size=None):
        """Validate the build options before any input is read or output created."""
        if interval_size is not None and _not_int(interval_size, 1):
            raise ParameterError(f"interval_size must be a positive integer (got {interval_size!r})")
        check_device(device)
        if weight_dtype not in WEIGHT_DTYPES:
            raise ParameterError(f"unknown weight_dtype {weight_dtype!r} (valid: {', '.join(WEIGHT_DTYPES)})")
        if chunk_arcs is not None and _not_int(chunk_arcs, 1):
            raise ParameterError(f"chunk_arcs must be a positive integer (got {chunk_arcs!r})")
        if num_vertices is not None and _not_int(num_vertices, 0):
            raise ParameterError(f"num_vertices must be a non-negative integer (got {num_vertices!r})")
        num_workers(workers)
        M.check_vertices(int(num_vertices or 0), budget(memory))

    # -- input ----------------------------------------------------------------------------------
    def add(self, src, dst, weight=None, *, locate=None, owned: bool = False) -> None:
        """Add a chunk of edges. ``locate(i)`` → ``(path, line)`` of edge i, for error messages.
        ``owned``: the arrays are the builder's to keep (the caller neither changes nor reuses
        them), so that an input held in memory is not copied."""
        with self.stages("add"):
            self._add(src, dst, weight, locate, owned)

    def _add(self, src, dst, weight, locate, owned=False) -> None:
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.shape != dst.shape or src.ndim != 1:
            raise InputError("source and destination arrays must be 1-D of one length "
                             f"(got {src.shape} and {dst.shape})")
        for arr in (src, dst):
            if arr.dtype.kind not in "iu":
                raise InputError(f"vertex ids must be integers (got dtype {arr.dtype})")
            if arr.dtype == np.uint64 and arr.size:
                self._fail("vertex id above 2**63-1, the largest the store holds", arr > _INT64_MAX, arr, locate)
        if src.dtype.itemsize == 8 or dst.dtype != src.dtype:  # (narrower ids are checked as they are)
            src = src.astype(np.int64, copy=False)
            dst = dst.astype(np.int64, copy=False)
        if self.weighted:
            if weight is None:
                raise InputError("the graph is weighted but this chunk of edges has no weights")
            weight = real_weights(weight, "weights")
            if weight.shape != src.shape:
                raise InputError(f"weights must have one value per edge (got {weight.shape} for {src.shape} edges)")
            weight = self._stored_weights(weight, locate)
        if src.size == 0:
            return
        fast = self._id_kernels(src.size)
        lo, hi = fast.id_range(src, dst, self.workers) if fast is not None else \
            (int(min(src.min(), dst.min())), int(max(src.max(), dst.max())))
        if self.labels is not None:
            for arr in (src, dst):
                pos = np.clip(np.searchsorted(self.labels, arr), 0, max(len(self.labels) - 1, 0))
                bad = (self.labels[pos] != arr) if len(self.labels) else np.ones(arr.shape, bool)
                if bad.any():
                    self._fail("edge refers to a vertex that is not in the vertex list", bad, arr, locate)
        elif self.num_vertices is not None and self.relabel is not True:
            if lo < 0 or hi >= self.num_vertices:  # (the extremes say whether any is out)
                for arr in (src, dst):
                    bad = (arr < 0) | (arr >= self.num_vertices)
                    if bad.any():
                        self._fail(f"vertex id out of range [0, {self.num_vertices})", bad, arr, locate)
        elif self.relabel is False and lo < 0:
            for arr in (src, dst):
                bad = arr < 0
                if bad.any():
                    self._fail("negative vertex id (pass relabel=True to map arbitrary ids to 0..n-1)",
                               bad, arr, locate)
        self._min = lo if self._min is None else min(self._min, lo)
        self._max = hi if self._max is None else max(self._max, hi)
        if self.labels is None and self.num_vertices is None and self.relabel is not False:
            if not self._mark_seen(lo, hi, src, dst, fast):
                ids = np.concatenate([src, dst])
                ids.sort()
                self._note_ids(ids[np.concatenate([[True], ids[1:] != ids[:-1]])])
                del ids
        try:
            self._spill.append(src, dst, weight, fits_int32=lo >= 0 and hi <= _INT32_MAX, owned=owned)
            if self._spill.in_memory and self._spill.nbytes > self._memory_cap:
                self._spill.to_disk()
        except OSError as err:
            raise write_failure(self.path or "<in memory>", err) from err

    def _stored_weights(self, weight, locate):
        """Weights in the store's type; a weight that is not finite, or that the type turns into
        infinity or zero, is an error naming it (a wider ``weight_dtype`` keeps it)."""
        bad = ~np.isfinite(weight)
        if bad.any():
            self._fail("weight is not a finite number", bad, weight, locate)
        with np.errstate(over="ignore", under="ignore"):
            stored = weight.astype(self.weight_dtype)
        if stored.dtype != weight.dtype:
            over = np.isinf(stored)
            if over.any():
                self._fail(f"weight too large for {stored.dtype} (it would be stored as inf); pass "
                           f'weight_dtype="float64"', over, weight, locate)
            under = (stored == 0) & (weight != 0)
            if under.any():
                self._fail(f"weight too small for {stored.dtype} (it would be stored as 0); pass "
                           f'weight_dtype="float64"', under, weight, locate)
        return stored

    def _fail(self, message, bad_mask, values, locate):
        i = int(np.flatnonzero(bad_mask)[0])
        value = values[i].item()
        if locate is not None:
            path, line = locate(i)
            raise InputError(message, path=path, line=line, value=value)
        raise InputError(f"{message}: edge {i} of the chunk", value=value)

    def _id_kernels(self, edges: int):
        """The compiled kernels (``kernels.cpu_ingest``) for the ids of a chunk of ``edges`` edges
        where numba is installed and the budget has room for it; else None (NumPy)."""
        cfg = config.get().ingest
        if edges < cfg.id_kernel_min_edges or self.memory < cfg.compiled_min_budget:
            return None
        return B.compiled_kernels()

    def _mark_seen(self, lo: int, hi: int, src, dst, fast=None) -> bool:
        """Mark the ids seen in a table of one byte per id (several times faster than sorting
        them) while the ids are non-negative and the table fits an eighth of the budget's data
        share; else hand what it holds to :meth:`_note_ids` and return False from then on.
        ``fast``: the compiled kernels (:meth:`_id_kernels`), or None."""
        if self._seen is None:
            return False
        if lo < 0 or hi + 1 > M.data_bytes(self.memory) // 8:
            seen, self._seen = self._seen, None
            if seen.any():
                self._note_ids(np.flatnonzero(seen).astype(np.int64))
            return False
        if hi >= len(self._seen):
            grown = np.zeros(min(M.data_bytes(self.memory) // 8, max(hi + 1, 2 * len(self._seen))), bool)
            grown[:len(self._seen)] = self._seen
            self._seen = grown
            M.check_vertices(int(np.count_nonzero(grown)), self.memory, at_least=True)
        if fast is not None:
            fast.mark_ids(src, dst, self._seen, self.workers)
        else:
            self._seen[src] = True
            self._seen[dst] = True
        return True

    def _note_ids(self, ids):
        """Keep the distinct ids seen (for relabelling): merged once the unmerged ones take an
        eighth of the budget (the merged set itself is per-vertex memory)."""
        self._uniques.append(ids.astype(np.int64, copy=False))
        self._unique_total += len(ids)
        pending = self._unique_total - (len(self._uniques[0]) if len(self._uniques) > 1 else 0)
        if len(self._uniques) > 8 or 8 * pending > M.data_bytes(self.memory) // 8:
            merged = np.unique(np.concatenate(self._uniques))
            self._uniques, self._unique_total = [merged], len(merged)
            M.check_vertices(len(merged), self.memory, at_least=True)  # say so before reading on

    # -- vertex ids -----------------------------------------------------------------------------
    def _settle_ids(self):
        """Decide n and the label array (None when ids are kept as they are)."""
        if self.labels is not None:
            return len(self.labels), self.labels
        if self.num_vertices is not None and self.relabel is not True:
            return self.num_vertices, None
        if self.relabel is False:
            return (0 if self._max is None else self._max + 1), None
        seen = [] if self._seen is None else [np.flatnonzero(self._seen).astype(np.int64)]  # sorted, distinct
        parts = self._uniques + seen
        ids = (seen[0] if len(parts) == 1 and seen else np.unique(np.concatenate(parts)) if parts
               else np.zeros(0, np.int64))
        if self.relabel is None and (len(ids) == 0 or (ids[0] == 0 and ids[-1] == len(ids) - 1)):
            return max(len(ids), self.num_vertices or 0), None
        return len(ids), ids

    @staticmethod
    def _lookup_table(labels, id_dtype, room: int):
        """(table, first id) mapping original ids to 0..n-1 by index, where the ids' span fits
        ``room`` bytes; else (None, 0) and ids are mapped by binary search (several times slower)."""
        if labels is None or not len(labels):
            return None, 0
        base, span = int(labels[0]), int(labels[-1]) - int(labels[0]) + 1
        if span * id_dtype.itemsize > room:
            return None, 0
        lut = np.zeros(span, id_dtype)
        lut[labels - base] = np.arange(len(labels), dtype=id_dtype)
        return lut, base

    def _map_ids(self, src, dst, id_dtype, fast=None):
        """A spill chunk's ids as internal ids (0..n-1) in ``id_dtype``; ``fast``: the compiled
        kernels, for a caller that maps chunks one at a time on the main thread (the degree pass:
        the scatter's worker threads map theirs side by side already), or None."""
        if self._lut is not None and fast is not None and len(src) >= config.get().ingest.id_kernel_min_edges:
            src, dst = fast.lookup_ids(src, dst, self._lut, self._lut_base, self.workers)
        elif self._lut is not None:  # a gather: ids span little more than the vertices
            if self._lut_base < 0:  # int32 ids minus a negative base could wrap
                src, dst = src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False)
            src, dst = self._lut[src - self._lut_base], self._lut[dst - self._lut_base]
        elif self._label_map is not None:
            src = np.searchsorted(self._label_map, src).astype(id_dtype)
            dst = np.searchsorted(self._label_map, dst).astype(id_dtype)
        else:
            src, dst = src.astype(id_dtype, copy=False), dst.astype(id_dtype, copy=False)
        return src, dst

    def _map(self, src, dst, w, id_dtype):
        """A spill chunk as internal arcs in ``id_dtype``: ids mapped, self-loops dropped,
        symmetrised; runs on worker threads."""
        src, dst = self._map_ids(src, dst, id_dtype)
        if self.drop_self_loops:
            keep = src != dst
            src, dst, w = src[keep], dst[keep], (None if w is None else w[keep])
        if not self.directed:
            loop = src == dst
            rs, rd = dst[~loop], src[~loop]
            src, dst = np.concatenate([src, rs]), np.concatenate([dst, rd])
            if w is not None:
                w = np.concatenate([w, w[~loop]])
        return src, dst, w

    # -- output ---------------------------------------------------------------------------------
    def finish(self) -> Path | None:
        """Write the store and rename it into place; returns its path (None: in memory)."""
        try:
            try:
                path = self._finish()
            except OSError as err:  # the disk or the file system, while writing scratch or store
                raise write_failure(self.path or "<in memory>", err) from err
        except BaseException as exc:
            self._close(exc)
            raise
        self._close()
        return path

    def abort(self) -> None:
        """Remove the scratch (and end the process if SIGTERM stopped the build)."""
        self._close()

    def _close(self, exc: BaseException | None = None) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)
        self._guard.release(exc)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._close(exc)

    def _finish(self) -> Path:
        with self.stages("ids"):
            n, labels = self._settle_ids()
        M.check_vertices(n, self.memory)
        self._label_map = labels
        lay = self._layout(n, labels)
        bar = progress_bar(total=2 * lay.total_in, unit="arc", desc="partitioning", progress=self.progress)
        with bar:
            in_edges, out_edges = self._degree_pass(lay, bar)
            buckets = self._scatter_pass(lay, in_edges, out_edges, bar)
        if self.path is None:
            self.memory_file = MemoryFile()
            self._write(self.memory_file, lay, buckets)
            return None
        out = AtomicFile(self.path)
        try:
            with out.create() as h5:
                stats = self._write(h5, lay, buckets)
            check_output(self.path, overwrite=self.overwrite)  # nothing appeared there meanwhile
            out.commit()
        except BaseException:
            out.discard()
            raise
        self._note_written(stats["store_id"])
        seconds = time.perf_counter() - self._t0
        log.info("wrote %s: %d vertices, %d arcs in %.1f s (%.3g input edges/s)", self.path, n,
                 stats["num_arcs"], seconds, self._spill.count / max(seconds, 1e-9))
        return self.path


def _not_int(value, least: int) -> bool:
    return isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least

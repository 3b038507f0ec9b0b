"""Reading a store: :class:`Graph`, the handle every algorithm takes."""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import h5py
import numpy as np

from ooc_graph import config
from ooc_graph.errors import ParameterError, StoreError
from ooc_graph.partitioning.cel import ChunkLayout, chunk_layout

from . import _format as F
from . import contents, locking, stamps
from ._graph_results import GraphResults
from ._validate import check_block_table, check_store, json_attr
from .direct import ChecksumError, ChunkTable, Closed, DirectReader, Unsupported
from .labels import check_increasing, decode_labels
from .locking import IO



def _read_direct(direct, ranges, out) -> bool:
    """The ranges one after another into ``out`` through ``direct`` = (reader, table); False
    where h5py must read them instead (a bad checksum, which h5py then reports, or a reader
    closed meanwhile)."""
    reader, table = direct
    at = 0
    try:
        for start, count in ranges:
            if count:
                reader.read(table, start, count, out[at:at + count])
            at += count
    except (ChecksumError, Closed):
        return False
    return True


def open_graph(path, *, lock_timeout=None) -> "Graph":
    """Open a graph store written by :func:`ooc_graph.convert` or :mod:`ooc_graph.generate`.

    Raises :class:`~ooc_graph.errors.StoreError` when the file is missing, not a store, truncated,
    corrupted, or its attributes contradict its datasets; :class:`~ooc_graph.errors.FormatVersionError`
    for an unknown format version; :class:`~ooc_graph.errors.StoreBusyError` when another process
    writes to it for longer than ``lock_timeout`` seconds (default ``$OOC_GRAPH_LOCK_TIMEOUT``, else 60).
    """
    return Graph(path, lock_timeout=lock_timeout)


def as_graph(G) -> "Graph":
    """An open :class:`Graph`, or the store at a path opened."""
    if isinstance(G, Graph):
        return G
    if isinstance(G, (str, bytes)) or hasattr(G, "__fspath__"):
        return open_graph(G)
    raise ParameterError(f"expected an ooc_graph.Graph or a path to a store (got {type(G).__name__})")


class Graph(GraphResults):
    """A graph in an HDF5 store. Arrays are read lazily; the edges are never loaded whole.

    Any number of processes, and of graphs in one process, may have one store open. The store stays
    open for reading (HDF5's shared lock) between reads; a write by this process (saving, dropping
    or importing a result, compacting) closes the process's handles on the file, and each reopens
    it on its next read, checking that it is still the same graph (``store_id``).
    """

    in_memory = False  # a store without a file (ooc_graph.store.memory.MemoryGraph)

    def __init__(self, path, *, lock_timeout=None):
        if not isinstance(path, (str, os.PathLike)):
            raise ParameterError(f"expected the path of a graph store (got {type(path).__name__})")
        self.path = Path(path)
        self._h5, self._key, self._closed = None, None, False
        self._direct = None  # (file key, DirectReader, {dataset: ChunkTable or None}) once used
        self._engines: dict = {}  # per (device, budgets): engines whose caches outlive one call
        self._trust, self._vetting = (None, frozenset()), threading.Lock()  # (file key, content checks passed)
        self._timeout = locking.lock_timeout(lock_timeout)
        if not self.path.exists():
            raise StoreError(f"{self.path}: no such graph store")
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a graph store")
        h5 = self._open()
        try:
            self.attrs, tables = check_store(h5, self.path)
        except BaseException:
            with IO:
                h5.close()
            raise
        self.store_id = F.store_identity(self.attrs)
        self.__dict__.update(intervals=tables["intervals"], blocks=tables["blocks"])  # cached properties
        self._attach(h5)

    # -- the file handle ------------------------------------------------------------------------
    def _open(self) -> h5py.File:
        def attempt():
            with IO:
                return h5py.File(self.path, "r")
        try:
            return locking.retry_locked(attempt, path=self.path, timeout=self._timeout, what="reading")
        except StoreError:
            raise
        except FileNotFoundError as err:
            raise StoreError(f"{self.path}: no such graph store (it was removed)") from err
        except OSError as err:
            raise StoreError(f"{self.path}: not a readable graph store (truncated or not HDF5): {err}") from err

    def _attach(self, h5):
        self._h5, self._key = h5, locking.file_key(h5.id.get_vfd_handle())
        locking.register(self, self._key)

    def _detach(self):
        """Close the handle (under IO); the next read reopens the file. ``_key`` still names the
        file this graph read, so a save can tell whether the path was replaced meanwhile."""
        if self._h5 is not None:
            self._h5.close()
            self._h5 = None
            locking.unregister(self, self._key)

    def _check_open(self):
        if self._closed:
            raise StoreError(f"{self.path}: the graph is closed (open it again with ooc_graph.open)")

    @contextmanager
    def _file(self):
        """The open HDF5 file, with :data:`IO` held; reopened (and checked) after a write detached it."""
        while True:
            with IO:
                self._check_open()
                if self._h5 is not None:
                    yield self._h5
                    return
            with locking.reopening(self.path):  # a save meanwhile waits for it to be attached
                h5 = self._open()  # waits, without IO, while another process writes
                with IO:
                    if self._closed or self._h5 is not None:
                        h5.close()
                        continue
                    try:
                        self._same_graph(h5)
                    except BaseException:
                        h5.close()
                        raise
                    self._attach(h5)

    def _same_graph(self, h5):
        """Refuse a file reopened at the path that is not this graph: another ``store_id``, or
        (another file: compacted, or replaced) one that fails the checks at open or whose
        tables differ from those this graph read."""
        same = F.store_identity(h5.attrs) == self.store_id
        if same and locking.file_key(h5.id.get_vfd_handle()) != self._key:
            attrs, tables = check_store(h5, self.path)
            same = all(attrs.get(k) == self.attrs.get(k) for k in ("num_vertices", "num_arcs", "directed",
                                                                   "weighted", "interval_size", "chunk_arcs")) \
                and all(np.array_equal(a, b) for a, b in zip(tables["blocks"], self.blocks))
        if not same:
            raise StoreError(f"{self.path}: the file was replaced by another graph since it was opened; open it again")

    def _vet(self, name):
        """Check, once per store, the datasets that reading ``name`` relies on (:mod:`.contents`)."""
        key, passed = self._trust
        group = contents.group_of(name, self.directed)
        if group is None or (key == self._key and group in passed):
            return
        with self._vetting:
            with self._file() as h5:
                key, st = self._key, os.fstat(h5.id.get_vfd_handle())
            if self._trust[0] != key:
                self._trust = (key, frozenset())
            if group not in self._trust[1]:
                self._trust = (key, self._trust[1] | contents.ensure(self, group, stamps.stamp_of(st, self.store_id)))

    def trust_written(self, stamp) -> None:
        """Mark this graph's file as passing every content check, where it is still the file the
        store's builder wrote (``stamp``: :func:`stamps.stamp_of` it taken after it was renamed
        into place)."""
        with self._file() as h5:
            if stamps.stamp_of(os.fstat(h5.id.get_vfd_handle()), self.store_id) == stamp:
                self._trust = (self._key, frozenset(contents.GROUPS))

    @property
    def closed(self) -> bool:
        return self._closed

    def detach(self) -> None:
        """Close the file until the next read, so that other processes can write to the store
        (an open graph holds HDF5's shared lock, and a writer waits for every reader). Cached
        arrays and the engines' chunk caches stay; the next read reopens the file and checks it is
        still this graph."""
        with IO:
            self._detach()

    num_vertices = property(lambda self: int(self.attrs["num_vertices"]))
    num_arcs = property(lambda self: int(self.attrs["num_arcs"]))
    num_edges = property(lambda self: int(self.attrs["num_edges"]))
    directed = property(lambda self: bool(self.attrs["directed"]))
    weighted = property(lambda self: bool(self.attrs["weighted"]))
    interval_size = property(lambda self: int(self.attrs["interval_size"]))
    chunk_arcs = property(lambda self: int(self.attrs["chunk_arcs"]))
    id_dtype = property(lambda self: np.dtype(self.attrs["id_dtype"]))

    @property
    def num_chunks(self) -> int:
        return -(-self.num_arcs // self.chunk_arcs)

    @property
    def built_by(self) -> dict:
        return json_attr(self.attrs, "built_by", self.path)

    def __repr__(self):
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        closed = " (closed)" if self._closed else ""
        return (f"<ooc_graph.Graph {self.path.name}: {self.num_vertices:,} vertices, "
                f"{self.num_arcs:,} arcs, {kind}{w}{closed}>")

    # -- arrays ---------------------------------------------------------------------------------
    def _direct_table(self, h5, name):
        """``(reader, table)`` to read dataset ``name`` without h5py (:mod:`.direct`), or None.
        Called with IO held; the reader's descriptor is checked to be the file h5py has open."""
        cfg = config.get().store
        if not cfg.direct_reads or self._key is None:
            return None
        try:  # a small dataset goes through h5py (one read, no threads to start)
            ds = h5[name]
            if ds.size * ds.dtype.itemsize < cfg.direct_min_bytes:
                return None
        except (KeyError, TypeError, AttributeError):
            return None
        if self._direct is None or self._direct[0] != self._key:
            self._close_direct()
            reader = DirectReader(self.path)
            if locking.file_key(reader.fd) != self._key:  # replaced between the two opens
                reader.close()
                return None
            self._direct = (self._key, reader, {})
        _key, reader, tables = self._direct
        if name not in tables:
            try:
                table = ChunkTable(h5[name])
                tables[name] = table if table.size * table.dtype.itemsize >= cfg.direct_min_bytes else None
            except (Unsupported, KeyError):
                tables[name] = None
        return None if tables[name] is None else (reader, tables[name])

    def _close_direct(self):
        if self._direct is not None:
            self._direct[1].close()
            self._direct = None

    def _read(self, name, sel=slice(None)):
        """Dataset ``name`` (or ``sel`` of it), once the content checks it needs have passed."""
        self._vet(name)
        return self._fetch(name, sel)

    def _fetch(self, name, sel=slice(None)):
        try:
            if sel == slice(None):
                with self._file() as h5:
                    direct = self._direct_table(h5, name)
                if direct is not None:  # without IO: other threads read meanwhile
                    out = np.empty(direct[1].size, dtype=direct[1].dtype)
                    if _read_direct(direct, [(0, out.size)], out):
                        return out
            with self._file() as h5:
                return h5[name][sel]
        except KeyError as err:
            raise StoreError(f"{self.path}: dataset {name!r} is missing") from err
        except OSError as err:
            raise StoreError(f"{self.path}: dataset {name!r} is corrupted or truncated ({err})") from err

    @cached_property
    def out_degree(self) -> np.ndarray:
        return self._read(F.OUT_DEGREE)

    @cached_property
    def in_degree(self) -> np.ndarray:
        return self._read(F.IN_DEGREE)

    @cached_property
    def labels(self) -> np.ndarray | None:
        """Original vertex ids (sorted) when the input ids were not 0..n-1, else ``None``: int64,
        or Python strings (an object array) in a store with string ids."""
        if self.string_labels:
            return decode_labels(self._read(F.LABEL_BYTES), self._read(F.LABEL_OFFSETS), self.path)
        with self._file() as h5:
            present = F.LABELS in h5
        return check_increasing(self._read(F.LABELS), F.LABELS, self.path) if present else None

    @cached_property
    def string_labels(self) -> bool:
        """Whether the original vertex ids are strings."""
        with self._file() as h5:
            return F.LABEL_OFFSETS in h5

    @cached_property
    def intervals(self) -> np.ndarray:
        return self._read(F.CEL_INTERVALS)

    @cached_property
    def blocks(self):
        """The block table: (offsets[nb+1], source interval[nb], destination interval[nb])."""
        return (self._read(F.CEL_BLOCK_OFFSETS), self._read(F.CEL_BLOCK_SRC), self._read(F.CEL_BLOCK_DST))

    @property
    def vertices(self) -> np.ndarray:
        """Original id of every vertex, in internal-id order."""
        return np.arange(self.num_vertices, dtype=np.int64) if self.labels is None else self.labels

    def vertex_id(self, label) -> int:
        """Internal id (0..n-1) of an original vertex id; identity when the store kept the ids."""
        labels = self.labels
        if self.string_labels and not isinstance(label, str):
            raise ParameterError(f"vertex {label!r} is not in the graph (its vertex ids are strings)")
        if not self.string_labels and (isinstance(label, (bool, np.bool_)) or not isinstance(label, (int, np.integer))):
            # Never coerced: 1.5 or True is not vertex 1.
            raise ParameterError(f"vertex {label!r} is not in the graph (its vertex ids are integers)")
        if labels is None:
            v = int(label)
            if not 0 <= v < self.num_vertices:
                ids = f"ids are 0..{self.num_vertices - 1}" if self.num_vertices else "the store has no vertices"
                raise ParameterError(f"vertex {label!r} is not in the graph ({ids})")
            return v
        i = int(np.searchsorted(labels, label))
        if i >= len(labels) or labels[i] != label:
            raise ParameterError(f"vertex {label!r} is not in the graph")
        return i

    def csr(self, side: str = "out", parts=("indptr", "indices", "weights")):
        """``(indptr, indices, weights-or-None)`` of the out- or in-arc CSR, read whole; only the
        ``parts`` named are read (None in place of the others; weights are None on an unweighted
        store)."""
        if side not in ("out", "in"):
            raise ParameterError(f"unknown CSR side {side!r} (valid: out, in)")
        read = [self._read(F.CSR.format(side=side, part=part)) if part in parts else None
                for part in ("indptr", "indices")]
        w = self._read(F.CSR.format(side=side, part="weights")) if self.weighted and "weights" in parts else None
        return read[0], read[1], w

    def read_cel(self, start: int, stop: int, empty=None):
        """Arcs [start, stop) of the CEL: ``(layout, src_local, dst_local, weight-or-None)``.

        ``empty(shape, dtype)`` allocates the output arrays (e.g. in pinned memory); the data is
        read straight into them.
        """
        offsets, bsrc, bdst = self.blocks
        layout = chunk_layout(offsets, bsrc, bdst, start, stop)
        names = (F.CEL_SRC, F.CEL_DST) + ((F.CEL_WEIGHT,) if self.weighted else ())
        out = [self._read_ranges(name, [(start, stop - start)], empty or np.empty) for name in names]
        return layout, out[0], out[1], (out[2] if self.weighted else None)

    @property
    def augmented(self) -> bool:
        """Whether the store holds the CEL augmentation (``convert(..., augment=True)``)."""
        return bool(self.attrs.get("augmented", False))

    @cached_property
    def back_blocks(self):
        """The CEL augmentation's block table: (offsets, source interval, destination interval),
        checked as it is read (FORMAT.md's order; its last offset was checked at open)."""
        table = (self._read(F.AUG_BLOCK_OFFSETS), self._read(F.AUG_BLOCK_SRC), self._read(F.AUG_BLOCK_DST))
        check_block_table(*table, len(self.intervals) - 1, self.path, "cel_aug", source_major=True)
        return table

    def _back_selection(self, first, last, before, limit):
        """Augmentation blocks from source intervals first..last into destination intervals
        < before, and how many arcs of each to take (at most ``limit`` in all)."""
        if not self.augmented:
            raise StoreError(f"{self.path}: the store has no CEL augmentation (convert with augment=True)")
        offsets, bsrc, bdst = self.back_blocks
        lo, hi = int(np.searchsorted(bsrc, first, side="left")), int(np.searchsorted(bsrc, last, side="right"))
        picked = lo + np.flatnonzero(bdst[lo:hi] < before)
        lengths = (offsets[picked + 1] - offsets[picked]).astype(np.int64)
        taken = np.minimum(lengths, np.maximum(limit - (np.cumsum(lengths) - lengths), 0))
        keep = taken > 0
        return picked[keep], taken[keep]

    def count_back_arcs(self, first: int, last: int, before: int, limit: int) -> int:
        """How many arcs :meth:`read_back_arcs` would return, from the block table alone."""
        return int(self._back_selection(first, last, before, limit)[1].sum())

    def read_back_arcs(self, first: int, last: int, before: int, limit: int, empty=None):
        """Arcs of the CEL augmentation from source intervals ``first..last`` into destination
        intervals ``< before``, at most ``limit`` of them (whole blocks first, in store order):
        ``(layout, src_local, dst_local, weight-or-None)`` as :meth:`read_cel`."""
        picked, taken = self._back_selection(first, last, before, limit)
        offsets, bsrc, bdst = self.back_blocks
        layout = ChunkLayout(start=0, stop=int(taken.sum()), first_block=-1, lengths=taken,
                             src_interval=bsrc[picked].astype(np.int64), dst_interval=bdst[picked].astype(np.int64))
        # Blocks picked are runs of consecutive blocks (a prefix of each source interval's run):
        # read each run with one call.
        starts = offsets[picked]
        run = np.flatnonzero(np.diff(picked, prepend=-2) != 1)  # first block of each run
        ends = np.append(run[1:], picked.size)
        ranges = [(int(starts[r]), int(taken[r:e].sum())) for r, e in zip(run, ends)]
        names = (F.AUG_SRC, F.AUG_DST) + ((F.AUG_WEIGHT,) if self.weighted else ())
        out = [self._read_ranges(name, ranges, empty or np.empty) for name in names]
        return layout, out[0], out[1], (out[2] if self.weighted else None)

    def _read_ranges(self, name, ranges, empty):
        """The ``(start, count)`` ranges of dataset ``name``, one after another, read straight into
        an array from ``empty(shape, dtype)``, once the content checks it needs have passed."""
        self._vet(name)
        return self._fetch_ranges(name, ranges, empty)

    def _fetch_ranges(self, name, ranges, empty):
        with self._file() as h5:
            try:
                dtype = h5[name].dtype
            except KeyError as err:
                raise StoreError(f"{self.path}: dataset {name!r} is missing") from err
            direct = self._direct_table(h5, name)
        arr = empty((sum(count for _, count in ranges),), dtype)
        if direct is not None and _read_direct(direct, ranges, arr):  # without IO: readers run in parallel
            return arr
        with self._file() as h5:
            ds = h5[name]
            at = 0
            for start, count in ranges:
                try:
                    if count:
                        ds.read_direct(arr, np.s_[start:start + count], np.s_[at:at + count])
                except OSError as err:
                    raise StoreError(f"{self.path}: dataset {name!r} is corrupted or truncated ({err})") from err
                at += count
        return arr

    def cel_nbytes_per_arc(self) -> int:
        n = 2 * np.dtype(self.attrs["local_id_dtype"]).itemsize
        return n + (np.dtype(self.attrs["weight_dtype"]).itemsize if self.weighted else 0)

    # -- lifetime -------------------------------------------------------------------------------
    @property
    def engines(self) -> dict:
        self._check_open()
        return self._engines

    def release(self):
        """Free the chunk caches kept between calls (host memory and GPU memory)."""
        for engine in self._engines.values():
            engine.release()
        self._engines.clear()

    def close(self):
        """Close the store; later operations raise StoreError. Closing twice is harmless."""
        if self._closed:
            return
        self.release()  # without IO: an engine's reader thread may need it to finish a read
        with IO:
            self._closed = True
            self._detach()
            self._close_direct()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

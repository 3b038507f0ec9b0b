"""Reading a store: :class:`Graph`, the handle every algorithm takes."""

from __future__ import annotations

import json
import time
from functools import cached_property
from pathlib import Path

import h5py
import numpy as np

from ooc_graph.errors import FormatVersionError, ParameterError, StoreError
from ooc_graph.partitioning.cel import ChunkLayout, chunk_layout

from . import _format as F
from .writer import write_array


def open_graph(path) -> "Graph":
    """Open a graph store written by :func:`ooc_graph.convert` or :mod:`ooc_graph.generate`.

    Raises :class:`~ooc_graph.errors.StoreError` when the file is missing, not a store, truncated
    or corrupted, and :class:`~ooc_graph.errors.FormatVersionError` for an unknown format version.
    """
    return Graph(path)


def encode_labels(labels) -> tuple[np.ndarray, np.ndarray]:
    """String ids as stored: their UTF-8 bytes one after another (uint8) and n + 1 offsets."""
    encoded = [str(v).encode("utf-8") for v in labels]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), np.uint8), offsets


def decode_labels(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The inverse of :func:`encode_labels`: an object array of Python strings."""
    raw = data.tobytes()
    bounds = offsets.tolist()
    out = np.empty(len(bounds) - 1, dtype=object)
    out[:] = [raw[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]
    return out


class Graph:
    """A graph in an HDF5 store. Arrays are read lazily; the edges are never loaded whole."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.exists():
            raise StoreError(f"{self.path}: no such graph store")
        try:
            self._file = h5py.File(self.path, "r")
        except OSError as err:
            raise StoreError(f"{self.path}: not a readable graph store (truncated or not HDF5): {err}") from err
        try:
            self._check_header()
        except Exception:
            self._file.close()
            raise
        self._inode = self.path.stat().st_ino
        self.engines: dict = {}  # per (device, budgets): engines whose caches outlive one call

    @property
    def _h5(self) -> h5py.File:
        """The open file; reopened on first use after :meth:`detach`."""
        if self._file is None:
            self._reattach()
        return self._file

    def detach(self) -> None:
        """Close the file but keep the engines and their caches; the next read reopens it (and
        refuses a file that has been replaced since). Lets another process write the store."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _reattach(self) -> None:
        identity = {k: self.attrs.get(k) for k in ("num_vertices", "num_arcs", "built_by")}
        try:
            if self.path.stat().st_ino != self._inode:
                raise StoreError(f"{self.path}: the store was replaced since it was opened; open it again")
            self._file = h5py.File(self.path, "r")
        except OSError as err:
            raise StoreError(f"{self.path}: cannot reopen the store: {err}") from err
        self._check_header()
        if {k: self.attrs.get(k) for k in identity} != identity:
            self.detach()
            raise StoreError(f"{self.path}: the store was replaced since it was opened; open it again")

    # -- header ---------------------------------------------------------------------------------
    def _check_header(self):
        a = self._h5.attrs
        if a.get("format") != F.FORMAT_NAME:
            raise StoreError(f"{self.path}: not an ooc_graph store (attribute 'format' is {a.get('format')!r})")
        version = int(a.get("format_version", -1))
        if version not in F.SUPPORTED_VERSIONS:
            raise FormatVersionError(
                f"{self.path}: store format version {version} is not supported by this reader "
                f"(supported: {', '.join(map(str, F.SUPPORTED_VERSIONS))}); convert the graph again"
            )
        missing = [name for name in (F.OUT_DEGREE, F.IN_DEGREE, F.CEL_INTERVALS, F.CEL_BLOCK_OFFSETS,
                                     F.CEL_SRC, F.CEL_DST, F.CSR.format(side="out", part="indptr"))
                   if name not in self._h5]
        if missing:
            raise StoreError(f"{self.path}: store is incomplete, missing {', '.join(missing)}")
        self.attrs = {k: (v.item() if hasattr(v, "item") else v) for k, v in a.items()}

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
        return json.loads(self.attrs.get("built_by", "{}"))

    def __repr__(self):
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        return (f"<ooc_graph.Graph {self.path.name}: {self.num_vertices:,} vertices, "
                f"{self.num_arcs:,} arcs, {kind}{w}>")

    # -- arrays ---------------------------------------------------------------------------------
    def _read(self, name, sel=slice(None)):
        try:
            return self._h5[name][sel]
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
        if F.LABEL_OFFSETS in self._h5:
            return decode_labels(self._read(F.LABEL_BYTES), self._read(F.LABEL_OFFSETS))
        return self._read(F.LABELS) if F.LABELS in self._h5 else None

    @property
    def string_labels(self) -> bool:
        """Whether the original vertex ids are strings."""
        return F.LABEL_OFFSETS in self._h5

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
        if labels is None:
            v = int(label)
            if not 0 <= v < self.num_vertices:
                raise ParameterError(f"vertex {label!r} is not in the graph (ids are 0..{self.num_vertices - 1})")
            return v
        i = int(np.searchsorted(labels, label))
        if i >= len(labels) or labels[i] != label:
            raise ParameterError(f"vertex {label!r} is not in the graph")
        return i

    def csr(self, side: str = "out"):
        """``(indptr, indices, weights-or-None)`` of the out- or in-arc CSR, read whole."""
        if side not in ("out", "in"):
            raise ParameterError(f"unknown CSR side {side!r} (valid: out, in)")
        name = F.CSR.format(side=side, part="weights")
        w = self._read(name) if name in self._h5 else None
        return (self._read(F.CSR.format(side=side, part="indptr")),
                self._read(F.CSR.format(side=side, part="indices")), w)

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
        """The CEL augmentation's block table: (offsets, source interval, destination interval)."""
        return (self._read(F.AUG_BLOCK_OFFSETS), self._read(F.AUG_BLOCK_SRC), self._read(F.AUG_BLOCK_DST))

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
        an array from ``empty(shape, dtype)``."""
        try:
            ds = self._h5[name]
        except KeyError as err:
            raise StoreError(f"{self.path}: dataset {name!r} is missing") from err
        arr = empty((sum(count for _, count in ranges),), ds.dtype)
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
        n = self._h5[F.CEL_SRC].dtype.itemsize + self._h5[F.CEL_DST].dtype.itemsize
        return n + (self._h5[F.CEL_WEIGHT].dtype.itemsize if self.weighted else 0)

    # -- results --------------------------------------------------------------------------------
    def results(self) -> list[str]:
        return sorted(self._h5[F.RESULTS].keys()) if F.RESULTS in self._h5 else []

    def load_result(self, name: str) -> dict:
        grp_name = f"{F.RESULTS}/{name}"
        if grp_name not in self._h5:
            raise ParameterError(f"no result {name!r} in {self.path} (stored: {', '.join(self.results()) or 'none'})")
        grp = self._h5[grp_name]
        out = {k: grp[k][()] for k in grp.keys()}
        out["attrs"] = {k: (v.item() if hasattr(v, "item") else v) for k, v in grp.attrs.items()}
        return out

    def save_result(self, name: str, arrays: dict, attrs: dict) -> None:
        """Store ``arrays`` and ``attrs`` under ``results/<name>``, replacing an older one.

        Written under a temporary group name and moved into place, so a failure leaves the old
        result (or none) and never a half-written one.
        """
        if not name or "/" in name:
            raise ParameterError(f"result name must be non-empty and contain no '/' (got {name!r})")
        self.detach()
        try:
            with h5py.File(self.path, "r+") as h5:
                results = h5.require_group(F.RESULTS)
                tmp = f".partial-{name}"
                if tmp in results:
                    del results[tmp]
                grp = results.create_group(tmp)
                for key, values in arrays.items():
                    write_array(grp, key, values)
                for key, value in {**attrs, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z")}.items():
                    grp.attrs[key] = json.dumps(value) if isinstance(value, (dict, list)) or value is None else value
                if name in results:
                    del results[name]
                results.move(tmp, name)
        finally:
            self._file = h5py.File(self.path, "r")

    # -- lifetime -------------------------------------------------------------------------------
    def release(self):
        """Free the chunk caches kept between calls (host memory and GPU memory)."""
        for engine in self.engines.values():
            engine.release()
        self.engines.clear()

    def close(self):
        self.release()
        self.detach()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

"""A store held in memory instead of an HDF5 file: for small graphs converted on every call (the
networkx backend), where creating, writing, checksumming and reopening a file's dozen datasets
costs far more than the algorithm.

:class:`MemoryFile` is the part of h5py's ``File`` that the store's writer and reader use
(datasets as NumPy arrays, groups, soft links, attributes); the builder writes the same datasets
into it (``ooc_graph.convert(edges, ":memory:")``) and :class:`MemoryGraph` reads them through the same
:class:`~ooc_graph.store.graph.Graph` methods, so every algorithm and the engine run as on a file.
What needs a file is refused with a reason: saving results, compaction, worker processes (they
open a store by its path).
"""

from __future__ import annotations

import threading
from pathlib import Path

import h5py
import numpy as np

from ooc_graph.errors import StoreError

from ._validate import check_store
from .contents import GROUPS
from .graph import Graph


def _parts(name: str) -> list:
    return [p for p in name.split("/") if p]


class MemoryDataset:
    """A 1-D dataset: reads return copies (as h5py's do); ``resize`` grows it (appends are
    amortised: the array keeps spare room)."""

    def __init__(self, data: np.ndarray, chunks=None, name: str = ""):
        self._buf, self._n = data, len(data)
        self.chunks = chunks
        self.name = name
        self.attrs: dict = {}

    @property
    def _data(self) -> np.ndarray:
        return self._buf[:self._n]

    shape = property(lambda self: (self._n,))
    dtype = property(lambda self: self._buf.dtype)
    size = property(lambda self: self._n)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, sel):
        out = self._data[sel]
        return out.copy() if isinstance(out, np.ndarray) else out

    def __setitem__(self, sel, values):
        self._data[sel] = values

    def resize(self, shape) -> None:
        (n,) = shape
        if n > len(self._buf):
            grown = np.zeros(max(n, 2 * len(self._buf)), self._buf.dtype)
            grown[:self._n] = self._data
            self._buf = grown
        elif n < self._n:
            self._buf[n:self._n] = 0
        self._n = n

    def read_direct(self, dest, source_sel=np.s_[...], dest_sel=np.s_[...]) -> None:
        dest[dest_sel] = self._data[source_sel]


class MemoryGroup:
    """A group: members by name (datasets, groups, :class:`h5py.SoftLink`), paths with ``/``."""

    def __init__(self, root: "MemoryGroup | None" = None, name: str = "/"):
        self._members: dict = {}
        self._root = root if root is not None else self
        self.name = name
        self.attrs: dict = {}

    def _walk(self, name: str, follow: bool = True):
        """The member at ``name`` (absolute from the root, else from here), or None."""
        node = self._root if name.startswith("/") else self
        for part in _parts(name):
            if not isinstance(node, MemoryGroup):
                return None
            node = node._members.get(part)
            if follow and isinstance(node, h5py.SoftLink):
                node = self._root._walk(node.path)
        return node

    def _parent(self, name: str, create: bool):
        """The group that holds ``name``'s last part (made on the way with ``create``), and that part."""
        *path, last = _parts(name)
        node = self._root if name.startswith("/") else self
        for part in path:
            child = node._members.get(part)
            if child is None and create:
                child = node._members[part] = MemoryGroup(self._root, f"{node.name.rstrip('/')}/{part}")
            if not isinstance(child, MemoryGroup):
                raise KeyError(name)
            node = child
        return node, last

    def __contains__(self, name) -> bool:
        return self._walk(name) is not None

    def __getitem__(self, name):
        node = self._walk(name)
        if node is None:
            raise KeyError(f"{name!r} is not in {self.name}")
        return node

    def get(self, name, default=None, getlink: bool = False):
        if getlink:
            try:
                parent, last = self._parent(name, create=False)
            except KeyError:  # a group on the way is missing
                return default
            link = parent._members.get(last)
            return default if link is None else link if isinstance(link, h5py.SoftLink) else h5py.HardLink()
        node = self._walk(name)
        return default if node is None else node

    def __setitem__(self, name, link) -> None:
        if not isinstance(link, h5py.SoftLink):
            raise TypeError("an in-memory store links names only (h5py.SoftLink)")
        parent, last = self._parent(name, create=True)
        parent._members[last] = link

    def keys(self):
        return self._members.keys()

    def create_dataset(self, name, shape=None, dtype=None, data=None, chunks=None, maxshape=None,
                       fletcher32=False):
        parent, last = self._parent(name, create=True)
        if last in parent._members:
            raise ValueError(f"{name!r} exists")
        array = np.array(data, dtype=dtype) if data is not None else np.zeros(shape, dtype)
        parent._members[last] = ds = MemoryDataset(array, chunks, f"{parent.name.rstrip('/')}/{last}")
        return ds

    def create_group(self, name) -> "MemoryGroup":
        parent, last = self._parent(name, create=True)
        if last in parent._members:
            raise ValueError(f"{name!r} exists")
        parent._members[last] = grp = MemoryGroup(self._root, f"{parent.name.rstrip('/')}/{last}")
        return grp

    def require_group(self, name) -> "MemoryGroup":
        node = self._walk(name)
        return node if isinstance(node, MemoryGroup) else self.create_group(name)


class MemoryFile(MemoryGroup):
    """The root group of an in-memory store (what the builder writes instead of an HDF5 file)."""

    def close(self) -> None:
        pass


class MemoryGraph(Graph):
    """A :class:`Graph` whose store is a :class:`MemoryFile`: read as a file is, through the same
    methods; it lives as long as this object. ``path`` only names it in messages (no file has
    it). Results cannot be saved into it, and worker processes cannot open it."""

    in_memory = True

    def __init__(self, memory: MemoryFile, name: str = "graph"):
        self.path = Path(f"<in memory: {name}>")
        self._h5, self._key, self._closed = None, None, False
        self._direct = None
        self._engines: dict = {}
        # Built by this library from checked input (it exists only as the builder's output).
        self._trust, self._vetting = (None, frozenset(GROUPS)), threading.Lock()
        self._timeout = 0.0
        self.attrs, tables = check_store(memory, self.path)
        self.store_id = str(self.attrs["store_id"])
        self.__dict__.update(intervals=tables["intervals"], blocks=tables["blocks"])  # cached properties
        self._h5 = memory

    def _open(self):
        raise StoreError(f"{self.path}: the graph is closed (an in-memory store cannot be opened again)")

    def _attach(self, h5):
        self._h5 = h5

    def _detach(self):
        pass  # nothing holds a file lock; the arrays stay until close()

    def close(self):
        super().close()
        self._h5 = None

    def _refuse(self, what: str):
        self._check_open()
        raise StoreError(f"{self.path}: {what} needs a store file; convert the graph into one "
                         "(ooc_graph.convert(..., 'graph.h5'))")

    def save_result(self, name, arrays, attrs, *, lock_timeout=None):
        self._refuse("saving a result")

    def drop_result(self, name, *, lock_timeout=None):
        self._refuse("dropping a result")

    def compact(self, *, lock_timeout=None):
        self._refuse("compacting")

    def fallback_results(self) -> list:
        self._check_open()
        return []

    def import_result(self, path, *, lock_timeout=None):
        self._refuse("importing a result")

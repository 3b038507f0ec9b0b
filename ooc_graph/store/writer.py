"""Writing a store: a temporary file renamed into place only when everything is written."""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

from ooc_graph import config

from . import _format as F
from . import temporary


def umask() -> int:
    """The process's file-creation mask (read without changing it where Linux tells it)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, hence the first way)
    os.umask(mask)
    return mask


class AtomicFile:
    """A temporary file that becomes ``path`` on :meth:`commit`, or vanishes.

    :meth:`create` makes it in a private folder ``.NAME.partial-<pid>-<random>`` beside ``path``
    (:mod:`.temporary`: marked, so that a later sweep removes it if this process dies, and only
    it); the committed file gets ``mode`` (a file it rewrites keeps its own) or the mode a new file
    would (0666 less the umask). The file is made by HDF5, never truncated (see :func:`create_h5`)."""

    def __init__(self, path, mode: int | None = None):
        self.path = Path(path)
        self.mode = mode
        self.folder: Path | None = None
        self.tmp: Path | None = None

    def create(self) -> h5py.File:
        self.folder = temporary.make(self.path.parent, self.path.name, "partial")
        self.tmp = self.folder / self.path.name
        try:
            return create_h5(self.tmp)
        except BaseException:
            self.discard()
            raise

    def commit(self):
        os.chmod(self.tmp, 0o666 & ~umask() if self.mode is None else self.mode)
        os.replace(self.tmp, self.path)
        self.discard()

    def discard(self):
        temporary.remove(self.folder)
        self.folder = None


def create_h5(path) -> h5py.File:
    """A new HDF5 file at ``path`` (an error if one is there: nothing is overwritten), with the
    mode a new file gets (0666 less the umask).

    Not h5py's ``"w"``: that truncates an existing file, and ext4 (``auto_da_alloc``) then makes
    the file's ``close`` write back everything written to it first — 0.35–0.45 s a GB measured
    on the 2-core machine, seconds for a large store."""
    return h5py.File(path, "x")


def create_appendable(h5: h5py.File, name: str, dtype, chunk: int):
    """A 1-D resizable, checksummed dataset written by :func:`append`."""
    return h5.create_dataset(name, shape=(0,), maxshape=(None,), dtype=dtype,
                             chunks=(max(1, int(chunk)),), fletcher32=True)


def append(ds, values: np.ndarray) -> None:
    n = ds.shape[0]
    ds.resize((n + len(values),))
    if len(values):
        ds[n:] = values


def write_array(h5, name: str, values: np.ndarray) -> None:
    """A checksummed 1-D dataset holding ``values`` (an empty one is made resizable: HDF5 wants
    chunks no larger than a fixed shape)."""
    values = np.asarray(values)
    chunk = max(1, min(len(values), F.HDF5_CHUNK_ELEMENTS))
    if values.ndim == 1 and len(values) >= config.get().store.write_array_min_chunks * chunk:
        from . import chunks  # it builds on this module

        with chunks.ChunkWriter(direct=chunks.compiled_loaded()) as writer:  # numba only if loaded already
            if writer.write_array(h5, name, values, chunk):
                return
    h5.create_dataset(name, data=values, chunks=(chunk,),
                      maxshape=(None,) if len(values) == 0 else values.shape, fletcher32=True)

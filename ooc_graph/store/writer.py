"""Writing a store: a temporary file renamed into place only when everything is written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import h5py
import numpy as np

from . import _format as F


class AtomicFile:
    """A temporary path beside ``path`` that becomes ``path`` on :meth:`commit`, or vanishes."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".partial", dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(tmp)

    def commit(self):
        os.replace(self.tmp, self.path)

    def discard(self):
        try:
            self.tmp.unlink()
        except FileNotFoundError:
            pass


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
    h5.create_dataset(name, data=values, chunks=(max(1, min(len(values), F.HDF5_CHUNK_ELEMENTS)),),
                      maxshape=(None,) if len(values) == 0 else values.shape, fletcher32=True)

"""Where a store may be written: never over its input, never over a file that is not a store, over
a store only when asked; and how a failed write is reported."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import h5py
import numpy as np

from ooc_graph.errors import ParameterError, StoreError
from ooc_graph.store import _format as F
from ooc_graph.store.writer import is_disk_full, write_error


def is_store(path: Path) -> bool:
    """Whether ``path`` is an HDF5 file whose root says it is an ooc_graph store."""
    try:
        if not h5py.is_hdf5(path):
            return False
        with h5py.File(path, "r", locking=False) as h5:
            name = h5.attrs.get("format")
            return isinstance(name, str) and name == F.FORMAT_NAME
    except Exception:  # unreadable, truncated, locked: not a store we may replace
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:  # one of them does not exist
        pass
    return a.resolve() == b.resolve()


def check_flags(*, optional=(), **flags) -> None:
    """Boolean options are booleans, ``None`` too where it means "decide" (``optional``): a string
    such as ``"no"`` is not read as one (it is true)."""
    for name, value in flags.items():
        if not (isinstance(value, (bool, np.bool_)) or (value is None and name in optional)):
            raise ParameterError(f"{name} must be True or False{' (or None)' if name in optional else ''} "
                                 f"(got {value!r})")


def check_output(out, *, overwrite: bool = False, inputs=()) -> Path:
    """Refuse an output path that cannot or must not be written, before anything is read or
    created: its folder missing or not a folder, the path a folder, one of ``inputs`` (also
    through links), an existing file that is not a store, or a store without ``overwrite``."""
    if not isinstance(out, (str, os.PathLike)):
        raise ParameterError(f"the output must be a path (got {type(out).__name__})")
    check_flags(overwrite=overwrite)
    out = Path(out)
    folder = out.parent
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise StoreError(f"{out}: the output folder {folder} {what}")
    for path in inputs:
        if _same_file(out, Path(path)):
            raise StoreError(f"{out}: the output is the input file {path}; write the store to another path")
    try:
        exists = os.path.lexists(out) and os.stat(out) is not None
    except OSError as err:
        reason = "a symbolic link loop" if err.errno == errno.ELOOP else (err.strerror or str(err))
        if err.errno == errno.ENOENT:  # a link to nothing: replaced like a missing file
            exists = False
        else:
            raise StoreError(f"{out}: cannot use the output path: {reason}") from err
    if exists:
        if out.is_dir():
            raise StoreError(f"{out}: the output path is a folder; give a file name, e.g. {out / 'graph.h5'}")
        if not is_store(out):
            raise StoreError(f"{out}: exists and is not an ooc_graph store; refusing to replace it "
                             "(remove it or choose another path)")
        if not overwrite:
            raise StoreError(f"{out}: a graph store already exists; pass overwrite=True (--overwrite) to replace it")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"{out}: the output folder {folder} is not writable")
    return out


def write_failure(out: Path, err: OSError) -> StoreError:
    """A one-line :class:`StoreError` for an OS error met while writing the store or its scratch
    (a full disk says so, with the bytes free)."""
    code = getattr(err, "errno", None)
    if is_disk_full(err):
        err = write_error(err, getattr(err, "filename", None) or out)
        reason = err.strerror
    elif code == errno.EDQUOT:
        reason = "disk quota exceeded"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "permission denied" if code != errno.EROFS else "read-only file system"
    else:
        reason = getattr(err, "strerror", None) or str(err)
    where = getattr(err, "filename", None)
    text = f"{out}: cannot write the store: {reason}" + (f" ({where})" if where else "")
    return StoreError(" ".join(text.split()))

"""Writing a store: a temporary file renamed into place only when everything is written; files
this library writes (:class:`WrittenFile`), and errors met writing them as one line."""

from __future__ import annotations

import errno
import os
import shutil
from contextlib import contextmanager
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
    mode a new file gets (0666 less the umask); a temporary one (:class:`WrittenFile`).

    Not h5py's ``"w"``: that truncates an existing file, and ext4 (``auto_da_alloc``) then makes
    the file's ``close`` write back everything written to it first — 0.35–0.45 s a GB measured
    on the 2-core machine, seconds for a large store."""
    return WrittenFile(path, "x", temporary=True)


class WrittenFile(h5py.File):
    """An HDF5 file this library writes to. No chunk cache: a chunk is written, and a full disk
    met, by the call that writes it, not when HDF5 later evicts it or closes its dataset (a
    write failing there cannot be caught, and it left HDF5 in a state that crashed the process
    at exit: SIGSEGV after "Can't decrement id ref count"). Chunks of the store's large datasets
    (4 MiB and more) were never cached anyway. Closing flushes first; where that fails, the error
    is a one-line ``OSError`` naming the file (:func:`write_error`), and a ``temporary`` file
    (removed anyway) is truncated first, giving its space back so that HDF5 can close it."""

    def __init__(self, path, mode: str, *, temporary: bool = False, **kwargs):
        super().__init__(path, mode, rdcc_nbytes=0, **kwargs)
        self.temporary = temporary

    def close(self):
        if not self.id.valid:
            return
        try:
            self.flush()
            super().close()
        except (OSError, RuntimeError) as err:
            error = write_error(err, self.filename)  # the bytes free as the write met them
            self._abandon()
            raise error from err

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and is_disk_full(exc) and self.id.valid:  # raised while writing
            error = write_error(exc, self.filename)
            self._abandon()
            raise error from exc
        self.close()

    def _abandon(self) -> None:
        """Close after a failed write, truncating a temporary file first (HDF5 then has the room
        to write what it still holds, into a file that is removed anyway)."""
        if self.temporary:
            try:
                os.ftruncate(self.id.get_vfd_handle(), 0)
            except (OSError, RuntimeError, ValueError):
                pass
        try:
            super().close()
        except (OSError, RuntimeError, ValueError):
            pass


RESERVE_SLACK = 1 << 20  # bytes set aside for HDF5's metadata besides the data of a write
DISK_FULL = "no space left on the device (disk full)"  # how a full disk is said, then the bytes free


class DiskFull(OSError):
    """The space a write needs could not be set aside (:func:`reserved`): nothing was written."""


@contextmanager
def reserved(h5: h5py.File, nbytes: int):
    """Space for ``nbytes`` more (an eighth and a MiB more for HDF5's metadata) set aside at the
    end of the open file ``h5`` (``posix_fallocate``) before the block writes to it: a full disk is
    met here, before anything in the file changes, as :class:`DiskFull`, not in the middle
    of a write into an existing store, whose metadata half written would damage it. When the block
    ends, what HDF5 did not use is given back (the file is cut to HDF5's end of file). Where the
    file system cannot reserve space, the write goes on without."""
    fd = h5.id.get_vfd_handle()
    size = os.fstat(fd).st_size
    want = nbytes + (nbytes >> 3) + RESERVE_SLACK
    try:
        os.posix_fallocate(fd, size, want)
    except OSError as err:
        if err.errno != errno.ENOSPC:
            size = None  # not supported here (EOPNOTSUPP, EINVAL): written without a reservation
        else:
            free = free_bytes(h5.filename)
            raise DiskFull(errno.ENOSPC, f"{DISK_FULL}, {free:,} bytes free and {want:,} needed", h5.filename) from err
    try:
        yield
    finally:
        if size is not None:
            try:
                h5.flush()
            finally:
                os.ftruncate(fd, max(int(h5.id.get_filesize()), size))


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` is a full disk or quota, also where HDF5 says so only in its message."""
    text = str(err)
    return getattr(err, "errno", None) == errno.ENOSPC or "errno = 28," in text or "No space left on device" in text


def free_bytes(path) -> int | None:
    """Bytes free on the file system holding ``path`` (the nearest folder above it that is there)."""
    for where in (Path(path), *Path(path).parents):
        try:
            return shutil.disk_usage(where).free
        except OSError:
            continue
    return None


def write_error(err: BaseException, path) -> OSError:
    """An error met writing ``path`` as one ``OSError`` of one line naming the file: a full disk
    says so (:data:`DISK_FULL`) and the bytes free (HDF5 reports ENOSPC on several lines, and
    NumPy's ``tofile`` as "N requested and M written")."""
    if isinstance(err, OSError) and str(err.strerror).startswith(DISK_FULL):
        return err  # said already, with the bytes free when it happened
    if is_disk_full(err):
        free = free_bytes(path)
        return OSError(errno.ENOSPC, DISK_FULL + (f", {free:,} bytes free" if free is not None else ""), str(path))
    code = getattr(err, "errno", None) or errno.EIO
    text = getattr(err, "strerror", None) or str(err)
    return OSError(code, " ".join(text.split()), str(path))


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

        with chunks.ChunkWriter() as writer:
            if writer.write_array(h5, name, values, chunk):
                return
    h5.create_dataset(name, data=values, chunks=(chunk,),
                      maxshape=(None,) if len(values) == 0 else values.shape, fletcher32=True)

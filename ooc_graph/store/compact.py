"""Compaction: rewriting a store without the space of replaced and dropped results.

HDF5 reuses freed space only while a file stays open, so the ``results`` group counts the bytes a
write freed (``unused_bytes``), and a writer compacts the store when they pass a share of it.
Compaction copies the store under a shared lock (readers go on) and swaps the copy in only while
no process has the store open and nothing was written meanwhile.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat

import h5py

from ooc_graph import config
from ooc_graph._memory import human
from ooc_graph.errors import ParameterError, StoreError

from . import _format as F
from . import contents, stamps
from ._validate import check_store
from .locking import IO, detach_all, lock_timeout, retry_locked, signals_deferred
from .writer import AtomicFile, write_error

log = logging.getLogger("ooc_graph.store")

AUTO_COMPACT_ENV = "OOC_GRAPH_AUTO_COMPACT"  # overrides config store.auto_compact_fraction


def auto_compact_fraction() -> float:
    text = os.environ.get(AUTO_COMPACT_ENV, "").strip().lower()
    if not text:
        return config.get().store.auto_compact_fraction
    if text in ("0", "off", "no", "false"):
        return 0.0
    try:
        return max(0.0, float(text))
    except ValueError as err:
        raise ParameterError(f"${AUTO_COMPACT_ENV} must be a fraction such as 0.25, or off (got {text!r})") from err


def maybe_compact(graph, unused: int) -> None:
    """Compact the store when its unused bytes pass the threshold and nobody else has it open."""
    fraction = auto_compact_fraction()
    try:
        size = os.path.getsize(graph.path)
    except OSError:
        return
    if not fraction or unused < max(config.get().store.auto_compact_min_bytes, fraction * (size - unused)):
        return
    try:
        before, after = compact(graph, timeout=0, auto=True) or (0, 0)
        if before:
            log.info("compacted %s: %s -> %s", graph.path, human(before), human(after))
    except StoreError as err:
        log.info("%s not compacted now: %s", graph.path, err)


def _copy_store(src, out: AtomicFile, identity: str) -> None:
    with out.create() as dst:
        for key in src.attrs:
            dst.attrs.create(key, src.attrs[key], dtype=src.attrs.get_id(key).dtype)
        if F.STORE_ID not in dst.attrs:
            dst.attrs[F.STORE_ID] = identity
        for key in src:
            if key != F.RESULTS:
                src.copy(src[key], dst, key)
        results = dst.create_group(F.RESULTS)
        for key in src.get(F.RESULTS, ()):
            if key.startswith("."):
                continue
            try:
                src.copy(src[F.RESULTS][key], results, key)
            except (KeyError, OSError, RuntimeError, ValueError) as err:
                log.warning("%s: result %s is damaged and was left out of the compacted store (%s)",
                            src.filename, key, err)
                if key in results:
                    del results[key]
        dst.flush()  # the checks compare the datasets' sizes with the file's
        check_store(dst, out.tmp)


def compact(graph, *, timeout=None, auto=False):
    """Rewrite the store without unused space, keeping its identity: ``(bytes before, after)``.

    The copy is made under a shared lock (readers go on); the new file replaces the old one only
    while no process has the store open (HDF5's lock taken exclusively) and if nothing was written
    meanwhile. Others that open the store afterwards get the new file; this process's graphs
    reopen it on their next read."""
    timeout = lock_timeout(timeout)
    try:
        return _compact(graph, timeout, auto)
    except OSError as err:  # a lock error was retried and became StoreBusyError: this is another one
        raise StoreError(f"{graph.path}: not compacted: {err}") from err


def _open_to_read(path):
    with IO:
        return h5py.File(path, "r")


def _compact(graph, timeout, auto):
    import fcntl

    path = graph.path
    for _ in range(1 if auto else 3):
        src = retry_locked(lambda: _open_to_read(path), path=path, timeout=timeout, what="compaction")
        try:
            with IO:
                if F.store_identity(src.attrs) != graph.store_id:
                    raise StoreError(f"{path}: not compacted: the file was replaced by another graph")
                st = os.fstat(src.id.get_vfd_handle())
                unused = int(src[F.RESULTS].attrs.get(F.UNUSED_BYTES, 0)) if F.RESULTS in src else 0
                free = shutil.disk_usage(path.parent).free
                if free < st.st_size - unused + (64 << 20):
                    raise StoreError(f"{path}: not compacted: it needs about {human(st.st_size - unused)} of free "
                                     f"disk beside the store, {human(free)} is free")
                tmp = AtomicFile(path, mode=stat.S_IMODE(st.st_mode))  # the store keeps its permissions
                try:
                    _copy_store(src, tmp, graph.store_id)
                except BaseException as err:
                    tmp.discard()
                    if isinstance(err, (OSError, RuntimeError)):
                        reason = write_error(err, path.parent).strerror
                        raise StoreError(f"{path}: not compacted: writing the copy failed ({reason})") from err
                    raise
        finally:
            with IO:
                src.close()
        key, stamp = (st.st_dev, st.st_ino), (st.st_size, st.st_mtime_ns)

        def swap():
            with IO:
                detach_all(key)
                fd = os.open(path, os.O_RDONLY)
                try:
                    fst = os.fstat(fd)
                    if (fst.st_dev, fst.st_ino) != key:
                        return False
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no process has the store open
                    if (fst.st_size, fst.st_mtime_ns) != stamp:
                        return False
                    with signals_deferred():
                        tmp.commit()
                    return True
                finally:
                    os.close(fd)

        try:
            swapped = retry_locked(swap, path=path, timeout=timeout, what="compaction")
        except FileNotFoundError as err:
            tmp.discard()
            raise StoreError(f"{path}: not compacted: the store was removed meanwhile") from err
        except BaseException:
            tmp.discard()
            raise
        if swapped:  # the same graph data: a record that it passed the content checks carries over
            stamps.record_written(path, graph.store_id, contents.GROUPS, was=stamps.stamp_of(st, graph.store_id))
            return st.st_size, os.path.getsize(path)
        tmp.discard()  # written to meanwhile: copy again
    if auto:
        return None
    raise StoreError(f"{path}: not compacted: other processes kept writing to it")

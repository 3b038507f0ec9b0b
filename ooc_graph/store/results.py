"""Results in a store: saving (or, when the store cannot take them, a file beside it), loading,
dropping, importing.

A write opens the store for writing under HDF5's exclusive lock, waiting for other processes'
locks (:mod:`.locking`), checks that the file is still the graph the result was computed on, cleans
half-written results that a killed writer left, and writes under a temporary group name that is
moved into place when complete. A result that cannot go into its store (locked past the timeout,
read-only, replaced by another graph, disk full) is written to ``<store>.<name>.result.h5`` beside
it, with a warning naming that file: a finished computation is never thrown away.

HDF5 reuses freed space only while a file stays open, so the space of a replaced result is lost
until the store is rewritten; the ``results`` group counts those bytes and the store is compacted
(:mod:`.compact`: rewritten without them, atomically) when they pass a quarter of the file. Persistent free-space
tracking would reuse them in place, but its free-space list is stale after a writer is killed and
later writes then land on live objects (FORMAT.md has the measurement), which this project will
not trade for space.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

from ooc_graph._memory import human
from ooc_graph._records import record
from ooc_graph.errors import ParameterError, ResultNotStoredWarning, StoreBusyError, StoreError, shown

from . import _format as F
from . import contents, stamps, temporary
from ._structure import check_result_shapes, check_structure
from ._validate import json_attr, read_attrs
from .compact import maybe_compact
from .locking import (IO, detach_all, file_key, is_lock_error, lock_timeout, reopening_now, retry_locked,
                      signals_deferred)
from .writer import AtomicFile, DiskFull, WrittenFile, reserved, write_array, write_error

log = logging.getLogger("ooc_graph.store")

RESULT_FILE_FORMAT = "ooc_graph_result"
_JSON_ATTRS = ("parameters", "stats")
REPLACED = "the file was replaced by another graph since it was opened"


@record(frozen=True)
class SavedResult:
    """Where :meth:`Result.save` put a result: ``results/<name>`` of ``path``, which is the store
    (``in_store``) or, when the store could not take it, a file beside it; ``reason`` says why not."""

    name: str
    path: Path
    in_store: bool
    reason: str = ""

    def __str__(self):
        return f"{self.path}:results/{self.name}" if self.in_store else str(self.path)


class _NotWritable(Exception):
    """The store cannot take a write; the message says why, as a phrase."""


def check_result_name(name, error=ParameterError) -> str:
    """A result name: a non-empty string of printable characters (no control characters, which
    would reach a terminal as they are) without '/' or a leading '.' (names beginning with '.' are
    reserved for results being written). ``error``: the class raised."""
    if not isinstance(name, str) or not name or name.startswith(".") or "/" in name or not name.isprintable() \
            or len(name) > 200:
        raise error(f"result name must be a non-empty string of at most 200 printable characters, not starting "
                    f"with '.' and without '/' (got {name!r})")
    return name


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def encode_attrs(attrs: dict) -> dict:
    """Attributes as HDF5 stores them: dicts, lists and None as JSON, with a timestamp."""
    out = {**attrs, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    return {k: json.dumps(v, default=_jsonable) if isinstance(v, (dict, list, tuple)) or v is None else v
            for k, v in out.items()}


def read_group(grp, where: str) -> dict:
    """A stored result: its arrays, and ``attrs`` with ``parameters`` and ``stats`` as dicts."""
    try:
        out = {k: grp[k][()] for k in grp.keys()}
        attrs = read_attrs(grp, where)
    except (KeyError, OSError, RuntimeError, ValueError) as err:
        raise StoreError(f"{where}: result {shown(grp.name)} is damaged ({err}); drop it or compute it again") from err
    for k in _JSON_ATTRS:
        if isinstance(attrs.get(k), str):
            attrs[k] = json_attr(attrs, k, f"{where}: result {shown(grp.name)}")
    out["attrs"] = attrs
    return out


def _write_group(results, name: str, arrays: dict, attrs: dict) -> None:
    """``results/<name>``, written as ``results/.partial-<name>.<random>`` and moved into place
    (a name of its own, so that debris a write could not remove never blocks the next one)."""
    tmp = f"{F.PARTIAL_PREFIX}{name}.{os.urandom(4).hex()}"
    try:
        grp = results.create_group(tmp)
        for key, values in arrays.items():
            write_array(grp, key, values)
        for key, value in attrs.items():
            grp.attrs[key] = value
        if name in results:
            del results[name]
        results.move(tmp, name)
    except BaseException:
        try:
            if tmp in results:
                del results[tmp]
        except Exception:  # noqa: BLE001 - the next write removes it
            log.debug("could not remove %s after a failed write", tmp, exc_info=True)
        raise


def _clean_partials(results) -> None:
    """Remove results a killed or failed writer left half-written (names starting with '.'; no
    other writer can be at work, since this one holds the file alone)."""
    for key in [k for k in results.keys() if k.startswith(".")]:
        log.info("removing the half-written result %s from %s", key, results.file.filename)
        try:
            del results[key]
        except (KeyError, OSError, RuntimeError, ValueError) as err:  # damaged: compaction leaves it out
            log.warning("%s: the half-written result %s is damaged and stays until the store is compacted (%s)",
                        results.file.filename, key, err)


def _note_unused(h5, results) -> int:
    """Add the bytes this session freed and will not reuse to the ``unused_bytes`` count."""
    unused = int(results.attrs.get(F.UNUSED_BYTES, 0)) + int(h5.id.get_freespace())
    results.attrs[F.UNUSED_BYTES] = unused
    return unused


def _open_file(path, mode):
    return h5py.File(path, mode) if mode == "r" else WrittenFile(path, mode)


def _identity_at(path) -> str:
    try:
        with _open_file(path, "r") as h5:
            return F.store_identity(h5.attrs)
    except OSError as err:
        if is_lock_error(err):
            raise
        raise _NotWritable("the path now names something that is not a graph store") from err


def _open_for_writing(graph):
    """The store open for writing, checked to be ``graph``; this process's handles on the file are
    detached. Raises a lock error (to be retried) or :class:`_NotWritable`."""
    path = graph.path
    try:
        st = os.stat(path)
    except FileNotFoundError as err:
        raise _NotWritable("the store no longer exists") from err
    key = (st.st_dev, st.st_ino)
    if key != graph._key and _identity_at(path) != graph.store_id:
        raise _NotWritable(REPLACED)
    detach_all(key)
    try:
        h5 = _open_file(path, "r+")
    except OSError as err:
        if is_lock_error(err):
            raise
        if isinstance(err, PermissionError) or getattr(err, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise _NotWritable("the store is read-only") from err
        if "already open" in str(err):
            if reopening_now(path):  # a graph of this process between its open and its attach
                raise BlockingIOError(errno.EAGAIN, "a graph of this process is opening the store again") from err
            raise _NotWritable("another handle in this process (not an ooc_graph.Graph) has it open") from err
        raise _NotWritable(f"it cannot be opened for writing ({err})") from err
    try:
        if file_key(h5.id.get_vfd_handle()) != key:
            raise BlockingIOError(errno.EAGAIN, "the file was replaced while it was being opened")
        if F.store_identity(h5.attrs) != graph.store_id:
            raise _NotWritable(REPLACED)
    except BaseException:
        h5.close()
        raise
    return h5


@contextmanager
def writing(graph, timeout: float, what: str, nbytes: int = 0):
    """The store open for writing, this process's other handles on it detached and :data:`IO`
    held, room for ``nbytes`` of data set aside on its disk (:func:`.writer.reserved`: a full disk
    is :class:`_NotWritable` before anything is written); SIGINT/SIGTERM wait until the file is
    closed. A record that the store passed its content checks carries over to the file written
    (a result changes no graph data)."""
    def attempt():
        IO.acquire()
        try:
            return _open_for_writing(graph)
        except BaseException:
            IO.release()
            raise

    h5 = retry_locked(attempt, path=graph.path, timeout=timeout, what=what)
    try:
        with signals_deferred():
            was = stamps.stamp_of(os.fstat(h5.id.get_vfd_handle()), graph.store_id)
            try:
                with _room(h5, nbytes):
                    yield h5
            finally:
                h5.close()
            stamps.record_written(graph.path, graph.store_id, contents.GROUPS, was=was)
    finally:
        IO.release()


@contextmanager
def _room(h5, nbytes: int):
    try:
        with reserved(h5, nbytes):
            yield
    except DiskFull as err:
        raise _NotWritable(err.strerror) from err


def _check_room(folder: Path, nbytes: int) -> None:
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if free < nbytes + (nbytes >> 3) + (1 << 20):
        raise _NotWritable(f"disk full: the disk holding it has {human(free)} free ({free:,} bytes) and the result "
                           f"needs {human(nbytes)}")


def save(graph, name: str, arrays: dict, attrs: dict, *, timeout=None) -> SavedResult:
    """Store ``arrays`` and ``attrs`` as ``results/<name>`` of ``graph``'s file, replacing an older
    one; where the store cannot take them, in a file beside it (with a warning)."""
    check_result_name(name)
    n = graph.num_vertices
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    for key, values in arrays.items():
        if values.shape != (n,):
            raise ParameterError(f"result array {key!r} has shape {values.shape}; {graph.path} has {n} vertices")
    attrs = encode_attrs(attrs)
    timeout = lock_timeout(timeout)
    writing_started = False
    try:
        nbytes = sum(v.nbytes for v in arrays.values())
        _check_room(graph.path.parent, nbytes)
        with writing(graph, timeout, f"saving result {name!r}", nbytes) as h5:
            writing_started = True
            results = h5.require_group(F.RESULTS)
            _clean_partials(results)
            _write_group(results, name, arrays, attrs)
            unused = _note_unused(h5, results)
    except KeyboardInterrupt:
        if not writing_started:  # interrupted while waiting for the lock: keep the result anyway
            try:
                _fall_back(graph, name, arrays, attrs, "interrupted while waiting for the lock")
            except StoreError:
                pass
        raise
    except StoreBusyError:
        reason = f"another process kept it locked for {timeout:g} s"
    except _NotWritable as err:
        reason = str(err)
    except (OSError, RuntimeError, ValueError, KeyError) as err:
        reason = f"writing it failed ({write_error(err, graph.path).strerror})"
    else:
        maybe_compact(graph, unused)
        return SavedResult(name, graph.path, True)
    return _fall_back(graph, name, arrays, attrs, reason)


def _fall_back(graph, name, arrays, attrs, reason) -> SavedResult:
    where = write_beside(graph, name, arrays, attrs, reason)
    warnings.warn(f"{graph.path}: result {name!r} not saved in the store ({reason}); written to {where}",
                  ResultNotStoredWarning, stacklevel=5)
    return SavedResult(name, where, False, reason)


def write_beside(graph, name, arrays, attrs, reason) -> Path:
    """``results/<name>`` in ``<store>.<name>.result.h5`` beside the store (else in the current
    folder), written under a temporary name and renamed; an older such file is replaced."""
    errors = []
    for folder in _folders(graph):
        temporary.sweep(folder)
        target = folder / f"{graph.path.name}.{name}.result.h5"
        if target.exists() and not _is_result_file(target):
            target = folder / f"{graph.path.name}.{name}.{os.getpid()}-{time.time_ns()}.result.h5"
        out = AtomicFile(target)
        try:
            with out.create() as h5:
                h5.attrs.update({"format": RESULT_FILE_FORMAT, "format_version": F.FORMAT_VERSION,
                                 "store": str(graph.path.resolve()), F.STORE_ID: graph.store_id,
                                 "num_vertices": graph.num_vertices, "reason": reason})
                _write_group(h5.create_group(F.RESULTS), name, arrays, attrs)
            out.commit()
            return target
        except BaseException as err:
            out.discard()
            if not isinstance(err, (OSError, RuntimeError, ValueError)):
                raise
            errors.append(f"{folder}: {write_error(err, folder).strerror}")
    raise StoreError(f"{graph.path}: result {name!r} not saved in the store ({reason}), and no file could be "
                     f"written for it ({'; '.join(errors)})")


def _folders(graph) -> list[Path]:
    """Where result files of a store go: beside it, else the current folder."""
    return list(dict.fromkeys([graph.path.resolve().parent, Path.cwd().resolve()]))


def _is_result_file(path: Path) -> bool:
    try:
        with h5py.File(path, "r") as h5:
            return h5.attrs.get("format") == RESULT_FILE_FORMAT
    except OSError:
        return False


def read_result_file(path) -> dict:
    """The result in a file written beside a store: as :meth:`Graph.load_result`, plus ``name``,
    ``store`` (path of the store it was computed on), ``store_id`` and ``reason``. The file holds
    what FORMAT.md says and no more (checked as a store is at open), one result of a valid name,
    its arrays one value per vertex."""
    path = Path(path)
    try:
        with h5py.File(path, "r") as h5:
            meta = read_attrs(h5, path)
            if meta.get("format") != RESULT_FILE_FORMAT:
                raise StoreError(f"{path}: not an ooc_graph result file")
            shapes = check_structure(h5, path, result_file=True)
            names = list(h5.get(F.RESULTS, ()))
            if len(names) != 1:
                raise StoreError(f"{path}: an ooc_graph result file holds one result "
                                 f"(found {len(names)}: {shown(', '.join(names)[:80])})")
            name = check_result_name(names[0], _BadResultFile)
            n = meta.get("num_vertices")
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise StoreError(f"{path}: attribute num_vertices is {shown(repr(n)[:40])}, not a vertex count")
            check_result_shapes(shapes, n, path)
            out = read_group(h5[F.RESULTS][name], str(path))
    except _BadResultFile as err:
        raise StoreError(f"{path}: {err}") from err
    except OSError as err:
        raise StoreError(f"{path}: not a readable ooc_graph result file ({err})") from err
    return {**out, "name": name, **{k: meta.get(k) for k in ("store", F.STORE_ID, "reason", "num_vertices")}}


class _BadResultFile(Exception):
    """A result file's result name is not one a result may have."""


def fallback_results(graph) -> list[Path]:
    """Result files beside the store (or in the current folder) computed on this graph."""
    found = []
    for folder in _folders(graph):
        for path in sorted(folder.glob(f"{graph.path.name}.*.result.h5")):
            try:
                with h5py.File(path, "r") as h5:
                    if h5.attrs.get("format") == RESULT_FILE_FORMAT and h5.attrs.get(F.STORE_ID) == graph.store_id:
                        found.append(path)
            except OSError:
                continue
    return found


def import_result(graph, path, *, timeout=None) -> str:
    """Move a result file written beside the store into it (then delete the file); its name."""
    r = read_result_file(path)
    if r[F.STORE_ID] != graph.store_id or r["num_vertices"] != graph.num_vertices:
        raise ParameterError(f"{path} holds a result of another graph ({shown(str(r['store']))}), not of {graph.path}")
    arrays = {k: v for k, v in r.items() if isinstance(v, np.ndarray)}
    attrs = {k: json.dumps(v) if k in _JSON_ATTRS and not isinstance(v, str) else v for k, v in r["attrs"].items()}
    _modify(graph, lambda h5, results: _write_group(results, r["name"], arrays, attrs),
            f"importing result {r['name']!r}", timeout, sum(a.nbytes for a in arrays.values()))
    Path(path).unlink()
    return r["name"]


def drop(graph, name: str, *, timeout=None) -> None:
    """Delete ``results/<name>``; its space is reused once the store is compacted."""
    check_result_name(name)

    def delete(h5, results):
        if name not in results:
            stored = ", ".join(shown(k) for k in results if not k.startswith(".")) or "none"
            raise ParameterError(f"no result {name!r} in {graph.path} (stored: {stored})")
        try:
            del results[name]
        except (KeyError, OSError, RuntimeError, ValueError) as err:
            raise StoreError(f"{graph.path}: result {name!r} is damaged and cannot be dropped ({err}); "
                             "compact() leaves it out") from err

    _modify(graph, delete, f"dropping result {name!r}", timeout)


def _modify(graph, change, what, timeout, nbytes: int = 0):
    timeout = lock_timeout(timeout)
    try:
        with writing(graph, timeout, what, nbytes) as h5:
            results = h5.require_group(F.RESULTS)
            _clean_partials(results)
            change(h5, results)
            unused = _note_unused(h5, results)
    except _NotWritable as err:
        raise StoreError(f"{graph.path}: {what} failed: {err}") from err
    except (KeyError, OSError, RuntimeError, ValueError) as err:
        if isinstance(err, ParameterError):
            raise
        raise StoreError(f"{graph.path}: {what} failed ({write_error(err, graph.path).strerror})") from err
    maybe_compact(graph, unused)

"""Which stores passed the content checks of :mod:`.contents`, so that a store is checked once, not
on every open.

A record names a file by its identity and a stamp of its content as the file system keeps it:
``(device, inode, size, mtime, ctime, store_id)``. Any write changes mtime and ctime; a writer
can set mtime back (``utime``) but not ctime; a file replaced, copied or made anew is another
inode. Nothing is written into the store itself (a stamp there could be copied into a crafted
file along with it), so a read-only store is recorded too.

Records live in the process and, so that later processes skip the check, in a folder of the
user's cache: ``$OOC_GRAPH_CHECK_CACHE``, else ``$XDG_CACHE_HOME/ooc_graph/checked``, else
``~/.cache/ooc_graph/checked`` (``off``: in the process only), one small JSON file per inode. The
folder is used only where it belongs to this user and nobody else may write to it.

File times move in ticks of the kernel's coarse clock (1-10 ms), so a write in the same tick as
the write before it leaves the stamp as it was. A stamp is trusted only where it was taken at
least :data:`RACY_NS` after the file's ctime (git's "racily clean" entries); writers of large
stores wait out that moment before recording what they wrote (small ones are quick to check).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from pathlib import Path

log = logging.getLogger("ooc_graph.store")

CACHE_ENV = "OOC_GRAPH_CHECK_CACHE"
RACY_NS = 20_000_000  # a stamp taken this soon after the file's ctime is not trusted
WAIT_MIN_BYTES = 64 << 20  # writers of stores this large wait out the racy moment and record
_ENTRY_MAX = 1 << 16  # bytes of a record read at most

_MEMO: dict = {}  # (dev, ino) -> (stamp, taken_ns, groups) seen or made by this process
_LOCK = threading.Lock()


def stamp_of(st: os.stat_result, store_id: str) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, str(store_id))


def _folder() -> Path | None:
    text = os.environ.get(CACHE_ENV, "").strip()
    if text.lower() in ("off", "0", "no", "false"):
        return None
    if text:
        return Path(text)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ooc_graph" / "checked"


def _usable(folder: Path, create: bool) -> bool:
    """Whether the folder is there (made if ``create``), a real folder of this user that nobody
    else may write to."""
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _entry_path(folder: Path, key: tuple) -> Path:
    return folder / f"{key[0]:x}-{key[1]:x}.json"


def _load(folder: Path, key: tuple):
    import json  # here, as in record: a process that reads no store's data reads no record
    try:
        fd = os.open(_entry_path(folder, key), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = json.loads(f.read(_ENTRY_MAX))
        return tuple(data["stamp"]), int(data["taken_ns"]), frozenset(map(str, data["groups"]))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def _trusted_entry(entry, stamp: tuple) -> frozenset:
    if entry is None or entry[0] != stamp or entry[1] - stamp[4] < RACY_NS:
        return frozenset()
    return entry[2]


def trusted(stamp: tuple) -> frozenset:
    """The groups of checks that the file with this stamp is recorded to have passed."""
    key = stamp[:2]
    with _LOCK:
        groups = _trusted_entry(_MEMO.get(key), stamp)
    if groups:
        return groups
    folder = _folder()
    if folder is None or not _usable(folder, create=False):
        return frozenset()
    entry = _load(folder, key)
    groups = _trusted_entry(entry, stamp)
    if groups:
        with _LOCK:
            _MEMO[key] = entry
    return groups


def record(stamp: tuple, groups, taken_ns: int) -> None:
    """Record that the file with ``stamp`` (taken at ``taken_ns``, before its data was read)
    passed ``groups``; added to what a trusted record of the same stamp holds."""
    key = stamp[:2]
    groups = frozenset(groups) | trusted(stamp)
    entry = (stamp, int(taken_ns), groups)
    with _LOCK:
        _MEMO[key] = entry
    folder = _folder()
    if folder is None or not _usable(folder, create=True):
        return
    import json
    import tempfile  # here: a store read from its recorded checks makes no record
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".entry-")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"stamp": list(stamp), "taken_ns": entry[1], "groups": sorted(groups)}, f)
            os.replace(tmp, _entry_path(folder, key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as err:  # a full or read-only cache: the checks run again next time
        log.debug("could not record the checked store in %s: %s", folder, err)


def record_written(path, store_id: str, groups, *, was: tuple | None = None) -> None:
    """After this library wrote the file at ``path``: record that it holds ``groups`` (what it was
    built from was checked, or ``was``'s record carries over to a write that changed no graph
    data). Only for large files, after waiting out the racy moment (at most :data:`RACY_NS`)."""
    if was is not None:
        groups = frozenset(groups) & trusted(was)
    if not groups:
        return
    try:
        st = os.stat(path)
        if st.st_size < WAIT_MIN_BYTES:
            return
        time.sleep(min(RACY_NS, max(0, RACY_NS - (time.time_ns() - st.st_ctime_ns))) / 1e9)
        taken = time.time_ns()
        again = os.stat(path)
    except OSError:
        return
    if stamp_of(again, store_id) == stamp_of(st, store_id):
        record(stamp_of(st, store_id), groups, taken)

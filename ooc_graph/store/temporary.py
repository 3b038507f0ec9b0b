"""Temporary folders this project makes beside its outputs, and the sweep of those whose process died.

A build's scratch and a file being written (a store, a compacted copy, a result file) live in a
private folder ``.TARGET.KIND-<pid>-<random>`` beside their target, and the folder holds a marker
file (:data:`MARKER`) naming this project, the host, the pid and the target. A process that died
without removing its folder (SIGKILL, power loss) leaves it for :func:`sweep`, which a later
conversion or save into that folder runs: it removes a folder only where its marker says that
this project made it, on this host, for the target its name gives, and that process no longer runs.
Anything else — a user's folder or file that merely looks like ours, a marker that does not parse,
a folder of another host on a shared filesystem, leftovers of versions that made no marker — is
left alone: a stale folder costs disk, deleting someone else's costs their data.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger("ooc_graph.store")

MARKER = ".ooc_graph-temporary"
OWNER = "ooc_graph"
KINDS = ("build", "partial")
_NAME = re.compile(r"^\.(?P<target>.+)\.(?P<kind>build|partial)-(?P<pid>[0-9]+)-[A-Za-z0-9_]+$")
_MARKER_MAX = 4096  # bytes of a marker read at most


def make(folder, target: str, kind: str) -> Path:
    """A new private folder ``.TARGET.KIND-<pid>-<random>`` in ``folder``, marked as this process's."""
    path = Path(tempfile.mkdtemp(prefix=f".{target}.{kind}-{os.getpid()}-", dir=folder))
    try:
        _mark(path, target)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path


def name(folder, target: str, kind: str) -> Path:
    """A name :func:`make` could give, for a folder made later by :func:`ensure` (none is made now)."""
    return Path(folder) / f".{target}.{kind}-{os.getpid()}-{os.urandom(8).hex()}"


def ensure(path: Path) -> None:
    """Make the folder ``path`` (named by :func:`name`) with its marker, unless it is there."""
    m = _NAME.match(path.name)
    assert m is not None, path
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        return
    _mark(path, m.group("target"))


def remove(path: Path | None) -> None:
    """Remove a folder this process made (nothing if it is gone)."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def _mark(path: Path, target: str) -> None:
    fd = os.open(path / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"owner": OWNER, "host": _host(), "pid": os.getpid(), "target": target}, f)


def _host() -> str:
    import socket  # here, not at import: a process that only reads stores never needs it
    return socket.gethostname()


def _marker(path: str) -> dict | None:
    """The marker inside folder ``path``, or None where there is none this project could have written."""
    try:
        fd = os.open(os.path.join(path, MARKER), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = json.loads(f.read(_MARKER_MAX + 1)[:_MARKER_MAX])
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _ours(entry: os.DirEntry) -> int | None:
    """The pid of the process that made ``entry``, where this project made it on this host."""
    m = _NAME.match(entry.name)
    if m is None:
        return None
    try:
        if not entry.is_dir(follow_symlinks=False):
            return None
    except OSError:
        return None
    mark = _marker(entry.path)
    pid = int(m.group("pid"))
    if mark is None or mark.get("owner") != OWNER or mark.get("host") != _host() \
            or mark.get("pid") != pid or mark.get("target") != m.group("target"):
        return None
    return pid


def alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError as err:  # exists, not ours to signal (EPERM)
        return err.errno != errno.ESRCH
    return True


def sweep(folder) -> list[Path]:
    """Remove the temporary folders in ``folder`` that this project made and whose process is
    gone; returns what was removed. Nothing else is touched (see the module's docstring)."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        pid = _ours(entry)
        if pid is None or alive(pid):
            continue
        try:
            shutil.rmtree(entry.path)
        except FileNotFoundError:  # another process removed it first
            continue
        except OSError as err:
            log.warning("could not remove the stale temporary folder %s: %s", entry.path, err)
            continue
        removed.append(Path(entry.path))
        log.info("removed the stale temporary folder %s of process %d", entry.path, pid)
    return removed

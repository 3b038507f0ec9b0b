"""Sharing a store between threads and processes.

HDF5 (>= 1.10) locks a file for as long as it is open: readers share the lock, a writer holds it
alone, and an open that conflicts fails at once (``BlockingIOError``). Everything here that opens a
store goes through :func:`retry_locked`, which retries such an open until a timeout and logs once
(at INFO) that it is waiting. In one process, HDF5 refuses to open a file for writing while any
handle has it open for reading, so every :class:`~ooc_graph.store.Graph` registers its open file
here; a write first detaches the process's handles on that file (they reopen lazily, on their next
read), and every access to a store holds :data:`IO`, so no reader thread is mid-read meanwhile.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import signal
import threading
import time
import weakref
from contextlib import contextmanager

from ooc_graph.errors import ParameterError, StoreBusyError

log = logging.getLogger("ooc_graph.store")

LOCK_TIMEOUT_ENV = "OOC_GRAPH_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 60.0  # seconds a read or a save waits for another process's lock

IO = threading.RLock()
"""Held by every access of this process to a store's HDF5 handle, and across a whole write."""

_OPEN: dict[tuple, weakref.WeakSet] = {}  # (st_dev, st_ino) -> graphs holding a handle on that file


def lock_timeout(timeout=None) -> float:
    """Seconds to wait for another process's lock: ``timeout``, else ``$OOC_GRAPH_LOCK_TIMEOUT``,
    else 60. ``0`` tries once; ``inf`` waits for ever."""
    where = "lock_timeout"
    if timeout is None:
        text = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
        if not text:
            return DEFAULT_LOCK_TIMEOUT
        where = f"${LOCK_TIMEOUT_ENV}"
        try:
            timeout = float(text)
        except ValueError as err:
            raise ParameterError(f"{where} must be a number of seconds (got {text!r})") from err
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) and not hasattr(timeout, "__float__"):
        raise ParameterError(f"{where} must be a number of seconds (got {timeout!r})")
    value = float(timeout)
    if math.isnan(value) or value < 0:
        raise ParameterError(f"{where} must be a number of seconds >= 0 (got {timeout!r})")
    return value


def is_lock_error(err: BaseException) -> bool:
    """Whether an error from opening a file means another process holds its lock."""
    return (isinstance(err, BlockingIOError) or getattr(err, "errno", None) in (errno.EAGAIN, errno.EWOULDBLOCK)
            or "unable to lock file" in str(err))


def retry_locked(attempt, *, path, timeout: float, what: str):
    """``attempt()`` until it does not fail on a lock another process holds; :data:`IO` is not
    held between attempts. Raises :class:`StoreBusyError` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay, waiting = 0.005, False
    while True:
        try:
            return attempt()
        except OSError as err:
            if not is_lock_error(err):
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreBusyError(
                    f"{path}: another process kept the store locked for {timeout:g} s, so it could not be "
                    f"opened for {what} (wait longer with ${LOCK_TIMEOUT_ENV} or lock_timeout=)") from err
            if not waiting:
                waiting = True
                log.info("%s is locked by another process; waiting up to %g s to open it for %s", path, timeout, what)
            time.sleep(min(delay, left))
            delay = min(2 * delay, 0.25)


def file_key(fd: int) -> tuple:
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


_REOPENING: dict = {}  # store path -> this process's graphs opening it again (outside IO)


@contextmanager
def reopening(path):
    """Marks a graph of this process opening ``path`` again (the open waits outside :data:`IO`): a
    save that finds the file already open meanwhile waits and tries again rather than taking the
    handle for another program's (:func:`reopening_now`)."""
    key = str(path)
    with IO:
        _REOPENING[key] = _REOPENING.get(key, 0) + 1
    try:
        yield
    finally:
        with IO:
            _REOPENING[key] -= 1
            if not _REOPENING[key]:
                del _REOPENING[key]


def reopening_now(path) -> bool:
    with IO:
        return str(path) in _REOPENING


def register(graph, key) -> None:
    with IO:
        _OPEN.setdefault(key, weakref.WeakSet()).add(graph)


def unregister(graph, key) -> None:
    with IO:
        graphs = _OPEN.get(key)
        if graphs is not None:
            graphs.discard(graph)
            if not graphs:
                del _OPEN[key]


def detach_all(key) -> None:
    """Close every handle this process holds on the file ``key`` (each graph reopens on its next read)."""
    with IO:
        for graph in list(_OPEN.get(key, ())):
            graph._detach()


@contextmanager
def signals_deferred():
    """SIGINT and SIGTERM that arrive inside the block are delivered when it ends (main thread
    only), so a write is finished, or cleaned up, before the process stops."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught, previous = [], {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler in (signal.SIG_IGN, None):
            continue
        previous[sig] = handler
        signal.signal(sig, lambda num, frame: caught.append(num))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)

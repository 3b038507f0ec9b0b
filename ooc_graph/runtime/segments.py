"""Shared-memory segments that carry results from the ranks of a job to a client on their host,
kept and used again from call to call.

A distributed call's result arrays are files in ``/dev/shm``: each rank writes its own vertices
into them and the client maps them, so nothing is sent. Fresh shared memory is slow to write —
every 4 KiB page is zeroed and mapped on first touch, about 2.4 GB/s a thread, so a two-GPU BFS of
R-MAT-24 spent 29–32 ms of its 81 ms on each rank's 134 MB of results (benchmarks/RESULTS.md). So
the segments outlive the call: when the user drops a result, its segments go back to the
client's :class:`Pool`, the next job is offered them, and every worker keeps its mapping of a
segment — page-locked with CUDA on a GPU worker, so the result leaves the device by DMA straight
into the client's memory — for as long as the segment exists.

Segments are named ``ooc-graph-seg-<client pid>-<client key>-<job id>-<i>``: whoever finds one
whose client process has gone removes it. A client removes every segment named for it when it
closes its pool (at exit, and when the local clusters it started are shut down, which the command
line's SIGTERM path does too); each rank sweeps away the segments of clients that have died when
it finishes a job (a client killed mid-job leaves its job's segments to its ranks), and so does
every new pool. Only a client killed at once together with the workers it started (SIGKILL of a
process with its own local cluster) leaves them until the next pool or job on that host.
"""

from __future__ import annotations

import atexit
import glob
import mmap
import os
import threading
import weakref
from pathlib import Path

import numpy as np

from ooc_graph._memory import usable_memory
from ooc_graph._records import record

SHARED_DIR = Path("/dev/shm")
PREFIX = "ooc-graph-seg"
# Free segments a client keeps for later jobs (the rest are removed when dropped).
POOL_SEGMENTS = 64
POOL_BYTES = max(1 << 30, usable_memory() // 8)  # of RAM, or of the container's limit
# A segment offered for a result at most this many times its size is used, not a new one.
FIT = 2
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


@record(frozen=True)
class SharedArray:
    """A result array the ranks left in a segment for a client on the same host."""

    path: str
    dtype: str
    shape: tuple

    def load(self) -> np.ndarray:
        """The array, mapped (the client's pool takes the segment back once it is dropped)."""
        return pool().load(self)


def _map(path: str, populate: bool = False):
    """``(mmap, inode)`` of a segment; ``populate``: its pages mapped up front (for a segment
    whose pages exist: a fresh one is faulted in by several threads, engine/hostbuf.py)."""
    fd = os.open(path, os.O_RDWR)
    try:
        st = os.fstat(fd)
        mm = mmap.mmap(fd, st.st_size, mmap.MAP_SHARED | (_POPULATE if populate else 0),
                       mmap.PROT_READ | mmap.PROT_WRITE)
        return mm, st.st_ino
    finally:
        os.close(fd)


def _view(mm, dtype, shape) -> np.ndarray:
    array = np.frombuffer(mm, dtype=np.dtype(dtype), count=int(np.prod(shape)))
    return array if array.shape == tuple(shape) else array.reshape(shape)


def mapped(array) -> bool:
    """Whether ``array`` lies in a mapped segment (as a client's results on the ranks' host do)."""
    while isinstance(array, np.ndarray):
        array = array.base
    return isinstance(array.obj if isinstance(array, memoryview) else array, mmap.mmap)


# -- the client ---------------------------------------------------------------------------------
class Pool:
    """This process's segments: ``free`` ones (path -> bytes) offered to the next job, and the
    ones its results are mapped from."""

    def __init__(self):
        self.key = f"{os.getpid()}-{os.urandom(4).hex()}"
        self.free: dict = {}
        self._owned: set = set()
        self._lock = threading.Lock()
        _remove_orphans()
        atexit.register(self.close)

    def offer(self) -> list:
        """Every free segment, for one job (``[(path, bytes)]``, smallest first); they are the
        job's until :meth:`settle`."""
        with self._lock:
            offered = sorted(self.free.items(), key=lambda kv: (kv[1], kv[0]))
            self.free.clear()
            return offered

    def settle(self, offered: list, job_id: str, used=(), made=None) -> None:
        """After a job: the segments it was offered or made that no result uses become free
        again. ``made``: the segments made for it, as its ranks report them; None: looked for by
        name (``-<job id>-``, after a failure: a listing of the folder, ~0.7 ms a call)."""
        used = set(used)
        made = glob.glob(str(SHARED_DIR / f"{PREFIX}-*-{job_id}-*")) if made is None else list(made)
        with self._lock:
            for path in [p for p, _ in offered] + made:
                self._owned.add(path)
                if path not in used:
                    self._release(path)

    def load(self, shared: SharedArray) -> np.ndarray:
        mm, _ = _map(shared.path)
        with self._lock:
            self._owned.add(shared.path)
        weakref.finalize(mm, self._give_back, shared.path)
        return _view(mm, shared.dtype, shared.shape)

    def _give_back(self, path: str) -> None:
        with self._lock:
            self._release(path)

    def _release(self, path: str) -> None:
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            self._owned.discard(path)
            return
        if len(self.free) < POOL_SEGMENTS and sum(self.free.values()) + size <= POOL_BYTES:
            self.free[path] = size
        else:
            _unlink(path)
            self._owned.discard(path)

    def close(self) -> None:
        """Remove every segment of this client, including those ranks made for a job still running
        (results still mapped keep their memory)."""
        with self._lock:
            for path in self._owned | set(self.free) | set(glob.glob(str(SHARED_DIR / f"{PREFIX}-{self.key}-*"))):
                _unlink(path)
            self._owned.clear()
            self.free.clear()


_POOL = None
_POOL_LOCK = threading.Lock()


def close_pool() -> None:
    """Remove this process's segments, if it made a pool (after its local clusters have stopped)."""
    with _POOL_LOCK:
        current = _POOL
    if current is not None and current.key.split("-")[0] == str(os.getpid()):
        current.close()


def pool() -> Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.key.split("-")[0] != str(os.getpid()):  # a forked child: its own
            _POOL = Pool()
        return _POOL


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _remove_orphans() -> None:
    """Remove the segments of clients on this host that have died."""
    alive: dict = {}
    for path in glob.glob(str(SHARED_DIR / f"{PREFIX}-*")):
        try:
            pid = int(Path(path).name[len(PREFIX) + 1:].split("-")[0])
        except ValueError:
            continue
        if pid not in alive:
            alive[pid] = _alive(pid)
        if not alive[pid]:
            _unlink(path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, not ours to signal
        return True
    return True


def owned_path(path) -> str:
    """``path`` if it names a segment (in :data:`SHARED_DIR`, named as segments are), else
    ``ValueError``: a path that came over a connection is mapped only if it is one."""
    p = Path(str(path))
    if p.parent != SHARED_DIR or not p.name.startswith(PREFIX + "-") or p.name in (".", ".."):
        raise ValueError(f"{str(path)!r} is not a result segment in {SHARED_DIR}")
    return str(p)


# -- the ranks ----------------------------------------------------------------------------------
_MAPS: dict = {}  # path -> [mmap, inode, page-locked pointer or None]
_MAPS_LOCK = threading.Lock()


def _mapping(path: str, lock_pages: bool, fresh: bool):
    """This worker's mapping of a segment (made once, kept while the segment exists). A segment
    is page-locked when it is used again: locking pins every page, which for a ``fresh`` one
    would mean faulting it in on one thread (measured slower than the pool it replaces)."""
    with _MAPS_LOCK:
        entry = _MAPS.get(path)
        if entry is not None and _gone(path, entry):
            _drop(path)
            entry = None
        if entry is None:
            mm, inode = _map(path, populate=not fresh)
            entry = _MAPS[path] = [mm, inode, None]
        if lock_pages and not fresh and entry[2] is None:
            entry[2] = _page_lock(entry[0])
        return entry[0]


def _gone(path: str, entry) -> bool:
    """Whether a kept mapping's segment has been removed (or replaced by another file)."""
    try:
        return os.stat(path).st_ino != entry[1]
    except FileNotFoundError:
        return True


def _page_lock(mm):
    """Register a mapping with CUDA (DMA from the device straight into it); None if refused."""
    try:
        import cupy as cp
        ptr = np.frombuffer(mm, np.uint8).ctypes.data
        cp.cuda.runtime.hostRegister(ptr, len(mm), 0)
        return ptr
    except Exception:
        return None


def _drop(path: str) -> None:
    mm, _, ptr = _MAPS.pop(path)
    if ptr is not None:
        try:
            import cupy as cp
            cp.cuda.runtime.hostUnregister(ptr)
        except Exception:
            pass
    try:
        mm.close()
    except BufferError:  # an array still uses it: it goes when that does
        pass


def prune() -> None:
    """Forget the mappings of segments that are gone (their clients dropped or removed them)."""
    with _MAPS_LOCK:
        for path in [p for p, e in _MAPS.items() if _gone(p, e)]:
            _drop(path)


def sweep() -> None:
    """A rank's end of a job: remove the segments of clients that have died (this job's, killed
    while it ran, among them), and forget their mappings (a listing of the folder, tens of
    microseconds)."""
    _remove_orphans()
    prune()


def allocator(job_id: str, client_key: str, offered: list, lock_pages: bool):
    """``(empty, find, new)`` for one rank: ``empty(shape, dtype)`` gives the job's next result
    array in a segment — every rank of the job calls it in the same order and gets the same
    segment (the smallest offered one that fits, else a new one whoever comes first creates) —,
    ``find(array)`` the :class:`SharedArray` an array handed out that way is, or None, and
    ``new()`` the paths of the segments made for the job (the same on every rank)."""
    free = list(offered)
    made, count, created = {}, [0], []

    def empty(shape, dtype):
        shape, dtype = tuple(int(s) for s in shape), np.dtype(dtype)
        need = max(int(np.prod(shape)) * dtype.itemsize, 1)
        fit = next((i for i, (_, size) in enumerate(free) if need <= size <= FIT * need + (1 << 20)), None)
        fresh = fit is None
        if fit is not None:
            path = free.pop(fit)[0]
        else:
            path = str(SHARED_DIR / f"{PREFIX}-{client_key}-{job_id}-{count[0]}")
            created.append(path)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if os.fstat(fd).st_size < need:
                    os.ftruncate(fd, need)
            finally:
                os.close(fd)
        count[0] += 1
        array = _view(_mapping(path, lock_pages, fresh), dtype, shape)
        made[array.ctypes.data] = SharedArray(path, dtype.str, shape)
        return array

    def find(array):
        if not isinstance(array, np.ndarray) or not array.size:
            return None
        shared = made.get(array.ctypes.data)
        return shared if shared is not None and tuple(array.shape) == shared.shape else None
    return empty, find, lambda: list(created)


def remove_made(job_id: str) -> None:
    """Remove the segments made for a job that failed (by any rank, or the client)."""
    for path in glob.glob(str(SHARED_DIR / f"{PREFIX}-*-{job_id}-*")):
        _unlink(path)

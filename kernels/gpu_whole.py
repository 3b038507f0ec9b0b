"""Whole traversals on one GPU (``gpu_whole.cu``): a BFS or a min-propagation in one cooperative
kernel launch, its levels separated by grid-wide barriers instead of looks from the host. The same
functions and contracts as the compiled CPU kernels' (:func:`.cpu.bfs_tree`, :func:`.cpu.traverse_min`),
which the engine calls where a whole traversal applies (``Traversals._whole_csr``).

The CSR arrays may be in device memory or in page-locked host memory mapped into the device
(:func:`.gpu_transfer.mapped`): the kernels read rows a group of lanes at a time either way.
"""

from __future__ import annotations

import logging
from pathlib import Path

import cupy as cp
import numpy as np

from ooc_graph import config

from .gpu_module import _THREADS, _WEIGHT
from .gpu_transfer import is_mapped

log = logging.getLogger("ooc_graph.kernels")

_C = {"size0": 0, "size1": 1, "iter": 2, "arcs": 3, "next_arcs": 4, "heavy": 5, "medium": 6, "bottom": 7,
      "bound": 8, "min_far": 9, "start": 10}
_WORDS = 16
# Iterations whose end time, kind and frontier size the kernels log (OOC_LOG_WORDS words each).
_LOG_CAP = 4096
_LOG_WORDS = 3
KINDS = ("top-down", "bottom-up", "near", "bucket")  # OOC_KIND_* of gpu_whole.cu
_INF_BITS = np.float64(np.inf).view(np.uint64)
_failed: set = set()  # devices where a cooperative launch failed: the engine's loop runs there


_PLAIN = ("whole_bfs",)
_TEMPLATES = ("whole_nearfar",)


@cp.memoize(for_each_device=True)
def _module():
    code = Path(__file__).with_name("gpu_whole.cu").read_text()
    names = [f"ooc_graph_{k}" for k in _PLAIN] + [f"ooc_graph_{k}<{t}>" for k in _TEMPLATES for t in _WEIGHT.values()]
    return cp.RawModule(code=code, options=("-std=c++17",), name_expressions=names,
                        enable_cooperative_groups=True)


@cp.memoize(for_each_device=True)
def _blocks(name: str) -> int:
    """Blocks of ``_THREADS`` threads that are all resident at once: a cooperative launch's grid
    (from the kernel's registers and shared memory against one multiprocessor's)."""
    kernel = _module().get_function(name)
    attrs = cp.cuda.Device().attributes
    regs = max(1, int(kernel.num_regs))
    per_warp = -(-regs * 32 // 256) * 256  # registers are allocated to warps 256 at a time
    by_regs = attrs["MaxRegistersPerMultiprocessor"] // (per_warp * (_THREADS // 32))
    by_threads = attrs["MaxThreadsPerMultiProcessor"] // _THREADS
    by_shared = attrs["MaxSharedMemoryPerMultiprocessor"] // max(1, int(kernel.shared_size_bytes) + 1024)
    per_sm = max(1, min(by_regs, by_threads, by_shared, 32))
    return per_sm * attrs["MultiProcessorCount"]


def available() -> bool:
    """Whether whole traversals may run on this device (cooperative launches; none failed here)."""
    return cp.cuda.runtime.getDevice() not in _failed


def _launch(name: str, args) -> bool:
    """A cooperative launch of ``name`` over the largest resident grid; False where it failed
    (the device is then left to the engine's loop)."""
    kernel = _module().get_function(name)
    blocks = _blocks(name)
    while True:
        try:
            kernel((blocks,), (_THREADS,), args)
            return True
        except cp.cuda.driver.CUDADriverError as err:
            if "COOPERATIVE_LAUNCH_TOO_LARGE" in str(err) and blocks > 1:
                blocks //= 2
                continue
            log.warning("whole traversal kernel %s could not be launched (%s); the level loop runs instead",
                        name, err)
            _failed.add(cp.cuda.runtime.getDevice())
            return False


def _ids(indices):
    return indices if indices.dtype == np.int32 else None


def _ctl(**values) -> cp.ndarray:
    host = np.zeros(_WORDS + _LOG_WORDS * _LOG_CAP, np.uint64)
    for k, v in values.items():
        host[_C[k]] = v
    return cp.asarray(host)


def _log(out: np.ndarray, iterations: int, rows_from) -> list:
    """The kernel's log, a dict per logged iteration: ``strategy`` (its kind and where the rows
    were read: ``resident`` in device memory or ``zero-copy`` from host memory), ``frontier``
    (vertices) and ``seconds``."""
    rows = out[_WORDS:_WORDS + _LOG_WORDS * min(iterations, _LOG_CAP)].reshape(-1, _LOG_WORDS)
    ends = rows[:, 0].astype(np.int64)
    starts = np.concatenate([[np.int64(out[_C["start"]])], ends[:-1]])
    where = "zero-copy" if is_mapped(rows_from) else "resident"
    return [{"strategy": f"{KINDS[int(k)]}/{where}", "frontier": int(size), "seconds": max(0, int(e - b)) / 1e9}
            for (e, k, size), b in zip(rows, starts)]


def _arcs_per_thread(array) -> int:
    """Rows of at most this many arcs are taken by one thread: none where they are read from
    host memory (a warp reads whole lines there)."""
    return 0 if is_mapped(array) else config.get().gpu.thread_arcs


def _bits(n: int) -> int:
    return (n + 31) // 32


def bfs_tree(indptr, indices, source: int, state, in_csr=None, fresh: bool = True, int_unreachable=None):
    """As :func:`.cpu.bfs_tree`: a unit-increment BFS from ``source`` over a fresh ``state`` (inf
    everywhere, 0 at ``source``; not checked here, ``fresh`` or not; ``int_unreachable`` is not
    used: the levels stay float64), direction-optimising where ``in_csr()`` gives the in-CSR
    (called at most once); ``(levels, arcs looked at, parent, log)`` with parent the smallest
    vertex one level above (-1 at the root and where unreached) and the kernel's log of its levels
    (:func:`_log`), or None where this does not apply (ids of 2**31 or more, or no cooperative
    launch here)."""
    n = int(state.size)
    if not available() or _ids(indices) is None or n >= 2**31 or not 0 <= source < n:
        return None
    cfg = config.get()
    csr_in = in_csr() if (in_csr is not None and cfg.traversal.bottom_up) else None
    if csr_in is not None and _ids(csr_in[1]) is None:
        csr_in = None
    in_ip, in_ix = csr_in if csr_in is not None else (indptr, indices)
    parent = cp.empty(n, dtype=np.int64)
    q0, q1, medium = (cp.empty(n, np.int32) for _ in range(3))
    bitmaps = cp.empty(3 * _bits(n), np.uint32)
    visited, front0, front1 = bitmaps[:_bits(n)], bitmaps[_bits(n):2 * _bits(n)], bitmaps[2 * _bits(n):]
    heavy, heavy_off = _heavy_lists(indices)
    ctl = cp.empty(_WORDS + _LOG_WORDS * _LOG_CAP, np.uint64)  # the kernel sets it up
    group = 32 if is_mapped(in_ix) else cfg.gpu.bottom_up_group
    if not _launch("ooc_graph_whole_bfs", (
            indptr, indices, in_ip, in_ix, np.int32(csr_in is not None), np.int64(n), np.int32(source),
            state.view(cp.uint64), parent, q0, q1, visited, front0, front1, medium, heavy, heavy_off, ctl,
            np.int64(indices.size), np.int64(cfg.traversal.bottom_up_alpha), np.int64(cfg.traversal.bottom_up_beta),
            np.int64(_arcs_per_thread(indices)), np.int64(cfg.gpu.heavy_arcs), np.int32(group), np.int64(_LOG_CAP))):
        return None
    out = _read(ctl)  # sync
    return int(out[_C["iter"]]), int(out[_C["arcs"]]), parent, _log(out, int(out[_C["iter"]]), in_ix)


def _heavy_lists(indices):
    """Room for the frontier's heavy vertices (config gpu.heavy_arcs: at most one per that many
    arcs) and the sums of their rows' lengths."""
    most = int(indices.size) // config.get().gpu.heavy_arcs + 1
    return cp.empty(most, np.int32), cp.empty(most + 1, np.int64)


def _read(ctl) -> np.ndarray:
    """The control words and as much of the log as the iterations run filled (one copy where they
    were few)."""
    first = _WORDS + _LOG_WORDS * 64
    out = ctl[:first].get()
    iterations = min(int(out[_C["iter"]]), _LOG_CAP)
    if _WORDS + _LOG_WORDS * iterations > first:
        out = ctl[:_WORDS + _LOG_WORDS * iterations].get()
    return out


def traverse_min(indptr, indices, weights, frontier, state, plus, parent=None, delta=None):
    """As :func:`.cpu.traverse_min`: ``state[v] = min(state[v], state[u] + w)`` to a fixed point
    from the vertices of ``frontier`` (``w`` the arc weight, or ``plus``; none negative), by
    near-far buckets of width ``delta`` (the engine's, from the store's weights; None: one bucket, a
    queue-driven Bellman-Ford); ``(iterations, arcs relaxed, log)``, or None where this does not apply.
    ``parent`` is not built here (:func:`tree_parents` says so; the engine finds the tree after)."""
    n = int(state.size)
    if not available() or _ids(indices) is None or n >= 2**31:
        return None
    frontier = cp.asarray(frontier, dtype=np.int32)
    nf = int(frontier.size)
    if nf == 0:
        return 0, 0
    w = weights if (plus is None and weights is not None) else None
    if plus is None and w is None:
        return None
    wt = _WEIGHT[np.dtype(w.dtype)] if w is not None else "double"
    w_arg = w if w is not None else cp.zeros(1, np.float64)
    delta = np.inf if delta is None else float(delta)
    start = float(state[frontier].min().get())  # sync: one look before the launch
    q0, q1 = cp.empty(max(n, 1), np.int32), cp.empty(max(n, 1), np.int32)
    q0[:nf] = frontier
    stamp = cp.full(n, -1, dtype=np.int32)
    far = cp.zeros(n, dtype=np.uint32)
    far0, far1 = cp.empty(n, np.int32), cp.empty(n, np.int32)
    medium = cp.empty(n, np.int32)
    heavy, heavy_off = _heavy_lists(indices)
    ctl = _ctl(size0=nf, bound=np.float64(start + delta).view(np.uint64), min_far=np.uint64(2**64 - 1))
    if not _launch(f"ooc_graph_whole_nearfar<{wt}>", (
            indptr, indices, w_arg, np.int32(w is not None), np.float64(0.0 if plus is None else plus), np.int64(n),
            state.view(cp.uint64), q0, q1, stamp, far, far0, far1, medium, heavy, heavy_off, ctl, np.float64(delta),
            np.int64(_arcs_per_thread(indices)), np.int64(config.get().gpu.heavy_arcs), np.int64(_LOG_CAP))):
        return None
    out = _read(ctl)  # sync
    return int(out[_C["iter"]]), int(out[_C["arcs"]]), _log(out, int(out[_C["iter"]]), indices)


def scratch_bytes(num_vertices: int, num_arcs: int, bfs: bool) -> int:
    """Device bytes a whole traversal allocates beside its state and result (queues, lists, flags,
    bitmaps), which the engine takes from its chunk cache for the call: a BFS's three int32 lists
    and three bitmaps; a min-propagation's lists, stamps, far flags and far lists."""
    n = num_vertices
    heavy = 12 * (num_arcs // config.get().gpu.heavy_arcs + 2)
    return heavy + (_WORDS + _LOG_WORDS * _LOG_CAP) * 8 + (12 * n + 12 * _bits(n) if bfs else 28 * n)


def tree_parents(indptr, indices, weights, dist, plus, root: int, parent=None):
    """The whole traversals here build no shortest-path tree beside BFS's: None (the engine finds
    it from the in-CSR, ``csr_parents``)."""
    return None


def whole_traversals() -> bool:
    """Whether whole traversals may run on this device (:func:`available`)."""
    return available()

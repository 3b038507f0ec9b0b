"""Sorting one bucket of arcs by (row, column): on the CPU with NumPy, or on the GPU with CuPy.

Both pack an arc into one int64 key, ``(row - lo) * n + column``, sort it (a stable argsort where
weights ride along, so repeated arcs keep their input order), merge repeats keeping the smallest
weight, and decode the keys into the store's id type. The GPU sorts with Thrust (CuPy) and merges
weights on the host with the same ``numpy.minimum.reduceat``; a minimum does not depend on the
order of the repeats, so the two give the same arrays bit for bit (``tests/test_ingest_paths.py``,
and its GPU test). Weighted repeats that are kept (``dedupe=False``) are sorted on the CPU, whose
stable order the store then keeps. One bucket at a time uses the GPU; a bucket that does not fit
its free memory is sorted on the CPU.
"""

from __future__ import annotations

import threading

import numpy as np

from ooc_graph import config
from ooc_graph.errors import DeviceError, choice
from ooc_graph.registry import DEVICES
from ooc_graph.partitioning.cel import sort_arcs

# Device bytes per arc while a bucket is sorted: ids uploaded (8), the key and Thrust's buffer
# (16), the order and the weights moved by it (8 + 16), the decoded ids (8), the repeats mask.
GPU_BYTES_PER_ARC = 64
_GPU = threading.Lock()


def gpu_available() -> bool:
    from ooc_graph.engine.backend import gpu_available
    return gpu_available()


def check_device(device: str) -> bool:
    """Whether buckets go to the GPU for ``device`` (``auto``: when CuPy sees one)."""
    if device not in DEVICES:
        raise choice("device", device, DEVICES)
    if device == "cpu":
        return False
    found = gpu_available()
    if device == "gpu" and not found:
        raise DeviceError("device='gpu' was requested for sorting but CuPy finds no CUDA device "
                          "(use device='cpu' or 'auto')")
    return found


def sort_bucket(arcs: list, lo: int, hi: int, n: int, *, dedupe: bool, id_dtype, gpu: bool = False):
    """``(rows, cols, w)`` of the arcs ``[rows, cols, w]`` (rows in ``[lo, hi)``) sorted by
    (row, column) in ``id_dtype``, repeats merged keeping the smallest weight; and where it ran
    ("cpu"/"gpu"). ``arcs`` is emptied: the input arrays are freed as soon as they are used (the
    caller must hold no other reference), which keeps the peak at the budget's figure."""
    n = max(int(n), 1)
    if max(hi - lo, 1) * n >= 2**63:  # no int64 key: lexsort (more memory; n > 3e9 only)
        rows, cols, w = arcs
        arcs.clear()
        rows, cols, w = sort_arcs(rows.astype(np.int64), cols.astype(np.int64), w, n, dedupe=dedupe)
        return rows.astype(id_dtype), cols.astype(id_dtype), w, "cpu"
    # Weighted repeats kept as they are (dedupe off) need a stable order: the CPU's, for certain.
    if gpu and len(arcs[0]) >= config.get().ingest.gpu_sort_min_arcs and (arcs[2] is None or dedupe):
        with _GPU:
            if _fits_device(len(arcs[0])):
                return (*_sort_gpu(arcs, lo, n, dedupe, id_dtype), "gpu")
    return (*_sort_cpu(arcs, lo, n, dedupe, id_dtype), "cpu")


def _sort_cpu(arcs, lo, n, dedupe, id_dtype):
    rows, cols, w = arcs
    arcs.clear()
    key = rows.astype(np.int64)
    del rows
    key -= lo
    key *= n
    key += cols
    del cols
    if w is None:
        key.sort()
    else:
        order = np.argsort(key, kind="stable")
        key = key[order]
        w = w[order]
        del order
    if dedupe and key.size:
        first = np.empty(key.size, dtype=bool)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        if not first.all():
            if w is not None:
                w = np.minimum.reduceat(w, np.flatnonzero(first))
            key = key[first]
        del first
    rows = np.floor_divide(key, n, out=np.empty(key.size, id_dtype))
    rows += lo
    cols = np.remainder(key, n, out=np.empty(key.size, id_dtype))
    return rows, cols, w


def _fits_device(arcs: int) -> bool:
    import cupy
    free, _ = cupy.cuda.Device().mem_info
    pool = cupy.get_default_memory_pool()
    return arcs * GPU_BYTES_PER_ARC <= 0.8 * (free + pool.free_bytes())


def _sort_gpu(arcs, lo, n, dedupe, id_dtype):
    import cupy as cp

    rows, cols, w = arcs
    arcs.clear()
    key = cp.asarray(rows).astype(cp.int64)
    key -= lo
    key *= n
    key += cp.asarray(cols)
    del rows, cols
    if w is None:
        key.sort()  # Thrust's (stable) sort
    else:
        order = cp.argsort(key)  # repeats are merged (min weight): their order does not matter
        key = key[order]
        w = cp.asnumpy(cp.asarray(w)[order])  # device→host: the weights in key order
        del order
    if dedupe and key.size:
        first = cp.empty(key.size, dtype=bool)
        first[0] = True
        cp.not_equal(key[1:], key[:-1], out=first[1:])
        starts = cp.flatnonzero(first)
        if starts.size != key.size:  # device→host sync: whether there are repeats
            if w is not None:
                w = np.minimum.reduceat(w, cp.asnumpy(starts))
            key = key[first]
        del first, starts
    out_rows = (key // n).astype(id_dtype)
    out_rows += lo
    out_cols = (key % n).astype(id_dtype)
    del key
    return cp.asnumpy(out_rows), cp.asnumpy(out_cols), w

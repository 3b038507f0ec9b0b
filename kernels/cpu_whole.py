"""The Python side of the whole kernels on numba's threads (:mod:`.cpu_parallel`): Afforest
components and PageRank's pull over a CSR in memory (and whether it is used: :func:`whole_pull`),
delta-stepping's bucket width from the weights, its light CSR made once per CSR and width, and
its scratch (:func:`.cpu.traverse_min`), and a traversal's whole-array passes (:func:`full`,
:func:`int_levels`: on the threads where its kernel runs there). Re-exported by :mod:`.cpu`."""

from __future__ import annotations

import weakref

import numpy as np

from ooc_graph import config

from .cpu import _ids, _int_coded, _whole_threads, compiled


_typical_weights = {}  # id(weights) -> their mean over a sample, while that array lives
_light_csrs = {}  # (id(indptr), id(weights)) -> (delta, the light CSR), while those arrays live


def _typical_weight(weights) -> float:
    """The mean of up to 65,536 of ``weights``, evenly spaced (once per array)."""
    key = id(weights)
    typical = _typical_weights.get(key)
    if typical is None:
        sample = weights[::max(1, weights.size // 65536)]
        typical = _typical_weights[key] = float(sample.mean()) if sample.size else 1.0
        weakref.finalize(weights, _typical_weights.pop, key, None)
    return typical


def _light_csr(parallel, indptr, indices, weights, delta: float, threads: int):
    """The arcs lighter than ``delta`` as a CSR of their own, made once per CSR (``indptr`` as the
    engine holds it, not a view made for this call) and delta: the engine keeps its CSR between
    calls; on numba's threads where ``threads`` > 1. Its offsets are int64 or, where they fit,
    int32 viewed as uint32 (:func:`.cpu._ids`)."""
    key = (id(indptr), id(weights))
    held = _light_csrs.get(key)
    if held is not None and held[0] == delta:
        return held[1]
    n = indptr.size - 1
    counts = np.zeros(n + 1, np.int64)
    ip, ix = _ids(indptr), _ids(indices)
    if threads > 1:
        parallel.light_counts(ip, weights, delta, counts)
    else:
        parallel.light_counts_range(ip, weights, delta, counts, 0, n)
    light_indptr = np.cumsum(counts, out=counts)
    if light_indptr[-1] < 2**31:
        light_indptr = light_indptr.astype(np.int32).view(np.uint32)
    light_indices = np.empty(int(light_indptr[-1]), ix.dtype)
    light_weights = np.empty(light_indices.size, np.float64)
    if threads > 1:
        parallel.light_fill(ip, ix, weights, delta, light_indptr, light_indices, light_weights)
    else:
        parallel.light_fill_range(ip, ix, weights, delta, light_indptr, light_indices, light_weights, 0, n)
    light = (light_indptr, light_indices, light_weights)
    if held is None:
        weakref.finalize(indptr, _light_csrs.pop, key, None)
    _light_csrs[key] = (delta, light)
    return light


def round_parallel_min_arcs(threads: int) -> int:
    """The arcs (and vertices) from which a round of delta-stepping runs on ``threads`` threads:
    config ``cpu.level_parallel_min_arcs`` on two, proportionally fewer on more. Its serial time
    falls short of a fork-join's sooner on more threads: on 16 threads of a 1xH100 host (the
    anchors' R-MAT-22, 7 calls a source alternating in one process) SSSP's medians were 156-163 ms
    at 16,384 arcs, 151-155 at 4,096 and 148-155 at 2,048; on the 2-core machine (road NW) BFS
    was slower at 4,096 than at 16,384 and SSSP no faster."""
    return max(1, config.get().cpu.level_parallel_min_arcs * 2 // max(threads, 2))


def delta_stepping(fast, indptr, indices, w, weighted, c, frontier, state, parent, track, threads):
    """:func:`.cpu_sssp_parallel.delta_stepping_serial` (``threads`` 1: it compiles nothing on
    numba's threads) or ``delta_stepping_parallel`` with its scratch (57 bytes a vertex where ids
    fit 32 bits, 85 otherwise) and its light CSR (the arcs lighter than delta: 12 bytes each, 8 a
    vertex; kept with the CSR). Buckets are config ``cpu.delta_width`` typical weights (the mean of
    a sample) over the mean out-degree wide (Davidson et al.'s rule, as ``near_far_delta``)."""
    n = state.size
    typical = _typical_weight(w) if weighted else c
    delta = config.get().cpu.delta_width * typical / max(indices.size / max(n, 1), 1.0)
    if not 0 < delta < np.inf:
        delta = np.inf if not typical > 0 else typical
    parallel = fast.parallel()
    ip, ix = _ids(indptr), _ids(indices)
    if weighted:
        light = _light_csr(parallel, indptr, indices, w, delta, threads)
    else:  # every arc light, or none
        light = (ip, ix, w) if c < delta else (np.zeros(n + 1, ip.dtype), ix[:0], w)
    ids = np.uint32 if n < 2**31 else np.int64
    from .cpu_atomic import aligned_pairs  # numba's: imported on first use, not with the package
    kernel = parallel.delta_stepping_parallel if threads > 1 else parallel.delta_stepping_serial
    return kernel(
        ip, ix, w, *light, weighted, c, frontier, state, parent, track, float(delta), threads,
        round_parallel_min_arcs(threads), aligned_pairs(n), np.empty(n, np.uint8), np.empty((2, n + 1), ids),
        np.empty((2, 2 * n + 1), ids), np.empty(n + 1, ids), np.zeros(n, np.uint32), np.empty(n),
        np.empty(n // parallel.VERTEX_CHUNK + 2, np.int64))


def components(indptr, indices, in_csr, symmetric: bool):
    """Weakly connected components over a whole out-CSR held in memory (Afforest,
    :mod:`.cpu_components`): ``(root, arcs)``, root[v] the smallest vertex of v's component
    (int64), or None where the compiled kernels are off. ``in_csr``: the in-CSR's ``(indptr,
    indices)`` of a directed graph, or None (then, unless ``symmetric`` says the out-CSR holds every
    arc both ways, no component can be skipped: every arc is linked)."""
    fast = compiled()
    if fast is None:
        return None
    n = indptr.size - 1
    ip, ix = _ids(indptr), _ids(indices)
    in_ip, in_ix = (_ids(in_csr[0]), _ids(in_csr[1])) if in_csr is not None else (ip[:0], ix[:0])
    comp = np.empty(max(n, 0), np.int32 if n < 2**31 else np.int64)
    threads = _whole_threads(indices.size)
    parallel = fast.parallel()
    kernel = parallel.components_parallel if threads > 1 else parallel.components_serial
    arcs = kernel(ip, ix, in_ip, in_ix, in_csr is not None, bool(symmetric), comp, config.get().cpu.afforest_rounds,
                  threads)
    if threads == 1 or comp.dtype == np.int64:
        return comp.astype(np.int64, copy=False), int(arcs)
    root = np.empty(n, np.int64)  # written (first touched) on the threads
    parallel.widen(comp, root)
    return root, int(arcs)


def pull_rows(indptr, indices, x, out, lo: int, hi: int):
    """``out[v] = Σ_{u→v} x[u]`` for v in [lo, hi) over a whole in-CSR held in memory, each row
    summed in CSR order (:mod:`.cpu_pull`); None where the compiled kernels are off (nothing done)."""
    fast = compiled()
    if fast is None or x.dtype != np.float64 or out.dtype != np.float64:
        return None
    cfg = config.get().cpu
    threads = _whole_threads(indices.size)
    parallel = fast.parallel()
    kernel = parallel.pull_rows_parallel if threads > 1 else parallel.pull_rows_serial
    kernel(_ids(indptr), _ids(indices), x, out, int(lo), int(hi), threads, cfg.level_parallel_min_arcs)
    return True


def whole_pull(arcs: int) -> bool:
    """Whether PageRank's pull goes over the whole in-CSR (:func:`pull_rows`) rather than the
    cached chunks: config ``cpu.whole_pull``, or where the pull over ``arcs`` arcs runs on numba's
    threads (faster there, and no chunk to prepare on a first call)."""
    return config.get().cpu.whole_pull or (compiled() is not None and _whole_threads(arcs) > 1)


def int_levels(levels, unreachable: int):
    """Float64 BFS levels (whole numbers, inf where unreached) as int64 in the same memory, inf
    becoming ``unreachable``: one pass and no allocation, where a new array, a mask and a masked
    copy took 2.3 ms on a million vertices; nothing where :func:`.cpu.bfs_tree` wrote them so
    (asked to: ``int_levels``). Returns the int64 view, or None where the compiled kernels are off
    (the caller converts into a new array)."""
    coded = _int_coded.pop(id(levels), None)
    if coded is not None:
        ints = levels.view(np.int64)
        if coded != unreachable:
            ints[ints == coded] = unreachable
        return ints
    fast = compiled()
    if fast is None or levels.dtype != np.float64 or not levels.flags.c_contiguous:
        return None
    (fast.parallel().int_levels if _whole_threads(levels.size) > 1 else fast.int_levels)(levels, np.int64(unreachable))
    return levels.view(np.int64)


def full(n: int, value, dtype=np.float64) -> np.ndarray:
    """``np.full(n, value, dtype)``, filled on numba's threads where a whole kernel over n values
    would run on them (config ``cpu.whole_parallel_min_arcs``, ``cpu.parallel_min_threads``):
    each thread first-touches its own pages (a traversal's fresh state, a tree's unset parents)."""
    fast = compiled()
    if fast is None or _whole_threads(n) == 1:
        return np.full(n, value, dtype)
    out = np.empty(n, dtype)
    fast.parallel().fill(out, out.dtype.type(value))
    return out


def astype(a: np.ndarray, dtype) -> np.ndarray:
    """``a.astype(dtype)`` (a no-op where it has that type), converted on numba's threads where a
    whole kernel over it would run on them: a CSR's float32 weights widened to float64 (522 MB
    written for the anchors' R-MAT-22), its offsets narrowed to int32; NumPy's one thread took
    ~0.3 s of a first SSSP call there. The caller checks that the values fit ``dtype``."""
    dtype = np.dtype(dtype)
    if a.dtype == dtype:
        return a
    fast = compiled()
    if fast is None or a.ndim != 1 or _whole_threads(a.size) == 1:
        return a.astype(dtype)
    out = np.empty(a.size, dtype)
    fast.parallel().widen(np.ascontiguousarray(a), out)
    return out


def unset_unreached(parent, dist) -> int | None:
    """A shortest-path tree's parents still ``n`` (none found) set to -1 where ``dist`` is
    infinite (unreached), in one pass on numba's threads; returns how many reached vertices still
    have none (those behind zero-weight arcs only), or None where that pass would run on one
    thread (:func:`.cpu_compiled.resolve_plateaus` then makes the same serial passes)."""
    fast = compiled()
    if fast is None or _whole_threads(parent.size) == 1:
        return None
    return int(fast.parallel().unset_unreached(parent, dist))

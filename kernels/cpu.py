"""CPU (NumPy/SciPy) operators. A batch is the arcs of one chunk in destination-major CSR form,
one row per destination that has arcs (so a batch whose destinations spread far, such as the CEL
augmentation, costs memory in its arcs, not in its range).

The CSR is built once per chunk load, so every pass afterwards runs as a sparse matrix-vector
product (``pull_sum``) or a segmented reduction (``relax_min``).

Where numba is installed (the ``cpu`` extra) the operators run compiled
(:mod:`.cpu_compiled`), with the same results; this NumPy code is their reference.
:func:`traverse_min`, :func:`tree_parents`, :func:`bfs_tree` and :func:`int_levels` exist only
compiled: whole traversals over a CSR held in memory, which the engine uses in place of its
per-level loop; the per-level traversal operators are in :mod:`.cpu_traversal` (re-exported here).
Config ``cpu.compiled = False`` (or ``OOC_GRAPH_CPU_KERNELS=numpy``) switches the compiled kernels off.
"""

from __future__ import annotations

import logging
import time
import weakref
from dataclasses import field
from typing import TYPE_CHECKING

import numpy as np

from ooc_graph import config
from ooc_graph._records import record

if TYPE_CHECKING:  # scipy.sparse is imported where a batch is built: it costs ~0.2 s to import
    import scipy.sparse as sp

log = logging.getLogger("ooc_graph.kernels")

_compiled_module = None  # the imported kernels/cpu_compiled.py, or False where numba is absent


def compiled():
    """The compiled kernels (:mod:`.cpu_compiled`), or None where numba is not installed or
    config ``cpu.compiled`` is false. numba is imported on first use, not with the package."""
    global _compiled_module
    if not config.get().cpu.compiled:
        return None
    if _compiled_module is None:
        try:
            from . import cpu_compiled as module
        except ImportError as err:
            if not (err.name or "").startswith("numba"):
                raise
            log.info("numba is not installed: CPU kernels run on NumPy (install numba, or the 'cpu' extra "
                     "from a checkout: pip install -e '.[cpu]')")
            module = False
        _compiled_module = module
    return _compiled_module or None


def _threads() -> int:
    import numba
    return numba.get_num_threads()


def _whole_threads(arcs: int) -> int:
    """The threads a whole kernel over ``arcs`` arcs runs on: numba's (``NUMBA_NUM_THREADS``, at
    most the cores this process may use; ``numba.set_num_threads`` lowers it for the calling
    thread), or 1 below config ``cpu.whole_parallel_min_arcs``, where a fork-join costs more than
    it saves (numba's thread pool is then not even started), or with fewer than config
    ``cpu.parallel_min_threads`` threads."""
    cfg = config.get().cpu
    if arcs < cfg.whole_parallel_min_arcs:
        return 1
    threads = _threads()
    return threads if threads >= cfg.parallel_min_threads else 1


def _weights(weight, plus):
    """(weights as a float64 array, weighted, constant) for the compiled kernels."""
    if plus is None:
        return weight, True, 0.0
    return _NO_WEIGHTS, False, float(plus)


def _ids(indices):
    """Vertex ids or offsets as the compiled kernels read them fastest: int32 viewed as uint32
    (they are never negative, and unsigned indexing skips numba's wraparound test: 25% off a
    road-graph BFS, 13% off a pull-sum)."""
    return indices.view(np.uint32) if indices.dtype == np.int32 else indices


# prepare() sorts a chunk's arcs by destination with the compiled counting sort (kernels/cpu_batches.py)
# where its destinations span at most this many times its arcs (plus 65,536), else with NumPy's argsort.
COUNTING_SORT_SPAN = 4
_NO_WEIGHTS = np.zeros(0, np.float64)
_NO_FLAGS = np.zeros(0, np.bool_)
_NO_IDS = np.zeros(0, np.int64)


@record
class Batch:
    dst_lo: int
    dst_hi: int
    indptr: np.ndarray             # CSR by destination: row r is destination rows[r] + dst_lo
    indices: np.ndarray            # global source ids, CSR order
    columns: int                   # number of vertices (the matrix's columns)
    weight: np.ndarray | None      # float64, CSR order
    rows: np.ndarray               # destination - dst_lo of each row (all rows are non-empty)
    row_start: np.ndarray          # CSR offset of each row
    _matrix: object = field(default=None, repr=False, compare=False)

    @property
    def matrix(self) -> "sp.csr_matrix":
        """The batch as a SciPy CSR matrix with ones as values, made on first use: the NumPy
        kernels multiply it; the compiled ones read ``indptr`` and ``indices`` alone."""
        if self._matrix is None:
            import scipy.sparse as sp
            self._matrix = sp.csr_matrix((np.ones(self.indices.size), self.indices, self.indptr),
                                         shape=(self.rows.size, self.columns))
        return self._matrix

    @property
    def num_arcs(self) -> int:
        return int(self.indices.size)

    @property
    def nbytes(self) -> int:
        total = self.indices.nbytes + self.indptr.nbytes + self.rows.nbytes + self.row_start.nbytes
        if self._matrix is not None or compiled() is None:  # the NumPy kernels' matrix holds ones
            total += 8 * self.indices.size
        return total + (0 if self.weight is None else self.weight.nbytes)

    def dst(self) -> np.ndarray:
        return np.repeat(self.rows + self.dst_lo, np.diff(self.indptr))


def marker(where: str = "compute") -> float:
    """A point in time for profiling (on the CPU, the host clock)."""
    return time.perf_counter()


def seconds_between(a: float, b: float) -> float:
    return b - a


def prepare(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi, num_vertices) -> Batch:
    """Global ids from local ones (per-block bases repeated over block lengths), then CSR by destination."""
    idx_dtype = np.int32 if num_vertices <= np.iinfo(np.int32).max else np.int64
    cols = max(num_vertices, 1)
    m = int(np.sum(lengths))
    if compiled() is not None and m and dst_hi - dst_lo <= COUNTING_SORT_SPAN * m + (1 << 16):
        from .cpu_batches import csr_by_destination
        made = csr_by_destination(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi,
                                  idx_dtype)
        if made is not None:
            indptr, indices, rows, row_start, w = made
            return Batch(dst_lo, dst_hi, indptr, indices, cols, w, rows, row_start)
    src = src_local.astype(np.int64) + np.repeat(np.asarray(src_base, np.int64), lengths)
    row = dst_local.astype(np.int64) + np.repeat(np.asarray(dst_base, np.int64) - dst_lo, lengths)
    # Arcs are sorted by (dst, src) inside each block, so the stable sort merges sorted runs.
    order = np.argsort(row, kind="stable")
    row = row[order]
    row_start = np.flatnonzero(np.diff(row, prepend=-1)) if row.size else np.zeros(0, np.int64)
    rows = row[row_start]
    indptr = np.append(row_start, row.size)
    indices = src[order].astype(idx_dtype)
    w = None if weight is None else np.asarray(weight, np.float64)[order]
    return Batch(dst_lo, dst_hi, indptr.astype(idx_dtype, copy=False), indices, cols, w, rows.astype(np.int64),
                 row_start.astype(np.int64))


def pull_sum(batch: Batch, x: np.ndarray, out: np.ndarray) -> None:
    """``out[v] += Σ_{u→v} x[u]``."""
    fast = compiled()
    if fast is not None and batch.num_arcs and out.dtype == np.float64 and x.dtype == np.float64:
        cfg = config.get().cpu
        parallel = batch.num_arcs >= cfg.parallel_min_arcs and _threads() >= cfg.parallel_min_threads
        kernel = fast.pull_sum_parallel if parallel else fast.pull_sum
        kernel(_ids(batch.indptr), _ids(batch.indices), batch.rows, batch.dst_lo, x, out)
    elif batch.num_arcs:
        if batch.rows.size == batch.dst_hi - batch.dst_lo:  # every destination of the range has arcs
            out[batch.dst_lo:batch.dst_hi] += batch.matrix @ x
        else:
            out[batch.rows + batch.dst_lo] += batch.matrix @ x  # rows are distinct


def _plus(cand, weight, plus):
    if plus is None:
        return cand + weight
    return cand + plus if plus else cand


def relax_min(batch: Batch, state: np.ndarray, plus, changed: np.ndarray, any_changed=None) -> None:
    """``state[v] = min(state[v], state[u] + w)`` over the batch (``plus=None``: the arc weight,
    else the constant); ``changed[v] = 1`` where the state dropped, and ``any_changed[0] = 1`` if
    anything did."""
    if not batch.num_arcs:
        return
    fast = compiled()
    if fast is not None:
        w, weighted, c = _weights(batch.weight, plus)
        if fast.relax_min(_ids(batch.indptr), _ids(batch.indices), batch.rows, batch.dst_lo, w, weighted, c, state, changed) \
                and any_changed is not None:
            any_changed[0] = 1
        return
    best = np.minimum.reduceat(_plus(state[batch.indices], batch.weight, plus), batch.row_start)
    v = batch.rows + batch.dst_lo
    better = best < state[v]
    v = v[better]
    state[v] = best[better]
    changed[v] = 1
    if any_changed is not None and v.size:
        any_changed[0] = 1


def _roots(parent: np.ndarray, x: np.ndarray) -> np.ndarray:
    r = parent[x]
    while True:
        up = parent[r]
        if np.array_equal(up, r):
            return r
        r = up


def hook_min(batch: Batch, parent: np.ndarray, changed: np.ndarray) -> None:
    """For every arc u→v whose trees differ, hang the larger root under the smaller one
    (``parent[max] = min``); ``changed[0] = 1`` if any arc did. Pointers only ever decrease."""
    if not batch.num_arcs:
        return
    fast = compiled()
    if fast is not None:  # union-find: every tree the batch joins is joined in this one call
        if fast.hook_min(_ids(batch.indptr), _ids(batch.indices), batch.rows, batch.dst_lo, parent):
            changed[0] = 1
        return
    ru = _roots(parent, batch.indices)
    rv = _roots(parent, batch.dst())
    differ = ru != rv
    if differ.any():
        np.minimum.at(parent, np.maximum(ru, rv)[differ], np.minimum(ru, rv)[differ])
        changed[0] = 1


def tight_parent(batch: Batch, dist: np.ndarray, plus, parent: np.ndarray, resolved) -> None:
    """``parent[v] = min(parent[v], u)`` over arcs u→v (u ≠ v) with ``dist[u] + w == dist[v]``.

    ``resolved is None``: only arcs with ``dist[u] < dist[v]`` count. Otherwise (zero-weight
    plateaus) only arcs with ``dist[u] == dist[v]`` from a resolved u to an unresolved v, with
    ``resolved`` a snapshot taken before the pass, so no cycle can form.
    """
    if not batch.num_arcs:
        return
    fast = compiled()
    if fast is not None:
        w, weighted, c = _weights(batch.weight, plus)
        fast.tight_parent(_ids(batch.indptr), _ids(batch.indices), batch.rows, batch.dst_lo, w, weighted, c, dist, parent,
                          _NO_FLAGS if resolved is None else resolved, resolved is None)
        return
    src = batch.indices.astype(np.int64)
    dst = batch.dst()
    du, dv = dist[src], dist[dst]
    tight = (_plus(du, batch.weight, plus) == dv) & (src != dst) & np.isfinite(dv)
    tight &= (du < dv) if resolved is None else ((du == dv) & resolved[src] & ~resolved[dst])
    best = np.minimum.reduceat(np.where(tight, src, parent.size), batch.row_start)
    np.minimum.at(parent, batch.rows + batch.dst_lo, best)


def scatter_min(state, ids, values, changed) -> None:
    """``state[ids] = min(state[ids], values)`` (repeated ids allowed); ``changed[ids] = 1``:
    merging the vertices other workers changed (distributed runs)."""
    fast = compiled()
    if fast is not None and ids.size and state.dtype == np.asarray(values).dtype:
        fast.scatter_min(state, ids, values, changed)
    elif ids.size:
        np.minimum.at(state, ids, values)
        changed[ids] = 1


def inverse_degree(degree) -> tuple:
    """``(1 / degree, how many are 0)``: PageRank's inverse out-degrees as float64 (0 where a
    vertex dangles), from integer degrees or sums of out-weights."""
    degree = np.asarray(degree)
    inv = np.zeros(degree.shape, np.float64)  # one array written, no temporaries of n doubles:
    live = degree != 0  # 34-50 ms for 4M vertices (2-core machine) where 3 np.where did 155-307
    np.divide(1.0, degree, out=inv, where=live, dtype=np.float64)
    return inv, int(degree.size - np.count_nonzero(live))


def pagerank_step(y, x, p, inv, alpha: float, lost: float, contrib, out=None):
    """One PageRank update of a vertex range, in place or into ``out``: ``x_new = alpha (y +
    lost p) + (1 - alpha) p`` (``p`` an array or a scalar: uniform teleport), ``contrib = x_new *
    inv``, ``x = x_new``. Returns ``(Σ|x_new - x|, Σ x_new over dangling vertices)`` (``inv ==
    0``); compiled, one pass whose sums run in order (the reference's are pairwise: the last bits
    differ). ``contrib=None``: the contributions are not written. ``lost`` is a float or, as on a
    GPU, an array whose first element is it."""
    if isinstance(lost, np.ndarray):
        lost = lost.reshape(-1)[0]
    if out is not None and out is not x:
        out[...] = x
        x = out
    fast = compiled()
    if contrib is None:
        contrib = np.empty_like(x) if fast is not None else None
    if fast is not None and all(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in (y, x, inv, contrib)):
        scalar = np.isscalar(p)
        args = (y, x, _NO_WEIGHTS if scalar else np.asarray(p, np.float64), float(p) if scalar else 0.0, inv,
                float(alpha), float(lost), contrib)
        if _whole_threads(x.size) > 1:  # sums by blocks (the same on any threads)
            err, dangling = fast.parallel().pagerank_step(*args, True)
        else:
            err, dangling = fast.pagerank_step(*args)
        return np.array([err, dangling])
    new = alpha * (y + lost * p) + (1 - alpha) * p
    err = float(np.abs(new - x).sum())
    dangling = float(new[inv == 0].sum())
    if contrib is not None:
        np.multiply(new, inv, out=contrib)
    x[...] = new
    return np.array([err, dangling])


def whole_traversals() -> bool:
    """Whether :func:`traverse_min` and :func:`tree_parents` can run (the compiled kernels are on)."""
    return compiled() is not None


def traverse_min(indptr, indices, weights, frontier, state, plus, parent=None, delta=None):
    """``relax_min`` to the fixed point over a whole out-CSR held in memory, in one compiled
    call: a FIFO queue where ``plus`` is a constant and the frontier's values are equal (BFS),
    else Dijkstra with an indexed heap (``delta``, the GPU's bucket width, is not needed).
    Increments must be non-negative (the caller knows).
    With ``parent`` (n int64, ``n`` everywhere but the single frontier vertex, which holds
    itself) the strict part of the shortest-path tree is built on the way; finish it with
    :func:`tree_parents`. Returns ``(iterations a level-synchronous loop would take, arcs
    scanned)``, or None where the compiled kernels are unavailable (the engine then loops level
    by level)."""
    fast = compiled()
    if fast is None:
        return None
    frontier = np.unique(np.asarray(frontier, np.int64))
    w, weighted, c = _weights(weights, plus)
    track = parent is not None
    parent = parent if track else _NO_IDS
    if not weighted and c == 1.0 and fast.fresh(state, frontier):
        queue = np.empty(state.size, np.int32 if state.size < 2**31 else np.int64)
        return fast.bfs_unit(_ids(indptr), _ids(indices), frontier, state, parent, track, queue)
    if not weighted and (frontier.size == 0 or np.all(state[frontier] == state[frontier[0]])):
        return fast.bfs_queue(_ids(indptr), _ids(indices), c, frontier, state, parent, track)
    threads = _whole_threads(indices.size)
    if threads > 1 or config.get().cpu.delta_stepping:
        from .cpu_whole import delta_stepping
        return delta_stepping(fast, indptr, indices, w, weighted, c, frontier, state, parent, track, threads)
    ids = np.int32 if state.size < 2**31 else np.int64
    return fast.dijkstra(_ids(indptr), _ids(indices), w, weighted, c, frontier, state, parent, track,
                         np.empty(state.size, ids), np.full(state.size, -1, ids))


# Direction-optimising BFS (:func:`bfs_tree`): its thresholds and their measurements are config's
# cpu.bfs_* settings.
_bfs_tree_failed = False  # the kernel did not compile here (then the engine keeps its other path)
_max_degrees = {}  # id(indptr) -> its largest row, while that array lives


def _max_degree(indptr) -> int:
    """The largest row of a CSR, computed once per array (the engine keeps its CSR between calls)."""
    key = id(indptr)
    degree = _max_degrees.get(key)
    if degree is None:
        degree = _max_degrees[key] = int(np.diff(indptr).max()) if indptr.size > 1 else 0
        weakref.finalize(indptr, _max_degrees.pop, key, None)
    return degree


_int_coded = {}  # id(state) -> unreached's value, for states whose levels bfs_tree wrote as int64


def bfs_tree(indptr, indices, source: int, state, in_csr=None, fresh: bool = False, int_unreachable=None):
    """Unit-increment BFS from ``source`` over a whole out-CSR held in memory, with the parents of
    :func:`tree_parents` (the smallest vertex one level above with an arc to v; -1 at the root and
    where unreached), in one compiled call: direction-optimising, bottom-up levels over the
    in-CSR, whose rows must be sorted by source (the store's are). ``state`` must be fresh (inf
    everywhere, 0 at ``source``) and receives the levels. ``in_csr``: a callable returning the
    in-CSR's ``(indptr, indices)``, or None where it is not available; called only once a level
    would go bottom-up (a road graph never loads it). ``fresh``: the caller vouches for the state
    (the engine's ``shortest_paths``, whose callers have just made it), which is then not read
    first (a pass over it: ~0.7 ms of a 18 ms BFS of the anchors' R-MAT-22 on 16 threads).
    ``int_unreachable``: the value for unreached vertices where the caller converts the levels with
    :func:`int_levels` next (BFS): the final pass writes them so, and that conversion finds it
    done (one pass over 4M levels fewer, and a kernel fewer to load in a first call). Works in
    ``state`` and the parent array it returns (n/8 bytes of scratch besides).

    Returns ``(levels, arcs scanned, parent)``, or None where this does not apply (no compiled
    kernels, a state not fresh, 2**31 vertices or more): the caller then runs
    :func:`traverse_min` and :func:`tree_parents`."""
    global _bfs_tree_failed
    fast = compiled()
    n = state.size
    if fast is None or _bfs_tree_failed or not 0 <= source < n or n >= 2**31 or state.dtype != np.float64 or \
            not state.flags.c_contiguous:
        return None
    threads = _whole_threads(indices.size)
    if not fresh and not (fast.parallel().fresh if threads > 1 else fast.fresh)(state, np.array([source], np.int64)):
        return None
    key = state.view(np.uint64)
    key[source] = np.uint64(1) << np.uint64(32)
    parent = np.empty(n, np.int64)
    if threads > 1:  # its pages first touched on the threads (the queue's writes faulted them in one by one:
        # ~1 ms of a 20 ms BFS of the anchors' R-MAT-22 on 16 threads), by the state's fill (loaded already)
        fast.parallel().fill(parent.view(np.float64), 0.0)
    queue = parent.view(np.uint32)
    queue[0] = source
    ctx = np.array([0, 1, 1, indices.size, 0, 1, 1], np.int64)
    ip, ix = _ids(indptr), _ids(indices)
    in_ip, in_ix = ip[:0], ix[:0]
    step = 0 if in_csr is None else 2
    cfg = config.get().cpu
    coded = np.int64(0 if int_unreachable is None else int_unreachable)
    if threads > 1:  # levels with enough arcs on numba's threads
        parallel = fast.parallel()
        chunks = np.empty(n // parallel.VERTEX_CHUNK + 2, np.int64)
        bitmaps = np.empty((3, (n + 63) >> 6), np.uint64)

        def run():
            return parallel.bfs_tree_parallel(
                ip, ix, in_ip, in_ix, step, cfg.bfs_alpha, n // cfg.bfs_min_frontier, cfg.bfs_branchy,
                cfg.bfs_leave_bottom_up, _max_degree(indptr), key, queue, ctx, state, parent, threads,
                cfg.level_parallel_min_arcs, chunks, bitmaps, coded)
    else:
        def run():
            return fast.bfs_tree(ip, ix, in_ip, in_ix, step, cfg.bfs_alpha, n // cfg.bfs_min_frontier, cfg.bfs_branchy,
                                 cfg.bfs_leave_bottom_up, _max_degree(indptr), key, queue, ctx, state, parent, coded)
    try:
        while run():
            loaded = in_csr()  # a level would go bottom-up: load the in-CSR if it can be had
            step = 0 if loaded is None else 1
            if loaded is not None:
                in_ip = _ids(loaded[0]).astype(ip.dtype, copy=False)
                in_ix = _ids(loaded[1]).astype(ix.dtype, copy=False)
    except Exception as err:  # numba's errors: e.g. a version whose LLVM refuses the prefetch hint
        from numba.core.errors import NumbaError
        if not isinstance(err, NumbaError):
            raise
        _bfs_tree_failed = True
        key[source] = 0  # the state as it came (nothing ran)
        log.warning("the compiled BFS did not compile (%s): BFS runs without it", err)
        return None
    if coded:
        _int_coded[id(state)] = coded
        weakref.finalize(state, _int_coded.pop, id(state), None)
    return int(ctx[2]) - 1, int(ctx[4]), parent


def tree_parents(indptr, indices, weights, dist, plus, root: int, parent=None):
    """The parents :meth:`Engine.tight_parents` computes, from a whole out-CSR in one compiled
    call (``parent``: the strict part :func:`traverse_min` built, finished here in place); None
    where the compiled kernels are unavailable."""
    fast = compiled()
    if fast is None:
        return None
    w, weighted, c = _weights(weights, plus)
    if parent is None:
        return fast.tree_parents(_ids(indptr), _ids(indices), w, weighted, c, dist, int(root))
    if unset_unreached(parent, dist) != 0:  # a plateau to resolve, or a pass on one thread
        fast.resolve_plateaus(_ids(indptr), _ids(indices), w, weighted, c, dist, parent, int(root))
    parent[root] = -1
    return parent


def brandes(indptr, indices, weights, sources, bc, endpoints: bool, spare: int = 0):
    """Brandes's sums from each of ``sources`` (distinct ids) added into ``bc``, unscaled as
    networkx accumulates them (with ``endpoints`` too), over a whole out-CSR in memory: per source
    a queue BFS (``weights`` None: hops) or Dijkstra over positive ``weights``, then the
    dependencies in reverse order; O(arcs reached) a source (:mod:`.cpu_brandes`). The sources are
    shared among numba's threads, each with its own scratch and sums (as many copies as ``spare``
    bytes hold, at least one: 32 bytes a vertex, 56 with weights, where ids fit 32 bits).
    Returns ``(levels per source, arcs scanned)``, or None where the compiled kernels are off."""
    fast = compiled()
    if fast is None:
        return None
    sources, n = np.ascontiguousarray(sources, np.int64), bc.size
    ids = np.dtype(np.int32 if n < 2**31 else np.int64)
    per = 24 + 2 * ids.itemsize + (0 if weights is None else 16 + 2 * ids.itemsize)
    copies = int(max(1, min(_threads(), sources.size, spare // (per * max(n, 1)))))
    levels, arcs = np.zeros(sources.size, np.int64), np.zeros(sources.size, np.int64)
    sums, sigma, coeff = np.zeros((copies, n)), np.zeros((copies, n)), np.zeros((copies, n))
    ip, ix, shape = _ids(indptr), _ids(indices), (copies, n)
    if weights is None:
        fast.brandes_hops(ip, ix, sources, endpoints, sums, np.full(shape, -1, ids), sigma, coeff,
                          np.empty(shape, ids), levels, arcs)
    else:
        fast.brandes_dijkstra(ip, ix, np.asarray(weights, np.float64), sources, endpoints, sums, np.full(shape, np.inf),
                              sigma, coeff, np.zeros(shape, ids), np.empty(shape, ids), np.empty(shape),
                              np.empty(shape, ids), np.full(shape, -1, ids), levels, arcs)
    fast.add_copies(sums, bc)
    return levels, int(arcs.sum())


# Bytes per vertex of one thread's copy of wedge_count's counts (two int64) and marks (int32).
WEDGE_COPY_BYTES = 20


def wedge_count(indptr, xs, ys, arcs, rows, triangles, closing, spare: int = 0):
    """Triangles through the oriented pairs of the CSR ``(indptr, ys)`` (pair p joins ``xs[p]`` to
    ``ys[p] > xs[p]`` by ``arcs[p]`` arcs; rows sorted) whose lower vertex lies in one of the row ranges
    ``rows`` (k x 2, on the host): for every triangle x -> y, x -> z, y -> z, each of its three
    vertices gets ``triangles[v] += 1`` and ``closing[v] +=`` the arcs joining the other two.
    One compiled call over numba's threads, each adding into its own copy of the counts (as many
    copies as ``spare`` bytes hold, at least one; range i goes to copy i mod copies). Returns
    True, or None where the compiled kernels are unavailable (nothing done: the caller runs its
    reference)."""
    fast = compiled()
    if fast is None:
        return None
    n = triangles.size
    rows = np.ascontiguousarray(rows, np.int64).reshape(-1, 2)
    copies = int(max(1, min(_threads(), len(rows), spare // (WEDGE_COPY_BYTES * max(n, 1)))))
    tri, clo = np.zeros((copies, n), np.int64), np.zeros((copies, n), np.int64)
    if n <= np.iinfo(np.uint32).max:  # 32-bit ids: 3.1 s instead of 3.8 on R-MAT-18
        ys = ys.astype(np.uint32)
    longest = int((indptr[1:] - indptr[:-1]).max()) if n else 0
    fast.wedge_count(indptr, ys, arcs, rows, tri, clo, np.zeros((copies, n), np.int32),
                     np.empty((copies, longest), np.int64))
    fast.add_copies(tri, triangles)
    fast.add_copies(clo, closing)
    return True


# The general edge operator's NumPy kernels live in cpu_edge.py; the engine sees them here.
from .cpu_edge import edge_combine, edge_values, evaluate  # noqa: E402,F401
from .cpu_traversal import LEVEL_PARENTS, advance_min, bottom_up, flatnonzero  # noqa: E402,F401
# The whole kernels on numba's threads (components, PageRank's pull) live in cpu_whole.py.
from .cpu_whole import astype, components, full, int_levels, pull_rows, unset_unreached, whole_pull  # noqa: E402,F401

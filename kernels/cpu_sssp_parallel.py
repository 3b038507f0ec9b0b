"""Min-relaxation to the fixed point (SSSP, and every ``propagate_min`` with non-negative
increments) over a CSR in memory by delta-stepping (Meyer and Sanders; GAP's ``sssp``) on numba's
threads, with the shortest-path tree's strict parents built on the way.

A vertex's state is one 128-bit word: its value, as a uint64 whose order is the float64 order
(:func:`_order`), above its parent. An arc u->v offers v ``(d(u) + w, u)`` — or ``(d(u) + w, n)``
where the sum is not larger than d(u) (a zero weight: no strict parent) — and v keeps the smallest
pair offered, by a 128-bit compare-and-swap. The values reach the same fixed point whatever order
arcs are relaxed in (each is the smallest rounded path sum, rounding being monotone), and a parent
offered with a value that turned out final is a tight arc from a vertex whose final value is
smaller, so v ends with the smallest u whose arc is strictly tight: the parents of
:meth:`Engine.tight_parents` before its zero-weight plateaus (``n`` there, finished by
:func:`.cpu_compiled.resolve_plateaus`).

Vertices wait in a near pile (values below the bound) and a far pile; each round expands the near
pile, and when it is empty the bound rises to the smallest value waiting in the far pile plus
``delta``. That smallest value is known without a pass over the pile: the smallest value left in it
when it was last split, or one a vertex dropped to since (:func:`.cpu_sssp_relax._offer`); where
that vertex went near meanwhile, the bound is lower than it could be and a split may find nothing
below it, which makes the next split's exact. A byte a vertex says where it waits (0 nowhere, 1
near, 2 far), so a vertex is queued at most once a round and the piles hold at most n vertices each
(the far pile's entries whose byte says otherwise are left over from earlier moves and dropped).
A vertex with no light arcs that reaches the bucket from nowhere or far (the far pile's split, or
an arc of a light round) is taken at once and listed for its heavy arcs: a round would take it
only to relax nothing (on the anchors' R-MAT-22, most vertices of the later buckets: 6-9% less
time a call on 16 threads). Rounds with few arcs run on the calling thread; larger ones share the
frontier's arcs among threads in chunks taken from a shared counter, as :mod:`.cpu_bfs_parallel`
does.

The kernel has two compiled entries (:func:`.cpu_chunks.serial_and_parallel`):
``delta_stepping_serial``, every round on the calling thread, which compiles none of the kernels
on numba's threads, and ``delta_stepping_parallel``.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .cpu_chunks import VERTEX_CHUNK, serial_and_parallel
from .cpu_sssp_piles import (_load, _load_range, _split_far, _split_far_parallel, _store, _store_range, _take_parallel,
                             _take_serial)
from .cpu_sssp_relax import _ALL, _FAR, _NEAR, _drain, _order, _relax, _relax_parallel, _scratch, _value

_OPTS = dict(cache=True, nogil=True)


@njit(**_OPTS)
def _bound(low, delta):
    """The bound of the bucket starting at ``low``: low + delta, or the next double where that
    rounds to low."""
    bound = low + delta
    return bound if bound > low else np.nextafter(low, np.inf)


@njit(**_OPTS)
def _start(frontier, state, where, delta, near, far):
    """The frontier's reached vertices into the near pile (below the first bucket's bound) or the
    far pile. Returns (near count, far count, bound, the far pile's smallest ordered value)."""
    start = np.inf
    for i in range(frontier.size):
        start = min(start, state[frontier[i]])
    bound = _bound(start, delta)
    f = nfar = 0
    low = _ALL
    for i in range(frontier.size):
        v = frontier[i]
        if not state[v] < np.inf:
            continue
        if state[v] < bound:
            where[v] = _NEAR
            near[f] = v
            f += 1
        else:
            where[v] = _FAR
            far[nfar] = v
            nfar += 1
            low = min(low, _order(state[v]))
    return f, nfar, bound, low


def _make_next_bucket(parallel):
    def _next_bucket(key, where, far, nfar, delta, near, kept, light_indptr, settled, seen, stamp, boxes, threads,
                     parallel_arcs, least, lows):
        """The next bucket from the far pile far[:nfar], whose smallest ordered value is ``least`` or
        above: its vertices into ``near``, or those without light arcs into ``settled`` (after
        boxes[3] vertices; :func:`.cpu_sssp_piles._split_far`), the others still waiting into
        ``kept`` (leftovers dropped). ``lows``: ``threads`` slots of scratch. Returns (near count,
        kept count, bound, the smallest ordered value kept); boxes[3] counts the settled."""
        if least == _ALL:  # only leftovers
            return 0, 0, np.inf, _ALL
        bound = _bound(_value(least), delta)
        if parallel and nfar >= parallel_arcs and threads > 1:
            boxes[0], boxes[1], boxes[2] = 0, 0, 0
            _split_far_parallel(key, where, far, nfar, bound, near, kept, light_indptr, settled, seen, stamp, boxes,
                                threads, lows)
            return boxes[1], boxes[2], bound, lows[:threads].min()
        f, nk, ns, low = _split_far(key, where, far, nfar, bound, near, kept, light_indptr, settled[boxes[3]:], seen,
                                    stamp)
        boxes[3] += ns
        return f, nk, bound, low
    return _next_bucket


_next_bucket_serial, _next_bucket_parallel = serial_and_parallel(_make_next_bucket)


@njit(**_OPTS)
def _drop_leftovers(where, far, nfar, kept):
    """The far pile's vertices still waiting far, each once, into ``kept``. Returns how many."""
    nk = 0
    for i in range(nfar):
        v = far[i]
        if where[v] == _FAR:
            where[v] = 4  # seen: a second entry of v is a leftover too
            kept[nk] = v
            nk += 1
    for i in range(nk):
        where[kept[i]] = _FAR
    return nk


def _make_round(parallel):
    def _round(indptr, indices, weights, weighted, plus, key, where, cur, f, du, chunk_arcs, bound, settle, n,
               nxt, far, nfar, boxes, threads, parallel_arcs, seen, stamp, settled, scratch, far_low):
        """One round: the frontier cur[:f] taken (``settle``: the near pile, over the light CSR; else
        a settled bucket's vertices, over the whole CSR) and relaxed. ``boxes``: [counter, next near
        pile's fill, far pile's fill, settled's fill]; ``far_low``: a slot a thread (the smallest
        ordered value a vertex dropped to at or above ``bound``). Returns the arcs."""
        box = boxes[3:4]
        if parallel and f >= max(parallel_arcs, VERTEX_CHUNK) and threads > 1:
            total = _take_parallel(indptr, key, where, cur, f, du, chunk_arcs, settle, seen, stamp, settled, box)
        else:
            total = _take_serial(indptr, key, where, cur, f, du, chunk_arcs, settle, seen, stamp, settled, box)
        boxes[0], boxes[1], boxes[2] = 0, 0, nfar
        if parallel and total >= parallel_arcs and threads > 1:
            _relax_parallel(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, total, bound,
                            n, nxt, far, settled, boxes, threads, far_low, settle, seen, stamp)
        elif total:
            piles = (nxt, boxes[1:2], far, boxes[2:3], settled, box)
            _relax(indptr, indices, weights, weighted, plus, key, where, cur, du, chunk_arcs, f, np.int64(0), total,
                   bound, n, piles, scratch, far_low, 0, settle, seen, stamp)
            _drain(scratch, piles)
        return total
    return _round


_round_serial, _round_parallel = serial_and_parallel(_make_round)


def _make_delta_stepping(parallel):
    def delta_stepping(indptr, indices, weights, light_indptr, light_indices, light_weights, weighted, plus, frontier,
                       state, parent, track, delta, threads, parallel_arcs, key, where, near, far, settled, seen, du,
                       chunk_arcs):
        """Relax ``state[v] = min(state[v], state[u] + w)`` to the fixed point from ``frontier``
        (distinct vertices), increments non-negative, buckets ``delta`` wide; rounds with at least
        ``parallel_arcs`` arcs (and passes over at least that many vertices, and a vertex chunk)
        on ``threads`` threads. With ``track``, ``parent`` (n everywhere but a single frontier
        vertex, its own parent) gets the strict parents (n where a vertex has none; see the module).

        The light CSR holds the arcs lighter than ``delta`` (:func:`.cpu_sssp_piles.light_counts`,
        :func:`.cpu_sssp_piles.light_fill`, or their ``_range`` versions on one thread): rounds relax
        them while the near pile lasts; then, the bucket's values final, each vertex it took relaxes
        its whole row once (Meyer and Sanders's light and heavy arcs: a vertex taken again within a
        bucket scans only its light arcs again).

        Scratch: ``key`` 2n uint64, 16-byte aligned; ``where`` n uint8; ``near`` (2, n + 1) and
        ``far`` (2, 2n + 1) ids (the piles and their next versions: a round queues each vertex at
        most once, near or far, and the far pile is cleared of leftovers once it holds n);
        ``settled`` n + 1 ids; ``seen`` n uint32 (zeros); ``du`` n float64; ``chunk_arcs`` n /
        VERTEX_CHUNK + 2 int64. Returns (rounds, arcs scanned)."""
        n = state.size
        round_ = _round_parallel if parallel else _round_serial
        next_bucket = _next_bucket_parallel if parallel else _next_bucket_serial
        big = n >= parallel_arcs and threads > 1
        if parallel and big:
            _load(state, parent, track, key, where)
        else:
            _load_range(state, parent, track, key, where, np.int64(0), n)
        cur, nxt, far, kept = near[0], near[1], far[0], far[1]
        scratch = _scratch(cur)
        boxes = np.zeros(4, np.int64)
        far_low, lows = np.full(max(threads, 1), _ALL), np.empty(max(threads, 1), np.uint64)
        f, nfar, bound, kept_low = _start(frontier, state, where, delta, cur, far)
        rounds = arcs = 0
        # The round's flags and the bucket's stamp as run-time values of one type each: a call with a
        # literal True or False, or a stamp typed uint32 and then uint64 (uint32 + uint32 is uint64
        # in numba), compiled _round and what it calls once per combination (4 times). A range's
        # start is np.int64(0) likewise: a literal 0 compiles the callee once more beside its int64
        # specialization (the parallel loops call it with int64 starts).
        light, heavy = np.bool_(True), np.bool_(False)
        stamp = np.uint64(1)
        while True:
            if f == 0:  # the bucket is settled: each vertex it took scans its row, then the bound rises
                if boxes[3]:
                    rounds += 1
                    arcs += round_(indptr, indices, weights, weighted, plus, key, where, settled, boxes[3], du,
                                   chunk_arcs, bound, heavy, n, nxt, far, nfar, boxes, threads, parallel_arcs, seen,
                                   stamp, settled, scratch, far_low)
                    f, nfar = boxes[1], boxes[2]
                    boxes[3] = 0
                stamp += np.uint64(1)
                if f:  # a heavy arc's sum below the bound (rounding: bound = low + delta rounded): the
                    cur, nxt = nxt, cur  # bucket goes on, its vertices listed again for their heavy arcs
                    continue
                if nfar == 0:
                    break
                least = min(kept_low, far_low.min())
                far_low[:] = _ALL
                f, nfar, bound, kept_low = next_bucket(key, where, far, nfar, delta, cur, kept, light_indptr,
                                                       settled, seen, stamp, boxes, threads, parallel_arcs, least,
                                                       lows)
                far, kept = kept, far
                continue
            rounds += 1
            arcs += round_(light_indptr, light_indices, light_weights, weighted, plus, key, where, cur, f, du,
                           chunk_arcs, bound, light, n, nxt, far, nfar, boxes, threads, parallel_arcs, seen, stamp,
                           settled, scratch, far_low)
            f, nfar = boxes[1], boxes[2]
            cur, nxt = nxt, cur
            if nfar > n:  # the far pile may grow by n a round: drop its leftovers
                nfar = _drop_leftovers(where, far, nfar, kept)
                far, kept = kept, far
        if parallel and big:
            _store(state, parent, track, key)
        else:
            _store_range(state, parent, track, key, np.int64(0), n)
        return rounds, arcs
    return delta_stepping


delta_stepping_serial, delta_stepping_parallel = serial_and_parallel(_make_delta_stepping)

"""GPU (CuPy) operators, the same functions and signatures as :mod:`.cpu`.

A batch holds one chunk's arcs on the device as global int32 ids (decoded on the device from the
narrow local ids that were transferred) plus the weights in their stored type. Kernels are
compiled by :mod:`.gpu_module`; transfers (chunk uploads, result copies) live in
:mod:`.gpu_transfer`, traversals over device CSRs in :mod:`.gpu_traversal`, triangle counting
in :mod:`.gpu_wedges` and betweenness in :mod:`.gpu_brandes`, whose functions this module
re-exports so that the engine sees one kernel module per backend.
"""

from __future__ import annotations

from dataclasses import field

import cupy as cp
import numpy as np

from ooc_graph import config
from ooc_graph._records import record

from .gpu_module import _DEGREES, _LOCAL, _THREADS, _WEIGHT, _dummy, _dummy64, _kernel, _launch, _plus
from .gpu_transfer import STAGING_SLOTS, _stager, empty_host, empty_result, free_unused_memory, to_device, to_host  # noqa: F401
from .gpu_transfer import is_mapped, mapped, page_locked, to_host_behind, to_host_later  # noqa: F401
from .gpu_brandes import brandes  # noqa: F401
from .gpu_traversal import LEVEL_PARENTS, advance_levels, advance_min, bottom_up, csr_parents, flatnonzero  # noqa: F401
from .gpu_wedges import wedge_count  # noqa: F401
from .gpu_whole import bfs_tree, scratch_bytes, traverse_min, tree_parents, whole_traversals  # noqa: F401


@record
class Batch:
    dst_lo: int
    dst_hi: int
    src: cp.ndarray                # int32 global ids
    dst: cp.ndarray
    weight: cp.ndarray | None      # stored type (float32 or float64)
    # Events of a fresh upload, for profiling: "copy" (start, end) on the copy stream and
    # "compute_start" on the compute stream, before decoding.
    events: dict = field(default_factory=dict)
    # A source-blocked batch (:func:`source_blocked`): the bits of its source segments; else 0.
    segment_bits: int = 0

    @property
    def num_arcs(self) -> int:
        return int(self.src.size)

    @property
    def nbytes(self) -> int:
        return self.src.nbytes + self.dst.nbytes + (0 if self.weight is None else self.weight.nbytes)

    def _w(self):
        w = self.weight if self.weight is not None else _dummy()
        return w, int(self.weight is not None), _WEIGHT[w.dtype]


def prepare(src_local, dst_local, weight, src_base, dst_base, lengths, dst_lo, dst_hi, num_vertices) -> Batch:
    """Copy one chunk's local ids (and weights) to the device and decode them to global ids.

    Host arrays in pinned memory copy at full bus speed and asynchronously; the decoded arrays
    belong to the compute stream, the staging slot is released by an event after the decode.
    """
    m = int(src_local.size)
    starts = np.zeros(len(lengths), np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    table = np.concatenate([starts, np.asarray(src_base, np.int64), np.asarray(dst_base, np.int64)])
    host = {"src": src_local, "dst": dst_local, "table": table}
    if weight is not None:
        host["w"] = weight
    dev, slot = _stager().upload(host)
    events = dict(slot.events, compute_start=cp.cuda.get_current_stream().record())
    nb = len(lengths)
    src = cp.empty(m, dtype=np.int32)
    dst = cp.empty(m, dtype=np.int32)
    t = dev["table"]
    _launch(f"ooc_graph_decode<{_LOCAL[src_local.dtype]}>", m,
            (dev["src"], dev["dst"], t[:nb], t[nb:2 * nb], t[2 * nb:], np.int32(nb), src, dst, np.int64(m)))
    w = None if weight is None else dev["w"].copy()
    slot.done = cp.cuda.get_current_stream().record()
    return Batch(int(dst_lo), int(dst_hi), src, dst, w, events)


def marker(where: str = "compute"):
    """A CUDA event on the compute stream (``where="copy"``: the copy stream), for profiling."""
    return (_stager().stream if where == "copy" else cp.cuda.get_current_stream()).record()


def seconds_between(a, b) -> float:
    """Seconds from event ``a`` to event ``b`` (both must have completed)."""
    return cp.cuda.get_elapsed_time(a, b) / 1e3


def resident(batch: Batch) -> Batch:
    """A batch about to be kept on the device for every pass, in its fastest layout (config
    ``gpu.sort_resident``: sorted by destination)."""
    if not config.get().gpu.sort_resident or batch.num_arcs < 2:
        return batch
    order = cp.argsort(batch.dst)  # CUB radix sort
    return Batch(batch.dst_lo, batch.dst_hi, batch.src[order], batch.dst[order],
                 None if batch.weight is None else batch.weight[order], batch.events)


# GraphCage cache blocking for passes over every arc (pull_sum), in segments of 2**segment_bits
# source vertices (config gpu.segment_bits, with its measurements).
_KEY_BITS = 63  # (segment, destination, source) packed into one int64 key where they fit


def source_blocked(batches, num_vertices: int):
    """One batch holding every arc of ``batches`` in source-blocked order (no weights: for
    operators that ignore them), or None when x fits one segment and blocking gains nothing.
    Needs about 24 bytes per arc of device memory while it is built."""
    seg = config.get().gpu.segment_bits
    if num_vertices <= 1 << seg:
        return None
    bits = max(int(num_vertices - 1).bit_length(), 1)
    if 3 * bits - seg <= _KEY_BITS:  # sort the packed keys themselves: no gather
        key = cp.empty(sum(b.num_arcs for b in batches), dtype=cp.int64)
        at = 0
        for b in batches:  # one kernel packs each batch (CuPy's operators loaded ~12 modules on a first call)
            _launch("ooc_graph_block_keys", b.num_arcs, (b.src, b.dst, key[at:], np.int32(seg), np.int32(bits),
                                                         np.int64(b.num_arcs)))
            at += b.num_arcs
        key.sort()
        src, dst = cp.empty(key.size, dtype=cp.int32), cp.empty(key.size, dtype=cp.int32)
        _launch("ooc_graph_block_ids", key.size, (key, src, dst, np.int32(bits), np.int64(key.size)))
        del key
    else:
        src = cp.concatenate([b.src for b in batches])
        dst = cp.concatenate([b.dst for b in batches])
        order = cp.argsort(((src.astype(cp.int64) >> seg) << 31) | dst)
        src, dst = src[order], dst[order]
    return Batch(0, int(num_vertices), src, dst, None, segment_bits=seg)


def split_sources(batch: Batch, lo: int, hi: int):
    """``(own, others)`` of a :func:`source_blocked` batch: ``own`` its arcs from the source
    segments that lie within ``[lo, hi)`` (one slice: arcs are sorted by segment first), ``others``
    the slices before and after it. Views, no copy."""
    seg = batch.segment_bits
    first, last = -(-lo >> seg), hi >> seg  # segments [first, last) lie within
    if last <= first or not batch.num_arcs:
        return _slice(batch, 0, 0), [batch]
    segment = batch.src >> seg
    a, b = (int(v) for v in cp.searchsorted(segment, cp.asarray([first, last], dtype=segment.dtype)))
    return _slice(batch, a, b), [_slice(batch, 0, a), _slice(batch, b, batch.num_arcs)]


def _slice(batch: Batch, a: int, b: int) -> Batch:
    return Batch(batch.dst_lo, batch.dst_hi, batch.src[a:b], batch.dst[a:b],
                 None if batch.weight is None else batch.weight[a:b], segment_bits=batch.segment_bits)


def destination_stripes(batch: Batch, num_vertices: int, stripes: int) -> list:
    """The arcs of a :func:`source_blocked` batch by destination: ``[(lo, hi, parts)]`` for
    ``stripes`` equal vertex ranges ``[lo, hi)``, ``parts`` the batch's slices (one per source
    segment holding any) whose destinations lie in it: a pull over them gives the sums of
    ``[lo, hi)``, each from L2 as in a whole pass. Views, no copy; one pass over the arcs."""
    stripe = max(1, -(-num_vertices // stripes))
    stripes = -(-num_vertices // stripe)
    seg = batch.segment_bits
    segments = ((max(num_vertices, 1) - 1) >> seg) + 1
    cells = segments * stripes
    starts = cp.empty(cells + 1, dtype=np.int64)
    _launch("ooc_graph_cell_starts", batch.num_arcs + 1,
            (batch.src, batch.dst, np.int32(seg), np.int64(stripe), np.int32(stripes), starts,
             np.int64(cells), np.int64(batch.num_arcs)))
    starts = starts.get()
    out = []
    for j in range(stripes):
        cuts = [(int(starts[s * stripes + j]), int(starts[s * stripes + j + 1])) for s in range(segments)]
        out.append((j * stripe, min((j + 1) * stripe, num_vertices), [_slice(batch, a, b) for a, b in cuts if b > a]))
    return out


def pull_sum(batch: Batch, x, out) -> None:
    _launch("ooc_graph_pull_sum", batch.num_arcs, (batch.src, batch.dst, x, out, np.int64(batch.num_arcs)))


def relax_min(batch: Batch, state, plus, changed, any_changed=None) -> None:
    w, use_w, wt = batch._w()
    flag = any_changed if any_changed is not None else _scratch_flag()
    _launch(f"ooc_graph_relax_min<{wt}>", batch.num_arcs,
            (batch.src, batch.dst, w, np.int32(use_w and plus is None), _plus(plus), state.view(cp.uint64),
             changed, flag, np.int64(batch.num_arcs)))


@cp.memoize(for_each_device=True)
def _scratch_flag():
    return cp.zeros(1, dtype=np.uint8)


def hook_min(batch: Batch, parent, changed) -> None:
    _launch("ooc_graph_hook_min", batch.num_arcs, (batch.src, batch.dst, parent, changed, np.int64(batch.num_arcs)))


def tight_parent(batch: Batch, dist, plus, parent, resolved) -> None:
    w, use_w, wt = batch._w()
    res = resolved if resolved is not None else _dummy().view(cp.uint8)
    _launch(f"ooc_graph_tight_parent<{wt}>", batch.num_arcs,
            (batch.src, batch.dst, w, np.int32(use_w and plus is None), _plus(plus), dist, parent,
             res.view(cp.uint8), np.int32(resolved is None), np.int64(batch.num_arcs)))


def scatter_min(state, ids, values, changed) -> None:
    """``state[ids] = min(state[ids], values)`` (repeated ids allowed, non-negative values as
    every min-relaxed state here; negative ids are padding, skipped); ``changed[ids] = 1``:
    merging other workers' changes."""
    _launch("ooc_graph_scatter_min", int(ids.size),
            (ids, values, state.view(cp.uint64), changed, np.int64(ids.size)))


@cp.memoize(for_each_device=True)
def _merge_level_kernel():
    return cp.ElementwiseKernel(
        "raw uint8 bits, int64 stride, int32 ranks, float64 value", "float64 state, uint8 changed",
        """
        const unsigned char mask = 0x80 >> (i & 7);  // packbits' order: the first vertex is the high bit
        bool any = false;
        for (int r = 0; r < ranks; r++) any |= (bits[r * stride + (i >> 3)] & mask) != 0;
        if (any) { changed = 1; if (value < state) state = value; }
        """, "ooc_graph_merge_level")


def merge_level(state, changed, bits, ranks: int, value: float) -> None:
    """``changed |= any rank's flag``, then ``state = min(state, value)`` where changed: the flags
    of ``ranks`` ranks packed by ``cupy.packbits`` back to back in ``bits`` (merging a level of
    a level-synchronous traversal)."""
    _merge_level_kernel()(bits, np.int64(bits.size // ranks), np.int32(ranks), float(value), state, changed)


# Blocks of the PageRank step: enough to fill the GPU, few partial sums to add.
_STEP_BLOCKS = 1024


@cp.memoize(for_each_device=True)
def _partials():
    return cp.empty(2 * _STEP_BLOCKS, dtype=np.float64)


def pagerank_step(y, x, p, inv, alpha: float, lost, contrib, out=None):
    """One PageRank update of a vertex range (see :func:`.cpu.pagerank_step`) into ``out``
    (default: ``x``, in place); one fused pass over the arrays. ``lost`` is a float or a device
    array whose first element is it (the previous step's dangling sum, not yet on the host).
    ``contrib=None``: the contributions are not written (a pull may still be reading them).
    Returns device scalars ``(err, dangling)``."""
    m = int(x.size)
    partial = _partials()
    if m:
        blocks = min(_STEP_BLOCKS, (m + _THREADS - 1) // _THREADS)
        use_p = not np.isscalar(p)
        on_device = isinstance(lost, cp.ndarray)
        _kernel("ooc_graph_pagerank_step")(
            (blocks,), (_THREADS,),
            (y, x, x if out is None else out, p if use_p else _dummy64(), np.float64(0.0 if use_p else p),
             np.int32(use_p), inv, np.float64(alpha), lost if on_device else _dummy64(),
             np.float64(0.0 if on_device else lost), np.int32(on_device),
             _dummy64() if contrib is None else contrib, np.int32(contrib is not None), partial, np.int64(m)))
        sums = partial[:2 * blocks].reshape(blocks, 2).sum(axis=0)
    else:
        sums = cp.zeros(2, dtype=np.float64)
    return sums


def inverse_degree(degree) -> tuple:
    """``(1 / degree, how many are 0)``: PageRank's inverse out-degrees (0 where a vertex dangles)
    as float64 on the device, from integer degrees or float64 sums of out-weights, in one pass
    (:func:`.cpu.inverse_degree`'s values, bit for bit)."""
    degree = cp.ascontiguousarray(degree)
    if degree.dtype not in _DEGREES:
        degree = degree.astype(np.float64)
    m = int(degree.size)
    inv, dangling = cp.empty(m, dtype=np.float64), cp.zeros(1, dtype=np.uint64)
    if m:
        _kernel(f"ooc_graph_inverse_degree<{_DEGREES[degree.dtype]}>")(
            (min(_STEP_BLOCKS, (m + _THREADS - 1) // _THREADS),), (_THREADS,), (degree, inv, dangling, np.int64(m)))
    return inv, int(dangling.get()[0])


# -- the general edge operator ----------------------------------------------------------------
# One kernel per (expression, operand dtypes, monoid), generated by edge_codegen and compiled on
# first use on each device (never at import).
_SRC = ("var", "src")


@cp.memoize(for_each_device=True)
def _edge_kernel(name: str, source: str):
    return cp.RawKernel(source, name, options=("-std=c++14",))


def _edge_launch(batch: Batch, tree, monoid, xs, xd, active, out, y=None) -> None:
    from . import edge_codegen
    m = batch.num_arcs
    if not m:
        return
    w = batch.weight
    name, source = edge_codegen.kernel_source(tree, xs.dtype, xd.dtype, None if w is None else w.dtype,
                                              out.dtype, monoid, None if y is None else y.dtype)
    mask = active if active is not None else _dummy().view(cp.uint8)
    _edge_kernel(name, source)(((m + _THREADS - 1) // _THREADS,), (_THREADS,),
                               (batch.src, batch.dst, w if w is not None else _dummy64(), xs, xd,
                                y if y is not None else _dummy64(), mask, np.int32(active is not None), out,
                                np.int64(m)))


def edge_combine(batch: Batch, tree, monoid: str, xs, xd, active, out, y=None) -> None:
    """As :func:`.cpu.edge_combine`: ``out[v] = monoid(out[v], f(xs[u], xd[v], w, y[u], y[v]))``
    over the arcs with an active source. Sums of ``src`` (float64) use the pull-sum kernel."""
    if (monoid == "sum" and tree == _SRC and active is None and xs.dtype == np.float64
            and out.dtype == np.float64):
        pull_sum(batch, xs, out)
        return
    _edge_launch(batch, tree, monoid, xs, xd, active, out, y)


def edge_values(batch: Batch, tree, xs, xd, active, y=None):
    """As :func:`.cpu.edge_values`: ``(destination int64, f float64)`` of the arcs with an active
    source."""
    values = cp.empty(batch.num_arcs, dtype=np.float64)
    _edge_launch(batch, tree, "store", xs, xd, None, values, y)
    dst = batch.dst.astype(cp.int64)
    if active is not None:
        keep = active[batch.src] != 0
        return dst[keep], values[keep]
    return dst, values

"""The general edge operator (DESIGN decision 8): ``out[v] = ⊕ f(x[u], x[v], w)`` over arcs u→v
(and ``y[u]``, ``y[v]`` of a second per-vertex array where one is given).

:func:`edge_map` is :meth:`Engine.edge_map`; the other operators of :mod:`.core` are special cases
of it. ``f`` is an expression or a named function (:mod:`.expression`), ``⊕`` a monoid: ``sum``,
``min``, ``max``, ``or``, or ``most_frequent`` (label propagation). A pass runs over all arcs or
over those whose source is in a frontier (chunks with no active source interval are skipped, as
:meth:`Engine.propagate_min` does), along the arcs (``direction="in"``: into each arc's
destination, streaming the CEL), against them (``"out"``: into each arc's source, streaming the
out-CSR of the vertices this engine owns), or both.

Which streams: ``"in"`` reads the CEL chunks of the engine's share, as every operator does.
``"out"`` on a directed graph reads the out-CSR (``csr/out``: rows are sources, so each worker
reads the rows of its own vertices and writes only them) in chunks of at most the engine's chunk
length, cached like CEL chunks under the same budget; it cannot skip chunks by frontier, since a
row's arcs lead anywhere. On an undirected graph every edge is stored as two arcs, so ``"out"``
and ``"both"`` are the ``"in"`` pass.

A frontier whose arcs are fewer than ``config`` ``traversal.advance_fraction`` of the graph is
advanced over the CSR rows of its vertices instead (out-CSR along the arcs, in-CSR against them), as
:meth:`Engine.propagate_min` does, when the CSRs fit the budget: in one process on the CPU for
now (the GPU and distributed runs take frontier passes; see :func:`_advance`).

In a distributed run every worker processes its own arcs, writes only its own vertices
(:attr:`Engine.owned`) and, unless ``gather=False``, ends with ``gather_owned``: the runtime needs
no new collective.

``most_frequent`` cannot be combined by atomics. A destination's in-arcs all lie in its sub-graph,
which is contiguous in the CEL but may span any number of chunks; its out-arcs are one row of the
out-CSR, which may span reverse chunks too. Each chunk gives ``(destination, value)`` pairs,
sorted and counted into runs ``(destination, value, count)``; runs wait, merged, until no later
chunk can hold an arc of their destination (the next chunk's first sub-graph starts after it, or
the next reverse chunk's first row does), and then each destination takes the value of largest
count, ties to the smallest value. Pending runs are at most the distinct (destination, value)
pairs of one sub-graph and one reverse chunk.
"""

from __future__ import annotations

import time

import numpy as np

from ooc_graph import config
from ooc_graph.errors import ParameterError, choice
from ooc_graph.store import _format as F

from .expression import MONOIDS, compile_function, variables

DIRECTIONS = ("in", "out", "both")
_LINEAR = (("var", "src"), ("bin", "*", ("var", "src"), ("var", "w")),
           ("bin", "*", ("var", "w"), ("var", "src")))


def identity(monoid: str, dtype):
    """The neutral value of ``monoid`` in ``dtype``."""
    dtype = np.dtype(dtype)
    if monoid == "min":
        return np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    if monoid == "max":
        return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
    return 0


def edge_map(engine, f, x=None, *, monoid: str = "sum", out=None, x_dst=None, y=None, frontier=None,
             direction: str = "in", gather: bool = True):
    """See :meth:`ooc_graph.engine.Engine.edge_map`."""
    if monoid not in MONOIDS:
        raise choice("monoid", monoid, MONOIDS)
    if direction not in DIRECTIONS:
        raise choice("direction", direction, DIRECTIONS)
    expr = compile_function(f)
    g, xp, k = engine.graph, engine.backend.xp, engine.backend.kernels
    n = g.num_vertices
    uses = expr.uses
    if x is None and uses & {"src", "dst"}:
        raise ParameterError(f"edge function {expr.text!r} reads src or dst but no x was given")
    if y is None and uses & {"y_src", "y_dst"}:
        raise ParameterError(f"edge function {expr.text!r} reads y_src or y_dst but no y was given")
    xs = _vertex_values(xp, x, n, "x") if x is not None else xp.zeros(1, dtype=np.float64)
    xd = _vertex_values(xp, x_dst, n, "x_dst") if x_dst is not None else xs
    y = _vertex_values(xp, y, n, "y") if y is not None else None
    if monoid == "most_frequent" and x_dst is None and x is None:
        xd = xp.zeros(n, dtype=np.float64)
    lo, hi = engine.owned
    if out is None:
        if monoid == "most_frequent":
            out = xd.astype(np.float64) if xd.size == n else xp.full(n, np.nan)
        else:
            dtype = np.uint8 if monoid == "or" else np.float64
            out = xp.full(n, identity(monoid, dtype), dtype=dtype)
    elif getattr(out, "shape", None) != (n,):
        raise ParameterError(f"out must be an array of {n} values (got shape {getattr(out, 'shape', None)})")
    engine.comm.join()  # x may be a gather still on its way (queued without waiting)
    active = intervals = None
    if frontier is not None:
        active = _frontier_mask(engine, frontier)
        intervals = _active_intervals(engine, active)
    if not g.directed:
        direction = "in"  # every edge is two arcs: one pass sees each neighbour once
    t = time.perf_counter()
    tree = expr.tree
    if monoid == "most_frequent":
        _most_frequent(engine, tree, xs, xd, active, intervals, out, direction, y)
    elif active is not None and _advance(engine, tree, monoid, xs, xd, active, out, direction, y):
        pass  # a small frontier's arcs, from the CSR
    else:
        if monoid == "sum" and active is not None and tree in _LINEAR:
            xs, active = xp.where(active != 0, xs, 0.0), None  # masked once, not per chunk
        whole = None
        if (monoid == "sum" and tree == ("var", "src") and active is None and direction == "in"
                and xs.dtype == np.float64 and out.dtype == np.float64):
            whole = engine._whole_graph()  # the GPU's cache-blocked copy, as pull_sum uses
        for d in (("in", "out") if direction == "both" else (direction,)):
            if whole is not None:
                batches = engine._whole_pass(whole)
            else:
                batches = engine.batches(intervals) if d == "in" else reverse_batches(engine)
            for batch in batches:
                k.edge_combine(batch, tree, monoid, xs, xd, active, out, y)
    if gather:
        engine._exchange(engine.comm.gather_owned, out)
    engine.stats.seconds_computing += time.perf_counter() - t
    return out


def _advance(engine, tree, monoid, xs, xd, active, out, direction, y=None) -> bool:
    """A frontier pass as an advance over the CSR rows of the active vertices, when their arcs
    are fewer than ``traversal.advance_fraction`` of the graph (as :meth:`Engine.propagate_min`
    chooses) and the CSRs fit the budget: along the arcs the out-CSR rows of the frontier, against
    them the in-CSR rows. One process on the CPU only, for now: a GPU would need the scatter
    kernels (``cupyx.scatter_add``/``_min``/``_max``) tested on the device, and a distributed run
    each worker's share of the frontier. Returns whether it ran."""
    g, xp = engine.graph, engine.backend.xp
    if xp is not np or engine.comm.size != 1:
        return False
    sides = {"in": ("out",), "out": ("in",), "both": ("out", "in")}[direction]
    frontier = np.flatnonzero(active)
    degrees = {"out": engine.vertex_array("out_degree"), "in": engine.vertex_array("in_degree")}
    arcs = int(sum(int(degrees[side][frontier].sum()) for side in sides))
    if arcs >= config.get().traversal.advance_fraction * g.num_arcs or \
            not all(engine.csr(side) is not None for side in sides):
        return False
    t, before = time.perf_counter(), engine.stats.as_dict()
    for side in sides:
        indptr, indices, w, _ = engine.csr(side)
        starts = np.asarray(indptr[frontier], np.int64)
        counts = np.asarray(indptr[frontier + 1], np.int64) - starts
        total = int(counts.sum())
        if not total:
            continue
        first = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        pos = first + np.arange(total)  # the rows' arcs, one after the other
        u = np.repeat(frontier, counts)  # the active end of each arc
        v = np.asarray(indices[pos], np.int64)  # the end that receives
        env = {"w": 1.0 if w is None else w[pos]}
        uses = variables(tree)
        if "src" in uses:
            env["src"] = xs[u]
        if "dst" in uses:
            env["dst"] = xd[v]
        if "y_src" in uses:
            env["y_src"] = y[u]
        if "y_dst" in uses:
            env["y_dst"] = y[v]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            values = np.broadcast_to(engine.backend.kernels.evaluate(tree, env), (total,))
        if monoid == "or":
            out[v[values != 0]] = 1
        elif monoid == "sum":
            out += np.bincount(v, weights=values.astype(np.float64), minlength=out.size).astype(out.dtype, copy=False)
        else:
            (np.minimum if monoid == "min" else np.maximum).at(out, v, values.astype(out.dtype, copy=False))
    engine.stats.advances += 1
    engine.stats.arcs_processed += arcs
    engine.stats.record("advance", time.perf_counter() - t, before, arcs=arcs, clock=engine.clock)
    return True


def _vertex_values(xp, x, n, name):
    x = xp.asarray(x)
    if x.shape != (n,):
        raise ParameterError(f"{name} must hold one value per vertex ({n}; got shape {x.shape})")
    if x.dtype == np.bool_:
        return x.view(np.uint8)
    if x.dtype not in (np.float64, np.float32, np.int64, np.int32, np.uint8):
        return x.astype(np.float64)
    return x


def _frontier_mask(engine, frontier):
    """A uint8 mask of the active vertices from a boolean/uint8 mask or an array of vertex ids."""
    xp, n = engine.backend.xp, engine.graph.num_vertices
    f = xp.asarray(frontier)
    if f.dtype in (np.bool_, np.uint8) and f.shape == (n,):
        return f.view(np.uint8) if f.dtype == np.bool_ else f
    ids = f.astype(np.int64).ravel()
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ParameterError(f"frontier holds vertex ids outside 0..{n - 1}")
    mask = xp.zeros(n, dtype=np.uint8)
    mask[ids] = 1
    return mask


def _active_intervals(engine, active) -> np.ndarray:
    """Which intervals hold an active vertex (one small device→host copy)."""
    size, k = engine.graph.interval_size, engine._k
    xp = engine.backend.xp
    padded = xp.zeros(k * size, dtype=np.uint8)
    padded[:active.size] = active
    return np.asarray(engine.backend.to_host(padded.reshape(k, size).max(axis=1))).astype(bool)


# -- reverse passes: the out-CSR rows of the owned vertices ---------------------------------------
def _reverse_plan(engine):
    """``(indptr, chunks)``: the out-CSR row pointers (host, read once per engine) and the arc
    ranges ``(a, b)`` of the owned rows cut into chunks of at most the engine's chunk length."""
    plan = getattr(engine, "_edge_map_reverse", None)
    if plan is None:
        g = engine.graph
        indptr = np.asarray(g._read(F.CSR.format(side="out", part="indptr")), np.int64)  # n+1: vertex state
        lo, hi = engine.owned
        a, b = int(indptr[lo]), int(indptr[hi])
        step = max(1, engine.chunk_arcs)
        plan = engine._edge_map_reverse = (indptr, [(s, min(s + step, b)) for s in range(a, b, step)])
    return plan


def _load_reverse(engine, a: int, b: int):
    """Out-CSR arcs [a, b) as a batch of the transposed graph: source = the arc's head, destination
    = its tail (the row), so every kernel applies unchanged."""
    g, k = engine.graph, engine.backend.kernels
    t = time.perf_counter()
    indptr, _ = _reverse_plan(engine)
    r0 = int(np.searchsorted(indptr, a, side="right")) - 1
    r1 = int(np.searchsorted(indptr, b - 1, side="right")) - 1
    rows = np.arange(r0, r1 + 1)
    counts = np.clip(indptr[rows + 1], a, b) - np.clip(indptr[rows], a, b)
    # The store has no public range read of the CSR; this reads one slice of its datasets.
    ids = np.asarray(g._read(F.CSR.format(side="out", part="indices"), slice(a, b)))
    local = np.uint32 if g.num_vertices <= np.iinfo(np.uint32).max else np.uint64
    src = ids.astype(local)
    dst = np.repeat(np.arange(rows.size, dtype=local), counts)
    w = None
    name = F.CSR.format(side="out", part="weights")
    if g.weighted:
        with g._file() as h5:  # reopens a detached graph
            present = name in h5
        if present:
            w = np.asarray(g._read(name, slice(a, b)))
    engine.stats.bytes_read += ids.nbytes + (0 if w is None else w.nbytes)
    batch = k.prepare(src, dst, w, np.zeros(1, np.int64), np.array([r0], np.int64), np.array([b - a], np.int64),
                      r0, r1 + 1, g.num_vertices)
    engine.stats.seconds_reading += time.perf_counter() - t
    return batch


def reverse_batches(engine, *, indexed: bool = False):
    """One pass over the owned rows of the out-CSR as batches of the transposed graph (cached like
    CEL chunks); ``indexed``: ``((first row, next chunk's first row), batch)`` pairs."""
    _, chunks = _reverse_plan(engine)
    indptr = engine._edge_map_reverse[0]
    stats = engine.stats
    stats.passes += 1
    before, t = stats.as_dict(), time.perf_counter()
    resident = getattr(engine.backend.kernels, "resident", None)
    lo, hi = engine.owned
    for j, (a, b) in enumerate(chunks):
        batch, _ = engine.cache.get(("reverse", a, b), lambda a=a, b=b: _load_reverse(engine, a, b), resident)
        stats.chunks_processed += 1
        stats.arcs_processed += batch.num_arcs
        if indexed:
            first = int(np.searchsorted(indptr, a, side="right")) - 1
            nxt = hi if j + 1 == len(chunks) else int(np.searchsorted(indptr, chunks[j + 1][0], side="right")) - 1
            yield (first, nxt), batch
        else:
            yield batch
    engine._sync()
    stats.record("pass", time.perf_counter() - t, before, clock=engine.clock)


# -- most_frequent ------------------------------------------------------------------------------
def _runs(xp, dst, value, count):
    """Merge (dst, value, count) triples with equal (dst, value), sorted by (dst, value)."""
    if dst.size == 0:
        return dst, value, count
    order = xp.lexsort(xp.stack([value, dst.astype(np.float64)]))
    dst, value, count = dst[order], value[order], count[order]
    new = xp.ones(dst.size, dtype=bool)
    new[1:] = (dst[1:] != dst[:-1]) | (value[1:] != value[:-1])
    starts = xp.flatnonzero(new)
    total = xp.cumsum(count)
    ends = xp.concatenate([starts[1:], xp.asarray([dst.size], dtype=starts.dtype)]) - 1
    sums = total[ends] - xp.concatenate([xp.zeros(1, dtype=total.dtype), total[starts[1:] - 1]])
    return dst[starts], value[starts], sums


def _decide(xp, dst, value, count, out) -> None:
    """``out[v]`` = the value of largest count among v's runs, ties to the smallest value."""
    if dst.size == 0:
        return
    order = xp.lexsort(xp.stack([value, -count.astype(np.float64), dst.astype(np.float64)]))
    dst, value = dst[order], value[order]
    first = xp.ones(dst.size, dtype=bool)
    first[1:] = dst[1:] != dst[:-1]
    out[dst[first]] = value[first].astype(out.dtype, copy=False)


class _Pending:
    """Runs waiting for their destinations' last arcs."""

    def __init__(self, xp):
        self.xp = xp
        self.parts = []
        self.size = 0
        self.compacted = 0

    def add(self, dst, value):
        xp = self.xp
        if not dst.size:
            return
        self.parts.append(_runs(xp, dst, value.astype(np.float64), xp.ones(dst.size, dtype=np.int64)))
        self.size += int(self.parts[-1][0].size)
        if self.size > 2 * max(self.compacted, 1 << 16):
            self._compact()

    def _compact(self):
        xp = self.xp
        if len(self.parts) > 1:
            self.parts = [_runs(xp, *(xp.concatenate([p[i] for p in self.parts]) for i in range(3)))]
        self.size = self.compacted = int(self.parts[0][0].size) if self.parts else 0

    def flush(self, below: int, out) -> None:
        """Decide every destination < ``below`` and keep the rest."""
        if not self.parts:
            return
        self._compact()
        dst, value, count = self.parts[0]
        done = dst < below
        _decide(self.xp, dst[done], value[done], count[done], out)
        keep = ~done
        self.parts = [(dst[keep], value[keep], count[keep])]
        self.size = self.compacted = int(keep.sum())


def _most_frequent(engine, tree, xs, xd, active, intervals, out, direction, y=None) -> None:
    xp, k, g = engine.backend.xp, engine.backend.kernels, engine.graph
    lo, hi = engine.owned
    pending = _Pending(xp)
    reverse = iter(reverse_batches(engine, indexed=True)) if direction in ("out", "both") else iter(())
    waiting = [next(reverse, None)]  # the next reverse chunk, not yet processed

    def take_reverse(before: int) -> None:
        """Process the reverse chunks whose first row is below ``before`` (the forward side's
        boundary), deciding after each what both sides have finished."""
        while waiting[0] is not None and waiting[0][0][0] < before:
            (_, following), batch = waiting[0]
            pending.add(*k.edge_values(batch, tree, xs, xd, active, y))
            waiting[0] = next(reverse, None)
            pending.flush(min(before, following), out)
        pending.flush(before if waiting[0] is None else min(before, waiting[0][0][0]), out)

    if direction in ("in", "both"):
        size, bounds = g.interval_size, engine._chunk_dst
        for i, batch in engine.batches(intervals, indexed=True):
            pending.add(*k.edge_values(batch, tree, xs, xd, active, y))
            boundary = hi if i + 1 == len(bounds) else min(bounds[i + 1][0] * size, hi)
            take_reverse(boundary)
    take_reverse(hi + 1)

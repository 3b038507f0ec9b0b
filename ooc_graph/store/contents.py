"""The content checks: what the kernels index with, checked before its first use.

A crafted or damaged store must not make a compiled kernel read or write out of bounds, nor give
a wrong answer quietly, so the values the kernels index with are checked once per store, before
the first read of each group of datasets (lazily: opening a large store stays quick, and an
algorithm that reads only the CSR never pays for the CEL):

- ``degree:<side>``: ``csr/<side>/indptr`` starts at 0 and never decreases (it ends at the arc
  count: checked at open), and the side's degrees are its differences;
- ``csr:<side>``: the above, ``csr/<side>/indices`` within ``0..n-1``, weights finite and within
  ``min_weight..max_weight``;
- ``cel``, ``cel_aug``: every local id within its block's interval, weights as above (the block
  tables are checked where they are read: at open, and for the augmentation with it).

Vectorised, range by range (bounded memory: a few ranges of about a million elements at once),
on threads (NumPy's reductions and the store's direct reads release the GIL). A range of local
ids whose type cannot exceed its intervals (``uint16`` ids in intervals of 65,536) is not even
read. A store that passed is recorded (:mod:`.stamps`) so that later opens skip the check; the
first failure is a one-line :class:`StoreError` naming the dataset, the position and the value.
"""

from __future__ import annotations

import time

import numpy as np

from ooc_graph._parallel import ordered_map, workers
from ooc_graph.errors import StoreError
from ooc_graph.partitioning.cel import chunk_layout

from . import _format as F
from . import stamps

GROUPS = ("degree:out", "degree:in", "csr:out", "csr:in", "cel", "cel_aug")
VERTICES_PER_RANGE = 1 << 20
ARCS_PER_RANGE = 1 << 21
THREADS = max(1, min(4, workers()))
_REQUIRES = {"csr:out": "degree:out", "csr:in": "degree:in"}


def group_of(name: str, directed: bool) -> str | None:
    """The group of checks that reading dataset ``name`` needs, or None (checked at open, or
    when read: the interval and block tables, labels, results)."""
    if name in (F.OUT_DEGREE, F.IN_DEGREE):
        return f"degree:{_side('out' if name == F.OUT_DEGREE else 'in', directed)}"
    if name.startswith("csr/"):
        _, side, part = name.split("/", 2)
        return f"{'degree' if part == 'indptr' else 'csr'}:{_side(side, directed)}"
    if name in (F.CEL_SRC, F.CEL_DST, F.CEL_WEIGHT):
        return "cel"
    if name in (F.AUG_SRC, F.AUG_DST, F.AUG_WEIGHT):
        return "cel_aug"
    return None


def _side(side: str, directed: bool) -> str:
    return side if directed else "out"  # undirected: one CSR (csr/in/* link to csr/out/*)


def ensure(graph, group: str, stamp: tuple) -> frozenset:
    """Check ``group`` (and what it builds on) of ``graph``'s file, whose stamp is ``stamp``,
    unless a record says it passed; returns the groups now known to pass."""
    done = set(stamps.trusted(stamp))
    taken = time.time_ns()  # before any data is read (stamps.RACY_NS)
    for g in (_REQUIRES.get(group), group):
        if g is not None and g not in done:
            CHECKS[g.split(":")[0]](graph, *g.split(":")[1:])
            done.add(g)
    stamps.record(stamp, done, taken)
    return frozenset(done)


def _fail(graph, name: str, position: int, value, why: str) -> StoreError:
    return StoreError(f"{graph.path}: dataset {name} holds {value!r} at position {position}, {why}; the store is "
                      "damaged or was not written by ooc_graph (convert the graph again)")


def _run(graph, check, ranges) -> None:
    """``check(range)`` of each range on the threads; raises the first failure in store order."""
    for bad in ordered_map(check, ranges, THREADS):
        if bad is not None:
            raise _fail(graph, *bad)


def _ranges(total: int, step: int):
    return [(a, min(a + step, total)) for a in range(0, total, step)]


def _read(graph, name, a, b):
    return graph._fetch_ranges(name, [(a, b - a)], np.empty)


def _degrees(graph, side: str) -> None:
    indptr = F.CSR.format(side=side, part="indptr")
    degree = F.OUT_DEGREE if side == "out" and graph.directed else F.IN_DEGREE

    def check(r):
        a, b = r
        p, d = _read(graph, indptr, a, b + 1), _read(graph, degree, a, b)
        if a == 0 and p[0] != 0:
            return indptr, 0, int(p[0]), "not 0"
        steps = np.diff(p)
        if (steps < 0).any():
            at = int(np.argmax(steps < 0))
            return indptr, a + at + 1, int(p[at + 1]), f"below the offset before it ({int(p[at])})"
        if not np.array_equal(steps, d):
            at = int(np.argmax(steps != d))
            return degree, a + at, int(d[at]), f"but {indptr} gives that vertex {int(steps[at])} arcs"
        return None
    _run(graph, check, _ranges(graph.num_vertices, VERTICES_PER_RANGE))


def _weights_bad(graph, name: str, w: np.ndarray, a: int):
    """The first weight outside ``min_weight..max_weight`` (or not a number), as a failure."""
    lo, hi = float(graph.attrs["min_weight"]), float(graph.attrs["max_weight"])
    if w.size and (w.min() >= lo) and (w.max() <= hi):  # NaN compares false: found below
        return None
    out = ~((w >= lo) & (w <= hi))
    if not out.any():
        return None
    at = int(np.argmax(out))
    return name, a + at, float(w[at]), f"outside min_weight..max_weight ({lo:g}..{hi:g})"


def _csr(graph, side: str) -> None:
    n = graph.num_vertices
    indices = F.CSR.format(side=side, part="indices")
    weights = F.CSR.format(side=side, part="weights") if graph.weighted else None

    def check(r):
        a, b = r
        ids = _read(graph, indices, a, b)
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            at = int(np.argmax((ids < 0) | (ids >= n)))
            return indices, a + at, int(ids[at]), f"outside the vertex ids 0..{n - 1}"
        return None if weights is None else _weights_bad(graph, weights, _read(graph, weights, a, b), a)
    _run(graph, check, _ranges(graph.num_arcs, ARCS_PER_RANGE))


def _cel(graph, which: str = "") -> None:
    aug = which == "aug"
    src, dst, weight = (F.AUG_SRC, F.AUG_DST, F.AUG_WEIGHT) if aug else (F.CEL_SRC, F.CEL_DST, F.CEL_WEIGHT)
    offsets, bsrc, bdst = graph.back_blocks if aug else graph.blocks
    offsets = np.asarray(offsets, np.int64)
    total = int(offsets[-1]) if offsets.size else 0
    lengths = np.diff(np.asarray(graph.intervals, np.int64))  # vertices of each interval
    top = np.iinfo(np.dtype(graph.attrs["local_id_dtype"])).max
    chunk = graph.chunk_arcs
    step = chunk * max(1, ARCS_PER_RANGE // chunk)  # whole HDF5 chunks

    def local_ids(name, a, b, starts, limit, keep):
        starts, limit = starts[keep], limit[keep]
        short = limit <= top  # intervals whose ids the type could exceed: the others need no look
        if not short.any():
            return None
        ids = _read(graph, name, a, b)
        most = np.maximum.reduceat(ids, starts)
        over = short & (most >= np.minimum(limit, top).astype(ids.dtype))
        if not over.any():
            return None
        block = int(np.argmax(over))
        first, bound = int(starts[block]), int(limit[block])
        at = first + int(np.argmax(ids[first:] >= bound))
        return name, a + at, int(ids[at]), f"outside its interval's local ids 0..{bound - 1}"

    def check(r):
        a, b = r
        layout = chunk_layout(offsets, bsrc, bdst, a, b)
        keep = layout.lengths > 0
        starts = np.cumsum(layout.lengths) - layout.lengths
        for name, intervals in ((src, layout.src_interval), (dst, layout.dst_interval)):
            bad = local_ids(name, a, b, starts, lengths[intervals], keep)
            if bad is not None:
                return bad
        return _weights_bad(graph, weight, _read(graph, weight, a, b), a) if graph.weighted else None
    _run(graph, check, _ranges(total, step))


CHECKS = {"degree": _degrees, "csr": _csr, "cel": _cel, "cel_aug": lambda graph: _cel(graph, "aug")}

"""Bookkeeping for algorithms that hold the graph in memory (set intersections, aggregation).

They read the store's CSR whole onto the device instead of streaming the CEL, so they refuse a
graph whose working set does not fit the budget — before reading anything — with the budget that
would do, instead of crawling. The device is chosen as for the streamed algorithms.
"""

from __future__ import annotations

import numpy as np

from ooc_graph._memory import budget, human
from ooc_graph.engine import LocalComm, current_placement, get_backend
from ooc_graph.engine.monitor import current_watcher
from ooc_graph.errors import DeviceError, ParameterError

from ._common import Call


class InMemoryRun(Call):
    """Device, budget check, comm (a distributed job's, else one process) and timing of one call.

    ``per_arc`` and ``per_vertex`` are the bytes the algorithm's working set takes per stored arc
    and per vertex; the run refuses budgets below that total (host ``memory`` on the CPU, the GPU's
    ``device_memory`` on a GPU)."""

    def __init__(self, G, name: str, *, memory, device, device_memory, per_arc: int, per_vertex: int):
        super().__init__(G)
        g = self.graph
        self.name = name
        self.backend = get_backend(device, g)
        self.xp = self.backend.xp
        placement = current_placement()
        self.comm = placement.comm if placement is not None else LocalComm(g.num_vertices)
        self.host_empty = placement.host_empty if placement is not None else None
        # Who hears the run's reports: a distributed job's rank, else whoever watches this call
        # (``progress=``, the command line's bar), as the engine's runs do (engine_for).
        self.on_report = placement.on_report if placement is not None else current_watcher()
        need = per_arc * g.num_arcs + per_vertex * g.num_vertices + (1 << 20)
        limit = budget(memory)
        if self.backend.name == "gpu":
            free = self.backend.free_memory()
            limit = min(budget(device_memory) if device_memory is not None else int(0.8 * free), free)
            if need > limit and device == "auto":
                self.backend, self.xp, limit = get_backend("cpu"), np, budget(memory)
            elif need > limit:
                raise DeviceError(f"{g.path}: {name} holds the graph in GPU memory and needs about "
                                  f"{human(need)}; device_memory={human(limit)} is below it (give more, or "
                                  "device='cpu')")
        if need > limit:
            raise ParameterError(f"{g.path}: {name} holds the graph in memory and needs about {human(need)}; "
                                 f"memory={human(limit)} is below it (give memory='{_round_up(need)}' or more)")
        self.spare = limit - need  # room for temporaries (blocks of work)
        self.stats = {"bytes_read": 0, "arcs_processed": 0, "passes": 0}
        self.start()

    def csr(self, weights: bool = False):
        """The out-arc CSR ``(indptr, indices[, weights])`` on the device (read whole; weights as
        float64, ones in an unweighted store)."""
        indptr, indices, w = self.graph.csr("out")
        self.stats["bytes_read"] += indptr.nbytes + indices.nbytes + (0 if w is None or not weights else w.nbytes)
        xp = self.xp
        if not weights:
            return xp.asarray(indptr), xp.asarray(indices)
        w = xp.ones(len(indices)) if w is None else xp.asarray(w).astype(np.float64)
        return xp.asarray(indptr), xp.asarray(indices), w

    def listened(self):
        """:meth:`report` where someone listens to the run, else None (work can then be done in
        one piece instead of parts)."""
        return self.report if self.on_report is not None else None

    def report(self, iteration: int, measure=None) -> None:
        """Tell whoever listens how far the run is (``iteration`` counts up: blocks done, sweeps)
        and keep it with the statistics, as :meth:`Engine.report` does."""
        self.stats.setdefault("convergence", []).append((iteration, measure))
        if self.on_report is not None:
            self.on_report(iteration, measure)

    def arcs(self, weights: bool = False):
        """Every stored arc as device arrays ``(src, dst[, weight])`` (int64 ids, float64 weights)."""
        indptr, indices, w = self.graph.csr("out")
        self.stats["bytes_read"] += indptr.nbytes + indices.nbytes + (0 if w is None else w.nbytes)
        xp = self.xp
        if xp is np:
            src = np.repeat(np.arange(self.graph.num_vertices, dtype=np.int64), np.diff(indptr))
        else:
            src = repeat_index(xp, xp.asarray(np.diff(indptr)))[0]
        dst = xp.asarray(indices).astype(np.int64)
        if not weights:
            return src, dst
        w = xp.ones(len(dst)) if w is None else xp.asarray(w).astype(np.float64)
        return src, dst, w

    def to_host(self, array):
        out = None if self.host_empty is None else self.host_empty(array.shape, array.dtype)
        if out is None and self.xp is np:
            return array
        return self.backend.to_host(array, out)

    def finish(self, cls, parameters, iterations, converged, store, **arrays):
        result = cls(algorithm=self.name, parameters=parameters, iterations=iterations, converged=converged,
                     seconds=self.seconds(), device=self.backend.name,
                     stats={"convergence": [], **self.stats, "per_pass": [], "timeline": []}, graph=self.graph,
                     **{k: self.to_host(v) for k, v in arrays.items()})
        return self.conclude(result, store)


def _round_up(nbytes: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6)):
        if nbytes >= size:
            return f"{-(-nbytes // size)}{unit}"
    return "1MB"


def repeat_index(xp, counts):
    """``i`` repeated ``counts[i]`` times, for NumPy and CuPy alike (CuPy's ``repeat`` takes no
    device array of counts): ``(index, position of each item within its run)``."""
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if len(counts) else 0  # device -> host: the size of what follows
    at = xp.arange(total, dtype=np.int64)
    index = xp.searchsorted(ends, at, side="right")
    return index, at - (ends - counts)[index]

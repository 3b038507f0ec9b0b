"""Whole traversals in one compiled call over the CSR in memory (``kernels.traverse_min``: a
queue BFS or near-far Dijkstra on the CPU, a cooperative kernel on a GPU), and Brandes's sums
from many sources (``kernels.brandes``): the thousands of levels of a road graph cost no Python
each."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

import numpy as np

from ooc_graph import config

from ..nearfar import near_far_delta

log = logging.getLogger("ooc_graph.engine")


class Whole:
    """The whole traversals of :class:`~.Traversals` (a mixin of the engine)."""

    def _whole_csr(self, plus):
        """The out-CSR for a whole compiled traversal (``kernels.traverse_min`` and
        ``tree_parents``): a backend whose ``whole_traversals()`` says it can, increments that
        cannot be negative, and a CSR in the budget (of every rank: a distributed run then runs
        the whole traversal on every rank alike, with nothing to exchange, each returning its own
        vertices of the answer); else None."""
        g, k = self.graph, self.backend.kernels
        whole = getattr(k, "whole_traversals", None)  # the backend's (a job's ranks share one kind)
        if whole is None:
            return None
        able = config.get().traversal.whole_traversal and whole()
        if self.comm.size > 1:  # every rank alike (agreed once a run, with the CSRs they hold)
            if self._whole_ok is None:
                self._whole_ok = bool(self.comm.allreduce(int(able and self.csr("out") is not None), "min"))
                if self._whole_ok:  # every rank holds the out-CSR
                    self._advance_ok = True
            able = self._whole_ok
        if not able:
            return None
        if (plus is None and g.weighted and g.num_arcs and float(g.attrs["min_weight"]) < 0) or \
                (plus is not None and not plus >= 0):
            return None
        if self.comm.size == 1:  # the weights only where increments are the arc weights
            return self.csr("out", weights=plus is None)
        return self.csr("out") if self._can_advance() else None

    def _traverse(self, state, plus, frontier, parent=None):
        """``propagate_min`` in one compiled call over the CSR in memory (queue BFS or Dijkstra:
        the thousands of levels of a road graph cost no Python each), building the strict part
        of the shortest-path tree into ``parent`` if given; the number of iterations, or None
        where this is not possible."""
        csr = self._whole_csr(plus)
        if csr is None:
            return None
        indptr, indices, w, _ = csr
        before, t = self.stats.as_dict(), time.perf_counter()
        cfg = config.get().traversal
        delta = near_far_delta(self.graph, cfg.whole_near_far_width) if plus is None and cfg.near_far else None
        with self._scratch(bfs=False) as room:
            done = self.backend.kernels.traverse_min(indptr, indices, w, np.asarray(frontier, np.int64), state,
                                                     plus, parent, delta=delta) if room else None
        if done is None:
            return None
        iterations, arcs, *logged = done  # (a GPU's kernel logs its iterations)
        self._count_traversal(int(iterations), int(arcs), before, t, logged[0] if logged else None)
        return int(iterations)

    @contextmanager
    def _scratch(self, *, bfs: bool):
        """Room in the device budget for a whole traversal's scratch (the backend's
        ``scratch_bytes``): the room of the chunks in flight (no pass runs meanwhile), and what
        that lacks from the chunk cache (cached chunks are dropped for it where they must be);
        yields whether there is room (none needed on the CPU)."""
        size = getattr(self.backend.kernels, "scratch_bytes", None)
        need = 0 if size is None else max(0, size(self.graph.num_vertices, self.graph.num_arcs, bfs)
                                          - self.flight_bytes)
        room = self.cache.make_room(need) if need else True
        try:
            yield room
        finally:
            if need and room:
                self.cache.used -= need

    def brandes(self, sources, bc, *, weighted: bool, endpoints: bool) -> bool:
        """Brandes's sums from each of ``sources`` added into ``bc`` (networkx's accumulation,
        unscaled) by the backend's ``brandes`` over the out-CSR in memory: per source a queue BFS
        on hops, or Dijkstra on the arc weights with ``weighted``, then the dependencies in reverse
        order, O(arcs reached) a source with no work per level (the CPU shares the sources among
        numba's threads; a GPU queues each level's vertices on the device, one look from the host
        a level). One process, a CSR in the budget (as for :meth:`_whole_csr`) and positive
        weights. Each source is reported (its levels) once its call returns. False where this
        does not apply: nothing was done, the caller sweeps level by level."""
        k, per_call = self.backend.kernels, config.get().traversal.brandes_sources_per_call
        if not config.get().traversal.whole_brandes or self.comm.size > 1 or not hasattr(k, "brandes") or \
                not self._can_advance():
            return False
        indptr, indices, w, _ = self.csr("out")
        sources = np.asarray(sources, np.int64)
        for start in range(0, max(sources.size, 1), per_call):
            part = sources[start:start + per_call]
            before, t = self.stats.as_dict(), time.perf_counter()
            done = k.brandes(indptr, indices, w if weighted else None, part, bc, endpoints, self.memory // 4)
            if done is None:  # no such kernel here (it is known before the first source)
                return False
            levels, arcs = done
            seconds = time.perf_counter() - t
            self.stats.traversals += part.size
            self.stats.arcs_processed += arcs
            self.stats.record("brandes", seconds, before, arcs=arcs, clock=self.clock)
            self.stats.seconds_computing += seconds
            log.info("Brandes from %d sources over the CSR: %d arcs, %.3f s", part.size, arcs, seconds)
            for i, level in enumerate(np.asarray(levels).tolist()):
                self.report(start + i + 1, level)
        return True

    def _count_traversal(self, iterations: int, arcs: int, before: dict, t: float, logged=None) -> None:
        """Record a whole traversal (one compiled call) that started at ``t``; ``logged``: its
        iterations as the kernel logged them (dicts with ``strategy``, ``frontier``, ``seconds``),
        kept in the pass record and their strategies in the run's."""
        seconds = time.perf_counter() - t
        self.stats.traversals += 1
        self.stats.arcs_processed += arcs
        self.stats.record("traversal", seconds, before, arcs=arcs, clock=self.clock)
        if logged is not None:
            self.stats.per_pass[-1]["iterations"] = logged
            self.stats.strategies.extend(entry["strategy"] for entry in logged)
        self.stats.seconds_computing += seconds
        self.report(iterations, 0)
        log.info("whole traversal over the CSR: %d levels' worth, %d arcs, %.3f s", iterations, arcs, seconds)

"""The iterations of ``propagate_min`` that run over a CSR on the device: a frontier advance
over the out-CSR (Gunrock/GSWITCH), a run of advances queued on one GPU with one look from the
host, and a bottom-up level over the in-CSR (Beamer: each unreached vertex looks for one parent
on the frontier and stops there)."""

from __future__ import annotations

import time

import numpy as np

from ooc_graph import config

from .walk import Step, Walk, after_levels


class Levels:
    """The CSR levels of :class:`~.Traversals` (a mixin of the engine)."""

    def _queued_run(self, walk: Walk, step: Step) -> None:
        """Small frontiers on one GPU: many advances back to back, one look from the host. While
        bottom-up levels are possible the run stops at a frontier with many arcs, for the next
        choice; with near-far buckets a vertex dropping beyond the bound is left marked in
        ``changed`` for the far pile instead of queued, so the device runs the near pile's
        levels only."""
        k, cfg = self.backend.kernels, config.get()
        indptr, indices, w, _ = self.csr("out")
        before, ta = self.stats.as_dict(), time.perf_counter()
        cap = cfg.traversal.queued_max_arcs if walk.level is not None else 1 << 62
        bound = np.inf if walk.near is None else walk.near.bound
        ran, done, frontier = k.advance_levels(indptr, indices, w, walk.frontier, walk.state, walk.plus, walk.changed,
                                               walk.queued, cap, bound, step.track)
        walk.queued = min(2 * walk.queued, cfg.gpu.levels_per_sync)  # frontiers that stay small: longer runs
        if walk.near is not None:  # the near vertices still queued, the far ones marked
            frontier = walk.near.next(walk.state, walk.changed, frontier)
        walk.frontier = frontier
        walk.iterations += ran - 1
        self.stats.tree_levels += (ran - 1) * (step.track is not None)
        walk.level = after_levels(walk.level, walk.plus, ran)
        self.stats.advances += ran
        self.stats.arcs_processed += done
        self.stats.record("advance", time.perf_counter() - ta, before, arcs=done, clock=self.clock)
        self.report(walk.iterations, int(frontier.size))

    def _bottom_up_level(self, walk: Walk, step: Step) -> None:
        """One bottom-up level: each worker looks for parents of its own unreached vertices."""
        before, ta = self.stats.as_dict(), time.perf_counter()
        self.stats.bottom_up += 1
        indptr, indices, _, _ = self._in_csr()
        lo, hi = self.owned
        self.backend.kernels.bottom_up(indptr, indices, walk.state, walk.level, walk.level + walk.plus, walk.changed,
                                       lo, hi, step.track)
        self._sync()
        self.stats.record(step.kind, time.perf_counter() - ta, before, arcs=0, clock=self.clock)

    def _advance_level(self, walk: Walk, step: Step) -> None:
        """One frontier advance over the out-CSR: of the whole frontier on one rank or where
        every rank runs it alike (``step.replicated``), else of this rank's share."""
        before, ta = self.stats.as_dict(), time.perf_counter()
        self.stats.advances += 1
        whole = self.comm.size == 1 or step.replicated
        mine = walk.frontier if step.replicated else self.comm.split(walk.frontier)
        self.stats.arcs_processed += step.arcs if whole else int(walk.degree[mine].sum())
        indptr, indices, w, _ = self.csr("out")
        self.backend.kernels.advance_min(indptr, indices, w, mine, walk.state, walk.plus, walk.changed, step.track)
        self._sync()
        self.stats.record(step.kind, time.perf_counter() - ta, before, arcs=step.arcs, clock=self.clock)

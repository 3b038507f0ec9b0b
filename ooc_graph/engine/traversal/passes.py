"""The edge-centric iterations of ``propagate_min``: a pass of ``relax_min`` over the chunks
whose source intervals hold a changed vertex, synchronous or asynchronous (WolfGraph: each loaded
chunk relaxed to local convergence, chunks activated during the pass joining it)."""

from __future__ import annotations

import numpy as np

from ooc_graph import config

from .walk import Step, Walk


class Passes:
    """The chunk passes of :class:`~.Traversals` (a mixin of the engine)."""

    def _cel_pass(self, walk: Walk, step: Step) -> None:
        """One pass over the chunks of the frontier's intervals. ``"auto"`` turns asynchronous
        once ``traversal.async_after_passes`` passes have been needed while the cache refuses
        chunks, and then expands every waiting vertex, with no buckets: whether a rank turns
        depends on its own cache, so in a distributed run the ranks drop the buckets together
        once any turns (a scalar per pass, only past async_after_passes)."""
        cfg, g = config.get().traversal, self.graph
        walk.cel_passes += 1
        late = walk.cel_passes > cfg.async_after_passes
        local = walk.execution == "async" or (walk.execution == "auto" and late and self.cache.refused > 0)
        if walk.near is not None and walk.execution == "auto" and late and \
                (local if self.comm.size == 1 else bool(self.comm.allreduce(int(local), "max"))):
            walk.frontier, walk.near = walk.near.release(walk.frontier), None
        active = np.zeros(self._k, dtype=bool)
        active[self.backend.to_host(self.backend.xp.unique(walk.frontier // g.interval_size))] = True
        if walk.near is not None:  # the pass relaxes every arc leaving these intervals
            walk.near.expand(active)
        self._relax_pass(walk.state, walk.plus, walk.changed, active, local, walk.backward)
        walk.idle = walk.idle + 1 if local and not self.joined else 0
        if walk.idle >= cfg.sweep_patience:
            walk.backward, walk.idle = not walk.backward, 0

    def _relax_pass(self, state, plus, changed, active, local: bool, backward: bool) -> None:
        """One pass of ``relax_min`` over the chunks with an active source interval; ``local``
        (asynchronous execution) relaxes each loaded chunk to local convergence and lets chunks
        activated during the pass join it. Sweeps keep their direction while waves run along it
        (chunks join the pass) and turn round after sweep_patience passes that none joined. BFS
        passes measured on road NY from three sources: forwards only 23/16/25, strict
        alternation 35/23/39, this rule 26/20/26; on a 60x20 mesh from its last vertex forwards
        only takes 82, this rule 5."""
        k, xp, g = self.backend.kernels, self.backend.xp, self.graph
        live = self._live_intervals(active, changed) if local else None
        most = config.get().traversal.max_local_iterations
        flag = xp.zeros(1, dtype=np.uint8)
        for i, batch in self.batches(active, indexed=True, live=live, reverse=backward):
            if not local:
                k.relax_min(batch, state, plus, changed)
                continue
            # The augmentation reaches sub-graphs processed earlier in a forward sweep.
            back = self.back_batch(i) if g.augmented and not backward else None
            for _ in range(most):  # to local convergence
                flag.fill(0)
                k.relax_min(batch, state, plus, changed, flag)
                if back is not None:
                    k.relax_min(back, state, plus, changed, flag)
                    self.stats.back_arcs += back.num_arcs
                    self.stats.arcs_processed += back.num_arcs
                if not int(flag[0]):
                    break
                self.stats.local_iterations += 1
                self.stats.arcs_processed += batch.num_arcs

    def _live_intervals(self, active: np.ndarray, changed):
        """``live()`` for :meth:`batches`: the intervals active at the start of the pass or holding
        a vertex changed since (one small device→host copy per call)."""
        size, n = self.graph.interval_size, self.graph.num_vertices
        xp = self.backend.xp
        padded = xp.zeros(len(active) * size, dtype=np.uint8)

        def live():
            padded[:n] = changed
            return active | self.backend.to_host(padded.reshape(len(active), size).any(axis=1))
        return live

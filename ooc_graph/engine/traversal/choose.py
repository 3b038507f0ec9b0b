"""How each iteration of ``propagate_min`` relaxes the arcs leaving its frontier: the ranks'
agreement on which CSRs they hold, whether the traversal is level-synchronous, near-far buckets,
and the choice per iteration among a bottom-up level (Beamer's rule), a frontier advance and an
edge-centric pass."""

from __future__ import annotations

import numpy as np

from ooc_graph import config

from ..nearfar import NearFar, near_far_delta
from .walk import Step, Walk


class Choices:
    """The choices of :class:`~.Traversals` (a mixin of the engine)."""

    def _can_advance(self) -> bool:
        """Whether frontier advances are possible: every rank holds the out-CSR on its device."""
        if self._advance_ok is None:
            self._advance_ok = bool(self.comm.allreduce(int(self.csr("out") is not None), "min"))
        return self._advance_ok

    def _queued_levels(self, frontier, execution: str, arcs: int) -> bool:
        """Whether advances may run many levels on the device between looks from the host: one
        GPU process (workers merge after every level), not profiling (each level is recorded
        then), and a frontier the device queue holds whose arcs are few (the queued kernel gives
        each vertex one warp; a hub's arcs go to the arc-balanced advance instead)."""
        k, cfg = self.backend.kernels, config.get()
        return (cfg.traversal.queued_levels and hasattr(k, "advance_levels") and self.comm.size == 1
                and not self.profile and execution != "async" and int(frontier.size) <= cfg.gpu.queue_capacity
                and arcs <= cfg.traversal.queued_max_arcs)

    def _can_pull(self) -> bool:
        """Whether bottom-up levels are possible: the backend has them and every rank holds the
        in-CSR on its device."""
        if self._pull_ok is None:
            self._pull_ok = bool(self.comm.allreduce(int(self._pull_here()), "min"))
        return self._pull_ok

    def _pull_here(self) -> bool:
        """Whether this rank could run bottom-up levels (before the ranks agree)."""
        return hasattr(self.backend.kernels, "bottom_up") and self._in_csr() is not None

    def _in_csr(self):
        """The in-arc CSR on the device (an undirected graph's is its out-CSR), or None."""
        return self.csr("in" if self.graph.directed else "out")

    def _level_of(self, state, plus, frontier, execution: str, distinct: int, fresh: bool = False):
        """The frontier's common value if the traversal starts level-synchronous (a constant
        positive increment, every frontier vertex at one value and every other vertex unreached;
        ``distinct``: how many vertices the frontier holds; ``fresh``: the caller says so, the
        value being 0) and bottom-up levels are possible; else None. Ranks agree on it, and on
        which CSRs they all hold (:meth:`_can_pull`, :meth:`_can_advance`), in one all-reduce:
        three, each a host wait, cost a 2-GPU BFS of R-MAT-26 ~2.5 ms; none where it is fresh and
        they agreed on the CSRs before."""
        if plus is None or not plus > 0 or execution == "async" or not config.get().traversal.bottom_up or \
                not frontier.size:
            return None
        xp = self.backend.xp
        if fresh:  # nothing to look at on the device (a sync: 0.9 ms of a BFS of R-MAT-26)
            pure, value = True, 0.0
        else:
            values = state[frontier]
            pure = bool(((values == values[0]).all() & (xp.isfinite(state).sum() == distinct)).item())
            value = float(values[0]) if pure else None
        if self.comm.size > 1 and (self._pull_ok is None or self._advance_ok is None):
            # whether this rank can pull matters only where every rank is pure: not asked otherwise
            pull = self._pull_ok if self._pull_ok is not None else (not pure or self._pull_here())
            advance = self._advance_ok if self._advance_ok is not None else self.csr("out") is not None
            pure, pull, self._advance_ok = (bool(v) for v in self.comm.allreduce(
                np.array([pure, pull, advance], dtype=np.float64), "min"))
            if pure:
                self._pull_ok = pull
        elif self.comm.size > 1 and not fresh:
            pure = bool(self.comm.allreduce(int(pure), "min"))
        return value if pure and self._can_pull() else None

    def _near_far(self, plus, frontier, execution: str):
        """Near-far bookkeeping (:class:`.nearfar.NearFar`) for a traversal with arc weights, none
        negative, that does not start asynchronous; else None."""
        cfg = config.get().traversal
        if not cfg.near_far or plus is not None or execution == "async":
            return None
        delta = near_far_delta(self.graph, cfg.near_far_width)
        return None if delta is None else NearFar(self.backend.xp, self.graph, self._k, delta, frontier, self.stats)

    def _choose(self, walk: Walk) -> Step:
        """This iteration's step. While the traversal is level-synchronous, Beamer's rule picks
        bottom-up levels (entering also needs a frontier with arcs for n / beta vertices: a
        bottom-up level looks at every vertex, so the small last levels of a road graph, with
        few arcs left unvisited, stay top-down); else a frontier with few arcs advances over the
        out-CSR, and one with many runs an edge-centric pass."""
        g, cfg = self.graph, config.get().traversal
        arcs = int(walk.degree[walk.frontier].sum())
        if walk.level is not None:
            walk.unvisited -= arcs
            nf, n = int(walk.frontier.size), g.num_vertices
            alpha, beta = cfg.bottom_up_alpha, cfg.bottom_up_beta
            walk.bottom = nf * beta >= n if walk.bottom else arcs * alpha > walk.unvisited and arcs * beta >= n
        bottom = walk.bottom
        advance = not bottom and arcs < cfg.advance_fraction * g.num_arcs and self._can_advance()
        # Ranks of a level-synchronous traversal advance a small frontier whole, each alike: no
        # level merge, and each sees every frontier vertex (its smallest parent of a vertex).
        replicated = (advance and walk.level is not None and self.comm.size > 1
                      and arcs <= cfg.replicated_max_arcs)
        # the tree on the way: levels that stay level-synchronous, advances each rank runs whole
        tracked = walk.level is not None and (bottom or (advance and (self.comm.size == 1 or replicated)))
        return Step("bottom-up" if bottom else "advance" if advance else "pass", arcs, replicated,
                    walk.parent if tracked else None)

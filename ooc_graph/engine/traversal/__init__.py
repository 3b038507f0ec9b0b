"""The engine's min-relaxation operators: ``propagate_min`` (BFS, SSSP and other fixed points of
``state[v] = min(state[v], state[u] + w)``); their shortest-path trees are in :mod:`.trees`.

Each iteration of ``propagate_min`` picks the cheapest way to relax the arcs leaving the
frontier: an edge-centric pass over the chunks whose source intervals hold a changed vertex; a
frontier advance over the out-CSR (Gunrock/GSWITCH: cheap when few vertices changed), on one GPU
run many levels at a time on the device; or, for a level-synchronous traversal with a constant
increment whose frontier has many arcs, a bottom-up level over the in-CSR (Beamer's direction
optimisation: each unreached vertex looks for one parent on the frontier and stops there). With
arc weights the frontier is the near pile of near-far buckets (:mod:`.nearfar`). On the CPU with
the CSR in memory the whole traversal is one compiled call instead.

The strategies live beside this module: :mod:`.choose` (which step an iteration takes),
:mod:`.levels` (advances and bottom-up levels over a CSR), :mod:`.passes` (edge-centric passes
over the chunks), :mod:`.whole` (one compiled call); :mod:`.walk` holds a traversal's state
between iterations.

``brandes`` (betweenness's traversals from many sources and their sums) runs only over a CSR in
memory, in the backend's kernels; where it cannot, betweenness sweeps levels on ``edge_map``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ooc_graph import config
from ooc_graph.errors import choice

from .choose import Choices
from .levels import Levels
from .passes import Passes
from .walk import Step, Walk, after_levels
from .whole import Whole

log = logging.getLogger("ooc_graph.engine")

EXECUTIONS = ("auto", "sync", "async")


class Traversals(Choices, Levels, Passes, Whole):
    """The min-relaxation operators of :class:`~.core.Engine` (a mixin: they use its stream,
    backend, comm and statistics)."""

    def propagate_min(self, state, *, plus, frontier, execution: str = "auto") -> int:
        """Relax ``state[v] = min(state[v], state[u] + w)`` over every arc u→v (``plus=None``: the
        arc weight, else that constant) until nothing changes, starting from the vertices in
        ``frontier``. Returns the number of iterations.

        Each iteration is either an edge-centric pass over the chunks whose source intervals hold a
        changed vertex, or — when the changed vertices have few arcs and the CSR fits in the budget
        — a frontier advance over the CSR (in a distributed run each worker advances its share of
        the frontier; while the traversal is level-synchronous, a frontier of at most
        ``config traversal.replicated_max_arcs`` arcs whole, on every worker alike, with nothing to merge). The
        frontier stays on the device; each iteration syncs two scalars (its size and its arc
        count) and, for a pass, its intervals.

        ``execution="async"`` (WolfGraph): within a pass, each loaded chunk is relaxed again until
        it changes nothing, so arcs inside a chunk carry updates many hops per pass; this costs
        one device→host flag per extra relaxation. A chunk that an earlier chunk of the same pass
        activated is processed in that pass, so a wave crosses every chunk in one pass; after
        ``traversal.sweep_patience`` passes in which no chunk joined that way the sweep direction turns
        round, so a wave travelling towards lower ids does too. On a store with the CEL
        augmentation a forward sweep relaxes each chunk's arcs back into earlier sub-graphs with
        it. ``"auto"`` runs synchronously and turns asynchronous once ``traversal.async_after_passes``
        passes have been needed while chunks are streamed (the cache does not hold them all): a
        high-diameter graph out of core.

        With arc weights (``plus=None``, none negative) the frontier is not every changed vertex
        but near-far's near pile (Davidson et al.; Gunrock's SSSP; :mod:`.nearfar`): the changed
        vertices wait, each iteration expands those whose state is at most a bound, and when none
        is the bound is raised to the smallest waiting state plus ``delta`` (``traversal.near_far_width``
        times a typical weight over the mean degree; a raise syncs two more scalars). Most vertices
        are then expanded once, near their final distance, instead of once per drop; the fixed
        point, and so the answer, is the same bit for bit. A pass expands every waiting vertex of
        the intervals it relaxes; queued levels on a GPU leave vertices beyond the bound to the
        host; asynchronous passes relax whatever they reach, so an asynchronous traversal runs
        without buckets (``"auto"`` drops them at its first asynchronous pass, on every rank at
        once).
        """
        return self._propagate(state, plus, frontier, execution)[0]

    def _propagate(self, state, plus, frontier, execution: str, parent=None, fresh: bool = False):
        """:meth:`propagate_min`, and with ``parent`` (int64: the vertex count, but ``v`` for a
        starting vertex v; a constant positive increment) the shortest-path tree of
        :meth:`tight_parents` built on the way while the levels stay level-synchronous (the
        kernels' ``LEVEL_PARENTS``): a bottom-up level gives each vertex it reaches its first
        in-neighbour on the frontier, an advance the smallest frontier vertex reaching it (in a
        distributed run only the advances every rank runs whole: a rank advancing its share of
        the frontier may not see the smallest). ``fresh``: the state is infinite everywhere but
        at the frontier, where it is 0 (not looked at). Returns ``(iterations, whether parent
        holds every reached vertex's parent)``; where it does not, the parents it holds are right
        and :meth:`tight_parents` finds the rest."""
        if execution not in EXECUTIONS:
            raise choice("execution", execution, EXECUTIONS)
        whole = self._traverse(state, plus, frontier)
        if whole is not None:
            return whole, False
        walk = self._start(state, plus, frontier, execution, parent, fresh)
        steps = {"bottom-up": self._bottom_up_level, "advance": self._advance_level, "pass": self._cel_pass}
        t = time.perf_counter()
        while walk.frontier.size:
            walk.iterations += 1
            walk.changed.fill(0)
            step = self._choose(walk)
            walk.complete = walk.complete and step.track is not None
            self.stats.tree_levels += step.track is not None
            if step.kind == "advance" and self._queued_levels(walk.frontier, execution, step.arcs):
                self._queued_run(walk, step)
                continue
            steps[step.kind](walk, step)
            self._end_level(walk, step)
        self.stats.seconds_computing += time.perf_counter() - t
        return walk.iterations, walk.complete

    def _start(self, state, plus, frontier, execution: str, parent, fresh: bool) -> Walk:
        """The walk from ``frontier``: on the device, with its level if level-synchronous and its
        near pile if weighted."""
        g, xp = self.graph, self.backend.xp
        if not getattr(self.backend.kernels, "LEVEL_PARENTS", False):
            parent = None
        frontier = np.asarray(frontier, dtype=np.int64)
        # how many distinct vertices start (the host sorts a small frontier: CuPy's unique took
        # 0.9-2 ms for one vertex on an H200)
        small = frontier.size <= config.get().traversal.host_unique
        distinct = int(np.unique(frontier).size) if small else None
        frontier = xp.asarray(frontier)
        if distinct is None:
            distinct = int(xp.unique(frontier).size)
        level = self._level_of(state, plus, frontier, execution, distinct, fresh)
        near = self._near_far(plus, frontier, execution)
        if near is not None:
            frontier = near.take(state)
        return Walk(state=state, plus=plus, execution=execution, parent=parent, frontier=frontier,
                    changed=xp.zeros(g.num_vertices, dtype=np.uint8), degree=self.vertex_array("out_degree"),
                    level=level, near=near, complete=parent is not None, unvisited=g.num_arcs)

    def _end_level(self, walk: Walk, step: Step) -> None:
        """After a level or pass: the ranks' changes merged (only flags where the level stays
        level-synchronous; nothing where every rank ran it alike), the next frontier, and the
        report (levels every rank ran whole agree on stopping only every
        ``traversal.replicated_agree_every``)."""
        cfg = config.get().traversal
        walk.level = after_levels(walk.level, walk.plus, 1) if step.kind != "pass" else None
        if walk.level is None:
            self._exchange(self.comm.merge_min, walk.state, walk.changed)
        elif not step.replicated:  # every vertex changed took the level's value: only flags travel
            self._exchange(self.comm.merge_level, walk.state, walk.changed, walk.level, self._stop_requested())
            if self.comm.size > 1:  # with the ranks' stop requests: the report below agrees on it
                self._stop_agreed = self.comm.agreed_stop
        if walk.near is None:
            walk.frontier = self.backend.kernels.flatnonzero(walk.changed)
        else:  # merged state and flags: every rank takes the same near pile
            walk.frontier = walk.near.next(walk.state, walk.changed)
        walk.replicated_run = walk.replicated_run + 1 if step.replicated else 0
        self.report(walk.iterations, int(walk.frontier.size),
                    agree=walk.replicated_run % cfg.replicated_agree_every == 0)
        log.info("iteration %d: %s, next frontier %d vertices", walk.iterations, step.kind, int(walk.frontier.size))

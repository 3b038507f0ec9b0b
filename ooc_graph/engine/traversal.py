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

``brandes`` (betweenness's traversals from many sources and their sums) runs only over a CSR in
memory, in the backend's kernels; where it cannot, betweenness sweeps levels on ``edge_map``.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

import numpy as np

from ooc_graph import config
from ooc_graph.errors import choice

from .nearfar import NearFar, near_far_delta

log = logging.getLogger("ooc_graph.engine")

EXECUTIONS = ("auto", "sync", "async")


class Traversals:
    """The min-relaxation operators of :class:`~.core.Engine` (a mixin: they use its stream,
    backend, comm and statistics)."""

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
        g, k, xp = self.graph, self.backend.kernels, self.backend.xp
        cfg = config.get()
        whole = self._traverse(state, plus, frontier)
        if whole is not None:
            return whole, False
        if not getattr(k, "LEVEL_PARENTS", False):
            parent = None
        complete = parent is not None  # while every level so far recorded its parents
        degree = self.vertex_array("out_degree")
        frontier = np.asarray(frontier, dtype=np.int64)
        # how many distinct vertices start (the host sorts a small frontier: CuPy's unique took
        # 0.9-2 ms for one vertex on an H200)
        distinct = int(np.unique(frontier).size) if frontier.size <= cfg.traversal.host_unique else None
        frontier = xp.asarray(frontier)
        if distinct is None:
            distinct = int(xp.unique(frontier).size)
        changed = xp.zeros(g.num_vertices, dtype=np.uint8)
        iterations = cel_passes = 0
        backward, idle = False, 0  # the direction of asynchronous sweeps, passes no chunk joined
        queued = 4  # levels the next run of queued advances may take (doubling while it lasts)
        # While the traversal stays level-synchronous with a constant increment, `level` is the
        # frontier's common value and bottom-up levels are possible; a CEL pass ends that.
        level = self._level_of(state, plus, frontier, execution, distinct, fresh)
        near = self._near_far(plus, frontier, execution)
        if near is not None:
            frontier = near.take(state)
        unvisited, bottom = g.num_arcs, False  # arcs of vertices not yet reached (Beamer's m_u)
        replicated_run = 0  # levels in a row that every rank ran whole (nothing merged)
        t = time.perf_counter()
        while frontier.size:
            iterations += 1
            changed.fill(0)
            arcs = int(degree[frontier].sum())
            if level is not None:
                unvisited -= arcs
                nf = int(frontier.size)
                n = g.num_vertices
                # Beamer's rule; entering also needs a frontier with arcs for n / BETA vertices:
                # a bottom-up level looks at every vertex, so the small last levels of a road
                # graph (few arcs left unvisited) stay top-down.
                alpha, beta = cfg.traversal.bottom_up_alpha, cfg.traversal.bottom_up_beta
                bottom = nf * beta >= n if bottom else arcs * alpha > unvisited and arcs * beta >= n
            advance = not bottom and arcs < cfg.traversal.advance_fraction * g.num_arcs and self._can_advance()
            kind = "bottom-up" if bottom else "advance" if advance else "pass"
            # Ranks of a level-synchronous traversal advance a small frontier whole, each alike: no
            # level merge, and each sees every frontier vertex (its smallest parent of a vertex).
            replicated = (advance and level is not None and self.comm.size > 1
                          and arcs <= cfg.traversal.replicated_max_arcs)
            # the tree on the way: levels that stay level-synchronous, advances each rank runs whole
            track = parent if level is not None and (bottom or (advance and (self.comm.size == 1 or replicated))) \
                else None
            complete = complete and track is not None
            self.stats.tree_levels += track is not None
            if advance and self._queued_levels(frontier, execution, arcs):
                # Small frontiers on one GPU: many levels back to back, one look from the host.
                indptr, indices, w, _ = self.csr("out")
                before, ta = self.stats.as_dict(), time.perf_counter()
                # While bottom-up levels are possible, stop at a frontier with many arcs to choose.
                cap = cfg.traversal.queued_max_arcs if level is not None else 1 << 62
                # Near-far: a vertex dropping beyond the bound is left marked in `changed` for the
                # far pile instead of queued, so the device runs the near pile's levels only.
                bound = np.inf if near is None else near.bound
                ran, done, frontier = k.advance_levels(indptr, indices, w, frontier, state, plus, changed, queued, cap,
                                                       bound, track)
                queued = min(2 * queued, cfg.gpu.levels_per_sync)  # frontiers that stay small: longer runs
                if near is not None:  # the near vertices still queued, the far ones marked
                    frontier = near.next(state, changed, frontier)
                iterations += ran - 1
                self.stats.tree_levels += (ran - 1) * (track is not None)
                level = _after_levels(level, plus, ran)
                self.stats.advances += ran
                self.stats.arcs_processed += done
                self.stats.record("advance", time.perf_counter() - ta, before, arcs=done, clock=self.clock)
                self.report(iterations, int(frontier.size))
                continue
            before, ta = self.stats.as_dict(), time.perf_counter()
            if bottom:  # each worker looks for parents of its own unreached vertices
                self.stats.bottom_up += 1
                indptr, indices, _, _ = self._in_csr()
                lo, hi = self.owned
                k.bottom_up(indptr, indices, state, level, level + plus, changed, lo, hi, track)
                self._sync()
                self.stats.record(kind, time.perf_counter() - ta, before, arcs=0, clock=self.clock)
            elif advance:
                self.stats.advances += 1
                mine = frontier if replicated else self.comm.split(frontier)
                self.stats.arcs_processed += arcs if self.comm.size == 1 or replicated else int(degree[mine].sum())
                indptr, indices, w, _ = self.csr("out")
                k.advance_min(indptr, indices, w, mine, state, plus, changed, track)
                self._sync()
                self.stats.record(kind, time.perf_counter() - ta, before, arcs=arcs, clock=self.clock)
            else:
                cel_passes += 1
                late = cel_passes > cfg.traversal.async_after_passes
                local = execution == "async" or (execution == "auto" and late and self.cache.refused > 0)
                # "auto" turning asynchronous: every waiting vertex from here, no buckets. Whether a
                # rank turns depends on its own cache, so in a distributed run the ranks drop the
                # buckets together once any turns (a scalar per pass, only past async_after_passes).
                if near is not None and execution == "auto" and late and \
                        (local if self.comm.size == 1 else bool(self.comm.allreduce(int(local), "max"))):
                    frontier, near = near.release(frontier), None
                active = np.zeros(self._k, dtype=bool)
                active[self.backend.to_host(xp.unique(frontier // g.interval_size))] = True
                if near is not None:  # the pass relaxes every arc leaving these intervals
                    near.expand(active)
                self._relax_pass(state, plus, changed, active, local, backward)
                idle = idle + 1 if local and not self.joined else 0
                if idle >= cfg.traversal.sweep_patience:
                    backward, idle = not backward, 0
            level = _after_levels(level, plus, 1) if kind != "pass" else None
            if level is None:
                self._exchange(self.comm.merge_min, state, changed)
            elif not replicated:  # (every rank made a replicated level's changes alike: nothing to merge)
                # every vertex changed took the level's value: only flags travel
                self._exchange(self.comm.merge_level, state, changed, level, self._stop_requested())
                if self.comm.size > 1:  # with the ranks' stop requests: the report below agrees on it
                    self._stop_agreed = self.comm.agreed_stop
            if near is None:
                frontier = k.flatnonzero(changed)
            else:  # merged state and flags: every rank takes the same near pile
                frontier = near.next(state, changed)
            # levels every rank ran whole agree on stopping only every replicated_agree_every
            replicated_run = replicated_run + 1 if replicated else 0
            self.report(iterations, int(frontier.size),
                        agree=replicated_run % cfg.traversal.replicated_agree_every == 0)
            log.info("iteration %d: %s, next frontier %d vertices", iterations, kind, int(frontier.size))
        self.stats.seconds_computing += time.perf_counter() - t
        return iterations, complete

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

def _after_levels(level, plus, levels: int):
    """The frontier's value ``levels`` levels on, added as the kernels add it (one level at a
    time, in float64); None stays None."""
    if level is None:
        return None
    for _ in range(levels):
        level = level + plus
    return level

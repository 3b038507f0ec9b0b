"""The engine: the operators algorithms are written on, over a :class:`~.stream.ChunkStream`.

Algorithms are small programs on four operators: ``pull_sum`` (one pass of a sum over in-arcs),
``propagate_min`` (min-relaxation to a fixed point), ``tight_parents`` (a shortest-path tree) and
``hook_components`` (connected components by hooking and pointer jumping).
The engine owns the loop, selective scheduling (skipping chunks whose source intervals hold no
changed vertex) and the per-iteration choice between an edge-centric pass over the CEL and a
frontier advance over the CSR (Gunrock/GSWITCH: cheap when few vertices changed). In a
distributed run each worker's engine streams the sub-graphs it owns and exchanges the state of
their destinations through its :class:`~.exchange.Comm` after every pass; the algorithm's code is
the same everywhere.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ooc_graph.errors import JobCancelled, choice
from ooc_graph.store import Graph

from .exchange import Comm, LocalComm
from .stream import ChunkStream

log = logging.getLogger("ooc_graph.engine")

# Advance over the CSR when the frontier's arcs are fewer than this fraction of all arcs.
ADVANCE_FRACTION = 1 / 16
# Asynchronous mode: at most this many relaxations of one loaded chunk before moving on.
MAX_LOCAL_ITERATIONS = 256
# execution="auto" turns asynchronous after this many passes, if chunks are being streamed.
# Measured (benchmarks/RESULTS.md, "Synchronous against asynchronous execution"): on a road graph
# async cuts streamed passes 24x (612 -> 26); on R-MAT (5-12 passes) it saves none and costs up to 2x.
ASYNC_AFTER_PASSES = 16
EXECUTIONS = ("auto", "sync", "async")
# Asynchronous sweeps turn round after this many passes in a row that no chunk joined (measured
# in propagate_min's comment).
SWEEP_PATIENCE = 2


class Engine(ChunkStream):
    """Operators over one graph's CEL (or, in a distributed run, one worker's share of it).

    Takes the :class:`~.stream.ChunkStream` parameters, and ``comm`` (a :class:`~.exchange.Comm`;
    default: one process, nothing exchanged). ``on_report(iteration, measure)`` is called at
    every convergence report and ``should_stop()`` polled there (cancelling a run collectively).
    """

    def __init__(self, graph: Graph, *, comm: Comm | None = None, **stream_options):
        super().__init__(graph, **stream_options)
        self.comm = comm if comm is not None else LocalComm(graph.num_vertices)
        self.on_report = None
        self.should_stop = None
        self.host_empty = None  # allocates result arrays in host memory (e.g. shared memory), if set
        self._advance_ok = None  # whether every rank holds the out-CSR (agreed once)

    # -- bookkeeping ----------------------------------------------------------------------------
    def reset_stats(self):
        """Start a run: fresh statistics; collective decisions are taken again (in a distributed
        job every rank must take them at the same point, whatever it cached before)."""
        super().reset_stats()
        self._advance_ok = None

    def report(self, iteration: int, measure) -> None:
        """Record the convergence measure of an iteration (a residual, or how many vertices
        changed), tell the listener, and stop every worker at once if any was asked to stop."""
        self.stats.convergence.append((iteration, measure))
        if self.on_report is not None:
            self.on_report(iteration, measure)
        stop = self.should_stop is not None and bool(self.should_stop())
        if self.comm.size > 1:
            stop = bool(self.comm.allreduce(int(stop), "max"))
        if stop:
            raise JobCancelled(f"{self.graph.path}: cancelled at iteration {iteration}")

    def _exchange(self, method, *arrays) -> None:
        """Run one of the comm's collectives, counting its time and bytes (distributed runs)."""
        if self.comm.size == 1:
            return
        t = time.perf_counter()
        sent = method(*arrays)
        self.stats.exchanged(time.perf_counter() - t, sent)

    # -- exchange for algorithms that update only their own vertices ---------------------------
    @property
    def owned(self) -> tuple:
        """The vertices ``[lo, hi)`` this engine's passes write (all of them in one process)."""
        return self.comm.owned

    def to_host(self, array):
        """A result array in host memory, where :attr:`host_empty` allocates (a distributed job
        places rank 0's results in shared memory the client maps), at bus speed from a GPU."""
        out = None if self.host_empty is None else self.host_empty(array.shape, array.dtype)
        if out is None and self.backend.xp is np:
            return array
        return self.backend.to_host(array, out)

    def gather(self, x) -> None:
        """Fill the other workers' ranges of ``x`` from them (nothing in one process)."""
        self._exchange(self.comm.gather_owned, x)

    def sum_over_workers(self, values) -> np.ndarray:
        """Small per-worker partial sums (a host array) added up over the workers."""
        values = np.asarray(values, np.float64)
        return values if self.comm.size == 1 else self.comm.allreduce(values, "sum")

    # -- operators ------------------------------------------------------------------------------
    def pull_sum(self, x, *, out=None, gather: bool = True):
        """``y[v] = Σ_{u→v} x[u]`` over all arcs (one pass). On a GPU holding every chunk, passes
        after the first run over one cache-blocked copy of the graph (:func:`kernels.gpu.source_blocked`).

        ``out`` (n float64) receives ``y``; ``gather=False`` leaves the other workers' ranges of
        it unset (only :attr:`owned` is valid): an algorithm that then updates only its own
        vertices exchanges what it needs itself, once per iteration."""
        k, xp = self.backend.kernels, self.backend.xp
        t = time.perf_counter()
        lo, hi = self.owned
        if out is None:
            y = xp.zeros(self.graph.num_vertices, dtype=np.float64)
        else:
            y = out
            y[lo:hi] = 0.0  # passes write only the owned destinations
        whole = self._whole_graph()
        for batch in self.batches() if whole is None else self._whole_pass(whole):
            k.pull_sum(batch, x, y)
        if gather:
            self._exchange(self.comm.gather_owned, y)
        self.stats.seconds_computing += time.perf_counter() - t
        return y

    def _can_advance(self) -> bool:
        """Whether frontier advances are possible: every rank holds the out-CSR on its device."""
        if self._advance_ok is None:
            self._advance_ok = bool(self.comm.allreduce(int(self.csr("out") is not None), "min"))
        return self._advance_ok

    def propagate_min(self, state, *, plus, frontier, execution: str = "auto") -> int:
        """Relax ``state[v] = min(state[v], state[u] + w)`` over every arc u→v (``plus=None``: the
        arc weight, else that constant) until nothing changes, starting from the vertices in
        ``frontier``. Returns the number of iterations.

        Each iteration is either an edge-centric pass over the chunks whose source intervals hold a
        changed vertex, or — when the changed vertices have few arcs and the CSR fits in the budget
        — a frontier advance over the CSR (in a distributed run each worker advances its share of
        the frontier). The frontier stays on the device; each iteration syncs two scalars (its
        size and its arc count) and, for a pass, its intervals.

        ``execution="async"`` (WolfGraph): within a pass, each loaded chunk is relaxed again until
        it changes nothing, so arcs inside a chunk carry updates many hops per pass; this costs
        one device→host flag per extra relaxation. A chunk that an earlier chunk of the same pass
        activated is processed in that pass, so a wave crosses every chunk in one pass; after
        ``SWEEP_PATIENCE`` passes in which no chunk joined that way the sweep direction turns
        round, so a wave travelling towards lower ids does too. On a store with the CEL
        augmentation a forward sweep relaxes each chunk's arcs back into earlier sub-graphs with
        it. ``"auto"`` runs synchronously and turns asynchronous once ``ASYNC_AFTER_PASSES``
        passes have been needed while chunks are streamed (the cache does not hold them all): a
        high-diameter graph out of core.
        """
        if execution not in EXECUTIONS:
            raise choice("execution", execution, EXECUTIONS)
        g, k, xp = self.graph, self.backend.kernels, self.backend.xp
        degree = self.vertex_array("out_degree")
        frontier = xp.asarray(np.asarray(frontier, dtype=np.int64))
        changed = xp.zeros(g.num_vertices, dtype=np.uint8)
        iterations = cel_passes = 0
        backward, idle = False, 0  # the direction of asynchronous sweeps, passes no chunk joined
        t = time.perf_counter()
        while frontier.size:
            iterations += 1
            changed.fill(0)
            arcs = int(degree[frontier].sum())
            advance = arcs < ADVANCE_FRACTION * g.num_arcs and self._can_advance()
            if advance:
                self.stats.advances += 1
                mine = self.comm.split(frontier)
                self.stats.arcs_processed += arcs if self.comm.size == 1 else int(degree[mine].sum())
                indptr, indices, w, _ = self.csr("out")
                before, ta = self.stats.as_dict(), time.perf_counter()
                k.advance_min(indptr, indices, w, mine, state, plus, changed)
                self._sync()
                self.stats.record("advance", time.perf_counter() - ta, before, arcs=arcs, clock=self.clock)
            else:
                active = np.zeros(self._k, dtype=bool)
                active[self.backend.to_host(xp.unique(frontier // g.interval_size))] = True
                cel_passes += 1
                local = execution == "async" or (execution == "auto" and cel_passes > ASYNC_AFTER_PASSES
                                                 and self.cache.refused > 0)
                self._relax_pass(state, plus, changed, active, local, backward)
                idle = idle + 1 if local and not self.joined else 0
                if idle >= SWEEP_PATIENCE:
                    backward, idle = not backward, 0
            self._exchange(self.comm.merge_min, state, changed)
            frontier = xp.flatnonzero(changed)
            self.report(iterations, int(frontier.size))
            log.info("iteration %d: %s, %d vertices changed", iterations, "advance" if advance else "pass",
                     int(frontier.size))
        self.stats.seconds_computing += time.perf_counter() - t
        return iterations

    def _relax_pass(self, state, plus, changed, active, local: bool, backward: bool) -> None:
        """One pass of ``relax_min`` over the chunks with an active source interval; ``local``
        (asynchronous execution) relaxes each loaded chunk to local convergence and lets chunks
        activated during the pass join it. Sweeps keep their direction while waves run along it
        (chunks join the pass) and turn round after SWEEP_PATIENCE passes that none joined. BFS
        passes measured on road NY from three sources: forwards only 23/16/25, strict
        alternation 35/23/39, this rule 26/20/26; on a 60x20 mesh from its last vertex forwards
        only takes 82, this rule 5."""
        k, xp, g = self.backend.kernels, self.backend.xp, self.graph
        live = self._live_intervals(active, changed) if local else None
        flag = xp.zeros(1, dtype=np.uint8)
        for i, batch in self.batches(active, indexed=True, live=live, reverse=backward):
            if not local:
                k.relax_min(batch, state, plus, changed)
                continue
            # The augmentation reaches sub-graphs processed earlier in a forward sweep.
            back = self.back_batch(i) if g.augmented and not backward else None
            for _ in range(MAX_LOCAL_ITERATIONS):  # to local convergence
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

    def hook_components(self):
        """Connected components by hooking and pointer jumping (Gunrock CC): each pass hangs the
        larger root of every arc's two trees under the smaller, then every vertex jumps to its root.
        Pointers only decrease, so the root of a component is its smallest vertex. Arcs count in
        both directions. Returns (root of every vertex, passes).

        In a distributed run each worker hooks its own arcs into its copy of the forest and the
        copies are merged by an elementwise minimum: every pointer still leads to a smaller vertex
        of the same component, so the merge is again a forest of the same components."""
        k, xp = self.backend.kernels, self.backend.xp
        parent = xp.arange(self.graph.num_vertices, dtype=np.int64)
        changed = xp.zeros(1, dtype=np.uint8)
        passes = 0
        t = time.perf_counter()
        while self.graph.num_arcs:
            passes += 1
            changed.fill(0)
            for batch in self.batches():
                k.hook_min(batch, parent, changed)
            self._exchange(self.comm.reduce_min, parent)
            while True:  # pointer jumping, in memory: trees become stars
                up = parent[parent]
                if bool((up == parent).all()):
                    break
                parent[:] = up
            merged = int(self.comm.allreduce(int(changed[0]), "max"))
            self.report(passes, merged)
            log.info("hooking pass %d: %s", passes, "trees merged" if merged else "stable")
            if not merged:
                break
        self.stats.seconds_computing += time.perf_counter() - t
        return parent, passes

    def tight_parents(self, dist, *, plus, root: int):
        """A shortest-path tree of ``dist``: parent[v] is the smallest u with dist[u] + w == dist[v].

        Strictly shorter tight arcs first; vertices reached only over zero-weight arcs are then
        resolved in further passes, each from the vertices resolved before it. -1 marks the root
        and unreached vertices.
        """
        k, xp = self.backend.kernels, self.backend.xp
        n = self.graph.num_vertices
        parent = xp.full(n, n, dtype=np.int64)
        parent[root] = root
        for batch in self.batches():
            k.tight_parent(batch, dist, plus, parent, None)
        self._exchange(self.comm.gather_owned, parent)
        reached = xp.isfinite(dist)
        while True:
            resolved = parent < n
            missing = int((reached & ~resolved).sum())
            if not missing:
                break
            for batch in self.batches():
                k.tight_parent(batch, dist, plus, parent, resolved)
            self._exchange(self.comm.gather_owned, parent)
            if int((reached & (parent == n)).sum()) == missing:  # pragma: no cover - defensive
                break
        parent[parent == n] = -1
        parent[root] = -1
        return parent

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
from .hostbuf import PREPARE_MIN_BYTES, Prepared
from .stream import ChunkStream

log = logging.getLogger("ooc_graph.engine")

# Advance over the CSR when the frontier's arcs are fewer than this fraction of all arcs.
ADVANCE_FRACTION = 1 / 16
# Where the backend has whole traversals (the compiled CPU kernels) and the CSR is in memory,
# propagate_min runs in one call instead of a loop of levels (off: always the loop).
WHOLE_TRAVERSAL = True
# Asynchronous mode: at most this many relaxations of one loaded chunk before moving on.
MAX_LOCAL_ITERATIONS = 256
# execution="auto" turns asynchronous after this many passes, if chunks are being streamed.
# Measured (benchmarks/RESULTS.md, "Synchronous against asynchronous execution"): on a road graph
# async cuts streamed passes 24x (612 -> 26); on R-MAT (5-12 passes) it saves none and costs up to 2x.
ASYNC_AFTER_PASSES = 16
EXECUTIONS = ("auto", "sync", "async")
# On one GPU, run levels of small frontier advances back to back on the device (kernels.gpu
# advance_levels); False looks at every level from the host.
QUEUED_LEVELS = True
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
        self._prepared = None  # result memory being made ready (prepare_results)
        self._stop_agreed = None  # whether to stop, agreed on by sum_over_workers

    # -- bookkeeping ----------------------------------------------------------------------------
    def reset_stats(self):
        """Start a run: fresh statistics; collective decisions are taken again (in a distributed
        job every rank must take them at the same point, whatever it cached before)."""
        super().reset_stats()
        self._advance_ok = None
        self._stop_agreed = None

    def report(self, iteration: int, measure) -> None:
        """Record the convergence measure of an iteration (a residual, or how many vertices
        changed), tell the listener, and stop every worker at once if any was asked to stop."""
        self.stats.convergence.append((iteration, measure))
        if self.on_report is not None:
            self.on_report(iteration, measure)
        stop = self._stop_requested()
        if self.comm.size > 1:
            if self._stop_agreed is not None:  # agreed on with this iteration's sums
                stop, self._stop_agreed = self._stop_agreed, None
            else:
                stop = bool(self.comm.allreduce(int(stop), "max"))
        if stop:
            raise JobCancelled(f"{self.graph.path}: cancelled at iteration {iteration}")

    def _stop_requested(self) -> bool:
        return self.should_stop is not None and bool(self.should_stop())

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
        """``array`` in host memory (a GPU copies at bus speed); a NumPy array is returned as is."""
        return self.backend.to_host(array)

    def prepare_results(self, dtypes) -> None:
        """A run that will return per-vertex arrays of these dtypes says so when it starts: their
        host memory is allocated and faulted in meanwhile (:mod:`.hostbuf`), so :meth:`result`
        copies at memory speed."""
        self.discard_prepared()
        n = self.graph.num_vertices
        if (self.backend.xp is np and self.host_empty is None) or n * 8 < PREPARE_MIN_BYTES:
            return
        lo, hi = self.owned
        part = slice(lo, hi) if self._slices else slice(None)
        self._prepared = Prepared([((n,), d) for d in dtypes], self.host_empty, part)

    def discard_prepared(self) -> None:
        if self._prepared is not None:
            self._prepared.discard()
            self._prepared = None

    @property
    def _slices(self) -> bool:
        """Whether each worker writes only its own vertices of a result (shared memory)."""
        return self.comm.size > 1 and self.host_empty is not None

    def result(self, array):
        """A final per-vertex result in host memory, as the run returns it. In one process: the
        array itself on the CPU, else a copy into memory prepared meanwhile. In a distributed job
        whose workers share the client's host, each worker copies its own vertices into the same
        shared-memory array; otherwise rank 0 returns the whole and the other ranks ``None``."""
        if self.comm.size > 1 and self.host_empty is None and self.comm.rank != 0:
            return None
        if self.backend.xp is np and self.host_empty is None:
            return array
        out = None if self._prepared is None else self._prepared.take(array.shape, array.dtype)
        if out is None and self.host_empty is not None:
            out = self.host_empty(array.shape, array.dtype)
        if self._slices:
            lo, hi = self.owned
            self.backend.to_host(array[lo:hi], out[lo:hi])
            return out
        return self.backend.to_host(array, out)

    def gather(self, x, *, wait: bool = True) -> None:
        """Fill the other workers' ranges of ``x`` from them (nothing in one process).
        ``wait=False``: the next :meth:`sum_over_workers` waits for it (one wait per iteration)."""
        self._exchange(lambda a: self.comm.gather_owned(a, wait=wait), x)

    def sum_over_workers(self, values) -> np.ndarray:
        """Small per-worker partial sums (host values or a backend array) added up over the
        workers, as a host array: the iteration's one wait for the device. In a distributed run
        the workers also agree here on whether to stop (the next :meth:`report` needs no
        collective of its own), and it waits for exchanges queued before it."""
        xp = self.backend.xp
        if self.comm.size == 1:
            on_host = xp is np or isinstance(values, (np.ndarray, list, tuple, float, int))
            return np.asarray(values if on_host else self.backend.to_host(values), np.float64)
        buf = xp.empty(len(values) + 1, dtype=np.float64)
        buf[:-1] = xp.asarray(values, dtype=np.float64)
        buf[-1] = float(self._stop_requested())
        self.comm.allreduce_array(buf, "sum")
        host = np.asarray(self.backend.to_host(buf), np.float64)
        self._stop_agreed = bool(host[-1] > 0)
        return host[:-1]

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

    def _queued_levels(self, frontier, execution: str) -> bool:
        """Whether advances may run many levels on the device between looks from the host: one
        GPU process (workers merge after every level), not profiling (each level is recorded
        then), and a frontier the device queue holds."""
        k = self.backend.kernels
        return (QUEUED_LEVELS and hasattr(k, "advance_levels") and self.comm.size == 1 and not self.profile
                and execution != "async" and int(frontier.size) <= k.QUEUE_CAPACITY)

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
        whole = self._traverse(state, plus, frontier)
        if whole is not None:
            return whole
        degree = self.vertex_array("out_degree")
        frontier = xp.asarray(np.asarray(frontier, dtype=np.int64))
        changed = xp.zeros(g.num_vertices, dtype=np.uint8)
        iterations = cel_passes = 0
        backward, idle = False, 0  # the direction of asynchronous sweeps, passes no chunk joined
        queued = 4  # levels the next run of queued advances may take (doubling while it lasts)
        t = time.perf_counter()
        while frontier.size:
            iterations += 1
            changed.fill(0)
            arcs = int(degree[frontier].sum())
            advance = arcs < ADVANCE_FRACTION * g.num_arcs and self._can_advance()
            if advance and self._queued_levels(frontier, execution):
                # Small frontiers on one GPU: many levels back to back, one look from the host.
                indptr, indices, w, _ = self.csr("out")
                before, ta = self.stats.as_dict(), time.perf_counter()
                ran, done, frontier = k.advance_levels(indptr, indices, w, frontier, state, plus, changed, queued)
                queued = min(2 * queued, k.LEVELS_PER_SYNC)  # frontiers that stay small: longer runs
                iterations += ran - 1
                self.stats.advances += ran
                self.stats.arcs_processed += done
                self.stats.record("advance", time.perf_counter() - ta, before, arcs=done, clock=self.clock)
                self.report(iterations, int(frontier.size))
                continue
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

    def _whole_csr(self, plus):
        """The out-CSR for a whole compiled traversal (``kernels.traverse_min`` and
        ``tree_parents``): one process, a backend whose ``whole_traversals()`` says it can,
        increments that cannot be negative, and a CSR in the budget; else None."""
        g, k = self.graph, self.backend.kernels
        if not WHOLE_TRAVERSAL or self.comm.size > 1 or not getattr(k, "whole_traversals", lambda: False)():
            return None
        if (plus is None and g.weighted and g.num_arcs and float(g.attrs["min_weight"]) < 0) or \
                (plus is not None and not plus >= 0):
            return None
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
        done = self.backend.kernels.traverse_min(indptr, indices, w, np.asarray(frontier, np.int64), state, plus,
                                                 parent)
        if done is None:
            return None
        iterations, arcs = (int(v) for v in done)
        seconds = time.perf_counter() - t
        self.stats.traversals += 1
        self.stats.arcs_processed += arcs
        self.stats.record("traversal", seconds, before, arcs=arcs, clock=self.clock)
        self.stats.seconds_computing += seconds
        self.report(iterations, 0)
        log.info("whole traversal over the CSR: %d levels' worth, %d arcs, %.3f s", iterations, arcs, seconds)
        return iterations

    def shortest_paths(self, state, *, plus, source: int, execution: str = "auto"):
        """``propagate_min`` from ``source`` and then ``tight_parents``: ``(iterations, parent)``.
        Where the compiled CPU kernels hold the CSR in memory, one traversal does both."""
        k = self.backend.kernels
        if self._whole_csr(plus) is not None:
            tree = self._bfs_tree(state, plus, source)
            if tree is not None:
                return tree
            n = self.graph.num_vertices
            parent = np.full(n, n, dtype=np.int64)
            parent[source] = source
            t = time.perf_counter()
            iterations = self._traverse(state, plus, [source], parent)
            if iterations is not None:
                indptr, indices, w, _ = self._whole_csr(plus)
                parent = k.tree_parents(indptr, indices, w, state, plus, source, parent)
                self.stats.seconds_computing += time.perf_counter() - t - self.stats.per_pass[-1]["seconds"]
                return iterations, parent
        iterations = self.propagate_min(state, plus=plus, frontier=[source], execution=execution)
        return iterations, self.tight_parents(state, plus=plus, root=source)

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
        csr = self._whole_csr(plus)
        if csr is not None:
            parent = k.tree_parents(csr[0], csr[1], csr[2], dist, plus, root)
            if parent is not None:
                return parent
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

    def _bfs_tree(self, state, plus, source: int):
        """``shortest_paths`` for unit increments from a fresh state, in one compiled call
        (``kernels.bfs_tree``: direction-optimising, the parents built on the way) over the
        out-CSR in memory and, for bottom-up levels, the in-CSR if it fits the CSR budget too
        (loaded only when a level needs it; an undirected graph's is its out-CSR);
        ``(iterations, parent)``, or None where this does not apply."""
        k = self.backend.kernels
        if plus != 1.0 or not hasattr(k, "bfs_tree"):
            return None
        indptr, indices, _, _ = self._whole_csr(plus)

        def in_csr():
            csr = self.csr("in") if self.graph.directed else (indptr, indices)
            return None if csr is None else csr[:2]
        before, t = self.stats.as_dict(), time.perf_counter()
        done = k.bfs_tree(indptr, indices, source, state, in_csr)
        if done is None:
            return None
        iterations, arcs, parent = done
        seconds = time.perf_counter() - t
        self.stats.traversals += 1
        self.stats.arcs_processed += arcs
        self.stats.record("traversal", seconds, before, arcs=arcs, clock=self.clock)
        self.stats.seconds_computing += seconds
        self.report(iterations, 0)
        log.info("BFS over the CSR in memory: %d levels, %d arcs, %.3f s", iterations, arcs, seconds)
        return iterations, parent

    # -- the general edge operator (engine/edge_map.py) -----------------------------------------
    def edge_map(self, f, x=None, *, monoid: str = "sum", out=None, x_dst=None, frontier=None,
                 direction: str = "in", gather: bool = True):
        """Combine ``f(x[u], x_dst[v], w)`` over arcs u→v into ``out[v]`` with ``monoid``; one pass.

        ``f`` is an expression over ``src``, ``dst`` and ``w`` (the arc weight; 1 on an unweighted
        graph) such as ``"src * w"``, ``"1"`` or ``"min(src, dst)"``, or a name of
        :data:`~ooc_graph.engine.expression.LIBRARY` (``copy_src``, ``mul_w``, ``plus_w``, ``one``,
        ...): arithmetic, comparisons, ``and``/``or``/``not``, ``min``, ``max``, ``abs`` and
        ``where(c, a, b)`` only. ``monoid`` is ``sum``, ``min``, ``max``, ``or`` (1 where any ``f``
        is non-zero) or ``most_frequent`` (the most frequent ``f`` over the arcs into v, ties to
        the smallest; vertices without such arcs keep ``out``'s value). ``x_dst`` defaults to ``x``.

        ``out`` (n values) is combined into as it is; by default a new array of the monoid's
        identity (float64; uint8 for ``or``; a copy of ``x_dst`` for ``most_frequent``).
        ``frontier`` (a mask or vertex ids) restricts the pass to arcs whose source is in it and
        skips chunks without such a source (a frontier with few arcs is advanced over the CSR
        instead, on the CPU in one process). ``direction``: ``"in"`` along the arcs, ``"out"``
        against them (into each arc's source; streams the out-CSR), ``"both"`` (on an undirected
        graph all three are one pass). ``gather=False`` leaves the other workers' ranges of
        ``out`` unset in a distributed run (only :attr:`owned` is valid). Returns ``out``.
        See :mod:`.edge_map` for what streams and how ``most_frequent`` spans chunks.
        """
        from .edge_map import edge_map
        return edge_map(self, f, x, monoid=monoid, out=out, x_dst=x_dst, frontier=frontier,
                        direction=direction, gather=gather)

"""The engine: the operators algorithms are written on, over a :class:`~.stream.ChunkStream`.

Algorithms are small programs on four operators: ``pull_sum`` (one pass of a sum over in-arcs),
``propagate_min`` (min-relaxation to a fixed point), ``tight_parents`` (a shortest-path tree) and
``hook_components`` (connected components by hooking and pointer jumping), and ``edge_map``,
the general operator the others are special cases of. The engine owns the loop, selective
scheduling (skipping chunks whose source intervals hold no changed vertex) and, for the
min-relaxations (:mod:`.traversal`), the per-iteration choice among an edge-centric pass over
the CEL, a frontier advance over the CSR and a bottom-up level. In a
distributed run each worker's engine streams the sub-graphs it owns and exchanges the state of
their destinations through its :class:`~.exchange.Comm` after every pass; the algorithm's code is
the same everywhere.
"""

from __future__ import annotations

import logging
import math
import time
from functools import partial

import numpy as np

from ooc_graph import config
from ooc_graph._records import record
from ooc_graph.errors import ConvergenceError, JobCancelled
from ooc_graph.store import Graph

from .exchange import Comm, LocalComm
from .hostbuf import Prepared
from .stream import ChunkStream
from .traversal import Traversals
from .trees import Trees

log = logging.getLogger("ooc_graph.engine")


class Sums:
    """Sums of an iteration (:meth:`Engine.sum_over_workers` with ``wait=False``): ``device`` as
    computed (kernels queued later may read them), :meth:`host` the host array once it is there.
    ``wait(event)`` waits for them to arrive (the comm's :meth:`~.exchange.Comm.wait_for`). In a
    distributed run the host array ends with the ranks' stop flag, handed to ``agreed``."""

    def __init__(self, device, host, event=None, wait=None, agreed=None):
        self.device, self._host, self._event = device, host, event
        self._wait, self._agreed = wait, agreed

    def host(self) -> np.ndarray:
        if self._event is not None:
            self._wait(self._event)
            self._event = None
        host = np.asarray(self._host, np.float64)
        if self._agreed is None:
            return host
        self._agreed(bool(host[-1] > 0))
        self._agreed = None
        return host[:-1]


@record
class _Rows:
    """A pass over the rows [lo, hi) of a CSR in memory, as :meth:`ChunkStream._whole_pass`
    records it (``num_arcs``)."""
    indptr: object
    lo: int
    hi: int

    @property
    def num_arcs(self) -> int:
        return int(self.indptr[self.hi]) - int(self.indptr[self.lo])


@record
class _Sending:
    """A result being sent to host memory (:meth:`Engine.send_result`): the device array (None
    once unsent), its host memory, how many of its vertices were sent, the event after the last
    copy."""
    array: object
    host: np.ndarray
    sent: int = 0
    event: object = None


class Engine(Trees, Traversals, ChunkStream):
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
        self._pull_ok = None  # whether every rank holds the in-CSR (bottom-up levels; agreed once)
        self._whole_ok = None  # whether every rank can run whole compiled traversals (agreed once)
        self._prepared = None  # result memory being made ready (prepare_results)
        self.results_on_device = False  # this call returns its arrays on the GPU (output="cupy")
        self._sending = None  # the result being sent to the host (_Sending), if any
        self._stop_agreed = None  # whether to stop, agreed on by sum_over_workers

    # -- bookkeeping ----------------------------------------------------------------------------
    def reset_stats(self):
        """Start a run: fresh statistics; collective decisions are taken again (in a distributed
        job every rank must take them at the same point, whatever it cached before)."""
        super().reset_stats()
        self._advance_ok = self._pull_ok = self._whole_ok = None
        self._stop_agreed = None
        self._sent(None)

    def release(self):
        """Free what the engine holds (result memory being prepared included; on a GPU the unused
        blocks of CuPy's device and page-locked pools go back too)."""
        self.discard_prepared()
        super().release()
        if self.backend.xp is not np:
            self.backend.kernels.free_unused_memory()

    def report(self, iteration: int, measure, agree: bool = True) -> None:
        """Record the convergence measure of an iteration (a residual, or how many vertices
        changed), tell the listener, and stop every worker at once if any was asked to stop.
        ``agree=False`` (every rank passing it at the same report): a distributed run does not
        agree on stopping here (a collective and its host wait); a stop request waits for the
        next report that does."""
        self.stats.convergence.append((iteration, measure))
        if isinstance(measure, float) and not math.isfinite(measure):  # alike on every rank: all stop
            raise ConvergenceError(f"{self.graph.path}: the iteration diverged: its change became {measure} at "
                                   f"iteration {iteration} (the values are infinite or NaN)")
        if self.on_report is not None:
            self.on_report(iteration, measure)
        if not agree and self.comm.size > 1 and self._stop_agreed is None:
            return
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
        if (self.backend.xp is np and self.host_empty is None) or n * 8 < config.get().stream.prepare_min_bytes:
            return
        lo, hi = self.owned
        part = slice(lo, hi) if self._slices else slice(None)
        make = self.host_empty
        if make is None and self.backend.xp is not np:  # page-locked: copied into at bus speed
            make = partial(self.backend.kernels.empty_result, device=self.backend.xp.cuda.runtime.getDevice())
        self._prepared = Prepared([((n,), d) for d in dtypes], make, part)

    def discard_prepared(self) -> None:
        self._sent(None)  # no copy still writes into memory dropped here
        if self._prepared is not None:
            self._prepared.discard()
            self._prepared = None

    @property
    def _slices(self) -> bool:
        """Whether each worker writes only its own vertices of a result (shared memory)."""
        return self.comm.size > 1 and self.host_empty is not None

    def result(self, array, *, gathered: bool = True):
        """A final per-vertex result in host memory, as the run returns it. In one process: the
        array itself on the CPU, else a copy into memory prepared meanwhile. In a distributed job
        whose workers share the client's host, each worker copies its own vertices into the same
        shared-memory array; otherwise rank 0 returns the whole and the other ranks ``None``.
        ``gathered=False``: only this worker's own vertices of ``array`` are current, and the
        others are fetched only where a whole array is returned (every rank must call it).
        Where the call asked for its results on the device (:attr:`results_on_device`, one
        process): ``array`` itself, which the call made for itself (zero copy)."""
        if not gathered and self.comm.size > 1 and not self._slices:
            self.gather(array)
        self.comm.join()
        if self.comm.size > 1 and self.host_empty is None and self.comm.rank != 0:
            return None
        out, whole = self._sent(array)
        if whole:  # every vertex of it sent already
            return out
        if (self.backend.xp is np and self.host_empty is None) or self.results_on_device:
            return array
        if out is None and self._prepared is not None:
            out = self._prepared.take(array.shape, array.dtype)
        if out is None and self.host_empty is not None:
            out = self.host_empty(array.shape, array.dtype)
        if self._slices:
            lo, hi = self.owned
            self.backend.to_host(array[lo:hi], out[lo:hi])
            return out
        return self.backend.to_host(array, out)

    @property
    def sends_results(self) -> bool:
        """Whether :meth:`send_result` may send (one GPU in one process, results for the host)."""
        return (self.backend.xp is not np and self.comm.size == 1 and not self.results_on_device
                and self._prepared is not None)

    def send_result(self, array, lo: int, hi: int) -> bool:
        """Start copying ``array[lo:hi]``, final values of a result this call will return through
        :meth:`result`, to host memory while the device goes on (after the work queued so far).
        Only a one-process GPU run with its result for the host, in page-locked memory prepared
        and ready, sends; elsewhere (or where ``array`` is not one such result) this returns
        False and :meth:`result` copies as usual. Where every vertex of ``array`` was sent,
        :meth:`result` only waits for the copies; sending another array starts over."""
        k, n = self.backend.kernels, self.graph.num_vertices
        s = self._sending
        if s is None or s.array is not array:
            if not self.sends_results or array.shape != (n,) or not self._prepared.ready:
                return False
            # The host memory of an array sent before (step i was not the last: step i + 1's
            # values go there, behind the copies already queued), or the prepared array.
            reuse = s is not None and s.host.dtype == array.dtype
            host = s.host if reuse else self._prepared.take(array.shape, array.dtype)
            if host is None or not k.page_locked(host):
                self._sending = None if host is None else _Sending(None, host, event=s.event if s else None)
                return False
            s = self._sending = _Sending(array, host)
        s.event = k.to_host_behind(array[lo:hi], s.host[lo:hi])
        s.sent += hi - lo
        return True

    def unsend(self) -> None:
        """The values sent so far are not final after all (the algorithm goes on and may write
        that array again): :meth:`result` copies again, into the same host memory."""
        if self._sending is not None:
            self._sending.array, self._sending.sent = None, 0

    def _sent(self, array) -> tuple:
        """``(host array, whole)``: the host array :meth:`send_result` copied into, once its
        copies have landed (None if none), and whether they were all of ``array``."""
        s, self._sending = self._sending, None
        if s is None:
            return None, False
        if s.event is not None:
            s.event.synchronize()
        return s.host, s.array is array and s.sent == self.graph.num_vertices

    def gather(self, x, *, wait: bool = True) -> None:
        """Fill the other workers' ranges of ``x`` from them (nothing in one process).
        ``wait=False``: the next :meth:`sum_over_workers` waits for it (one wait per iteration)."""
        self._exchange(lambda a: self.comm.gather_owned(a, wait=wait), x)

    @property
    def sums_arrive_late(self) -> bool:
        """Whether :meth:`sum_over_workers` with ``wait=False`` leaves device sums on their way to
        the host (a GPU, alone or with NCCL among the ranks): an algorithm can queue its next step
        before looking."""
        return self.backend.xp is not np and self.comm.queues_on_device

    def sum_over_workers(self, values, *, wait: bool = True):
        """Small per-worker partial sums (host values or a backend array) added up over the
        workers, as a host array: the iteration's one wait for the device. In a distributed run
        the workers also agree here on whether to stop (the next :meth:`report` needs no
        collective of its own), and it waits for exchanges queued before it.

        ``wait=False`` returns :class:`Sums` instead: where :attr:`sums_arrive_late` they are
        then still on their way to the host while the host queues the next iteration; elsewhere
        they have arrived."""
        xp = self.backend.xp
        if not wait:
            if not (self.sums_arrive_late and isinstance(values, xp.ndarray)):
                return Sums(values, self.sum_over_workers(values))
            if self.comm.size == 1:
                return Sums(values, *self.backend.kernels.to_host_later(values), wait=self.comm.wait_for)
            buf = self._with_stop_flag(values)
            self.comm.allreduce_array(buf, "sum", wait=False)
            with self.comm.queue_stream():  # behind the all-reduce, wherever the comm queued it
                host, event = self.backend.kernels.to_host_later(buf)
            return Sums(buf[:-1], host, event, wait=self.comm.wait_for, agreed=self._agree_stop)
        if self.comm.size == 1:
            on_host = xp is np or isinstance(values, (np.ndarray, list, tuple, float, int))
            return np.asarray(values if on_host else self.backend.to_host(values), np.float64)
        buf = self._with_stop_flag(values)
        self.comm.allreduce_array(buf, "sum")
        host = np.asarray(self.backend.to_host(buf), np.float64)
        self._agree_stop(bool(host[-1] > 0))
        return host[:-1]

    def _with_stop_flag(self, values):
        """``values`` and this rank's stop request, in one float64 array of the backend."""
        xp = self.backend.xp
        buf = xp.empty(len(values) + 1, dtype=np.float64)
        buf[:-1] = xp.asarray(values, dtype=np.float64)
        buf[-1] = float(self._stop_requested())
        return buf

    def _agree_stop(self, stop: bool) -> None:
        self._stop_agreed = stop

    # -- operators ------------------------------------------------------------------------------
    def pull_sum(self, x, *, out=None, gather: bool = True, then=None, stripes: int = 1):
        """``y[v] = Σ_{u→v} x[u]`` over all arcs (one pass). On a GPU holding every chunk, passes
        after the first run over one cache-blocked copy of the graph (:func:`kernels.gpu.source_blocked`).

        ``out`` (n float64) receives ``y``; ``gather=False`` leaves the other workers' ranges of
        it unset (only :attr:`owned` is valid): an algorithm that then updates only its own
        vertices exchanges what it needs itself, once per iteration.

        ``then(lo, hi)`` is called once the sums of the owned vertices ``[lo, hi)`` are queued,
        and the list of what it returned is returned instead of ``y``. With ``stripes > 1``, where
        the pass runs over the cache-blocked copy in one process (and is not profiled), it runs by
        destination stripes, calling ``then`` after each: what ``then`` queues (a step, a copy of
        final values to the host) overlaps the rest of the pass. ``then`` may overwrite ``y`` and
        the vertex values of its own range, but not ``x``: later stripes still read all of it."""
        k, xp = self.backend.kernels, self.backend.xp
        t = time.perf_counter()
        lo, hi = self.owned
        y = xp.zeros(self.graph.num_vertices, dtype=np.float64) if out is None else out

        def clear():  # the passes below add into the owned destinations (the whole pull writes them)
            if out is not None:
                y[lo:hi] = 0.0
        whole = self._whole_graph()
        cut = self._stripes(whole, stripes) if then is not None else None
        if cut is not None:
            clear()
            done = []
            self.comm.join()
            for _ in self._whole_pass(whole):
                for a, b, parts in cut:
                    for part in parts:
                        k.pull_sum(part, x, y)
                    done.append(then(a, b))
            self.stats.seconds_computing += time.perf_counter() - t
            return done
        if whole is not None and self.comm.size > 1:  # x's other ranges may still be on their way
            clear()
            own, others = self._own_sources(whole)
            for batch in self._whole_pass(whole):
                k.pull_sum(own, x, y)
                self.comm.join_gathered()  # the other ranks' x; the sums queued after them run meanwhile
                for part in others:
                    k.pull_sum(part, x, y)
                self.comm.join()  # what follows (a step reading those sums) waits for them
        elif whole is None and self._pull_rows(x, y):
            pass  # the whole in-CSR in memory, in one call, every owned row written (below, the chunks)
        else:
            clear()
            self.comm.join()
            for batch in self.batches() if whole is None else self._whole_pass(whole):
                k.pull_sum(batch, x, y)
        if gather:
            self._exchange(self.comm.gather_owned, y)
        self.stats.seconds_computing += time.perf_counter() - t
        return y if then is None else [then(lo, hi)]

    def _pull_rows(self, x, y) -> bool:
        """The owned rows of ``y`` summed over the whole in-CSR in memory by the backend's
        ``pull_rows`` (the compiled CPU kernels: each row in one go, no chunk prepared), where
        the backend wants it (``whole_pull``: on numba's threads, or config ``cpu.whole_pull``),
        whole traversals are allowed and the in-CSR's offsets and ids fit the CSR budget; counted
        as one pass. False where this does not apply (nothing done)."""
        k, cfg = self.backend.kernels, config.get()
        wanted = getattr(k, "whole_pull", None)
        if wanted is None or not wanted(self.graph.num_arcs) or not cfg.traversal.whole_traversal or \
                not k.whole_traversals():
            return False
        csr = self.csr("in" if self.graph.directed else "out", weights=False)
        if csr is None:
            return False
        lo, hi = self.owned
        self.comm.join()  # x's other ranges
        for _ in self._whole_pass(_Rows(csr[0], lo, hi)):
            if k.pull_rows(csr[0], csr[1], x, y, lo, hi) is None:
                return False  # (the pass is recorded; nothing was summed)
        return True

    def hook_components(self):
        """Connected components by hooking and pointer jumping (Gunrock CC): each pass hangs the
        larger root of every arc's two trees under the smaller, then every vertex jumps to its root.
        Pointers only decrease, so the root of a component is its smallest vertex. Arcs count in
        both directions. Returns (root of every vertex, passes).

        In a distributed run each worker hooks its own arcs into its copy of the forest and the
        copies are merged by an elementwise minimum: every pointer still leads to a smaller vertex
        of the same component, so the merge is again a forest of the same components."""
        whole = self._whole_components()
        if whole is not None:
            return whole
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

    def _whole_components(self):
        """``hook_components`` in one call of the backend's ``components`` (Afforest over the
        out-CSR in memory and, on a directed graph, the in-CSR where it fits too; weights are not
        read): ``(root, 1)``, or None where this does not apply (no such kernel, whole traversals
        off, the out-CSR beyond the budget; in a distributed run, any rank's). Every rank then
        computes every vertex's root alike."""
        k, g = self.backend.kernels, self.graph
        if not hasattr(k, "components") or not config.get().traversal.whole_traversal or not k.whole_traversals():
            able = False
        else:
            able = self.csr("out", weights=False) is not None
        if self.comm.size > 1:
            able = bool(self.comm.allreduce(int(able), "min"))
        if not able:
            return None
        out = self.csr("out", weights=False)
        inward = self.csr("in", weights=False) if g.directed else None
        before, t = self.stats.as_dict(), time.perf_counter()
        done = k.components(out[0], out[1], None if inward is None else inward[:2], not g.directed)
        if done is None:
            return None
        root, arcs = done
        self._count_traversal(1, arcs, before, t)
        return root, 1

    # -- the general edge operator (engine/edge_map.py) -----------------------------------------
    def edge_map(self, f, x=None, *, monoid: str = "sum", out=None, x_dst=None, y=None, frontier=None,
                 direction: str = "in", gather: bool = True):
        """Combine ``f(x[u], x_dst[v], w)`` over arcs u→v into ``out[v]`` with ``monoid``; one pass.

        ``f`` is an expression over ``src``, ``dst`` and ``w`` (the arc weight; 1 on an unweighted
        graph) such as ``"src * w"``, ``"1"`` or ``"min(src, dst)"``, or a name of
        :data:`~ooc_graph.engine.expression.LIBRARY` (``copy_src``, ``mul_w``, ``plus_w``, ``one``,
        ...): arithmetic, comparisons, ``and``/``or``/``not``, ``min``, ``max``, ``abs`` and
        ``where(c, a, b)`` only. ``monoid`` is ``sum``, ``min``, ``max``, ``or`` (1 where any ``f``
        is non-zero) or ``most_frequent`` (the most frequent ``f`` over the arcs into v, ties to
        the smallest; vertices without such arcs keep ``out``'s value). ``x_dst`` defaults to ``x``.
        ``y`` (n values), if given, is a second vertex array that ``f`` reads at both ends as
        ``y_src`` and ``y_dst``: ``"where(y_src + w == y_dst, src, 0)"`` sums ``x`` over the arcs
        that are tight for distances ``y``.

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
        return edge_map(self, f, x, monoid=monoid, out=out, x_dst=x_dst, y=y, frontier=frontier,
                        direction=direction, gather=gather)

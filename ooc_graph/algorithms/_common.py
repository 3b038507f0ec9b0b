"""Validation and bookkeeping shared by the algorithm modules."""

from __future__ import annotations

import math
import reprlib
import time

import numpy as np

from ooc_graph._memory import parse_size
from ooc_graph.engine import Engine, current_placement
from ooc_graph.engine.monitor import current_watcher
from ooc_graph.errors import ParameterError, check_converged
from ooc_graph.registry import OUTPUTS
from ooc_graph.store import Graph, as_graph


def check_positive_int(name, value) -> int:
    """``value`` as an int if it is a positive integer (Python or NumPy), else a ParameterError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name} must be a positive integer (got {value!r})")
    return int(value)


def check_bool(name, value) -> bool:
    """``value`` if it is True or False (Python or NumPy), else a ParameterError: ``"no"`` is not
    read as true."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False (got {value!r})")
    return bool(value)


def check_real(name, value, *, finite: bool = True) -> float:
    """``value`` as a float if it is a real number (Python or NumPy, not a bool; finite unless
    ``finite=False``, and never NaN), else a ParameterError naming it (a string such as ``"0.85"``
    is not read as one)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name} must be a number (got {value!r})")
    value = float(value)
    if value != value or (finite and not math.isfinite(value)):
        raise ParameterError(f"{name} must be a finite number (got {value!r})")
    return value


def check_iteration(max_iter, tol, weight=None) -> int:
    """The iterative algorithms' shared keywords: ``max_iter`` as an int, a positive ``tol`` and
    ``weight`` None or an edge attribute name (ParameterError otherwise)."""
    if not check_real("tol", tol) > 0:
        raise ParameterError(f"tol must be positive (got {tol!r})")
    if weight is not None and not isinstance(weight, str):
        raise ParameterError(f"weight must be None or an edge attribute name such as 'weight' (got {weight!r})")
    return check_positive_int("max_iter", max_iter)


# The most per-vertex float64 arrays any algorithm keeps (PageRank), counted against the budgets.
STATE_ARRAYS = 5


def engine_for(graph: Graph, *, memory, device, device_memory, profile=False) -> Engine:
    """The graph's engine for these settings, made on first use and kept while the graph is open,
    so the chunks one call cached (in host memory or on the GPU) serve the next call. Inside a
    distributed job (:func:`ooc_graph.engine.placed`) the engine streams the worker's share of
    the graph and exchanges state through the job's comm."""
    for value in (memory, device_memory):  # a ParameterError, before the budgets key a table
        if value is not None:
            parse_size(value)
    placement = current_placement()
    key = (device, memory, device_memory) + (() if placement is None else placement.key)
    engine = graph.engines.get(key)
    if engine is None:
        extra = {} if placement is None else {"arc_range": placement.arc_range}
        engine = graph.engines[key] = Engine(graph, memory=memory, device=device, device_memory=device_memory,
                                             state_arrays=STATE_ARRAYS, **extra)
    if placement is not None:
        engine.comm = placement.comm
        engine.on_report, engine.should_stop = placement.on_report, placement.should_stop
        engine.host_empty = placement.host_empty
    else:
        engine.on_report, engine.should_stop, engine.host_empty = current_watcher(), None, None
    engine.reset_stats()
    engine.profile = profile
    return engine


class Call:
    """What every algorithm call does around its work, streamed (:class:`Run`) or in memory
    (:class:`._inmemory.InMemoryRun`): it is timed from :meth:`start`, and its result is
    concluded in one place (:meth:`conclude`)."""

    def __init__(self, G, *, strict: bool = False):
        self.graph = as_graph(G)
        self.strict = strict  # raise ConvergenceError for a result that did not converge
        self.t0 = time.perf_counter()

    def start(self) -> None:
        """The work begins (after the setup a call's seconds leave out)."""
        self.t0 = time.perf_counter()

    def seconds(self) -> float:
        return time.perf_counter() - self.t0

    def conclude(self, result, store):
        """In one process (a distributed job saves once, from the client or rank 0): raise for
        non-convergence where asked, save the result where asked, and let go of the store's file
        (caches stay: an open graph holds HDF5's shared lock, which would make other processes'
        saves wait; the next read reopens it). Returns ``result``."""
        if current_placement() is None:
            if self.strict:
                check_converged(result)
            if store:
                result.save(store if isinstance(store, str) else None)
            self.graph.detach()
        return result


class Run(Call):
    """A streamed call: its engine, the host memory of its results, and what the result reports."""

    def __init__(self, G, *, memory, device, device_memory=None, profile=False, outputs=(), output="numpy",
                 raise_on_nonconvergence: bool = False):
        """``outputs``: the dtypes of the per-vertex arrays the run will return (through
        :meth:`Engine.result`), whose host memory is made ready while it computes; ``output``:
        ``"numpy"`` (host memory) or ``"cupy"`` (the arrays stay on the GPU: nothing is copied);
        the registry checked both, and the other keywords every algorithm shares.
        ``raise_on_nonconvergence``: :meth:`finish` raises :class:`ConvergenceError` for a result
        that did not converge (in one process; a distributed call raises on the client)."""
        assert output in OUTPUTS
        super().__init__(G, strict=check_bool("raise_on_nonconvergence", raise_on_nonconvergence))
        if output == "cupy" and current_placement() is not None:
            raise ParameterError("output='cupy' keeps results on the GPU of one process; a distributed call "
                                 "returns them in host memory (use output='numpy')")
        self.engine = engine_for(self.graph, memory=memory, device=device, device_memory=device_memory,
                                 profile=profile)
        if output == "cupy" and self.engine.backend.xp is np:
            raise ParameterError(f"output='cupy' keeps results on the GPU, but this call runs on the CPU "
                                 f"(device={device!r}); use device='gpu' or output='numpy'")
        self.engine.results_on_device = output == "cupy"
        if output == "numpy":
            self.engine.prepare_results(outputs)
        self.start()

    def finish(self, cls, algorithm, parameters, iterations, converged, store, **arrays):
        self.engine.discard_prepared()
        s = self.engine.stats
        result = cls(algorithm=algorithm, parameters=parameters, iterations=iterations, converged=converged,
                     seconds=self.seconds(), device=self.engine.backend.name,
                     stats=s.as_dict() | {"chunks": len(self.engine.bounds), "per_pass": s.per_pass,
                                          "strategies": s.strategies, "convergence": s.convergence,
                                          "timeline": s.timeline},
                     graph=self.graph, **arrays)
        return self.conclude(result, store)


def unreached(engine: Engine, source: int):
    """A traversal's fresh state on the engine's device: inf everywhere, 0 at ``source`` (the CPU
    backend fills a large one on numba's threads: ``kernels.cpu.full``)."""
    state = engine.backend.full(engine.graph.num_vertices, np.inf)
    state[source] = 0.0
    return state


def initial_vector(graph: Graph, values, name: str, *, default: float = 1.0, nonzero: bool = True) -> np.ndarray:
    """n floats from ``{original vertex id: value}`` (vertices not named: 0), an array of n, or
    ``default`` everywhere when ``values`` is None; checked before any chunk is read. ``nonzero``:
    they must not sum to 0 (the caller divides by their sum; networkx raises ZeroDivisionError)."""
    n = graph.num_vertices
    if values is None:
        return np.full(n, float(default))
    if isinstance(values, dict):
        x = np.zeros(n)
        for v, value in values.items():
            x[graph.vertex_id(v)] = check_real(f"{name}[{v!r}]", value)
    else:  # numbers only: neither a string nor an array of them is read as one
        try:
            a = None if isinstance(values, (str, bytes)) else np.asarray(values)
        except ValueError:  # ragged
            a = None
        x = a.astype(np.float64) if a is not None and a.dtype.kind in "iuf" else None
    if x is None or x.shape != (n,) or not np.isfinite(x).all() or (nonzero and n and not x.sum()):
        raise ParameterError(f"{name} must be {n} finite values{' whose sum is not zero' if nonzero else ''}, "
                             f"or a dict of them by vertex id (got {reprlib.repr(values)})")
    return x

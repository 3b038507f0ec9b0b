"""Betweenness centrality (Brandes) on frontier sums over BFS levels, or over the levels of the
shortest-path DAG with arc weights."""

from __future__ import annotations

import logging
import math
import random

import numpy as np

from ooc_graph.errors import ParameterError
from ooc_graph.registry import Option, algorithm

from . import _options as _o
from ._common import Run, as_graph, check_bool, check_positive_int
from ._result import CentralityResult

__all__ = ["betweenness_centrality"]
log = logging.getLogger("ooc_graph.betweenness")


# The arcs u→v of the shortest-path DAG from the source, distances in y (sums as SSSP adds them,
# as networkx's Dijkstra compares them: ``dist[u] + w == dist[v]``). ``y_src < y_dst`` keeps it
# acyclic where a weight is too small to change a sum (a tight arc then joins equal distances) and
# leaves out the arcs between unreached vertices (inf + w == inf).
TIGHT = "y_src + w == y_dst and y_src < y_dst"
# Against the arcs (``direction="out"``) the source end of an arc is its head: the same test, turned.
TIGHT_BACK = "y_dst + w == y_src and y_dst < y_src"


@algorithm(result=CentralityResult, options=[
    Option("--k", int, "sample this many sources (default: every vertex, exact)"),
    Option("--seed", int, "seed of the source sample, as networkx's"),
    Option("--normalized", bool, "divide by the number of vertex pairs, as networkx", True),
    Option("--endpoints", bool, "count the path ends too", False),
    _o.WEIGHT,
])
def betweenness_centrality(G, *, k=None, normalized: bool = True, weight=None, endpoints: bool = False, seed=None,
                           memory=None, device: str = "auto", device_memory=None, profile: bool = False,
                           store=False, output: str = "numpy") -> CentralityResult:
    """Shortest-path betweenness of every vertex (Brandes), exact or from ``k`` sampled sources.

    As networkx's ``betweenness_centrality``: on hops, or with ``weight`` (an edge attribute
    name such as ``"weight"``; the store keeps one weight per arc, whatever its name) on the arc
    weights, which must then be positive (networkx's path counts over zero-weight arcs depend on
    the order it visits vertices). Every weight is 1 on an unweighted store.

    Where one process holds the out-CSR in its budget (the engine's CSR for frontier advances, a
    quarter of ``memory`` or ``device_memory``), each source runs as networkx runs it, by
    :meth:`~ooc_graph.engine.Engine.brandes`: a queue BFS (with weights, Dijkstra with a heap)
    whose order is the stack S, the path counts forward over it and the dependencies backward,
    O(arcs reached) a source and nothing per level. On the CPU that takes numba (the ``cpu``
    extra); numba's threads share the sources, each with 32 bytes a vertex of its own
    (56 with weights), as many copies as a quarter of ``memory`` holds. Road NW (1.2M vertices,
    ~1,400 levels a source) costs 0.06-0.09 s a source on two cores, where the sweeps below took
    21 s and networkx 6.9 s. On a GPU, for hops, each level's vertices are queued on the device:
    two kernel launches and one look from the host a level. Elsewhere (several processes, a CSR
    beyond the budget, no numba, weights on a GPU; or ``WHOLE_BRANDES = False`` in
    ``ooc_graph.engine.traversal``) the sweeps below run on the edge operator, with the same
    sources and results that agree to rounding (sums in another order).

    For each source, a forward sweep counts shortest paths level by level (one frontier pass of
    the edge operator per BFS level: ``σ[v] = Σ σ[u]`` over arcs from the level's vertices, which
    skips chunks without one), and a backward sweep accumulates dependencies level by level
    against the arcs (``δ[u] += σ[u] Σ (1 + δ[w]) / σ[w]`` over arcs u→w into the level below;
    the out-CSR on a directed graph). Each source costs two passes per level: exact betweenness
    on a large graph is n such sweeps, so use ``k``. With weights the distances come first (SSSP,
    :meth:`~ooc_graph.engine.Engine.propagate_min`: networkx's sums, bit for bit), and the sweeps
    run over the tight arcs (``dist[u] + w == dist[v]``, which the edge operator tests with the
    distances as ``y``) in the levels of that DAG: a vertex joins the level after the tail of its
    last tight in-arc, counted off from a first pass that counts them (Kahn's order), so there are
    as many levels as the longest tight path has arcs, not one per distinct distance; that costs
    one pass more per level forward and one per source. ``k`` sources are drawn as networkx draws
    them (``random.Random(seed).sample`` of the vertices in id order; ``seed`` may also be a
    ``random.Random``, as networkx's ``py_random_state`` hands one to its functions: it draws
    them, and ``result.parameters['seed']`` is None), and ``normalized``, ``endpoints`` and the
    sampling correction follow networkx. Parallel arcs of a store built with ``dedupe=False``
    count as distinct paths (networkx's multigraphs count neighbours once, at their lightest
    arc). It keeps up to eight per-vertex arrays (two more with weights: the distances and the
    tight in-arcs still to count), three more than the engine sets aside in ``memory`` /
    ``device_memory`` (``ooc_graph.algorithms._common.STATE_ARRAYS``): near a budget's limit,
    leave 24 bytes per vertex more (40 with weights). ``memory``, ``device``, ``device_memory``,
    ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs; with ``k`` and no ``seed``, rank 0 draws a seed for all ranks
    and ``result.parameters['seed']`` says which.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), os.path.join(tempfile.mkdtemp(), "b.h5"),
    ...                       directed=False, progress=False)
    >>> ooc_graph.betweenness_centrality(G, device="cpu").values.tolist()
    [0.0, 1.0, 0.0]
    >>> W = ooc_graph.convert(np.array([[0, 1, 1.0], [1, 2, 1.0], [0, 2, 3.0]]),
    ...                       os.path.join(tempfile.mkdtemp(), "w.h5"), progress=False)
    >>> ooc_graph.betweenness_centrality(W, weight="weight", normalized=False, device="cpu").values.tolist()
    [0.0, 1.0, 0.0]
    """
    if weight is not None and not isinstance(weight, str):
        raise ParameterError(f"weight must be None or an edge attribute name such as 'weight' (got {weight!r})")
    normalized, endpoints = check_bool("normalized", normalized), check_bool("endpoints", endpoints)
    g = as_graph(G)
    n = g.num_vertices
    weighted = weight is not None and g.weighted and g.num_arcs > 0
    if weighted and not float(g.attrs["min_weight"]) > 0:
        raise ParameterError(f"weight={weight!r}: weighted betweenness needs positive arc weights ({g.path} has "
                             f"weight {float(g.attrs['min_weight'])!r}; networkx's path counts over zero-weight "
                             f"arcs depend on the order it visits vertices)")
    # Every arc of one weight: the shortest paths are those of fewest hops, and the sums along
    # them equal (each adds the same numbers in the same order), so the hop sweep gives the answer.
    weighted = weighted and float(g.attrs["min_weight"]) != float(g.attrs["max_weight"])
    if k is not None:
        k = check_positive_int("k", k)
        if k > n:
            raise ParameterError(f"k={k} is larger than the number of vertices ({n})")
    if k == n:
        k = None  # as networkx: every vertex, no sampling correction
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64,))
    eng, xp = run.engine, run.engine.backend.xp
    if k is not None and seed is None and eng.comm.size > 1:  # every rank must draw the same sources
        seed = int(eng.comm.allreduce(float(random.randrange(1 << 52)) if eng.comm.rank == 0 else 0.0, "sum"))
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    sources = list(range(n)) if k is None else rng.sample(range(n), k)
    bc = xp.zeros(n)
    if not eng.brandes(sources, bc, weighted=weighted, endpoints=endpoints):  # the CSR in memory: queues
        sweep = _weighted_sweep if weighted else _hop_sweep
        for i, s in enumerate(sources):
            delta, reached, levels = sweep(eng, xp, n, s)
            bc += xp.where(reached, delta + (1.0 if endpoints else 0.0), 0.0)
            if endpoints:
                bc[s] += float(reached.sum())
            eng.report(i + 1, levels)
            log.info("source %d of %d: %d levels", i + 1, len(sources), levels)
    scale = _scale(n, normalized=normalized, directed=g.directed, endpoints=endpoints,
                   sampled=None if k is None else sources)
    bc *= scale if np.isscalar(scale) else xp.asarray(scale)
    params = {"k": k, "normalized": normalized, "endpoints": endpoints, "seed": None if seed is rng else seed,
              "weight": weight}
    return run.finish(CentralityResult, "betweenness_centrality", params, len(sources), True, store,
                      values=eng.result(bc))


def _hop_sweep(eng, xp, n, s):
    """Brandes from ``s`` on hops: ``(δ, the vertices reached other than s, levels)``."""
    depth = xp.full(n, -1, dtype=np.int64)
    sigma = xp.zeros(n)
    depth[s], sigma[s] = 0, 1.0
    level = 0
    while True:  # forward: path counts level by level
        front = depth == level
        paths = eng.edge_map("src", sigma, frontier=front)
        new = (depth < 0) & (paths > 0)
        if not bool(new.any()):
            break
        level += 1
        depth[new] = level
        sigma[new] = paths[new]
    delta = xp.zeros(n)
    for d in range(level, 0, -1):  # backward: dependencies level by level
        front = depth == d
        coeff = xp.where(front, (1.0 + delta) / xp.where(front, sigma, 1.0), 0.0)
        acc = eng.edge_map("src", coeff, frontier=front, direction="out")
        above = depth == d - 1
        delta = xp.where(above, delta + sigma * acc, delta)
    return delta, depth > 0, level


def _weighted_sweep(eng, xp, n, s):
    """Brandes from ``s`` on the arc weights, over the tight arcs in the levels of their DAG:
    ``(δ, the vertices reached other than s, levels)``."""
    dist = xp.full(n, np.inf)
    dist[s] = 0.0
    eng.propagate_min(dist, plus=None, frontier=[s])
    waiting = eng.edge_map(f"where({TIGHT}, 1, 0)", y=dist, frontier=xp.isfinite(dist))  # tight in-arcs
    depth = xp.full(n, -1, dtype=np.int64)
    sigma = xp.zeros(n)
    depth[s], sigma[s] = 0, 1.0
    front, level = depth == 0, 0
    while True:  # forward: each level's tight out-arcs add its path counts and are counted off
        sigma += eng.edge_map(f"where({TIGHT}, src, 0)", sigma, y=dist, frontier=front)
        done = eng.edge_map(f"where({TIGHT}, 1, 0)", y=dist, frontier=front)
        waiting -= done
        front = (done > 0) & (waiting == 0)  # the last tight in-arc came from this level
        if not bool(front.any()):
            break
        level += 1
        depth[front] = level
    delta = xp.zeros(n)
    for d in range(level, 0, -1):  # backward: dependencies over the tight arcs into each level
        front = depth == d
        coeff = xp.where(front, (1.0 + delta) / xp.where(front, sigma, 1.0), 0.0)
        delta += sigma * eng.edge_map(f"where({TIGHT_BACK}, src, 0)", coeff, y=dist, frontier=front, direction="out")
    return delta, depth > 0, level


def _scale(n, *, normalized, directed, endpoints, sampled):
    """networkx's scaling (``networkx.algorithms.centrality.betweenness._rescale``): a number,
    or one per vertex when sources were sampled."""
    N = n if endpoints else n - 1
    if N < 2:
        return 1.0
    correction = 1 if directed else 2
    ks = N if sampled is None else len(sampled)
    if sampled is None or endpoints:
        return 1 / (ks * (N - 1)) if normalized else N / (ks * correction)
    if normalized:
        source = 1 / ((ks - 1) * (N - 1)) if ks > 1 else math.nan
        other = 1 / (ks * (N - 1))
    else:
        source = N / ((ks - 1) * correction) if ks > 1 else math.nan
        other = N / (ks * correction)
    scale = np.full(n, other)
    scale[np.asarray(sampled, dtype=np.int64)] = source
    return scale

"""Betweenness centrality (Brandes) on frontier sums over BFS levels."""

from __future__ import annotations

import logging
import math
import random

import numpy as np

from ooc_graph.errors import ParameterError
from ooc_graph.runtime.dispatch import distributable

from ._common import Run, as_graph, check_bool, check_positive_int
from ._result import CentralityResult

__all__ = ["betweenness_centrality"]
log = logging.getLogger("ooc_graph.betweenness")


@distributable
def betweenness_centrality(G, *, k=None, normalized: bool = True, weight=None, endpoints: bool = False, seed=None,
                           memory=None, device: str = "auto", device_memory=None, profile: bool = False,
                           store=False) -> CentralityResult:
    """Shortest-path betweenness of every vertex (Brandes), exact or from ``k`` sampled sources.

    As networkx's ``betweenness_centrality``, on hops (unweighted).

    For each source, a forward sweep counts shortest paths level by level (one frontier pass of
    the edge operator per BFS level: ``σ[v] = Σ σ[u]`` over arcs from the level's vertices, which
    skips chunks without one), and a backward sweep accumulates dependencies level by level
    against the arcs (``δ[u] += σ[u] Σ (1 + δ[w]) / σ[w]`` over arcs u→w into the level below;
    the out-CSR on a directed graph). Each source costs two passes per level: exact betweenness
    on a large graph is n such sweeps, so use ``k``. ``k`` sources are drawn as networkx draws
    them (``random.Random(seed).sample`` of the vertices in id order; ``seed`` may also be a
    ``random.Random``, as networkx's ``py_random_state`` hands one to its functions: it draws
    them, and ``result.parameters['seed']`` is None), and ``normalized``, ``endpoints`` and the
    sampling correction follow networkx. ``weight`` must be None (weighted
    shortest paths are not implemented). Parallel arcs of a store built with ``dedupe=False``
    count as distinct paths (networkx's multigraphs count neighbours once). It keeps up to eight
    per-vertex arrays, three more than the engine sets aside in ``memory`` / ``device_memory``
    (``ooc_graph.algorithms._common.STATE_ARRAYS``): near a budget's limit, leave 24 bytes per vertex
    more. ``memory``, ``device``, ``device_memory``, ``profile`` and ``store`` are as for
    :func:`~ooc_graph.pagerank`.
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
    """
    if weight is not None:
        raise ParameterError(f"weight={weight!r}: only hop-count betweenness is implemented (valid: None)")
    normalized, endpoints = check_bool("normalized", normalized), check_bool("endpoints", endpoints)
    g = as_graph(G)
    n = g.num_vertices
    if k is not None:
        k = check_positive_int("k", k)
        if k > n:
            raise ParameterError(f"k={k} is larger than the number of vertices ({n})")
    if k == n:
        k = None  # as networkx: every vertex, no sampling correction
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile,
              outputs=(np.float64,))
    eng, xp = run.engine, run.engine.backend.xp
    if k is not None and seed is None and eng.comm.size > 1:  # every rank must draw the same sources
        seed = int(eng.comm.allreduce(float(random.randrange(1 << 52)) if eng.comm.rank == 0 else 0.0, "sum"))
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    sources = list(range(n)) if k is None else rng.sample(range(n), k)
    bc = xp.zeros(n)
    for i, s in enumerate(sources):
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
        reached = depth > 0
        bc += xp.where(reached, delta + (1.0 if endpoints else 0.0), 0.0)
        if endpoints:
            bc[s] += float(reached.sum())
        eng.report(i + 1, level)
        log.info("source %d of %d: %d levels", i + 1, len(sources), level)
    scale = _scale(n, normalized=normalized, directed=g.directed, endpoints=endpoints,
                   sampled=None if k is None else sources)
    bc *= scale if np.isscalar(scale) else xp.asarray(scale)
    params = {"k": k, "normalized": normalized, "endpoints": endpoints, "seed": None if seed is rng else seed}
    return run.finish(CentralityResult, "betweenness_centrality", params, len(sources), True, store,
                      values=eng.result(bc))


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

"""HITS hubs and authorities by power iteration on the operator: two passes per iteration."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import Option, algorithm

from . import _options as _o
from ._common import Run, as_graph, check_bool, check_iteration, initial_vector
from ._result import Result

__all__ = ["hits", "HITSResult"]
log = logging.getLogger("ooc_graph.hits")


@record(repr=False)  # the short __repr__ of Result
class HITSResult(Result):
    """``hubs`` and ``authorities`` of every vertex (normalised to sum 1 unless asked not to)."""

    hubs: np.ndarray = None
    authorities: np.ndarray = None
    _arrays: tuple = ("hubs", "authorities")


@algorithm(result=HITSResult, options=[
    _o.max_iter(100),
    Option("--tol", float, "stop when the L1 change of the hubs falls below this", 1e-8),
    Option("--normalized", bool, "scale hubs and authorities to sum 1", True),
    _o.STRICT,
])
def hits(G, *, max_iter: int = 100, tol: float = 1e-8, nstart=None, normalized: bool = True, memory=None,
         device: str = "auto", device_memory=None, profile: bool = False, store=False,
         output: str = "numpy", raise_on_nonconvergence: bool = True) -> HITSResult:
    """Hub and authority scores of every vertex (Kleinberg), as networkx's ``hits``.

    Each iteration is one pass along the arcs (``a[v] = Σ_{u→v} h[u] w``) and one against them
    (``h[u] = Σ_{u→v} a[v] w``, over the out-CSR on a directed graph), each vector scaled to a
    largest value of 1; it stops when ``Σ|h_new - h| < tol`` (networkx's power iteration, whose
    tolerance does not grow with the graph either). Arc weights count where the store has them,
    as networkx's adjacency matrix does. ``nstart``: the initial hubs, ``{vertex id: value}`` or
    an array, whose sum is not zero (default uniform). ``normalized`` scales both to sum 1. A
    graph without arcs gives uniform scores. ``memory``, ``device``, ``device_memory``,
    ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`. Not converging within
    ``max_iter`` gives ``converged=False``.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 2], [1, 2]]), os.path.join(tempfile.mkdtemp(), "h.h5"), progress=False)
    >>> r = ooc_graph.hits(G, device="cpu")
    >>> r.hubs.tolist(), r.authorities.tolist()
    ([0.5, 0.5, 0.0], [0.0, 0.0, 1.0])
    """
    max_iter = check_iteration(max_iter, tol)
    normalized = check_bool("normalized", normalized)
    g = as_graph(G)
    n = g.num_vertices
    h0 = initial_vector(g, nstart, "nstart")
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64, np.float64), raise_on_nonconvergence=raise_on_nonconvergence)
    eng, xp = run.engine, run.engine.backend.xp
    h = xp.asarray(h0 / h0.sum()) if n else xp.zeros(0)
    a = xp.zeros(n)
    converged, it = n == 0 or g.num_arcs == 0, 0
    if converged and n:
        h, a = xp.full(n, 1.0 / n), xp.full(n, 1.0 / n)
    while not converged and it < max_iter:
        it += 1
        a = eng.edge_map("src * w", h)
        new = eng.edge_map("src * w", a, direction="out")
        new /= _max_or_one(new)
        a /= _max_or_one(a)
        err = float(xp.abs(new - h).sum())
        h = new
        eng.report(it, err)
        log.info("iteration %d: L1 change %.3e", it, err)
        converged = err < tol
    if normalized and n:
        h /= _sum_or_one(h)
        a /= _sum_or_one(a)
    return run.finish(HITSResult, "hits", {"max_iter": max_iter, "tol": tol, "normalized": normalized}, it,
                      converged, store, hubs=eng.result(h), authorities=eng.result(a))


def _max_or_one(x) -> float:
    m = float(x.max()) if x.size else 0.0
    return m if m != 0 else 1.0


def _sum_or_one(x) -> float:
    s = float(x.sum())
    return s if s != 0 else 1.0

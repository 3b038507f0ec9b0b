"""Eigenvector centrality by power iteration on the operator: one pass per iteration."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph.registry import algorithm

from . import _options as _o
from ._common import Run, as_graph, check_iteration, initial_vector
from ._result import CentralityResult

__all__ = ["eigenvector_centrality"]
log = logging.getLogger("ooc_graph.eigenvector")


@algorithm(result=CentralityResult, options=[_o.max_iter(100), _o.TOL, _o.WEIGHT, _o.STRICT])
def eigenvector_centrality(G, *, max_iter: int = 100, tol: float = 1e-6, nstart=None, weight=None, memory=None,
                           device: str = "auto", device_memory=None, profile: bool = False,
                           store=False, output: str = "numpy", raise_on_nonconvergence: bool = True) -> CentralityResult:
    """Eigenvector centrality of every vertex, as networkx's ``eigenvector_centrality``.

    In-arcs count (the left eigenvector of the adjacency matrix), as in networkx.

    Power iteration on ``A + I`` as networkx does (``x ← x + Aᵀ x``, one pass along the arcs,
    times the arc weight if ``weight`` is given), scaled to unit Euclidean norm each iteration;
    it stops when ``Σ|x_new - x| < tol`` (networkx compares with ``n * tol``; this does not grow
    with the graph), else the result says ``converged=False``. ``nstart``: initial values,
    ``{vertex id: value}`` or an array, whose sum is not zero (default all 1). ``memory``,
    ``device``, ``device_memory``, ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), os.path.join(tempfile.mkdtemp(), "e.h5"),
    ...                       directed=False, progress=False)
    >>> np.round(ooc_graph.eigenvector_centrality(G, device="cpu", tol=1e-12).values, 4).tolist()
    [0.5, 0.7071, 0.5]
    """
    max_iter = check_iteration(max_iter, tol, weight)
    g = as_graph(G)
    n = g.num_vertices
    x0 = initial_vector(g, nstart, "nstart")
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64,), raise_on_nonconvergence=raise_on_nonconvergence)
    eng, xp = run.engine, run.engine.backend.xp
    f = "src * w" if weight is not None else "src"
    x = xp.asarray(x0 / x0.sum()) if n else xp.zeros(0)
    converged, it = n == 0, 0
    while not converged and it < max_iter:
        it += 1
        new = x + eng.edge_map(f, x)
        norm = float(xp.sqrt((new * new).sum()))
        new /= norm if norm else 1.0
        err = float(xp.abs(new - x).sum())
        x = new
        eng.report(it, err)
        log.info("iteration %d: L1 change %.3e", it, err)
        converged = err < tol
    params = {"max_iter": max_iter, "tol": tol, "weight": weight}
    return run.finish(CentralityResult, "eigenvector_centrality", params, it, converged, store,
                      values=eng.result(x))

"""Katz centrality by fixed-point iteration on the operator: one pass per iteration."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph.errors import ParameterError
from ooc_graph.registry import Option, algorithm

from . import _options as _o
from ._common import Run, as_graph, check_bool, check_iteration, check_real, initial_vector
from ._result import CentralityResult

__all__ = ["katz_centrality"]
log = logging.getLogger("ooc_graph.katz")


@algorithm(result=CentralityResult, options=[
    Option("--alpha", float, "attenuation (below 1 / the largest eigenvalue converges)", 0.1),
    Option("--beta", float, "the value every vertex adds each iteration", 1.0),
    _o.max_iter(1000),
    _o.TOL,
    Option("--normalized", bool, "scale to unit Euclidean norm", True),
    _o.WEIGHT,
    _o.STRICT,
])
def katz_centrality(G, *, alpha: float = 0.1, beta=1.0, max_iter: int = 1000, tol: float = 1e-6, nstart=None,
                    normalized: bool = True, weight=None, memory=None, device: str = "auto", device_memory=None,
                    profile: bool = False, store=False, output: str = "numpy",
                    raise_on_nonconvergence: bool = True) -> CentralityResult:
    """Katz centrality ``x = alpha Aᵀ x + beta`` of every vertex, as networkx's ``katz_centrality``.

    Each iteration is one pass along the arcs (``Σ_{u→v} x[u]``, times the arc weight if
    ``weight`` is given). ``beta`` is a number, ``{vertex id: value}`` for every vertex, or an
    array; ``nstart`` the initial values (default 0). It stops when ``Σ|x_new - x| < tol`` (networkx
    compares with ``n * tol``, which loosens as graphs grow; this does not); ``normalized``
    scales the result to unit Euclidean norm. The iteration converges when ``alpha`` is below
    the reciprocal of the largest eigenvalue of the adjacency matrix; otherwise the result says
    ``converged=False``. ``memory``, ``device``, ``device_memory``, ``profile``, ``store`` and ``output`` are as
    for :func:`~ooc_graph.pagerank`.
    ``gpus=``, ``client=`` or ``workers=`` run the same call on several GPUs or dask workers, each
    streaming its share of the arcs.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [2, 1]]), os.path.join(tempfile.mkdtemp(), "k.h5"), progress=False)
    >>> np.round(ooc_graph.katz_centrality(G, device="cpu", normalized=False).values, 3).tolist()
    [1.0, 1.2, 1.0]
    """
    max_iter = check_iteration(max_iter, tol, weight)
    alpha, normalized = check_real("alpha", alpha), check_bool("normalized", normalized)
    g = as_graph(G)
    n = g.num_vertices
    if isinstance(beta, dict) and len({g.vertex_id(v) for v in beta}) != n:
        raise ParameterError(f"beta as a dict must give a value for every one of the {n} vertices")
    b = check_real("beta", beta) if isinstance(beta, (int, float, np.number)) else \
        initial_vector(g, beta, "beta", nonzero=False)
    x0 = initial_vector(g, nstart, "nstart", default=0.0, nonzero=False)
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64,), raise_on_nonconvergence=raise_on_nonconvergence)
    eng, xp = run.engine, run.engine.backend.xp
    b = b if np.isscalar(b) else xp.asarray(b)
    f = "src * w" if weight is not None else "src"
    x = xp.asarray(x0)
    converged, it = n == 0, 0
    while not converged and it < max_iter:
        it += 1
        new = alpha * eng.edge_map(f, x) + b
        err = float(xp.abs(new - x).sum())
        x = new
        eng.report(it, err)
        log.info("iteration %d: L1 change %.3e", it, err)
        converged = err < tol
    if normalized and n:
        norm = float(xp.sqrt((x * x).sum()))
        x = x / (norm if norm else 1.0)
    params = {"alpha": alpha, "max_iter": max_iter, "tol": tol, "normalized": normalized, "weight": weight}
    return run.finish(CentralityResult, "katz_centrality", params, it, converged, store, values=eng.result(x))

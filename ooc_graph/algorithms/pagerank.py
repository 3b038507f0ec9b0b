"""PageRank by streamed pull-sums over the CEL."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph.errors import ParameterError

from ooc_graph.runtime.dispatch import distributable

from ._common import Run, as_graph, check_positive_int
from ._result import PageRankResult

__all__ = ["pagerank"]
log = logging.getLogger("ooc_graph.pagerank")
MODES = ("networkx", "graphalytics")


@distributable
def pagerank(G, *, alpha: float = 0.85, tol: float = 1e-6, max_iter: int = 100, personalization=None,
             mode: str = "networkx", memory=None, device: str = "auto", device_memory=None,
             profile: bool = False, store=False) -> PageRankResult:
    """PageRank of every vertex; edge weights are ignored.

    Parameters
    ----------
    G : Graph or path
    alpha : float
        Damping factor, in (0, 1].
    tol : float
        ``mode="networkx"``: stop when the L1 change ``Σ|x_new - x|`` falls below ``tol``. Unlike
        networkx, which compares it with ``n * tol`` and so stops after one or two iterations on
        graphs of millions of vertices, this does not grow with the graph.
    max_iter : int
        ``mode="networkx"``: the iteration limit (the result says ``converged=False`` if reached);
        ``mode="graphalytics"``: the exact number of iterations.
    personalization : array of n non-negative floats, optional
        Teleport distribution (normalised here); also where dangling mass goes, as in networkx.
    mode : {"networkx", "graphalytics"}
        ``networkx``: dangling mass and teleport as networkx defines them. ``graphalytics`` follows
        the LDBC specification: fixed iterations, dangling mass spread evenly over all vertices, no
        personalization.
    memory, device, device_memory, profile, store
        Host budget (``"4GB"``), ``"cpu"``/``"gpu"``/``"auto"``, GPU budget, whether to wait for
        the device after every pass so ``result.passes`` times each exactly, and whether (or under
        which name) to keep the result in the store. An open graph keeps its engine, and the chunks
        it cached, between calls until ``G.release()`` or ``G.close()``.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), os.path.join(tempfile.mkdtemp(), "c.h5"),
    ...                       progress=False)
    >>> r = ooc_graph.pagerank(G, device="cpu")
    >>> np.round(r.values, 4).tolist(), r.converged
    ([0.3333, 0.3333, 0.3333], True)
    """
    if mode not in MODES:
        raise ParameterError(f"unknown PageRank mode {mode!r} (valid: {', '.join(MODES)})")
    if not 0 < alpha <= 1:
        raise ParameterError(f"alpha must be in (0, 1] (got {alpha!r})")
    if not tol > 0:
        raise ParameterError(f"tol must be positive (got {tol!r})")
    max_iter = check_positive_int("max_iter", max_iter)
    g = as_graph(G)
    n = g.num_vertices
    if personalization is not None:  # validated before any chunk is read
        if mode == "graphalytics":
            raise ParameterError("personalization is not part of the Graphalytics PageRank definition")
        p = np.asarray(personalization, dtype=np.float64)
        if p.shape != (n,) or (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
            raise ParameterError(f"personalization must be {n} non-negative finite values with a positive sum")
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile)
    eng = run.engine
    xp, k = eng.backend.xp, eng.backend.kernels
    # Teleport and dangling mass both follow p: uniform in Graphalytics mode (which refuses a
    # personalization), the personalization or uniform in networkx mode.
    p = xp.asarray(p / p.sum()) if personalization is not None else 1.0 / max(n, 1)
    outdeg = eng.vertex_array("out_degree", np.float64)  # kept on the device between calls
    inv = xp.where(outdeg == 0, 0.0, 1.0 / xp.maximum(outdeg, 1.0))
    x = xp.full(n, 1.0 / max(n, 1))
    contrib = x * inv  # x[u] / out_degree(u): what u sends along each out-arc
    y = xp.empty(n, dtype=np.float64)
    lost = float((x[inv == 0]).sum())  # mass on dangling vertices, spread like the teleport
    # Each worker updates its own vertices (all of them in one process) in one fused step, adds
    # up the residual and the dangling mass with the others, and shares its part of contrib.
    lo, hi = eng.owned
    mine = slice(lo, hi)
    converged, it = n == 0, 0
    while not converged and it < max_iter:
        it += 1
        eng.pull_sum(contrib, out=y, gather=False)
        sums = k.pagerank_step(y[mine], x[mine], p if np.isscalar(p) else p[mine], inv[mine], alpha, lost,
                               contrib[mine])
        err, lost = (float(v) for v in eng.sum_over_workers(eng.backend.to_host(sums)))
        eng.gather(contrib)
        eng.report(it, err)
        log.info("iteration %d: L1 change %.3e (stop below %.3e)", it, err, tol)
        if mode == "networkx":
            converged = err < tol
    eng.gather(x)
    if mode == "graphalytics":
        converged = True
    params = {"alpha": alpha, "tol": tol, "max_iter": max_iter, "mode": mode,
              "personalized": personalization is not None}
    return run.finish(PageRankResult, "pagerank", params, it, converged, store, values=eng.to_host(x))

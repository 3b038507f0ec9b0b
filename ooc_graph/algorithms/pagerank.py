"""PageRank by streamed pull-sums over the CEL."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph._records import record
from ooc_graph.errors import ParameterError, choice
from ooc_graph.engine.loop import iterate
from ooc_graph.registry import Option, algorithm

from . import _options as _o
from ._common import Run, as_graph, check_iteration, check_real
from ._pagerank_steps import PageRankSteps, personalization_weights
from ._result import Result

__all__ = ["pagerank", "PageRankResult"]
log = logging.getLogger("ooc_graph.pagerank")
MODES = ("networkx", "graphalytics")


@record(repr=False)  # the short __repr__ of Result
class PageRankResult(Result):
    values: np.ndarray = None
    _arrays: tuple = ("values",)


@algorithm(result=PageRankResult, options=[
    Option("--alpha", float, "damping factor, in (0, 1]", 0.85), _o.TOL,
    Option("--max-iter", int, "iteration limit (graphalytics mode: the exact count)", 100),
    Option("--mode", str, "networkx or LDBC Graphalytics definition", "networkx", MODES), _o.WEIGHT, _o.STRICT])
def pagerank(G, *, alpha: float = 0.85, tol: float = 1e-6, max_iter: int = 100, personalization=None,
             mode: str = "networkx", memory=None, device: str = "auto", device_memory=None,
             profile: bool = False, store=False, output: str = "numpy", weight=None,
             raise_on_nonconvergence: bool = True) -> PageRankResult:
    """PageRank of every vertex, on arc weights if ``weight`` is given.

    Parameters
    ----------
    G : Graph or path
    alpha : float
        Damping factor, in (0, 1].
    tol : float
        ``mode="networkx"``: stop when the L1 change ``Σ|x_new - x|`` falls below ``tol`` (networkx
        compares it with ``n * tol``, which ends a run on millions of vertices after a step or two).
    max_iter : int
        ``mode="networkx"``: the iteration limit (the result says ``converged=False`` if reached);
        ``mode="graphalytics"``: the exact number of iterations.
    personalization : dict or array, optional
        Teleport distribution (normalised here); also where dangling mass goes, as in networkx:
        ``{vertex id: weight}`` in original vertex ids (vertices not named get 0), or an array of
        n non-negative values in internal order.
    mode : {"networkx", "graphalytics"}
        ``networkx``: dangling mass and teleport as networkx defines them. ``graphalytics`` follows
        the LDBC specification: fixed iterations, dangling mass spread evenly over all vertices, no
        personalization.
    weight : str, optional
        ``mode="networkx"`` only: None ignores weights; a name (the store keeps one weight per arc,
        whatever its name) shares each vertex's rank among its out-arcs in proportion to their
        weights (1 on an unweighted store); vertices whose out-arcs weigh 0 in all dangle.
    memory, device, device_memory, profile, store
        Host budget (``"4GB"``), ``"cpu"``/``"gpu"``/``"auto"``, GPU budget, whether to wait for
        the device after every pass so ``result.passes`` times each exactly, and whether (or under
        which name) to keep the result in the store. An open graph keeps its engine, and the chunks
        it cached, between calls until ``G.release()`` or ``G.close()``.
    raise_on_nonconvergence : bool
        ``mode="networkx"``: a run that reaches ``max_iter`` raises :class:`~ooc_graph.ConvergenceError`
        (holding the result as ``err.result``), as networkx raises ``PowerIterationFailedConvergence``;
        False returns the values with ``converged=False``. Values that become infinite or NaN
        always raise.
    output : {"numpy", "cupy"}
        The result's arrays in host memory, or (a GPU in one process) left on the device.

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
        raise choice("PageRank mode", mode, MODES)
    alpha, tol = check_real("alpha", alpha), check_real("tol", tol)
    if not 0 < alpha <= 1:
        raise ParameterError(f"alpha must be in (0, 1] (got {alpha!r})")
    max_iter = check_iteration(max_iter, tol, weight)
    g = as_graph(G)
    if weight is not None and mode == "graphalytics":
        raise ParameterError("weight is not part of the Graphalytics PageRank definition (use mode='networkx')")
    if personalization is not None:  # validated before any chunk is read
        if mode == "graphalytics":
            raise ParameterError("personalization is not part of the Graphalytics PageRank definition")
        p = personalization_weights(g, personalization)
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64,), raise_on_nonconvergence=raise_on_nonconvergence)
    steps = PageRankSteps(run.engine, alpha, p if personalization is not None else None,
                          weighted=weight is not None and g.weighted)
    x, it, converged = iterate(run.engine, steps, steps.x, max_iter=max_iter, tol=tol, until_tol=mode == "networkx",
                               measure="L1 change", logger=log)
    params = {"alpha": alpha, "tol": tol, "max_iter": max_iter, "mode": mode,
              "personalized": personalization is not None, "weight": weight}
    return run.finish(PageRankResult, "pagerank", params, it, converged or mode == "graphalytics", store,
                      values=run.engine.result(x, gathered=False))

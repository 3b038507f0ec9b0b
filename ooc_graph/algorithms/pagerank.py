"""PageRank by streamed pull-sums over the CEL."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph import config
from ooc_graph.errors import ParameterError
from ooc_graph.registry import Option, algorithm

from . import _options as _o
from ._common import Run, as_graph, check_iteration, check_real, initial_vector
from ._result import PageRankResult

__all__ = ["pagerank"]
log = logging.getLogger("ooc_graph.pagerank")
MODES = ("networkx", "graphalytics")


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
        ``mode="networkx"``: stop when the L1 change ``Σ|x_new - x|`` falls below ``tol``. Unlike
        networkx, which compares it with ``n * tol`` and so stops after one or two iterations on
        graphs of millions of vertices, this does not grow with the graph.
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
        ``mode="networkx"`` only, as networkx: None ignores weights; a name (``"weight"``; the store keeps one weight per
        arc, whatever its name) makes each vertex share its rank among its out-arcs in proportion
        to their weights (every weight is 1 on an unweighted store). Vertices whose out-arcs
        weigh 0 in all are dangling.
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
        Where the result's arrays are: host memory (NumPy), or, on a GPU in one process, left on
        the device as CuPy arrays (nothing copied back: for a caller that goes on computing there).
        The result's methods (``to_pandas``, ``save``, ...) copy what they need to the host.

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
    alpha, tol = check_real("alpha", alpha), check_real("tol", tol)
    if not 0 < alpha <= 1:
        raise ParameterError(f"alpha must be in (0, 1] (got {alpha!r})")
    max_iter = check_iteration(max_iter, tol, weight)
    g = as_graph(G)
    n = g.num_vertices
    if weight is not None and mode == "graphalytics":
        raise ParameterError("weight is not part of the Graphalytics PageRank definition (use mode='networkx')")
    if personalization is not None:  # validated before any chunk is read
        if mode == "graphalytics":
            raise ParameterError("personalization is not part of the Graphalytics PageRank definition")
        p = _personalization(g, personalization)
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64,), raise_on_nonconvergence=raise_on_nonconvergence)
    eng = run.engine
    xp, k = eng.backend.xp, eng.backend.kernels
    # Teleport and dangling mass both follow p: uniform in Graphalytics mode (which refuses a
    # personalization), the personalization or uniform in networkx mode.
    p = xp.asarray(p / p.sum()) if personalization is not None else 1.0 / max(n, 1)
    if weight is None or not g.weighted:  # kept on the device between calls
        inv, dangling = eng.derived("inverse_out_degree",
                                    lambda: _inverse(xp, eng.backend.to_device(g.out_degree.astype(np.float64))))
    else:  # the out-arc weights of every vertex: one pass against the arcs
        inv, dangling = _inverse(xp, eng.edge_map("w", direction="out"))
    f = "src * w" if weight is not None and g.weighted else "src"
    x = xp.full(n, 1.0 / max(n, 1))
    contrib = x * inv  # x[u] / out_degree(u): what u sends along each out-arc
    y = xp.empty(n, dtype=np.float64)
    lost = dangling * (1.0 / max(n, 1))  # mass on dangling vertices, spread like the teleport
    # Each worker updates its own vertices (all of them in one process) in one fused step, adds
    # up the residual and the dangling mass with the others, and shares its part of contrib.
    lo, hi = eng.owned
    mine = slice(lo, hi)
    # On a GPU (alone, or with NCCL among the ranks) the host looks at each step's sums one step
    # late: it queues step i + 1 (into a second x, reading step i's dangling sum on the device)
    # before waiting for step i's L1 change, so the device never idles while the host decides.
    # Where step i has converged, step i + 1 is dropped: the answer and the iteration count are
    # those of looking at once. Where the changes so far say step i will probably converge, the
    # host looks at it before queuing more (a wasted step costs a pass, a wrong guess a pause).
    ahead = eng.sums_arrive_late
    spare = xp.empty_like(x) if ahead else x
    by_stripes = ahead and f == "src" and eng.sends_results

    seen = []  # the L1 changes looked at so far

    def look(i, sums) -> bool:
        err = float(sums.host()[0])
        seen.append(err)
        eng.report(i, err)
        log.info("iteration %d: L1 change %.3e (stop below %.3e)", i, err, tol)
        return mode == "networkx" and err < tol

    def step(part: slice, final: bool = False):
        """The fused update of the vertices ``part`` (into ``spare`` where the host looks late).
        ``final``: a stripe of a pull run by stripes, sent to the host at once (it is probably
        the answer); other stripes still read contrib, so it is left as it was."""
        sums = k.pagerank_step(y[part], x[part], p if np.isscalar(p) else p[part], inv[part], alpha, lost,
                               None if final else contrib[part], out=spare[part] if ahead else None)
        if final:
            eng.send_result(spare, part.start, part.stop)
        return sums

    converged, it, late = n == 0, 0, None  # late: (iteration, Sums) not looked at yet
    while not converged and it < max_iter:
        it += 1
        # A step that will probably be the last (the changes so far say so, or max_iter) runs by
        # destination stripes on one GPU, each sent to the host as it is done: the result's copy
        # overlaps the pass instead of following it (a fifth of a pass on R-MAT-25).
        final = by_stripes and (it == max_iter or (mode == "networkx" and _probably_last(seen, tol, 2 if late else 1)))
        if final:
            parts = eng.pull_sum(contrib, out=y, gather=False, then=lambda a, b: step(slice(a, b), final=True),
                                 stripes=config.get().algorithms.pagerank_result_stripes)
            sums = xp.stack(parts).sum(axis=0)
        elif f == "src":  # the pull: Σ over in-arcs of contrib[u] (* w)
            eng.pull_sum(contrib, out=y, gather=False)  # the tuned kernel (source-blocked on a GPU)
        else:
            y[mine] = 0.0
            eng.edge_map(f, contrib, out=y, gather=False)
        if not final:
            sums = step(mine)
        if not ahead:
            eng.gather(contrib, wait=False)  # queued: the sums below wait for it
            now = eng.sum_over_workers(sums, wait=False)
            lost = float(now.host()[1])
            converged = look(it, now)
            continue
        if late is not None and look(*late):
            it, converged = it - 1, True  # step it - 1 had converged: x is its result, step it is dropped
            break
        # Whether step it is probably the last (the changes so far say it converges, or max_iter):
        # then the host looks at it at once, and its contributions, which only a next pull reads,
        # are sent only if it was not.
        last = final or it == max_iter or (mode == "networkx" and _probably_last(seen, tol))
        if not last:
            eng.gather(contrib, wait=False)  # queued: the sums below go with it
        now = eng.sum_over_workers(sums, wait=False)
        x, spare, lost = spare, x, now.device[1:2]
        late = (it, now)
        if last:
            converged, late = look(*late), None
            if not converged and it < max_iter:
                if final:  # its step left them out, and its values sent are not the answer
                    xp.multiply(x[mine], inv[mine], out=contrib[mine])
                    eng.unsend()
                eng.gather(contrib, wait=False)  # the next pull needs them after all
    if mode == "graphalytics":
        converged = True
    params = {"alpha": alpha, "tol": tol, "max_iter": max_iter, "mode": mode,
              "personalized": personalization is not None, "weight": weight}
    return run.finish(PageRankResult, "pagerank", params, it, converged, store, values=eng.result(x, gathered=False))


def _probably_last(seen, tol: float, steps: int = 1) -> bool:
    """Whether the ``steps``-th step after the last one looked at will probably change x by less
    than ``tol``: the last change times the last ratio of changes to that power (they shrink
    about geometrically), with a margin of a quarter."""
    if len(seen) < 2 or not seen[-2] > 0:
        return False
    return seen[-1] * min(1.0, seen[-1] / seen[-2]) ** steps < 1.25 * tol


def _inverse(xp, outdeg) -> tuple:
    """``1 / outdeg`` (0 where a vertex sends nothing: it dangles) and how many vertices dangle."""
    dangles = outdeg == 0
    return xp.where(dangles, 0.0, 1.0 / xp.where(dangles, 1.0, outdeg)), int(dangles.sum())


def _personalization(g, personalization) -> np.ndarray:
    """The teleport weights as n floats: from ``{original id: weight}`` or an array."""
    p = initial_vector(g, personalization, "personalization", nonzero=False)
    if (p < 0).any() or p.sum() <= 0:
        raise ParameterError(f"personalization must be {g.num_vertices} non-negative finite values with a "
                             f"positive sum, or a dict of them by vertex id")
    return p

"""PageRank (networkx.algorithms.link_analysis) on ooc_graph's ``pagerank``; HITS is with the
other power iterations in :mod:`.centrality`."""

from __future__ import annotations

import numpy as np

import ooc_graph

from .functions import _nx, _options, by_node, networkx_function, numbers, scale_of, weight_is_name


def _pagerank_can_run(arguments):
    if arguments.get("nstart") is not None:
        return "nstart is not supported (the iteration starts from the teleport distribution)"
    if arguments.get("dangling") is not None:
        return "dangling is not supported (dangling mass follows personalization, as by default)"
    return weight_is_name(arguments)


@networkx_function(_pagerank_can_run)
def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None, weight="weight",
             dangling=None):
    nx = _nx()
    n = len(G)
    if n == 0:
        return {}
    scale = 1.0
    if weight is not None:
        w = numbers(G, weight, "array", negative_ok=False)
        scale = scale_of(G, w, scale_free=True)  # PageRank divides by each node's out-weight
        if not len(w.values) or np.all(w.values == 1):
            weight = None  # every weight 1: the unweighted store gives the same answer
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    p = None
    if personalization is not None:
        p = np.array([float(personalization.get(v, 0)) for v in G.nodes])
        if p.sum() == 0:
            raise ZeroDivisionError("float division by zero (the personalization sums to 0)")
    # networkx stops when the L1 change falls below n * tol
    r = ooc_graph.pagerank(G.store(weight, scale=scale), alpha=alpha, tol=n * tol, max_iter=max_iter, personalization=p,
                           weight=weight, raise_on_nonconvergence=False, **_options())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return by_node(G, r.values)

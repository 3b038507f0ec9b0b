"""Single-source shortest paths: Dijkstra in one compiled call where the CPU holds the CSR, else
near-far buckets over frontier advances and edge-centric passes of the CEL (selective scheduling)."""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record
from ooc_graph.errors import ParameterError

from ooc_graph.registry import algorithm

from . import _options as _o
from ._common import Run, as_graph, unreached
from ._result import Result

__all__ = ["sssp", "SSSPResult"]


@record(repr=False)  # the short __repr__ of Result
class SSSPResult(Result):
    """``distance`` is ``inf`` where no path exists; ``parent`` (internal ids) is -1 for the
    source and those: ``to_dict``, ``to_pandas`` and ``to_arrow`` give original ids, and None /
    null there."""

    distance: np.ndarray = None
    parent: np.ndarray = None
    _arrays: tuple = ("distance", "parent")
    _vertex_arrays: tuple = ("parent",)


@algorithm(result=SSSPResult, options=[_o.SOURCE, _o.EXECUTION])
def sssp(G, source, *, memory=None, device: str = "auto", device_memory=None,
         execution: str = "auto", profile: bool = False, store=False, output: str = "numpy") -> SSSPResult:
    """Shortest-path distance from ``source`` (an original vertex id) along out-arcs.

    Uses the arc weights (every arc weighs 1 on an unweighted graph). Negative weights are an
    error (NaN cannot be stored). Unreachable vertices have distance ``inf`` and parent -1.
    ``parent[v]`` is the smallest u with ``distance[u] + w(u, v) == distance[v]``.

    On the CPU with the out-CSR within ``memory`` this is Dijkstra, one compiled call. Otherwise
    (a GPU, a graph streamed out of core, a distributed run) the engine iterates: each iteration
    relaxes the arcs of a frontier, as a frontier advance over the CSR or an edge-centric pass over
    the chunks that hold its arcs. With weights the frontier is near-far's near pile (Davidson et
    al., as Gunrock's SSSP): of the vertices whose distance dropped, those within a bound that
    rises bucket by bucket, so most vertices are expanded once instead of once per drop (see
    :meth:`~ooc_graph.engine.Engine.propagate_min`). Every method gives the same distances and
    parents, bit for bit.
    ``execution`` ("auto", "sync", "async") is as for :func:`~ooc_graph.bfs`. ``memory``,
    ``device``, ``device_memory``, ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> edges = np.array([[0, 1, 4.0], [0, 2, 1.0], [2, 1, 2.0]])
    >>> G = ooc_graph.convert(edges, os.path.join(tempfile.mkdtemp(), "w.h5"), progress=False)
    >>> r = ooc_graph.sssp(G, source=0, device="cpu")
    >>> r.distance.tolist(), r.parent.tolist()
    ([0.0, 3.0, 1.0], [-1, 2, 0])
    """
    g = as_graph(G)
    if g.weighted and g.num_arcs and float(g.attrs["min_weight"]) < 0:
        raise ParameterError(f"{g.path}: SSSP needs non-negative weights (smallest weight is "
                             f"{float(g.attrs['min_weight'])!r})")
    s = g.vertex_id(source)  # validated before any chunk is read
    run = Run(g, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.float64, np.int64))
    eng = run.engine
    plus = None if g.weighted else 1.0
    dist = unreached(eng, s)
    passes, parent = eng.shortest_paths(dist, plus=plus, source=s, execution=execution)
    return run.finish(SSSPResult, "sssp", {"source": source if isinstance(source, str) else int(source),
                                                   "execution": execution}, passes, True, store,
                      distance=eng.result(dist), parent=eng.result(parent, gathered=False))

"""Weakly connected components by hooking and pointer jumping over the CEL."""

from __future__ import annotations

import numpy as np

from ooc_graph._records import record
from ooc_graph.registry import algorithm

from ._common import Run
from ._result import LabelsResult

__all__ = ["wcc", "WCCResult"]


@record(repr=False)  # the short __repr__ of Result
class WCCResult(LabelsResult):
    """``labels[v]`` is the smallest vertex id of v's weakly connected component: an original id,
    except in a store with string ids, where it is the component's first internal id (the
    smallest string; ``to_dict``, ``to_pandas`` and ``to_arrow`` give the string)."""

    def _vertex_valued(self) -> tuple:
        return ("labels",) if self.graph is not None and self.graph.string_labels else ()

    @property
    def num_components(self) -> int:
        return self._distinct_labels()


@algorithm(result=WCCResult, options=())
def wcc(G, *, memory=None, device: str = "auto", device_memory=None,
        profile: bool = False, store=False, output: str = "numpy") -> WCCResult:
    """Label every vertex with the smallest vertex id of its weakly connected component.

    Labels are original vertex ids when the store relabelled the input (they are then the smallest
    original id of the component, since relabelling keeps the order). ``memory``, ``device``,
    ``device_memory``, ``profile``, ``store`` and ``output`` are as for :func:`~ooc_graph.pagerank`.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> G = ooc_graph.convert(np.array([[1, 0], [3, 2]]), os.path.join(tempfile.mkdtemp(), "two.h5"),
    ...                       progress=False)
    >>> ooc_graph.wcc(G, device="cpu").labels.tolist()
    [0, 0, 2, 2]
    """
    run = Run(G, memory=memory, device=device, device_memory=device_memory, profile=profile, output=output,
              outputs=(np.int64,))
    g, eng = run.graph, run.engine
    root, passes = eng.hook_components()  # arcs join trees whatever their direction
    if g.labels is not None and not g.string_labels:
        root = eng.vertex_array("labels")[root]  # original ids (string ids are mapped by the result)
    return run.finish(WCCResult, "wcc", {}, passes, True, store, labels=eng.result(root))

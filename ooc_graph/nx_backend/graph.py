"""The backend's graph: a networkx graph's nodes and edges, and the stores made from them."""

from __future__ import annotations

import weakref

import numpy as np


class StoreGraph:
    """A networkx graph as ooc_graph sees it: nodes numbered ``0..n−1`` in networkx's order and
    the edges as arrays; :meth:`store` builds a store in memory (one per weight attribute) on
    first use, closed when this object goes. In memory because networkx converts a graph for
    every call (unless ``nx.config.cache_converted_graphs``): a file's datasets cost ten times the
    call on a small graph, and the networkx graph already holds far more memory than its store."""

    __networkx_backend__ = "ooc_graph"

    def __init__(self, graph, *, weights=None):
        import networkx as nx
        if graph.is_multigraph():
            raise NotImplementedError("ooc_graph: multigraphs are not supported")
        self.graph = graph  # the networkx graph, handed back by convert_to_nx
        self.nodes = list(graph)
        self.index = {v: i for i, v in enumerate(self.nodes)}
        self.directed = graph.is_directed()
        edges = list(graph.edges(data=True))  # not number_of_edges(): subclasses may disagree with it
        index = self.index
        self.src = np.array([index[u] for u, _, _ in edges], dtype=np.int64)
        self.dst = np.array([index[v] for _, v, _ in edges], dtype=np.int64)
        self.weights = {}  # attribute -> (float64 array, whether every value is a Python int)
        for attr, default in (weights or {}).items():
            if attr is None:
                continue
            values = [d.get(attr, 1 if default is None else default) for _, _, d in edges]
            integral = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in values)
            self.weights[attr] = (np.asarray(values, dtype=np.float64).reshape(len(edges)), integral)
        self._nx = nx
        self._stores: dict = {}

    # -- what networkx asks of a graph ------------------------------------------------------------
    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return False

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:
            return False

    def vertex(self, node, what: str = "Source") -> int:
        """The internal id of ``node``; ``nx.NodeNotFound`` when it is not in the graph."""
        if node not in self:
            raise self._nx.NodeNotFound(f"{what} {node} is not in G")
        return self.index[node]

    # -- stores -----------------------------------------------------------------------------------
    def weight_array(self, weight):
        """``(weights, integral)`` for attribute ``weight`` (``None``: every edge 1)."""
        if weight is None or weight not in self.weights:
            return None, True
        return self.weights[weight]

    def store(self, weight=None):
        """The ooc_graph store of this graph, weighted by attribute ``weight`` (``None``: none)."""
        w, _ = self.weight_array(weight)
        key = weight if w is not None else None
        if key not in self._stores:
            import ooc_graph
            if not self._stores:
                weakref.finalize(self, _close, self._stores)  # frees the engines' caches (GPU memory)
            edges = (self.src, self.dst) if w is None else (self.src, self.dst, w)
            self._stores[key] = ooc_graph.convert(edges, ":memory:", directed=self.directed,
                                                  num_vertices=len(self.nodes), weight_dtype="float64", progress=False)
        return self._stores[key]


def _close(stores):
    for g in stores.values():
        g.close()

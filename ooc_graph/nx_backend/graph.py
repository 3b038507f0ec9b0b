"""The backend's graph: a networkx graph's nodes and adjacency as arrays, and the stores made from them.

Conversion reads networkx's dicts once, with no Python code per edge: the neighbour keys of every
row come out of ``itertools.chain`` into ``numpy.fromiter`` and are numbered by a lookup table
(integer nodes) or by the node dict's own ``__getitem__`` through ``map`` (any other hashable);
a weight attribute comes out the same way (``operator.methodcaller("get", name, default)``
over the edge dicts) and is checked once, as an array, when it is read (:class:`Weights`).
The arrays keep networkx's order: the rows in the order of ``G``'s nodes, each row's
neighbours in the order of ``G.adj[u]``, so that the traversals can visit nodes in the very
order networkx's own code does (:mod:`._kernels`).
"""

from __future__ import annotations

import itertools
import operator
import weakref
from typing import NamedTuple

import numpy as np

# Integer weights are summed in int64 where no path can pass it (a path has fewer arcs than the
# graph has nodes); beyond, they are left to networkx, whose Python ints are exact at any size.
INT_LIMIT = 2**63
# float64 holds every integer up to 2**53 exactly, so mixed int/float sums below it are networkx's.
EXACT_FLOAT_INT = 2**53
_NUMBERS = (int, float, bool, np.integer, np.floating)


class Weights(NamedTuple):
    """An edge attribute as arrays in the adjacency's order, checked once when read.

    ``values``: float64; ``ints``: int64 where every value is an int (bool counts as int, as in
    Python's sums) and no path's sum can reach ``INT_LIMIT`` (the largest magnitude times the
    node count), else None; ``floats``: a
    bool mask of the values that are floats where ints and floats mix (what type networkx's sums
    end with), else None; ``bad``: ``(value,)`` of the first value that is not a real number (a
    string, None, a complex, a Decimal), else None."""
    values: np.ndarray
    ints: np.ndarray | None
    floats: np.ndarray | None
    bad: object
    finite: bool
    negative: bool
    zero: bool
    exact: bool  # float64 sums of these values are networkx's (no int above 2**53 mixed with floats)

    @property
    def integral(self) -> bool:
        return self.ints is not None

    def unsupported(self, negative_ok: bool = False, name: str = "weight"):
        """Why these weights cannot be served (or None): not numbers, not finite, negative."""
        if self.bad is not None:
            return f"edge attribute {name!r} holds {self.bad[0]!r}, which is not a real number"
        if not self.finite:
            return f"edge attribute {name!r} holds NaN or an infinite value"
        if not self.exact:
            return (f"edge attribute {name!r} holds integers whose sums need more than 64 bits (or more than 2**53 "
                    "mixed with floats); networkx sums them exactly")
        if self.negative and not negative_ok:
            return f"edge attribute {name!r} holds negative values"
        return None


def _read_weights(rows, name, default, m) -> Weights:
    data = itertools.chain.from_iterable(map(operator.methodcaller("values"), rows))
    try:
        raw = list(map(dict.get, data, itertools.repeat(name, m), itertools.repeat(default, m)))
    except TypeError:  # edge data in a mapping that is not a dict (a graph class's own factory)
        data = itertools.chain.from_iterable(map(operator.methodcaller("values"), rows))
        raw = list(map(operator.methodcaller("get", name, default), data))
    kinds = set(map(type, raw))
    bad = None
    if not all(issubclass(k, _NUMBERS) for k in kinds):
        bad = (next(x for x in raw if not isinstance(x, _NUMBERS)),)
    if bad is not None:
        return Weights(np.zeros(m), None, None, bad, True, False, False, True)
    try:
        values = np.array(raw, dtype=np.float64).reshape(m)
    except OverflowError:  # an int beyond float64's range
        return Weights(np.zeros(m), None, None, None, True, False, False, False)
    floats = [k for k in kinds if issubclass(k, (float, np.floating))]
    finite = bool(np.isfinite(values).all())
    paths = max(len(rows) - 1, 1)  # arcs on a path, at most
    ints = mask = None
    exact = True
    if not floats:  # every value an int (or bool)
        top = float(np.abs(values).max()) if m else 0.0
        if top * paths < EXACT_FLOAT_INT:
            ints = values.astype(np.int64)  # exact: each value is below 2**53
        elif top * paths < INT_LIMIT / 2:  # (a float bound, so with room for its rounding)
            ints = np.array(raw, dtype=np.int64).reshape(m)
        else:
            exact = False
    else:
        if len(floats) < len(kinds):  # ints among the floats: which sums end as ints
            mask = np.fromiter(map(isinstance, raw, itertools.repeat((float, np.floating))), bool, m)
            exact = float(np.abs(values[~mask]).max(initial=0.0)) * paths < EXACT_FLOAT_INT
    return Weights(values, ints, mask, None, finite, bool((values < 0).any()), bool((values == 0).any()), exact)


class Adjacency(NamedTuple):
    """One side of the adjacency (out-neighbours, or in-neighbours of a directed graph) in networkx's
    order: ``indptr``/``indices`` (int64 CSR over the node order), and the neighbour dicts (rows) it
    was read from, for the edge attributes read later."""
    indptr: np.ndarray
    indices: np.ndarray
    rows: list


class StoreGraph:
    """A networkx graph as ooc_graph sees it: nodes numbered ``0..n−1`` in networkx's order, the
    adjacency as arrays in networkx's order (:attr:`succ`, :attr:`pred`), edge attributes as
    checked arrays (:meth:`weights`), and, for the ooc_graph algorithms, a store built in memory
    (one per weight attribute) on first use and closed when this object goes. In memory because
    networkx converts a graph for every call unless it caches conversions: a file's datasets cost
    ten times the call on a small graph."""

    __networkx_backend__ = "ooc_graph"

    def __init__(self, graph, *, weights=None):
        import networkx as nx
        if graph.is_multigraph():
            raise NotImplementedError("ooc_graph: multigraphs are not supported")
        self.graph = graph  # the networkx graph, handed back by convert_to_nx
        self.nodes = list(graph)
        self.directed = graph.is_directed()
        self._nx = nx
        self._index = None
        self._table = None  # (lowest id, table) when every node is an int in a compact range
        self._number = self._numbering()
        self.succ = self._side(graph._adj)  # _adj is _succ on a directed graph
        self._pred = None if self.directed else self.succ
        self._weights: dict = {}
        self._stores: dict = {}
        self._arc_src = None
        for name, default in (weights or {}).items():
            if name is not None:
                self.weights(name, 1 if default is None else default)

    # -- conversion ---------------------------------------------------------------------------------
    def _numbering(self):
        """A function from an iterable of nodes to their ids (an int64 array), vectorised where the
        nodes are ints in a compact range."""
        nodes = self.nodes
        n = len(nodes)
        if n and set(map(type, nodes)) == {int}:
            lo, hi = min(nodes), max(nodes)
            if hi - lo < 4 * n + 1024 and -2**63 <= lo and hi < 2**63:
                table = np.full(hi - lo + 1, -1, np.int64)
                table[np.fromiter(nodes, np.int64, n) - lo] = np.arange(n)
                self._table = (lo, table)

                def number(keys, count=-1):
                    return table[np.fromiter(keys, np.int64, count) - lo]
                return number
        index = self.index

        def number(keys, count=-1):
            return np.fromiter(map(index.__getitem__, keys), np.int64, count)
        return number

    def _side(self, adj) -> Adjacency:
        rows = list(map(adj.__getitem__, self.nodes))
        counts = np.fromiter(map(len, rows), np.int64, len(rows))
        indptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = self._number(itertools.chain.from_iterable(rows), int(indptr[-1]))
        return Adjacency(indptr, indices, rows)

    @property
    def pred(self) -> Adjacency:
        """In-neighbours in the order of ``G.pred[v]`` (the out-neighbours on an undirected graph)."""
        if self._pred is None:
            self._pred = self._side(self.graph._pred)
        return self._pred

    def weights(self, name, default=1, side: str = "succ") -> Weights:
        """Edge attribute ``name`` (``default`` where an edge has none) in the order of
        :attr:`succ`'s arcs (``side="pred"``: :attr:`pred`'s)."""
        key = (name, default, side if self.directed else "succ")
        if key not in self._weights:
            adjacency = self.succ if key[2] == "succ" else self.pred
            self._weights[key] = _read_weights(adjacency.rows, name, default, len(adjacency.indices))
        return self._weights[key]

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
            return node in self.graph._node
        except TypeError:
            return False

    @property
    def index(self) -> dict:
        """node -> id (built on first use: integer nodes are numbered by a table)."""
        if self._index is None:
            self._index = dict(zip(self.nodes, range(len(self.nodes))))
        return self._index

    def id_of(self, node) -> int:
        """The id of ``node`` (which must be in the graph)."""
        if self._table is not None and type(node) is int:
            lo, table = self._table
            if 0 <= node - lo < len(table) and table[node - lo] >= 0:
                return int(table[node - lo])
        return self.index[node]

    def ids_of(self, nodes) -> np.ndarray:
        """The ids of ``nodes`` (each in the graph), as an int64 array."""
        nodes = list(nodes)
        if self._table is not None and set(map(type, nodes)) <= {int}:
            lo, table = self._table
            at = np.fromiter(nodes, np.int64, len(nodes)) - lo
            if not len(at) or (at.min() >= 0 and at.max() < len(table) and (table[at] >= 0).all()):
                return table[at]
        return np.fromiter(map(self.index.__getitem__, nodes), np.int64, len(nodes))

    def vertex(self, node, what: str = "Source") -> int:
        """The internal id of ``node``; ``nx.NodeNotFound`` when it is not in the graph."""
        if node not in self:
            raise self._nx.NodeNotFound(f"{what} {node} is not in G")
        return self.id_of(node)

    def labels(self, ids) -> list:
        """The nodes of an array of ids."""
        return list(map(self.nodes.__getitem__, ids.tolist() if isinstance(ids, np.ndarray) else ids))

    # -- arcs and edges ---------------------------------------------------------------------------
    @property
    def arc_src(self) -> np.ndarray:
        """The tail of each arc of :attr:`succ` (int64, the CSR's rows expanded)."""
        if self._arc_src is None:
            self._arc_src = np.repeat(np.arange(len(self.nodes), dtype=np.int64), np.diff(self.succ.indptr))
        return self._arc_src

    def edge_mask(self) -> np.ndarray:
        """Which arcs of :attr:`succ` are networkx's edges: all of them on a directed graph; on an
        undirected one each edge once (``u <= v``: both ends hold it)."""
        if self.directed:
            return np.ones(len(self.succ.indices), bool)
        return self.arc_src <= self.succ.indices

    def number_of_edges(self) -> int:
        m = len(self.succ.indices)
        if self.directed:
            return m
        loops = int(np.count_nonzero(self.arc_src == self.succ.indices))
        return (m - loops) // 2 + loops

    def self_loops(self) -> np.ndarray:
        """The ids of the nodes with a self-loop, in node order."""
        return np.unique(self.arc_src[self.arc_src == self.succ.indices])

    # -- stores -----------------------------------------------------------------------------------
    def weight_array(self, weight, default=1):
        """``(weights, integral)`` for attribute ``weight`` (``None``: every edge 1, and ``(None, True)``)."""
        if weight is None:
            return None, True
        w = self.weights(weight, default)
        return w.values, w.integral

    def store(self, weight=None, default=1, scale: float = 1.0):
        """The ooc_graph store of this graph, weighted by attribute ``weight`` (``None``: none;
        an attribute whose every value is 1 is stored unweighted: the same answers, less memory),
        the weights divided by ``scale``."""
        w = None if weight is None else self.weights(weight, default)
        if w is not None and (w.bad is not None or not w.finite):
            raise NotImplementedError(f"ooc_graph: {w.unsupported(negative_ok=True, name=weight)}")
        if w is not None and np.all(w.values == 1):
            w = None
        key = None if w is None else (weight, default, scale)
        if key not in self._stores:
            import ooc_graph
            if not self._stores:
                weakref.finalize(self, _close, self._stores)  # frees the engines' caches (GPU memory)
            keep = self.edge_mask()
            src, dst = self.arc_src[keep], self.succ.indices[keep]
            edges = (src, dst) if w is None else (src, dst, w.values[keep] / scale)
            self._stores[key] = ooc_graph.convert(edges, ":memory:", directed=self.directed,
                                                  num_vertices=len(self.nodes), weight_dtype="float64", progress=False)
        return self._stores[key]


def _close(stores):
    for g in stores.values():
        g.close()

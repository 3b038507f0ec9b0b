"""Shortest-path trees of the engine's traversals: ``shortest_paths`` (a traversal from one source
and its tree) and ``tight_parents`` (the tree of given distances: each vertex's smallest in-neighbour
on a tight arc).

The tree is built during the traversal where its levels allow (:meth:`.traversal.Traversals._propagate`:
bottom-up levels and advances record parents as they reach vertices), by one compiled call where
the CPU holds the CSR, and otherwise after it: from the in-CSR on the device (``csr_parents``), or by
passes over the chunks.
"""

from __future__ import annotations

import time

import numpy as np

from ooc_graph import config
from ooc_graph.errors import choice

from .traversal import EXECUTIONS


class Trees:
    """The shortest-path tree operators of :class:`~.core.Engine` (a mixin over
    :class:`~.traversal.Traversals`)."""

    def shortest_paths(self, state, *, plus, source: int, execution: str = "auto", int_unreachable=None):
        """``propagate_min`` from ``source`` and then ``tight_parents``: ``(iterations, parent)``.
        ``state`` must be infinite everywhere but at ``source``, where it is 0. Where the levels
        allow, the traversal builds the tree on the way (``Traversals._propagate``); where the compiled
        CPU kernels hold the CSR in memory, one traversal does both. In a
        distributed run only this worker's own vertices of ``parent`` may be current: return it
        with ``result(parent, gathered=False)``. ``int_unreachable``: BFS's value for unreached vertices,
        where the caller converts the levels with the backend's ``int_levels`` next: the CPU's
        compiled BFS then writes them so, and that conversion finds it done."""
        if execution not in EXECUTIONS:  # checked here too: that traversal does not look at it
            raise choice("execution", execution, EXECUTIONS)
        k, n = self.backend.kernels, self.graph.num_vertices
        csr = self._whole_csr(plus)
        if csr is not None:
            tree = self._bfs_tree(state, plus, source, int_unreachable)
            if tree is not None:
                return tree
            parent = _unset_tree(self.backend, n, source)
            t = time.perf_counter()
            iterations = self._traverse(state, plus, [source], parent)
            if iterations is not None:
                tree = k.tree_parents(csr[0], csr[1], csr[2], state, plus, source, parent)
                # a backend whose traversal builds no tree (the GPU's) finds it from the in-CSR
                parent = tree if tree is not None else self.tight_parents(state, plus=plus, root=source,
                                                                          parent=parent)
                self.stats.seconds_computing += time.perf_counter() - t - self.stats.per_pass[-1]["seconds"]
                return iterations, parent
        # the tree built on the way, where the levels allow
        on_the_way = config.get().traversal.tree_on_the_way and plus is not None and plus > 0
        parent = _unset_tree(self.backend, n, source) if on_the_way else None
        iterations, complete = self._propagate(state, plus, [source], execution, parent, fresh=True)
        if complete:
            return iterations, _roots_and_unreached(self.backend.xp, parent, n, source)
        return iterations, self.tight_parents(state, plus=plus, root=source, gathered=False, parent=parent)

    def _bfs_tree(self, state, plus, source: int, int_unreachable=None):
        """``shortest_paths`` for unit increments from a fresh state (its callers' promise, not
        checked again), in one compiled call (``kernels.bfs_tree``: direction-optimising, the
        parents built on the way) over the out-CSR in memory and, for bottom-up levels, the
        in-CSR if it fits the CSR budget too (loaded only when a level needs it; an undirected
        graph's is its out-CSR); ``(iterations, parent)``, or None where this does not apply."""
        k = self.backend.kernels
        if plus != 1.0 or not hasattr(k, "bfs_tree"):
            return None
        indptr, indices, _, _ = self._whole_csr(plus)

        def in_csr():
            csr = self.csr("in", weights=False) if self.graph.directed else (indptr, indices)
            return None if csr is None else csr[:2]
        before, t = self.stats.as_dict(), time.perf_counter()
        with self._scratch(bfs=True) as room:
            done = (k.bfs_tree(indptr, indices, source, state, in_csr, fresh=True,
                               int_unreachable=int_unreachable)
                    if room else None)
        if done is None:
            return None
        iterations, arcs, parent, *logged = done  # (a GPU's kernel logs its levels)
        self._count_traversal(int(iterations), int(arcs), before, t, logged[0] if logged else None)
        return iterations, parent

    def _parents_csr(self, plus):
        """The in-arc CSR on the device for :meth:`tight_parents`' strict pass, where the backend
        finds parents from it (``csr_parents``) and every increment is positive; else None.
        Measured on an H200 (R-MAT-26, BFS from its top vertex): 15.3 ms on the device, against
        19.4 for the pass over every arc."""
        g, k = self.graph, self.backend.kernels
        if not config.get().traversal.csr_parents or not hasattr(k, "csr_parents"):
            return None
        positive = plus > 0 if plus is not None else \
            g.weighted and g.num_arcs > 0 and float(g.attrs["min_weight"]) > 0
        return self._in_csr() if positive else None

    def tight_parents(self, dist, *, plus, root: int, gathered: bool = True, parent=None):
        """A shortest-path tree of ``dist``: parent[v] is the smallest u with dist[u] + w == dist[v].

        Strictly shorter tight arcs first; vertices reached only over zero-weight arcs are then
        resolved in further passes, each from the vertices resolved before it. -1 marks the root
        and unreached vertices. ``gathered=False``: in a distributed run the other workers'
        vertices of the tree are fetched only where a further pass needs them (zero-weight arcs),
        so only this worker's own are sure to be current. ``parent``: the part of the tree the
        traversal found (``Traversals._propagate``; the vertex count where not found), completed here.
        """
        k, xp = self.backend.kernels, self.backend.xp
        n = self.graph.num_vertices
        csr = self._whole_csr(plus)
        if csr is not None:
            parent = k.tree_parents(csr[0], csr[1], csr[2], dist, plus, root)
            if parent is not None:
                return parent
        if parent is None:
            parent = _unset_tree(self.backend, n, root)
        lo, hi = self.owned
        in_csr = self._parents_csr(plus)
        if in_csr is not None:  # each vertex's in-arcs until the first tight one
            k.csr_parents(in_csr[0], in_csr[1], in_csr[2], dist, plus, parent, lo, hi)
        else:
            for batch in self.batches():
                k.tight_parent(batch, dist, plus, parent, None)
        if not gathered and self.comm.size > 1 and plus == 1.0:
            # Unit increments: every vertex reached but the root has an arc from one level above
            # (its level was made that way, exactly), found by the strict pass. No check.
            return _roots_and_unreached(xp, parent, n, root)
        # ufuncs where operators would do: CuPy's operators with a scalar operand import cupyx, and
        # with it SciPy's sparse modules (~0.5 s of a process's first SSSP on a GPU)
        reached = xp.isfinite(dist)
        if not gathered and self.comm.size > 1:  # every vertex resolved (no zero weights): no gather
            if not self.comm.allreduce(int((reached[lo:hi] & xp.equal(parent[lo:hi], n)).sum()), "max"):
                return _roots_and_unreached(xp, parent, n, root)
        self._exchange(self.comm.gather_owned, parent)
        while True:
            resolved = xp.less(parent, n)
            missing = int((reached & ~resolved).sum())
            if not missing:
                break
            for batch in self.batches():
                k.tight_parent(batch, dist, plus, parent, resolved)
            self._exchange(self.comm.gather_owned, parent)
            if int((reached & xp.equal(parent, n)).sum()) == missing:  # pragma: no cover - defensive
                break
        return _roots_and_unreached(xp, parent, n, root)


def _unset_tree(backend, n: int, root: int):
    """A tree with no parent found yet: ``n`` everywhere but ``root``, its own parent."""
    parent = backend.full(n, n, np.int64)
    parent[root] = root
    return parent


def _roots_and_unreached(xp, parent, n: int, root: int):
    """-1 for the root and for the vertices no tight arc reached (still ``n``)."""
    parent[xp.equal(parent, n)] = -1  # a ufunc, not ==: see tight_parents' comment
    parent[root] = -1
    return parent

"""Louvain community detection (modularity as networkx defines it), in memory.

On the CPU (with numba) a level is the classic sequential local moving
(:mod:`ooc_graph.kernels.cpu_louvain`): sweeps over the vertices in a fixed order (a seeded
shuffle, else by id), each vertex moved at once to the neighbouring community of best gain, until
a sweep moves none; the communities then become the vertices
of the next level (their inner weight as self-loops), until a level improves modularity by no
more than ``threshold`` (that level kept) — networkx's rule. On large levels a sweep visits only the vertices next
to a move (``config.algorithms.louvain_prune_min_arcs``). R-MAT-20 took about a third of igraph's
``community_multilevel`` time for the same modularity (``benchmarks/louvain.py``).

On a GPU (and on the CPU without numba) the sweeps are array operations, NumPy and CuPy alike:
each sweeps over the vertices in ``BATCHES`` batches (vertex ids hashed, so neighbours mostly fall
in different batches). In a batch every vertex finds the neighbouring community with the best
modularity gain from the weights it has towards each (one sort of the batch's arcs by
``(vertex, community)``), and those whose best gain beats staying move at once. Moving all
vertices at once (one batch) lets neighbours swap back and forth and loses 10-100% of the
modularity; with 16 batches the result is within 1% of networkx's sequential Louvain on average
(worst seen: 4% below on 60 random graphs).

Both report every sweep (sweeps so far, vertices moved) to whoever watches the call.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from ooc_graph import config
from ooc_graph._records import record
from ooc_graph.errors import ParameterError
from ooc_graph.registry import Option, algorithm

from ._common import check_real
from ._inmemory import InMemoryRun
from ._result import Result

__all__ = ["louvain", "LouvainResult"]
# Working set: the arcs as int64 ids and float64 weights, keys, sort orders and gains.
BYTES_PER_ARC, BYTES_PER_VERTEX = 160, 96
MAX_SWEEPS = 200  # per level (the compiled sweeps end before it: each of their moves gains)
BATCHES = 16


@record(repr=False)  # the short __repr__ of Result
class LouvainResult(Result):
    """``labels[v]``: v's community (0..k−1, by smallest member); ``modularity``: networkx's
    modularity of that partition; ``levels``: the labels after each level."""

    labels: np.ndarray = None
    modularity: float = float("nan")
    levels: list = field(default_factory=list, repr=False)
    _arrays: tuple = ("labels",)

    @property
    def num_communities(self) -> int:
        return int(self.labels.max()) + 1 if len(self.labels) else 0

    def _details(self) -> str:
        return f", {self.num_communities:,} communities, modularity {self.modularity:.4f}"

    def communities(self) -> list:
        """The communities as sets of original vertex ids, as networkx's ``louvain_communities``."""
        order = np.argsort(self.labels, kind="stable")
        bounds = np.cumsum(np.bincount(self.labels, minlength=self.num_communities))[:-1]
        vertices = self.vertices
        return [set(vertices[part].tolist()) for part in np.split(order, bounds)] if len(order) else []


@algorithm(result=LouvainResult, distributes=False, options=[
    Option("--resolution", float, "above 1 favours smaller communities, below 1 larger ones", 1.0),
    Option("--threshold", float, "stop after a level that raises the modularity by no more than this", 1e-7),
    Option("--max-level", int, "at most this many levels (default: until a level gains nothing)"),
    Option("--seed", int, "shuffle the vertex order, which decides ties (default: a fixed order)"),
    Option("--weight", bool, "use the store's edge weights (--no-weight: every edge counts 1)", True),
])
def louvain(G, *, resolution: float = 1.0, threshold: float = 1e-7, max_level: int | None = None,
            seed: int | None = None, weight: bool = True, memory=None, device: str = "auto",
            device_memory=None, store=False) -> LouvainResult:
    """Communities of an undirected graph that (locally) maximise modularity, by Louvain.

    Modularity is networkx's: ``Q = Σ_c [L_c / m − resolution · (d_c / 2m)²]`` with ``L_c`` the
    weight of the edges inside community c (a self-loop once), ``d_c`` the weighted degree of its
    vertices (a self-loop twice) and ``m`` the weight of all edges. ``labels[v]`` is v's community
    (``0..k−1``, numbered by their smallest member), ``modularity`` the final Q, ``levels`` the
    labels after each level (as networkx's ``louvain_partitions``).

    ``resolution`` (positive, finite) < 1 favours larger communities, > 1 smaller ones.
    ``threshold`` (zero or more): the first level that raises Q by no more than this is the last
    (networkx's rule). A level's sweeps go on until one moves no vertex (on a GPU, until one
    gains no more than ``threshold``: vertices moved at once can trade places for ever). ``max_level`` limits the levels.
    ``seed`` (an integer ``>= 0``) shuffles the order of the sweeps, which decides ties (``None``:
    a fixed order, not random — results repeat; the CPU and a GPU find different partitions).
    ``weight=False`` counts every edge as 1; the store's weights otherwise (1 in an unweighted
    store), whose total must be a finite float64. Repeated edges add up their weights. A
    directed store is refused. ``progress``, as for every algorithm, hears every sweep.

    Runs **in memory**: the arcs and their weights are read whole onto the device (about
    ``BYTES_PER_ARC`` bytes per stored arc); a graph that does not fit ``memory``
    (``device_memory`` on a GPU) is refused before anything is read. It runs in one process.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> edges = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [2, 3]])
    >>> G = ooc_graph.convert(edges, os.path.join(tempfile.mkdtemp(), "c.h5"), directed=False,
    ...                       progress=False)
    >>> r = ooc_graph.louvain(G, device="cpu")
    >>> r.labels.tolist(), round(r.modularity, 4)
    ([0, 0, 0, 1, 1, 1], 0.3571)
    """
    resolution, threshold, seed = _check(resolution, threshold, max_level, seed)
    run = InMemoryRun(G, "louvain", memory=memory, device=device, device_memory=device_memory,
                      per_arc=BYTES_PER_ARC, per_vertex=BYTES_PER_VERTEX)
    g, xp = run.graph, run.xp
    if g.directed:
        raise ParameterError(f"{g.path}: louvain needs an undirected graph (this store is directed; "
                             "convert with directed=False)")
    fast = _compiled() if xp is np else None
    levels, q, sweeps = (_levels_compiled if fast is not None else _levels_arrays)(
        run, resolution, threshold, max_level, seed, weight)
    if not levels:
        levels = [xp.arange(g.num_vertices, dtype=np.int64)]
    run.stats.update(arcs_processed=int(g.num_arcs) * max(sweeps, 1), sweeps=sweeps, levels=len(levels),
                     modularity=float(q))  # kept with a stored result
    params = {"resolution": resolution, "threshold": threshold, "max_level": max_level, "seed": seed,
              "weight": bool(weight)}
    result = run.finish(LouvainResult, params, max(len(levels), 1), True, store, labels=levels[-1])
    result.modularity = float(q)
    result.levels = [run.to_host(lab) for lab in levels]
    return result


def _check(resolution, threshold, max_level, seed):
    """The keywords checked, before anything is read: ``(resolution, threshold, seed)``. Those that
    would make the sweeps never end (a NaN or negative threshold, an infinite resolution) are
    refused, as are seeds NumPy cannot take. NaN is no real number for either (check_real's rule); an
    infinite threshold is networkx's "the first level only"."""
    resolution = check_real("louvain: resolution", resolution, finite=False)
    threshold = check_real("louvain: threshold", threshold, finite=False)
    if not 0 < resolution < np.inf:
        raise ParameterError(f"louvain: resolution must be positive and finite (got {resolution!r})")
    if not threshold >= 0:
        raise ParameterError(f"louvain: threshold must be zero or more (got {threshold!r})")
    if max_level is not None and (isinstance(max_level, (bool, np.bool_)) or not isinstance(max_level, (int, np.integer))
                                  or max_level < 1):
        raise ParameterError(f"louvain: max_level must be a positive integer or None (got {max_level!r})")
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise ParameterError(f"louvain: seed must be None or an integer >= 0 (got {seed!r})")
    return resolution, threshold, None if seed is None else int(seed)


def _check_total(g, m2) -> None:
    if not np.isfinite(m2):
        raise ParameterError(f"{g.path}: louvain needs edge weights whose total is a finite float64 "
                             f"(it is {m2}); rescale them, or weight=False")


def _compiled():
    """The compiled Louvain kernels, or None where numba is absent or ``cpu.compiled`` is off."""
    from ooc_graph.kernels import cpu
    if cpu.compiled() is None:
        return None
    from ooc_graph.kernels import cpu_louvain
    return cpu_louvain


def _levels_compiled(run, gamma, threshold, max_level, seed, weight):
    """The levels by the compiled sequential sweeps (CPU): ``(labels per level, Q, sweeps)``."""
    k_ = _compiled()
    n = run.graph.num_vertices
    indptr, indices, w = run.csr(weights=True)
    if not weight:
        w = np.ones_like(w)
    indptr, indices, w, loops, k = k_.drop_loops(np.asarray(indptr, np.int64), indices, w)
    m2 = float(k.sum())
    _check_total(run.graph, m2)
    rng = None if seed is None else np.random.default_rng(seed)
    cfg = config.get().algorithms
    labels = np.arange(n, dtype=np.int64)
    q = _q(loops, k, m2, gamma) if m2 > 0 else 0.0
    levels, sweeps = [], 0
    while m2 > 0 and (max_level is None or len(levels) < max_level):
        size = len(k)
        order = np.arange(size, dtype=np.int64) if rng is None else rng.permutation(size)
        c, tot, active = np.arange(size, dtype=np.int64), k.copy(), np.ones(size, np.uint8)
        acc, stamp, touched = np.zeros(size), np.full(size, -1, np.int64), np.empty(size, np.int64)
        prune = len(indices) >= cfg.louvain_prune_min_arcs
        for _ in range(MAX_SWEEPS):
            moved, _ = k_.sweep(indptr, indices, w, k, order, c, tot, m2, gamma, acc, stamp, touched,
                                active)
            sweeps += 1
            run.report(sweeps, int(moved))
            if not moved:  # as networkx and igraph: every move gains, so this comes
                break
            if not prune:
                active[:] = 1
        count = k_.renumber(c)
        if count == size:
            break  # nothing moved: the last level stands
        indptr, indices, w, loops = k_.aggregate(indptr, indices, w, loops, c, count)
        k = np.bincount(c, weights=k, minlength=count)
        q_new = _q(loops, k, m2, gamma)
        q, gain = q_new, q_new - q
        labels = c[labels]
        levels.append(labels)
        if gain <= threshold:
            break  # networkx's rule: the level that gained too little is the last
    return levels, q, sweeps


def _q(loops, k, m2, gamma) -> float:
    """Modularity of the partition of a graph into its vertices, from their self-loops (inner
    weight) and weighted degrees."""
    return float(2 * loops.sum() / m2 - gamma * np.dot(k / m2, k / m2))


def _levels_arrays(run, resolution, threshold, max_level, seed, weight):
    """The levels by batched array sweeps (NumPy or CuPy): ``(labels per level, Q, sweeps)``."""
    xp, n = run.xp, run.graph.num_vertices
    src, dst, w = run.arcs(weights=True)
    if not weight:
        w = xp.ones_like(w)
    order = None
    if seed is not None:  # renumber the vertices at random: the sweeps' ties follow the numbering
        order = xp.asarray(np.random.default_rng(seed).permutation(n))
        src, dst = order[src], order[dst]
    loop = src == dst
    loops = xp.bincount(src[loop], weights=w[loop], minlength=n)
    src, dst, w = src[~loop], dst[~loop], w[~loop]
    k = xp.bincount(src, weights=w, minlength=n) + 2 * loops
    m2 = float(k.sum())  # 2m; device -> host
    _check_total(run.graph, m2)
    labels = xp.arange(n, dtype=np.int64)
    q = _modularity(xp, labels, src, dst, w, loops, k, m2, resolution) if m2 > 0 else 0.0
    levels, sweeps = [], 0
    while m2 > 0 and (max_level is None or len(levels) < max_level):
        c, q_new, sweeps = _move(xp, len(k), src, dst, w, loops, k, m2, resolution, threshold, run, sweeps)
        if not q_new > q:
            break  # nothing moved, or moves at once that lost modularity: the last level stands
        q, gain = q_new, q_new - q
        _, c = xp.unique(c, return_inverse=True)
        labels = c.ravel()[labels]
        levels.append(labels)
        if gain <= threshold:
            break  # networkx's rule: the level that gained too little is the last
        src, dst, w, loops, k = _aggregate(xp, c.ravel(), src, dst, w, loops, k)
    if order is not None:
        levels = [lab[order] for lab in levels]
    return [_by_smallest_member(xp, lab) for lab in levels], q, sweeps


def _modularity(xp, c, src, dst, w, loops, k, m2, gamma) -> float:
    inside = float(w[c[src] == c[dst]].sum()) + 2 * float(loops.sum())  # device -> host
    tot = xp.bincount(c, weights=k, minlength=len(k))
    return inside / m2 - gamma * float((tot * tot).sum()) / (m2 * m2)


def _move(xp, n, src, dst, w, loops, k, m2, gamma, threshold, run, sweeps):
    """One level of sweeps, each in ``BATCHES`` batches of vertices that move at once, reported
    to ``run``: ``(communities, modularity, sweeps so far)``."""
    c = xp.arange(n, dtype=np.int64)
    batch = (xp.arange(n, dtype=np.int64) * 7919) % BATCHES  # spread neighbours over batches
    order = xp.argsort(batch[src])
    src, dst, w = src[order], dst[order], w[order]
    bounds = _host(xp, xp.searchsorted(batch[src], xp.arange(BATCHES + 1)))
    tot = xp.bincount(c, weights=k, minlength=n)
    q = _modularity(xp, c, src, dst, w, loops, k, m2, gamma)
    for _ in range(MAX_SWEEPS):
        sweeps += 1
        moved = 0
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            if hi == lo:
                continue
            movers, to_c = _best_moves(xp, n, c, tot, src[lo:hi], dst[lo:hi], w[lo:hi], k, m2, gamma)
            if len(movers):
                moved += len(movers)
                tot -= xp.bincount(c[movers], weights=k[movers], minlength=n)
                c[movers] = to_c
                tot += xp.bincount(to_c, weights=k[movers], minlength=n)
        q_new = _modularity(xp, c, src, dst, w, loops, k, m2, gamma)
        run.report(sweeps, moved)
        if not moved or q_new - q <= threshold:
            q = q_new
            break
        q = q_new
    return c, q, sweeps


def _best_moves(xp, n, c, tot, src, dst, w, k, m2, gamma):
    """The vertices among ``src`` whose best neighbouring community beats their own, and that
    community."""
    keys, inv = xp.unique(src * n + c[dst], return_inverse=True)
    kvc = xp.bincount(inv.ravel(), weights=w, minlength=len(keys))  # v's weight towards community
    v, to = keys // n, keys % n
    own = xp.zeros(n)
    here = to == c[v]
    own[v[here]] = kvc[here]
    stay = own - gamma * k * (tot[c] - k) / m2  # Q·m of v in its community, against alone
    gain = kvc - gamma * k[v] * tot[to] / m2
    gain = xp.where(here, -xp.inf, gain)
    pick = _stable_argsort(xp, -gain)
    pick = pick[_stable_argsort(xp, v[pick])]  # within a vertex, best gain first (ties: smaller id)
    first = xp.ones(len(pick), dtype=bool)
    first[1:] = v[pick[1:]] != v[pick[:-1]]
    pick = pick[first]
    move = gain[pick] > stay[v[pick]] + 1e-12 * xp.maximum(xp.abs(stay[v[pick]]), 1.0)
    return v[pick][move], to[pick][move]


def _stable_argsort(xp, a):
    return np.argsort(a, kind="stable") if xp is np else xp.argsort(a)  # CuPy's sort is always stable


def _host(xp, array):
    return array if xp is np else xp.asnumpy(array)


def _aggregate(xp, c, src, dst, w, loops, k):
    """The graph of the communities: weight between two communities as one arc each way,
    weight inside one as its self-loop."""
    n = int(c.max()) + 1 if len(c) else 0  # device -> host
    cs, cd = c[src], c[dst]
    inside = cs == cd
    new_loops = xp.bincount(c, weights=loops, minlength=n) + xp.bincount(cs[inside], weights=w[inside],
                                                                         minlength=n) / 2
    cs, cd, w = cs[~inside], cd[~inside], w[~inside]
    keys, inv = xp.unique(cs * n + cd, return_inverse=True)
    w = xp.bincount(inv.ravel(), weights=w, minlength=len(keys))
    return keys // n, keys % n, w, new_loops, xp.bincount(c, weights=k, minlength=n)


def _by_smallest_member(xp, labels):
    """Renumber communities 0..k−1 in the order of their smallest member."""
    if not len(labels):
        return labels
    _, first, inverse = xp.unique(labels, return_index=True, return_inverse=True)
    rank = xp.empty(len(first), dtype=np.int64)
    rank[xp.argsort(first)] = xp.arange(len(first), dtype=np.int64)
    return rank[inverse.ravel()]

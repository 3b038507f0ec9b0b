"""The general edge operator on the CPU (NumPy): ``out[v] = monoid(out[v], f(x[u], x_dst[v], w))``
over a batch's arcs (``f`` may also read ``y[u]`` and ``y[v]`` of a second per-vertex array ``y``
as ``y_src`` and ``y_dst``), ``f`` an expression tree of :mod:`ooc_graph.engine.expression`. Re-exported
by :mod:`.cpu`, whose batches (CSR by destination) these take."""

from __future__ import annotations

import numpy as np

from . import cpu

_REDUCE = {"sum": np.add, "min": np.minimum, "max": np.maximum, "or": np.maximum}
_SRC = ("var", "src")
_SRC_W = (("bin", "*", ("var", "src"), ("var", "w")), ("bin", "*", ("var", "w"), ("var", "src")))


def evaluate(tree, env: dict, xp=np):
    """The value of an expression tree (:mod:`ooc_graph.engine.expression`) over the arrays or
    scalars in ``env`` (``src``, ``dst``, ``w``, ``y_src``, ``y_dst``), with the array module ``xp``."""
    kind = tree[0]
    if kind == "var":
        return env[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "neg":
        return -evaluate(tree[1], env, xp)
    if kind == "not":
        return xp.logical_not(evaluate(tree[1], env, xp))
    if kind in ("and", "or"):
        a, b = evaluate(tree[1], env, xp), evaluate(tree[2], env, xp)
        return xp.logical_and(a, b) if kind == "and" else xp.logical_or(a, b)
    if kind in ("bin", "cmp"):
        a, b = evaluate(tree[2], env, xp), evaluate(tree[3], env, xp)
        op = tree[1]
        if op == "**":
            return xp.power(xp.asarray(a, dtype=np.float64), b)
        if op == "/":
            return xp.true_divide(a, b)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<": lambda: a < b,
                "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b, "==": lambda: a == b,
                "!=": lambda: a != b}[op]()
    if kind == "call":
        args = [evaluate(t, env, xp) for t in tree[2:]]
        name = tree[1]
        if name == "where":
            return xp.where(xp.asarray(args[0]) != 0, args[1], args[2])
        return {"min": xp.minimum, "max": xp.maximum, "abs": xp.abs}[name](*args)
    raise ValueError(f"unknown expression node {kind!r}")  # the parser admits no other


def _reads(tree, name: str) -> bool:
    if tree[0] == "var":
        return tree[1] == name
    return any(_reads(t, name) for t in tree[1:] if isinstance(t, tuple))


def _arc_values(batch: "cpu.Batch", tree, xs, xd, y=None):
    """``f`` of every arc of the batch, in CSR order (float64 unless f is boolean or integral)."""
    env = {"w": 1.0 if batch.weight is None else batch.weight}
    if _reads(tree, "src"):
        env["src"] = xs[batch.indices]
    if _reads(tree, "dst"):
        env["dst"] = np.repeat(xd[batch.rows + batch.dst_lo], np.diff(batch.indptr))
    if _reads(tree, "y_src"):
        env["y_src"] = y[batch.indices]
    if _reads(tree, "y_dst"):
        env["y_dst"] = np.repeat(y[batch.rows + batch.dst_lo], np.diff(batch.indptr))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        values = evaluate(tree, env)
    return np.broadcast_to(values, (batch.num_arcs,)) if np.ndim(values) == 0 else values


def _weighted(batch: "cpu.Batch"):
    """The batch's CSR with the arc weights as values (shares its index arrays)."""
    wm = getattr(batch, "_weighted_matrix", None)
    if wm is None:
        import scipy.sparse as sp
        wm = sp.csr_matrix((batch.weight, batch.indices, batch.indptr), shape=(batch.rows.size, batch.columns))
        batch._weighted_matrix = wm
    return wm


def edge_combine(batch: "cpu.Batch", tree, monoid: str, xs, xd, active, out, y=None) -> None:
    """``out[v] = monoid(out[v], f(xs[u], xd[v], w, y[u], y[v]))`` over the batch's arcs u→v whose
    source is active (``active`` a uint8 mask, or None for all). ``monoid``: sum, min, max, or (1
    where any ``f`` is non-zero). Sums of ``src`` and ``src * w`` run as a sparse matrix-vector
    product."""
    if not batch.num_arcs:
        return
    idx = batch.rows + batch.dst_lo
    if monoid == "sum" and active is None and xs.dtype == np.float64 and out.dtype == np.float64:
        if tree == _SRC:
            cpu.pull_sum(batch, xs, out)
            return
        if tree in _SRC_W:
            product = (batch.matrix if batch.weight is None else _weighted(batch)) @ xs
            if batch.rows.size == batch.dst_hi - batch.dst_lo:
                out[batch.dst_lo:batch.dst_hi] += product
            else:
                out[idx] += product
            return
    values = _arc_values(batch, tree, xs, xd, y)
    if monoid == "or":
        values = values != 0
    elif values.dtype == bool:
        values = values.astype(out.dtype)
    if active is not None:
        keep = active[batch.indices].astype(bool)
        if monoid == "sum":
            values = np.where(keep, values, 0)
        elif monoid == "or":
            values = values & keep
        else:
            fill = _identity(monoid, np.result_type(values))
            values = np.where(keep, values, fill)
    reduced = _REDUCE[monoid].reduceat(values, batch.row_start)
    out[idx] = _REDUCE[monoid](out[idx], reduced.astype(out.dtype, copy=False))


def _identity(monoid: str, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return {"min": np.inf, "max": -np.inf}.get(monoid, 0)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return {"min": info.max, "max": info.min}.get(monoid, 0)
    return {"min": True}.get(monoid, False)


def edge_values(batch: "cpu.Batch", tree, xs, xd, active, y=None):
    """``(destination, f(xs[u], xd[v], w, y[u], y[v]))`` of every arc u→v of the batch whose
    source is active: int64 ids and float64 values."""
    values = np.asarray(_arc_values(batch, tree, xs, xd, y), dtype=np.float64)
    dst = batch.dst()
    if active is not None:
        keep = active[batch.indices].astype(bool)
        return dst[keep], values[keep]
    return dst, values

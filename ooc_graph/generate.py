"""Synthetic graphs written straight into a store in bounded memory; deterministic for a seed.

- :func:`rmat`: Graph500 Kronecker / R-MAT (a=0.57, b=0.19, c=0.19), vertex ids permuted as
  Graph500 does, edges shuffled by generation order.
- :func:`urand`: uniform random (GAP ``urand``): both endpoints uniform over 2**scale vertices.
- :func:`grid`: a rows × cols 2-D mesh (4-neighbour), high diameter like a road network, with
  optional random weights.

R-MAT and urand edges (and weights) come from a counter-based hash of the seed and the edge's
index (``kernels/cpu_generate.py``), so edge e is the same whoever draws it: on the GPU when the
builder sorts there (``device``), else with the compiled kernels where numba is installed, else
with NumPy on ``workers`` threads; the three give the same arrays. The builder is fed in steps,
in edge order.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from . import config
from ._memory import budget
from ._parallel import ordered_map, workers
from .errors import ParameterError
from .ingest.builder import GraphBuilder
from .ingest.output import check_flags, check_output
from .ingest.sorting import check_device
from .kernels import cpu as cpu_kernels
from .kernels import cpu_generate

__all__ = ["rmat", "urand", "grid", "GENERATORS"]

# Edges of a grid per step, each step's weights drawn from a seed of its own: the graph depends on
# it, so it is fixed (R-MAT and uniform graphs draw edge e from e alone: config ingest.generate_step).
_GRID_STEP = 1 << 22
# How the edges were drawn, named in a store's source: stores of one seed drawn another way
# (before the counter-based hash) hold other graphs.
DRAWS = "draws=splitmix64"


def _id_dtype(n: int):
    return np.dtype(np.int32 if n <= 1 << 31 else np.int64)


def _check(scale, edge_factor):
    if isinstance(scale, bool) or not isinstance(scale, int) or not 0 <= scale <= 40:
        raise ParameterError(f"scale must be an integer in 0..40 (got {scale!r})")
    if isinstance(edge_factor, bool) or not isinstance(edge_factor, int) or edge_factor < 1:
        raise ParameterError(f"edge_factor must be a positive integer (got {edge_factor!r})")


def _ready(out, n, overwrite, opts, seed, **flags):
    """Output path, budget, seed and flags checked before any edge is drawn."""
    GraphBuilder.check_options(num_vertices=n, **{k: opts[k] for k in ("memory", "weight_dtype", "chunk_arcs",
                                                                       "workers", "device", "interval_size")
                                                  if k in opts})
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer (got {seed!r})")
    check_flags(optional=("progress",), **flags, **{k: opts[k] for k in ("augment", "progress") if k in opts})
    check_output(out, overwrite=overwrite)


def _weights(rng, m, weighted):
    # Graph500 SSSP draws weights uniformly from [0, 1); keep them strictly positive here.
    return (1.0 - rng.random(m)) if weighted else None


def implementation(edges: int, device: str = "auto", memory=None) -> str:
    """Where ``edges`` R-MAT or urand edges are drawn for a build on ``device`` in ``memory``:
    "numpy" below config ``ingest.generate_kernel_min_edges``, else "gpu" where the builder sorts on one, else
    "compiled" where numba is installed and the budget allows its libraries
    (config ``ingest.compiled_min_budget``), else "numpy". The edges are the same."""
    cfg = config.get().ingest
    if edges < cfg.generate_kernel_min_edges:
        return "numpy"
    if check_device(device):
        return "gpu"
    if budget(memory) >= cfg.compiled_min_budget and cpu_kernels.compiled() is not None:
        return "compiled"
    return "numpy"


def _kernels(where: str):
    if where == "gpu":
        from .kernels import gpu_generate
        return gpu_generate
    if where == "compiled":
        from .kernels import cpu_ingest
        return cpu_ingest
    return cpu_generate


def _hashed(kind: str, args: tuple, n: int, m: int, key: int, weighted: bool, opts: dict):
    """(src, dst, weights) of edges 0 .. m-1 among n vertices in steps of ``config
    ingest.generate_step``, in order, drawn by ``kind`` (``rmat_edges`` or ``urand_edges``) of the
    kernels :func:`implementation` picks for the build options ``opts``: NumPy on ``workers``
    threads, the compiled kernels (on ``workers`` of numba's threads) or the GPU, both on one
    thread beside the builder."""
    where = implementation(m, opts.get("device", "auto"), opts.get("memory"))
    threads, dtype = workers(opts.get("workers")), _id_dtype(n)
    kernels = _kernels(where)
    draw = getattr(kernels, kind)
    size = config.get().ingest.generate_step

    def step(start):
        k = min(size, m - start)
        with kernels.threads(threads) if where == "compiled" else contextlib.nullcontext():
            src, dst = draw(key, start, k, *args, dtype=dtype)
            w = kernels.edge_weights(key, start, k) if weighted else None
        if where == "gpu":  # device→host
            import cupy
            src, dst, w = cupy.asnumpy(src), cupy.asnumpy(dst), None if w is None else cupy.asnumpy(w)
        return src, dst, w

    starts = range(0, m, size)
    return ordered_map(step, starts, threads) if where == "numpy" else ordered_map(step, starts, 1, ahead=2)


def _write(out, edges, *, n, directed, weighted, source, **opts):
    """Build the store from ``edges``, a generator of (src, dst, weights) steps (the builder checks
    the output path and the budget before any edge is drawn)."""
    with GraphBuilder(out, directed=directed, weighted=weighted, num_vertices=n, source=source,
                      **opts) as b:
        t = time.perf_counter()
        try:
            for src, dst, w in edges:  # each step's arrays are new: the builder keeps them
                b.add(src, dst, w, owned=True)
        finally:
            edges.close()  # stops the generating threads if the builder failed
        b.stages.add("generate", time.perf_counter() - t - b.stages.seconds.get("add", 0.0))
        b.finish()
    return b.opened()


def rmat(out, scale: int, edge_factor: int = 16, *, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 0, directed: bool = False, weighted: bool = False, permute: bool = True,
         overwrite: bool = False, **opts):
    """Graph500 Kronecker graph: 2**scale vertices, edge_factor * 2**scale edges.

    Each edge picks one quadrant per level with probabilities a, b, c, d = 1-a-b-c (compared
    as 32-bit fixed-point numbers). With ``permute`` the vertex ids are permuted by a keyed
    bijection, as Graph500 permutes them, so hubs are not all near 0. Edges are drawn on the GPU
    where the builder sorts on one, else on ``workers`` threads (see the module); the graph
    depends on the seed alone. An existing store at ``out`` is replaced only with
    ``overwrite=True``. Other keyword arguments go to the store builder (``memory``,
    ``interval_size``, ``workers``, ...).

    >>> import ooc_graph, tempfile, os
    >>> folder = tempfile.TemporaryDirectory()
    >>> G = ooc_graph.generate.rmat(os.path.join(folder.name, "r.h5"), 8, progress=False)
    >>> G.num_vertices
    256
    >>> G.close(); folder.cleanup()
    """
    _check(scale, edge_factor)
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise ParameterError(f"R-MAT probabilities must be non-negative and sum to at most 1 (a={a}, b={b}, c={c})")
    n, m = 1 << scale, edge_factor << scale
    _ready(out, n, overwrite, opts, seed, directed=directed, weighted=weighted, permute=permute)
    keys = cpu_generate.seed_keys(seed)
    args = (scale, cpu_generate.thresholds(a, b, c), cpu_generate.permutation(scale, keys[1:]) if permute else None)
    edges = _hashed("rmat_edges", args, n, m, keys[0], weighted, opts)
    return _write(out, edges, n=n, directed=directed, weighted=weighted,
                  source=f"rmat(scale={scale}, edge_factor={edge_factor}, a={a}, b={b}, c={c}, seed={seed}, "
                         f"permute={permute}, {DRAWS})",
                  overwrite=overwrite, **opts)


def urand(out, scale: int, edge_factor: int = 16, *, seed: int = 0, directed: bool = False,
          weighted: bool = False, overwrite: bool = False, **opts):
    """Uniform random graph (GAP urand): edge_factor * 2**scale edges between uniform endpoints."""
    _check(scale, edge_factor)
    n, m = 1 << scale, edge_factor << scale
    _ready(out, n, overwrite, opts, seed, directed=directed, weighted=weighted)
    edges = _hashed("urand_edges", (scale,), n, m, cpu_generate.seed_keys(seed)[0], weighted, opts)
    return _write(out, edges, n=n, directed=directed, weighted=weighted,
                  source=f"urand(scale={scale}, edge_factor={edge_factor}, seed={seed}, {DRAWS})", overwrite=overwrite,
                  **opts)


def grid(out, rows: int, cols: int, *, seed: int = 0, weighted: bool = False, overwrite: bool = False,
         **opts):
    """Undirected rows × cols mesh; vertex (r, c) is r * cols + c. Diameter rows + cols - 2."""
    for name, v in (("rows", rows), ("cols", cols)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ParameterError(f"{name} must be a positive integer (got {v!r})")
    n = rows * cols
    _ready(out, n, overwrite, opts, seed, weighted=weighted)
    root = np.random.SeedSequence(seed)
    rows_per_step = max(1, _GRID_STEP // (2 * cols))

    def edges():
        for i, r0 in enumerate(range(0, rows, rows_per_step)):
            rng = np.random.default_rng(root.spawn(i + 1)[-1])
            r1 = min(rows, r0 + rows_per_step)
            ids = np.arange(r0 * cols, r1 * cols, dtype=np.int64).reshape(r1 - r0, cols)
            right = (ids[:, :-1].ravel(), ids[:, 1:].ravel())
            down_src = ids.ravel()
            keep = down_src + cols < n
            down = (down_src[keep], down_src[keep] + cols)
            src = np.concatenate([right[0], down[0]])
            dst = np.concatenate([right[1], down[1]])
            yield src, dst, _weights(rng, src.size, weighted)
    return _write(out, edges(), n=n, directed=False, weighted=weighted,
                  source=f"grid(rows={rows}, cols={cols}, seed={seed})", overwrite=overwrite, **opts)


GENERATORS = {"rmat": rmat, "urand": urand, "grid": grid}

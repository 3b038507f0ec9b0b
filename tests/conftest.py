import contextlib
import os
from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATA = Path(os.environ.get("OOC_GRAPH_DATA", SHARED / "data"))


def _gpus() -> int:
    from ooc_graph.engine import gpu_available
    if not gpu_available():
        return 0
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def pytest_collection_modifyitems(config, items):
    gpus = _gpus()
    try:
        import dask_cuda  # noqa: F401
        reason = None if gpus >= 2 else f"needs two CUDA devices (CuPy finds {gpus})"
    except ImportError:
        reason = "needs dask-cuda"
    skip_gpu = pytest.mark.skip(reason="CuPy finds no CUDA device")
    for item in items:
        if "gpu" in item.keywords and not gpus:
            item.add_marker(skip_gpu)
        if "multigpu" in item.keywords and reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _tiny_build_budgets(monkeypatch):
    """Tests force the builder's out-of-core paths with budgets of a few KiB (STYLE.md); the fixed
    allowances for the interpreter itself and for the write buffers (HDF5's, the chunk writer's)
    would refuse those, so here they are zero. Tests of the budget floor restore them
    (``monkeypatch.undo()``)."""
    from ooc_graph.ingest import footprint
    monkeypatch.setattr(footprint, "BASELINE_BYTES", 0)
    monkeypatch.setattr(footprint, "HDF5_WRITE_COPIES", 0)
    monkeypatch.setattr(footprint, "CHUNK_WRITER_COPIES", 0)


@pytest.fixture
def data_dir():
    if not DATA.is_dir():
        pytest.skip(f"shared data folder {DATA} is absent")
    return DATA


def random_edges(rng, *, n, m, weighted=False, loops=True, dupes=True, big_ids=False):
    """Random edges with self-loops and duplicates; weights exactly representable in float32."""
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    if not loops:
        keep = src != dst
        src, dst = src[keep], dst[keep]
    if dupes and len(src) > 2:
        k = max(1, len(src) // 10)
        src = np.concatenate([src, src[:k]])
        dst = np.concatenate([dst, dst[:k]])
    w = (rng.integers(0, 64, len(src)) / 8.0) if weighted else None
    if big_ids:
        src = src * 1_000_003 + 2**31
        dst = dst * 1_000_003 + 2**31
    return src.astype(np.int64), dst.astype(np.int64), w


def hub_edges(rng, *, n, weighted=False):
    """A graph whose BFS from vertex 0 turns bottom-up: vertex 0 reaches a third of the vertices
    at once, random arcs (self-loops, duplicates) among the first 90%, and a chain through the
    rest (long thin levels at the end where the hub points into it, unreachable parts where it
    does not). Weights in 1/8..8, exact in float32, never 0."""
    hub = rng.choice(np.arange(1, n), size=max(1, n // 3), replace=False)
    core = int(n * 0.9)
    src, dst, _ = random_edges(rng, n=core, m=4 * n)
    tail = np.arange(core, n - 1)
    src = np.concatenate([np.zeros(hub.size, np.int64), src, tail])
    dst = np.concatenate([hub, dst, tail + 1])
    w = rng.integers(1, 65, src.size) / 8.0 if weighted else None
    return src.astype(np.int64), dst.astype(np.int64), w


def nx_graph(src, dst, w, *, directed, n=None, dedupe=True, nodes=None):
    """The reference graph: duplicates merged keeping the smallest weight, as the store does."""
    import networkx as nx
    if dedupe:
        G = nx.DiGraph() if directed else nx.Graph()
    else:
        G = nx.MultiDiGraph() if directed else nx.MultiGraph()
    G.add_nodes_from(range(n) if nodes is None else nodes)
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        wt = 1.0 if w is None else float(w[i])
        if dedupe and G.has_edge(u, v):
            G[u][v]["weight"] = min(G[u][v]["weight"], wt)
        else:
            G.add_edge(u, v, weight=wt)
    return G


def edge_array(src, dst, w=None):
    return (src, dst) if w is None else (src, dst, w)


@contextlib.contextmanager
def dask_client(workers: int, threads: int):
    """A client of a dask ``LocalCluster`` of ``workers`` CPU processes, closed afterwards."""
    import distributed
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                                       memory_limit=0, dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()

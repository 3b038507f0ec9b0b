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


@pytest.fixture(autouse=True, scope="session")
def _checked_stores_cache(tmp_path_factory):
    """Records of stores that passed the content checks (ooc_graph/store/stamps.py) go to the
    session's temporary folder, not the user's cache (subprocesses inherit it)."""
    os.environ["OOC_GRAPH_CHECK_CACHE"] = str(tmp_path_factory.mktemp("checked"))
    yield
    os.environ.pop("OOC_GRAPH_CHECK_CACHE", None)


@pytest.fixture
def configure():
    """Change ``ooc_graph.config`` settings for the rest of the test, as ``config.set`` takes them:
    ``configure({"traversal.bottom_up": False})`` or ``configure(traversal={"bottom_up": False})``."""
    from ooc_graph import config
    with contextlib.ExitStack() as stack:
        yield lambda changes=None, /, **sections: stack.enter_context(config.set(changes, **sections))


@pytest.fixture
def data_dir():
    if not DATA.is_dir():
        pytest.skip(f"shared data folder {DATA} is absent (OOC_GRAPH_DATA names another)")
    return DATA


def random_degrees(dtype, n: int) -> np.ndarray:
    """``n`` out-degrees (or out-weight sums, for a float ``dtype``) of ``dtype``, about half of them 0."""
    rng = np.random.default_rng(n)
    degree = (rng.integers(0, 4, n) * rng.integers(0, 1000, n)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        degree *= 0.37
    return degree


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


# Guesses of PageRank's last step (``engine.loop.probably_last`` stood in for), for the tests of
# runs that send results during their last pass: right (the real one), always, two steps ahead,
# never, and one wrong guess before a pull (step 4, or 5: into either x) after which the run ends on
# a step not guessed, whose values may be in the array sent.
LAST_STEP_GUESSES = ("changes", "always", "two-ahead", "never", "once-early", "once-later")


def guess_last_step(monkeypatch, guess: str) -> None:
    import importlib
    module = importlib.import_module("ooc_graph.engine.loop")
    foresee = module.probably_last
    if guess != "changes":
        monkeypatch.setattr(module, "probably_last", {
            "always": lambda seen, tol, steps=1: True,
            "two-ahead": lambda seen, tol, steps=1: steps == 2 or foresee(seen, tol, steps),
            "never": lambda seen, tol, steps=1: False,
            "once-early": lambda seen, tol, steps=1: steps == 2 and len(seen) == 2,
            "once-later": lambda seen, tol, steps=1: steps == 2 and len(seen) == 3}[guess])


def pagerank_guess_cases(personalization):
    """PageRank parameters that end a run on tol, on max_iter (1 too: those keep their values rather
    than raise), personalized, Graphalytics."""
    keep = {"raise_on_nonconvergence": False}
    return ({"tol": 1e-6}, {"tol": 1e-11, "max_iter": 300, **keep}, {"tol": 1e-12, "max_iter": 9, **keep},
            {"max_iter": 1, **keep}, {"tol": 1e-8, "personalization": personalization},
            {"mode": "graphalytics", "max_iter": 6})


def assert_guessed_run(guess: str, kw: dict, ref, got, sent: list, rtol: float) -> None:
    """``got``, a PageRank run under ``guess`` with parameters ``kw``, against ``ref`` (looking at
    once); ``sent``: whether each part of a result it sent was sent."""
    assert (got.iterations, got.converged) == (ref.iterations, ref.converged), kw
    np.testing.assert_allclose(got.values, ref.values, rtol=rtol, atol=1e-15)
    if guess == "never" and "max_iter" not in kw:
        assert not sent  # a run that ends on tol and never guesses sends nothing
    if guess.startswith("once") and "max_iter" not in kw:
        assert ref.iterations > 6 and sent and all(sent)  # the wrong guess was made and sent
    if kw.get("mode") == "graphalytics":  # its last step is known and sent
        assert sent and sent[-1]


@pytest.fixture(scope="module")
def guess_graph(tmp_path_factory):
    """A random directed graph of 3,007 vertices, some dangling, for :func:`guess_last_step`."""
    import ooc_graph
    rng = np.random.default_rng(8)
    n = 3000
    src, dst, _ = random_edges(rng, n=n, m=8 * n)
    keep = rng.random(src.size) < 0.9
    return ooc_graph.convert((src[keep], dst[keep]), tmp_path_factory.mktemp("guess") / "g.h5", directed=True,
                             num_vertices=n + 7, interval_size=256, chunk_arcs=2048, progress=False)


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


def stray_connections(address, idle: int = 200) -> list:
    """What anything that reaches a listening port can send it: a negative length, garbage, a
    huge length, an introduction claiming a 64 KiB job id, a connection that says nothing, and
    ``idle`` more that say nothing. Returns the sockets (the caller closes them)."""
    import socket
    import struct

    from ooc_graph.runtime import wire
    sent = [struct.pack("<q", -1), os.urandom(64), struct.pack("<q", 1 << 62),
            wire.HELLO.pack(wire.MAGIC, wire.MESH, 0xFFFF, 0), b""]
    socks = []
    for data in sent + [b""] * idle:
        s = socket.create_connection(tuple(address), timeout=5)
        if data:
            s.sendall(data)
        socks.append(s)
    return socks


def closed_by_peer(sock) -> bool:
    """Whether the other end has closed ``sock`` (what it sent before, a hub's nonce, is read
    and dropped); never blocks."""
    sock.setblocking(False)
    try:
        while True:
            if not sock.recv(4096):
                return True
    except BlockingIOError:
        return False
    except OSError:  # reset
        return True
    finally:
        sock.settimeout(5)

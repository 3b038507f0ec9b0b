"""Shared by ``twitter.py`` and ``friendster.py``: convert a real graph (or generate an R-MAT with
its vertex and edge counts), then run PageRank, BFS and WCC on one GPU and on all of them,
reporting seconds and edges per second for every stage.

Before any work it says where the job runs (GPUs, or CPU workers where CuPy finds no GPU) and
the disk and memory it needs, refuses what does not fit, and asks before a job that needs more
than 1 GiB of disk (``--yes`` goes ahead; off a terminal, without it, the job is refused). Off
a terminal, where progress bars stay hidden, it prints a line every ``--report-every`` seconds
while the graph is built. SIGTERM and Ctrl-C remove the temporary store's folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import numpy as np

import ooc_graph
from ooc_graph._memory import budget as host_budget  # the library's parsing of "64GB" and its default

# Measured on R-MAT scale 20, edge factor 16, with --memory 300MB (buckets spilled to disk): the
# store took 17.0 bytes per input edge undirected and 15.0 directed; the folder peaked at 22.4 and
# 23.9 bytes per input edge during the build. A text edge list is about 1.4 times its size at the
# peak, a compressed one about 4 times.
STORE_BYTES_PER_EDGE = 17
PEAK_BYTES_PER_EDGE = 24
# What each process keeps per vertex: PageRank's state (four float64 arrays and a flag).
STATE_BYTES_PER_VERTEX = 33
# Jobs needing more disk than this are asked for (--yes).
ASK_ABOVE_BYTES = 1 << 30


def parser(description: str, scale: int, edge_factor: int, directed: bool) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--input", help="the real edge file (any format ooc-graph convert reads); "
                                    "without it an R-MAT of the same size is generated")
    ap.add_argument("--store", help="where to keep the graph store (default: a temporary folder, deleted)")
    ap.add_argument("--scale", type=int, default=scale, help=f"R-MAT scale (default {scale})")
    ap.add_argument("--edge-factor", type=int, default=edge_factor, help=f"R-MAT edge factor (default {edge_factor})")
    ap.add_argument("--directed", action=argparse.BooleanOptionalAction, default=directed,
                    help=f"directed graph (default {'yes' if directed else 'no: edges are symmetrised'})")
    ap.add_argument("--gpus", default="all", help="GPUs for the multi-GPU runs: all, or ids like 0,1")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                    help="cpu: run on CPU workers instead (no GPU needed)")
    ap.add_argument("--workers", type=int, default=2, help="with --device cpu: CPU worker processes")
    ap.add_argument("--memory", help="host budget per worker, e.g. 64GB (default: a quarter of RAM)")
    ap.add_argument("--device-memory", help="GPU budget per GPU (default: 80%% of free memory)")
    ap.add_argument("--build-workers", type=int, default=os.cpu_count(), help="threads converting")
    ap.add_argument("--warm", type=int, default=0,
                    help="after each first call, this many warm calls (their median is reported too)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--yes", action="store_true",
                    help="go ahead without asking where the job needs more than 1 GiB of disk")
    ap.add_argument("--report-every", type=float, default=60.0, metavar="SECONDS",
                    help="off a terminal, a progress line this often while the graph is built (default 60)")
    return ap


def _size(nbytes: float) -> str:
    return f"{nbytes / 1e9:.1f} GB" if nbytes >= 1e8 else f"{nbytes / 1e6:.1f} MB"


def _fail(message: str):
    sys.exit(f"{Path(sys.argv[0]).name}: {message}")


def check(a, store: Path | None) -> bool:
    """Before any work: where the job runs, and the disk and memory it needs (``store`` None: a
    temporary folder). Prints them; refuses what does not fit, and asks before a job needing more
    than 1 GiB of disk (refused off a terminal without --yes). Returns whether the runs use GPUs."""
    has_gpu = ooc_graph.engine.gpu_available()
    if a.device == "gpu" and not has_gpu:
        _fail("error: --device gpu but CuPy finds no CUDA device")
    gpu = a.device != "cpu" and has_gpu
    lines = ["device: " + ("GPUs " + a.gpus if gpu else f"the CPU, 1 process then {a.workers} worker processes"
                           + ("" if a.device == "cpu" else " (CuPy finds no CUDA device)"))]
    disk = vertices = 0
    folder = store.parent if store is not None else Path(tempfile.gettempdir())
    into = store if store is not None else f"a temporary folder in {folder}"
    if a.input:
        size = Path(a.input).stat().st_size if Path(a.input).is_file() else _fail(f"error: no such file {a.input}")
        disk = int(size * (4 if Path(a.input).suffix in (".gz", ".xz", ".bz2") else 1.4))
        lines.append(f"graph: {a.input} ({_size(size)}) converted into {into}: about {_size(disk)} of disk")
    elif store is None or not store.exists():
        vertices, edges = 1 << a.scale, a.edge_factor << a.scale
        disk = PEAK_BYTES_PER_EDGE * edges
        lines.append(f"graph: an R-MAT of {vertices:,} vertices and {edges:,} edges "
                     f"({'directed' if a.directed else 'undirected'}) generated into {into}: a store of about "
                     f"{_size(STORE_BYTES_PER_EDGE * edges)}, {_size(disk)} of disk while it is built")
    else:
        with ooc_graph.open(store) as G:
            vertices = G.num_vertices
        lines.append(f"graph: the store {store} ({_size(store.stat().st_size)}, {vertices:,} vertices)")
    free = shutil.disk_usage(folder).free
    if disk > free:
        _fail(f"error: the graph needs about {_size(disk)} of disk and {folder} has {_size(free)} free "
              "(--store puts it elsewhere)")
    if vertices:
        state, room = STATE_BYTES_PER_VERTEX * vertices, host_budget(a.memory)
        if state > room:
            _fail(f"error: each process keeps about {_size(state)} for the vertex state; --memory is "
                  f"{_size(room)} (default: a quarter of RAM)")
        lines.append(f"memory: about {_size(state)} per process for the vertex state (--memory {_size(room)})")
        if gpu:
            import cupy
            device_free = cupy.cuda.Device(0).mem_info[0]
            if state > device_free:
                _fail(f"error: the vertex state needs about {_size(state)} of GPU memory; GPU 0 has "
                      f"{_size(device_free)} free")
    print("\n".join(lines), flush=True)
    if disk > ASK_ABOVE_BYTES and not a.yes:
        question = f"this job needs about {_size(disk)} of disk and may run for hours"
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            _fail(f"{question}: pass --yes to go ahead (or --scale 12 for a small stand-in)")
        if input(f"{question}; go ahead? [y/N] ").strip().lower() not in ("y", "yes"):
            _fail("not started")
    return gpu


@contextmanager
def reporting(what: str, store: Path, expected: int, every: float):
    """Off a terminal, where the library's progress bars stay hidden: a line every ``every``
    seconds while the graph is built, with the bytes written so far (the store and its build's
    scratch and temporary folders beside it)."""
    if sys.stderr.isatty() or every <= 0:
        yield
        return
    stop = threading.Event()
    t0 = time.perf_counter()

    def written() -> int:
        total = 0
        for path in [store, *store.parent.glob(f".{store.name}.*")]:
            try:  # the build's scratch folders come and go meanwhile
                files = [path] if path.is_file() else list(path.rglob("*"))
            except OSError:
                continue
            for f in files:
                try:
                    total += f.stat().st_size if f.is_file() else 0
                except OSError:  # removed meanwhile
                    pass
        return total

    def beat():
        while not stop.wait(every):
            done = written()
            store_size = f" (the store will take about {_size(expected)})" if expected else ""
            print(f"  {what}: {time.perf_counter() - t0:.0f} s, {_size(done)} on disk so far{store_size}", flush=True)
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _terminated(signum, frame):
    """SIGTERM unwinds like Ctrl-C, so that the temporary folder and the clusters go."""
    raise SystemExit(128 + signum)


def _stage(rows, name, seconds, edges):
    """One stage's figures: edges are the input edges of a conversion, the arcs an algorithm
    processed (every pass counted) for a run."""
    rows.append({"stage": name, "seconds": seconds, "edges": int(edges),
                 "edges_per_second": edges / seconds if seconds else None})
    print(f"{name:<34s} {seconds:9.2f} s  {edges / max(seconds, 1e-9) / 1e6:10.1f} M edges/s", flush=True)


def run(a) -> list:
    """Every stage of the job, after :func:`check`; returns the figures."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    rows = []
    gpu = check(a, Path(a.store) if a.store else None)
    folder = None if a.store else tempfile.TemporaryDirectory(prefix="ooc-graph-large-")
    store = Path(a.store) if a.store else Path(folder.name) / "graph.h5"
    try:
        t = time.perf_counter()
        built = bool(a.input) or not store.exists()
        expected = 0 if a.input else STORE_BYTES_PER_EDGE * (a.edge_factor << a.scale)
        with reporting("convert" if a.input else "generate + convert", store, expected, a.report_every):
            if a.input:
                G = ooc_graph.convert(a.input, store, directed=a.directed, memory=a.memory,
                                      workers=a.build_workers)
            elif store.exists():
                G = ooc_graph.open(store)
            else:
                G = ooc_graph.generate.rmat(store, a.scale, a.edge_factor, seed=1, directed=a.directed,
                                            memory=a.memory, workers=a.build_workers)
        print(repr(G), flush=True)
        if built:
            _stage(rows, "convert" if a.input else "generate + convert", time.perf_counter() - t,
                   G.built_by.get("input_edges", G.num_edges))
        source = int(G.vertices[int(np.argmax(G.out_degree))])
        configs = [("1 GPU" if gpu else "1 process", {})]
        if gpu:
            configs.append((f"GPUs {a.gpus}", {"gpus": a.gpus}))
        else:
            configs.append((f"{a.workers} CPU workers", {"workers": a.workers}))
        budgets = {"memory": a.memory} | ({"device_memory": a.device_memory} if gpu else {})
        for label, where in configs:
            if where:  # the cluster starts once, before the first call that needs it
                from ooc_graph.runtime import cluster
                t = time.perf_counter()
                cluster.local_gpu_client(a.gpus) if gpu else cluster.local_cpu_client(a.workers)
                rows.append({"stage": f"start cluster ({label})", "seconds": time.perf_counter() - t})
                print(f"{rows[-1]['stage']:<34s} {rows[-1]['seconds']:9.2f} s", flush=True)
            for algo, kw in (("pagerank", {"tol": 1e-6}), ("bfs", {"source": source}), ("wcc", {})):
                G.release()  # every call reads the store: this process's engine and the workers' alike
                if where:
                    ooc_graph.runtime.release()
                call = partial(getattr(ooc_graph, algo), G, device="gpu" if gpu else "cpu", **budgets, **where, **kw)
                t = time.perf_counter()
                r = call()
                _stage(rows, f"{algo} ({label})", time.perf_counter() - t, r.stats["arcs_processed"])
                rows[-1]["iterations"] = r.iterations
                if a.warm > 0:  # the same call again, the graph now cached (a user's next call)
                    del r  # as a loop that drops each result before the next call
                    seconds = []
                    for _ in range(a.warm):
                        t = time.perf_counter()
                        r = call()
                        seconds.append(time.perf_counter() - t)
                        del r
                    _stage(rows, f"{algo} ({label}, warm)", statistics.median(seconds),
                           rows[-1]["edges"])
                    rows[-1]["all_seconds"] = seconds
                if a.json:  # as it goes: a long job stopped midway keeps what it measured
                    Path(a.json).write_text(json.dumps(rows, indent=1))
        G.close()
    finally:
        if folder is not None:
            folder.cleanup()
        ooc_graph.runtime.shutdown()
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return rows
